//! Signing in and out, the first owner's setup link and password-reset links.

use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use svc_core::account::LinkPurpose;
use svc_core::secret::Secret;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::redirect::{local_target, see_other_local};
use super::session;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::ServiceError;
use svc_service::accounts::{self, NewUser};

#[derive(Template)]
#[template(path = "dashboard/sign_in.html")]
struct SignInPage<'a> {
    assets: &'static Assets,
    email: &'a str,
    next: &'a str,
    error: Option<&'a str>,
    notice: Option<&'a str>,
    /// Nobody has an account yet: say where the first one comes from.
    no_accounts: bool,
}

#[derive(Deserialize)]
pub struct NextQuery {
    next: Option<String>,
    notice: Option<String>,
}

fn notice_text(code: Option<&str>) -> Option<&'static str> {
    match code {
        Some("signed-out") => Some("You are signed out."),
        Some("signed-out-everywhere") => Some("You are signed out on every device."),
        Some("password-set") => Some("Your password is set. Sign in with it."),
        _ => None,
    }
}

/// `GET /sign-in`
pub async fn sign_in_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<NextQuery>,
) -> Response {
    // Only a local path may follow sign-in (never another site).
    let next = local_target(query.next.as_deref());
    // Someone already signed in goes straight on.
    if let Some(token) = session::session_token(&state, &headers)
        && let Ok(Some(_)) = accounts::resolve_session(&state.service, token).await
    {
        return see_other_local(Some(&next));
    }
    let page = SignInPage {
        assets: assets::get(),
        email: "",
        next: &next,
        error: None,
        notice: notice_text(query.notice.as_deref()),
        no_accounts: accounts::no_users_yet(&state.service).await.unwrap_or(false),
    };
    render(StatusCode::OK, &page)
}

#[derive(Deserialize)]
pub struct SignInForm {
    email: String,
    password: String,
    next: Option<String>,
}

/// `POST /sign-in`
pub async fn sign_in(
    State(state): State<AppState>,
    parts: Parts,
    Form(form): Form<SignInForm>,
) -> PageResult<Response> {
    session::require_same_origin(&state, &parts.headers)?;
    let ip = crate::ingest::access::client_ip(&state, &parts);
    state
        .rate_limits
        .check_sign_in(&form.email, ip)
        .map_err(|retry_after_secs| PageError::TooManyAttempts { retry_after_secs })?;
    let next = local_target(form.next.as_deref());
    let Some(user) = accounts::check_credentials(&state.service, &form.email, Secret::new(form.password)).await? else {
        let page = SignInPage {
            assets: assets::get(),
            email: &form.email,
            next: &next,
            error: Some("That email and password do not match an account."),
            notice: None,
            no_accounts: accounts::no_users_yet(&state.service).await?,
        };
        return Ok(render(StatusCode::UNAUTHORIZED, &page));
    };
    let token = accounts::start_session(&state.service, &user.id).await?;
    tracing::info!(user = %user.id, "dashboard sign-in");
    Ok(([(header::SET_COOKIE, session::session_cookie(&state, token.expose()))], see_other_local(Some(&next)))
        .into_response())
}

#[derive(Deserialize)]
pub struct CsrfOnly {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

/// `POST /sign-out`: ends this session.
pub async fn sign_out(
    State(state): State<AppState>,
    Submitted(person, _): Submitted<CsrfOnly>,
) -> PageResult<Response> {
    accounts::end_session(&state.service, &person.signed_in.session_hash).await?;
    Ok(signed_out(&state, "signed-out"))
}

/// `POST /sign-out-everywhere`: ends every session of this person.
pub async fn sign_out_everywhere(
    State(state): State<AppState>,
    Submitted(person, _): Submitted<CsrfOnly>,
) -> PageResult<Response> {
    accounts::end_all_sessions(&state.service, &person.signed_in.user.id).await?;
    Ok(signed_out(&state, "signed-out-everywhere"))
}

fn signed_out(state: &AppState, notice: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, session::cleared_cookie(state))],
        [(header::LOCATION, format!("/sign-in?notice={notice}"))],
    )
        .into_response()
}

