//! WAL checkpoints off the writer's path.
//!
//! SQLite's default runs a checkpoint inside the commit that takes the WAL past 1,000 pages: that
//! commit (and every report waiting in the group commit behind it) waits while pages are copied into
//! the database file (2.7% of the server's time under ingest, and its slowest commits; see
//! bench/README.md, "Profiles"). This task therefore runs a PASSIVE checkpoint from a reader
//! connection once a second: it copies what no reader still needs, never waits for the writer or a reader, and never
//! blocks them. Durability is unchanged: a commit is durable once its WAL frames are synced.
//!
//! The writer still checkpoints once the WAL is past [`WRITER_CHECKPOINT_FRAMES`] pages (its
//! `wal_autocheckpoint`, four times SQLite's default). SQLite starts the WAL over (and cuts the
//! file back to [`WAL_SIZE_LIMIT`]) only when a write begins after a checkpoint copied *all* of it,
//! and under commits that never pause a reader's checkpoint never gets there: frames arrive while
//! it copies. With no checkpoint in the writer at all, a million bulk-loaded reports left a WAL
//! larger than the database, and every read looked its pages up in it. The writer's checkpoint
//! runs right after a commit, when nothing else can write: it copies what the readers' rounds have
//! not (at most about a second of commits) and the next commit starts the WAL over.

use std::time::Duration;

use sqlx::sqlite::SqlitePool;
use tokio::sync::mpsc;

use super::group_commit::Job;
use crate::StoreResult;

const INTERVAL: Duration = Duration::from_secs(1);
/// WAL pages past which a commit on the writer checkpoints too (its `wal_autocheckpoint`): 4,000
/// pages of 4 KiB.
pub(super) const WRITER_CHECKPOINT_FRAMES: i64 = 4_000;
/// Bytes the WAL file is cut back to when it starts over (SQLite's `journal_size_limit`).
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// What one checkpoint did: frames in the WAL, and how many of them are now in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    pub wal_frames: i64,
    pub copied_frames: i64,
}

/// One PASSIVE checkpoint from a reader, now.
pub(super) async fn run_once(reader: &SqlitePool) -> StoreResult<Checkpointed> {
    let started = std::time::Instant::now();
    let (_busy, wal_frames, copied_frames): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(reader).await?;
    tracing::debug!(wal_frames, copied_frames, ms = started.elapsed().as_millis() as u64, "WAL checkpoint");
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
            // The writer's own checkpoint of a long WAL bounds it meanwhile; nothing is lost.
            tracing::warn!(%error, "WAL checkpoint failed; will retry");
        }
    }
}
