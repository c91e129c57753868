//! `get_report`'s answer (decisions §7): one Markdown document, then screenshots as images.
//!
//! Reporters write most of what this document shows, and agents act on it, so every value of
//! theirs goes through `svc_core::markdown`: short values as one-line code spans after a label of
//! the document's own, text in fenced blocks it cannot close, all under headings that say the
//! content is the reporter's. Headings, ids, statuses, verification marks and comment headers are
//! written here only (docs/mcp.md, "The report document").
//!
//! The order is the one an agent reads in: the reporter's message first, then the other blocks
//! (each element with its visible text and accessible name, what the agent greps for first), the
//! page's errors and failed requests, the page itself, the artifact, the status history and the
//! comments.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::fmt::Write;
use svc_core::markdown::{LONG_LINE_MAX_CHARS, ONE_LINE_MAX_CHARS, code_span, fenced, one_line};
use svc_core::model::{Author, Comment, Project, Report, StatusChange};
use svc_core::picture::{self, Shape, ShapeKind};
use svc_core::{ids, time};

use super::resources;
use crate::state::AppState;

pub const MAX_IMAGES: usize = 6;
/// 8 MiB of image data before base64.
pub const MAX_IMAGE_BYTES: usize = 8 * 1024 * 1024;

/// Context fields the document shows in a section of their own (or in the service's lines).
const SHOWN_ELSEWHERE: [&str; 5] = ["artifact", "artifactId", "consoleErrors", "network", "userId"];
/// The page section's fields, in the order shown.
const PAGE_FIELDS: [&str; 12] = [
    "url",
    "viewport",
    "device",
    "userAgent",
    "language",
    "timestamp",
    "channelSource",
    "flags",
    "extra",
    "custom",
    "reporter",
    "pathname",
];

/// What goes into the document besides the report.
pub struct Parts<'a> {
    /// The report's project, named only for organization-wide callers.
    pub project: Option<&'a Project>,
    pub comments: &'a [Comment],
    pub history: &'a [StatusChange],
    /// Inline the screenshots as image items (`get_report`); without, only their resource URIs.
    pub images: bool,
}

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

/// A validated number as people write it: whole numbers without a fraction, others to two places.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{n:.0}") } else { format!("{n:.2}") }
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

/// `<label>: <value>` for any JSON value of the reporter's: a string as [`labelled`], anything else
/// as compact JSON the same way.
fn labelled_json(doc: &mut String, label: &str, value: &Value) {
    match value {
        Value::String(text) => labelled(doc, label, text),
        other => labelled(doc, label, &other.to_string()),
    }
}

/// The details of a SelectorInfo after its css: what the element shows and is called, then where
/// it is.
fn selector_details(target: Option<&Value>, selector: &str) -> String {
    let Some(target) = target else { return String::new() };
    let strings = |field: &str| -> Vec<String> {
        target
            .get(field)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(long_code).collect())
            .unwrap_or_default()
    };
    let mut out = String::new();
    let text = text_of(target, "text");
    if let Some(text) = text {
        let _ = write!(out, " · text: {}", code(text));
    }
    // The name is news only where it differs from the text (an icon button, a labelled field).
    if let Some(name) = text_of(target, "accessibleName").filter(|name| Some(name.trim()) != text.map(str::trim)) {
        let _ = write!(out, " · accessible name: {}", code(name));
    }
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
    if let Some(css) = text_of(target, "css").filter(|css| *css != selector) {
        let _ = write!(out, " · target css: {}", long_code(css));
    }
    if let Some(xpath) = text_of(target, "xpath") {
        let _ = write!(out, " · xpath: {}", long_code(xpath));
    }
    out
}

/// `Element: <css>` and its details, for selections and quotes.
fn element_line(doc: &mut String, label: &str, block: &Value) {
    let selector = text_of(block, "selector").or(block.pointer("/target/css").and_then(Value::as_str));
    if let Some(css) = selector {
        let _ = writeln!(doc, "{label}{}{}", long_code(css), selector_details(block.get("target"), css));
    }
}

