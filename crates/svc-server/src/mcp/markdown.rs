//! `get_report`'s answer (decisions §7): one Markdown document, then screenshots as images.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::fmt::Write;
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

fn quote(text: &str) -> String {
    text.lines().map(|line| format!("> {line}\n")).collect()
}

fn selector_details(target: Option<&Value>) -> String {
    let Some(target) = target else { return String::new() };
    let mut out = String::new();
    if let Some(ids) = target.get("testIds").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        let ids: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
        let _ = write!(out, " · testIds: {}", ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "));
    }
    if let Some(index) = target.get("matchIndex").and_then(Value::as_u64) {
        let _ = write!(out, " · matchIndex: {index}");
    }
    if let Some(component) = text_of(target, "reactComponent") {
        let _ = write!(out, " · component: `{component}`");
    }
    if let Some(hosts) = target.get("shadowHosts").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        let hosts: Vec<&str> = hosts.iter().filter_map(Value::as_str).collect();
        let _ = write!(out, " · inside shadow roots of: `{}`", hosts.join("` > `"));
    }
    if let Some(frames) = target.get("frames").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        let frames: Vec<&str> = frames.iter().filter_map(Value::as_str).collect();
        let _ = write!(out, " · inside frames: `{}`", frames.join("` > `"));
    }
    out
}

