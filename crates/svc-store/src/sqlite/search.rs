//! Full-text search on SQLite: the FTS5 table `report_search` (migration 0005), filled off the
//! write path, and the listings that read it.
//!
//! Filing a report writes nothing here: tokenizing a report on the single writer inside the group
//! commit would slow ingest. The indexer instead follows the reports table by rowid, like the
//! short-id indexer ([`super::short_ids`]): every [`INTERVAL`] it reads the reports past
//! `search_progress.last_rowid` on a reader connection, builds their search text there
//! (`svc_core::search::document`, comments included), and writes them in short transactions of
//! [`ROWS_PER_TRANSACTION`] reports, each moving the mark with its rows. Between transactions it
//! lets waiting ingest go first (see [`crate::pacing`]), and while a burst of reports is being
//! filed ([`crate::load`]) it writes one transaction and waits, 5 s at most, before the next: the
//! index falls behind for as long as the burst lasts and catches up after it, rather than take
//! the CPU the reports need (a tenth to a quarter of it on two cores; bench/README.md, "The
//! search index waits out bursts"). Comments change a report's text: triggers on `comments` mark
//! the report in `search_stale`, and the next round indexes it again.
//!
//! A search is newest first by the index's rowid, which is the report's rowid: FTS5 walks its
//! matches in descending rowid order and the query stops at the page's end, so a first page costs
//! the same whether a word is rare or in every report. The project ids (and the reporter, for that
//! filter) are columns of the index, matched in the same expression, so a search of one project
//! among many reads only that project's matches. User text never becomes FTS5 syntax: every term
//! is a quoted string (see [`match_expression`]).

use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use sqlx::{Connection, QueryBuilder, Row};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use svc_core::model::{Report, ReportFilter};
use svc_core::search::{self, Query};
use tokio::sync::mpsc;

use super::group_commit::Job;
use super::rows::{self, report_select_columns};
use super::{push_project_list, queries};
use crate::StoreResult;
use crate::health::{WriteHealth, is_storage_failure_of};
use crate::load::Load;

/// How often the indexer looks for reports to index: how long a new report or comment may take to
/// be found by a search.
const INTERVAL: Duration = Duration::from_secs(2);
/// Reports per write transaction: each holds the single writer for a few milliseconds.
pub(super) const ROWS_PER_TRANSACTION: i64 = 256;
/// Rows per INSERT statement (4 parameters each).
const ROWS_PER_STATEMENT: usize = 250;
/// Most reports one background round indexes; the next round goes on.
const MAX_ROWS_PER_ROUND: i64 = 50_000;

/// A report's row in the index.
struct Entry {
    rowid: i64,
    report_id: String,
    project_id: String,
    reporter: Option<String>,
    body: String,
}

/// The comments' texts of these reports, oldest first.
async fn comments_of(conn: &mut SqliteConnection, reports: &[Report]) -> StoreResult<HashMap<String, Vec<String>>> {
    let mut texts: HashMap<String, Vec<String>> = HashMap::new();
    for chunk in reports.chunks(ROWS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Sqlite>::new("SELECT report_id, text FROM comments WHERE report_id IN (");
        let mut list = query.separated(", ");
        for report in chunk {
            list.push_bind(report.id.clone());
        }
        query.push(") ORDER BY report_id, created_at, id");
        let rows: Vec<(String, String)> = query.build_query_as().fetch_all(&mut *conn).await?;
        for (report_id, text) in rows {
            texts.entry(report_id).or_default().push(text);
        }
    }
    Ok(texts)
}

/// The index entries of report rows read with `rowid AS search_rowid` and the report columns.
async fn entries_of(conn: &mut SqliteConnection, found: Vec<sqlx::sqlite::SqliteRow>) -> StoreResult<Vec<Entry>> {
    let reports = rows::reports(&found)?;
    let rowids = found.iter().map(|row| row.try_get::<i64, _>("search_rowid")).collect::<Result<Vec<_>, _>>()?;
    let comments = comments_of(conn, &reports).await?;
    Ok(rowids
        .into_iter()
        .zip(reports)
        .map(|(rowid, report)| {
            let texts: Vec<&str> =
                comments.get(&report.id).map(|all| all.iter().map(String::as_str).collect()).unwrap_or_default();
            Entry {
                rowid,
                body: search::document(&report, &texts),
                report_id: report.id,
                project_id: report.project_id,
                reporter: report.author.id,
            }
        })
        .collect())
}

