//! Background work that writes (search indexers) gives way to reports being filed: before each of
//! its transactions it waits, a little, while reports are coming in (SQLite: the group commit has
//! reports queued; PostgreSQL, whose group commit takes its queue at once: a change was announced
//! within the last moment). Under a sustained burst an indexer still writes a transaction's worth
//! twice a second and catches up after the burst; reports are acknowledged first.

use std::time::Duration;
use tokio::sync::mpsc;

/// How long a background writer waits, at most, for queued ingest before its next transaction.
pub const MAX_WAIT_FOR_INGEST: Duration = Duration::from_millis(500);

/// Waits while `queue` (a group commit's) holds work, for at most [`MAX_WAIT_FOR_INGEST`].
pub async fn make_way_for_ingest<T>(queue: &mpsc::WeakSender<T>) {
    let waited = std::time::Instant::now();
    while waited.elapsed() < MAX_WAIT_FOR_INGEST {
        let queued = match queue.upgrade() {
            Some(sender) => sender.max_capacity() - sender.capacity(),
            None => return,
        };
        if queued == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// How recent the latest change must be for writing to count as busy.
const BUSY_WITHIN_MS: i64 = 100;

/// Waits while a change was announced within the last [`BUSY_WITHIN_MS`] (see
/// [`crate::changes::ChangeFeed::last_change`]), for at most [`MAX_WAIT_FOR_INGEST`].
pub async fn make_way_for_changes(last_change_ms: &std::sync::atomic::AtomicI64) {
    let waited = std::time::Instant::now();
    while waited.elapsed() < MAX_WAIT_FOR_INGEST {
        let last = last_change_ms.load(std::sync::atomic::Ordering::Relaxed);
        if svc_core::time::now_ms() - last >= BUSY_WITHIN_MS {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
