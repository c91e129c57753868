//! `GET` and `PATCH /api/v1/projects/:projectId`.

use axum::Json;
use axum::extract::State;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, JsonBody};
use super::views::{ProjectPatch, ProjectView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::projects;

/// The project's settings.
#[utoipa::path(get, path = "/projects/{projectId}", tag = "projects", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "Project id from GET /me (not the public key)")),
    responses((status = 200, body = ProjectView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_project(key: ApiCaller, ApiPath(project_id): ApiPath<String>) -> ApiResult<Json<ProjectView>> {
    let project = key.project(&project_id, Operation::ReadProject)?;
    Ok(Json((&project).into()))
}

/// Changes any of `name`, `urlPatterns`, `defaultChannelKey` (an existing non-archived channel),
/// `widgetConfig` (replaced whole), `allowedOrigins` and `retentionDays` (null: keep reports).
#[utoipa::path(patch, path = "/projects/{projectId}", tag = "projects", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = ProjectPatch,
    responses((status = 200, body = ProjectView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub async fn patch_project(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<Json<ProjectView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let changes = body.parse::<ProjectPatch>()?.try_into()?;
    let project = projects::update_project(&state.service, project, changes, &key.0.author()).await?;
    Ok(Json((&project).into()))
}
