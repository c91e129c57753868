//! Issue trackers (docs/integrations.md): a project's GitHub connection (scope `project:write`),
//! "Create GitHub issue" for a report (`feedback:write`), and the endpoint GitHub delivers its
//! `issues` and `issue_comment` events to (no key: every delivery is signed).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use svc_core::tracker::TrackerKind;
use svc_service::permissions::Operation;
use svc_service::trackers::{self, Delivery, DeliveryError, PushError, Received, TrackerError};

use super::extract::{ApiCaller, ApiPath, JsonBody};
use super::views::{
    ConnectionCheckView, DeliveryReceivedView, GithubConnectionInput, GithubConnectionView, IssuePushView, OkView,
};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

fn view(state: &AppState, connection: &svc_core::tracker::TrackerConnection) -> GithubConnectionView {
    GithubConnectionView::new(connection, state.trackers.webhook_url(connection.tracker))
}

/// The project's GitHub connection (no secret); 404 when none is connected.
#[utoipa::path(get, path = "/projects/{projectId}/integrations/github", tag = "integrations", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = GithubConnectionView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_github(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<GithubConnectionView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let connection = trackers::get(&state.service, &key.0, &project)
        .await?
        .ok_or_else(|| ApiError::not_found("the project has no connected repository"))?;
    Ok(Json(view(&state, &connection)))
}

/// Connects a repository (201, with the webhook secret Svc made when none was given: shown this
/// once) or changes the connection (200).
#[utoipa::path(put, path = "/projects/{projectId}/integrations/github", tag = "integrations", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    request_body = GithubConnectionInput,
    responses((status = 200, body = GithubConnectionView), (status = 201, body = GithubConnectionView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn put_github(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    body: JsonBody,
) -> ApiResult<(StatusCode, Json<GithubConnectionView>)> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let input = body.parse::<GithubConnectionInput>()?.try_into()?;
    let connected = trackers::connect(&state.service, &key.0, &project, input).await?;
    let mut answer = view(&state, &connected.connection);
    answer.webhook_secret = connected.new_webhook_secret.map(|secret| secret.expose().to_string());
    let status = if connected.created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(answer)))
}

/// Disconnects the repository: nothing more goes to GitHub or comes from it; reports keep their
/// links.
#[utoipa::path(delete, path = "/projects/{projectId}/integrations/github", tag = "integrations", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = OkView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_github(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<OkView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    trackers::disconnect(&state.service, &key.0, &project).await?;
    Ok(Json(OkView { ok: true }))
}

/// "Check connection": reads the repository and its issues with the connection's credentials, and
/// says what is missing (a permission, the repository's name, the app's installation).
#[utoipa::path(post, path = "/projects/{projectId}/integrations/github/check", tag = "integrations", security(("bearer" = [])),
    params(("projectId" = String, Path)),
    responses((status = 200, body = ConnectionCheckView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn check_github(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
) -> ApiResult<Json<ConnectionCheckView>> {
    let project = key.project(&project_id, Operation::ConfigureProject)?;
    let check = trackers::check(&state.service, &state.trackers, &key.0, &project).await?;
    Ok(Json(ConnectionCheckView { ok: check.problems.is_empty(), problems: check.problems, notes: check.notes }))
}

/// Makes the report's GitHub issue (201), or answers with the one it has (200): one report, one
/// issue. 409 when the project has no connected repository; 502 `UPSTREAM` when GitHub refused
/// (the message says what to change) or could not be reached.
#[utoipa::path(post, path = "/projects/{projectId}/feedback/{reportId}/github-issue", tag = "integrations", security(("bearer" = [])),
    params(("projectId" = String, Path), ("reportId" = String, Path)),
    responses((status = 200, body = IssuePushView), (status = 201, body = IssuePushView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 502, body = ErrorBody)))]
pub async fn push_issue(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, report_id)): ApiPath<(String, String)>,
) -> ApiResult<(StatusCode, Json<IssuePushView>)> {
    let project = key.project(&project_id, Operation::Triage)?;
    let report = super::feedback::report_in(&state, &project, &report_id).await?;
    let pushed =
        trackers::push(&state.service, &state.trackers, &key.0, &project, &report).await.map_err(push_error)?;
    let status = if pushed.created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(IssuePushView { link: (&pushed.link).into(), created: pushed.created })))
}

/// A failed push as the REST answer.
pub fn push_error(error: PushError) -> ApiError {
    match error {
        PushError::Service(error) => error.into(),
        PushError::Tracker(TrackerError::Refused(message)) => ApiError::Upstream(message),
        PushError::Tracker(other) => ApiError::Upstream(other.to_string()),
    }
}

/// Where GitHub delivers `issues` and `issue_comment` events (a repository's webhook or a GitHub
/// App's), signed with the connection's webhook secret (`X-Hub-Signature-256`). 401 for a
/// signature that matches no connection, 404 for a repository no project connected, 403 for an
/// installation that is not the connected one; a delivery id seen before changes nothing.
#[utoipa::path(post, path = "/integrations/github/webhook", tag = "integrations",
    request_body(content = Object, description = "A GitHub webhook payload, as GitHub sends it"),
    params(
        ("X-GitHub-Event" = String, Header, description = "issues, issue_comment or ping"),
        ("X-GitHub-Delivery" = String, Header, description = "The delivery's unique id"),
        ("X-Hub-Signature-256" = String, Header, description = "sha256=<hex HMAC-SHA256 of the body>"),
    ),
    responses((status = 200, body = DeliveryReceivedView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn github_webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<DeliveryReceivedView>> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let event = header("x-github-event").ok_or_else(|| ApiError::bad_request("X-GitHub-Event is missing"))?;
    let delivery = Delivery {
        tracker: TrackerKind::Github,
        event,
        delivery_id: header("x-github-delivery").unwrap_or_default(),
        signature: header("x-hub-signature-256"),
        body: &body,
    };
    let received = trackers::receive(&state.service, delivery).await.map_err(|error| match error {
        DeliveryError::Malformed(message) => ApiError::BadRequest(message),
        DeliveryError::BadSignature => ApiError::Unauthorized(error.to_string()),
        DeliveryError::UnknownRepository(_) => ApiError::NotFound(error.to_string()),
        DeliveryError::UnknownInstallation(_) => ApiError::Forbidden(error.to_string()),
        DeliveryError::Service(message) => ApiError::Internal(anyhow::anyhow!(message)),
    })?;
    Ok(Json(match received {
        Received::Applied { reports } => DeliveryReceivedView { outcome: "applied".into(), reports, reason: None },
        Received::Ignored(reason) => {
            DeliveryReceivedView { outcome: "ignored".into(), reports: 0, reason: Some(reason) }
        }
        Received::Replayed => DeliveryReceivedView { outcome: "replayed".into(), reports: 0, reason: None },
    }))
}
