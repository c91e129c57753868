//! A stored blob served to a browser (REST downloads and the dashboard): images and voice notes
//! with their checked stored type, anything else only as a download, never sniffed, sandboxed.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::TryStreamExt;
use svc_blob::BlobStream;
use svc_core::model::Blob;

pub fn download(blob: &Blob, size: u64, stream: BlobStream) -> Response {
    // The client only sees the connection cut; the reason goes to the log, with the blob named.
    let blob_id = blob.id.clone();
    let stream = stream
        .inspect_err(move |error| tracing::error!(%error, blob = %blob_id, "a blob failed while it was being sent"));
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=3600"));
    // Even a blob opened on its own cannot run anything.
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'; sandbox"));
    if blob.kind == "file" {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        let name: String = blob
            .name
            .as_deref()
            .unwrap_or("file")
            .chars()
            .map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' { c } else { '_' })
            .collect();
        let disposition = format!("attachment; filename=\"{name}\"");
        headers.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_str(&disposition).unwrap_or(HeaderValue::from_static("attachment")),
        );
    } else {
        // Screenshots and voice notes were checked at upload (their stored type is one of a few).
        let mime = HeaderValue::from_str(&blob.mime).unwrap_or(HeaderValue::from_static("application/octet-stream"));
        headers.insert(header::CONTENT_TYPE, mime);
    }
    response
}
