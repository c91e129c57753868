//! API keys: mint and revoke.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use svc_core::model::KeyOrigin;
use svc_core::time;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, JsonBody};
use super::views::{KeyCreate, MintedKeyView, RevokedKeyView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::keys;

/// Mints a key with a subset of the project's scopes (`*` and `apikey:write` cannot be minted).
/// The plaintext `key` is in this response only.
#[utoipa::path(post, path = "/projects/{projectId}/keys", tag = "keys", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = KeyCreate,
    responses((status = 201, body = MintedKeyView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn mint_key(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<(StatusCode, Json<MintedKeyView>)> {
    let project = key.project(&project_id, Operation::ManageKeys)?;
    let new = body.parse::<KeyCreate>()?.try_into()?;
    let (minted, secret) =
        keys::mint_for_project(&state.service, &project, new, KeyOrigin::Api, &key.0.author()).await?;
    Ok((
        StatusCode::CREATED,
        Json(MintedKeyView {
            id: minted.id,
            key: secret.expose().to_string(),
            name: minted.name,
            scopes: minted.scopes,
            expires_at: time::iso_opt(minted.expires_at),
        }),
    ))
}

/// Revokes an active key of the project (a setup token may revoke itself). 404 when there is no
/// active key with that id.
#[utoipa::path(delete, path = "/projects/{projectId}/keys/{keyId}", tag = "keys", security(("bearer" = [])),
    params(("projectId" = String, Path), ("keyId" = String, Path)),
    responses((status = 200, body = RevokedKeyView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn revoke_key(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, key_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<RevokedKeyView>> {
    let project = key.project(&project_id, Operation::ManageKeys)?;
    let revoked_at = keys::revoke(&state.service, &project, &key_id, &key.0.author()).await?;
    Ok(Json(RevokedKeyView { id: key_id, revoked_at: time::iso(revoked_at) }))
}
