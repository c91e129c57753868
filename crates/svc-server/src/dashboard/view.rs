//! What the dashboard's templates show, built from domain values. Every reporter value stays a
//! plain string here; the templates escape it. Only `http(s)` links become links.

use serde_json::Value;
use svc_core::model::{Comment, Report, StatusChange};

/// A short, human time ("3 min ago", "Mar 4") next to its exact ISO form for a tooltip.
pub struct When {
    pub relative: String,
    pub iso: String,
}

impl When {
    pub fn at(ms: i64, now: i64) -> Self {
        let seconds = (now - ms).max(0) / 1000;
        let relative = match seconds {
            0..=59 => "just now".to_string(),
            60..=3599 => format!("{} min ago", seconds / 60),
            3600..=86_399 => format!("{} h ago", seconds / 3600),
            86_400..=604_799 => format!("{} d ago", seconds / 86_400),
            _ => svc_core::time::iso(ms)[..10].to_string(),
        };
        When { relative, iso: svc_core::time::iso(ms) }
    }

    /// A time that may lie ahead (an expiry): "in 3 d", "in 45 min", or [`When::at`] once past.
    pub fn ahead(ms: i64, now: i64) -> Self {
        let seconds = (ms - now) / 1000;
        let relative = match seconds {
            ..=0 => return When::at(ms, now),
            1..=59 => "in under a minute".to_string(),
            60..=3599 => format!("in {} min", seconds / 60),
            3600..=86_399 => format!("in {} h", seconds / 3600),
            86_400..=5_183_999 => format!("in {} d", seconds / 86_400),
            _ => svc_core::time::iso(ms)[..10].to_string(),
        };
        When { relative, iso: svc_core::time::iso(ms) }
    }
}

/// A piece of text, marked where it matches the search.
pub struct Segment {
    pub text: String,
    pub hit: bool,
}

/// Splits `text` around case-insensitive matches of the search's words (for `<mark>`).
pub fn highlight(text: &str, search: &str) -> Vec<Segment> {
    let words: Vec<String> = search
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return vec![Segment { text: text.to_string(), hit: false }];
    }
    let lower = text.to_lowercase();
    // Lower-casing can change byte lengths outside ASCII; then show the text unmarked.
    if lower.len() != text.len() {
        return vec![Segment { text: text.to_string(), hit: false }];
    }
    let mut segments = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let next = words
            .iter()
            .filter_map(|w| lower[at..].find(w.as_str()).map(|i| (at + i, w.len())))
            .min_by_key(|(start, len)| (*start, usize::MAX - len));
        match next {
            Some((start, len)) if text.is_char_boundary(start) && text.is_char_boundary(start + len) => {
                if start > at {
                    segments.push(Segment { text: text[at..start].to_string(), hit: false });
                }
                segments.push(Segment { text: text[start..start + len].to_string(), hit: true });
                at = start + len;
            }
            _ => {
                segments.push(Segment { text: text[at..].to_string(), hit: false });
                break;
            }
        }
    }
    segments
}

fn text_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn number_of(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64).filter(|n| n.is_finite())
}

/// A CSS selector and what else the widget recorded about the element.
pub struct Selector {
    pub css: String,
    pub xpath: Option<String>,
    pub test_ids: Vec<String>,
    pub component: Option<String>,
    pub match_index: Option<u64>,
}

impl Selector {
    fn of(block: &Value) -> Option<Self> {
        let target = block.get("target");
        let css = target.and_then(|t| text_of(t, "css")).or_else(|| text_of(block, "selector"))?;
        let target = target.cloned().unwrap_or(Value::Null);
        Some(Selector {
            css: css.to_string(),
            xpath: text_of(&target, "xpath").map(str::to_string),
            test_ids: target
                .get("testIds")
                .and_then(Value::as_array)
                .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            component: text_of(&target, "reactComponent").map(str::to_string),
            match_index: target.get("matchIndex").and_then(Value::as_u64),
        })
    }
}

/// Where a pinpoint falls on a screenshot, in the screenshot's own coordinates (for an SVG
/// overlay: attributes, not inline styles, so the CSP holds).
pub struct Marker {
    pub x: f64,
    pub y: f64,
    pub radius: f64,
}

pub enum BlockView {
    Text { text: String },
    Screenshot { url: String, width: i64, height: i64, markers: Vec<Marker>, annotations: usize },
    Audio { url: String, duration: Option<String>, transcript: Option<String> },
    Selection { text: String, selector: Option<Selector> },
    Quote { text: String, comment: String, selector: Option<Selector> },
    Pinpoint { comment: Option<String>, selector: Option<Selector> },
    File { url: String, name: String, size: String, description: Option<String> },
    Unknown { kind: String },
}

