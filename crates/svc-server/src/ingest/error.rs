//! The ingest surface's error: `{error: <code>}` with the spec's status codes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use svc_core::ingest::Rejection;

#[derive(Debug)]
pub enum IngestError {
    /// A known code with its status (`kind_invalid`, `blocks_invalid`, ...).
    Code(StatusCode, &'static str),
    /// A known code with more fields in its body (`{error, triesLeft}`).
    Detailed(StatusCode, &'static str, serde_json::Map<String, serde_json::Value>),
    RateLimited {
        retry_after_secs: u64,
    },
    Internal(anyhow::Error),
}

impl IngestError {
    pub const INVALID_KEY_OR_ORIGIN: IngestError =
        IngestError::Code(StatusCode::UNAUTHORIZED, "invalid_project_key_or_origin");
    pub const KIND_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "kind_invalid");
    pub const FILE_REQUIRED: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "file_required");
    pub const DURATION_TOO_LONG: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "duration_too_long");
    pub const TOO_LARGE: IngestError = IngestError::Code(StatusCode::PAYLOAD_TOO_LARGE, "block_too_large");
    pub const MIME_NOT_ALLOWED: IngestError = IngestError::Code(StatusCode::UNSUPPORTED_MEDIA_TYPE, "mime_not_allowed");
    pub const BLOCKS_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "blocks_invalid");
    pub const BLOB_ID_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "blob_id_invalid");
    pub const CHANNEL_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "channel_invalid");
    pub const CONTEXT_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "context_invalid");
    pub const BLOB_MIME_MISMATCH: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "blob_mime_mismatch");
    pub const BLOB_PROJECT_MISMATCH: IngestError = IngestError::Code(StatusCode::FORBIDDEN, "blob_project_mismatch");
    pub const BLOB_NOT_FOUND: IngestError = IngestError::Code(StatusCode::NOT_FOUND, "blob_not_found");
    pub const BLOB_ALREADY_USED: IngestError = IngestError::Code(StatusCode::CONFLICT, "blob_already_used");
    // Reporter sign-in and the reporter's thread (docs/widget.md).
    pub const EMAIL_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "email_invalid");
    pub const BODY_INVALID: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "body_invalid");
    pub const SIGN_IN_NOT_OFFERED: IngestError = IngestError::Code(StatusCode::FORBIDDEN, "sign_in_not_offered");
    pub const CODE_MALFORMED: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "code_malformed");
    pub const CODE_EXPIRED: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "code_expired");
    pub const TOO_MANY_TRIES: IngestError = IngestError::Code(StatusCode::BAD_REQUEST, "too_many_tries");
    pub const SESSION_INVALID: IngestError = IngestError::Code(StatusCode::UNAUTHORIZED, "session_invalid");
    pub const REPORTER_TOKEN_INVALID: IngestError =
        IngestError::Code(StatusCode::UNAUTHORIZED, "reporter_token_invalid");
    pub const REPORT_NOT_FOUND: IngestError = IngestError::Code(StatusCode::NOT_FOUND, "report_not_found");
    pub const NOT_FIXED: IngestError = IngestError::Code(StatusCode::CONFLICT, "not_fixed");

    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        IngestError::Internal(error.into())
    }
}

/// A body that fails its schema: the code, and a `message` naming the field at fault
/// (`blocks[1].text: must be 1 to 10000 characters`).
impl From<Rejection> for IngestError {
    fn from(rejection: Rejection) -> Self {
        let mut detail = serde_json::Map::new();
        detail.insert("message".into(), rejection.message().into());
        IngestError::Detailed(StatusCode::BAD_REQUEST, rejection.code(), detail)
    }
}

impl From<svc_store::StoreError> for IngestError {
    fn from(error: svc_store::StoreError) -> Self {
        IngestError::Internal(error.into())
    }
}

impl From<svc_service::ServiceError> for IngestError {
    /// Ingest reads only what its key reaches: any service failure here is the server's.
    fn from(error: svc_service::ServiceError) -> Self {
        IngestError::Internal(error.into())
    }
}

impl From<svc_service::reporters::ReporterError> for IngestError {
    fn from(error: svc_service::reporters::ReporterError) -> Self {
        use svc_service::ServiceError;
        use svc_service::reporters::ReporterError;
        match error {
            ReporterError::NotOffered => IngestError::SIGN_IN_NOT_OFFERED,
            ReporterError::TooManyCodes { retry_after_secs } => IngestError::RateLimited { retry_after_secs },
            ReporterError::CodeInvalid { tries_left } => {
                let mut detail = serde_json::Map::new();
                detail.insert("triesLeft".into(), tries_left.into());
                IngestError::Detailed(StatusCode::BAD_REQUEST, "code_invalid", detail)
            }
            ReporterError::CodeMalformed => IngestError::CODE_MALFORMED,
            ReporterError::CodeExpired => IngestError::CODE_EXPIRED,
            ReporterError::TooManyTries => IngestError::TOO_MANY_TRIES,
            ReporterError::SessionInvalid => IngestError::SESSION_INVALID,
            ReporterError::TokenInvalid => IngestError::REPORTER_TOKEN_INVALID,
            ReporterError::NotYours => IngestError::REPORT_NOT_FOUND,
            ReporterError::NotFixed => IngestError::NOT_FIXED,
            // The only input a reporter's request carries that the service checks: code, text, note.
            ReporterError::Service(ServiceError::Invalid(_)) => IngestError::BODY_INVALID,
            ReporterError::Service(other) => other.into(),
        }
    }
}

impl IntoResponse for IngestError {
    fn into_response(self) -> Response {
        match self {
            IngestError::Code(status, code) => (status, axum::Json(json!({"error": code}))).into_response(),
            IngestError::Detailed(status, code, mut detail) => {
                detail.insert("error".into(), code.into());
                (status, axum::Json(serde_json::Value::Object(detail))).into_response()
            }
            IngestError::RateLimited { retry_after_secs } => {
                let mut response =
                    (StatusCode::TOO_MANY_REQUESTS, axum::Json(json!({"error": "rate_limited"}))).into_response();
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs.max(1)));
                response
            }
            IngestError::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "ingest internal error");
                internal_response("-")
            }
        }
    }
}

/// Ingest's internal failure (a panic included): `{"error": "internal"}` as decisions §9 fixes it;
/// the request id travels in the `x-request-id` header.
pub fn internal_response(_request_id: &str) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(json!({"error": "internal"}))).into_response()
}

pub type IngestResult<T> = Result<T, IngestError>;
