//! Each route's query parameters as one typed struct: read by [`super::extract::ApiQuery`] and
//! described in the OpenAPI document from the same fields (`IntoParams`), so the two cannot
//! disagree. Checks a type cannot express (a cursor's shape, a limit's floor) are here too.

use serde::Deserialize;
use svc_core::model::{AssigneeFilter, ReportFilter};
use utoipa::IntoParams;

use crate::error::ApiError;

/// Reports per page of `GET .../feedback` unless `limit` says otherwise, and at most.
pub const FEEDBACK_LIMIT: (u32, u32) = (20, 100);
/// Events per page of `GET .../events` unless `limit` says otherwise, and at most.
pub const EVENTS_LIMIT: (u32, u32) = (100, 500);

/// `GET /projects/{projectId}/feedback`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FeedbackQuery {
    /// 1 to 100 (larger is clamped), default 20
    #[param(minimum = 1, nullable = false)]
    pub limit: Option<i64>,
    #[param(nullable = false)]
    pub channel_key: Option<String>,
    #[param(nullable = false)]
    pub status: Option<String>,
    /// reports of this room
    #[param(nullable = false)]
    pub artifact_id: Option<String>,
    /// a user id: reports assigned to that user; `none`: unassigned reports
    #[param(nullable = false)]
    pub assignee: Option<String>,
    /// reports holding this label (any case)
    #[param(nullable = false)]
    pub label: Option<String>,
    /// reports whose author id (the reporter's userId) is this
    #[param(nullable = false)]
    pub reporter: Option<String>,
    /// full-text search: words (all must appear), "quoted phrases", -excluded words, `or`; blank: no search
    #[param(max_length = 500, nullable = false)]
    pub search: Option<String>,
    /// report id: return reports older than it (pass nextCursor)
    #[param(pattern = "^[0-9a-f]{24}$", nullable = false)]
    pub before: Option<String>,
}

impl FeedbackQuery {
    /// The listing these parameters ask for in `project_id`.
    pub fn filter(self, project_id: String) -> Result<ReportFilter, ApiError> {
        let (default, max) = FEEDBACK_LIMIT;
        let limit = limit(self.limit, default, max)?;
        if self.before.as_deref().is_some_and(|cursor| !svc_core::ids::is_object_id(cursor)) {
            return Err(ApiError::bad_request("before must be a report id (a nextCursor value)"));
        }
        let search = match self.search {
            Some(text) => svc_core::search::normalize(&text)?,
            None => None,
        };
        Ok(ReportFilter {
            project_ids: vec![project_id],
            status: self.status,
            statuses: Vec::new(),
            drafts_waiting: false,
            channel_key: self.channel_key,
            artifact_id: self.artifact_id,
            assignee: self.assignee.as_deref().map(AssigneeFilter::parse),
            label: self.label,
            reporter: self.reporter,
            verified_only: false,
            search,
            before: self.before,
            limit,
        })
    }
}

/// `GET /projects/{projectId}/rooms`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RoomsQuery {
    /// true includes archived rooms
    #[serde(default)]
    #[param(required = false)]
    pub archived: bool,
}

/// `GET /projects/{projectId}/channels`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChannelsQuery {
    /// true includes archived channels
    #[serde(default)]
    #[param(required = false)]
    pub archived: bool,
}

/// `GET /projects/{projectId}/events`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// an event id: return the events after it, oldest first (pass nextAfter; absent or 0: from the oldest event kept)
    #[param(minimum = 0, nullable = false)]
    pub after: Option<i64>,
    /// 1 to 500 (larger is clamped), default 100
    #[param(minimum = 1, nullable = false)]
    pub limit: Option<i64>,
}

impl EventsQuery {
    /// The cursor and the page size, checked.
    pub fn page(&self) -> Result<(i64, u32), ApiError> {
        let after = self.after.unwrap_or(0);
        if after < 0 {
            return Err(ApiError::bad_request("after must be an event id (a nextAfter value), 0 or more"));
        }
        let (default, max) = EVENTS_LIMIT;
        Ok((after, limit(self.limit, default, max)?))
    }
}

/// A page size: `default` when absent, at least 1, above `max` cut to `max`.
fn limit(given: Option<i64>, default: u32, max: u32) -> Result<u32, ApiError> {
    match given {
        None => Ok(default),
        Some(n) if n >= 1 => Ok(n.min(i64::from(max)) as u32),
        Some(n) => Err(ApiError::BadRequest(format!("limit must be a positive integer, not {n}"))),
    }
}

/// Deliveries per page: default and most.
pub const DELIVERIES_LIMIT: (u32, u32) = (50, 100);

/// `GET /projects/{projectId}/webhooks/{webhookId}/deliveries`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// a delivery id: return the deliveries made before it, newest first (pass nextBefore)
    #[param(nullable = false, pattern = "^[0-9a-f]{24}$")]
    pub before: Option<String>,
    /// 1 to 100 (larger is clamped), default 50
    #[param(minimum = 1, nullable = false)]
    pub limit: Option<i64>,
}

impl DeliveriesQuery {
    /// The cursor and the page size, checked.
    pub fn page(&self) -> Result<(Option<&str>, u32), ApiError> {
        let (default, max) = DELIVERIES_LIMIT;
        if let Some(before) = &self.before
            && !svc_core::ids::is_object_id(before)
        {
            return Err(ApiError::bad_request("before must be a delivery id (a nextBefore value)"));
        }
        Ok((self.before.as_deref(), limit(self.limit, default, max)?))
    }
}
