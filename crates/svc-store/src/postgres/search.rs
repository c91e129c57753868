//! Full-text search on PostgreSQL: `report_search` (migration 0005), one `tsvector` per report
//! with a GIN index, filled off the write path, and the listing filter that reads it.
//!
//! Filing a report writes nothing here (`to_tsvector` and a GIN insert per report inside the
//! group commit would slow ingest). Instead every report records the id of the transaction that
//! inserted it (`ingest_xid`, a column default), and the indexer, every [`INTERVAL`], takes the
//! reports of transactions older than the oldest transaction still running: those have all
//! committed or rolled back, so no report with a smaller transaction id can appear later, whatever
//! order concurrent transactions commit in. It indexes them in (ingest_xid, id) order, read from an
//! index in that order (migration 0021), a batch per transaction, each moving the mark. While a
//! burst of reports is being filed ([`crate::load`]) it writes one batch and waits, 5 s at most,
//! before the next: the index falls behind for as long as the burst lasts and catches up after. The
//! progress row is locked with `SKIP LOCKED`, so of several instances one indexes at a time. A transaction that stays open holds indexing back until it
//! ends (reads do not: they have no transaction id). Comments change a report's text: a trigger
//! on `comments` marks the report in `search_stale`, and the next round indexes it again.
//!
//! A search is `websearch_to_tsquery('simple', text)`: the syntax of `svc_core::search` (quoted
//! phrases, `-word`, `or`), safe for any input. The `simple` configuration lowercases words and does
//! not stem them, which suits feedback in any language; its parser keeps an e-mail address or host
//! name as one word, which is why `svc_core::search::document` adds those split into their words.

use sqlx::postgres::{PgConnection, PgPool};
use sqlx::{Postgres, QueryBuilder, Row};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use svc_core::model::{Report, ReportFilter};
use tokio::sync::mpsc;

use super::DbRow;
use super::rows::{self, report_select_columns};
use crate::StoreResult;
use crate::health::{WriteHealth, is_storage_failure_of};
use crate::load::Load;

/// How often the indexer looks for reports to index.
const INTERVAL: Duration = Duration::from_secs(2);
/// Without changes announced here, a round runs every this many intervals (a minute).
const IDLE_TICKS_BEFORE_ROUND: u32 = 30;
/// Reports per transaction.
pub(super) const ROWS_PER_TRANSACTION: i64 = 500;

/// The text of a listing's search, `None` when blank (no search).
fn search_text(filter: &ReportFilter) -> Option<&str> {
    filter.search.as_deref().map(str::trim).filter(|text| !text.is_empty())
}

/// Whether a listing searches.
pub(super) fn searches(filter: &ReportFilter) -> bool {
    search_text(filter).is_some()
}

/// The filters of a listing that read the index, after its other conditions: the reporter (the
/// row's `author_id` is compared too, so a report not indexed yet is not found by it) and the
/// search, nothing for a blank one. A search without a single word matches nothing
/// (`websearch_to_tsquery` gives an empty query).
pub(super) fn push_index_filters(query: &mut QueryBuilder<Postgres>, filter: &ReportFilter) {
    if let Some(reporter) = &filter.reporter {
        query
            .push(" AND id IN (SELECT report_id FROM report_search WHERE reporter = ")
            .push_bind(reporter.clone())
            .push(")");
    }
    if let Some(text) = search_text(filter) {
        // PostgreSQL text holds no NUL character; to the query it would only separate words.
        query
            .push(" AND id IN (SELECT report_id FROM report_search WHERE doc @@ websearch_to_tsquery('simple', ")
            .push_bind(text.replace('\0', " "))
            .push("))");
    }
}

/// Report ids with their project ids, author ids and search texts, ready to write.
struct Entries {
    ids: Vec<String>,
    project_ids: Vec<String>,
    reporters: Vec<Option<String>>,
    bodies: Vec<String>,
}

