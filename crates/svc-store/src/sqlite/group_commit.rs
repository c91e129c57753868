//! Group commit for new reports, blobs and viewed marks.
//!
//! Every report and blob must be fsync'd before it is acknowledged, and with `synchronous=FULL` each
//! commit costs a sync. Concurrent `create_report`, `create_blob` and `mark_viewed` calls therefore
//! queue their rows; one task drains the queue, stores the whole batch in one transaction, commits
//! once and then answers every caller.
//!
//! A batch of reports that are one row each (no blobs; an idempotency key or none, as the widget
//! sends them) and nothing else is one string of statements (BEGIN, the rows, their events, their
//! keys, COMMIT) that SQLite's thread runs in one go: each statement sent on its own is a hand-off
//! to that thread and back, and at a moderate rate those cost more CPU than the rows. A key already
//! remembered (a retry) or taken twice in the batch fails the string, which leaves nothing behind,
//! and the batch goes the long way, below; so does any other batch.
//!
//! Inside the transaction, blobs come first (a report may name a blob of the same batch). Then the
//! idempotency keys of the reports that carry one and no blobs (the widget sends a key with every
//! report) are looked up in one statement: a key seen in the last 24 hours answers with its report,
//! and the first report of the batch with a new key joins the plain ones. Those are stored with
//! multi-row INSERTs, and their keys in one more statement. Each report that needs more (blobs to
//! bind, or a key a report earlier in the batch took) gets a savepoint, so one failing report rolls
//! back only itself. If a multi-row INSERT fails (a statement is atomic, so it leaves nothing
//! behind), its reports are retried one by one and only the failing one fails.
//! Viewed marks come last (they name reports): marks of one report and viewer from several calls
//! are folded into one upsert of the latest time (inside one transaction only the latest is ever
//! seen); if any fails, the calls are replayed one by one, each all or nothing, as before.
//!
//! While rows keep coming, commits start at least [`COMMIT_SPACING`] apart unless
//! [`GATHER_ROWS`] are waiting: at a moderate rate (a report a millisecond) each commit would
//! otherwise carry a single report, and every commit costs its sync and a WAL frame for each page
//! it touches in the table and its indexes whatever it carries. A write arriving after a quiet
//! moment commits at once.
//!
//! The task keeps the writer connection while work keeps arriving (for at most [`HOLD`], then it
//! queues up for it again behind any other write waiting): giving it back after every batch made
//! each batch wait for the runtime to schedule the connection's return to the pool.
//!
//! A failure of the storage itself (a full disk, an I/O error) is different from a row's own failure:
//! SQLite may have rolled the whole transaction back, and the statements after it would run outside
//! any transaction. The batch then stops and fails as a whole, its connection goes back to the pool
//! (which replaces it if it is unusable, see the [`super`] notes), and the write health notes it.

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

use super::map_write_error;
use super::queries::{bind_report, insert_blob};
use super::rows::report_columns;
use crate::health::{WriteHealth, is_storage_failure};
use crate::{CreatedReport, IDEMPOTENCY_WINDOW_MS, ReportText, StoreError, StoreResult};
use std::collections::BTreeMap;
use svc_core::model::{Blob, NewReport};

/// Most rows stored by one commit.
const MAX_BATCH: usize = 256;
/// Rows that may wait for the writer before callers are slowed down.
pub(super) const QUEUE_CAPACITY: usize = 4096;
/// Longest the task keeps the writer connection while batches keep coming.
const HOLD: Duration = Duration::from_millis(20);
/// Shortest time from one commit's start to the next while rows keep coming (see the module notes):
/// at 1,000 reports/s it took a fifth off the CPU a report costs and a third off the bytes written,
/// for about a millisecond more at p50 (bench/README.md, "Commits spaced").
const COMMIT_SPACING: Duration = Duration::from_millis(2);
/// Rows that commit at once, however soon after the last commit.
const GATHER_ROWS: usize = 16;
/// Row counts of the prepared multi-row INSERTs (powers of two, so any batch is a few statements
/// and the statement cache holds them all).
const INSERT_SIZES: [usize; 9] = [256, 128, 64, 32, 16, 8, 4, 2, 1];

