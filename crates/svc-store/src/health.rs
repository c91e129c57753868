//! Write health: whether the database currently accepts writes.
//!
//! Reads keep working on a full disk (or a PostgreSQL server out of space), so a read cannot tell
//! readiness. Each backend notes here the outcome of its writes: a write that failed because of the
//! storage (not a broken rule such as a duplicate key) marks writes as failing, and the next write
//! known to have stored something clears the mark. While the mark is set, `Store::ping` makes a
//! tiny probe write (one row of `write_probe`) and fails until that write succeeds, so `/readyz`
//! answers 503 exactly while writes fail and recovers by itself once the cause is gone.
//!
//! What feeds it: the group commits (reports, blobs, viewed marks), the write transactions (SQLite's
//! `begin_write` users and short-id indexer, PostgreSQL's report transactions) and the probe. A
//! single-statement admin write that fails (recording a key's last use, say) only fails its request.
//!
//! Each transition is logged once: an error when writes start failing, a note when they work again.
//! On the hot path a successful write costs one atomic load.

use std::sync::atomic::{AtomicI64, Ordering};

/// The probe write: an upsert that always changes its row, so it always needs to write a page.
pub(crate) const PROBE_WRITE: &str = "INSERT INTO write_probe (id, probes) VALUES (1, 1) \
     ON CONFLICT (id) DO UPDATE SET probes = write_probe.probes + 1";

#[derive(Debug)]
pub(crate) struct WriteHealth {
    backend: &'static str,
    /// Since when writes fail (ms since the Unix epoch); 0 while they work.
    failing_since: AtomicI64,
}

impl WriteHealth {
    pub(crate) fn new(backend: &'static str) -> Self {
        WriteHealth { backend, failing_since: AtomicI64::new(0) }
    }

    pub(crate) fn is_failing(&self) -> bool {
        self.failing_since.load(Ordering::Acquire) != 0
    }

    /// A write that stored something committed.
    pub(crate) fn succeeded(&self) {
        if self.is_failing() {
            let since = self.failing_since.swap(0, Ordering::AcqRel);
            if since != 0 {
                let failed_for_ms = svc_core::time::now_ms() - since;
                tracing::info!(backend = self.backend, failed_for_ms, "database writes succeed again");
            }
        }
    }

    /// A write failed because of the storage.
    pub(crate) fn failed(&self, error: &dyn std::fmt::Display) {
        let now = svc_core::time::now_ms().max(1);
        if self.failing_since.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            tracing::error!(
                backend = self.backend,
                %error,
                "database writes are failing; /readyz answers 503 until a write succeeds"
            );
        }
    }
}

/// Is this error a failure of the storage itself (full disk, I/O error, lost connection, ...)
/// rather than of the statement (a broken constraint, a missing row)? Only such failures mark
/// writes as failing.
pub(crate) fn is_storage_failure(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Database(database_error) => {
            let code = database_error.code();
            let code = code.as_deref().unwrap_or("");
            if database_error.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                // SQLite: the primary result code is the low byte of the extended one. BUSY,
                // LOCKED, NOMEM, READONLY, IOERR, CORRUPT, FULL, CANTOPEN, PROTOCOL, NOTADB.
                code.parse::<u32>()
                    .is_ok_and(|extended| matches!(extended & 0xff, 5 | 6 | 7 | 8 | 10 | 11 | 13 | 14 | 15 | 26))
            } else {
                // PostgreSQL SQLSTATE: read-only transaction, then the classes connection
                // exception, insufficient resources (disk full), program limit, operator
                // intervention (shutdown), system error, internal error.
                code == "25006" || ["08", "53", "54", "57", "58", "XX"].iter().any(|class| code.starts_with(class))
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        _ => false,
    }
}

/// [`is_storage_failure`] for a store error.
pub(crate) fn is_storage_failure_of(error: &crate::StoreError) -> bool {
    matches!(error, crate::StoreError::Database(error) if is_storage_failure(error))
}
