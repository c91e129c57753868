//! The OAuth consent page (`/authorize`): an application a person is connecting to the tool
//! endpoint asks for access; the person, signed in (or sent to sign in and brought back), sees the
//! application's name and where it will be sent back to, chooses one project or a whole
//! organization and read-only or read plus triage, and allows or denies. Allowing sends a code to
//! the application's redirect URI; `/token` trades it for the key `OAuth: <client>`.
//!
//! The application's name is chosen by whoever registered it: it is shown as text, never markup,
//! and the page says where the answer goes, which the application cannot disguise.

use askama::Template;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde::Deserialize;
use svc_core::oauth::{Access, GrantTarget};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::session::Person;
use super::{CONTENT_SECURITY_POLICY, Submitted, render};
use crate::state::AppState;
use svc_service::oauth::{self as service, AuthorizationRequest, AuthorizeParams, AuthorizeProblem, Endpoints};

struct ProjectChoice {
    value: String,
    name: String,
    org_name: String,
}

struct OrgChoice {
    value: String,
    name: String,
}

#[derive(Template)]
#[template(path = "dashboard/consent.html")]
struct ConsentPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    client_name: String,
    redirect_host: String,
    /// The pending authorization request, opaque to the browser (its parameters, re-checked when
    /// the form comes back).
    request: String,
    projects: Vec<ProjectChoice>,
    orgs: Vec<OrgChoice>,
    /// The form value of the grant ticked.
    grant: String,
    /// `read` or `triage`: the access ticked.
    access: &'static str,
    key_name: String,
    error: Option<String>,
}

/// The handle of a pending request: its query string, base64url.
fn handle(query: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(query.as_bytes())
}

fn endpoints(state: &AppState) -> Endpoints {
    state.config.oauth_endpoints()
}

/// A 303 to `location`.
fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => (StatusCode::SEE_OTHER, [(header::LOCATION, value)]).into_response(),
        Err(_) => PageError::BadRequest("The application's redirect address cannot be used.".into()).into_response(),
    }
}

/// A refused authorization request, on a page of Svc's own: nothing is ever redirected
/// automatically from here (RFC 6749 §4.1.2.1 and OAuth 2.1 §4.1.2.1 forbid it while the client or
/// its redirect URI is unchecked, and a request nobody has seen must not turn Svc into a
/// redirector for whoever registered a client). When the client and its redirect URI are valid,
/// the person may take the error back to the application with a click.
#[derive(Template)]
#[template(path = "dashboard/authorize_error.html")]
struct RefusedPage {
    assets: &'static Assets,
    message: String,
    client_name: String,
    redirect_host: String,
    /// The application's redirect URI carrying `error`, `error_description`, `state` and `iss`.
    back: String,
}

/// Reads and checks an authorization request (its query string); a refusal is a page of Svc's.
async fn check(state: &AppState, query: &str) -> Result<AuthorizationRequest, Response> {
    let Ok(params) = serde_html_form::from_str::<AuthorizeParams>(query) else {
        return Err(PageError::BadRequest("The authorization request could not be read.".into()).into_response());
    };
    let endpoints = endpoints(state);
    match service::check_request(&state.service, &endpoints, &params).await {
        Ok(request) => Ok(request),
        Err(AuthorizeProblem::NoRedirect(message)) => Err(PageError::BadRequest(message).into_response()),
        Err(AuthorizeProblem::Redirect { client, redirect_uri, state: client_state, error, description }) => {
            let mut pairs = vec![("error", error), ("error_description", description.as_str())];
            if let Some(client_state) = client_state.as_deref() {
                pairs.push(("state", client_state));
            }
            let page = RefusedPage {
                assets: assets::get(),
                message: format!("The request of {} cannot be answered: {description}.", client.client_name),
                redirect_host: svc_core::oauth::redirect_host(&redirect_uri),
                client_name: client.client_name,
                back: service::redirect_with(&redirect_uri, &pairs, &endpoints.issuer),
            };
            Err(render(StatusCode::BAD_REQUEST, &page))
        }
        Err(AuthorizeProblem::Internal(error)) => Err(PageError::from(error).into_response()),
    }
}

/// The page's policy: the dashboard's, with the form allowed to lead on to the application's
/// redirect URI (browsers apply `form-action` to the redirect that answers the form).
fn policy_for(redirect_uri: &str) -> HeaderValue {
    let source = form_action_source(redirect_uri);
    let policy = CONTENT_SECURITY_POLICY.replace("form-action 'self'", &format!("form-action 'self' {source}"));
    HeaderValue::from_str(&policy).unwrap_or(HeaderValue::from_static(CONTENT_SECURITY_POLICY))
}

/// The CSP source that allows a redirect URI: its origin for http(s) with a host name or IPv4
/// address, else its scheme (private-use schemes; IPv6 literals, which CSP cannot name).
fn form_action_source(redirect_uri: &str) -> String {
    let Ok(url) = url::Url::parse(redirect_uri) else { return "'none'".into() };
    let scheme = url.scheme().to_string();
    let origin = url.origin().ascii_serialization();
    let plain = |text: &str| text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b':' | b'/' | b'-'));
    let is_http = scheme == "http" || scheme == "https";
    if is_http && !origin.contains('[') && plain(&origin) {
        origin
    } else if plain(&scheme) {
        format!("{scheme}:")
    } else {
        "'none'".into()
    }
}

