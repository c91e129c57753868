//! Group commit for plain reports (no blobs to bind, no idempotency key: what the widget sends
//! most). Concurrent `create_report` calls queue their report; a dispatcher takes everything
//! queued and stores it with one multi-row INSERT that also writes their `report.created` events
//! (a single statement: atomic, and committed with one WAL flush), then answers each caller. A few batches may be in flight at once, so one slow
//! commit does not stall the queue. If a batch's INSERT fails, nothing of it was stored; its
//! reports are then inserted one by one, so only the failing one fails.
//!
//! Unless the failure is not the rows' own. A batch whose connection was lost (server restarted,
//! backend terminated) is tried once more on a connection the pool checks first (see [`super`]):
//! the INSERT is one statement, so it either committed whole or not at all, and if it did commit
//! before the connection went, the second try finds its first report's id taken, which is then
//! success (ids are random and made by the server: nothing else files the same id). Any other
//! failure of the storage (the server is out of disk space, say) fails the whole batch, notes it
//! in the write health, and the reports are not tried one by one.

use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::is_connection_lost;
use super::reports::file_chunk;
use crate::health::{WriteHealth, is_storage_failure_of};
use crate::{StoreError, StoreResult};
use svc_core::model::Report;

/// Most reports in one INSERT.
const MAX_BATCH: usize = 256;
/// Batches committing at the same time (each holds one pooled connection).
const COMMITTERS: usize = 4;
/// Reports that may wait before callers are slowed down.
const QUEUE_CAPACITY: usize = 4096;

pub(super) struct Queued {
    pub report: Report,
    /// Answered with the report itself once it is durable.
    pub reply: oneshot::Sender<StoreResult<Report>>,
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

/// The batch as one statement (the reports and their events).
async fn insert(pool: &PgPool, reports: &[Report]) -> StoreResult<()> {
    file_chunk(pool, reports).await
}

/// [`insert`], once more if the connection was lost (see the module notes).
async fn insert_retrying(pool: &PgPool, reports: &[Report]) -> StoreResult<()> {
    match insert(pool, reports).await {
        Err(StoreError::Database(error)) if is_connection_lost(&error) => {
            tracing::warn!(%error, rows = reports.len(), "connection lost while filing reports; trying once more");
            match insert(pool, reports).await {
                Err(StoreError::Conflict(subject)) if subject == "id" => Ok(()),
                retried => retried,
            }
        }
        first => first,
    }
}

async fn commit(pool: &PgPool, batch: Vec<Queued>, health: &WriteHealth) {
    let (reports, replies): (Vec<Report>, Vec<_>) = batch.into_iter().map(|q| (q.report, q.reply)).unzip();
    let stored = insert_retrying(pool, &reports).await;
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
                let _ = reply.send(Ok(report));
            }
        }
        Err(error) if reports.len() == 1 => {
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
            for (report, reply) in reports.into_iter().zip(replies) {
                let outcome = file_chunk(pool, std::slice::from_ref(&report)).await.map(|()| report);
                let _ = reply.send(outcome);
            }
        }
    }
}
