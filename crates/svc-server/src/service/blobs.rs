//! Blob housekeeping.

use svc_blob::BlobStore;
use svc_store::Store;

/// Unbound blobs older than this are deleted.
pub const UNBOUND_BLOB_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// Deletes unbound blobs older than 24 hours: the row first (only while still unbound, so a report
/// binding it at this moment wins), then the bytes. Returns how many went.
pub async fn delete_stale_unbound(store: &dyn Store, blobs: &BlobStore, now: i64) -> anyhow::Result<u64> {
    let mut deleted = 0;
    loop {
        let batch = store.list_unbound_blobs(now - UNBOUND_BLOB_TTL_MS, 500).await?;
        if batch.is_empty() {
            return Ok(deleted);
        }
        let mut progressed = false;
        for blob in batch {
            if store.delete_unbound_blob(&blob.id).await? {
                blobs.delete(&blob.id).await?;
                deleted += 1;
                progressed = true;
            }
        }
        if !progressed {
            return Ok(deleted);
        }
    }
}

/// A blob of the project by id; `None` for a malformed, unknown or foreign id.
pub async fn get_in_project(
    store: &dyn Store,
    project_id: &str,
    blob_id: &str,
) -> super::ServiceResult<Option<svc_core::model::Blob>> {
    get_in_projects(store, &[project_id.to_string()], blob_id).await
}

/// A blob of any of `project_ids` by id; `None` for a malformed, unknown or foreign id.
pub async fn get_in_projects(
    store: &dyn Store,
    project_ids: &[String],
    blob_id: &str,
) -> super::ServiceResult<Option<svc_core::model::Blob>> {
    if !svc_core::ids::is_object_id(blob_id) {
        return Ok(None);
    }
    Ok(store.get_blob(blob_id).await?.filter(|b| project_ids.contains(&b.project_id)))
}

/// Records an uploaded blob (its bytes are already in the blob store), unbound until a report
/// references it.
pub async fn record_upload(store: &dyn Store, blob: &svc_core::model::Blob) -> super::ServiceResult<()> {
    Ok(store.create_blob(blob).await?)
}