async fn entries_of(conn: &mut PgConnection, reports: &[Report], with_comments: bool) -> StoreResult<Entries> {
    let ids: Vec<String> = reports.iter().map(|r| r.id.clone()).collect();
    let mut comments: HashMap<String, Vec<String>> = HashMap::new();
    if with_comments {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT report_id, text FROM comments WHERE report_id = ANY($1) ORDER BY report_id, created_at, id",
        )
        .bind(&ids)
        .fetch_all(&mut *conn)
        .await?;
        for (report_id, text) in rows {
            comments.entry(report_id).or_default().push(text);
        }
    }
    let bodies = reports
        .iter()
        .map(|report| {
            let texts: Vec<&str> =
                comments.get(&report.id).map(|all| all.iter().map(String::as_str).collect()).unwrap_or_default();
            svc_core::search::document(report, &texts)
        })
        .collect();
    Ok(Entries {
        ids,
        project_ids: reports.iter().map(|r| r.project_id.clone()).collect(),
        reporters: reports.iter().map(|r| r.author.id.clone()).collect(),
        bodies,
    })
}

/// Upserts the entries (a report indexed again replaces its row). Ids must be distinct.
async fn write_entries(conn: &mut PgConnection, entries: &Entries) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO report_search (report_id, project_id, reporter, doc) \
         SELECT id, project_id, reporter, to_tsvector('simple', body) \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(id, project_id, reporter, body) \
         ON CONFLICT (report_id) DO UPDATE SET doc = EXCLUDED.doc",
    )
    .bind(&entries.ids)
    .bind(&entries.project_ids)
    .bind(&entries.reporters)
    .bind(&entries.bodies)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Indexes reports of a bulk load inside its transaction (they are new: no comments yet). Bulk
/// loads store their reports with a NULL `ingest_xid`, so the indexer does not read them again.
pub(super) async fn index_loaded(conn: &mut PgConnection, reports: &[Report]) -> StoreResult<()> {
    if reports.is_empty() {
        return Ok(());
    }
    let entries = entries_of(conn, reports, false).await?;
    write_entries(conn, &entries).await
}

fn reports_of(found: &[DbRow]) -> StoreResult<Vec<Report>> {
    rows::reports(found)
}

/// How a round takes the progress row: the background task skips it when another instance holds
/// it (that instance is indexing); `run_maintenance_once` waits for it, so it returns only once
/// everything pending is indexed.
#[derive(Clone, Copy)]
pub(super) enum Lock {
    SkipLocked,
    Wait,
}

/// A statement in its two forms, ending `FOR UPDATE SKIP LOCKED` and `FOR UPDATE`.
macro_rules! locking {
    ($lock:expr, $($sql:expr),+ $(,)?) => {
        match $lock {
            Lock::SkipLocked => concat!($($sql),+, " FOR UPDATE SKIP LOCKED"),
            Lock::Wait => concat!($($sql),+, " FOR UPDATE"),
        }
    };
}

/// Reports stored before migration 0005, in id order. Whether it wrote.
async fn backfill(pool: &PgPool, lock: Lock) -> StoreResult<bool> {
    let mut wrote = false;
    loop {
        let mut tx = pool.begin().await?;
        let progress: Option<(Option<String>, String)> =
            sqlx::query_as(locking!(lock, "SELECT backfill_until, backfill_after FROM search_progress"))
                .fetch_optional(&mut *tx)
                .await?;
        // Another instance is indexing, or there is nothing left from before.
        let Some((Some(until), after)) = progress else {
            tx.rollback().await?;
            return Ok(wrote);
        };
        let found = sqlx::query(concat!(
            "SELECT ",
            report_select_columns!(),
            " FROM reports WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3"
        ))
        .bind(&after)
        .bind(&until)
        .bind(ROWS_PER_TRANSACTION)
        .fetch_all(&mut *tx)
        .await?;
        let reports = reports_of(&found)?;
        let entries = entries_of(&mut tx, &reports, true).await?;
        if !reports.is_empty() {
            write_entries(&mut tx, &entries).await?;
        }
        let done = (reports.len() as i64) < ROWS_PER_TRANSACTION;
        let last = reports.last().map(|r| r.id.clone()).unwrap_or(after);
        sqlx::query("UPDATE search_progress SET backfill_after = $1, backfill_until = CASE WHEN $2 THEN NULL ELSE backfill_until END")
            .bind(&last)
            .bind(done)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        wrote = true;
        if done {
            return Ok(wrote);
        }
    }
}

/// The reports not indexed yet after the mark `($1, $2)`, of transactions older than the horizon
/// `$3`, the first `$4` in (ingest_xid, id) order.
pub(super) const PENDING: &str = concat!(
    "SELECT ingest_xid, ",
    report_select_columns!(),
    " FROM reports WHERE ingest_xid >= $1 AND ingest_xid < $3 AND (ingest_xid, id) > ($1, $2) \
     ORDER BY ingest_xid, id LIMIT $4"
);

