//! Feature flags the widget's `Svc.alpha(key)` asks about.

use axum::Json;
use axum::extract::State;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, JsonBody};
use super::views::{FlagList, FlagSet, FlagView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::flags;

/// Every flag of the project.
#[utoipa::path(get, path = "/projects/{projectId}/flags", tag = "flags", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = FlagList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_flags(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<FlagList>> {
    let project = key.project(&project_id, Operation::ReadProject)?;
    let flags = flags::list(&state.service, &project.id).await?;
    Ok(Json(FlagList { items: flags.iter().map(Into::into).collect() }))
}

/// Turns a flag on or off (creating it).
#[utoipa::path(put, path = "/projects/{projectId}/flags/{key}", tag = "flags", security(("bearer" = [])),
    params(("projectId" = String, Path), ("key" = String, Path, pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")),
    request_body = FlagSet,
    responses((status = 200, body = FlagView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn set_flag(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, flag_key)): ApiPath<(String, String)>,
    body: JsonBody,
) -> ApiResult<Json<FlagView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    // The key first: a bad key is named whatever the body says.
    svc_core::channel::validate_flag_key(&flag_key)?;
    let FlagSet { enabled } = body.parse()?;
    let flag = flags::set(&state.service, &project, &flag_key, enabled, &key.0.author()).await?;
    Ok(Json((&flag).into()))
}
