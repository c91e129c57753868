//! Whether this instance can take writes: the database and the blob store each answer, and, after a
//! write failed because of the storage, accept a probe write again (see README "When storage fails").

use svc_blob::{BlobError, BlobStore};
use svc_store::{Store, StoreError};

/// The database's and the blob store's answers, checked at the same time.
pub async fn check(store: &dyn Store, blobs: &BlobStore) -> (Result<(), StoreError>, Result<(), BlobError>) {
    tokio::join!(store.ping(), blobs.ping())
}
