//! Group commit for reports of one row each (no blobs to bind; with an idempotency key, as the
//! widget sends them, or without). Concurrent `create_report` calls queue their report; a
//! dispatcher takes everything queued and stores it with one statement that claims the keys,
//! inserts the reports and writes their `report.created` events (atomic, and committed with one WAL
//! flush), then answers each caller. A few batches may be in flight at once, so one slow commit does
//! not stall the queue. If a batch's statement fails, nothing of it was stored; its reports are
//! then filed one at a time, so only the failing one fails, and a report whose key was taken (a
//! retry of a report filed before, or a key twice in the batch) is answered with the first report
//! the way a report filed alone is (`reports::create_report`).
//!
//! Unless the failure is not the rows' own. A batch whose connection was lost (server restarted,
//! backend terminated) is tried once more on a connection the pool checks first (see [`super`]):
//! the statement either committed whole or not at all, and if it did commit before the connection
//! went, the second try finds its first report's id taken, which is then success (ids are random and
//! made by the server: nothing else files the same id). A taken key proves nothing of the kind
//! (another request may have claimed it), so then the batch's first report is looked up. Any other
//! failure of the storage (the server is out of disk space, say) fails the whole batch, notes
//! it in the write health, and the reports are not tried one by one.

use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::is_connection_lost;
use super::reports::{create_report, file_chunk};
use crate::health::{WriteHealth, is_storage_failure_of};
use crate::{CreatedReport, StoreError, StoreResult};
use svc_core::model::{NewReport, Report};

/// Most reports in one INSERT.
const MAX_BATCH: usize = 256;
/// Batches committing at the same time (each holds one pooled connection).
const COMMITTERS: usize = 4;
/// Reports that may wait before callers are slowed down.
const QUEUE_CAPACITY: usize = 4096;

pub(super) struct Queued {
    pub report: Report,
    /// Its idempotency key, if it has one.
    pub key: Option<String>,
    /// Answered once the report is durable (or, for a key taken before, with the first report).
    pub reply: oneshot::Sender<StoreResult<CreatedReport>>,
}

/// Starts the dispatcher; it runs until every sender is gone, then finishes what is queued.
pub(super) fn start(pool: PgPool, health: Arc<WriteHealth>) -> mpsc::Sender<Queued> {
    let (sender, queue) = mpsc::channel(QUEUE_CAPACITY);
    tokio::spawn(dispatch(pool, queue, health));
    sender
}

async fn dispatch(pool: PgPool, mut queue: mpsc::Receiver<Queued>, health: Arc<WriteHealth>) {
    let slots = Arc::new(Semaphore::new(COMMITTERS));
    loop {
        // Wait for a free committer first: meanwhile the queue fills and the next batch grows.
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let mut batch = Vec::with_capacity(MAX_BATCH);
        if queue.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        let pool = pool.clone();
        let health = health.clone();
        tokio::spawn(async move {
            commit(&pool, batch, &health).await;
            drop(slot);
        });
    }
}

/// The batch as one statement (their keys, the reports and their events).
async fn insert(pool: &PgPool, reports: &[Report], keys: &[Option<String>]) -> StoreResult<()> {
    file_chunk(pool, reports, keys).await
}

/// [`insert`], once more if the connection was lost (see the module notes).
async fn insert_retrying(pool: &PgPool, reports: &[Report], keys: &[Option<String>]) -> StoreResult<()> {
    match insert(pool, reports, keys).await {
        Err(StoreError::Database(error)) if is_connection_lost(&error) => {
            tracing::warn!(%error, rows = reports.len(), "connection lost while filing reports; trying once more");
            match insert(pool, reports, keys).await {
                Err(StoreError::Conflict(subject)) if subject == "id" => Ok(()),
                // A key taken: by this batch, if its first report is there (the statement is atomic).
                Err(StoreError::Conflict(subject))
                    if subject == "idempotency key" && is_stored(pool, &reports[0]).await =>
                {
                    Ok(())
                }
                retried => retried,
            }
        }
        first => first,
    }
}

/// Whether `report` is stored (false when that cannot be read either).
async fn is_stored(pool: &PgPool, report: &Report) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM reports WHERE id = $1)")
        .bind(&report.id)
        .fetch_one(pool)
        .await
        .unwrap_or(false)
}

async fn commit(pool: &PgPool, batch: Vec<Queued>, health: &WriteHealth) {
    let mut reports = Vec::with_capacity(batch.len());
    let mut keys = Vec::with_capacity(batch.len());
    let mut replies = Vec::with_capacity(batch.len());
    for queued in batch {
        reports.push(queued.report);
        keys.push(queued.key);
        replies.push(queued.reply);
    }
    let stored = insert_retrying(pool, &reports, &keys).await;
    if let Err(error) = &stored
        && is_storage_failure_of(error)
    {
        health.failed(error);
    }
    match stored {
        Ok(()) => {
            health.succeeded();
            for (report, reply) in reports.into_iter().zip(replies) {
                // A caller that gave up waiting still has its report stored; nobody to tell.
                let _ = reply.send(Ok(CreatedReport::Created(report)));
            }
        }
        Err(error) if reports.len() == 1 && keys[0].is_none() => {
            let _ = replies.into_iter().next().map(|reply| reply.send(Err(error)));
        }
        Err(error) if is_storage_failure_of(&error) => {
            // Not the rows' fault: each one alone would fail the same way.
            let message = error.to_string();
            for reply in replies {
                let _ = reply.send(Err(StoreError::Database(sqlx::Error::Io(std::io::Error::other(message.clone())))));
            }
        }
        Err(_) => {
            for ((report, key), reply) in reports.into_iter().zip(keys).zip(replies) {
                let _ = reply.send(file_alone(pool, report, key).await);
            }
        }
    }
}

/// One report of a batch that failed, on its own: a keyed one the way that answers a taken key
/// with its first report.
async fn file_alone(pool: &PgPool, report: Report, key: Option<String>) -> StoreResult<CreatedReport> {
    if key.is_none() {
        return file_chunk(pool, std::slice::from_ref(&report), &[None]).await.map(|()| CreatedReport::Created(report));
    }
    // A copy: the rare way after a failed batch, where the report may be answered as stored.
    let new = NewReport { report: report.clone(), blob_ids: Vec::new(), idempotency_key: key };
    match create_report(pool, new).await? {
        // The batch did store it, key and all, before its connection was lost.
        CreatedReport::Repeat(first) if first == report.id => Ok(CreatedReport::Created(report)),
        created => Ok(created),
    }
}