/// Up to `limit` reports past `after`, in rowid order, as index entries.
async fn pending_entries(conn: &mut SqliteConnection, after: i64, limit: i64) -> StoreResult<Vec<Entry>> {
    let found = sqlx::query(concat!(
        "SELECT rowid AS search_rowid, ",
        report_select_columns!(),
        " FROM reports WHERE rowid > ? ORDER BY rowid LIMIT ?"
    ))
    .bind(after)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    entries_of(conn, found).await
}

async fn progress(conn: &mut SqliteConnection) -> StoreResult<i64> {
    Ok(sqlx::query_scalar("SELECT last_rowid FROM search_progress").fetch_one(&mut *conn).await?)
}

async fn set_progress(conn: &mut SqliteConnection, last_rowid: i64) -> StoreResult<()> {
    sqlx::query("UPDATE search_progress SET last_rowid = ?").bind(last_rowid).execute(&mut *conn).await?;
    Ok(())
}

/// Writes entries; `replace` deletes their rows first (a report indexed again).
async fn write_entries(conn: &mut SqliteConnection, entries: &[Entry], replace: bool) -> StoreResult<()> {
    for chunk in entries.chunks(ROWS_PER_STATEMENT) {
        if replace {
            let mut query = QueryBuilder::<Sqlite>::new("DELETE FROM report_search WHERE rowid IN (");
            let mut list = query.separated(", ");
            for entry in chunk {
                list.push_bind(entry.rowid);
            }
            query.push(")");
            query.build().execute(&mut *conn).await?;
        }
        let mut query = QueryBuilder::<Sqlite>::new("INSERT INTO report_search (rowid, project, reporter, body) ");
        query.push_values(chunk, |mut row, entry| {
            row.push_bind(entry.rowid)
                .push_bind(entry.project_id.clone())
                .push_bind(entry.reporter.clone())
                .push_bind(entry.body.clone());
        });
        query.build().execute(&mut *conn).await?;
    }
    Ok(())
}

/// Indexes every report past the mark and moves it, inside the caller's write transaction (a
/// bulk load, which holds the write lock anyway, so a loaded database is searchable at once).
pub(super) async fn index_all_in(conn: &mut SqliteConnection) -> StoreResult<()> {
    loop {
        let mark = progress(conn).await?;
        let entries = pending_entries(conn, mark, 5_000).await?;
        let Some(last) = entries.last().map(|entry| entry.rowid) else { return Ok(()) };
        write_entries(conn, &entries, false).await?;
        set_progress(conn, last).await?;
    }
}

/// Whether reports or comment changes wait to be indexed (a read, so an idle indexer never takes
/// the write lock).
async fn pending(reader: &SqlitePool) -> StoreResult<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM reports WHERE rowid > (SELECT last_rowid FROM search_progress)) \
         OR EXISTS (SELECT 1 FROM search_stale)",
    )
    .fetch_one(reader)
    .await?)
}