pub fn blob_url(blob_id: &str) -> String {
    format!("/dashboard/blobs/{blob_id}")
}

fn size_text(bytes: f64) -> String {
    match bytes {
        b if b >= 1_048_576.0 => format!("{:.1} MB", b / 1_048_576.0),
        b if b >= 1024.0 => format!("{:.0} KB", b / 1024.0),
        b => format!("{b:.0} bytes"),
    }
}

/// The blocks of a report as the page shows them. Pinpoints are also drawn on the screenshot
/// they were made on (the report's screenshot, in the page's viewport coordinates).
pub fn blocks(report: &Report) -> Vec<BlockView> {
    let blocks = report.blocks.as_array().cloned().unwrap_or_default();
    let viewport = report.context.get("viewport");
    let viewport_size = viewport.and_then(|v| Some((number_of(v, "width")?, number_of(v, "height")?)));
    let pins: Vec<(f64, f64)> = blocks
        .iter()
        .filter(|b| text_of(b, "type") == Some("pinpoint"))
        .filter_map(|b| {
            let rect = b.get("rect")?;
            let (x, y, w, h) =
                (number_of(rect, "x")?, number_of(rect, "y")?, number_of(rect, "width")?, number_of(rect, "height")?);
            let point = b.get("point");
            let px = point.and_then(|p| number_of(p, "x")).unwrap_or(0.5);
            let py = point.and_then(|p| number_of(p, "y")).unwrap_or(0.5);
            Some((x + px * w, y + py * h))
        })
        .collect();
    blocks
        .iter()
        .map(|block| match text_of(block, "type").unwrap_or_default() {
            "text" => BlockView::Text { text: text_of(block, "text").unwrap_or_default().to_string() },
            "screenshot" => {
                let width = block.get("width").and_then(Value::as_i64).unwrap_or(0);
                let height = block.get("height").and_then(Value::as_i64).unwrap_or(0);
                // Pins are in CSS pixels of the viewport; the image may be scaled (device pixels).
                let markers = match viewport_size {
                    Some((vw, vh)) if vw > 0.0 && vh > 0.0 && width > 0 && height > 0 => pins
                        .iter()
                        .filter(|(x, y)| (0.0..=vw).contains(x) && (0.0..=vh).contains(y))
                        .map(|(x, y)| Marker {
                            x: (x / vw * width as f64).round(),
                            y: (y / vh * height as f64).round(),
                            radius: (width.max(height) as f64 / 80.0).clamp(8.0, 40.0).round(),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                BlockView::Screenshot {
                    url: blob_url(text_of(block, "blobId").unwrap_or_default()),
                    width,
                    height,
                    markers,
                    annotations: block.get("annotations").and_then(Value::as_array).map_or(0, Vec::len),
                }
            }
            "audio" => BlockView::Audio {
                url: blob_url(text_of(block, "blobId").unwrap_or_default()),
                duration: number_of(block, "durationMs").map(|ms| {
                    let total = (ms / 1000.0).round() as u64;
                    format!("{}:{:02}", total / 60, total % 60)
                }),
                transcript: text_of(block, "transcript").map(str::to_string),
            },
            "selection" => BlockView::Selection {
                text: text_of(block, "text").unwrap_or_default().to_string(),
                selector: Selector::of(block),
            },
            "quote" => BlockView::Quote {
                text: text_of(block, "text").unwrap_or_default().to_string(),
                comment: text_of(block, "comment").unwrap_or_default().to_string(),
                selector: Selector::of(block),
            },
            "pinpoint" => BlockView::Pinpoint {
                comment: text_of(block, "comment").map(str::to_string),
                selector: Selector::of(block),
            },
            "file" => BlockView::File {
                url: blob_url(text_of(block, "blobId").unwrap_or_default()),
                name: text_of(block, "name").unwrap_or("file").to_string(),
                size: number_of(block, "bytes").map(size_text).unwrap_or_default(),
                description: text_of(block, "description").map(str::to_string),
            },
            other => BlockView::Unknown { kind: other.to_string() },
        })
        .collect()
}

/// One line of the report's context (label, value, and a link when the value is an http(s) URL).
pub struct Fact {
    pub label: &'static str,
    pub value: String,
    pub link: Option<String>,
}

/// A compact reading of a user agent: browser and OS names, without a parser's weight.
pub fn browser_and_os(user_agent: &str) -> String {
    // Safari's own version is after `Version/` (its `Safari/` token is the WebKit build); Chrome,
    // Firefox and Edge on iOS name themselves with their own tokens.
    let browser = [
        ("Edg/", "Edge"),
        ("EdgiOS/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("CriOS/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Version/", "Safari"),
        ("Safari/", "Safari"),
    ]
    .iter()
    .filter(|(token, _)| *token != "Version/" || user_agent.contains("Safari/"))
    .find_map(|(token, name)| {
        let at = user_agent.find(token)?;
        let version: String = user_agent[at + token.len()..].chars().take_while(|c| c.is_ascii_digit()).collect();
        Some(if version.is_empty() { name.to_string() } else { format!("{name} {version}") })
    });
    let os = [
        ("Windows", "Windows"),
        ("Android", "Android"),
        ("iPhone", "iOS"),
        ("iPad", "iPadOS"),
        ("Mac OS X", "macOS"),
        ("CrOS", "ChromeOS"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find_map(|(token, name)| user_agent.contains(token).then_some(*name));
    match (browser, os) {
        (Some(b), Some(o)) => format!("{b} on {o}"),
        (Some(b), None) => b,
        (None, Some(o)) => o.to_string(),
        (None, None) => user_agent.chars().take(120).collect(),
    }
}

/// The report's page context, as label and value pairs.
pub fn context_facts(report: &Report) -> Vec<Fact> {
    let context = &report.context;
    let mut facts = Vec::new();
    if let Some(url) = text_of(context, "url") {
        facts.push(Fact {
            label: "Page",
            value: url.to_string(),
            link: svc_core::report::link_url(url).map(str::to_string),
        });
    }
    if let Some(ua) = text_of(context, "userAgent") {
        facts.push(Fact { label: "Browser", value: browser_and_os(ua), link: None });
    }
    if let Some(viewport) = context.get("viewport")
        && let (Some(w), Some(h)) = (number_of(viewport, "width"), number_of(viewport, "height"))
    {
        facts.push(Fact { label: "Viewport", value: format!("{w:.0} × {h:.0}"), link: None });
    }
    for (key, label) in [("device", "Device"), ("language", "Locale"), ("userId", "User id"), ("timestamp", "Sent at")]
    {
        if let Some(value) = context.get(key).filter(|v| !v.is_null()) {
            let text = value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string());
            facts.push(Fact { label, value: text, link: None });
        }
    }
    if let Some(flags) = context.get("flags").and_then(Value::as_array).filter(|f| !f.is_empty()) {
        let names: Vec<String> =
            flags.iter().map(|f| f.as_str().map(str::to_string).unwrap_or_else(|| f.to_string())).collect();
        facts.push(Fact { label: "Flags", value: names.join(", "), link: None });
    }
    for (key, label) in [("extra", "Extra"), ("custom", "Attributes")] {
        if let Some(object) = context.get(key).and_then(Value::as_object).filter(|o| !o.is_empty()) {
            facts.push(Fact { label, value: serde_json::to_string_pretty(object).unwrap_or_default(), link: None });
        }
    }
    facts
}

/// Console errors the widget captured.
pub fn console_errors(report: &Report) -> Vec<String> {
    report
        .context
        .get("consoleErrors")
        .and_then(Value::as_array)
        .map(|errors| errors.iter().map(|e| e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string())).collect())
        .unwrap_or_default()
}

/// The artifact (room) a report was filed on: title, tool, goal, constraints, URL.
pub fn artifact_facts(report: &Report) -> Vec<Fact> {
    let Some(artifact) = report.context.get("artifact").filter(|a| a.is_object()) else { return Vec::new() };
    let mut facts = Vec::new();
    for (key, label) in [("title", "Artifact"), ("tool", "Tool"), ("goal", "Goal"), ("url", "Artifact URL")] {
        if let Some(value) = text_of(artifact, key) {
            let link = if key == "url" { svc_core::report::link_url(value).map(str::to_string) } else { None };
            facts.push(Fact { label, value: value.to_string(), link });
        }
    }
    if let Some(constraints) = artifact.get("constraints").filter(|c| !c.is_null()) {
        let value = match constraints {
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string).unwrap_or_else(|| i.to_string()))
                .collect::<Vec<_>>()
                .join("; "),
            other => other.as_str().map(str::to_string).unwrap_or_else(|| other.to_string()),
        };
        facts.push(Fact { label: "Constraints", value, link: None });
    }
    facts
}

/// Who filed the report, as shown: identity (verified or not), else the page's user id, else the
/// author's label.
pub struct Reporter {
    pub name: String,
    pub detail: Option<String>,
    pub verified: bool,
}

pub fn reporter(report: &Report) -> Reporter {
    if let Some(identity) = &report.identity {
        let name = text_of(identity, "name")
            .or(text_of(identity, "email"))
            .or(text_of(identity, "userId"))
            .unwrap_or("Reporter");
        let detail = text_of(identity, "email").filter(|e| *e != name).map(str::to_string);
        let verified = identity.get("verified").and_then(Value::as_bool).unwrap_or(false);
        return Reporter { name: name.to_string(), detail, verified };
    }
    if report.author.kind == "agent" {
        let label = report.author.label.clone().unwrap_or_else(|| "an agent".into());
        return Reporter { name: label, detail: Some("agent".into()), verified: false };
    }
    match text_of(&report.context, "userId") {
        Some(user_id) => Reporter { name: user_id.to_string(), detail: Some("user id".into()), verified: false },
        None => Reporter { name: "Anonymous".into(), detail: None, verified: false },
    }
}

/// The first words of the reporter's text after the title, for the list: the rest of the first
/// text block (its first line is the title), else the first comment on a quote or pinpoint, else
/// the first text of any block.
pub fn snippet(report: &Report) -> String {
    let blocks = report.blocks.as_array().map(Vec::as_slice).unwrap_or_default();
    let after_title =
        blocks.iter().find(|b| text_of(b, "type") == Some("text")).and_then(|b| text_of(b, "text")).map(|text| {
            let text = text.trim_start();
            text.split_once('\n').map_or("", |(_, rest)| rest)
        });
    let text = after_title
        .filter(|rest| !rest.trim().is_empty())
        .or_else(|| blocks.iter().find_map(|b| text_of(b, "comment").filter(|c| !c.trim().is_empty())))
        .or_else(|| blocks.iter().find_map(|b| text_of(b, "text")))
        .unwrap_or_default();
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 140 { format!("{}…", line.chars().take(140).collect::<String>()) } else { line }
}

pub struct CommentView {
    pub id: String,
    pub author: String,
    pub author_kind: String,
    pub kind: Option<String>,
    pub text: String,
    pub draft: bool,
    pub when: When,
    pub published: Option<When>,
}

pub fn comments(comments: &[Comment], now: i64) -> Vec<CommentView> {
    comments
        .iter()
        .map(|c| CommentView {
            id: c.id.clone(),
            author: c.author.label.clone().unwrap_or_else(|| c.author.kind.clone()),
            author_kind: c.author.kind.clone(),
            kind: c.kind.clone(),
            text: c.text.clone(),
            draft: c.draft,
            when: When::at(c.created_at, now),
            published: c.published_at.filter(|at| *at != c.created_at).map(|at| When::at(at, now)),
        })
        .collect()
}

pub struct ChangeView {
    pub from: String,
    pub to: String,
    pub by: String,
    pub when: When,
}

pub fn history(changes: &[StatusChange], now: i64) -> Vec<ChangeView> {
    changes
        .iter()
        .map(|c| ChangeView {
            from: c.from_status.clone(),
            to: c.to_status.clone(),
            by: c.by.label.clone().unwrap_or_else(|| c.by.kind.clone()),
            when: When::at(c.at, now),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_marks_each_word_case_insensitively() {
        let segments = highlight("The Pay button does nothing", "pay NOTHING");
        let marked: Vec<&str> = segments.iter().filter(|s| s.hit).map(|s| s.text.as_str()).collect();
        assert_eq!(marked, ["Pay", "nothing"]);
        let joined: String = segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(joined, "The Pay button does nothing");
    }

    fn report_of(blocks: Value) -> Report {
        Report {
            id: "01a1fdda5efe00b5d80f3ce3".into(),
            project_id: "01a1fdda418d004999fe6783".into(),
            channel_key: "bug".into(),
            status: "new".into(),
            title: svc_core::report::derive_title(&blocks),
            blocks,
            context: serde_json::json!({}),
            identity: None,
            identity_error: None,
            author: svc_core::model::Author { kind: "reporter".into(), id: None, label: None },
            artifact_id: None,
            url: None,
            assignee: None,
            labels: Vec::new(),
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn the_snippet_is_what_follows_the_title() {
        let text = |t: &str| serde_json::json!({"type": "text", "text": t});
        assert_eq!(
            snippet(&report_of(serde_json::json!([text("Pay fails\nThe button\n  does nothing")]))),
            "The button does nothing"
        );
        let quote = serde_json::json!({"type": "quote", "text": "Billed anually", "selector": ".p", "target": {"css": ".p"}, "comment": "Typo"});
        assert_eq!(snippet(&report_of(serde_json::json!([quote]))), "Typo", "a quote's comment, not its text again");
        assert_eq!(snippet(&report_of(serde_json::json!([text("Only a title")]))), "Only a title");
    }

    #[test]
    fn user_agents_read_as_browser_and_os() {
        let chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
        assert_eq!(browser_and_os(chrome), "Chrome 156 on Linux");
        let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1";
        assert_eq!(browser_and_os(safari), "Safari 18 on iOS");
        let chrome_ios = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/140.0.7339.122 Mobile/15E148 Safari/604.1";
        assert_eq!(browser_and_os(chrome_ios), "Chrome 140 on iOS");
        let mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15";
        assert_eq!(browser_and_os(mac), "Safari 17 on macOS");
    }
}
