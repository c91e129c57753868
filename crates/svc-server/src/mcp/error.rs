//! The tool endpoint's errors at the HTTP level, each a JSON-RPC error object with its status:
//! authentication (401 with `WWW-Authenticate` naming the OAuth discovery document, see
//! [`McpError::respond`]), rate limit (429 with `Retry-After`), a body that
//! cannot be read or parsed, and internal failures (500 naming the request id). Errors inside a
//! call (an unknown method, a bad argument) are answers, built in `jsonrpc` and `tools`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::jsonrpc::{self, error};
use crate::error::InternalErrorMarker;
use crate::principal::{AuthError, Refusal};

#[derive(Debug)]
pub enum McpError {
    Unauthenticated(&'static str),
    RateLimited {
        retry_after_secs: u64,
    },
    /// The body is over the limit.
    TooLarge,
    /// The body could not be read, or is not JSON.
    Parse(&'static str),
    /// A browser page of an origin that may not call the endpoint (HTTP 403; DNS-rebinding defence).
    ForeignOrigin,
    /// A scope the call needs (HTTP 403), answered with the call's id.
    Forbidden {
        id: Value,
        needed: &'static str,
    },
    Internal(anyhow::Error),
}

impl From<AuthError> for McpError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Unauthenticated(failure) => McpError::Unauthenticated(failure.message()),
            AuthError::RateLimited(secs) => McpError::RateLimited { retry_after_secs: secs },
            AuthError::Internal(error) => McpError::Internal(error),
        }
    }
}

impl McpError {
    /// A refused scope check for the call `id`. The tool endpoint names no project in a check (a
    /// principal's reach is the projects it was given), so only a missing scope can come back.
    pub fn refused(id: Value, refusal: Refusal) -> Self {
        match refusal {
            Refusal::MissingScope(needed) => McpError::Forbidden { id, needed },
            Refusal::OtherProject => McpError::Internal(anyhow::anyhow!("a tool call named a project out of reach")),
        }
    }

    /// The JSON-RPC error and HTTP status of this error, for a batch or a single answer.
    pub fn answer(self) -> (StatusCode, Value) {
        match self {
            McpError::Unauthenticated(message) => {
                (StatusCode::UNAUTHORIZED, error(Value::Null, jsonrpc::UNAUTHORIZED, message))
            }
            McpError::RateLimited { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, error(Value::Null, jsonrpc::INTERNAL_ERROR, "rate limit exceeded"))
            }
            McpError::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                error(Value::Null, jsonrpc::INVALID_REQUEST, "request too large: the body is limited to 1 MB"),
            ),
            McpError::Parse(message) => (StatusCode::BAD_REQUEST, error(Value::Null, jsonrpc::PARSE_ERROR, message)),
            McpError::ForeignOrigin => (
                StatusCode::FORBIDDEN,
                error(
                    Value::Null,
                    jsonrpc::FORBIDDEN,
                    "forbidden: pages of this origin may not call the tool endpoint (see SVC_MCP_ALLOWED_ORIGINS)",
                ),
            ),
            McpError::Forbidden { id, needed } => {
                (StatusCode::FORBIDDEN, error(id, jsonrpc::FORBIDDEN, &format!("forbidden: this key lacks {needed}")))
            }
            McpError::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "tool endpoint internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, internal_body("-"))
            }
        }
    }
}

/// The body of an internal failure, naming the request so a user can quote it.
fn internal_body(request_id: &str) -> Value {
    error(Value::Null, jsonrpc::INTERNAL_ERROR, &format!("internal error (request {request_id})"))
}

/// An internal failure (a panic included) answered as a JSON-RPC error; the request-id layer
/// names the request in it.
pub fn internal_response(request_id: &str) -> Response {
    let mut response = (StatusCode::INTERNAL_SERVER_ERROR, Json(internal_body(request_id))).into_response();
    response.extensions_mut().insert(InternalErrorMarker(internal_response));
    response
}

impl McpError {
    /// The response, where a 401 names the protected-resource metadata (RFC 9728) so an OAuth
    /// client can discover how to connect: `WWW-Authenticate: Bearer resource_metadata="<url>"`.
    pub fn respond(self, resource_metadata_url: &str) -> Response {
        let unauthenticated = matches!(self, McpError::Unauthenticated(_));
        let mut response = self.into_response();
        if unauthenticated
            && let Ok(challenge) =
                HeaderValue::from_str(&format!("Bearer resource_metadata=\"{resource_metadata_url}\""))
        {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

impl IntoResponse for McpError {
    fn into_response(self) -> Response {
        let retry_after = match &self {
            McpError::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        };
        let unauthenticated = matches!(self, McpError::Unauthenticated(_));
        let internal = matches!(self, McpError::Internal(_));
        let (status, body) = self.answer();
        if internal {
            return internal_response("-");
        }
        let mut response = (status, Json(body)).into_response();
        if unauthenticated {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
        }
        response
    }
}
