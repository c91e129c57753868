//! Channels: list, create, update; and channel hints.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, ApiQuery, JsonBody};
use super::query::ChannelsQuery;
use super::views::{ChannelCreate, ChannelList, ChannelPatch, ChannelView, HintCreate, OkView};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::channels;

/// Channels oldest first; archived ones only with `?archived=true`.
#[utoipa::path(get, path = "/projects/{projectId}/channels", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path), ChannelsQuery),
    responses((status = 200, body = ChannelList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_channels(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ChannelsQuery>,
) -> ApiResult<Json<ChannelList>> {
    let project = key.project(&project_id, Operation::ReadChannels)?;
    let channels = channels::list(&state.service, &project.id, query.archived).await?;
    Ok(Json(ChannelList { items: channels.iter().map(Into::into).collect() }))
}

/// Adds a channel. 409 when the key is taken in this project.
#[utoipa::path(post, path = "/projects/{projectId}/channels", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = ChannelCreate,
    responses((status = 201, body = ChannelView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_channel(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<(StatusCode, Json<ChannelView>)> {
    let project = key.project(&project_id, Operation::ManageChannels)?;
    let new = body.parse::<ChannelCreate>()?.try_into()?;
    let channel = channels::create(&state.service, &project, new, &key.0.author()).await?;
    Ok((StatusCode::CREATED, Json((&channel).into())))
}

/// Changes any of `name`, `color`, `mascot`, `baseWeight`, `matchers`, `archived`.
#[utoipa::path(patch, path = "/projects/{projectId}/channels/{channelKey}", tag = "channels", security(("bearer" = [])),
    params(("projectId" = String, Path), ("channelKey" = String, Path)),
    request_body = ChannelPatch,
    responses((status = 200, body = ChannelView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn patch_channel(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, channel_key)): ApiPath<(String, String)>,
    body: JsonBody,
) -> ApiResult<Json<ChannelView>> {
    let project = key.project(&project_id, Operation::ManageChannels)?;
    let changes = body.parse::<ChannelPatch>()?.changes(&channel_key)?;
    let channel = channels::update(&state.service, &project, &channel_key, changes, &key.0.author()).await?;
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
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<Json<OkView>> {
    let project = key.project(&project_id, Operation::ManageChannels)?;
    let hint = body.parse::<HintCreate>()?.try_into()?;
    channels::add_hint(&state.service, &project.id, hint).await?;
    Ok(Json(OkView { ok: true }))
}