/// The horizon for [`PENDING`] in the transaction `tx`: every transaction with a smaller id has
/// ended (this one, which holds a row lock, has an id of its own and is among those still
/// running). Also keeps [`PENDING`] on `reports_ingest_order_idx` for the rest of the transaction,
/// which gives the order and stops after the limit: without statistics (a new table) or with a
/// backlog, the planner took a few hundred rows for the whole backlog and read and sorted all of
/// it (see migration 0021).
pub(super) async fn pending_horizon(tx: &mut PgConnection) -> StoreResult<i64> {
    let (horizon, _, _): (i64, String, String) = sqlx::query_as(
        "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, \
         set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)",
    )
    .fetch_one(tx)
    .await?;
    Ok(horizon)
}

/// Reports filed since the mark by transactions that have all ended (see the module notes).
/// Whether it wrote, and the horizon it reached: every report of a transaction older than it is
/// indexed (0 when it did not get to look).
async fn index_new(pool: &PgPool, lock: Lock, ingest: Option<Ingest<'_>>) -> StoreResult<(bool, i64)> {
    let mut wrote = false;
    loop {
        if let Some((last_change_ms, _)) = ingest {
            crate::pacing::make_way_for_changes(last_change_ms).await;
        }
        let mut tx = pool.begin().await?;
        let progress: Option<(i64, String)> =
            sqlx::query_as(locking!(lock, "SELECT mark_xid, mark_id FROM search_progress"))
                .fetch_optional(&mut *tx)
                .await?;
        let Some((mark_xid, mark_id)) = progress else {
            tx.rollback().await?;
            return Ok((wrote, 0));
        };
        let horizon = pending_horizon(&mut tx).await?;
        let found = sqlx::query(PENDING)
            .bind(mark_xid)
            .bind(&mark_id)
            .bind(horizon)
            .bind(ROWS_PER_TRANSACTION)
            .fetch_all(&mut *tx)
            .await?;
        let Some(last) = found.last() else {
            tx.rollback().await?;
            return Ok((wrote, horizon));
        };
        let last: (i64, String) = (last.try_get("ingest_xid")?, last.try_get("id")?);
        let reports = reports_of(&found)?;
        let entries = entries_of(&mut tx, &reports, true).await?;
        write_entries(&mut tx, &entries).await?;
        sqlx::query("UPDATE search_progress SET mark_xid = $1, mark_id = $2")
            .bind(last.0)
            .bind(&last.1)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        wrote = true;
        if (found.len() as i64) < ROWS_PER_TRANSACTION {
            return Ok((wrote, horizon));
        }
        // A burst of reports being filed: the rest waits for the next round (see `run_indexer`),
        // so the horizon is not reached.
        if ingest.is_some_and(|(_, load)| load.in_burst()) {
            return Ok((wrote, 0));
        }
    }
}

/// Reports whose comments changed, indexed again (whether or not they were indexed before).
/// Taking a mark deletes it in the same transaction; a comment changed meanwhile marks the report
/// again once this transaction ends. The progress row is locked first, as by the other passes, so
/// a pass indexing new reports (which may have read a report's comments before the change) cannot
/// write after this one. Whether it wrote.
async fn index_stale(pool: &PgPool, lock: Lock) -> StoreResult<bool> {
    let mut wrote = false;
    loop {
        let mut tx = pool.begin().await?;
        let progress: Option<i32> = sqlx::query_scalar(locking!(lock, "SELECT singleton FROM search_progress"))
            .fetch_optional(&mut *tx)
            .await?;
        if progress.is_none() {
            tx.rollback().await?;
            return Ok(wrote);
        }
        let mut ids: Vec<String> = sqlx::query_scalar(match lock {
            Lock::SkipLocked => {
                "DELETE FROM search_stale WHERE report_id IN (SELECT report_id FROM search_stale \
                 ORDER BY report_id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING report_id"
            }
            Lock::Wait => {
                "DELETE FROM search_stale WHERE report_id IN (SELECT report_id FROM search_stale \
                 ORDER BY report_id LIMIT $1 FOR UPDATE) RETURNING report_id"
            }
        })
        .bind(ROWS_PER_TRANSACTION)
        .fetch_all(&mut *tx)
        .await?;
        if ids.is_empty() {
            tx.rollback().await?;
            return Ok(wrote);
        }
        ids.sort_unstable();
        let found = sqlx::query(concat!("SELECT ", report_select_columns!(), " FROM reports WHERE id = ANY($1)"))
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?;
        let reports = reports_of(&found)?;
        if !reports.is_empty() {
            let entries = entries_of(&mut tx, &reports, true).await?;
            write_entries(&mut tx, &entries).await?;
        }
        tx.commit().await?;
        wrote = true;
        if (ids.len() as i64) < ROWS_PER_TRANSACTION {
            return Ok(wrote);
        }
    }
}

