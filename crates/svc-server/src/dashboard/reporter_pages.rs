//! Pages for reporters, not for the team: the popup of an OpenID Connect sign-in started from the
//! widget (`/auth/reporter/oidc/start` goes to the provider, `/auth/reporter/oidc/callback` comes
//! back and hands the result to the page that opened the popup), and "does it work now?"
//! (`/reporter/confirm`), the link in the mail a reporter gets when their report is fixed.
//!
//! The popup posts its result with `postMessage` only to the origin the sign-in was started for,
//! which the project must allow (see `service::reporter_oidc`); the dashboard's script does the
//! posting (the page carries no script of its own under the strict policy).

use askama::Template;
use axum::extract::{Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::render;
use super::session::require_same_origin;
use crate::ingest::access;
use crate::state::AppState;
use svc_service::reporter_oidc::{self, Callback, OidcError};
use svc_service::reporters::{self, ReporterError};
use svc_service::{ServiceError, projects};

/// The `type` of every message the popup posts.
const MESSAGE_TYPE: &str = "svc:reporter-sign-in";

#[derive(Template)]
#[template(path = "dashboard/reporter_sign_in.html")]
struct SignInPage<'a> {
    assets: &'static Assets,
    project: &'a str,
    /// Who signed in; `None` when it did not work.
    reporter: Option<&'a str>,
    message: &'a str,
    /// Where the result is posted; `None`: nowhere (the origin is not known or not allowed).
    origin: Option<&'a str>,
    message_json: String,
}

fn failed_page(status: StatusCode, error: &OidcError, origin: Option<&str>) -> Response {
    if let OidcError::Service(inner) = error {
        tracing::error!(error = %inner, "reporter sign-in with a provider failed");
    }
    let message_json = json!({"type": MESSAGE_TYPE, "error": error.code()}).to_string();
    let page = SignInPage {
        assets: assets::get(),
        project: "",
        reporter: None,
        message: &error.to_string(),
        origin,
        message_json,
    };
    render(status, &page)
}

#[derive(Deserialize)]
pub struct StartQuery {
    #[serde(default, rename = "projectKey")]
    project_key: String,
    #[serde(default)]
    origin: String,
}

/// `GET /auth/reporter/oidc/start?projectKey=&origin=`: the widget opens its popup here.
pub async fn start(State(state): State<AppState>, Query(query): Query<StartQuery>, parts: Parts) -> Response {
    if let Err(retry_after_secs) = state.rate_limits.check_reporter_sign_in(access::client_ip(&state, &parts)) {
        return PageError::TooManyAttempts { retry_after_secs }.into_response();
    }
    let project = match projects::by_public_key(&state.service, &query.project_key).await {
        Ok(Some(project)) => project,
        Ok(None) => return failed_page(StatusCode::NOT_FOUND, &OidcError::NotOffered, None),
        Err(error) => return PageError::from(error).into_response(),
    };
    let origin = query.origin.trim_end_matches('/');
    match reporter_oidc::start(&state.service, &state.config.public_url, &project, origin).await {
        // The provider's authorization URL, built from the project's own provider settings.
        Ok(url) => Redirect::to(&url).into_response(),
        // Never post to an origin the project does not allow.
        Err(error @ (OidcError::OriginNotAllowed | OidcError::NotOffered)) => {
            failed_page(StatusCode::FORBIDDEN, &error, None)
        }
        Err(error) => failed_page(StatusCode::BAD_GATEWAY, &error, Some(origin)),
    }
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    state: Option<String>,
    code: Option<String>,
    error: Option<String>,
}

/// `GET /auth/reporter/oidc/callback`: the provider sends the popup back here.
pub async fn callback(State(state): State<AppState>, Query(query): Query<CallbackQuery>) -> Response {
    let callback =
        Callback { state: query.state.as_deref(), code: query.code.as_deref(), error: query.error.as_deref() };
    match reporter_oidc::finish(&state.service, &state.config.public_url, callback).await {
        Ok(finished) => {
            let signed_in = &finished.signed_in;
            let message_json = json!({
                "type": MESSAGE_TYPE,
                "token": signed_in.token,
                "expiresAt": svc_core::time::iso(signed_in.expires_at * 1000),
                "session": signed_in.session_secret,
                "reporter": signed_in.reporter.to_json(),
            })
            .to_string();
            let page = SignInPage {
                assets: assets::get(),
                project: &finished.project_name,
                reporter: Some(signed_in.reporter.label()),
                message: "",
                origin: Some(&finished.origin),
                message_json,
            };
            render(StatusCode::OK, &page)
        }
        Err((origin, error)) => {
            let status = match error {
                OidcError::StateInvalid => StatusCode::BAD_REQUEST,
                OidcError::Denied(_) => StatusCode::FORBIDDEN,
                OidcError::Service(_) => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_GATEWAY,
            };
            failed_page(status, &error, origin.as_deref())
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/reporter_confirm.html")]
struct ConfirmPage<'a> {
    assets: &'static Assets,
    token: &'a str,
    project: &'a str,
    title: &'a str,
    status: &'a str,
    /// The report is marked fixed and waits for the answer.
    waiting: bool,
    /// What the answer did, once given.
    answered: Option<&'static str>,
}

fn link_not_valid() -> PageError {
    PageError::NotFound("This link is not valid, or its report is gone.".into())
}

#[derive(Deserialize, Default)]
pub struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// `GET /reporter/confirm?token=`: the report and the two answers (a link scanner that opens it
/// changes nothing).
pub async fn confirm_page(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> PageResult<Response> {
    let link = reporters::check_confirm_link(&state.service, &query.token).await?.ok_or_else(link_not_valid)?;
    let page = ConfirmPage {
        assets: assets::get(),
        token: &query.token,
        project: &link.project.name,
        title: &link.report.title,
        status: link.report.status.as_str(),
        waiting: link.report.status == svc_core::status::Status::Fixed,
        answered: None,
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct ConfirmForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    answer: String,
    #[serde(default)]
    note: String,
}

/// `POST /reporter/confirm`: "Works now" or "Still broken", as the reporter's own act.
pub async fn confirm(
    State(state): State<AppState>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ConfirmForm>,
) -> PageResult<Response> {
    require_same_origin(&state, &headers)?;
    let link = reporters::check_confirm_link(&state.service, &form.token).await?.ok_or_else(link_not_valid)?;
    let works = match form.answer.as_str() {
        "works" => true,
        "broken" => false,
        _ => return Err(PageError::BadRequest("Choose Works now or Still broken.".into())),
    };
    let note = Some(form.note.as_str()).filter(|n| !n.trim().is_empty());
    let answered =
        reporters::confirm(&state.service, &link.project, &link.principal, &link.report.id, works, note).await;
    let status_now = match answered {
        Ok((change, _)) => change.to_status,
        Err(ReporterError::NotFixed) => link.report.status.clone(),
        Err(ReporterError::Service(error)) => return Err(error.into()),
        Err(other) => return Err(ServiceError::Internal(other.to_string()).into()),
    };
    let answered = match (works, status_now.as_str()) {
        (true, "verified") => Some("Thanks for confirming: the report is closed as verified by you."),
        (false, "triaged") => Some("Thanks: the team sees that it is still broken, with your note."),
        _ => None,
    };
    let page = ConfirmPage {
        assets: assets::get(),
        token: &form.token,
        project: &link.project.name,
        title: &link.report.title,
        status: status_now.as_str(),
        waiting: false,
        answered,
    };
    Ok(render(StatusCode::OK, &page))
}
