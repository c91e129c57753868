//! `POST /ingest/blob`: a multipart upload streamed into the blob store, typed by its bytes.

use axum::Json;
use axum::body::Body;
use axum::extract::multipart::Field;
use axum::extract::{FromRequest, FromRequestParts, Multipart, Request, State};
use serde_json::{Value, json};
use svc_blob::BlobWriter;
use svc_core::ingest::BlobKind;
use svc_core::media::{self, SNIFF_BYTES};
use svc_core::model::Blob;
use svc_core::{ids, time};

use super::access::{self, IngestProject};
use super::error::{IngestError, IngestResult};
use crate::state::AppState;
use svc_service::blobs;

/// The streamed file, stored under its blob id, not yet accepted.
struct Upload {
    blob_id: String,
    bytes: u64,
    head: Vec<u8>,
    declared_type: Option<String>,
    file_name: Option<String>,
}

/// The whole multipart request may be this long: the largest upload plus room for the other fields
/// and the multipart framing. The file part itself is cut off at its kind's limit while streaming.
pub fn request_limit(limits: &svc_core::ingest::Limits) -> usize {
    limits.largest() as usize + 1024 * 1024
}

/// Small text fields (`kind`, `width`, `height`, `durationMs`) are at most this long.
const TEXT_FIELD_MAX: usize = 100;

pub async fn upload(State(state): State<AppState>, request: Request<Body>) -> IngestResult<Json<Value>> {
    let (mut parts, body) = request.into_parts();
    let IngestProject(project) = IngestProject::from_request_parts(&mut parts, &state).await?;
    state
        .rate_limits
        .check_blob(access::client_ip(&state, &parts))
        .map_err(|secs| IngestError::RateLimited { retry_after_secs: secs })?;
    // A declared length over what any upload may take is refused before reading.
    if crate::body::declared_over(&parts.headers, request_limit(&state.config.limits)) {
        return Err(IngestError::TOO_LARGE);
    }
    let request = Request::from_parts(parts, body);
    let mut multipart = Multipart::from_request(request, &state).await.map_err(|_| IngestError::FILE_REQUIRED)?;

    let limits = state.config.limits;
    let mut kind_text: Option<String> = None;
    let mut duration: Option<String> = None;
    let mut upload: Option<Upload> = None;

    let outcome: IngestResult<()> = async {
        while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
            match field.name().unwrap_or_default() {
                "kind" => kind_text = Some(text_field(field).await?),
                // The spec's `width` and `height` are accepted and ignored: the decoded header decides.
                "width" | "height" => drop(text_field(field).await?),
                "durationMs" => duration = Some(text_field(field).await?),
                "file" if upload.is_none() => {
                    // Before `kind` is known the upload is held to the largest limit and checked at the end.
                    let limit = match kind_text.as_deref().map(BlobKind::parse) {
                        Some(Some(kind)) => limits.max_bytes(kind),
                        Some(None) => return Err(IngestError::KIND_INVALID),
                        None => limits.largest(),
                    };
                    upload = Some(stream_file(&state, field, limit).await?);
                }
                _ => drain(field).await?,
            }
        }
        Ok(())
    }
    .await;
    let result = match outcome {
        Ok(()) => accept(&state, &project.id, kind_text, duration, upload.as_ref()).await,
        Err(error) => Err(error),
    };
    if result.is_err() {
        if let Some(upload) = &upload {
            if let Err(error) = state.blobs.delete(&upload.blob_id).await {
                tracing::warn!(%error, "could not delete a refused upload");
            }
        }
    }
    result
}

