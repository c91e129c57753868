//! API keys: mint and revoke.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;
use svc_core::model::KeyOrigin;
use svc_core::{ids, scope, time};

use super::extract::{ApiPath, JsonObject};
use super::views::{KeyCreate, MintedKeyView, RevokedKeyView};
use crate::auth::RestKey;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::service::keys::{self, MintRequest};
use crate::state::AppState;

/// Mints a key with a subset of the project's scopes (`*` and `apikey:write` cannot be minted).
/// The plaintext `key` is in this response only.
#[utoipa::path(post, path = "/projects/{projectId}/keys", tag = "keys", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = KeyCreate,
    responses((status = 201, body = MintedKeyView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn mint_key(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath(project_id): ApiPath<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<(StatusCode, Json<MintedKeyView>)> {
    let project = key.project(&state, &project_id, scope::APIKEY_WRITE).await?;
    let name = match body.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => {
            return Err(ApiError::bad_request("name is required (1 to 100 characters)"));
        }
    };
    let scopes: Vec<String> = match body.get("scopes") {
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(|s| s.as_str().map(String::from)).collect()
        }
        _ => {
            return Err(ApiError::bad_request("scopes is required: an array of scope names"));
        }
    };
    scope::validate_mintable(&scopes)?;
    let ttl_secs = match body.get("expiresInSeconds") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            // 60.0 is an integer to JSON Schema, so to the OpenAPI document too.
            value
                .as_i64()
                .or_else(|| value.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 1e15).map(|n| n as i64))
                .ok_or_else(|| ApiError::bad_request("expiresInSeconds must be an integer between 60 and 31536000"))?,
        ),
    };
    let (minted, secret) = keys::mint(
        state.store.as_ref(),
        MintRequest {
            org_id: project.org_id,
            project_id: Some(project.id),
            name,
            scopes,
            ttl_secs,
            origin: KeyOrigin::Api,
        },
    )
    .await?;
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
    key: RestKey,
    ApiPath((project_id, key_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<RevokedKeyView>> {
    let project = key.project(&state, &project_id, scope::APIKEY_WRITE).await?;
    let not_found = || ApiError::not_found("no active key with that id in this project");
    if !ids::is_object_id(&key_id) {
        return Err(not_found());
    }
    // Only an active key can be revoked: an expired one is already unusable (spec: 404 when there
    // is no active key with that id).
    let now = time::now_ms();
    match state.store.get_key(&key_id).await? {
        Some(found) if found.project_id.as_deref() == Some(project.id.as_str()) && found.is_active(now) => {}
        _ => return Err(not_found()),
    }
    let revoked_at = state.store.revoke_key(&project.id, &key_id, now).await?.ok_or_else(not_found)?;
    Ok(Json(RevokedKeyView { id: key_id, revoked_at: time::iso(revoked_at) }))
}
