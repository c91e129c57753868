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
use serde_json::{Number, Value, json};
use std::fmt::Write;
use svc_core::block::{Block, PinpointBlock, ScreenshotBlock, SelectorInfo};
use svc_core::context::{ArtifactMeta, Context};
use svc_core::markdown::{LONG_LINE_MAX_CHARS, ONE_LINE_MAX_CHARS, code_span, fenced, one_line};
use svc_core::model::{Author, AuthorKind, Comment, Project, Report, StatusChange};
use svc_core::picture::{self, Shape, ShapeKind};
use svc_core::steps::{Step, StepKind};
use svc_core::{ids, time};

use super::resources;
use crate::state::AppState;

pub const MAX_IMAGES: usize = 6;
/// 8 MiB of image data before base64.
pub const MAX_IMAGE_BYTES: usize = 8 * 1024 * 1024;

/// What goes into the document besides the report.
pub struct Parts<'a> {
    /// The report's project, named only for organization-wide callers.
    pub project: Option<&'a Project>,
    pub comments: &'a [Comment],
    pub history: &'a [StatusChange],
    /// Inline the screenshots as image items (`get_report`); without, only their resource URIs.
    pub images: bool,
    /// Search for similar reports (a full-text search): for agents, not the dashboard's copy.
    pub similar: bool,
}

