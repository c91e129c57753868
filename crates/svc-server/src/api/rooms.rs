//! Rooms: list (stored merged with implicit), create/resume (upsert), update.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, ApiQuery, JsonBody};
use super::query::RoomsQuery;
use super::views::{RoomCreate, RoomList, RoomPatch, RoomView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::rooms;

/// Stored rooms and rooms implied by reports' `context.artifactId`, most recent activity first.
/// Archived rooms only with `?archived=true`.
#[utoipa::path(get, path = "/projects/{projectId}/rooms", tag = "rooms", security(("bearer" = [])),
    params(("projectId" = String, Path), RoomsQuery),
    responses((status = 200, body = RoomList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_rooms(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<RoomsQuery>,
) -> ApiResult<Json<RoomList>> {
    let project = key.project(&project_id, Operation::ReadReports)?;
    let rooms = rooms::list(&state.service, &project.id, query.archived).await?;
    Ok(Json(RoomList { items: rooms.iter().map(Into::into).collect() }))
}

/// Creates the room for an artifact, or resumes it: 201 when created, 200 when it already existed
/// (stored or implicit), updating only the fields given.
#[utoipa::path(post, path = "/projects/{projectId}/rooms", tag = "rooms", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = RoomCreate,
    responses((status = 201, body = RoomView), (status = 200, body = RoomView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_room(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<(StatusCode, Json<RoomView>)> {
    let project = key.project(&project_id, Operation::ManageRooms)?;
    let room = body.parse::<RoomCreate>()?.try_into()?;
    let outcome = rooms::upsert(&state.service, &key.0, &project, room).await?;
    let status = if outcome.created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(RoomView::new(&outcome.room, Some(outcome.created)))))
}

/// Updates any of `title`, `meta` (replaced whole), `archived`. 404 when no room exists at all.
#[utoipa::path(patch, path = "/projects/{projectId}/rooms/{artifactId}", tag = "rooms", security(("bearer" = [])),
    params(("projectId" = String, Path), ("artifactId" = String, Path, min_length = 1, max_length = 200, description = "percent-encoded")),
    request_body = RoomPatch,
    responses((status = 200, body = RoomView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn patch_room(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, artifact_id)): ApiPath<(String, String)>,
    body: JsonBody,
) -> ApiResult<Json<RoomView>> {
    let project = key.project(&project_id, Operation::ManageRooms)?;
    let changes = body.parse::<RoomPatch>()?.try_into()?;
    let room = rooms::patch(&state.service, &key.0, &project, &artifact_id, changes).await?;
    Ok(Json(RoomView::new(&room, None)))
}
