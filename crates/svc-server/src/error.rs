//! The REST surface's error: `{error, code}` with the spec's status codes. Internal failures are
//! logged with their detail and answered with a generic message carrying the request id.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use svc_store::StoreError;

use crate::principal::{AuthError, Refusal};
use svc_service::ServiceError;

#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    Unauthorized(String),
    Forbidden(String),
    NotFound(String),
    Conflict(String),
    PayloadTooLarge(String),
    RateLimited {
        retry_after_secs: u64,
    },
    /// A service Svc called on the caller's behalf (an issue tracker) refused or failed; the
    /// message says what to change.
    Upstream(String),
    Internal(anyhow::Error),
}

/// `{error, code}`: the body of every REST error.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for a person.
    pub error: String,
    /// `BAD_REQUEST`, `UNAUTHORIZED`, `FORBIDDEN`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`, `CONFLICT`,
    /// `PAYLOAD_TOO_LARGE`, `RATE_LIMITED`, `UPSTREAM` (an issue tracker refused or failed) or
    /// `INTERNAL`.
    pub code: String,
}

/// Marks a response as an internal failure. The request-id layer (see `lib.rs`) replaces it with
/// what this function builds for the request's id, so every surface's 500 names the request in
/// that surface's own shape.
#[derive(Clone, Copy)]
pub struct InternalErrorMarker(pub fn(&str) -> Response);

/// REST's internal failure: `{error: "internal error (request <id>)", code: "INTERNAL"}`.
pub fn internal_response(request_id: &str) -> Response {
    let body = ErrorBody { error: format!("internal error (request {request_id})"), code: "INTERNAL".into() };
    let mut response = (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
    response.extensions_mut().insert(InternalErrorMarker(internal_response));
    response
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::BadRequest(message.into())
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::NotFound(message.into())
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::Forbidden(message.into())
    }
    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        ApiError::Internal(error.into())
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Conflict(what) => ApiError::Conflict(what),
            StoreError::NotFound => ApiError::NotFound("not found".into()),
            other => ApiError::Internal(other.into()),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::Invalid(message) => ApiError::BadRequest(message),
            ServiceError::NotFound(message) => ApiError::NotFound(message),
            ServiceError::Conflict(message) => ApiError::Conflict(message),
            ServiceError::Refused(refusal) => refusal.into(),
            ServiceError::Store(error) => error.into(),
            ServiceError::Internal(message) => ApiError::Internal(anyhow::anyhow!(message)),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Unauthenticated(failure) => ApiError::Unauthorized(failure.message().into()),
            AuthError::RateLimited(secs) => ApiError::RateLimited { retry_after_secs: secs },
            AuthError::Internal(error) => ApiError::Internal(error),
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::MissingScope(needed) => ApiError::forbidden(format!("this key lacks the scope {needed}")),
            Refusal::OtherProject => ApiError::forbidden("this key belongs to another project"),
        }
    }
}

impl From<svc_core::Invalid> for ApiError {
    fn from(error: svc_core::Invalid) -> Self {
        ApiError::BadRequest(error.0)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, "BAD_REQUEST", m),
            ApiError::Unauthorized(m) => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED", m),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, "FORBIDDEN", m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "NOT_FOUND", m),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, "CONFLICT", m),
            ApiError::PayloadTooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE", m),
            ApiError::Upstream(m) => (StatusCode::BAD_GATEWAY, "UPSTREAM", m),
            ApiError::RateLimited { retry_after_secs } => {
                let body = ErrorBody { error: "rate limit exceeded".into(), code: "RATE_LIMITED".into() };
                let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs.max(1)));
                return response;
            }
            ApiError::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "internal error");
                return internal_response("-");
            }
        };
        let mut response = (status, axum::Json(ErrorBody { error: message, code: code.into() })).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