/// Text worth showing: present and not empty.
fn shown(text: Option<&str>) -> Option<&str> {
    text.filter(|s| !s.is_empty())
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

/// A number the widget sent, as people write it.
fn json_number(n: &Number) -> String {
    number(svc_core::block::number(n))
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
fn selector_details(target: Option<&SelectorInfo>, selector: &str) -> String {
    let Some(target) = target else { return String::new() };
    let codes = |items: Option<&Vec<String>>| -> Vec<String> {
        items.map(|items| items.iter().map(|item| long_code(item)).collect()).unwrap_or_default()
    };
    let mut out = String::new();
    let text = shown(target.text.as_deref());
    if let Some(text) = text {
        let _ = write!(out, " · text: {}", code(text));
    }
    // The name is news only where it differs from the text (an icon button, a labelled field).
    if let Some(name) = shown(target.accessible_name.as_deref()).filter(|name| Some(name.trim()) != text.map(str::trim))
    {
        let _ = write!(out, " · accessible name: {}", code(name));
    }
    let ids = codes(target.test_ids.as_ref());
    if !ids.is_empty() {
        let _ = write!(out, " · testIds: {}", ids.join(", "));
    }
    if let Some(index) = target.match_index {
        let _ = write!(out, " · matchIndex: {index}");
    }
    if let Some(component) = shown(target.react_component.as_deref()) {
        let _ = write!(out, " · component: {}", code(component));
    }
    let hosts = codes(target.shadow_hosts.as_ref());
    if !hosts.is_empty() {
        let _ = write!(out, " · inside shadow roots of: {}", hosts.join(" > "));
    }
    let frames = codes(target.frames.as_ref());
    if !frames.is_empty() {
        let _ = write!(out, " · inside frames: {}", frames.join(" > "));
    }
    if let Some(css) = shown(Some(&target.css)).filter(|css| *css != selector) {
        let _ = write!(out, " · target css: {}", long_code(css));
    }
    if let Some(xpath) = shown(target.xpath.as_deref()) {
        let _ = write!(out, " · xpath: {}", long_code(xpath));
    }
    out
}

/// `Element: <css>` and its details, for selections and quotes.
fn element_line(doc: &mut String, label: &str, selector: Option<&str>, target: Option<&SelectorInfo>) {
    let selector = shown(selector).or(target.map(|t| t.css.as_str()));
    if let Some(css) = selector {
        let _ = writeln!(doc, "{label}{}{}", long_code(css), selector_details(target, css));
    }
}

/// Where a pinpoint landed: the click within the element's box, and the box on the page.
fn pinpoint_place(pin: &PinpointBlock) -> String {
    let mut out = String::new();
    let n = svc_core::block::number;
    if let Some(point) = &pin.point {
        let _ = write!(out, " · clicked at {:.0}%, {:.0}% of its box", n(&point.x) * 100.0, n(&point.y) * 100.0);
    }
    if let Some(rect) = &pin.rect {
        let _ = write!(
            out,
            " · box: {}×{} at ({}, {}) on the page",
            json_number(&rect.width),
            json_number(&rect.height),
            json_number(&rect.x),
            json_number(&rect.y)
        );
    }
    out
}

/// The `reporter:` line: who filed the report, and whether Svc verified it.
fn reporter_line(report: &Report) -> Option<String> {
    if let Some(identity) = &report.identity {
        let email = shown(identity.email.as_deref());
        let name = shown(identity.name.as_deref()).or(email).unwrap_or("unnamed");
        let email = email.map(|e| format!(", email {}", code(e))).unwrap_or_default();
        return Some(format!("{}{email} (verified, user id {})", code(name), code(&identity.user_id)));
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
    let kind = match author.kind {
        AuthorKind::Agent => "agent",
        AuthorKind::User => "team member",
        AuthorKind::Reporter => "reporter",
        AuthorKind::Cli => "command line",
        AuthorKind::System => "Svc",
    };
    (code(name), kind.to_string())
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
async fn screenshot_image(state: &AppState, block: &ScreenshotBlock, shapes: &[Shape]) -> Result<Image, String> {
    let stored = match state.blobs.read_all(&block.blob_id).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("its file is missing".into()),
        Err(error) => {
            tracing::warn!(%error, "could not read a screenshot");
            return Err("could not be read".into());
        }
    };
    let mime = shown(block.mime.as_deref()).unwrap_or("image/png").to_string();
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
    async fn screenshot(&mut self, doc: &mut String, block: &ScreenshotBlock) {
        let (state, report) = (self.state, self.report);
        self.number += 1;
        let n = self.number;
        let blob_id = &block.blob_id;
        let size = match (&block.width, &block.height) {
            (Some(w), Some(h)) => format!("{}×{}", json_number(w), json_number(h)),
            _ => "size unknown".into(),
        };
        let shapes = picture::shapes(block.annotations.as_deref().unwrap_or_default());
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
    async fn write(&mut self, doc: &mut String, block: &Block) {
        let report = self.report;
        match block {
            Block::Text(b) => {
                let _ = writeln!(doc, "{}", fenced(&b.text, "text"));
            }
            Block::Selection(b) => {
                let _ = write!(doc, "Selected text:\n{}", fenced(&b.text, "text"));
                element_line(doc, "Element: ", b.selector.as_deref(), b.target.as_ref());
                doc.push('\n');
            }
            Block::Quote(b) => {
                let _ = write!(doc, "Quoted text:\n{}", fenced(&b.text, "text"));
                element_line(doc, "Element: ", Some(&b.selector), Some(&b.target));
                labelled(doc, "Comment", &b.comment);
                doc.push('\n');
            }
            Block::Pinpoint(b) => {
                let _ = writeln!(
                    doc,
                    "Pinpoint · Element: {}{}{}",
                    long_code(&b.selector),
                    selector_details(Some(&b.target), &b.selector),
                    pinpoint_place(b)
                );
                if let Some(comment) = shown(b.comment.as_deref()) {
                    labelled(doc, "Comment", comment);
                }
                doc.push('\n');
            }
            Block::Audio(b) => {
                let seconds =
                    b.duration_ms.as_ref().map(|ms| format!(" ({:.1} s)", svc_core::block::number(ms) / 1000.0));
                let refs = blob_refs(report, &b.blob_id);
                let _ = writeln!(doc, "Voice note{}{refs}", seconds.unwrap_or_default());
                match shown(b.transcript.as_deref()) {
                    Some(transcript) => {
                        let _ = write!(doc, "Transcript:\n{}", fenced(transcript, "text"));
                    }
                    None => doc.push_str("(no transcript)\n"),
                }
                doc.push('\n');
            }
            Block::File(b) => {
                let size = b.bytes.as_ref().and_then(Number::as_i64).map(human_bytes).unwrap_or_default();
                let _ = writeln!(
                    doc,
                    "File: {} ({size}, {}){}",
                    code(shown(Some(&b.name)).unwrap_or("file")),
                    shown(b.mime.as_deref()).map_or_else(|| "unknown type".into(), code),
                    blob_refs(report, &b.blob_id)
                );
                if let Some(description) = shown(b.description.as_deref()) {
                    labelled(doc, "Description", description);
                }
                doc.push('\n');
            }
            Block::Screenshot(b) => self.screenshot(doc, b).await,
        }
    }
}

/// `- network` lines: each failed request on one line.
/// "Steps before the report": one numbered line per step the widget recorded, oldest first;
/// selectors and the reporter's texts in code spans, typed values never (the widget never sends
/// them).
fn steps_section(doc: &mut String, context: &Context) {
    let steps = context.steps();
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(doc, "## Steps before the report (recorded by the reporter's page; untrusted)\n");
    for (n, step) in steps.iter().enumerate() {
        let _ = writeln!(doc, "{}. {} ({})", n + 1, step_line(step), step.before_text());
    }
    doc.push('\n');
}

/// One step in words, its values in code spans.
fn step_line(step: &Step) -> String {
    let target = || {
        step.target.as_ref().map_or_else(
            || "an element".to_string(),
            |target| {
                let mut words = long_code(&target.css);
                if let Some(name) = shown(target.accessible_name.as_deref()).or(shown(target.text.as_deref())) {
                    words.push_str(&format!(" ({})", code(name)));
                }
                words
            },
        )
    };
    match step.kind {
        StepKind::Click => format!("click {}", target()),
        StepKind::Input => {
            let kind = step.input_type.as_deref().map(code).unwrap_or_else(|| "a".into());
            let length = step.length.map(|n| format!(", {n} characters")).unwrap_or_default();
            let changed = if step.changed == Some(false) { ", unchanged" } else { "" };
            format!("type into {} ({kind} field{length}{changed}; the value is not recorded)", target())
        }
        StepKind::Change => {
            let value = step.value.as_deref().map(|v| format!(" to {}", code(v))).unwrap_or_default();
            format!("set {}{value}", target())
        }
        StepKind::Key => format!("press {} in {}", code(step.key.as_deref().unwrap_or("?")), target()),
        StepKind::Navigate => {
            let via = step.via.as_deref().map(|v| format!(" ({})", code(v))).unwrap_or_default();
            format!("go to {}{via}", long_code(step.url.as_deref().unwrap_or("?")))
        }
        StepKind::Scroll => format!(
            "scroll to {}, {}",
            step.x.as_ref().map_or("0".into(), json_number),
            step.y.as_ref().map_or("0".into(), json_number)
        ),
        StepKind::Resize => format!(
            "resize the window to {}×{}",
            step.width.as_ref().map_or("?".into(), json_number),
            step.height.as_ref().map_or("?".into(), json_number)
        ),
        StepKind::Request => {
            let status = match step.status {
                Some(0) | None => "no answer".to_string(),
                Some(status) => status.to_string(),
            };
            format!(
                "request {} {} failed: {status}",
                code(step.method.as_deref().unwrap_or("GET")),
                long_code(step.url.as_deref().unwrap_or("?"))
            )
        }
        StepKind::Console => format!("console error {}", code(step.message.as_deref().unwrap_or(""))),
        StepKind::Private => "an action inside a private area".to_string(),
    }
}

fn network_section(doc: &mut String, context: &Context) {
    let entries = context.network();
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(doc, "## Failed requests (sent by the reporter's page; untrusted)\n");
    for entry in entries {
        let status = match entry.status {
            0 => "no answer".to_string(),
            status => status.to_string(),
        };
        let duration = format!(" after {} ms", svc_core::block::number(&entry.duration_ms).round());
        let _ = writeln!(
            doc,
            "- {} {} → {status}{duration} at {}",
            code(&entry.method),
            long_code(&entry.url),
            one_line(&entry.time, 64)
        );
    }
    doc.push('\n');
}

/// The page section: every context field no other part shows, the known ones first, then those
/// this version does not know (a site may attach anything).
fn page_section(doc: &mut String, context: &Context) {
    let mut lines = String::new();
    let has_url = shown(context.url.as_deref()).is_some();
    if let Some(url) = shown(context.url.as_deref()) {
        let _ = writeln!(lines, "- url: {}", long_code(url));
    }
    if let Some(viewport) = &context.viewport {
        let side = |n: &Option<Number>| n.as_ref().map_or("?".into(), json_number);
        let _ = writeln!(lines, "- viewport: {}×{} CSS pixels", side(&viewport.width), side(&viewport.height));
    }
    if let Some(device) = context.device {
        labelled(&mut lines, "- device", device.as_str());
    }
    for (field, value) in [
        ("userAgent", &context.user_agent),
        ("language", &context.language),
        ("timestamp", &context.timestamp),
        ("channelSource", &context.channel_source),
    ] {
        if let Some(value) = shown(value.as_deref()) {
            labelled(&mut lines, &format!("- {field}"), value);
        }
    }
    let flags: Vec<String> = context.flags().iter().map(|f| code(f)).collect();
    if !flags.is_empty() {
        let _ = writeln!(lines, "- flags: {}", flags.join(", "));
    }
    for (field, object) in [("extra", &context.extra), ("custom", &context.custom), ("reporter", &context.reporter)] {
        if let Some(object) = object.as_ref().filter(|o| !o.is_empty()) {
            labelled(&mut lines, &format!("- {field}"), &Value::Object(object.clone()).to_string());
        }
    }
    // pathname and host only repeat the URL when there is one.
    if !has_url {
        for (field, value) in [("pathname", &context.pathname), ("host", &context.host)] {
            if let Some(value) = shown(value.as_deref()) {
                labelled(&mut lines, &format!("- {field}"), value);
            }
        }
    }
    for (key, value) in context.other.iter().filter(|(_, v)| !v.is_null()) {
        labelled_json(&mut lines, &format!("- {}", code(key)), value);
    }
    if !lines.is_empty() {
        let _ = writeln!(doc, "## Page (sent by the reporter's page; untrusted)\n");
        doc.push_str(&lines);
        doc.push('\n');
    }
}

fn artifact_section(doc: &mut String, artifact: &ArtifactMeta) {
    let _ = writeln!(doc, "## Artifact (sent by the reporter's page; untrusted)\n");
    labelled(doc, "- id", &artifact.id);
    for (field, value) in
        [("title", &artifact.title), ("tool", &artifact.tool), ("source", &artifact.source), ("goal", &artifact.goal)]
    {
        if let Some(value) = shown(value.as_deref()) {
            labelled(doc, &format!("- {field}"), value);
        }
    }
    if let Some(url) = shown(artifact.url.as_deref()) {
        let _ = writeln!(doc, "- url: {}", long_code(url));
    }
    for constraint in artifact.constraints.iter().flatten() {
        labelled(doc, "- constraint", constraint);
    }
    if let Some(meta) = artifact.meta.as_ref().filter(|m| !m.is_empty()) {
        labelled(doc, "- meta", &Value::Object(meta.clone()).to_string());
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
        one_line(report.status.as_str(), ONE_LINE_MAX_CHARS),
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
    if report.author.kind == AuthorKind::Agent
        && let Some(via) = report.context.extra_text("via")
    {
        let _ = writeln!(doc, "via: {}", one_line(via, ONE_LINE_MAX_CHARS));
    }
    if !report.labels.is_empty() {
        let labels: Vec<String> = report.labels.iter().map(|l| code(l)).collect();
        let _ = writeln!(doc, "labels: {}", labels.join(", "));
    }
    // The linked issue, so an agent can `gh issue view` it (a missing link is not worth failing
    // the document over).
    let links =
        svc_service::trackers::links(&state.service, std::slice::from_ref(&report.id)).await.unwrap_or_default();
    for link in links {
        let _ = writeln!(
            doc,
            "issue: {} {} (`gh issue view {} --repo {}`)",
            code(&link.reference()),
            long_code(&link.url),
            link.number,
            link.repository
        );
    }
    // Duplicates: the original to fix instead, or the reports that close with this one.
    let service = &state.service;
    let duplication = svc_service::duplicates::of(service, report).await.ok();
    if let Some(original_id) = duplication.as_ref().and_then(|d| d.duplicate_of.as_deref())
        && let Ok(Some(original)) =
            svc_service::reports::get_in(service, std::slice::from_ref(&report.project_id), original_id).await
    {
        let _ = writeln!(
            doc,
            "Duplicate of: `{}` (status: {}; fix that one, this report follows it): {}",
            original.id,
            original.status,
            code(&one_line(&original.title, ONE_LINE_MAX_CHARS))
        );
    }
    if let Some(duplicates) = duplication.map(|d| d.duplicates).filter(|d| !d.is_empty()) {
        let ids: Vec<String> = duplicates.iter().map(|id| format!("`{id}`")).collect();
        let n = duplicates.len();
        let _ = writeln!(
            doc,
            "Also reported by: {n} more report{} marked as duplicates ({}); their reporters follow this one",
            if n == 1 { "" } else { "s" },
            ids.join(", ")
        );
    }
    let artifact = report.context.artifact.as_ref();
    if let (None, Some(artifact_id)) = (artifact, &report.artifact_id) {
        let _ = writeln!(doc, "artifact: {}", code(artifact_id));
    }

    // From here on, every section whose heading says so holds what the reporter's page sent.
    // The reporter's message first (the text blocks, in order), then every other block in order.
    let blocks = &report.blocks;
    let is_text = |b: &&Block| matches!(b, Block::Text(_));
    let mut writer = Blocks { state, report, images: parts.images, items: Vec::new(), bytes: 0, number: 0 };
    let _ = writeln!(doc, "\n## Report (written by the reporter; untrusted)\n");
    for b in blocks.iter().filter(is_text).chain(blocks.iter().filter(|b| !is_text(b))) {
        writer.write(&mut doc, b).await;
    }

    steps_section(&mut doc, &report.context);
    let errors = report.context.console_errors();
    if !errors.is_empty() {
        let _ = writeln!(doc, "## Console errors (sent by the reporter's page; untrusted)\n");
        // One block per error: a stack trace spans lines, and where one error ends stays clear.
        for error in errors {
            let _ = writeln!(doc, "{}", fenced(error, "text"));
        }
    }
    network_section(&mut doc, &report.context);
    page_section(&mut doc, &report.context);
    if let Some(artifact) = artifact {
        artifact_section(&mut doc, artifact);
    }
    if parts.similar
        && let Ok(similar) = svc_service::duplicates::similar(service, report).await
        && !similar.is_empty()
    {
        let _ = writeln!(doc, "## Similar reports (found by Svc; their titles are reporters' words; untrusted)\n");
        for other in similar {
            let _ = writeln!(
                doc,
                "- `{}` · {} · {}: {}",
                other.report.id,
                other.report.status,
                other.why,
                code(&one_line(&other.report.title, ONE_LINE_MAX_CHARS))
            );
        }
        doc.push('\n');
    }
    if !parts.history.is_empty() {
        let _ = writeln!(doc, "## Status history\n");
        for change in parts.history {
            let (name, kind) = who(&change.by);
            let _ = writeln!(
                doc,
                "- {}: {} → {} by {name} ({kind})",
                time::iso(change.at),
                change.from_status,
                change.to_status,
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
