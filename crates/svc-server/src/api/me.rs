//! `GET /api/v1/me`: who this key is (works with any scope).

use axum::Json;

use super::extract::ApiCaller;
use super::views::MeView;
use crate::error::{ApiError, ApiResult, ErrorBody};

/// The calling key: its id, project, name and scopes. Step 1 of the agent self-setup flow.
#[utoipa::path(get, path = "/me", tag = "keys", security(("bearer" = [])),
    responses((status = 200, body = MeView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn me(key: ApiCaller) -> ApiResult<Json<MeView>> {
    let project = key.own_project().ok_or_else(|| ApiError::not_found("the key's project no longer exists"))?.clone();
    let key = key.0.key().expect("REST callers are keys").clone();
    Ok(Json(MeView {
        key_id: key.id,
        project_id: project.id,
        name: key.name,
        project_key: project.project_key,
        scopes: key.scopes,
        project_name: project.name,
        expires_at: svc_core::time::iso_opt(key.expires_at),
    }))
}