/// Where a pinpoint landed: the click within the element's box, and the box on the page.
fn pinpoint_place(block: &Value) -> String {
    let mut out = String::new();
    let num = |v: &Value, f: &str| v.get(f).and_then(Value::as_f64);
    if let Some(point) = block.get("point")
        && let (Some(x), Some(y)) = (num(point, "x"), num(point, "y"))
    {
        let _ = write!(out, " · clicked at {:.0}%, {:.0}% of its box", x * 100.0, y * 100.0);
    }
    if let Some(rect) = block.get("rect")
        && let (Some(x), Some(y), Some(w), Some(h)) =
            (num(rect, "x"), num(rect, "y"), num(rect, "width"), num(rect, "height"))
    {
        let _ = write!(out, " · box: {}×{} at ({}, {}) on the page", number(w), number(h), number(x), number(y));
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

/// Who made a change or wrote a comment: their label (or id) in a code span, and what they are
/// (`agent`, `team member`, `reporter`, `API key`).
fn who(author: &Author) -> (String, String) {
    let name = author.label.as_deref().or(author.id.as_deref()).unwrap_or("someone");
    let kind = match author.kind.as_str() {
        "agent" => "agent".to_string(),
        "user" => "team member".to_string(),
        "reporter" => "reporter".to_string(),
        "key" => "API key".to_string(),
        other => one_line(other, 40),
    };
    (code(name), kind)
}

/// ` · resource: <uri> · download: <path>`: how to fetch a blob through this endpoint and REST.
fn blob_refs(report: &Report, blob_id: &str) -> String {
    format!(
        " · resource: {} · download: {}",
        long_code(&resources::blob_uri(blob_id)),
        long_code(&format!("/api/v1/projects/{}/blobs/{blob_id}", report.project_id))
    )
}

/// One line per annotation, in image pixels.
fn annotation_lines(doc: &mut String, shapes: &[Shape]) {
    let point = |(x, y): (f64, f64)| format!("({}, {})", x.round(), y.round());
    for shape in shapes {
        let p = &shape.points;
        let place = match shape.kind {
            ShapeKind::Rect | ShapeKind::Blur => format!("from {} to {}", point(p[0]), point(p[1])),
            ShapeKind::Arrow => format!("from {} pointing to {}", point(p[0]), point(p[1])),
            ShapeKind::Pen => {
                let xs = p.iter().map(|q| q.0);
                let ys = p.iter().map(|q| q.1);
                let low = (xs.clone().fold(f64::INFINITY, f64::min), ys.clone().fold(f64::INFINITY, f64::min));
                let high = (xs.fold(f64::NEG_INFINITY, f64::max), ys.fold(f64::NEG_INFINITY, f64::max));
                format!("stroke of {} points within {} to {}", p.len(), point(low), point(high))
            }
        };
        let color = shape.color.as_deref().map(|c| format!(", color {}", code(c))).unwrap_or_default();
        let _ = writeln!(doc, "- {} {place}{color}", shape.kind.as_str());
    }
}

/// A screenshot as an image item: the stored picture, or with its annotations drawn on it.
struct Image {
    data: Vec<u8>,
    mime: String,
    drawn: bool,
}

/// The picture an agent sees for a screenshot block (the stored blob stays as uploaded).
async fn screenshot_image(state: &AppState, block: &Value, shapes: &[Shape]) -> Result<Image, String> {
    let blob_id = text_of(block, "blobId").unwrap_or_default();
    let stored = match state.blobs.read_all(blob_id).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("its file is missing".into()),
        Err(error) => {
            tracing::warn!(%error, "could not read a screenshot");
            return Err("could not be read".into());
        }
    };
    let mime = text_of(block, "mime").unwrap_or("image/png").to_string();
    if shapes.is_empty() {
        return Ok(Image { data: stored.to_vec(), mime, drawn: false });
    }
    // Decoding and drawing is CPU work: off the async workers.
    let (shapes, for_drawing, kind) = (shapes.to_vec(), stored.clone(), mime.clone());
    let drawn =
        tokio::task::spawn_blocking(move || picture::annotated(&kind, &for_drawing, &shapes)).await.ok().flatten();
    Ok(match drawn {
        Some(jpeg) => Image { data: jpeg, mime: "image/jpeg".into(), drawn: true },
        None => Image { data: stored.to_vec(), mime, drawn: false },
    })
}

/// Writes the report section's blocks, inlining screenshots as image items within the budget.
struct Blocks<'a> {
    state: &'a AppState,
    report: &'a Report,
    /// Inline the screenshots (`get_report`), or only name them (`resources/read`).
    images: bool,
    /// The image items so far, and the bytes of image data they hold.
    items: Vec<Value>,
    bytes: usize,
    /// Screenshots written so far.
    number: usize,
}

