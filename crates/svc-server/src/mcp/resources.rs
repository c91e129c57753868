//! Resources: reports and their files by URI, for agents that only speak to the tool endpoint.
//!
//! - `svc://reports/<reportId>`: the report document (the Markdown of `get_report`, without the
//!   images; its screenshots are resources of their own).
//! - `svc://reports/<reportId>/reproduction.spec.ts`: a Playwright test that replays the steps the
//!   reporter took and asserts the correct behaviour where the evidence went wrong
//!   (`svc_core::reproduction`): it fails while the bug is there, passes once it is fixed.
//! - `svc://blobs/<blobId>`: a screenshot, voice note or attached file of a report: text files as
//!   text, anything else (images, audio, other binaries) as base64 with its stored type, up to
//!   [`READ_MAX_BYTES`].
//!
//! `resources/list` gives the caller's latest reports; `resources/read` reads any report or file
//! of a report the key can reach (its project, or every project of its organization), with
//! `feedback:read` like `get_report`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use svc_core::markdown::{ONE_LINE_MAX_CHARS, one_line};
use svc_core::model::ReportFilter;
use svc_core::{ids, time};

use super::jsonrpc::{self, error, result};
use super::tools::{self, Caller};
use crate::state::AppState;
use svc_service::blobs::{self, BlobRead};
use svc_service::reports;

pub const REPORT_PREFIX: &str = "svc://reports/";
pub const BLOB_PREFIX: &str = "svc://blobs/";
/// The suffix of a report's reproduction (after `svc://reports/<reportId>`).
pub const REPRODUCTION_SUFFIX: &str = "/reproduction.spec.ts";
/// The largest file `resources/read` returns (10 MiB before base64: every voice note fits).
pub const READ_MAX_BYTES: i64 = 10 * 1024 * 1024;
/// Reports per `resources/list` page.
pub const LIST_PAGE: u32 = 50;
/// Server-defined: no such resource in the caller's reach (the MCP specification's code).
pub const NOT_FOUND: i64 = -32002;

pub fn report_uri(report_id: &str) -> String {
    format!("{REPORT_PREFIX}{report_id}")
}

pub fn blob_uri(blob_id: &str) -> String {
    format!("{BLOB_PREFIX}{blob_id}")
}

pub fn templates() -> Value {
    json!([
        {"uriTemplate": format!("{REPORT_PREFIX}{{reportId}}"), "name": "report",
         "description": "A feedback report as Markdown (what get_report shows, without the images).", "mimeType": "text/markdown"},
        {"uriTemplate": format!("{REPORT_PREFIX}{{reportId}}{REPRODUCTION_SUFFIX}"), "name": "report reproduction",
         "description": "A Playwright test replaying the steps the reporter took, ending with an assertion of the correct behaviour where the report's evidence went wrong: it fails while the bug is there and passes once it is fixed.",
         "mimeType": "text/x-typescript"},
        {"uriTemplate": format!("{BLOB_PREFIX}{{blobId}}"), "name": "report file",
         "description": "A screenshot, voice note or attached file of a report, as get_report names it."}
    ])
}

/// `resources/list`: the caller's latest reports, newest first, 50 a page (`cursor` is the
/// `nextCursor` of the page before).
pub async fn list(state: &AppState, caller: &Caller, id: Value, params: &Value) -> Value {
    let before = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) if ids::is_object_id(cursor) => Some(cursor.clone()),
        Some(_) => {
            return error(id, jsonrpc::INVALID_PARAMS, "invalid params: cursor must be a nextCursor of resources/list");
        }
    };
    let filter =
        ReportFilter { project_ids: caller.project_ids(), before, limit: LIST_PAGE, ..ReportFilter::default() };
    let page = match reports::list_page(&state.service, filter).await {
        Ok(page) => page,
        Err(e) => return internal(id, e),
    };
    let resources: Vec<Value> = page
        .items
        .iter()
        .map(|r| {
            json!({
                "uri": report_uri(&r.id),
                "name": format!("{} {}", ids::short_id(&r.id), one_line(&r.title, ONE_LINE_MAX_CHARS)),
                "description": format!("Feedback report, status {}, channel {}, filed {}{}", r.status, r.channel_key,
                    time::iso(r.created_at),
                    caller.project(&r.project_id).filter(|_| caller.org_wide()).map(|p| format!(", project {}", one_line(&p.name, 100))).unwrap_or_default()),
                "mimeType": "text/markdown",
            })
        })
        .collect();
    let mut answer = json!({"resources": resources});
    if let Some(cursor) = page.next_cursor {
        answer["nextCursor"] = cursor.into();
    }
    result(id, answer)
}