static MULTI_ROW_INSERTS: LazyLock<Vec<String>> =
    LazyLock::new(|| INSERT_SIZES.iter().map(|&rows| multi_row_insert(rows)).collect());

/// Batches of at most this many plain reports commit in one round trip to SQLite's thread (see
/// [`commit_in_one_trip`]); the writer's statement cache holds one string per size. As many as a
/// busy moment brings (64 clients): with only the small batches in one trip, full-rate text ingest
/// cost half as much CPU again per report (bench/README.md, "One hand-off per commit").
pub(super) const ONE_TRIP_MAX: usize = 64;

/// The `report.created` events of the last `?` reports stored (see `shared/events.rs`; the columns
/// are an event's, its data `{channelKey}`): a new report takes the largest rowid plus one, and the
/// one writer stores a commit's rows one after another (a row a savepoint undid gives its rowid to
/// the next).
const LAST_FILED_EVENTS: &str = "INSERT INTO events (project_id, report_id, type, data, by_kind, by_id, by_label, at) \
     SELECT project_id, id, 'report.created', json_object('channelKey', channel_key), author_kind, author_id, \
     author_label, created_at FROM reports WHERE rowid > (SELECT max(rowid) FROM reports) - ? ORDER BY rowid";

/// The idempotency keys of a batch's keyed reports, as a JSON array of `[project, key, report,
/// created_at]`. No `ON CONFLICT`: a key already remembered fails the statement (see
/// [`commit_in_one_trip`]; the long way's [`remember_keys`] adds one).
macro_rules! new_keys {
    () => {
        "INSERT INTO idempotency_keys (project_id, key, report_id, created_at) \
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
         json_extract(value, '$[3]') FROM json_each(?)"
    };
}

/// For `rows` reports of one row each: the transaction, their rows, their events, their keys and
/// the commit as one string of statements, which SQLite's thread runs in one go.
static ONE_TRIP_COMMITS: LazyLock<Vec<String>> = LazyLock::new(|| {
    (1..=ONE_TRIP_MAX)
        .map(|rows| {
            format!("BEGIN IMMEDIATE; {}; {LAST_FILED_EVENTS}; {}; COMMIT", multi_row_insert(rows), new_keys!())
        })
        .collect()
});

/// `INSERT INTO reports` of `rows` rows, each bound by [`bind_report`].
fn multi_row_insert(rows: usize) -> String {
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    format!(concat!("INSERT INTO reports (", report_columns!(), ") VALUES {}"), vec![row; rows].join(", "))
}

/// A write waiting for the next group commit.
pub(super) enum Job {
    /// Boxed: a report is large, and a job moves from the caller's task through the queue into a
    /// batch.
    Report(Box<QueuedReport>),
    Blob(QueuedBlob),
    Views(QueuedViews),
}

pub(super) struct QueuedReport {
    pub new: NewReport,
    pub text: ReportText,
    pub reply: oneshot::Sender<StoreResult<CreatedReport>>,
}

pub(super) struct QueuedBlob {
    pub blob: Blob,
    pub reply: oneshot::Sender<StoreResult<()>>,
}

/// `mark_viewed(report_ids, viewer, at)`.
pub(super) struct QueuedViews {
    pub report_ids: Vec<String>,
    pub viewer: String,
    pub at: i64,
    pub reply: oneshot::Sender<StoreResult<()>>,
}

impl QueuedReport {
    /// One row (no blobs to bind), with an idempotency key or without: what the one-trip commit
    /// takes.
    fn is_one_row(&self) -> bool {
        self.new.blob_ids.is_empty()
    }

    /// One INSERT stores all of it.
    fn is_single_row(&self) -> bool {
        self.is_one_row() && self.new.idempotency_key.is_none()
    }