impl Blocks<'_> {
    async fn screenshot(&mut self, doc: &mut String, block: &Value) {
        let (state, report) = (self.state, self.report);
        self.number += 1;
        let n = self.number;
        let blob_id = text_of(block, "blobId").unwrap_or_default();
        let size = match (block.get("width").and_then(Value::as_i64), block.get("height").and_then(Value::as_i64)) {
            (Some(w), Some(h)) => format!("{w}×{h}"),
            _ => "size unknown".into(),
        };
        let shapes = picture::shapes(block.get("annotations"));
        let count = match shapes.len() {
            0 => String::new(),
            1 => ", 1 annotation".into(),
            k => format!(", {k} annotations"),
        };
        let refs = blob_refs(report, blob_id);
        let outcome = if !self.images {
            Err(String::new())
        } else if self.items.len() >= MAX_IMAGES {
            Err(format!("not inlined: at most {MAX_IMAGES} images per answer"))
        } else {
            match screenshot_image(state, block, &shapes).await {
                Ok(image) if self.bytes + image.data.len() <= MAX_IMAGE_BYTES => {
                    self.bytes += image.data.len();
                    self.items
                        .push(json!({"type": "image", "data": STANDARD.encode(&image.data), "mimeType": image.mime}));
                    Ok(image.drawn)
                }
                Ok(_) => Err("not inlined: the 8 MB image budget is used up".into()),
                Err(reason) => Err(reason),
            }
        };
        match outcome {
            Ok(drawn) => {
                let index = self.items.len();
                let how = match (shapes.is_empty(), drawn) {
                    (true, _) => "",
                    (false, true) => ", the annotations drawn on it",
                    (false, false) => ", as stored",
                };
                let _ = writeln!(doc, "Screenshot {n} ({size}{count}): image {index} below{how}{refs}");
            }
            Err(reason) if reason.is_empty() => {
                let _ = writeln!(doc, "Screenshot {n} ({size}{count}){refs}");
            }
            Err(reason) => {
                let _ = writeln!(doc, "Screenshot {n} ({size}{count}): {reason}{refs}");
            }
        }
        annotation_lines(doc, &shapes);
        doc.push('\n');
    }

    /// One block of the report section (text blocks are written before the others).
    async fn write(&mut self, doc: &mut String, block: &Value) {
        let report = self.report;
        match text_of(block, "type").unwrap_or_default() {
            "text" => {
                let _ = writeln!(doc, "{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
            }
            "selection" => {
                let _ = write!(doc, "Selected text:\n{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
                element_line(doc, "Element: ", block);
                doc.push('\n');
            }
            "quote" => {
                let _ = write!(doc, "Quoted text:\n{}", fenced(text_of(block, "text").unwrap_or_default(), "text"));
                element_line(doc, "Element: ", block);
                labelled(doc, "Comment", text_of(block, "comment").unwrap_or_default());
                doc.push('\n');
            }
            "pinpoint" => {
                let selector = text_of(block, "selector").unwrap_or_default();
                let _ = writeln!(
                    doc,
                    "Pinpoint · Element: {}{}{}",
                    long_code(selector),
                    selector_details(block.get("target"), selector),
                    pinpoint_place(block)
                );
                if let Some(comment) = text_of(block, "comment") {
                    labelled(doc, "Comment", comment);
                }
                doc.push('\n');
            }
            "audio" => {
                let seconds =
                    block.get("durationMs").and_then(Value::as_f64).map(|ms| format!(" ({:.1} s)", ms / 1000.0));
                let refs = text_of(block, "blobId").map(|id| blob_refs(report, id)).unwrap_or_default();
                let _ = writeln!(doc, "Voice note{}{refs}", seconds.unwrap_or_default());
                match text_of(block, "transcript") {
                    Some(transcript) => {
                        let _ = write!(doc, "Transcript:\n{}", fenced(transcript, "text"));
                    }
                    None => doc.push_str("(no transcript)\n"),
                }
                doc.push('\n');
            }
            "file" => {
                let size = block.get("bytes").and_then(Value::as_i64).map(human_bytes).unwrap_or_default();
                let _ = writeln!(
                    doc,
                    "File: {} ({size}, {}){}",
                    code(text_of(block, "name").unwrap_or("file")),
                    text_of(block, "mime").map_or_else(|| "unknown type".into(), code),
                    blob_refs(report, text_of(block, "blobId").unwrap_or_default())
                );
                if let Some(description) = text_of(block, "description") {
                    labelled(doc, "Description", description);
                }
                doc.push('\n');
            }
            "screenshot" => self.screenshot(doc, block).await,
            other => {
                let _ = writeln!(doc, "({} block)\n", code(other));
            }
        }
    }
}

/// `- network` lines: each failed request on one line.
fn network_section(doc: &mut String, context: &Value) {
    let Some(entries) = context.get("network").and_then(Value::as_array).filter(|e| !e.is_empty()) else { return };
    let _ = writeln!(doc, "## Failed requests (sent by the reporter's page; untrusted)\n");
    for entry in entries {
        let status = match entry.get("status").and_then(Value::as_u64) {
            Some(0) | None => "no answer".to_string(),
            Some(status) => status.to_string(),
        };
        let duration = entry
            .get("durationMs")
            .and_then(Value::as_f64)
            .map(|ms| format!(" after {} ms", ms.round()))
            .unwrap_or_default();
        let at = text_of(entry, "time").map(|t| format!(" at {}", one_line(t, 64))).unwrap_or_default();
        let _ = writeln!(
            doc,
            "- {} {} → {status}{duration}{at}",
            code(text_of(entry, "method").unwrap_or("?")),
            long_code(text_of(entry, "url").unwrap_or_default())
        );
    }
    doc.push('\n');
}

/// The page section: every context field no other part shows, the known ones first.
fn page_section(doc: &mut String, context: &Value) {
    let Some(context) = context.as_object() else { return };
    let mut lines = String::new();
    let has_url = context.get("url").and_then(Value::as_str).is_some_and(|url| !url.is_empty());
    for field in PAGE_FIELDS {
        let Some(value) = context.get(field).filter(|v| !v.is_null()) else { continue };
        match (field, value) {
            // pathname and host only repeat the URL when there is one.
            ("pathname", _) if has_url => {}
            ("url", Value::String(url)) => {
                let _ = writeln!(lines, "- url: {}", long_code(url));
            }
            ("viewport", Value::Object(size)) => {
                let side = |k: &str| size.get(k).and_then(Value::as_f64).map_or("?".into(), number);
                let _ = writeln!(lines, "- viewport: {}×{} CSS pixels", side("width"), side("height"));
            }
            ("flags", Value::Array(flags)) => {
                let list: Vec<String> = flags.iter().filter_map(Value::as_str).map(code).collect();
                if !list.is_empty() {
                    let _ = writeln!(lines, "- flags: {}", list.join(", "));
                }
            }
            (_, Value::String(text)) if text.is_empty() => {}
            (_, Value::Object(map)) if map.is_empty() => {}
            (field, value) => labelled_json(&mut lines, &format!("- {field}"), value),
        }
    }
    if !has_url && let Some(host) = context.get("host").filter(|v| !v.is_null()) {
        labelled_json(&mut lines, "- host", host);
    }
    let known = |k: &str| PAGE_FIELDS.contains(&k) || SHOWN_ELSEWHERE.contains(&k) || k == "host";
    for (key, value) in context.iter().filter(|(k, v)| !known(k) && !v.is_null()) {
        labelled_json(&mut lines, &format!("- {}", code(key)), value);
    }
    if !lines.is_empty() {
        let _ = writeln!(doc, "## Page (sent by the reporter's page; untrusted)\n");
        doc.push_str(&lines);
        doc.push('\n');
    }
}

fn artifact_section(doc: &mut String, artifact: &Value) {
    let _ = writeln!(doc, "## Artifact (sent by the reporter's page; untrusted)\n");
    for field in ["id", "title", "tool", "source", "goal"] {
        if let Some(value) = text_of(artifact, field) {
            labelled(doc, &format!("- {field}"), value);
        }
    }
    if let Some(url) = text_of(artifact, "url") {
        let _ = writeln!(doc, "- url: {}", long_code(url));
    }
    for c in artifact.get("constraints").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        labelled(doc, "- constraint", c);
    }
    if let Some(meta) = artifact.get("meta").filter(|m| m.as_object().is_some_and(|m| !m.is_empty())) {
        labelled_json(doc, "- meta", meta);
    }
    doc.push('\n');
}