/// `resources/read` of a report or a file of one.
pub async fn read(state: &AppState, caller: &Caller, id: Value, params: &Value) -> Value {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return error(
            id,
            jsonrpc::INVALID_PARAMS,
            "invalid params: uri must be a string (svc://reports/<id> or svc://blobs/<id>)",
        );
    };
    let not_found = |id: Value| {
        error(
            id,
            NOT_FOUND,
            &format!(
                "resource not found: {}; it does not exist or belongs to a project this key cannot see \
                 (resources are svc://reports/<reportId> and svc://blobs/<blobId>)",
                one_line(uri, 300)
            ),
        )
    };
    if let Some(report_id) = uri.strip_prefix(REPORT_PREFIX).and_then(|rest| rest.strip_suffix(REPRODUCTION_SUFFIX)) {
        let report = match reports::get_in(&state.service, &caller.project_ids(), report_id).await {
            Ok(Some(report)) => report,
            Ok(None) => return not_found(id),
            Err(e) => return internal(id, e),
        };
        let Some(spec) = svc_core::reproduction::playwright_spec(&report) else {
            return error(id, NOT_FOUND, "no reproduction: the report has no http(s) page address to start from");
        };
        return result(id, json!({"contents": [{"uri": uri, "mimeType": "text/x-typescript", "text": spec}]}));
    }
    if let Some(report_id) = uri.strip_prefix(REPORT_PREFIX) {
        let report = match reports::get_in(&state.service, &caller.project_ids(), report_id).await {
            Ok(Some(report)) => report,
            Ok(None) => return not_found(id),
            Err(e) => return internal(id, e),
        };
        let document = match tools::report_document(state, caller, &report, false).await {
            Ok(content) => content,
            Err(e) => return internal(id, e),
        };
        let text = document.first().and_then(|item| item.get("text")).cloned().unwrap_or_default();
        return result(id, json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}));
    }
    let Some(blob_id) = uri.strip_prefix(BLOB_PREFIX) else { return not_found(id) };
    match blobs::read_reachable(&state.service, &state.blobs, &caller.project_ids(), blob_id, READ_MAX_BYTES).await {
        Ok(BlobRead::Found(blob, bytes)) => {
            let textual = is_textual(&blob.mime);
            let mut item = json!({"uri": uri, "mimeType": blob.mime});
            match std::str::from_utf8(&bytes) {
                Ok(text) if textual => item["text"] = text.into(),
                _ => item["blob"] = STANDARD.encode(&bytes).into(),
            }
            if let Some(name) = &blob.name {
                item["name"] = one_line(name, 255).into();
            }
            result(id, json!({"contents": [item]}))
        }
        Ok(BlobRead::TooLarge(blob)) => error(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!(
                "{uri} is {} bytes, over the {READ_MAX_BYTES}-byte limit of resources/read; download it with a REST key: \
                 GET /api/v1/projects/{}/blobs/{}",
                blob.bytes, blob.project_id, blob.id
            ),
        ),
        Ok(BlobRead::NotFound) => not_found(id),
        Err(e) => internal(id, e),
    }
}

/// Types read as text: `text/*`, JSON, XML, YAML, JavaScript, CSV and the like.
fn is_textual(mime: &str) -> bool {
    let base = mime.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    base.starts_with("text/")
        || base.ends_with("+json")
        || base.ends_with("+xml")
        || matches!(
            base.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-ndjson"
                | "application/yaml"
                | "application/x-yaml"
                | "application/sql"
                | "application/graphql"
        )
}

fn internal(id: Value, error: impl std::fmt::Display) -> Value {
    tracing::error!(%error, "tool endpoint internal error (resources)");
    jsonrpc::error(id, jsonrpc::INTERNAL_ERROR, "internal error: the report store could not answer; try again")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_types_are_read_as_text() {
        for mime in
            ["text/plain", "text/csv", "application/json", "application/ld+json", "image/svg+xml", "Text/Markdown"]
        {
            assert!(is_textual(mime), "{mime}");
        }
        for mime in ["image/png", "audio/webm;codecs=opus", "application/octet-stream", "application/pdf", ""] {
            assert!(!is_textual(mime), "{mime}");
        }
    }
}