/// Whether every report these entries were read from is still stored under its rowid: a report
/// deleted since (see `deletion_index`) must not be indexed, least of all under a rowid a new
/// report may have taken.
async fn all_still_stored(conn: &mut SqliteConnection, entries: &[Entry]) -> StoreResult<bool> {
    let mut stored = 0;
    for chunk in entries.chunks(ROWS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM reports WHERE rowid IN (");
        let mut list = query.separated(", ");
        for entry in chunk {
            list.push_bind(entry.rowid);
        }
        query.push(") AND id IN (");
        let mut list = query.separated(", ");
        for entry in chunk {
            list.push_bind(entry.report_id.clone());
        }
        query.push(")");
        let count: i64 = query.build_query_scalar().fetch_one(&mut *conn).await?;
        stored += count as usize;
    }
    Ok(stored == entries.len())
}

/// New reports: read on the reader, written in short transactions, each moving the mark. A
/// transaction that finds the mark moved (a bulk load or another round indexed them meanwhile, or
/// a deletion lowered it) or a report it read deleted writes nothing, and the round stops. Whether it wrote.
async fn index_new(
    writer: &SqlitePool,
    reader: &SqlitePool,
    max_rows: i64,
    ingest: Option<(&mpsc::WeakSender<Job>, &Load)>,
) -> StoreResult<bool> {
    let mut wrote = false;
    let mut done = 0;
    while done < max_rows {
        let (mark, entries) = {
            let mut conn = reader.acquire().await?;
            let mark = progress(&mut conn).await?;
            (mark, pending_entries(&mut conn, mark, ROWS_PER_TRANSACTION).await?)
        };
        let Some(last) = entries.last().map(|entry| entry.rowid) else { break };
        if let Some((queue, _)) = ingest {
            crate::pacing::make_way_for_ingest(queue).await;
        }
        let mut conn = writer.acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        if progress(&mut tx).await? != mark || !all_still_stored(&mut tx, &entries).await? {
            tx.rollback().await?;
            break;
        }
        write_entries(&mut tx, &entries, false).await?;
        set_progress(&mut tx, last).await?;
        tx.commit().await?;
        wrote = true;
        done += entries.len() as i64;
        // A burst of reports being filed: the rest waits for the next round (see `run_indexer`).
        if ingest.is_some_and(|(_, load)| load.in_burst()) {
            break;
        }
    }
    Ok(wrote)
}

/// Reports whose comments changed: indexed again, a batch per transaction (comments change far
/// less often than reports arrive). Only reports up to the mark: one past it keeps its mark until
/// indexing it as new has covered it (that may have read its comments before the change), and is
/// indexed again by a later pass. Whether it wrote.
async fn index_stale(writer: &SqlitePool) -> StoreResult<bool> {
    let mut wrote = false;
    loop {
        let mut conn = writer.acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let found = sqlx::query(concat!(
            "SELECT reports.rowid AS search_rowid, ",
            report_select_columns!(),
            " FROM search_stale CROSS JOIN reports ON reports.id = search_stale.report_id \
             WHERE reports.rowid <= (SELECT last_rowid FROM search_progress) ORDER BY search_stale.report_id LIMIT ?"
        ))
        .bind(ROWS_PER_TRANSACTION)
        .fetch_all(&mut *tx)
        .await?;
        if found.is_empty() {
            tx.rollback().await?;
            return Ok(wrote);
        }
        let entries = entries_of(&mut tx, found).await?;
        write_entries(&mut tx, &entries, true).await?;
        let mut query = QueryBuilder::<Sqlite>::new("DELETE FROM search_stale WHERE report_id IN (");
        let mut list = query.separated(", ");
        for entry in &entries {
            list.push_bind(entry.report_id.clone());
        }
        query.push(")");
        query.build().execute(&mut *tx).await?;
        tx.commit().await?;
        wrote = true;
    }
}

/// The indexer task: runs until the store is dropped (its write queue closes). Its writes feed the
/// write health like the group commit's.
pub(super) async fn run_indexer(
    writer: SqlitePool,
    reader: SqlitePool,
    alive: mpsc::WeakSender<Job>,
    health: Arc<WriteHealth>,
    load: Arc<Load>,
) {
    let mut behind = false;
    loop {
        // Behind a burst that has passed, the next round (a round indexes at most
        // MAX_ROWS_PER_ROUND) follows at once: the backlog of a 10 s burst took 11 s to index with
        // the interval between its rounds.
        if !behind {
            tokio::time::sleep(INTERVAL).await;
        }
        if alive.upgrade().is_none() {
            return;
        }
        load.wait_out_burst(crate::load::LONGEST_WAIT).await;
        behind = match background_round(&writer, &reader, &alive, &load, &health).await {
            Ok(wrote) => wrote && !load.in_burst(),
            Err(error) => {
                // The reports are safe either way; searches find them once a later round indexes them.
                tracing::warn!(%error, "could not update the search index; will retry");
                false
            }
        };
    }
}

/// One round of the indexer task: each transaction gives way to queued ingest first, and a round
/// that finds a burst of reports being filed after a transaction ends there (the next round
/// waits the burst out first), so under a burst the index falls behind and catches up after it.
/// Whether it wrote, noted in the write health.
pub(super) async fn background_round(
    writer: &SqlitePool,
    reader: &SqlitePool,
    alive: &mpsc::WeakSender<Job>,
    load: &Load,
    health: &WriteHealth,
) -> StoreResult<bool> {
    let round = async {
        if !pending(reader).await? {
            return Ok(false);
        }
        let new = index_new(writer, reader, MAX_ROWS_PER_ROUND, Some((alive, load))).await?;
        Ok(index_stale(writer).await? || new)
    };
    noted(health, round.await)
}

/// Indexes everything pending, now (what `Store::run_maintenance_once` runs, so tests need not wait
/// for the interval). Its outcome is noted in the write health.
pub(super) async fn run_once(writer: &SqlitePool, reader: &SqlitePool, health: &WriteHealth) -> StoreResult<()> {
    let round = async {
        let new = index_new(writer, reader, i64::MAX, None).await?;
        Ok(index_stale(writer).await? || new)
    };
    noted(health, round.await).map(|_| ())
}

fn noted(health: &WriteHealth, outcome: StoreResult<bool>) -> StoreResult<bool> {
    match &outcome {
        Ok(true) => health.succeeded(),
        Ok(false) => {}
        Err(error) if is_storage_failure_of(error) => health.failed(error),
        Err(_) => {}
    }
    outcome
}

/// `text` as an FTS5 string: in double quotes, its own double quotes doubled. Whatever it holds is
/// then words to match (split by the tokenizer), never query syntax.
fn quoted(text: &str) -> String {
    // A NUL would end FTS5's string early ("unterminated string"); it separates words anyway.
    format!("\"{}\"", text.replace('"', "\"\"").replace('\0', " "))
}

/// The FTS5 expression of a listing through the index: the projects, the reporter (when it has
/// anything the tokenizer keeps: the row's `author_id` is compared exactly anyway) and the search.
fn match_expression(project_ids: &BTreeSet<&str>, reporter: Option<&str>, search: Option<&Query>) -> String {
    let projects: Vec<String> = project_ids.iter().map(|id| quoted(id)).collect();
    let mut expression = format!("project : ({})", projects.join(" OR "));
    if let Some(reporter) = reporter.filter(|r| r.chars().any(char::is_alphanumeric)) {
        expression.push_str(" AND reporter : ");
        expression.push_str(&quoted(reporter));
    }
    if let Some(search) = search {
        for group in &search.all {
            let alternatives: Vec<String> = group.iter().map(|term| quoted(term)).collect();
            expression.push_str(&format!(" AND body : ({})", alternatives.join(" OR ")));
        }
        for term in &search.none {
            expression = format!("({expression}) NOT body : {}", quoted(term));
        }
    }
    expression
}

/// Whether a listing reads the index: it searches, or filters by reporter (the author id has no
/// index of its own on the reports table: one would cost the group commit a page per report).
pub(super) fn uses_index(filter: &ReportFilter) -> bool {
    filter.reporter.is_some() || filter.search.as_deref().is_some_and(|text| !text.trim().is_empty())
}

/// The listing through the index (see [`uses_index`]), newest first by rowid; `None` when it can
/// only be empty (a search without a single word).
pub(super) fn list_query(filter: &ReportFilter, project_ids: &BTreeSet<&str>) -> Option<QueryBuilder<Sqlite>> {
    let search = filter.search.as_deref().filter(|text| !text.trim().is_empty()).map(search::parse);
    if search.as_ref().is_some_and(Query::is_empty) {
        return None;
    }
    // CROSS JOIN keeps the index as the outer loop: its matches arrive in rowid order, each report
    // is one rowid lookup, and LIMIT stops the walk.
    let mut query = QueryBuilder::<Sqlite>::new(concat!(
        "SELECT ",
        report_select_columns!(),
        " FROM report_search CROSS JOIN reports WHERE reports.rowid = report_search.rowid AND report_search MATCH "
    ));
    query.push_bind(match_expression(project_ids, filter.reporter.as_deref(), search.as_ref()));
    query.push(" AND project_id IN ");
    push_project_list(&mut query, project_ids);
    queries::push_optional_filters(&mut query, filter);
    if let Some(before) = &filter.before {
        query
            .push(" AND report_search.rowid < (SELECT rowid FROM reports WHERE id = ")
            .push_bind(before.clone())
            .push(")");
    }
    query.push(" ORDER BY report_search.rowid DESC");
    queries::push_limit(&mut query, filter.limit);
    Some(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_quoted_into_the_expression() {
        let projects: BTreeSet<&str> = ["p1", "p2"].into_iter().collect();
        let search = search::parse(r#"say "it is" or NEAR(x -"y""#);
        assert_eq!(
            match_expression(&projects, Some(r#"u"1"#), Some(&search)),
            r#"(project : ("p1" OR "p2") AND reporter : "u""1" AND body : ("say") AND body : ("it is" OR "NEAR(x")) NOT body : "y""#
        );
        assert_eq!(match_expression(&projects, Some("--"), None), r#"project : ("p1" OR "p2")"#);
    }

    /// Seeds a million reports (`PERF_REPORTS` to change) whose texts mix a few words found in most
    /// reports with a long tail of rare ones, and prints the times of first pages of searches.
    /// Run with `cargo test -p svc-store --lib sqlite_search_times -- --ignored --nocapture`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "slow: seeds a million reports"]
    async fn sqlite_search_times_at_a_million_reports() {
        use crate::prelude::*;
        use std::time::Instant;
        use svc_core::model::{AssigneeFilter, Author};

        let folder = tempfile::tempdir().unwrap();
        let store = super::super::SqliteStore::connect(&format!("sqlite://{}", folder.path().join("svc.db").display()))
            .await
            .unwrap();
        let project = crate::test_fixtures::project(&store).await;
        let total: i64 = std::env::var("PERF_REPORTS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
        let common = ["the", "page", "button", "does", "not", "work", "when", "click", "save", "error"];
        let mut seed: u64 = 7;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        let started = Instant::now();
        let mut batch = Vec::with_capacity(20_000);
        for i in 0..total {
            let mut words = Vec::new();
            for (rank, word) in common.iter().enumerate() {
                // "the" in 90% of reports, "error" in about 9%.
                if next() % 100 < (90 / (rank as u64 + 1)).max(5) {
                    words.push(word.to_string());
                }
            }
            for _ in 0..8 {
                // A long tail: word n appears about 1/n as often as word 1.
                let n = 1 + (50_000 / (1 + next() % 50_000));
                words.push(format!("w{n}"));
            }
            let text = words.join(" ");
            let at = 1_700_000_000_000 + i * 10;
            batch.push(Report {
                id: svc_core::ids::new_id_at(at),
                project_id: project.id.clone(),
                channel_key: "bug".into(),
                status: ["new", "triaged", "fixed"][(i % 3) as usize].parse().unwrap(),
                title: text.chars().take(80).collect(),
                blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": text}])).unwrap(),
                context: serde_json::from_value(serde_json::json!({"url": "https://app.example.com/settings"}))
                    .unwrap(),
                identity: None,
                identity_error: None,
                author: Author {
                    kind: svc_core::model::AuthorKind::Reporter,
                    id: Some(format!("user-{}", i % 5_000)),
                    label: None,
                },
                artifact_id: None,
                url: Some("https://app.example.com/settings".into()),
                created_at: at,
                updated_at: at,
                assignee: None,
                labels: Vec::new(),
            });
            if batch.len() == batch.capacity() || i == total - 1 {
                store.insert_reports_bulk(&batch).await.unwrap();
                batch.clear();
            }
        }
        eprintln!("seeded and indexed {total} reports in {:?}", started.elapsed());

        let base = ReportFilter { project_ids: vec![project.id.clone()], limit: 21, ..Default::default() };
        let cases: Vec<(&str, ReportFilter)> = vec![
            ("the", ReportFilter { search: Some("the".into()), ..base.clone() }),
            ("error", ReportFilter { search: Some("error".into()), ..base.clone() }),
            ("the page button", ReportFilter { search: Some("the page button".into()), ..base.clone() }),
            ("\"save the\"", ReportFilter { search: Some("\"save the\"".into()), ..base.clone() }),
            ("w2 -the", ReportFilter { search: Some("w2 -the".into()), ..base.clone() }),
            ("rare w40000", ReportFilter { search: Some("w40000".into()), ..base.clone() }),
            ("no match", ReportFilter { search: Some("zzzz".into()), ..base.clone() }),
            (
                "the, status fixed",
                ReportFilter { search: Some("the".into()), status: Some("fixed".parse().unwrap()), ..base.clone() },
            ),
            ("the, limit 101", ReportFilter { search: Some("the".into()), limit: 101, ..base.clone() }),
            ("reporter", ReportFilter { reporter: Some("user-42".into()), ..base.clone() }),
            (
                "reporter + error",
                ReportFilter { reporter: Some("user-42".into()), search: Some("error".into()), ..base.clone() },
            ),
            (
                "the, two projects, unassigned",
                ReportFilter {
                    project_ids: vec![project.id.clone(), svc_core::ids::new_id()],
                    search: Some("the".into()),
                    assignee: Some(AssigneeFilter::Unassigned),
                    ..base.clone()
                },
            ),
        ];
        for round in 0..3 {
            for (name, filter) in &cases {
                let timed = Instant::now();
                let page = store.list_reports(filter).await.unwrap();
                let first = timed.elapsed();
                let second = match page.last() {
                    Some(last) if page.len() == filter.limit as usize => {
                        let timed = Instant::now();
                        store
                            .list_reports(&ReportFilter { before: Some(last.id.clone()), ..filter.clone() })
                            .await
                            .unwrap();
                        Some(timed.elapsed())
                    }
                    _ => None,
                };
                if round == 2 {
                    eprintln!("{name}: {} found, first page {first:?}, next page {second:?}", page.len());
                }
            }
        }
    }
}
