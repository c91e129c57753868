//! WAL checkpoints off the writer's path.
//!
//! SQLite's default runs a checkpoint inside the commit that takes the WAL past 1,000 pages: that
//! commit (and every report waiting in the group commit behind it) waits while pages are copied into
//! the database file (2.7% of the server's time under ingest, and its slowest commits; see
//! bench/README.md, "Profiles"). The writer connection therefore never checkpoints
//! (`wal_autocheckpoint=0`), and this task runs a PASSIVE checkpoint from a reader connection once a
//! second: it copies what no reader still needs, never waits for the writer or a reader, and never
//! blocks them. Durability is unchanged: a commit is durable once its WAL frames are synced.

use std::time::Duration;

use sqlx::sqlite::SqlitePool;
use tokio::sync::mpsc;

use super::group_commit::Job;
use crate::StoreResult;

const INTERVAL: Duration = Duration::from_secs(1);

/// What one checkpoint did: frames in the WAL, and how many of them are now in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    pub wal_frames: i64,
    pub copied_frames: i64,
}

/// One PASSIVE checkpoint, now.
pub(super) async fn run_once(reader: &SqlitePool) -> StoreResult<Checkpointed> {
    let (_busy, wal_frames, copied_frames): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(reader).await?;
    Ok(Checkpointed { wal_frames, copied_frames })
}

/// Runs until the store is gone (its write queue closed).
pub(super) async fn run(reader: SqlitePool, alive: mpsc::WeakSender<Job>) {
    loop {
        tokio::time::sleep(INTERVAL).await;
        if alive.upgrade().is_none() {
            return;
        }
        if let Err(error) = run_once(&reader).await {
            // The WAL only grows until a later round succeeds; nothing is lost.
            tracing::warn!(%error, "WAL checkpoint failed; will retry");
        }
    }
}
