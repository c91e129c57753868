//! Whether this instance can take writes: the database and the blob store each answer, and, after a
//! write failed because of the storage, accept a probe write again (see README "When storage fails").

use crate::Service;
use std::fmt::Display;
use std::sync::Mutex;
use svc_blob::{BlobError, BlobStore};
use svc_store::StoreError;

/// The database's and the blob store's answers, checked at the same time.
pub async fn check(svc: &Service, blobs: &BlobStore) -> (Result<(), StoreError>, Result<(), BlobError>) {
    let store = svc.store();
    tokio::join!(store.ping(), blobs.ping())
}

/// What the last readiness check (`/readyz`) found, so that only changes are logged (a probe every few seconds
/// would otherwise repeat the same line).
#[derive(Debug)]
pub struct Readiness {
    /// (database ready, blob store ready); both at first, so a healthy start logs nothing.
    last: Mutex<(bool, bool)>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness { last: Mutex::new((true, true)) }
    }
}

impl Readiness {
    /// [`check`], logging a change of readiness since the last check.
    pub async fn check(&self, svc: &Service, blobs: &BlobStore) -> (Result<(), StoreError>, Result<(), BlobError>) {
        let (database, blob_store) = check(svc, blobs).await;
        self.observe(&database, &blob_store);
        (database, blob_store)
    }

    /// Logs a change of readiness, with the reasons when not ready.
    fn observe<D: Display, B: Display>(&self, database: &Result<(), D>, blobs: &Result<(), B>) {
        let now = (database.is_ok(), blobs.is_ok());
        let before = std::mem::replace(&mut *self.last.lock().unwrap_or_else(|e| e.into_inner()), now);
        if now == before {
            return;
        }
        if now == (true, true) {
            tracing::info!("ready again: the database and the blob store accept writes; /readyz answers 200");
        } else {
            tracing::warn!(
                database = %reason(database),
                blob_store = %reason(blobs),
                "not ready: /readyz answers 503 until the database and the blob store accept writes again"
            );
        }
    }
}

fn reason<E: Display>(outcome: &Result<(), E>) -> String {
    match outcome {
        Ok(()) => "ok".to_string(),
        Err(error) => error.to_string(),
    }
}
