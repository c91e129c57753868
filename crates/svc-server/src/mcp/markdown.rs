//! `get_report`'s answer (decisions §7): one Markdown document, then screenshots as images.
//!
//! Reporters write most of what this document shows, and agents act on it, so every value of
//! theirs goes through `svc_core::markdown`: short values as one-line code spans after a label of
//! the document's own, text in fenced blocks it cannot close, all under headings that say the
//! content is the reporter's. Headings, ids, statuses, verification marks and comment headers are
//! written here only (docs/mcp.md, "The report document").

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::fmt::Write;
use svc_core::markdown::{LONG_LINE_MAX_CHARS, ONE_LINE_MAX_CHARS, code_span, fenced, one_line};
use svc_core::model::{Comment, Project, Report};
use svc_core::{ids, time};

use crate::state::AppState;

pub const MAX_IMAGES: usize = 6;
/// 8 MiB of image data before base64.
pub const MAX_IMAGE_BYTES: usize = 8 * 1024 * 1024;

fn text_of<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn human_bytes(bytes: i64) -> String {
    match bytes {
        b if b >= 1024 * 1024 => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
        b if b >= 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// A short value in a code span.
fn code(text: &str) -> String {
    code_span(text, ONE_LINE_MAX_CHARS)
}

/// A URL, selector or test id in a code span: long, and only useful whole.
fn long_code(text: &str) -> String {
    code_span(text, LONG_LINE_MAX_CHARS)
}

/// `<label>: <value>` for free text of the reporter's: a code span on the label's line when it is
/// one short line, else a fenced block on the lines after it, so nothing is cut.
fn labelled(doc: &mut String, label: &str, value: &str) {
    let short = value.chars().count() <= ONE_LINE_MAX_CHARS && one_line(value, usize::MAX) == value.trim();
    if short {
        let _ = writeln!(doc, "{label}: {}", code(value));
    } else {
        let _ = write!(doc, "{label}:\n{}", fenced(value, "text"));
    }
}

fn selector_details(target: Option<&Value>) -> String {
    let Some(target) = target else { return String::new() };
    let strings = |field: &str| -> Vec<String> {
        target
            .get(field)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(long_code).collect())
            .unwrap_or_default()
    };
    let mut out = String::new();
    let ids = strings("testIds");
    if !ids.is_empty() {
        let _ = write!(out, " · testIds: {}", ids.join(", "));
    }
    if let Some(index) = target.get("matchIndex").and_then(Value::as_u64) {
        let _ = write!(out, " · matchIndex: {index}");
    }
    if let Some(component) = text_of(target, "reactComponent") {
        let _ = write!(out, " · component: {}", code(component));
    }
    let hosts = strings("shadowHosts");
    if !hosts.is_empty() {
        let _ = write!(out, " · inside shadow roots of: {}", hosts.join(" > "));
    }
    let frames = strings("frames");
    if !frames.is_empty() {
        let _ = write!(out, " · inside frames: {}", frames.join(" > "));
    }
    out
}

/// The `reporter:` line: who filed the report, and whether Svc verified it.
fn reporter_line(report: &Report) -> Option<String> {
    if let Some(identity) = &report.identity {
        let name = text_of(identity, "name").or(text_of(identity, "email")).unwrap_or("unnamed");
        let email = text_of(identity, "email").map(|e| format!(", email {}", code(e))).unwrap_or_default();
        let user = text_of(identity, "userId").unwrap_or_default();
        return Some(format!("{}{email} (verified, user id {})", code(name), code(user)));
    }
    let refused = report
        .identity_error
        .as_deref()
        .map(|error| format!("; its identity token was refused: {}", one_line(error, ONE_LINE_MAX_CHARS)))
        .unwrap_or_default();
    let line = match (&report.author.label, &report.author.id) {
        (Some(label), Some(id)) => format!("{} ({})", code(label), code(id)),
        (Some(label), None) => code(label),
        (None, Some(id)) => format!("user id {} (unverified{refused})", code(id)),
        (None, None) if !refused.is_empty() => format!("anonymous (unverified{refused})"),
        (None, None) => return None,
    };
    Some(line)
}

pub async fn render(state: &AppState, report: &Report, project: Option<&Project>, comments: &[Comment]) -> Vec<Value> {
    let mut doc = String::new();
    // The service's own part: only values Svc set or checked, and the reporter's on labelled lines
    // in code spans.
    let _ = writeln!(doc, "# {}\n", one_line(&report.title, ONE_LINE_MAX_CHARS));
    let _ = writeln!(
        doc,
        "`{}` · status: **{}** · channel: {} · created: {}\n",
        ids::short_id(&report.id),
        one_line(&report.status, ONE_LINE_MAX_CHARS),
        one_line(&report.channel_key, ONE_LINE_MAX_CHARS),
        time::iso(report.created_at)
    );
    let _ = writeln!(doc, "id: `{}`", report.id);
    if let Some(project) = project {
        let _ = writeln!(doc, "project: {} (`{}`)", one_line(&project.name, ONE_LINE_MAX_CHARS), project.id);
    }
    if let Some(reporter) = reporter_line(report) {
        let _ = writeln!(doc, "reporter: {reporter}");
    }
    // `context.extra` is free for the widget to fill: only a report the tool endpoint filed (an
    // agent author) says where it came from.
    if report.author.kind == "agent"
        && let Some(via) = report.context.pointer("/extra/via").and_then(Value::as_str)
    {
        let _ = writeln!(doc, "via: {}", one_line(via, ONE_LINE_MAX_CHARS));
    }
    let artifact = report.context.get("artifact").filter(|a| a.is_object());
    if let (None, Some(artifact_id)) = (artifact, &report.artifact_id) {
        let _ = writeln!(doc, "artifact: {}", code(artifact_id));
    }

    // From here on, every section whose heading says so holds what the reporter's page sent.
    if let Some(artifact) = artifact {
        let _ = writeln!(doc, "\n## Artifact (sent by the reporter's page; untrusted)\n");
        for field in ["id", "title", "tool", "source", "goal"] {
            if let Some(value) = text_of(artifact, field) {
                labelled(&mut doc, &format!("- {field}"), value);
            }
        }
        if let Some(url) = text_of(artifact, "url") {
            let _ = writeln!(doc, "- url: {}", long_code(url));
        }
        if let Some(constraints) = artifact.get("constraints").and_then(Value::as_array).filter(|c| !c.is_empty()) {
            for c in constraints.iter().filter_map(Value::as_str) {
                labelled(&mut doc, "- constraint", c);
            }
        }
    }

    let download = |blob_id: &str| format!("/api/v1/projects/{}/blobs/{blob_id}", report.project_id);
    let mut images = Vec::new();
    let mut image_bytes = 0usize;
    let mut screenshot_number = 0;
    let _ = writeln!(doc, "\n## Report (written by the reporter; untrusted)\n");
    for block in report.blocks.as_array().map(Vec::as_slice).unwrap_or_default() {
        match text_of(block, "type").unwrap_or_default() {
            "text" => {
                let _ = writeln!(doc, "{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
            }
            "selection" => {
                let _ = write!(doc, "Selected text:\n{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
                if let Some(css) = text_of(block, "selector").or(block.pointer("/target/css").and_then(Value::as_str)) {
                    let _ = writeln!(doc, "Element: {}{}", long_code(css), selector_details(block.get("target")));
                }
                doc.push('\n');
            }
            "quote" => {
                let _ = write!(doc, "Quoted text:\n{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
                let _ = writeln!(
                    doc,
                    "Element: {}{}",
                    long_code(text_of(block, "selector").unwrap_or_default()),
                    selector_details(block.get("target"))
                );
                labelled(&mut doc, "Comment", text_of(block, "comment").unwrap_or_default());
                doc.push('\n');
            }
            "pinpoint" => {
                let _ = writeln!(
                    doc,
                    "Pinpoint · Element: {}{}",
                    long_code(text_of(block, "selector").unwrap_or_default()),
                    selector_details(block.get("target"))
                );
                if let Some(comment) = text_of(block, "comment") {
                    labelled(&mut doc, "Comment", comment);
                }
                doc.push('\n');
            }
            "audio" => {
                let seconds =
                    block.get("durationMs").and_then(Value::as_f64).map(|ms| format!(" ({:.1} s)", ms / 1000.0));
                let _ = writeln!(doc, "Voice note{}", seconds.unwrap_or_default());
                match text_of(block, "transcript") {
                    Some(transcript) => {
                        let _ = write!(doc, "Transcript:\n{}", fenced(transcript, "text"));
                    }
                    None => doc.push_str("(no transcript)\n"),
                }
                if let Some(blob_id) = text_of(block, "blobId") {
                    let _ = writeln!(doc, "Audio: {}", long_code(&download(blob_id)));
                }
                doc.push('\n');
            }
            "file" => {
                let size = block.get("bytes").and_then(Value::as_i64).map(human_bytes).unwrap_or_default();
                let _ = writeln!(
                    doc,
                    "File: {} ({size}, {}) · download: {}",
                    code(text_of(block, "name").unwrap_or("file")),
                    text_of(block, "mime").map_or_else(|| "unknown type".into(), code),
                    long_code(&download(text_of(block, "blobId").unwrap_or_default()))
                );
                if let Some(description) = text_of(block, "description") {
                    labelled(&mut doc, "Description", description);
                }
                doc.push('\n');
            }
            "screenshot" => {
                screenshot_number += 1;
                let blob_id = text_of(block, "blobId").unwrap_or_default();
                let size =
                    match (block.get("width").and_then(Value::as_i64), block.get("height").and_then(Value::as_i64)) {
                        (Some(w), Some(h)) => format!("{w}×{h}"),
                        _ => "size unknown".into(),
                    };
                let annotations = block.get("annotations").and_then(Value::as_array).map_or(0, Vec::len);
                let annotated = if annotations > 0 { format!(", {annotations} annotations") } else { String::new() };
                let inline = if images.len() >= MAX_IMAGES {
                    Err(format!("not inlined: at most {MAX_IMAGES} images per answer"))
                } else {
                    match state.blobs.read_all(blob_id).await {
                        Ok(Some(bytes)) if image_bytes + bytes.len() <= MAX_IMAGE_BYTES => {
                            image_bytes += bytes.len();
                            let mime = text_of(block, "mime").unwrap_or("image/png");
                            images.push(json!({"type": "image", "data": STANDARD.encode(&bytes), "mimeType": mime}));
                            Ok(images.len())
                        }
                        Ok(Some(_)) => Err("not inlined: the 8 MB image budget is used up".into()),
                        Ok(None) => Err("its file is missing".into()),
                        Err(error) => {
                            tracing::warn!(%error, "could not read a screenshot");
                            Err("could not be read".into())
                        }
                    }
                };
                match inline {
                    Ok(index) => {
                        let _ =
                            writeln!(doc, "Screenshot {screenshot_number} ({size}{annotated}): image {index} below\n");
                    }
                    Err(reason) => {
                        let _ = writeln!(
                            doc,
                            "Screenshot {screenshot_number} ({size}{annotated}): {reason}; download: {}\n",
                            long_code(&download(blob_id))
                        );
                    }
                }
            }
            other => {
                let _ = writeln!(doc, "({} block)\n", code(other));
            }
        }
    }

    if let Some(errors) = report.context.get("consoleErrors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
        let _ = writeln!(doc, "## Console errors (sent by the reporter's page; untrusted)\n");
        // One block per error: a stack trace spans lines, and where one error ends stays clear.
        for error in errors.iter().filter_map(Value::as_str) {
            let _ = writeln!(doc, "{}", fenced(error, "text"));
        }
    }
    // `context.url` as the reporter's page sent it (the report's `url` is only its http(s) form).
    let page: Vec<(&str, &str)> = ["url", "userAgent", "language", "device"]
        .map(|f| (f, text_of(&report.context, f)))
        .into_iter()
        .filter_map(|(field, value)| value.filter(|v| !v.is_empty()).map(|v| (field, v)))
        .collect();
    if !page.is_empty() {
        let _ = writeln!(doc, "## Page (sent by the reporter's page; untrusted)\n");
        for (field, value) in page {
            let _ = writeln!(doc, "- {field}: {}", long_code(value));
        }
        doc.push('\n');
    }
    if !comments.is_empty() {
        let _ = writeln!(doc, "## Comments\n");
        // The header line is the service's; the text is its author's and sits in its own block.
        for (n, c) in comments.iter().enumerate() {
            let who = c.author.label.as_deref().or(c.author.id.as_deref()).unwrap_or("someone");
            let kind = c.kind.as_deref().map(|k| format!(", {}", one_line(k, ONE_LINE_MAX_CHARS))).unwrap_or_default();
            let state = if c.draft { "draft" } else { "published" };
            let _ = writeln!(
                doc,
                "Comment {} by {} ({state}{kind}, {}):\n{}",
                n + 1,
                code(who),
                time::iso(c.created_at),
                fenced(&c.text, "text")
            );
        }
    }

    doc.truncate(doc.trim_end().len());
    doc.push('\n');
    let mut content = vec![json!({"type": "text", "text": doc})];
    content.extend(images);
    content
}