/// Checks the finished upload against its kind, then records the blob.
async fn accept(
    state: &AppState,
    project_id: &str,
    kind_text: Option<String>,
    duration: Option<String>,
    upload: Option<&Upload>,
) -> IngestResult<Json<Value>> {
    let kind = kind_text.as_deref().and_then(BlobKind::parse).ok_or(IngestError::KIND_INVALID)?;
    let upload = upload.ok_or(IngestError::FILE_REQUIRED)?;
    if upload.bytes == 0 {
        return Err(IngestError::FILE_REQUIRED);
    }
    if upload.bytes > state.config.limits.max_bytes(kind) {
        return Err(IngestError::TOO_LARGE);
    }
    let mime =
        media::detect(kind, &upload.head, upload.declared_type.as_deref()).ok_or(IngestError::MIME_NOT_ALLOWED)?;
    let duration_ms = match kind {
        BlobKind::Audio => duration
            .as_deref()
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|ms| ms.round() as i64),
        _ => None,
    };
    if duration_ms.is_some_and(|ms| ms as u64 > state.config.limits.audio_max_ms) {
        return Err(IngestError::DURATION_TOO_LONG);
    }
    // The decoded image header is the truth; a screenshot whose header does not decode is no image.
    let (width, height) = match kind {
        BlobKind::Screenshot => {
            let (w, h) = screenshot_dimensions(state, upload).await?.ok_or(IngestError::MIME_NOT_ALLOWED)?;
            (Some(w), Some(h))
        }
        _ => (None, None),
    };
    let blob = Blob {
        id: upload.blob_id.clone(),
        project_id: project_id.to_string(),
        kind: kind.as_str().into(),
        mime: mime.clone(),
        bytes: upload.bytes as i64,
        width,
        height,
        duration_ms,
        name: upload.file_name.clone(),
        report_id: None,
        created_at: time::now_ms(),
    };
    blobs::record_upload(&state.service, &blob).await?;
    let mut answer = json!({"blobId": blob.id, "mime": mime, "bytes": blob.bytes});
    for (field, value) in [("width", width), ("height", height), ("durationMs", duration_ms)] {
        if let Some(value) = value {
            answer[field] = value.into();
        }
    }
    Ok(Json(answer))
}

/// The screenshot's size from its header: from the bytes kept while streaming, or, when the header
/// lies further in than those (large metadata before the frame), from the stored file.
async fn screenshot_dimensions(state: &AppState, upload: &Upload) -> IngestResult<Option<(i64, i64)>> {
    if let Some(size) = media::image_dimensions(&upload.head) {
        return Ok(Some(size));
    }
    if upload.bytes <= upload.head.len() as u64 {
        return Ok(None);
    }
    let whole = state.blobs.read_all(&upload.blob_id).await.map_err(IngestError::internal)?;
    Ok(whole.as_deref().and_then(media::image_dimensions))
}

/// Streams the file part to the blob store, cutting it off past `limit` without buffering it.
async fn stream_file(state: &AppState, mut field: Field<'_>, limit: u64) -> IngestResult<Upload> {
    let blob_id = ids::new_id();
    let declared_type = field.content_type().map(String::from);
    let file_name = field.file_name().map(|n| n.chars().take(255).collect::<String>());
    let mut writer: BlobWriter = state.blobs.writer(&blob_id).map_err(IngestError::internal)?;
    let mut head = Vec::new();
    let mut bytes = 0u64;
    loop {
        let chunk = match field.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(error) => {
                writer.abort().await;
                return Err(multipart_error(error));
            }
        };
        bytes += chunk.len() as u64;
        if bytes > limit {
            writer.abort().await;
            return Err(IngestError::TOO_LARGE);
        }
        if head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - head.len()).min(chunk.len());
            // Exactly: grown by doubling, the copy could take twice the bytes it keeps.
            head.reserve_exact(take);
            head.extend_from_slice(&chunk[..take]);
        }
        if let Err(error) = writer.write(chunk).await {
            writer.abort().await;
            return Err(IngestError::internal(error));
        }
    }
    // Durable before anyone hears of the blob id.
    writer.finish().await.map_err(IngestError::internal)?;
    Ok(Upload { blob_id, bytes, head, declared_type, file_name })
}

async fn text_field(field: Field<'_>) -> IngestResult<String> {
    let mut field = field;
    let mut text = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        text.extend_from_slice(&chunk);
        if text.len() > TEXT_FIELD_MAX {
            return Err(IngestError::KIND_INVALID);
        }
    }
    Ok(String::from_utf8_lossy(&text).trim().to_string())
}

async fn drain(mut field: Field<'_>) -> IngestResult<()> {
    while field.chunk().await.map_err(multipart_error)?.is_some() {}
    Ok(())
}

fn multipart_error(error: axum::extract::multipart::MultipartError) -> IngestError {
    if error.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        IngestError::TOO_LARGE
    } else {
        IngestError::FILE_REQUIRED
    }
}
