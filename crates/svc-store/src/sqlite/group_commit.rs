//! Group commit for new reports.
//!
//! Every report must be fsync'd before it is acknowledged, and with `synchronous=FULL` each commit
//! costs a sync. Concurrent `create_report` calls therefore queue their reports; one task drains the
//! queue, stores the whole batch in one transaction (a savepoint per report, so one failing report
//! rolls back only itself), commits once and then answers every caller.

use sqlx::sqlite::{SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use super::{insert_report, map_write_error};
use crate::{CreatedReport, IDEMPOTENCY_WINDOW_MS, StoreError, StoreResult};
use svc_core::model::NewReport;

/// Most reports stored by one commit.
const MAX_BATCH: usize = 256;
/// Reports that may wait for the writer before callers are slowed down.
pub(super) const QUEUE_CAPACITY: usize = 4096;

pub(super) struct QueuedReport {
    pub new: NewReport,
    pub reply: oneshot::Sender<StoreResult<CreatedReport>>,
}

/// Runs until every sender (the store) is gone, then finishes what is queued.
pub(super) async fn run_report_writer(writer: SqlitePool, mut queue: mpsc::Receiver<QueuedReport>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let outcomes = commit_batch(&writer, &batch).await;
        for (queued, outcome) in batch.drain(..).zip(outcomes) {
            // A caller that gave up waiting still has its report stored; nobody to tell.
            let _ = queued.reply.send(outcome);
        }
    }
}

async fn commit_batch(writer: &SqlitePool, batch: &[QueuedReport]) -> Vec<StoreResult<CreatedReport>> {
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
) -> Result<Vec<StoreResult<CreatedReport>>, sqlx::Error> {
    let mut tx = writer.begin_with("BEGIN IMMEDIATE").await?;
    let mut outcomes = Vec::with_capacity(batch.len());
    for queued in batch {
        sqlx::query("SAVEPOINT new_report").execute(&mut *tx).await?;
        let outcome = store_new_report(&mut tx, &queued.new).await;
        if outcome.is_err() {
            sqlx::query("ROLLBACK TO new_report").execute(&mut *tx).await?;
        }
        sqlx::query("RELEASE new_report").execute(&mut *tx).await?;
        outcomes.push(outcome);
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// One report inside the batch transaction: idempotency check, the row, its blobs, its key.
async fn store_new_report(conn: &mut SqliteConnection, new: &NewReport) -> StoreResult<CreatedReport> {
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
            return Ok(CreatedReport::Repeat(first_report_id));
        }
    }

    insert_report(&mut *conn, report).await?;

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
    Ok(CreatedReport::Created(report.clone()))
}
