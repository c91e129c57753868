//! `GET /api/v1/projects/:projectId/blobs/:blobId`: a blob served back with its stored type.

use axum::extract::State;
use axum::response::Response;
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::blobs;

/// The blob's bytes with its stored type. File attachments come only as downloads
/// (`Content-Disposition: attachment`); nothing is served for the browser to sniff.
#[utoipa::path(get, path = "/projects/{projectId}/blobs/{blobId}", tag = "reports", security(("bearer" = [])),
    params(("projectId" = String, Path), ("blobId" = String, Path)),
    responses((status = 200, description = "the blob's bytes with its stored type: image/png, image/jpeg or image/webp for \
        screenshots, audio/webm, audio/ogg or audio/mp4 for voice notes, the declared type (else \
        application/octet-stream) for file attachments", content_type = "*/*"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_blob(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, blob_id)): ApiPath<(String, String)>,
) -> ApiResult<Response> {
    let project = key.project(&project_id, Operation::ReadReports)?;
    let not_found = || ApiError::not_found("blob not found in this project");
    let blob = blobs::get_in_project(&state.service, &project.id, &blob_id).await?.ok_or_else(not_found)?;
    let (size, stream) = state.blobs.get(&blob.id).await.map_err(ApiError::internal)?.ok_or_else(not_found)?;
    Ok(crate::blob_response::download(&blob, size, stream))
}
