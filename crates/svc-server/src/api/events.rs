//! `GET .../events`: the project's event feed with a cursor, for scripts that follow what happens
//! (see `svc_core::event`).

use axum::Json;
use axum::extract::State;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, ApiQuery};
use super::query::EventsQuery;
use super::views::{EventPage, EventView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::events;

/// What happened in the project, oldest first, after the cursor `after`: reports filed, status,
/// assignee and label changes, comments and drafts published, reporters' confirmations, rooms
/// created, reports deleted by retention. Ids follow commit order, so a script that passes back
/// `nextAfter` sees every event once. Events are kept 30 days.
#[utoipa::path(get, path = "/projects/{projectId}/events", tag = "events", security(("bearer" = [])),
    params(("projectId" = String, Path), EventsQuery),
    responses((status = 200, body = EventPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_events(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Json<EventPage>> {
    let project = key.project(&project_id, Operation::ReadReports)?;
    let (after, limit) = query.page()?;
    let page = events::page(&state.service, &key.0, &project, after, limit).await?;
    let next_after = page.last().map_or(after, |event| event.id);
    Ok(Json(EventPage { items: page.iter().map(EventView::from).collect(), next_after }))
}
