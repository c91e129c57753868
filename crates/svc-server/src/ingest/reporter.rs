//! The widget's reporter routes (docs/widget.md, "Reporter sign-in" and "The reporter's thread"):
//! signing in by a mailed code, trading a session for reporter tokens at `GET
//! /auth/reporter-token`, signing out, and the reporter's own reports with their answers, replies
//! and "does it work now?". Like the rest of ingest: the public project key in a header, open
//! CORS, no cookies, `{error: <code>}` errors. The OpenID Connect popup is `reporter_oidc.rs`.

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Query, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;
use svc_core::account::Email;
use svc_core::model::{Author, Comment, Project, StatusChange};
use svc_core::reporter::{CODE_LIFETIME_MS, Reporter};
use svc_core::time::iso;

use super::access::{self, IDENTITY_HEADER, IngestProject};
use super::error::{IngestError, IngestResult};
use crate::body::read_limited;
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::reporters::{self, SignedIn, ThreadReport};

/// Bodies of these routes are a few fields of text (a reply is at most 20,000 characters).
const BODY_MAX_BYTES: usize = 128 * 1024;

/// Reads the request's project (key and origin) and its JSON body as `T`.
async fn project_and_body<T: DeserializeOwned>(
    state: &AppState,
    request: Request<Body>,
) -> IngestResult<(Arc<Project>, axum::http::request::Parts, T)> {
    let (mut parts, body) = request.into_parts();
    let IngestProject(project) = IngestProject::from_request_parts(&mut parts, state).await?;
    let bytes = read_limited(&parts.headers, body, BODY_MAX_BYTES).await.map_err(|_| IngestError::BODY_INVALID)?;
    let body = serde_json::from_slice(&bytes).map_err(|_| IngestError::BODY_INVALID)?;
    Ok((project, parts, body))
}

fn signed_in_json(signed_in: &SignedIn) -> Value {
    let mut body = json!({
        "token": signed_in.token,
        "expiresAt": iso(signed_in.expires_at * 1000),
        "reporter": signed_in.reporter.to_json(),
    });
    if let Some(secret) = &signed_in.session_secret {
        body["session"] = json!(secret);
    }
    body
}

/// `{email, code?}`: asking for a code, or typing it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeRequest {
    email: String,
    #[serde(default)]
    code: Option<String>,
}

/// A sign-in request by email: its project, the address and the code typed (if any), after the
/// per-client limit.
async fn code_request(state: &AppState, request: Request<Body>) -> IngestResult<(Arc<Project>, Email, Option<String>)> {
    let (project, parts, body) = project_and_body::<CodeRequest>(state, request).await?;
    state
        .rate_limits
        .check_reporter_sign_in(access::client_ip(state, &parts))
        .map_err(|retry_after_secs| IngestError::RateLimited { retry_after_secs })?;
    let email = Email::parse(&body.email).map_err(|_| IngestError::EMAIL_INVALID)?;
    Ok((project, email, body.code))
}

/// `POST /auth/reporter/email {email}`: mails a sign-in code. The same answer for every address.
pub async fn send_code(State(state): State<AppState>, request: Request<Body>) -> IngestResult<Json<Value>> {
    let (project, email, _) = code_request(&state, request).await?;
    reporters::send_code(&state.service, &project, &email).await?;
    Ok(Json(json!({"ok": true, "expiresInSeconds": CODE_LIFETIME_MS / 1000})))
}

/// `POST /auth/reporter/email/verify {email, code}`: the right code starts a session.
pub async fn verify_code(State(state): State<AppState>, request: Request<Body>) -> IngestResult<Json<Value>> {
    let (project, email, code) = code_request(&state, request).await?;
    let code = code.ok_or(IngestError::CODE_MALFORMED)?;
    let signed_in = reporters::verify_code(&state.service, &project, &email, &code).await?;
    Ok(Json(signed_in_json(&signed_in)))
}

/// The session secret from `Authorization: Bearer rs_...`.
fn session_secret(headers: &HeaderMap) -> IngestResult<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|secret| !secret.is_empty())
        .ok_or(IngestError::SESSION_INVALID)
}

/// `GET /auth/reporter-token` (session secret as Bearer): a fresh reporter token.
pub async fn renew_token(
    State(state): State<AppState>,
    IngestProject(project): IngestProject,
    headers: HeaderMap,
) -> IngestResult<Json<Value>> {
    let signed_in = reporters::renew(&state.service, &project, session_secret(&headers)?).await?;
    Ok(Json(signed_in_json(&signed_in)))
}