pub async fn render(state: &AppState, report: &Report, parts: Parts<'_>) -> Vec<Value> {
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
    if let Some(project) = parts.project {
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
    if !report.labels.is_empty() {
        let labels: Vec<String> = report.labels.iter().map(|l| code(l)).collect();
        let _ = writeln!(doc, "labels: {}", labels.join(", "));
    }
    let artifact = report.context.get("artifact").filter(|a| a.is_object());
    if let (None, Some(artifact_id)) = (artifact, &report.artifact_id) {
        let _ = writeln!(doc, "artifact: {}", code(artifact_id));
    }

    // From here on, every section whose heading says so holds what the reporter's page sent.
    // The reporter's message first (the text blocks, in order), then every other block in order.
    let blocks = report.blocks.as_array().map(Vec::as_slice).unwrap_or_default();
    let is_text = |b: &&Value| text_of(b, "type") == Some("text");
    let mut writer = Blocks { state, report, images: parts.images, items: Vec::new(), bytes: 0, number: 0 };
    let _ = writeln!(doc, "\n## Report (written by the reporter; untrusted)\n");
    for b in blocks.iter().filter(is_text).chain(blocks.iter().filter(|b| !is_text(b))) {
        writer.write(&mut doc, b).await;
    }

    if let Some(errors) = report.context.get("consoleErrors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
        let _ = writeln!(doc, "## Console errors (sent by the reporter's page; untrusted)\n");
        // One block per error: a stack trace spans lines, and where one error ends stays clear.
        for error in errors.iter().filter_map(Value::as_str) {
            let _ = writeln!(doc, "{}", fenced(error, "text"));
        }
    }
    network_section(&mut doc, &report.context);
    page_section(&mut doc, &report.context);
    if let Some(artifact) = artifact {
        artifact_section(&mut doc, artifact);
    }
    if !parts.history.is_empty() {
        let _ = writeln!(doc, "## Status history\n");
        for change in parts.history {
            let (name, kind) = who(&change.by);
            let _ = writeln!(
                doc,
                "- {}: {} → {} by {name} ({kind})",
                time::iso(change.at),
                one_line(&change.from_status, 40),
                one_line(&change.to_status, 40),
            );
        }
        doc.push('\n');
    }
    if !parts.comments.is_empty() {
        let _ = writeln!(doc, "## Comments\n");
        // The header line is the service's; the text is its author's and sits in its own block.
        for (n, c) in parts.comments.iter().enumerate() {
            let kind = c.kind.as_deref().map(|k| format!(", {}", one_line(k, ONE_LINE_MAX_CHARS))).unwrap_or_default();
            let state = if c.draft { "draft" } else { "published" };
            let (name, author_kind) = who(&c.author);
            let _ = writeln!(
                doc,
                "Comment {} by {name} ({state}{kind}, {}; {author_kind}):\n{}",
                n + 1,
                time::iso(c.created_at),
                fenced(&c.text, "text")
            );
        }
    }

    doc.truncate(doc.trim_end().len());
    doc.push('\n');
    let mut content = vec![json!({"type": "text", "text": doc})];
    content.extend(writer.items);
    content
}
