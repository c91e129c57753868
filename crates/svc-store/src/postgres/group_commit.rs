//! Group commit for plain reports (no blobs to bind, no idempotency key: what the widget sends
//! most). Concurrent `create_report` calls queue their report; a dispatcher takes everything
//! queued and stores it with one multi-row INSERT (a single statement: atomic, and committed with
//! one WAL flush), then answers each caller. A few batches may be in flight at once, so one slow
//! commit does not stall the queue. If a batch's INSERT fails, nothing of it was stored; its
//! reports are then inserted one by one, so only the failing one fails.

use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::reports::{insert_report, insert_report_chunk};
use crate::StoreResult;
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
pub(super) fn start(pool: PgPool) -> mpsc::Sender<Queued> {
    let (sender, queue) = mpsc::channel(QUEUE_CAPACITY);
    tokio::spawn(dispatch(pool, queue));
    sender
}

async fn dispatch(pool: PgPool, mut queue: mpsc::Receiver<Queued>) {
    let slots = Arc::new(Semaphore::new(COMMITTERS));
    loop {
        // Wait for a free committer first: meanwhile the queue fills and the next batch grows.
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let mut batch = Vec::with_capacity(MAX_BATCH);
        if queue.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            commit(&pool, batch).await;
            drop(slot);
        });
    }
}

async fn commit(pool: &PgPool, batch: Vec<Queued>) {
    let (reports, replies): (Vec<Report>, Vec<_>) = batch.into_iter().map(|q| (q.report, q.reply)).unzip();
    let stored = if reports.len() == 1 {
        insert_report(pool, &reports[0]).await
    } else {
        insert_report_chunk(pool, &reports).await
    };
    match stored {
        Ok(()) => {
            for (report, reply) in reports.into_iter().zip(replies) {
                // A caller that gave up waiting still has its report stored; nobody to tell.
                let _ = reply.send(Ok(report));
            }
        }
        Err(error) if reports.len() == 1 => {
            let _ = replies.into_iter().next().map(|reply| reply.send(Err(error)));
        }
        Err(_) => {
            for (report, reply) in reports.into_iter().zip(replies) {
                let outcome = insert_report(pool, &report).await.map(|()| report);
                let _ = reply.send(outcome);
            }
        }
    }
}
