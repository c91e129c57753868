//! Group commit for new reports.
//!
//! Every report must be fsync'd before it is acknowledged, and with `synchronous=FULL` each commit
//! costs a sync. Concurrent `create_report` calls therefore queue their reports; one task drains the
//! queue, stores the whole batch in one transaction, commits once and then answers every caller.
//!
//! Inside the transaction, reports that are a single row (no blobs to bind, no idempotency key: what
//! the widget sends most) go in with multi-row INSERTs; each report that needs several statements
//! gets a savepoint, so one failing report rolls back only itself. If a multi-row INSERT fails (a
//! statement is atomic, so it leaves nothing behind), its reports are retried one by one and only
//! the failing one fails.

use sqlx::sqlite::{SqliteConnection, SqlitePool};
use std::sync::LazyLock;
use tokio::sync::{mpsc, oneshot};

use super::rows::report_columns;
use super::{ReportText, insert_report, map_write_error};
use crate::{CreatedReport, IDEMPOTENCY_WINDOW_MS, StoreError, StoreResult};
use svc_core::model::NewReport;

static COMMIT_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static BEGIN_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Most reports stored by one commit.
const MAX_BATCH: usize = 256;
/// Reports that may wait for the writer before callers are slowed down.
pub(super) const QUEUE_CAPACITY: usize = 4096;
/// Row counts of the prepared multi-row INSERTs (powers of two, so any batch is a few statements
/// and the statement cache holds them all).
const INSERT_SIZES: [usize; 9] = [256, 128, 64, 32, 16, 8, 4, 2, 1];

static MULTI_ROW_INSERTS: LazyLock<Vec<String>> = LazyLock::new(|| {
    INSERT_SIZES
        .iter()
        .map(|&rows| {
            let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
            format!(concat!("INSERT INTO reports (", report_columns!(), ") VALUES {}"), vec![row; rows].join(", "))
        })
        .collect()
});

pub(super) struct QueuedReport {
    pub new: NewReport,
    pub text: ReportText,
    pub reply: oneshot::Sender<StoreResult<CreatedReport>>,
}

impl QueuedReport {
    /// One INSERT stores all of it.
    fn is_single_row(&self) -> bool {
        self.new.idempotency_key.is_none() && self.new.blob_ids.is_empty()
    }
}

/// What storing one report did (the report itself is moved into the answer afterwards).
enum Stored {
    Created,
    Repeat(String),
}

/// Runs until every sender (the store) is gone, then finishes what is queued.
pub(super) async fn run_report_writer(writer: SqlitePool, mut queue: mpsc::Receiver<QueuedReport>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut stat = (0usize, 0usize, std::time::Duration::ZERO, std::time::Instant::now(), std::time::Duration::ZERO);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let t0 = std::time::Instant::now();
        let outcomes = commit_batch(&writer, &batch).await;
        stat.0 += 1;
        stat.1 += batch.len();
        stat.2 += t0.elapsed();
        if stat.3.elapsed().as_secs() >= 2 {
            eprintln!(
                "TMPSTAT batches {} avg batch {:.1} busy {:.0}% avg cycle {:.2} ms COMMIT {:.2} ms BEGIN {:.2} ms",
                stat.0,
                stat.1 as f64 / stat.0 as f64,
                stat.2.as_secs_f64() / stat.3.elapsed().as_secs_f64() * 100.0,
                stat.2.as_secs_f64() * 1000.0 / stat.0 as f64,
                COMMIT_NS.swap(0, std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / stat.0 as f64,
                BEGIN_NS.swap(0, std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / stat.0 as f64
            );
            stat = (0, 0, std::time::Duration::ZERO, std::time::Instant::now(), std::time::Duration::ZERO);
        }
        for (queued, outcome) in batch.drain(..).zip(outcomes) {
            let answer = outcome.map(|stored| match stored {
                Stored::Created => CreatedReport::Created(queued.new.report),
                Stored::Repeat(first_id) => CreatedReport::Repeat(first_id),
            });
            // A caller that gave up waiting still has its report stored; nobody to tell.
            let _ = queued.reply.send(answer);
        }
    }
}

async fn commit_batch(writer: &SqlitePool, batch: &[QueuedReport]) -> Vec<StoreResult<Stored>> {
    match try_commit_batch(writer, batch).await {
        Ok(outcomes) => outcomes,
        Err(error) => {
            // The transaction as a whole failed, so no report of the batch is stored.
            tracing::error!(%error, reports = batch.len(), "report batch failed to commit");
            let message = error.to_string();
            batch
                .iter()
                .map(|_| Err(StoreError::Database(sqlx::Error::Io(std::io::Error::other(message.clone())))))
                .collect()
        }
    }
}

async fn try_commit_batch(
    writer: &SqlitePool,
    batch: &[QueuedReport],
) -> Result<Vec<StoreResult<Stored>>, sqlx::Error> {
    let t2 = std::time::Instant::now();
    let mut tx = writer.begin_with("BEGIN IMMEDIATE").await?;
    BEGIN_NS.fetch_add(t2.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
    let mut outcomes: Vec<Option<StoreResult<Stored>>> = batch.iter().map(|_| None).collect();

    let single_rows: Vec<usize> = (0..batch.len()).filter(|&i| batch[i].is_single_row()).collect();
    let mut rest = &single_rows[..];
    while !rest.is_empty() {
        let (size_index, size) =
            INSERT_SIZES.iter().copied().enumerate().find(|&(_, size)| size <= rest.len()).unwrap_or((8, 1));
        let (chunk, after) = rest.split_at(size);
        rest = after;
        let mut query = sqlx::query(MULTI_ROW_INSERTS[size_index].as_str());
        for &i in chunk {
            let QueuedReport { new, text, .. } = &batch[i];
            let report = &new.report;
            query = query
                .bind(&report.id)
                .bind(&report.project_id)
                .bind(&report.channel_key)
                .bind(&report.status)
                .bind(&report.title)
                .bind(&text.blocks)
                .bind(&text.context)
                .bind(&text.identity)
                .bind(&report.identity_error)
                .bind(&report.author.kind)
                .bind(&report.author.id)
                .bind(&report.author.label)
                .bind(&report.artifact_id)
                .bind(&report.url)
                .bind(report.created_at)
                .bind(report.updated_at);
        }
        // On failure the statement left nothing behind; its reports go one by one below.
        if query.execute(&mut *tx).await.is_ok() {
            for &i in chunk {
                outcomes[i] = Some(Ok(Stored::Created));
            }
        }
    }

    for (queued, outcome) in batch.iter().zip(outcomes.iter_mut()) {
        if outcome.is_some() {
            continue;
        }
        if queued.is_single_row() {
            // One statement is atomic by itself: no savepoint needed.
            *outcome = Some(insert_report(&mut tx, &queued.new.report, &queued.text).await.map(|()| Stored::Created));
            continue;
        }
        sqlx::query("SAVEPOINT new_report").execute(&mut *tx).await?;
        let stored = store_new_report(&mut tx, queued).await;
        if stored.is_err() {
            sqlx::query("ROLLBACK TO new_report").execute(&mut *tx).await?;
        }
        sqlx::query("RELEASE new_report").execute(&mut *tx).await?;
        *outcome = Some(stored);
    }
    let t1 = std::time::Instant::now();
    tx.commit().await?;
    COMMIT_NS.fetch_add(t1.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
    Ok(outcomes.into_iter().map(|o| o.expect("every report has an outcome")).collect())
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

    insert_report(&mut *conn, report, &queued.text).await?;

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
