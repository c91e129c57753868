//! Feature flags the widget's `Svc.alpha(key)` asks about.

use axum::Json;
use axum::extract::State;
use serde_json::Value;
use svc_core::model::Flag;
use svc_core::{scope, time};

use super::extract::{ApiPath, JsonObject};
use super::views::{FlagList, FlagSet, FlagView};
use crate::auth::RestKey;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// Flag keys: 1 to 64 of letters, digits, `_`, `-`, `.`; starting with a letter or digit.
pub fn validate_flag_key(key: &str) -> Result<(), ApiError> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request("flag key must be 1 to 64 characters of letters, digits, _, - and ."))
    }
}

/// Every flag of the project.
#[utoipa::path(get, path = "/projects/{projectId}/flags", tag = "flags", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = FlagList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_flags(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<FlagList>> {
    let project = key.project(&state, &project_id, scope::PROJECT_READ).await?;
    let flags = state.store.list_flags(&project.id).await?;
    Ok(Json(FlagList { items: flags.iter().map(Into::into).collect() }))
}

/// Turns a flag on or off (creating it).
#[utoipa::path(put, path = "/projects/{projectId}/flags/{key}", tag = "flags", security(("bearer" = [])),
    params(("projectId" = String, Path), ("key" = String, Path, pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")),
    request_body = FlagSet,
    responses((status = 200, body = FlagView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn set_flag(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath((project_id, flag_key)): ApiPath<(String, String)>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<FlagView>> {
    let project = key.project(&state, &project_id, scope::PROJECT_WRITE).await?;
    validate_flag_key(&flag_key)?;
    let enabled = match body.get("enabled") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(ApiError::bad_request("enabled is required: true or false")),
    };
    let flag = Flag { project_id: project.id, key: flag_key, enabled, updated_at: time::now_ms() };
    state.store.set_flag(&flag).await?;
    Ok(Json((&flag).into()))
}
