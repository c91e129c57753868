//! Reports: listing pages, reading with history, status changes.

use super::{ServiceError, ServiceResult};
use svc_core::model::{Author, Report, ReportFilter, StatusChange};
use svc_core::{ids, status, time};
use svc_store::{Store, StoreError};

pub struct Page {
    pub items: Vec<Report>,
    /// The id to pass as `before` for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// One page, newest first. Fetches one extra row so the last page says so exactly.
pub async fn list_page(store: &dyn Store, mut filter: ReportFilter) -> ServiceResult<Page> {
    let limit = filter.limit.max(1);
    filter.limit = limit + 1;
    let mut items = store.list_reports(&filter).await?;
    let next_cursor = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items.last().map(|r| r.id.clone())
    } else {
        None
    };
    Ok(Page { items, next_cursor })
}

/// A report of one of `project_ids` by full id; `None` for a malformed, unknown or foreign id.
pub async fn get_in(store: &dyn Store, project_ids: &[String], id: &str) -> ServiceResult<Option<Report>> {
    if !ids::is_object_id(id) {
        return Ok(None);
    }
    Ok(store.get_report(id).await?.filter(|r| project_ids.contains(&r.project_id)))
}

/// Sets a report's status (any of the six values) and records who changed it.
pub async fn set_status(
    store: &dyn Store,
    report: &Report,
    new_status: &str,
    by: &Author,
) -> ServiceResult<StatusChange> {
    if !status::is_valid(new_status) {
        return Err(ServiceError::Invalid(format!("status must be one of {}", status::STATUSES.join(", "))));
    }
    match store.set_report_status(&report.id, new_status, by, time::now_ms()).await {
        Ok(change) => Ok(change),
        Err(StoreError::NotFound) => Err(ServiceError::NotFound("report not found".into())),
        Err(other) => Err(other.into()),
    }
}
