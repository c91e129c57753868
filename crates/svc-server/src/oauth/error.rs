//! OAuth's own error shape (RFC 6749 §5.2, RFC 7591 §3.2.2): `{error, error_description}` with
//! `Cache-Control: no-store`; internal failures are `server_error` naming the request.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::InternalErrorMarker;
use svc_service::oauth::OAuthFailure;

#[derive(Debug)]
pub enum OAuthError {
    /// 400 with an RFC error code.
    Refused {
        error: &'static str,
        description: String,
    },
    /// Too many registrations from one address.
    RateLimited {
        retry_after_secs: u64,
    },
    /// The body is over its limit.
    TooLarge,
    Internal(anyhow::Error),
}

impl OAuthError {
    pub fn refused(error: &'static str, description: impl Into<String>) -> Self {
        OAuthError::Refused { error, description: description.into() }
    }
}

impl From<OAuthFailure> for OAuthError {
    fn from(failure: OAuthFailure) -> Self {
        match failure {
            OAuthFailure::Refused { error, description } => OAuthError::Refused { error, description },
            OAuthFailure::Internal(error) => OAuthError::Internal(error.into()),
        }
    }
}

fn body(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = (status, Json(json!({"error": error, "error_description": description}))).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An internal failure (a panic included) in OAuth's shape; the request-id layer names the
/// request in it.
pub fn internal_response(request_id: &str) -> Response {
    let mut response =
        body(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &format!("internal error (request {request_id})"));
    response.extensions_mut().insert(InternalErrorMarker(internal_response));
    response
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        match self {
            OAuthError::Refused { error, description } => body(StatusCode::BAD_REQUEST, error, &description),
            OAuthError::RateLimited { retry_after_secs } => {
                let mut response = body(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "too many registrations from this address: try again later",
                );
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs.max(1)));
                response
            }
            OAuthError::TooLarge => body(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request", "the body is too large"),
            OAuthError::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "OAuth internal error");
                internal_response("-")
            }
        }
    }
}
