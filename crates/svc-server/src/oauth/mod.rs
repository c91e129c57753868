//! OAuth for the tool endpoint, the machine side: discovery documents (RFC 9728 protected-resource
//! metadata, RFC 8414 authorization-server metadata), dynamic client registration (RFC 7591,
//! `/register`) and the code exchange (`/token`). All of it unauthenticated, readable from any
//! origin (CORS `*`, no credentials) and never redirected. The person's side (`/authorize`, the
//! consent page) is the dashboard's: it needs the session (`dashboard/consent.rs`).
//!
//! Everything is built from `SVC_PUBLIC_URL`: the issuer is exactly that URL (no trailing slash)
//! and the resource is `<issuer>/mcp`.

pub mod error;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tower_http::cors::{Any, CorsLayer};

use crate::body::{BodyError, read_limited};
use crate::state::AppState;
use error::OAuthError;
use svc_service::oauth::{self as service, CodeExchange, Endpoints};

/// Registration and token requests are small forms and JSON objects.
const BODY_LIMIT: usize = 64 * 1024;

pub fn router() -> axum::Router<AppState> {
    let cors = CorsLayer::new().allow_origin(Any).allow_methods([Method::GET, Method::POST]).allow_headers([
        header::CONTENT_TYPE,
        header::AUTHORIZATION,
        header::HeaderName::from_static("mcp-protocol-version"),
    ]);
    let routes = axum::Router::new()
        .route("/.well-known/oauth-protected-resource", get(resource_metadata))
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/.well-known/oauth-authorization-server", get(server_metadata))
        .route("/.well-known/openid-configuration", get(server_metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .layer(cors);
    crate::catch_panics(routes, error::internal_response)
}

fn endpoints(state: &AppState) -> Endpoints {
    state.config.oauth_endpoints()
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`
async fn resource_metadata(State(state): State<AppState>) -> Json<Value> {
    Json(endpoints(&state).resource_metadata())
}

/// `GET /.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`
async fn server_metadata(State(state): State<AppState>) -> Json<Value> {
    Json(endpoints(&state).server_metadata())
}

async fn read_body(parts: &Parts, body: Body) -> Result<axum::body::Bytes, OAuthError> {
    read_limited(&parts.headers, body, BODY_LIMIT).await.map_err(|error| match error {
        BodyError::TooLarge => OAuthError::TooLarge,
        BodyError::Unreadable => OAuthError::refused("invalid_request", "the body could not be read"),
    })
}

/// `POST /register` (RFC 7591): a public client with its redirect URIs. Answers 201 with the
/// registration, the redirect URIs echoed; unknown metadata is ignored, and whatever auth method
/// is asked for, the client is public (`none`, no secret). Rate limited per client address.
async fn register(State(state): State<AppState>, parts: Parts, body: Body) -> Result<Response, OAuthError> {
    if let Some(ip) = crate::ingest::access::client_ip(&state, &parts) {
        state
            .rate_limits
            .check_registration(ip)
            .map_err(|retry_after_secs| OAuthError::RateLimited { retry_after_secs })?;
    }
    let bytes = read_body(&parts, body).await?;
    let metadata = || OAuthError::refused("invalid_client_metadata", "the body must be a JSON object");
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&bytes) else { return Err(metadata()) };
    let redirect_uris: Vec<String> = match fields.get("redirect_uris") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(String::from))
            .collect::<Option<_>>()
            .ok_or_else(|| OAuthError::refused("invalid_redirect_uri", "redirect_uris must be strings"))?,
        _ => return Err(OAuthError::refused("invalid_redirect_uri", "redirect_uris must be an array of URIs")),
    };
    let client_name = match fields.get("client_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => return Err(OAuthError::refused("invalid_client_metadata", "client_name must be a string")),
    };
    let client = service::register(&state.service, client_name, &redirect_uris).await?;
    let answer = json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.created_at / 1000,
        "client_name": client.client_name,
        "redirect_uris": client.redirect_uris,
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    let mut response = (StatusCode::CREATED, Json(answer)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `POST /token` (form): `grant_type=authorization_code` with `code`, `redirect_uri`,
/// `client_id`, `code_verifier` and optionally `resource`. Answers the new key's secret as the
/// access token, with no refresh token: the key lives until it is revoked.
async fn token(State(state): State<AppState>, parts: Parts, body: Body) -> Result<Response, OAuthError> {
    let bytes = read_body(&parts, body).await?;
    let mut fields: Vec<(String, String)> = Vec::new();
    for (name, value) in url::form_urlencoded::parse(&bytes) {
        if fields.iter().any(|(seen, _)| *seen == name) {
            return Err(OAuthError::refused("invalid_request", format!("{name} is given more than once")));
        }
        fields.push((name.into_owned(), value.into_owned()));
    }
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    let required = |name: &'static str| {
        field(name).ok_or_else(|| OAuthError::refused("invalid_request", format!("{name} is required")))
    };
    match field("grant_type") {
        Some("authorization_code") => {}
        Some(other) => {
            return Err(OAuthError::refused(
                "unsupported_grant_type",
                format!("grant_type {other} is not supported: only authorization_code (there are no refresh tokens)"),
            ));
        }
        None => return Err(OAuthError::refused("invalid_request", "grant_type is required")),
    }
    let request = CodeExchange {
        client_id: required("client_id")?,
        code: required("code")?,
        redirect_uri: required("redirect_uri")?,
        code_verifier: required("code_verifier")?,
        resource: field("resource"),
    };
    let (key, secret) = service::exchange(&state.service, &endpoints(&state), request).await?;
    let answer = json!({
        "access_token": secret.expose(),
        "token_type": "Bearer",
        "scope": key.scopes.join(" "),
    });
    let mut response = (StatusCode::OK, Json(answer)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    Ok(response)
}
