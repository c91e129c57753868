//! What callers used, written off the request path: viewed marks (decisions: one row per report and
//! viewer with the last time) and the last use of each key.
//!
//! Requests record here and return; a task writes what gathered every [`FLUSH_INTERVAL`], one store
//! call per viewer and time and one per key. An agent that lists the same page again and again (or
//! several agents) costs one row write per report and interval instead of one per call: under 1,000
//! `list_reports` calls a second, each marking 50 reports, PostgreSQL was upserting 50,000 rows a
//! second in 1,000 transactions. A mark is in the database at most one interval after the call; on
//! shutdown the rest is written before the process exits. Tests call [`Usage::flush`] instead of
//! waiting for the interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use svc_store::DynStore;

const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

/// Viewed marks waiting to be written: viewer → report id → latest time seen.
type PendingViews = HashMap<String, HashMap<String, i64>>;

/// `last_used_at` of a key is written at most this often, so reads do not become writes.
const KEY_USE_RESOLUTION_MS: i64 = 60_000;

#[derive(Default)]
struct Pending {
    views: PendingViews,
    /// Key id → latest use.
    key_uses: HashMap<String, i64>,
}

pub struct Usage {
    store: DynStore,
    pending: Mutex<Pending>,
}

impl Usage {
    /// The recorder, with its writer task (which ends when the recorder is dropped). Must be called
    /// inside a Tokio runtime.
    pub fn start(store: DynStore) -> Arc<Self> {
        let usage = Arc::new(Usage { store, pending: Mutex::new(Pending::default()) });
        tokio::spawn(write_periodically(Arc::downgrade(&usage)));
        usage
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that `viewer` saw these reports at `at` (ms).
    pub fn record_views(&self, report_ids: impl IntoIterator<Item = String>, viewer: &str, at: i64) {
        let mut pending = self.pending();
        let seen = pending.views.entry(viewer.to_string()).or_default();
        for report_id in report_ids {
            let latest = seen.entry(report_id).or_insert(at);
            *latest = (*latest).max(at);
        }
    }

    /// Records that a key was used at `at` (ms), when its stored `last_used_at` is older than the
    /// resolution kept.
    pub fn record_key_use(&self, key: &svc_core::model::ApiKey, at: i64) {
        if key.last_used_at.is_none_or(|last| at - last > KEY_USE_RESOLUTION_MS) {
            let mut pending = self.pending();
            let latest = pending.key_uses.entry(key.id.clone()).or_insert(at);
            *latest = (*latest).max(at);
        }
    }

    /// Writes everything recorded so far.
    pub async fn flush(&self) {
        let Pending { views, key_uses } = std::mem::take(&mut *self.pending());
        for (key_id, at) in key_uses {
            if let Err(error) = self.store.touch_key(&key_id, at).await {
                tracing::warn!(%error, "could not record key use");
            }
        }
        for (viewer, seen) in views {
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

async fn write_periodically(usage: Weak<Usage>) {
    loop {
        tokio::time::sleep(FLUSH_INTERVAL).await;
        let Some(usage) = usage.upgrade() else { return };
        usage.flush().await;
    }
}

/// Who viewed a report, most recent first: people by name, agents by their `introduce` label (else
/// their key's name), with the time of their last view.
pub async fn viewers(
    svc: &crate::Service,
    report: &svc_core::model::Report,
) -> super::ServiceResult<Vec<(String, i64)>> {
    let store = svc.store();
    let mut viewers = store.list_viewers(&report.id).await?;
    viewers.sort_by(|a, b| b.1.cmp(&a.1));
    let mut named = Vec::with_capacity(viewers.len());
    for (viewer, at) in viewers {
        let name = match viewer.split_once(':') {
            Some(("user", id)) => store.get_user(id).await?.map(|user| user.label().to_string()),
            Some(("agent", id)) => store.get_key(id).await?.map(|key| key.agent_name.unwrap_or(key.name)),
            _ => None,
        };
        named.push((name.unwrap_or(viewer), at));
    }
    Ok(named)
}