async fn consent_page(
    state: &AppState,
    person: &Person,
    request: &AuthorizationRequest,
    handle: String,
    chosen: Option<(String, Access)>,
    error: Option<String>,
) -> PageResult<ConsentPage> {
    let choices = service::choices(&state.service, &person.signed_in).await?;
    let projects: Vec<ProjectChoice> = choices
        .projects
        .into_iter()
        .map(|(project, org_name)| ProjectChoice {
            value: GrantTarget::Project(project.id).form_value(),
            name: project.name,
            org_name,
        })
        .collect();
    let orgs: Vec<OrgChoice> = choices
        .orgs
        .into_iter()
        .map(|org| OrgChoice { value: GrantTarget::Org(org.id).form_value(), name: org.name })
        .collect();
    let (grant, access) = chosen.unwrap_or_else(|| {
        let first = projects.first().map(|p| p.value.clone()).or_else(|| orgs.first().map(|o| o.value.clone()));
        (first.unwrap_or_default(), request.access_hint)
    });
    Ok(ConsentPage {
        assets: assets::get(),
        section: "consent",
        csrf: person.csrf.clone(),
        me: person.signed_in.user.label().to_string(),
        client_name: request.client.client_name.clone(),
        redirect_host: request.redirect_host(),
        request: handle,
        projects,
        orgs,
        grant,
        access: access.as_str(),
        key_name: svc_core::oauth::key_name(&request.client.client_name),
        error,
    })
}

fn with_policy(mut response: Response, redirect_uri: &str) -> Response {
    response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, policy_for(redirect_uri));
    response
}

/// `GET /authorize`: checks the request, then shows the consent page to the signed-in person
/// (someone not signed in signs in first and comes back here).
pub async fn page(State(state): State<AppState>, mut parts: Parts) -> Response {
    let query = parts.uri.query().unwrap_or_default().to_string();
    let request = match check(&state, &query).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let person = match Person::from_request_parts(&mut parts, &state).await {
        Ok(person) => person,
        Err(error) => return error.into_response(),
    };
    match consent_page(&state, &person, &request, handle(&query), None, None).await {
        Ok(view) => with_policy(render(StatusCode::OK, &view), &request.redirect_uri),
        Err(error) => error.into_response(),
    }
}

#[derive(Deserialize)]
pub struct ConsentForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    request: String,
    #[serde(default)]
    grant: String,
    #[serde(default)]
    access: String,
    #[serde(default)]
    decision: String,
}

super::csrf_forms!(ConsentForm);

/// `POST /authorize`: the person's answer. Allow sends `code`, `state` and `iss` to the
/// application's redirect URI; Deny sends `error=access_denied`.
pub async fn decide(State(state): State<AppState>, Submitted(person, form): Submitted<ConsentForm>) -> Response {
    let query = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(form.request.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    let Some(query) = query else {
        return PageError::BadRequest("The authorization request could not be read. Start connecting again.".into())
            .into_response();
    };
    let request = match check(&state, &query).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let issuer = endpoints(&state).issuer;
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    match form.decision.as_str() {
        "deny" => {
            pairs.push(("error", "access_denied"));
            if let Some(client_state) = request.state.as_deref() {
                pairs.push(("state", client_state));
            }
            see_other(&service::redirect_with(&request.redirect_uri, &pairs, &issuer))
        }
        "approve" => {
            let chosen = GrantTarget::parse(&form.grant).and_then(|target| Ok((target, Access::parse(&form.access)?)));
            let refused = match chosen {
                Ok((target, access)) => {
                    match service::approve(&state.service, &person.signed_in, &request, &target, access).await {
                        Ok(code) => {
                            pairs.push(("code", code.expose()));
                            if let Some(client_state) = request.state.as_deref() {
                                pairs.push(("state", client_state));
                            }
                            return see_other(&service::redirect_with(&request.redirect_uri, &pairs, &issuer));
                        }
                        Err(svc_service::ServiceError::NotFound(message)) => message,
                        Err(error) => return PageError::from(error).into_response(),
                    }
                }
                Err(_) => "Choose what it may reach and what it may do.".to_string(),
            };
            let chosen = Access::parse(&form.access).ok().map(|access| (form.grant.clone(), access));
            match consent_page(&state, &person, &request, form.request.clone(), chosen, Some(refused)).await {
                Ok(view) => with_policy(render(StatusCode::BAD_REQUEST, &view), &request.redirect_uri),
                Err(error) => error.into_response(),
            }
        }
        _ => PageError::BadRequest("Choose Allow or Deny.".into()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_may_lead_on_to_the_redirect_uri_only() {
        assert_eq!(form_action_source("http://127.0.0.1:9999/callback"), "http://127.0.0.1:9999");
        assert_eq!(form_action_source("https://claude.ai/api/mcp/auth_callback"), "https://claude.ai");
        assert_eq!(form_action_source("http://[::1]:8000/cb"), "http:");
        assert_eq!(form_action_source("cursor://anysphere.cursor-mcp/oauth/callback"), "cursor:");
        let policy = policy_for("http://localhost:8787/callback");
        assert!(policy.to_str().unwrap().contains("form-action 'self' http://localhost:8787;"), "{policy:?}");
    }
}
