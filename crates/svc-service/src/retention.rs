//! Retention: in each project with a retention period (`retention_days`, set in the dashboard or by
//! REST PATCH `retentionDays`), housekeeping deletes the reports older than that, with everything
//! attached to them and their blobs, and records `reports.expired` with how many went.

use crate::Service;
use serde_json::json;
use svc_blob::BlobStore;
use svc_core::audit::action;
use svc_core::model::Project;

use super::{ServiceResult, audit, blobs};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// Reports per transaction: a project with a million expired reports is deleted in many short
/// transactions, so the writer (SQLite's single one) is never held long.
const BATCH: u32 = 500;

/// One pass over every project with a retention period; returns how many reports went. A project
/// that fails is logged and the others still run.
pub async fn run_once(svc: &Service, blobs: &BlobStore, now: i64) -> ServiceResult<u64> {
    let store = svc.store();
    let mut total = 0;
    for project in store.list_projects_with_retention().await? {
        match expire(svc, blobs, &project, now).await {
            Ok(count) => total += count,
            Err(error) => tracing::warn!(%error, project_id = %project.id, "could not delete expired reports"),
        }
    }
    Ok(total)
}

/// Deletes the project's reports older than its retention period.
async fn expire(svc: &Service, blob_store: &BlobStore, project: &Project, now: i64) -> ServiceResult<u64> {
    let store = svc.store();
    let Some(days) = project.retention_days else { return Ok(0) };
    let cutoff = now.saturating_sub(days.saturating_mul(DAY_MS));
    let mut count = 0;
    let outcome = loop {
        match store.delete_reports(&project.id, Some(cutoff), BATCH).await {
            Ok(batch) => {
                count += batch.reports;
                blobs::delete_objects(svc, blob_store, &batch.blob_ids).await;
                if batch.reports < u64::from(BATCH) {
                    break Ok(());
                }
            }
            Err(error) => break Err(error),
        }
    };
    // What went is recorded even when a later batch failed.
    if count > 0 {
        let detail = json!({"count": count, "days": days});
        audit::record(svc, project, &audit::housekeeping(), action::REPORTS_EXPIRED, detail).await;
        store.changes().announce(&project.id);
    }
    outcome?;
    Ok(count)
}
