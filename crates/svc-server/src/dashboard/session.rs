//! The dashboard's session cookie and its defences against cross-site requests.
//!
//! The cookie holds a random token (only its SHA-256 is stored); it is `HttpOnly`, `SameSite=Lax`,
//! and `Secure` with the `__Host-` prefix when the public URL is https. Every state-changing
//! request must come from the dashboard's own origin (`Sec-Fetch-Site`, else `Origin`) and, once
//! signed in, carry the session's CSRF token (a hidden form field or the `x-csrf-token` header),
//! which is derived from the session token, so nothing more is stored.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use sha2::{Digest, Sha256};
use svc_core::account::SESSION_LIFETIME_MS;
use svc_core::secret::constant_time_eq;

use super::error::PageError;
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::accounts::{self, SignedIn};

const PLAIN_COOKIE: &str = "svc_session";
const SECURE_COOKIE: &str = "__Host-svc_session";

/// Whether the dashboard is served over https (then cookies are `Secure`).
fn secure(state: &AppState) -> bool {
    state.config.public_url.starts_with("https://")
}

fn cookie_name(state: &AppState) -> &'static str {
    if secure(state) { SECURE_COOKIE } else { PLAIN_COOKIE }
}

/// The `Set-Cookie` value that starts a session.
pub fn session_cookie(state: &AppState, token: &str) -> HeaderValue {
    let secure = if secure(state) { "; Secure" } else { "" };
    let max_age = SESSION_LIFETIME_MS / 1000;
    HeaderValue::from_str(&format!(
        "{}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
        cookie_name(state)
    ))
    .expect("a session token is a valid header value")
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn cleared_cookie(state: &AppState) -> HeaderValue {
    let secure = if secure(state) { "; Secure" } else { "" };
    HeaderValue::from_str(&format!("{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}", cookie_name(state)))
        .expect("a valid header value")
}

/// The session token from the `Cookie` header, if any.
pub fn session_token<'a>(state: &AppState, headers: &'a HeaderMap) -> Option<&'a str> {
    cookie(headers, cookie_name(state))
}

/// The value of the cookie `wanted` in the `Cookie` header, if any.
pub fn cookie<'a>(headers: &'a HeaderMap, wanted: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == wanted)
        .map(|(_, value)| value)
}

/// The CSRF token of a session: derived from the session token, so a page can embed it and the
/// server can check it without storing anything.
pub fn csrf_token(session_token: &str) -> String {
    let digest = Sha256::digest(format!("svc-dashboard-csrf:{session_token}").as_bytes());
    hex::encode(&digest[..16])
}

/// Whether a state-changing request comes from the dashboard's own pages: browsers say so in
/// `Sec-Fetch-Site`; older ones send `Origin`, which must be this server (its public URL or the
/// `Host` it was reached at). A request with neither header is not from a browser, and a
/// cross-site page cannot make a browser omit both.
pub fn same_origin(state: &AppState, headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin";
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else { return true };
    if origin == state.config.public_url.trim_end_matches('/') {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    !host.is_empty() && (origin == format!("http://{host}") || origin == format!("https://{host}"))
}

/// [`same_origin`], or the dashboard's refusal.
pub fn require_same_origin(state: &AppState, headers: &HeaderMap) -> Result<(), PageError> {
    if same_origin(state, headers) {
        Ok(())
    } else {
        Err(PageError::Forbidden("This request did not come from the dashboard.".into()))
    }
}

/// A signed-in person, for pages that need one. Without a live session the request is sent to
/// the sign-in page (and back afterwards); a state-changing request must also pass the origin and
/// CSRF checks (the token is checked by [`Person::check_csrf`] once the form is read).
pub struct Person {
    pub signed_in: SignedIn,
    pub csrf: String,
}

impl Person {
    pub fn principal(&self) -> Principal {
        Principal::User(Box::new(self.signed_in.clone()))
    }

    /// Checks a submitted CSRF token (form field or header) in constant time.
    pub fn check_csrf(&self, submitted: &str) -> Result<(), PageError> {
        if constant_time_eq(submitted.as_bytes(), self.csrf.as_bytes()) {
            Ok(())
        } else {
            Err(PageError::Forbidden("This form has expired. Reload the page and try again.".into()))
        }
    }
}

impl FromRequestParts<AppState> for Person {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let not_signed_in = || {
            let back = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
            PageError::SignIn { next: if parts.method == Method::GET { back } else { "/".into() } }
        };
        let Some(token) = session_token(state, &parts.headers) else { return Err(not_signed_in()) };
        let Some(signed_in) = accounts::resolve_session(&state.service, token).await? else {
            return Err(not_signed_in());
        };
        let changes_state = !matches!(parts.method, Method::GET | Method::HEAD);
        if changes_state {
            require_same_origin(state, &parts.headers)?;
        }
        let csrf = csrf_token(token);
        let person = Person { signed_in, csrf };
        if changes_state && let Some(header_token) = parts.headers.get("x-csrf-token").and_then(|v| v.to_str().ok()) {
            person.check_csrf(header_token)?;
        }
        Ok(person)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csrf_tokens_differ_per_session() {
        assert_ne!(csrf_token("svs_a"), csrf_token("svs_b"));
        assert_eq!(csrf_token("svs_a").len(), 32);
    }
}
