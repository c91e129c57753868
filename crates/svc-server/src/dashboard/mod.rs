//! The dashboard: pages for people, rendered on the server from askama templates (so every value
//! is HTML-escaped by default) with one small script for what a page cannot do alone (live
//! updates, keyboard shortcuts, copy buttons). It is one more surface over the service layer:
//! handlers resolve the signed-in person, translate forms into service calls and render the result.
//!
//! Every response carries a strict Content Security Policy (no inline script or style, no eval);
//! reporter content is text wherever it is shown.

mod account;
mod assets;
mod auth;
mod channels;
mod consent;
mod error;
mod events;
mod export;
mod flags;
mod identity;
mod inbox;
mod install;
mod integrations;
mod keys;
mod members;
mod outbox;
mod projects;
mod redirect;
mod reporter_pages;
mod rooms;
mod session;
mod settings;
mod unsubscribe;
mod view;
mod webhooks;
mod widget_tab;

use askama::Template;
use axum::Router;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;

pub use assets::first_load as first_load_assets;
pub use error::{PageError, PageResult};
pub use session::{Person, csrf_token};

use crate::state::AppState;

/// The dashboard's Content Security Policy: only its own script and stylesheet run; images and
/// media only from itself (screenshots, voice notes); forms post only to itself; no framing.
///
/// The widget tab's live preview runs the real widget under this policy unchanged: its script and
/// parts come from this origin (`/v1/svc.js`, `/v1/parts/`), its requests go to this origin (the
/// preview ingest, `widget_tab::preview_router`), its styles are constructed stylesheets in its
/// shadow root (not `<style>` elements or `style` attributes) and its mascots are inline SVG
/// without styles, so nothing here had to be loosened for it.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'; report-uri /dashboard/csp-report";

pub fn router() -> Router<AppState> {
    let pages = Router::new()
        .route("/", get(inbox::page))
        .route("/reports/{id}", get(inbox::report_link))
        .route("/reports/bulk", post(inbox::bulk))
        .route("/reports/{id}/status", post(inbox::set_status))
        .route("/reports/{id}/duplicate", post(inbox::mark_duplicate))
        .route("/reports/{id}/github-issue", post(integrations::push))
        .route("/reports/{id}/assignee", post(inbox::set_assignee))
        .route("/reports/{id}/labels", post(inbox::change_label))
        .route("/reports/{id}/comments", post(inbox::add_comment))
        .route("/reports/{id}/comments/{comment}/publish", post(inbox::publish_comment))
        .route("/reports/{id}/comments/{comment}/discard", post(inbox::discard_comment))
        .route("/dashboard/blobs/{id}", get(inbox::blob))
        .route("/dashboard/events", get(events::stream))
        .route("/export", get(export::list))
        .route("/reports/{id}/markdown", get(export::markdown))
        .route("/reports/{id}/reproduction.spec.ts", get(export::reproduction))
        .route("/projects", get(projects::list).post(projects::create))
        .route("/projects/{id}", get(projects::show))
        .route("/projects/{id}/install", get(install::show))
        .route("/projects/{id}/install/setup-token", post(install::mint_setup_token))
        .route("/projects/{id}/widget", get(widget_tab::show).post(widget_tab::update))
        .merge(widget_tab::preview_router())
        .route("/projects/{id}/settings", get(settings::settings).post(settings::rename))
        .route("/projects/{id}/delete", post(settings::delete))
        .route("/projects/{id}/retention", get(settings::retention).post(settings::set_retention))
        .route("/projects/{id}/audit", get(settings::audit_log))
        .route("/projects/{id}/channels", get(channels::page).post(channels::create))
        .route("/projects/{id}/channels/{key}", post(channels::update))
        .route("/projects/{id}/channels/{key}/matchers", post(channels::matchers))
        .route("/projects/{id}/identity", get(identity::page).post(identity::change))
        .route("/projects/{id}/flags", get(flags::page).post(flags::create))
        .route("/projects/{id}/flags/{key}", post(flags::toggle))
        .route("/projects/{id}/keys", get(keys::list).post(keys::mint))
        .route("/projects/{id}/keys/{key}/revoke", post(keys::revoke))
        .route("/projects/{id}/webhooks", get(webhooks::page).post(webhooks::create))
        .route("/projects/{id}/integrations", get(integrations::page).post(integrations::save))
        .route("/projects/{id}/integrations/check", post(integrations::check))
        .route("/projects/{id}/integrations/disconnect", post(integrations::disconnect))
        .route("/projects/{id}/webhooks/{webhook}", get(webhooks::log))
        .route("/projects/{id}/webhooks/{webhook}/edit", post(webhooks::edit))
        .route("/projects/{id}/webhooks/{webhook}/enabled", post(webhooks::set_enabled))
        .route("/projects/{id}/webhooks/{webhook}/delete", post(webhooks::delete))
        .route("/projects/{id}/webhooks/{webhook}/rotate-secret", post(webhooks::rotate_secret))
        .route("/projects/{id}/webhooks/{webhook}/test", post(webhooks::send_test))
        .route("/projects/{id}/webhooks/{webhook}/deliveries/{delivery}/resend", post(webhooks::resend))
        .route("/members", get(members::page))
        .route("/members/{org}/invite", post(members::invite))
        .route("/members/{org}/invites/{invite}/withdraw", post(members::withdraw))
        .route("/members/{org}/keys/{key}/revoke", post(members::revoke_key))
        .route("/members/{org}/{user}/role", post(members::change_role))
        .route("/members/{org}/{user}/remove", post(members::remove))
        .route("/invite", get(members::invitation).post(members::accept))
        .route("/account", get(account::page))
        .route("/account/agents/{key}/disconnect", post(account::disconnect))
        .route("/account/notifications", post(account::save_notifications))
        .route("/account/password", post(account::change_password))
        .route("/authorize", get(consent::page).post(consent::decide))
        .route("/outbox", get(outbox::page))
        .route("/unsubscribe", get(unsubscribe::confirm).post(unsubscribe::apply))
        .route("/auth/reporter/oidc/start", get(reporter_pages::start))
        .route("/auth/reporter/oidc/callback", get(reporter_pages::callback))
        .route("/reporter/confirm", get(reporter_pages::confirm_page).post(reporter_pages::confirm))
        .route("/rooms", get(rooms::page))
        .route("/rooms/{project}/{artifact}", post(rooms::update))
        .route("/sign-in", get(auth::sign_in_form).post(auth::sign_in))
        .route("/sign-out", post(auth::sign_out))
        .route("/sign-out-everywhere", post(auth::sign_out_everywhere))
        .route("/setup", get(auth::setup_form).post(auth::setup))
        .route("/reset-password", get(auth::reset_form).post(auth::reset))
        .route("/dashboard/assets/{file}", get(assets::serve))
        .route("/dashboard/csp-report", post(csp_report));
    crate::catch_panics(pages, error::internal_page).layer(middleware::from_fn(security_headers))
}

