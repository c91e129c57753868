//! The ingest surface's error: `{error: <code>}` with the spec's status codes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use svc_core::ingest::Rejection;

#[derive(Debug)]
pub enum IngestError {
    /// A known code with its status (`kind_invalid`, `blocks_invalid`, ...).
    Code(StatusCode, &'static str),
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

    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        IngestError::Internal(error.into())
    }
}

impl From<Rejection> for IngestError {
    fn from(rejection: Rejection) -> Self {
        match rejection {
            Rejection::Blocks(_) => IngestError::BLOCKS_INVALID,
            Rejection::Context(_) => IngestError::CONTEXT_INVALID,
            Rejection::BlobIdInvalid(_) => IngestError::BLOB_ID_INVALID,
        }
    }
}

impl From<svc_store::StoreError> for IngestError {
    fn from(error: svc_store::StoreError) -> Self {
        IngestError::Internal(error.into())
    }
}

impl From<crate::service::ServiceError> for IngestError {
    /// Ingest reads only what its key reaches: any service failure here is the server's.
    fn from(error: crate::service::ServiceError) -> Self {
        IngestError::Internal(error.into())
    }
}

impl IntoResponse for IngestError {
    fn into_response(self) -> Response {
        match self {
            IngestError::Code(status, code) => (status, axum::Json(json!({"error": code}))).into_response(),
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
