//! Webhooks: a project's endpoints, their delivery log, test events and resends (docs/webhooks.md).
//! Every route needs `project:write`: an endpoint's URL can itself be a secret (a chat webhook).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use svc_service::permissions::Operation;
use svc_service::webhooks;

use super::extract::{ApiCaller, ApiPath, ApiQuery, JsonBody};
use super::query::DeliveriesQuery;
use super::views::{
    OkView, WebhookCreate, WebhookDeliveryPage, WebhookDeliveryView, WebhookList, WebhookPatch, WebhookView,
    WebhookWithSecretView,
};
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;

/// Every endpoint of the project, oldest first (no secrets).
#[utoipa::path(get, path = "/projects/{projectId}/webhooks", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = WebhookList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_webhooks(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<WebhookList>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let hooks = webhooks::list(&state.service, &key.0, &project).await?;
    Ok(Json(WebhookList { items: hooks.iter().map(Into::into).collect() }))
}

/// Adds an endpoint. The answer carries its signing secret (`whsec_...`), shown this once. 409
/// when the project has 20 endpoints already.
#[utoipa::path(post, path = "/projects/{projectId}/webhooks", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = WebhookCreate,
    responses((status = 201, body = WebhookWithSecretView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_webhook(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<(StatusCode, Json<WebhookWithSecretView>)> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let new = body.parse::<WebhookCreate>()?.into();
    let hook = webhooks::create(&state.service, &state.webhooks, &key.0, &project, new).await?;
    Ok((StatusCode::CREATED, Json((&hook).into())))
}

/// One endpoint (no secret).
#[utoipa::path(get, path = "/projects/{projectId}/webhooks/{webhookId}", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = WebhookView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_webhook(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<WebhookView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let hook = webhooks::get(&state.service, &key.0, &project, &webhook_id).await?;
    Ok(Json((&hook).into()))
}

/// Changes any of `url`, `events`, `enabled`, `description`. Enabling an endpoint Svc disabled
/// sends its waiting deliveries.
#[utoipa::path(patch, path = "/projects/{projectId}/webhooks/{webhookId}", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path)),
    request_body = WebhookPatch,
    responses((status = 200, body = WebhookView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn patch_webhook(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
    body: JsonBody,
) -> ApiResult<Json<WebhookView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let changes = body.parse::<WebhookPatch>()?.into();
    let hook = webhooks::update(&state.service, &state.webhooks, &key.0, &project, &webhook_id, changes).await?;
    Ok(Json((&hook).into()))
}

/// Deletes an endpoint with its delivery log; nothing more is sent to it.
#[utoipa::path(delete, path = "/projects/{projectId}/webhooks/{webhookId}", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = OkView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_webhook(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<OkView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    webhooks::delete(&state.service, &key.0, &project, &webhook_id).await?;
    Ok(Json(OkView { ok: true }))
}

/// A new signing secret, shown this once; the previous one keeps signing beside it for 24 hours
/// (each delivery then carries two signatures), so receivers can switch without a gap.
#[utoipa::path(post, path = "/projects/{projectId}/webhooks/{webhookId}/rotate-secret", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = WebhookWithSecretView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<WebhookWithSecretView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let hook = webhooks::rotate_secret(&state.service, &key.0, &project, &webhook_id).await?;
    Ok(Json((&hook).into()))
}

/// Sends a `webhook.test` event now and answers with the delivery: its status and the endpoint's
/// response code (a failed test is retried like any delivery).
#[utoipa::path(post, path = "/projects/{projectId}/webhooks/{webhookId}/test", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = WebhookDeliveryView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn test_webhook(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<WebhookDeliveryView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let logged = webhooks::send_test(&state.service, &state.webhooks, &key.0, &project, &webhook_id).await?;
    Ok(Json((&logged).into()))
}

/// The endpoint's deliveries, newest first, each with every attempt (kept 30 days).
#[utoipa::path(get, path = "/projects/{projectId}/webhooks/{webhookId}/deliveries", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path), DeliveriesQuery),
    responses((status = 200, body = WebhookDeliveryPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id)): ApiPath<(String, String)>,
    ApiQuery(query): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<WebhookDeliveryPage>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let (before, limit) = query.page()?;
    let page = webhooks::deliveries(&state.service, &key.0, &project, &webhook_id, before, limit).await?;
    let next_before = (page.len() == limit as usize).then(|| page.last().map(|d| d.delivery.id.clone())).flatten();
    Ok(Json(WebhookDeliveryPage { items: page.iter().map(Into::into).collect(), next_before }))
}

/// Sends a delivery again now, under the same `webhook-id`, with a fresh 24 hours of retries; the
/// answer says how the attempt went (a disabled endpoint's delivery waits until it is enabled).
#[utoipa::path(post, path = "/projects/{projectId}/webhooks/{webhookId}/deliveries/{deliveryId}/resend", tag = "webhooks", security(("bearer" = [])),
    params(("projectId" = String, Path), ("webhookId" = String, Path), ("deliveryId" = String, Path)),
    responses((status = 200, body = WebhookDeliveryView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn resend_delivery(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, webhook_id, delivery_id)): ApiPath<(String, String, String)>,
) -> ApiResult<Json<WebhookDeliveryView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let logged = webhooks::resend(&state.service, &state.webhooks, &key.0, &project, &webhook_id, &delivery_id).await?;
    Ok(Json((&logged).into()))
}
