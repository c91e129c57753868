//! WAL checkpoints off the writer's path.
//!
//! SQLite's default runs a checkpoint inside the commit that takes the WAL past 1,000 pages: that
//! commit (and every report waiting in the group commit behind it) waits while pages are copied into
//! the database file (2.7% of the server's time under ingest, and its slowest commits; see
//! bench/README.md, "Profiles"). This task instead runs a PASSIVE checkpoint from a reader
//! connection every [`INTERVAL`]: it copies what no reader still needs, never waits for the writer
//! or a reader, and never blocks them. Durability is unchanged: a commit is durable once its WAL
//! frames are synced.
//!
//! SQLite starts the WAL over (and cuts the file back to [`WAL_SIZE_LIMIT`]) only when a write
//! begins after a checkpoint copied *all* of it, and under commits that never pause a reader's
//! checkpoint never gets there: frames arrive while it copies. With nothing else, a million
//! bulk-loaded reports left a WAL larger than the database, and every read looked its pages up in
//! it. So once the WAL is past [`WRITER_CATCH_UP_FRAMES`], the round ends with a second PASSIVE
//! checkpoint on the writer connection, between two commits: it copies only what arrived while the
//! reader copied (the bulk is done), nothing can be committed meanwhile, and the next commit starts
//! the WAL over. The writer's own `wal_autocheckpoint` stays as a backstop at
//! [`WRITER_BACKSTOP_FRAMES`], should these rounds stop.

use std::time::Duration;

use sqlx::sqlite::SqlitePool;
use tokio::sync::mpsc;

use super::group_commit::Job;
use crate::StoreResult;

/// How often a round runs. Under full-rate ingest the WAL grows by 20,000-30,000 pages a second;
/// with a round each second the writer's part (below) held the writer for 30 ms on average (up to
/// 60) while reports waited, and that was text ingest's p99 (41 ms). With four rounds a second it
/// holds it for 20 ms, and the p99 is 16 ms (bench/README.md, "Checkpoints four times a second").
const INTERVAL: Duration = Duration::from_millis(250);
/// WAL pages past which a round finishes on the writer: 4,000 pages of 4 KiB.
const WRITER_CATCH_UP_FRAMES: i64 = 4_000;
/// WAL pages past which a commit checkpoints by itself (the writer's `wal_autocheckpoint`): far
/// beyond what the rounds let the WAL reach.
pub(super) const WRITER_BACKSTOP_FRAMES: i64 = 50_000;
/// Bytes the WAL file is cut back to when it starts over (SQLite's `journal_size_limit`).
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// What one checkpoint did: frames in the WAL, and how many of them are now in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    pub wal_frames: i64,
    pub copied_frames: i64,
}

/// One round, now: a PASSIVE checkpoint from a reader, finished on the writer when the WAL is long.
pub(super) async fn run_once(writer: &SqlitePool, reader: &SqlitePool) -> StoreResult<Checkpointed> {
    let done = passive(reader, "reader").await?;
    if done.wal_frames >= WRITER_CATCH_UP_FRAMES {
        return passive(writer, "writer").await;
    }
    Ok(done)
}

async fn passive(pool: &SqlitePool, on: &'static str) -> StoreResult<Checkpointed> {
    let started = std::time::Instant::now();
    let (_busy, wal_frames, copied_frames): (i64, i64, i64) =
        // `main.`: the readers attach the deliveries' file too, which its own writer checkpoints.
        sqlx::query_as("PRAGMA main.wal_checkpoint(PASSIVE)").fetch_one(pool).await?;
    tracing::debug!(on, wal_frames, copied_frames, ms = started.elapsed().as_millis() as u64, "WAL checkpoint");
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
            // The writer's backstop bounds the WAL meanwhile; nothing is lost.
            tracing::warn!(%error, "WAL checkpoint failed; will retry");
        }
    }
}