    /// One row and its idempotency key.
    fn is_keyed_row(&self) -> bool {
        self.is_one_row() && self.new.idempotency_key.is_some()
    }

    /// (project, idempotency key); the key empty when there is none.
    fn key(&self) -> (&str, &str) {
        (self.new.report.project_id.as_str(), self.new.idempotency_key.as_deref().unwrap_or_default())
    }

    /// Its row of `new_keys!`: (project, key, report, created_at).
    fn key_row(&self) -> (&str, &str, &str, i64) {
        let (project, key) = self.key();
        (project, key, self.new.report.id.as_str(), self.new.report.created_at)
    }
}

/// The remembered idempotency keys among these reports': (project, key) -> (report, when).
async fn remembered_keys(
    conn: &mut SqliteConnection,
    reports: impl Iterator<Item = &QueuedReport>,
) -> Result<std::collections::HashMap<(String, String), (String, i64)>, sqlx::Error> {
    let wanted =
        serde_json::Value::from(reports.map(|queued| vec![queued.key().0, queued.key().1]).collect::<Vec<_>>());
    let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT i.project_id, i.key, i.report_id, i.created_at FROM json_each(?) AS j \
         JOIN idempotency_keys AS i ON i.project_id = json_extract(j.value, '$[0]') AND i.key = json_extract(j.value, '$[1]')",
    )
    .bind(wanted.to_string())
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(project_id, key, report_id, at)| ((project_id, key), (report_id, at))).collect())
}

