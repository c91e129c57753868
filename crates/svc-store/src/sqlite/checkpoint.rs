//! WAL checkpoints off the writer's path.
//!
//! SQLite's default runs a checkpoint inside the commit that takes the WAL past 1,000 pages: that
//! commit (and every report waiting in the group commit behind it) waits while pages are copied into
//! the database file (2.7% of the server's time under ingest, and its slowest commits; see
//! bench/README.md, "Profiles"). The writer connection therefore never checkpoints
//! (`wal_autocheckpoint=0`), and this task runs a PASSIVE checkpoint from a reader connection once a
//! second: it copies what no reader still needs, never waits for the writer or a reader, and never
//! blocks them. Durability is unchanged: a commit is durable once its WAL frames are synced.
//!
//! SQLite starts the WAL over (and cuts the file to `journal_size_limit`) only when a write begins
//! after a checkpoint copied *all* of it. Under a steady stream of commits a reader's checkpoint
//! never gets there: frames arrive while it copies, so the WAL would grow without end (a million
//! bulk-loaded reports left a WAL larger than the database, and every read then looked its pages
//! up in it). So when the WAL is past [`WRITER_CATCH_UP_FRAMES`] and the reader's copy left frames
//! behind, the round ends with a second PASSIVE checkpoint on the writer connection: no commit can
//! come in while it runs, the bulk is already copied, and the next commit starts the WAL over.

use std::time::Duration;

use sqlx::sqlite::SqlitePool;
use tokio::sync::mpsc;

use super::group_commit::Job;
use crate::StoreResult;

const INTERVAL: Duration = Duration::from_secs(1);
/// WAL frames (pages) past which a round that could not copy everything finishes on the writer:
/// 4,000 pages of 4 KiB, four times SQLite's own checkpoint threshold.
const WRITER_CATCH_UP_FRAMES: i64 = 4_000;
/// Bytes the WAL file is cut back to when it starts over (SQLite's `journal_size_limit`).
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// What one checkpoint did: frames in the WAL, and how many of them are now in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    pub wal_frames: i64,
    pub copied_frames: i64,
}

/// One round, now: a PASSIVE checkpoint from a reader, finished on the writer when the WAL is long
/// and the reader's copy could not catch up.
pub(super) async fn run_once(writer: &SqlitePool, reader: &SqlitePool) -> StoreResult<Checkpointed> {
    let done = passive(reader).await?;
    if done.copied_frames < done.wal_frames && done.wal_frames >= WRITER_CATCH_UP_FRAMES {
        return passive(writer).await;
    }
    Ok(done)
}

async fn passive(pool: &SqlitePool) -> StoreResult<Checkpointed> {
    let (_busy, wal_frames, copied_frames): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool).await?;
    Ok(Checkpointed { wal_frames, copied_frames })
}

/// Runs until the store is gone (its write queue closed).
pub(super) async fn run(writer: SqlitePool, reader: SqlitePool, alive: mpsc::WeakSender<Job>) {
    loop {
        tokio::time::sleep(INTERVAL).await;
        if alive.upgrade().is_none() {
            return;
        }
        if let Err(error) = run_once(&writer, &reader).await {
            // The WAL only grows until a later round succeeds; nothing is lost.
            tracing::warn!(%error, "WAL checkpoint failed; will retry");
        }
    }
}
