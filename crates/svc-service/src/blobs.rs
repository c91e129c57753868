//! Blob housekeeping.

use crate::Service;
use svc_blob::BlobStore;

/// Unbound blobs older than this are deleted.
pub const UNBOUND_BLOB_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// Deletes unbound blobs older than 24 hours: the row first (only while still unbound, so a report
/// binding it at this moment wins), then the bytes. Returns how many went.
pub async fn delete_stale_unbound(svc: &Service, blobs: &BlobStore, now: i64) -> anyhow::Result<u64> {
    let store = svc.store();
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
    svc: &Service,
    project_id: &str,
    blob_id: &str,
) -> super::ServiceResult<Option<svc_core::model::Blob>> {
    get_in_projects(svc, &[project_id.to_string()], blob_id).await
}

/// A blob of any of `project_ids` by id; `None` for a malformed, unknown or foreign id.
pub async fn get_in_projects(
    svc: &Service,
    project_ids: &[String],
    blob_id: &str,
) -> super::ServiceResult<Option<svc_core::model::Blob>> {
    let store = svc.store();
    if !svc_core::ids::is_object_id(blob_id) {
        return Ok(None);
    }
    Ok(store.get_blob(blob_id).await?.filter(|b| project_ids.contains(&b.project_id)))
}

/// What [`read_reachable`] found.
pub enum BlobRead {
    /// The blob and its bytes.
    Found(svc_core::model::Blob, bytes::Bytes),
    /// The blob is in reach but larger than the caller's limit; its bytes were not read.
    TooLarge(svc_core::model::Blob),
    /// Malformed id, unknown blob, a blob of a project out of reach, or one no report holds.
    NotFound,
}

/// A blob of a report the caller reaches (one of `project_ids`), with its bytes when it is at
/// most `max_bytes` long. A blob belongs to the report that bound it: an unbound upload, or one
/// whose report is gone or in another project, is not found.
pub async fn read_reachable(
    svc: &Service,
    blobs: &BlobStore,
    project_ids: &[String],
    blob_id: &str,
    max_bytes: i64,
) -> anyhow::Result<BlobRead> {
    let Some(blob) = get_in_projects(svc, project_ids, blob_id).await? else { return Ok(BlobRead::NotFound) };
    let Some(report_id) = blob.report_id.as_deref() else { return Ok(BlobRead::NotFound) };
    if super::reports::get_in(svc, project_ids, report_id).await?.is_none() {
        return Ok(BlobRead::NotFound);
    }
    if blob.bytes > max_bytes {
        return Ok(BlobRead::TooLarge(blob));
    }
    Ok(match blobs.read_all(&blob.id).await? {
        Some(bytes) => BlobRead::Found(blob, bytes),
        None => BlobRead::NotFound,
    })
}

/// Records an uploaded blob (its bytes are already in the blob svc), unbound until a report
/// references it.
pub async fn record_upload(svc: &Service, blob: &svc_core::model::Blob) -> super::ServiceResult<()> {
    let store = svc.store();
    Ok(store.create_blob(blob).await?)
}

/// Deletes blob objects whose rows are gone (queued by the store with the rows' deletion), then
/// takes them off the queue. An object the blob store fails to delete stays queued: housekeeping
/// tries again ([`delete_queued`]). Failures are logged, never returned: the rows are gone already.
pub async fn delete_objects(svc: &Service, blobs: &BlobStore, blob_ids: &[String]) -> u64 {
    let store = svc.store();
    let mut deleted = Vec::with_capacity(blob_ids.len());
    let mut failed = 0usize;
    for blob_id in blob_ids {
        match blobs.delete(blob_id).await {
            Ok(()) => deleted.push(blob_id.clone()),
            // Never a stored id: nothing to delete, nothing to retry.
            Err(svc_blob::BlobError::InvalidId) => deleted.push(blob_id.clone()),
            Err(error) => {
                if failed == 0 {
                    tracing::warn!(%error, blob_id, "could not delete a blob object; housekeeping will try again");
                }
                failed += 1;
            }
        }
    }
    if failed > 1 {
        tracing::warn!(failed, "could not delete blob objects; housekeeping will try again");
    }
    if let Err(error) = store.forget_blob_deletions(&deleted).await {
        // Deleting them again later is harmless.
        tracing::warn!(%error, "could not take deleted blobs off the deletion queue");
    }
    deleted.len() as u64
}

/// Deletes the blob objects still queued for deletion (an earlier attempt failed, or the process
/// stopped in between). Returns how many went.
pub async fn delete_queued(svc: &Service, blobs: &BlobStore) -> anyhow::Result<u64> {
    let store = svc.store();
    const BATCH: u32 = 500;
    let mut total = 0;
    loop {
        let queued = store.pending_blob_deletions(BATCH).await?;
        if queued.is_empty() {
            return Ok(total);
        }
        let deleted = delete_objects(svc, blobs, &queued).await;
        total += deleted;
        // Some failed (the blob store is unreachable): the rest waits for the next pass.
        if deleted < queued.len() as u64 || queued.len() < BATCH as usize {
            return Ok(total);
        }
    }
}