/// `DELETE /auth/reporter-token` (session secret as Bearer): signs out.
pub async fn sign_out(
    State(state): State<AppState>,
    IngestProject(project): IngestProject,
    headers: HeaderMap,
) -> IngestResult<Json<Value>> {
    reporters::sign_out(&state.service, &project, session_secret(&headers)?).await?;
    Ok(Json(json!({"ok": true})))
}

/// The reporter a request's `x-svc-identity` names.
async fn reporter_of(state: &AppState, project: &Project, headers: &HeaderMap) -> IngestResult<Principal> {
    let token = headers.get(IDENTITY_HEADER).and_then(|v| v.to_str().ok());
    Ok(reporters::principal(&state.service, project, token).await?)
}

fn author_json(author: &Author) -> Value {
    json!({"kind": author.kind, "label": author.label})
}

fn comment_json(comment: &Comment) -> Value {
    json!({
        "id": comment.id,
        "author": author_json(&comment.author),
        "text": comment.text,
        "kind": comment.kind,
        "createdAt": iso(comment.created_at),
        "publishedAt": comment.published_at.map(iso),
    })
}

fn change_json(change: &StatusChange) -> Value {
    json!({"from": change.from_status, "to": change.to_status, "by": author_json(&change.by), "at": iso(change.at)})
}

fn thread_json(item: &ThreadReport) -> Value {
    let report = &item.report;
    json!({
        "id": report.id,
        "shortId": svc_core::ids::short_id(&report.id),
        "title": report.title,
        "status": report.status,
        "channelKey": report.channel_key,
        "url": report.url,
        "createdAt": iso(report.created_at),
        "lastActivity": iso(item.last_activity()),
        "awaitingConfirmation": report.status == svc_core::status::Status::Fixed,
        "comments": item.comments.iter().map(comment_json).collect::<Vec<_>>(),
        "history": item.history.iter().map(change_json).collect::<Vec<_>>(),
    })
}

#[derive(Deserialize)]
pub struct ThreadQuery {
    /// Report ids this browser sent, comma-separated.
    #[serde(default)]
    known: String,
}

/// `GET /ingest/reporter/reports`: the reporter's newest reports with their published comments and
/// status history.
pub async fn thread(
    State(state): State<AppState>,
    IngestProject(project): IngestProject,
    Query(query): Query<ThreadQuery>,
    headers: HeaderMap,
) -> IngestResult<Json<Value>> {
    let principal = reporter_of(&state, &project, &headers).await?;
    let known: Vec<String> =
        query.known.split(',').map(str::trim).filter(|id| !id.is_empty()).map(String::from).collect();
    let thread = reporters::thread(&state.service, &project, &principal, &known).await?;
    let Principal::Reporter { reporter, .. } = &principal else { unreachable!("a reporter's route") };
    Ok(Json(json!({
        "reporter": Reporter::to_json(reporter),
        "reports": thread.iter().map(thread_json).collect::<Vec<_>>(),
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyRequest {
    text: String,
}

/// `POST /ingest/reporter/reports/:id/comments {text}`: the reporter answers on their report.
pub async fn reply(
    State(state): State<AppState>,
    Path(report_id): Path<String>,
    request: Request<Body>,
) -> IngestResult<impl IntoResponse> {
    let (project, parts, body) = project_and_body::<ReplyRequest>(&state, request).await?;
    let principal = reporter_of(&state, &project, &parts.headers).await?;
    let comment = reporters::reply(&state.service, &project, &principal, &report_id, &body.text).await?;
    Ok((StatusCode::CREATED, Json(comment_json(&comment))))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmationRequest {
    works: bool,
    #[serde(default)]
    note: Option<String>,
}

/// `POST /ingest/reporter/reports/:id/confirmation {works, note?}`: "Works now" or "Still broken"
/// on a report marked fixed.
pub async fn confirm(
    State(state): State<AppState>,
    Path(report_id): Path<String>,
    request: Request<Body>,
) -> IngestResult<Json<Value>> {
    let (project, parts, body) = project_and_body::<ConfirmationRequest>(&state, request).await?;
    let principal = reporter_of(&state, &project, &parts.headers).await?;
    let (change, comment) =
        reporters::confirm(&state.service, &project, &principal, &report_id, body.works, body.note.as_deref()).await?;
    Ok(Json(json!({
        "id": report_id,
        "status": change.to_status,
        "comment": comment.as_ref().map(comment_json),
    })))
}
