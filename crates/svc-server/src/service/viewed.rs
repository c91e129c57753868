//! Viewed marks (decisions: one row per report and viewer with the last time, written off the
//! request path).
//!
//! Tool calls record their marks here and return; a task writes what gathered every
//! [`FLUSH_INTERVAL`], one store call per viewer and time. An agent that lists the same page again
//! and again (or several agents) costs one row write per report and interval instead of one per
//! call: under 1,000 `list_reports` calls a second, each marking 50 reports, PostgreSQL was
//! upserting 50,000 rows a second in 1,000 transactions. A mark is in the database at most one
//! interval after the call; on shutdown the rest is written before the process exits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use svc_store::DynStore;

const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

/// Marks waiting to be written: viewer → report id → latest time seen.
type Pending = HashMap<String, HashMap<String, i64>>;

pub struct ViewedMarks {
    store: DynStore,
    pending: Mutex<Pending>,
}

impl ViewedMarks {
    /// The recorder, with its writer task (which ends when the recorder is dropped). Must be called
    /// inside a Tokio runtime.
    pub fn start(store: DynStore) -> Arc<Self> {
        let marks = Arc::new(ViewedMarks { store, pending: Mutex::new(HashMap::new()) });
        tokio::spawn(write_periodically(Arc::downgrade(&marks)));
        marks
    }

    /// Records that `viewer` saw these reports at `at` (ms).
    pub fn record(&self, report_ids: impl IntoIterator<Item = String>, viewer: &str, at: i64) {
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let seen = pending.entry(viewer.to_string()).or_default();
        for report_id in report_ids {
            let latest = seen.entry(report_id).or_insert(at);
            *latest = (*latest).max(at);
        }
    }

    /// Writes every recorded mark.
    pub async fn flush(&self) {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        for (viewer, seen) in pending {
            // The store writes one time per call: group the reports by their time.
            let mut by_time: HashMap<i64, Vec<String>> = HashMap::new();
            for (report_id, at) in seen {
                by_time.entry(at).or_default().push(report_id);
            }
            for (at, report_ids) in by_time {
                if let Err(error) = self.store.mark_viewed(&report_ids, &viewer, at).await {
                    tracing::warn!(%error, "could not record viewed reports");
                }
            }
        }
    }
}

async fn write_periodically(marks: Weak<ViewedMarks>) {
    loop {
        tokio::time::sleep(FLUSH_INTERVAL).await;
        let Some(marks) = marks.upgrade() else { return };
        marks.flush().await;
    }
}