pub async fn render(state: &AppState, report: &Report, project: Option<&Project>, comments: &[Comment]) -> Vec<Value> {
    let mut doc = String::new();
    let _ = writeln!(doc, "# {}\n", report.title);
    let _ = write!(
        doc,
        "`{}` · status: **{}** · channel: {} · created: {}",
        ids::short_id(&report.id),
        report.status,
        report.channel_key,
        time::iso(report.created_at)
    );
    if let Some(url) = &report.url {
        let _ = write!(doc, " · url: {url}");
    }
    let _ = writeln!(doc, "\n\nid: `{}`", report.id);
    if let Some(project) = project {
        let _ = writeln!(doc, "project: {} (`{}`)", project.name, project.id);
    }

    let reporter = match &report.identity {
        Some(identity) => {
            let name = text_of(identity, "name").or(text_of(identity, "email")).unwrap_or("unnamed");
            let email = text_of(identity, "email").map(|e| format!(" <{e}>")).unwrap_or_default();
            let user = text_of(identity, "userId").unwrap_or_default();
            Some(format!("{name}{email} (verified, user id `{user}`)"))
        }
        None => match (&report.author.label, &report.author.id) {
            (Some(label), Some(id)) => Some(format!("{label} (`{id}`)")),
            (Some(label), None) => Some(label.clone()),
            (None, Some(id)) => Some(format!("`{id}` (unverified)")),
            (None, None) => None,
        },
    };
    if let Some(reporter) = reporter {
        let _ = writeln!(doc, "reporter: {reporter}");
    }
    if let Some(via) = report.context.pointer("/extra/via").and_then(Value::as_str) {
        let _ = writeln!(doc, "via: {via}");
    }
    if let Some(artifact) = report.context.get("artifact").filter(|a| a.is_object()) {
        let _ = writeln!(doc, "\n## Artifact\n");
        for field in ["id", "title", "tool", "source", "goal", "url"] {
            if let Some(value) = text_of(artifact, field) {
                let _ = writeln!(doc, "- {field}: {value}");
            }
        }
        if let Some(constraints) = artifact.get("constraints").and_then(Value::as_array).filter(|c| !c.is_empty()) {
            let _ = writeln!(doc, "- constraints:");
            for c in constraints.iter().filter_map(Value::as_str) {
                let _ = writeln!(doc, "  - {c}");
            }
        }
    } else if let Some(artifact_id) = &report.artifact_id {
        let _ = writeln!(doc, "artifact: `{artifact_id}`");
    }

    let download = |blob_id: &str| format!("/api/v1/projects/{}/blobs/{blob_id}", report.project_id);
    let mut images = Vec::new();
    let mut image_bytes = 0usize;
    let mut screenshot_number = 0;
    let _ = writeln!(doc, "\n## Report\n");
    for block in report.blocks.as_array().map(Vec::as_slice).unwrap_or_default() {
        match text_of(block, "type").unwrap_or_default() {
            "text" => {
                let _ = writeln!(doc, "{}\n", text_of(block, "text").unwrap_or_default());
            }
            "selection" => {
                let _ = write!(doc, "Selected text:\n{}", quote(text_of(block, "text").unwrap_or_default()));
                if let Some(css) = text_of(block, "selector").or(block.pointer("/target/css").and_then(Value::as_str)) {
                    let _ = write!(doc, "\nElement: `{css}`{}", selector_details(block.get("target")));
                }
                doc.push_str("\n\n");
            }
            "quote" => {
                let _ = write!(doc, "Quoted text:\n{}", quote(text_of(block, "text").unwrap_or_default()));
                let _ = writeln!(
                    doc,
                    "\nElement: `{}`{}",
                    text_of(block, "selector").unwrap_or_default(),
                    selector_details(block.get("target"))
                );
                let _ = writeln!(doc, "Comment: {}\n", text_of(block, "comment").unwrap_or_default());
            }
            "pinpoint" => {
                let _ = writeln!(
                    doc,
                    "Pinpoint · Element: `{}`{}",
                    text_of(block, "selector").unwrap_or_default(),
                    selector_details(block.get("target"))
                );
                if let Some(comment) = text_of(block, "comment") {
                    let _ = writeln!(doc, "Comment: {comment}");
                }
                doc.push('\n');
            }
            "audio" => {
                let seconds =
                    block.get("durationMs").and_then(Value::as_f64).map(|ms| format!(" ({:.1} s)", ms / 1000.0));
                let _ = writeln!(doc, "Voice note{}", seconds.unwrap_or_default());
                match text_of(block, "transcript") {
                    Some(transcript) => {
                        let _ = write!(doc, "Transcript:\n{}", quote(transcript));
                    }
                    None => doc.push_str("(no transcript)\n"),
                }
                if let Some(blob_id) = text_of(block, "blobId") {
                    let _ = writeln!(doc, "Audio: `{}`", download(blob_id));
                }
                doc.push('\n');
            }
            "file" => {
                let size = block.get("bytes").and_then(Value::as_i64).map(human_bytes).unwrap_or_default();
                let _ = writeln!(
                    doc,
                    "File: **{}** ({size}, {}) · download: `{}`",
                    text_of(block, "name").unwrap_or("file"),
                    text_of(block, "mime").unwrap_or("unknown type"),
                    download(text_of(block, "blobId").unwrap_or_default())
                );
                if let Some(description) = text_of(block, "description") {
                    let _ = writeln!(doc, "{description}");
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
                            "Screenshot {screenshot_number} ({size}{annotated}): {reason}; download: `{}`\n",
                            download(blob_id)
                        );
                    }
                }
            }
            other => {
                let _ = writeln!(doc, "({other} block)\n");
            }
        }
    }

    if let Some(errors) = report.context.get("consoleErrors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
        let _ = writeln!(doc, "## Console errors\n\n```text");
        for error in errors.iter().filter_map(Value::as_str) {
            let _ = writeln!(doc, "{error}");
        }
        let _ = writeln!(doc, "```\n");
    }
    let context_line: Vec<String> = ["userAgent", "language", "device"]
        .iter()
        .filter_map(|f| text_of(&report.context, f).map(|v| format!("{f}: {v}")))
        .collect();
    if !context_line.is_empty() {
        let _ = writeln!(doc, "## Page\n\n{}\n", context_line.join(" · "));
    }
    if !comments.is_empty() {
        let _ = writeln!(doc, "## Comments\n");
        for c in comments {
            let who = c.author.label.clone().or_else(|| c.author.id.clone()).unwrap_or_else(|| "someone".into());
            let kind = c.kind.as_deref().map(|k| format!(", {k}")).unwrap_or_default();
            let state = if c.draft { "draft" } else { "published" };
            let _ = writeln!(doc, "- **{who}** ({state}{kind}, {}): {}", time::iso(c.created_at), c.text);
        }
    }

    let mut content = vec![json!({"type": "text", "text": doc})];
    content.extend(images);
    content
}