/// Stores the idempotency keys of these reports (an expired entry for the same key is replaced).
async fn remember_keys(conn: &mut SqliteConnection, reports: &[&QueuedReport]) -> Result<(), sqlx::Error> {
    let keys = reports.iter().map(|queued| queued.key_row()).collect::<Vec<_>>();
    sqlx::query(concat!(
        new_keys!(),
        " WHERE true \
         ON CONFLICT (project_id, key) DO UPDATE SET report_id = excluded.report_id, created_at = excluded.created_at"
    ))
    .bind(serde_json::to_string(&keys).map_err(|error| sqlx::Error::Encode(error.into()))?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// What storing one row did (a report itself is moved into its answer afterwards).
enum Stored {
    Created,
    Repeat(String),
}

/// Runs until every sender (the store) is gone, then finishes what is queued.
pub(super) async fn run_writer(writer: SqlitePool, mut queue: mpsc::Receiver<Job>, health: Arc<WriteHealth>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut last_commit: Option<Instant> = None;
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let mut connection: PoolConnection<Sqlite> = match writer.acquire().await {
            Ok(connection) => connection,
            Err(error) => {
                note_failure(&health, &error, batch.len());
                let outcomes = failed(&error, batch.len());
                answer(&mut batch, outcomes);
                continue;
            }
        };
        let held_since = Instant::now();
        loop {
            gather(&mut queue, &mut batch, last_commit).await;
            last_commit = Some(Instant::now());
            let committed = commit_batch(&mut connection, &batch, &health).await;
            let failed_as_a_whole = committed.is_err();
            answer(&mut batch, committed.unwrap_or_else(|outcomes| outcomes));
            // After a failed batch the connection goes back to the pool, which checks it.
            if failed_as_a_whole || queue.is_empty() || held_since.elapsed() >= HOLD {
                break;
            }
            queue.recv_many(&mut batch, MAX_BATCH).await;
        }
    }
}

/// Waits for more rows while the last commit started less than [`COMMIT_SPACING`] ago and the
/// batch is small reports only. A lone write (the last commit long ago) never waits, nor does a
/// batch with a blob or a report binding one: a screenshot's bytes cost more than the commit they
/// would share, and waiting made screenshot + report pairs slower (bench/README.md).
async fn gather(queue: &mut mpsc::Receiver<Job>, batch: &mut Vec<Job>, last_commit: Option<Instant>) {
    let Some(deadline) = last_commit.map(|at| at + COMMIT_SPACING) else { return };
    let small_reports_only =
        |batch: &[Job]| batch.iter().all(|job| matches!(job, Job::Report(queued) if queued.is_one_row()));
    while batch.len() < GATHER_ROWS && small_reports_only(batch) && Instant::now() < deadline {
        let room = MAX_BATCH - batch.len();
        match tokio::time::timeout_at(deadline.into(), queue.recv_many(batch, room)).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Logs a batch that failed as a whole. A failure of the storage goes to the write health, which
/// logs the first of a run as an error; the batches after it are logged quietly, so a full disk
/// under load does not flood the log.
fn note_failure(health: &WriteHealth, error: &sqlx::Error, rows: usize) {
    if is_storage_failure(error) {
        tracing::debug!(%error, rows, "write batch failed to commit");
        health.failed(error);
    } else {
        tracing::error!(%error, rows, "write batch failed to commit");
    }
}

fn answer(batch: &mut Vec<Job>, outcomes: Vec<StoreResult<Stored>>) {
    for (job, outcome) in batch.drain(..).zip(outcomes) {
        // A caller that gave up waiting still has its row stored; nobody to tell.
        match job {
            Job::Report(queued) => {
                let QueuedReport { new, reply, .. } = *queued;
                let answer = outcome.map(|stored| match stored {
                    Stored::Created => CreatedReport::Created(new.report),
                    Stored::Repeat(first_id) => CreatedReport::Repeat(first_id),
                });
                let _ = reply.send(answer);
            }
            Job::Blob(queued) => {
                let _ = queued.reply.send(outcome.map(|_| ()));
            }
            Job::Views(queued) => {
                let _ = queued.reply.send(outcome.map(|_| ()));
            }
        }
    }
}

/// The same error for every row of a batch that could not be stored as a whole.
fn failed(error: &sqlx::Error, rows: usize) -> Vec<StoreResult<Stored>> {
    let message = error.to_string();
    (0..rows).map(|_| Err(StoreError::Database(sqlx::Error::Io(std::io::Error::other(message.clone()))))).collect()
}

/// Each row's outcome; `Err` when the batch failed as a whole (no row of it is stored).
async fn commit_batch(
    connection: &mut SqliteConnection,
    batch: &[Job],
    health: &WriteHealth,
) -> Result<Vec<StoreResult<Stored>>, Vec<StoreResult<Stored>>> {
    let committed = match commit_in_one_trip(connection, batch).await {
        Some(committed) => committed,
        None => try_commit_batch(connection, batch).await,
    };
    match committed {
        Ok(outcomes) => {
            // Only a commit that stored a row shows that writing works (one that stored nothing
            // may not have written a page).
            if health.is_failing() && outcomes.iter().any(|outcome| matches!(outcome, Ok(Stored::Created))) {
                health.succeeded();
            }
            Ok(outcomes)
        }
        Err(error) => {
            note_failure(health, &error, batch.len());
            Err(failed(&error, batch.len()))
        }
    }
}

/// A row's own failure is its outcome; a failure of the storage stops the whole batch (see the
/// module notes).
fn unless_storage_failed<T>(outcome: StoreResult<T>) -> Result<StoreResult<T>, sqlx::Error> {
    match outcome {
        Err(StoreError::Database(error)) if is_storage_failure(&error) => Err(error),
        outcome => Ok(outcome),
    }
}

/// A batch of reports of one row each only (no blobs, no viewed marks: what a busy moment mostly
/// brings, with the widget's idempotency keys or without), committed in one round trip to SQLite's
/// thread instead of six (BEGIN, the keys' lookup, the rows, their events, their keys, COMMIT: each
/// a hand-off to that thread and back, which at a moderate rate costs more CPU than the rows).
/// `None` for any other batch, and when a row or a key of it failed (a key remembered before, or
/// two reports with one key): nothing of it is stored then, and the batch goes the long way, which
/// answers a remembered key with its report.
async fn commit_in_one_trip(
    connection: &mut SqliteConnection,
    batch: &[Job],
) -> Option<Result<Vec<StoreResult<Stored>>, sqlx::Error>> {
    let statements = ONE_TRIP_COMMITS.get(batch.len().checked_sub(1)?)?;
    let mut query = sqlx::query(statements.as_str());
    let mut keys = Vec::new();
    for job in batch {
        match job {
            Job::Report(queued) if queued.is_one_row() => {
                if queued.new.idempotency_key.is_some() {
                    keys.push(queued.key_row());
                }
                query = bind_report(query, &queued.new.report, &queued.text)
            }
            _ => return None,
        }
    }
    let keys = serde_json::to_string(&keys).ok()?;
    match query.bind(batch.len() as i64).bind(keys).execute(&mut *connection).await {
        Ok(_) => Some(Ok(batch.iter().map(|_| Ok(Stored::Created)).collect())),
        Err(error) => {
            // The statement that failed left the transaction open, or SQLite rolled it back:
            // either way none of the batch stays. (Refused when there is none: nothing to undo.)
            let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
            is_storage_failure(&error).then_some(Err(error))
        }
    }
}

async fn try_commit_batch(
    connection: &mut SqliteConnection,
    batch: &[Job],
) -> Result<Vec<StoreResult<Stored>>, sqlx::Error> {
    use sqlx::Connection;
    let mut tx = connection.begin_with("BEGIN IMMEDIATE").await?;
    let mut outcomes: Vec<Option<StoreResult<Stored>>> = batch.iter().map(|_| None).collect();
    // Blobs first: one statement each, atomic by itself.
    for (job, outcome) in batch.iter().zip(outcomes.iter_mut()) {
        if let Job::Blob(queued) = job {
            *outcome =
                Some(unless_storage_failed(insert_blob(&mut *tx, &queued.blob).await)?.map(|()| Stored::Created));
        }
    }

    let report = |i: usize| match &batch[i] {
        Job::Report(queued) => Some(&**queued),
        _ => None,
    };
    // Reports with an idempotency key and no blobs (what the widget sends): their keys are looked
    // up together, and those not seen before are stored with the plain ones below.
    let keyed: Vec<usize> = (0..batch.len()).filter(|&i| report(i).is_some_and(QueuedReport::is_keyed_row)).collect();
    let mut new_keys = Vec::new();
    if !keyed.is_empty() {
        let remembered = remembered_keys(&mut tx, keyed.iter().filter_map(|&i| report(i))).await?;
        let mut taken = std::collections::HashSet::new();
        for &i in &keyed {
            let Some(queued) = report(i) else { continue };
            let key = queued.key();
            match remembered.get(&(key.0.to_string(), key.1.to_string())) {
                Some((first_id, at)) if queued.new.report.created_at - at < IDEMPOTENCY_WINDOW_MS => {
                    outcomes[i] = Some(Ok(Stored::Repeat(first_id.clone())));
                }
                // The first of the batch with its key; a later one is left to the savepoint path
                // below, which finds the key the first stored.
                _ if taken.insert(key) => new_keys.push(i),
                _ => {}
            }
        }
    }
    let mut single_rows: Vec<usize> =
        (0..batch.len()).filter(|&i| report(i).is_some_and(QueuedReport::is_single_row)).collect();
    single_rows.extend(&new_keys);
    single_rows.sort_unstable();
    let mut rest = &single_rows[..];
    while !rest.is_empty() {
        let (size_index, size) =
            INSERT_SIZES.iter().copied().enumerate().find(|&(_, size)| size <= rest.len()).unwrap_or((8, 1));
        let (chunk, after) = rest.split_at(size);
        rest = after;
        let mut query = sqlx::query(MULTI_ROW_INSERTS[size_index].as_str());
        for queued in chunk.iter().filter_map(|&i| report(i)) {
            query = bind_report(query, &queued.new.report, &queued.text);
        }
        // On a row's failure the statement left nothing behind; its reports go one by one below.
        match query.execute(&mut *tx).await {
            Ok(_) => {
                for &i in chunk {
                    outcomes[i] = Some(Ok(Stored::Created));
                }
            }
            Err(error) if is_storage_failure(&error) => return Err(error),
            Err(_) => {}
        }
    }

    // The keys of the keyed reports just stored, in one statement (before the savepoint path, so a
    // repeat within the batch finds its key).
    let stored_keys: Vec<&QueuedReport> =
        new_keys.iter().filter(|&&i| matches!(outcomes[i], Some(Ok(_)))).filter_map(|&i| report(i)).collect();
    if !stored_keys.is_empty() {
        remember_keys(&mut tx, &stored_keys).await?;
    }

    for (job, outcome) in batch.iter().zip(outcomes.iter_mut()) {
        let Job::Report(queued) = job else { continue };
        if outcome.is_some() {
            continue;
        }
        if queued.is_single_row() {
            // One statement is atomic by itself: no savepoint needed.
            let stored = insert_one_report(&mut tx, queued).await;
            *outcome = Some(unless_storage_failed(stored)?.map(|()| Stored::Created));
            continue;
        }
        sqlx::query("SAVEPOINT new_report").execute(&mut *tx).await?;
        let stored = unless_storage_failed(store_new_report(&mut tx, queued).await)?;
        if stored.is_err() {
            sqlx::query("ROLLBACK TO new_report").execute(&mut *tx).await?;
        }
        sqlx::query("RELEASE new_report").execute(&mut *tx).await?;
        *outcome = Some(stored);
    }
    // Every report stored is `report.created` in the feed, in the same commit: one statement that
    // reads them back in SQLite (no JSON built here), in the order they were stored.
    let filed = batch
        .iter()
        .zip(&outcomes)
        .filter(|(job, outcome)| matches!((job, outcome), (Job::Report(_), Some(Ok(Stored::Created)))))
        .count();
    if filed > 0 {
        sqlx::query(LAST_FILED_EVENTS).bind(filed as i64).execute(&mut *tx).await?;
    }
    store_views(&mut tx, batch, &mut outcomes).await?;
    tx.commit().await?;
    Ok(outcomes.into_iter().map(|o| o.expect("every row has an outcome")).collect())
}

const UPSERT_VIEW: &str = "INSERT INTO viewed_marks (report_id, viewer, viewed_at) VALUES (?, ?, ?)
     ON CONFLICT (report_id, viewer) DO UPDATE SET viewed_at = max(viewed_at, excluded.viewed_at)";

/// The batch's viewed marks, folded (see the module notes).
async fn store_views(
    conn: &mut SqliteConnection,
    batch: &[Job],
    outcomes: &mut [Option<StoreResult<Stored>>],
) -> Result<(), sqlx::Error> {
    let views: Vec<(usize, &QueuedViews)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, job)| match job {
            Job::Views(queued) => Some((i, queued)),
            _ => None,
        })
        .collect();
    if views.is_empty() {
        return Ok(());
    }
    let mut latest: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    for (_, queued) in &views {
        for report_id in &queued.report_ids {
            let at = latest.entry((report_id.as_str(), queued.viewer.as_str())).or_insert(queued.at);
            *at = (*at).max(queued.at);
        }
    }
    sqlx::query("SAVEPOINT viewed_marks").execute(&mut *conn).await?;
    let mut folded = true;
    for ((report_id, viewer), at) in &latest {
        match sqlx::query(UPSERT_VIEW).bind(report_id).bind(viewer).bind(at).execute(&mut *conn).await {
            Ok(_) => {}
            Err(error) if is_storage_failure(&error) => return Err(error),
            Err(_) => {
                folded = false;
                break;
            }
        }
    }
    if folded {
        sqlx::query("RELEASE viewed_marks").execute(&mut *conn).await?;
        for (i, _) in &views {
            outcomes[*i] = Some(Ok(Stored::Created));
        }
        return Ok(());
    }
    sqlx::query("ROLLBACK TO viewed_marks").execute(&mut *conn).await?;
    sqlx::query("RELEASE viewed_marks").execute(&mut *conn).await?;
    for (i, queued) in views {
        sqlx::query("SAVEPOINT viewed_marks").execute(&mut *conn).await?;
        let mut outcome = Ok(Stored::Created);
        for report_id in &queued.report_ids {
            if let Err(error) =
                sqlx::query(UPSERT_VIEW).bind(report_id).bind(&queued.viewer).bind(queued.at).execute(&mut *conn).await
            {
                if is_storage_failure(&error) {
                    return Err(error);
                }
                outcome = Err(StoreError::Database(error));
                sqlx::query("ROLLBACK TO viewed_marks").execute(&mut *conn).await?;
                break;
            }
        }
        sqlx::query("RELEASE viewed_marks").execute(&mut *conn).await?;
        outcomes[i] = Some(outcome);
    }
    Ok(())
}

/// One report's row.
async fn insert_one_report(conn: &mut SqliteConnection, queued: &QueuedReport) -> StoreResult<()> {
    let one_row = MULTI_ROW_INSERTS[INSERT_SIZES.len() - 1].as_str();
    bind_report(sqlx::query(one_row), &queued.new.report, &queued.text)
        .execute(&mut *conn)
        .await
        .map_err(map_write_error)?;
    Ok(())
}

/// One report inside the batch transaction: idempotency check, the row, its blobs, its key.
async fn store_new_report(conn: &mut SqliteConnection, queued: &QueuedReport) -> StoreResult<Stored> {
    let new = &queued.new;
    let report = &new.report;
    // The report's own creation time is "now" for the idempotency window.
    if let Some(key) = &new.idempotency_key {
        let earlier: Option<(String, i64)> =
            sqlx::query_as("SELECT report_id, created_at FROM idempotency_keys WHERE project_id = ? AND key = ?")
                .bind(&report.project_id)
                .bind(key)
                .fetch_optional(&mut *conn)
                .await?;
        if let Some((first_report_id, remembered_at)) = earlier
            && report.created_at - remembered_at < IDEMPOTENCY_WINDOW_MS
        {
            return Ok(Stored::Repeat(first_report_id));
        }
    }

    insert_one_report(&mut *conn, queued).await?;

    let mut bound: Vec<&str> = Vec::with_capacity(new.blob_ids.len());
    for blob_id in &new.blob_ids {
        // Two blocks may show the same blob; it is bound once.
        if bound.contains(&blob_id.as_str()) {
            continue;
        }
        // The conditional update is the arbiter: of two reports racing for one blob, exactly one
        // finds it unbound.
        let claimed =
            sqlx::query("UPDATE blobs SET report_id = ? WHERE id = ? AND project_id = ? AND report_id IS NULL")
                .bind(&report.id)
                .bind(blob_id)
                .bind(&report.project_id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
        if claimed == 0 {
            let owner: Option<(String,)> = sqlx::query_as("SELECT project_id FROM blobs WHERE id = ?")
                .bind(blob_id)
                .fetch_optional(&mut *conn)
                .await?;
            return Err(match owner {
                Some((project_id,)) if project_id == report.project_id => StoreError::BlobAlreadyUsed(blob_id.clone()),
                _ => StoreError::NotFound,
            });
        }
        bound.push(blob_id);
    }

    if let Some(key) = &new.idempotency_key {
        // An expired entry for the same key is replaced.
        sqlx::query(
            "INSERT INTO idempotency_keys (project_id, key, report_id, created_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (project_id, key) DO UPDATE SET report_id = excluded.report_id, created_at = excluded.created_at",
        )
        .bind(&report.project_id)
        .bind(key)
        .bind(&report.id)
        .bind(report.created_at)
        .execute(&mut *conn)
        .await
        .map_err(map_write_error)?;
    }
    Ok(Stored::Created)
}
