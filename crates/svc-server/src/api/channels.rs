//! Channels: list, create, update; and channel hints.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;
use svc_core::model::{HINT_TTL_MS, Hint, HintWeight};
use svc_core::{ids, scope, time};

use super::extract::{ApiPath, JsonObject, QueryMap};
use super::views::{ChannelCreate, ChannelList, ChannelPatch, ChannelView, HintCreate, OkView};
use crate::auth::RestKey;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::service::channels;
use crate::state::AppState;

/// Channels oldest first; archived ones only with `?archived=true`.
#[utoipa::path(get, path = "/projects/{projectId}/channels", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path), ("archived" = Option<bool>, Query, description = "true includes archived channels")),
    responses((status = 200, body = ChannelList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_channels(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath(project_id): ApiPath<String>,
    query: QueryMap,
) -> ApiResult<Json<ChannelList>> {
    let project = key.project(&state, &project_id, scope::CHANNEL_READ).await?;
    let channels = state.store.list_channels(&project.id, query.flag("archived")?).await?;
    Ok(Json(ChannelList { items: channels.iter().map(Into::into).collect() }))
}

/// Adds a channel. 409 when the key is taken in this project.
#[utoipa::path(post, path = "/projects/{projectId}/channels", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = ChannelCreate,
    responses((status = 201, body = ChannelView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_channel(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath(project_id): ApiPath<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<(StatusCode, Json<ChannelView>)> {
    let project = key.project(&state, &project_id, scope::CHANNEL_WRITE).await?;
    let channel = channels::create(state.store.as_ref(), &project.id, &body.into()).await?;
    Ok((StatusCode::CREATED, Json((&channel).into())))
}

/// Changes any of `name`, `color`, `mascot`, `baseWeight`, `matchers`, `archived`.
#[utoipa::path(patch, path = "/projects/{projectId}/channels/{channelKey}", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path), ("channelKey" = String, Path)),
    request_body = ChannelPatch,
    responses((status = 200, body = ChannelView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn patch_channel(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath((project_id, channel_key)): ApiPath<(String, String)>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<ChannelView>> {
    let project = key.project(&state, &project_id, scope::CHANNEL_WRITE).await?;
    let channel = channels::update(state.store.as_ref(), &project.id, &channel_key, &body.into()).await?;
    Ok(Json((&channel).into()))
}

/// Nudges the widget's channel choice for five minutes: `weight` `max` wins, `suggest` applies when
/// nothing else scores, a number adds to the score. With `userId` it applies to that user only.
#[utoipa::path(post, path = "/projects/{projectId}/hints", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = HintCreate,
    responses((status = 200, body = OkView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_hint(
    State(state): State<AppState>,
    key: RestKey,
    ApiPath(project_id): ApiPath<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Json<OkView>> {
    let project = key.project(&state, &project_id, scope::CHANNEL_WRITE).await?;
    let channel_key = match body.get("channelKey") {
        Some(Value::String(k)) => k.clone(),
        _ => return Err(ApiError::bad_request("channelKey is required")),
    };
    match state.store.get_channel(&project.id, &channel_key).await? {
        Some(channel) if !channel.archived => {}
        _ => {
            return Err(ApiError::bad_request(format!("channelKey: no active channel {channel_key}")));
        }
    }
    let weight = body
        .get("weight")
        .and_then(HintWeight::from_json)
        .ok_or_else(|| ApiError::bad_request("weight is required: \"suggest\", \"max\" or a number"))?;
    let user_id = match body.get("userId") {
        None | Some(Value::Null) => None,
        Some(Value::String(u)) if !u.is_empty() && u.chars().count() <= 200 => Some(u.clone()),
        Some(_) => {
            return Err(ApiError::bad_request("userId must be a string of 1 to 200 characters"));
        }
    };
    let now = time::now_ms();
    let hint = Hint {
        id: ids::new_id_at(now),
        project_id: project.id,
        channel_key,
        weight,
        user_id,
        created_at: now,
        expires_at: now + HINT_TTL_MS,
    };
    state.store.create_hint(&hint).await?;
    Ok(Json(OkView { ok: true }))
}