/// Everything stored before it was called, indexed (what `Store::run_maintenance_once` runs). It
/// waits for another instance's round rather than skip it, and for the transactions that were
/// running when it was called to end (their reports can only be indexed then; tests and the CLI
/// have none open for long), at most [`MAX_WAIT_FOR_OLDER_TRANSACTIONS`].
pub(super) async fn run_once(pool: &PgPool, health: &WriteHealth) -> StoreResult<()> {
    // The next transaction id to be handed out: every report stored so far has a smaller one.
    let target: i64 =
        sqlx::query_scalar("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetch_one(pool).await?;
    let started = std::time::Instant::now();
    loop {
        let horizon = round(pool, health, Lock::Wait, None).await?;
        if horizon >= target {
            return Ok(());
        }
        if started.elapsed() > MAX_WAIT_FOR_OLDER_TRANSACTIONS {
            tracing::warn!(horizon, target, "a transaction still open holds the search index back");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How long [`run_once`] waits for transactions older than its call to end.
const MAX_WAIT_FOR_OLDER_TRANSACTIONS: Duration = Duration::from_secs(30);

/// What a background round gives way to: when the latest change was announced (each transaction
/// waits while reports are coming in) and the reports being filed (a round that finds a burst of
/// them after a transaction ends there).
type Ingest<'a> = (&'a std::sync::atomic::AtomicI64, &'a Load);

/// One indexing round, its outcome noted in the write health; the horizon [`index_new`] reached.
/// With `ingest` (the background task's rounds), it gives way to reports being filed.
pub(super) async fn round(
    pool: &PgPool,
    health: &WriteHealth,
    lock: Lock,
    ingest: Option<Ingest<'_>>,
) -> StoreResult<i64> {
    let round = async {
        let old = backfill(pool, lock).await?;
        let (new, horizon) = index_new(pool, lock, ingest).await?;
        Ok::<(bool, i64), crate::StoreError>((index_stale(pool, lock).await? || new || old, horizon))
    };
    match round.await {
        Ok((true, horizon)) => {
            health.succeeded();
            Ok(horizon)
        }
        Ok((false, horizon)) => Ok(horizon),
        Err(error) => {
            if is_storage_failure_of(&error) {
                health.failed(&error);
            }
            Err(error)
        }
    }
}

/// The indexer task: runs until the store is dropped (`alive` is its report queue).
pub(super) async fn run_indexer(
    pool: PgPool,
    alive: mpsc::WeakSender<super::group_commit::Queued>,
    health: Arc<WriteHealth>,
    last_change_ms: Arc<std::sync::atomic::AtomicI64>,
    load: Arc<Load>,
) {
    // A round costs a few queries over `reports` even when nothing is new, which showed in the
    // tail latency of listings: rounds run when this instance announced a change since the last
    // one, and every minute anyway (for reports another instance filed and could not index).
    let mut seen_change = i64::MIN;
    let mut idle_ticks = 0u32;
    loop {
        tokio::time::sleep(INTERVAL).await;
        if alive.upgrade().is_none() {
            return;
        }
        let latest = last_change_ms.load(std::sync::atomic::Ordering::Relaxed);
        if latest == seen_change && idle_ticks < IDLE_TICKS_BEFORE_ROUND {
            idle_ticks += 1;
            continue;
        }
        seen_change = latest;
        idle_ticks = 0;
        load.wait_out_burst(crate::load::LONGEST_WAIT).await;
        if let Err(error) = round(&pool, &health, Lock::SkipLocked, Some((&last_change_ms, &load))).await {
            // The reports are safe either way; searches find them once a later round indexes them.
            tracing::warn!(%error, "could not update the search index; will retry");
        }
    }
}