/// Headers on every dashboard response: the CSP, no sniffing, no framing, no referrer to other
/// sites, and no caching of pages (assets set their own caching).
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // A page may set a narrower variant of its own (the OAuth consent page lets its form lead on
    // to the application's redirect URI).
    headers.entry(header::CONTENT_SECURITY_POLICY).or_insert(HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response
}

/// `POST /dashboard/csp-report`: a browser reports content the policy blocked. Nothing a
/// person sees; it is logged (at most once a second) so an operator notices a page that breaks
/// the policy. The endpoint needs no credential: bodies are small (16 KB), each address may send a
/// few (then one every 3 s), and only the report's known fields are logged, as fields (the
/// logger escapes every value, so a report cannot forge log lines).
async fn csp_report(axum::extract::State(state): axum::extract::State<AppState>, request: Request) -> StatusCode {
    const BODY_LIMIT: usize = 16 * 1024;
    static LAST_LOGGED_MS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
    let (parts, body) = request.into_parts();
    if state.rate_limits.check_csp_report(crate::ingest::access::client_ip(&state, &parts)).is_err() {
        return StatusCode::TOO_MANY_REQUESTS;
    }
    let body = match crate::body::read_limited(&parts.headers, body, BODY_LIMIT).await {
        Ok(body) => body,
        Err(crate::body::BodyError::TooLarge) => return StatusCode::PAYLOAD_TOO_LARGE,
        Err(crate::body::BodyError::Unreadable) => return StatusCode::BAD_REQUEST,
    };
    let now = svc_core::time::now_ms();
    let last = LAST_LOGGED_MS.load(std::sync::atomic::Ordering::Relaxed);
    if now - last >= 1000
        && LAST_LOGGED_MS
            .compare_exchange(last, now, std::sync::atomic::Ordering::Relaxed, std::sync::atomic::Ordering::Relaxed)
            .is_ok()
    {
        let report: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let report = report.get("csp-report").unwrap_or(&report);
        let field = |name: &str| report.get(name).and_then(serde_json::Value::as_str).unwrap_or("").to_string();
        tracing::warn!(
            directive = field("violated-directive"),
            blocked = field("blocked-uri"),
            page = field("document-uri"),
            "content security policy violation reported by a browser"
        );
    }
    StatusCode::NO_CONTENT
}

/// Renders a page with a status.
fn render(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(error) => PageError::Internal(error.into()).into_response(),
    }
}

/// A form that carries the session's CSRF token in a field named `_csrf`.
pub trait CsrfField {
    fn csrf(&self) -> &str;
}

/// Implements [`CsrfField`] for forms that keep the token in a field `csrf` (`_csrf` on the wire).
macro_rules! csrf_forms {
    ($($form:ty),* $(,)?) => {
        $(impl $crate::dashboard::CsrfField for $form {
            fn csrf(&self) -> &str {
                &self.csrf
            }
        })*
    };
}
pub(crate) use csrf_forms;

/// A signed-in person and the form they submitted, its CSRF token checked (the origin is
/// checked by [`Person`]): the extractor of every state-changing dashboard form.
pub struct Submitted<T>(pub Person, pub T);

impl<T: DeserializeOwned + CsrfField + Send> FromRequest<AppState> for Submitted<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let person = <Person as axum::extract::FromRequestParts<AppState>>::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let request = Request::from_parts(parts, body);
        let bytes = axum::body::Bytes::from_request(request, state).await.map_err(IntoResponse::into_response)?;
        let form: T = serde_html_form::from_bytes(&bytes)
            .map_err(|error| PageError::BadRequest(format!("The form could not be read: {error}")).into_response())?;
        person.check_csrf(form.csrf()).map_err(IntoResponse::into_response)?;
        Ok(Submitted(person, form))
    }
}