#[derive(Template)]
#[template(path = "dashboard/setup.html")]
struct SetupPage<'a> {
    assets: &'static Assets,
    token: &'a str,
    email: &'a str,
    name: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "dashboard/reset.html")]
struct ResetPage<'a> {
    assets: &'static Assets,
    token: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn link_gone() -> PageError {
    PageError::NotFound("This link has expired or was already used. Ask for a new one (svc user reset-password, or restart the service while nobody has an account).".into())
}

/// `GET /setup?token=`: the first person chooses their email and password.
pub async fn setup_form(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> PageResult<Response> {
    let token = query.token.unwrap_or_default();
    accounts::open_link(&state.service, &token, LinkPurpose::FirstOwner).await?.ok_or_else(link_gone)?;
    let page = SetupPage { assets: assets::get(), token: &token, email: "", name: "", error: None };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct SetupForm {
    token: String,
    email: String,
    #[serde(default)]
    name: String,
    password: String,
}

/// `POST /setup`: creates the first owner and signs them in.
pub async fn setup(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SetupForm>,
) -> PageResult<Response> {
    session::require_same_origin(&state, &headers)?;
    let again = |message: &str| {
        let page = SetupPage {
            assets: assets::get(),
            token: &form.token,
            email: &form.email,
            name: &form.name,
            error: Some(message),
        };
        render(StatusCode::BAD_REQUEST, &page)
    };
    let new = match NewUser::parse(&form.email, &form.name, Secret::new(form.password.clone())) {
        Ok(new) => new,
        Err(error) => return Ok(again(&capitalized(&error.to_string()))),
    };
    let user = match accounts::redeem_first_owner(&state.service, &form.token, new).await {
        Ok(user) => user,
        Err(ServiceError::Conflict(message)) => return Ok(again(&capitalized(&message))),
        Err(ServiceError::Invalid(_)) => return Err(link_gone()),
        Err(other) => return Err(other.into()),
    };
    let token = accounts::start_session(&state.service, &user.id).await?;
    tracing::info!(user = %user.id, "first owner set up");
    Ok((
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, session::session_cookie(&state, token.expose()))],
        [(header::LOCATION, "/".to_string())],
    )
        .into_response())
}

/// `GET /reset-password?token=`
pub async fn reset_form(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> PageResult<Response> {
    let token = query.token.unwrap_or_default();
    let link = accounts::open_link(&state.service, &token, LinkPurpose::ResetPassword).await?.ok_or_else(link_gone)?;
    let email = accounts::link_email(&state.service, &link).await?;
    let page = ResetPage { assets: assets::get(), token: &token, email: &email, error: None };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct ResetForm {
    token: String,
    password: String,
}

/// `POST /reset-password`: sets the password, ends every session, and asks to sign in.
pub async fn reset(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<ResetForm>,
) -> PageResult<Response> {
    session::require_same_origin(&state, &headers)?;
    match accounts::redeem_password_reset(&state.service, &form.token, Secret::new(form.password)).await {
        Ok(_) => Ok(see_other_local(Some("/sign-in?notice=password-set"))),
        Err(ServiceError::Invalid(message)) if message.starts_with("password") => {
            let link = accounts::open_link(&state.service, &form.token, LinkPurpose::ResetPassword)
                .await?
                .ok_or_else(link_gone)?;
            let email = accounts::link_email(&state.service, &link).await?;
            let page = ResetPage {
                assets: assets::get(),
                token: &form.token,
                email: &email,
                error: Some(&capitalized(&message)),
            };
            Ok(render(StatusCode::BAD_REQUEST, &page))
        }
        Err(ServiceError::Invalid(_)) => Err(link_gone()),
        Err(other) => Err(other.into()),
    }
}

/// A service message as a sentence: "password must ..." → "Password must ...."
pub(super) fn capitalized(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str().trim_end_matches('.')),
        None => String::new(),
    }
}

super::csrf_forms!(CsrfOnly);
