//! What the dashboard's templates show, built from domain values. Every reporter value stays a
//! plain string here; the templates escape it. Only `http(s)` links become links.

use svc_core::block::{Block, SelectorInfo, number};
use svc_core::context::Device;
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

/// Text worth showing: present and not empty.
fn shown(text: Option<&str>) -> Option<&str> {
    text.filter(|s| !s.is_empty())
}

/// A CSS selector and what else the widget recorded about the element.
pub struct Selector {
    pub css: String,
    /// What the element showed, and its accessible name (what an agent greps for first).
    pub text: Option<String>,
    pub name: Option<String>,
    pub xpath: Option<String>,
    pub test_ids: Vec<String>,
    pub component: Option<String>,
    pub match_index: Option<u64>,
}

impl Selector {
    fn of(target: Option<&SelectorInfo>, selector: Option<&str>) -> Option<Self> {
        let css = shown(target.map(|t| t.css.as_str())).or(shown(selector))?;
        Some(Selector {
            css: css.to_string(),
            text: shown(target.and_then(|t| t.text.as_deref())).map(str::to_string),
            name: shown(target.and_then(|t| t.accessible_name.as_deref())).map(str::to_string),
            xpath: shown(target.and_then(|t| t.xpath.as_deref())).map(str::to_string),
            test_ids: target.map(|t| t.test_ids().to_vec()).unwrap_or_default(),
            component: shown(target.and_then(|t| t.react_component.as_deref())).map(str::to_string),
            match_index: target.and_then(|t| t.match_index),
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

/// A shape the reporter drew on a screenshot, in the screenshot's own pixels, for the SVG overlay:
/// a rectangle (`rect`, or `blur` drawn as a hatched rectangle) or a line through `points`
/// (`pen`, or `arrow` with its head).
pub struct Drawn {
    pub kind: &'static str,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// `x,y x,y ...` for a line.
    pub points: String,
    /// `#rrggbb` (checked; the reporter's colour or the default red).
    pub color: String,
}

fn drawn(annotations: &[svc_core::block::Annotation]) -> Vec<Drawn> {
    use svc_core::picture::{self, ShapeKind};
    picture::shapes(annotations)
        .into_iter()
        .map(|shape| {
            let [r, g, b] = shape.color.as_deref().and_then(picture::parse_color).unwrap_or(picture::DEFAULT_COLOR);
            let color = format!("#{r:02x}{g:02x}{b:02x}");
            let (x0, y0) = shape.points[0];
            let (x1, y1) = *shape.points.last().unwrap_or(&shape.points[0]);
            let mut line: Vec<(f64, f64)> = shape.points.clone();
            if shape.kind == ShapeKind::Arrow {
                // Two strokes back from the tip make the head.
                let angle = (y1 - y0).atan2(x1 - x0);
                let length = ((x1 - x0).hypot(y1 - y0) / 4.0).clamp(8.0, 40.0);
                let wing = |turn: f64| (x1 - length * (angle + turn).cos(), y1 - length * (angle + turn).sin());
                line = vec![(x0, y0), (x1, y1), wing(0.5), (x1, y1), wing(-0.5)];
            }
            Drawn {
                kind: shape.kind.as_str(),
                x: x0.min(x1).round(),
                y: y0.min(y1).round(),
                width: (x1 - x0).abs().round(),
                height: (y1 - y0).abs().round(),
                points: line.iter().map(|(x, y)| format!("{:.0},{:.0}", x, y)).collect::<Vec<_>>().join(" "),
                color,
            }
        })
        .collect()
}

pub enum BlockView {
    Text { text: String },
    Screenshot { url: String, width: i64, height: i64, markers: Vec<Marker>, annotations: usize, drawn: Vec<Drawn> },
    Audio { url: String, duration: Option<String>, transcript: Option<String> },
    Selection { text: String, selector: Option<Selector> },
    Quote { text: String, comment: String, selector: Option<Selector> },
    Pinpoint { comment: Option<String>, selector: Option<Selector> },
    File { url: String, name: String, size: String, description: Option<String> },
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
    let viewport = report.context.viewport.as_ref();
    let viewport_size = viewport.and_then(|v| Some((number(v.width.as_ref()?), number(v.height.as_ref()?))));
    let pins: Vec<(f64, f64)> = report
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Pinpoint(pin) => {
                let rect = pin.rect.as_ref()?;
                let (x, y, w, h) = (number(&rect.x), number(&rect.y), number(&rect.width), number(&rect.height));
                let px = pin.point.as_ref().map_or(0.5, |p| number(&p.x));
                let py = pin.point.as_ref().map_or(0.5, |p| number(&p.y));
                Some((x + px * w, y + py * h))
            }
            _ => None,
        })
        .collect();
    report
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text(b) => BlockView::Text { text: b.text.clone() },
            Block::Screenshot(b) => {
                let width = b.width.as_ref().and_then(serde_json::Number::as_i64).unwrap_or(0);
                let height = b.height.as_ref().and_then(serde_json::Number::as_i64).unwrap_or(0);
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
                    url: blob_url(&b.blob_id),
                    width,
                    height,
                    markers,
                    annotations: b.annotations.as_ref().map_or(0, Vec::len),
                    drawn: b.annotations.as_deref().map(drawn).unwrap_or_default(),
                }
            }
            Block::Audio(b) => BlockView::Audio {
                url: blob_url(&b.blob_id),
                duration: b.duration_ms.as_ref().map(|ms| {
                    let total = (number(ms) / 1000.0).round() as u64;
                    format!("{}:{:02}", total / 60, total % 60)
                }),
                transcript: shown(b.transcript.as_deref()).map(str::to_string),
            },
            Block::Selection(b) => BlockView::Selection {
                text: b.text.clone(),
                selector: Selector::of(b.target.as_ref(), b.selector.as_deref()),
            },
            Block::Quote(b) => BlockView::Quote {
                text: b.text.clone(),
                comment: b.comment.clone(),
                selector: Selector::of(Some(&b.target), Some(&b.selector)),
            },
            Block::Pinpoint(b) => BlockView::Pinpoint {
                comment: shown(b.comment.as_deref()).map(str::to_string),
                selector: Selector::of(Some(&b.target), Some(&b.selector)),
            },
            Block::File(b) => BlockView::File {
                url: blob_url(&b.blob_id),
                name: shown(Some(&b.name)).unwrap_or("file").to_string(),
                size: b.bytes.as_ref().map(|n| size_text(number(n))).unwrap_or_default(),
                description: shown(b.description.as_deref()).map(str::to_string),
            },
        })
        .collect()
}

/// One line of the report's context (label, value, and a link when the value is an http(s) URL).
pub struct Fact {
    pub label: &'static str,
    pub value: String,
    pub link: Option<String>,
    /// The value is a moment (ISO 8601): the page shows it in the reader's time zone.
    pub time: bool,
}

/// The report's page context, as label and value pairs.
pub fn context_facts(report: &Report) -> Vec<Fact> {
    let context = &report.context;
    let mut facts = Vec::new();
    if let Some(url) = shown(context.url.as_deref()) {
        facts.push(Fact {
            label: "Page",
            value: url.to_string(),
            link: svc_core::report::link_url(url).map(str::to_string),
            time: false,
        });
    }
    if let Some(ua) = shown(context.user_agent.as_deref()) {
        facts.push(Fact { label: "Browser", value: svc_core::context::browser_and_os(ua), link: None, time: false });
    }
    if let Some(viewport) = &context.viewport
        && let (Some(w), Some(h)) = (&viewport.width, &viewport.height)
    {
        facts.push(Fact {
            label: "Viewport",
            value: format!("{:.0} × {:.0}", number(w), number(h)),
            link: None,
            time: false,
        });
    }
    for (label, value) in [
        ("Device", context.device.map(Device::as_str)),
        ("Locale", context.language.as_deref()),
        ("User id", context.user_id.as_deref()),
        ("Sent at", context.timestamp.as_deref()),
    ] {
        if let Some(value) = value {
            facts.push(Fact { label, value: value.to_string(), link: None, time: label == "Sent at" });
        }
    }
    if !context.flags().is_empty() {
        facts.push(Fact { label: "Flags", value: context.flags().join(", "), link: None, time: false });
    }
    for (label, object) in [("Extra", &context.extra), ("Attributes", &context.custom)] {
        if let Some(object) = object.as_ref().filter(|o| !o.is_empty()) {
            facts.push(Fact {
                label,
                value: serde_json::to_string_pretty(object).unwrap_or_default(),
                link: None,
                time: false,
            });
        }
    }
    facts
}

/// A request of the reporter's page that failed, as the widget recorded it.
pub struct FailedRequest {
    pub method: String,
    pub url: String,
    /// The status code, or "no answer".
    pub status: String,
    pub duration: String,
    pub time: String,
}

pub fn failed_requests(report: &Report) -> Vec<FailedRequest> {
    report
        .context
        .network()
        .iter()
        .map(|entry| FailedRequest {
            method: entry.method.clone(),
            url: entry.url.clone(),
            status: if entry.status == 0 { "no answer".into() } else { entry.status.to_string() },
            duration: format!("{:.0} ms", number(&entry.duration_ms)),
            time: entry.time.clone(),
        })
        .collect()
}

/// A step the reporter took before the report, for the report view's timeline.
pub struct StepView {
    /// What happened, in words ("Click", "Typed 16 characters into a tel field").
    pub what: String,
    /// The element's selector, when the step acted on one.
    pub selector: Option<String>,
    /// The element's accessible name or text, a navigation's address, a console message.
    pub detail: Option<String>,
    pub before: String,
    /// A failed request or a console error: where the evidence went wrong.
    pub alarm: bool,
}

pub fn steps(report: &Report) -> Vec<StepView> {
    use svc_core::steps::StepKind;
    report
        .context
        .steps()
        .iter()
        .map(|step| {
            let target = step.target.as_ref();
            let named = target.and_then(|t| shown(t.accessible_name.as_deref()).or(shown(t.text.as_deref())));
            let (what, detail) = match step.kind {
                StepKind::Click => ("Click".to_string(), named.map(str::to_string)),
                StepKind::Input => {
                    let kind = step.input_type.as_deref().unwrap_or("text");
                    let length = step.length.map_or(String::new(), |n| format!("{n} characters "));
                    (format!("Typed {length}into a {kind} field (not recorded)"), named.map(str::to_string))
                }
                StepKind::Change => ("Set".to_string(), step.value.clone()),
                StepKind::Key => (format!("Pressed {}", step.key.as_deref().unwrap_or("a key")), None),
                StepKind::Navigate => {
                    let via = step.via.as_deref().map_or(String::new(), |via| format!(" ({via})"));
                    (format!("Went to a page{via}"), step.url.clone())
                }
                StepKind::Scroll => (
                    format!(
                        "Scrolled to {:.0}, {:.0}",
                        step.x.as_ref().map_or(0.0, number),
                        step.y.as_ref().map_or(0.0, number)
                    ),
                    None,
                ),
                StepKind::Resize => (
                    format!(
                        "Resized the window to {:.0} × {:.0}",
                        step.width.as_ref().map_or(0.0, number),
                        step.height.as_ref().map_or(0.0, number)
                    ),
                    None,
                ),
                StepKind::Request => {
                    let status = match step.status {
                        Some(0) | None => "no answer".to_string(),
                        Some(status) => status.to_string(),
                    };
                    (format!("Request failed: {} {status}", step.method.as_deref().unwrap_or("GET")), step.url.clone())
                }
                StepKind::Console => ("Console error".to_string(), step.message.clone()),
                StepKind::Private => ("An action inside a private area".to_string(), None),
            };
            StepView {
                what,
                selector: target.map(|t| t.css.clone()),
                detail,
                before: step.before_text(),
                alarm: matches!(step.kind, StepKind::Request | StepKind::Console),
            }
        })
        .collect()
}

/// The report's heading: the first line of the reporter's words whole (the stored title is cut at
/// 80 characters for lists), else the title.
pub fn heading(report: &Report) -> String {
    let first_line = report.blocks.iter().find_map(|block| match block {
        Block::Text(text) => text.text.lines().map(str::trim).find(|line| !line.is_empty()),
        _ => None,
    });
    match first_line {
        Some(line) if line.chars().count() > report.title.chars().count() => {
            let mut heading = svc_core::report::fold_whitespace(line);
            if let Some((end, _)) = heading.char_indices().nth(1000) {
                heading.truncate(end);
            }
            heading
        }
        _ => report.title.clone(),
    }
}

/// `text` cut to at most `max` characters at a word, with an ellipsis when cut.
pub fn cut_at_word(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let at_word = cut.rfind(char::is_whitespace).filter(|at| *at > max / 2).map_or(cut.as_str(), |at| &cut[..at]);
    format!("{}…", at_word.trim_end())
}

/// The marks of a report in the list: what evidence it holds and what waits on it. Each is an
/// icon (`#i-<id>` in the page) and the words a screen reader and a tooltip say.
pub fn marks(report: &Report, draft_waiting: bool) -> Vec<(&'static str, String)> {
    let mut marks = Vec::new();
    let count = |matches: fn(&Block) -> bool| report.blocks.iter().filter(|&b| matches(b)).count();
    let shots = count(|b| matches!(b, Block::Screenshot(_)));
    if shots > 0 {
        marks.push(("shot", if shots == 1 { "A screenshot".to_string() } else { format!("{shots} screenshots") }));
    }
    if count(|b| matches!(b, Block::Audio(_))) > 0 {
        marks.push(("voice", "A voice note".to_string()));
    }
    let errors = report.context.console_errors().len();
    if errors > 0 {
        marks.push(("console", format!("{errors} console error{}", if errors == 1 { "" } else { "s" })));
    }
    let failed = report.context.network().len();
    if failed > 0 {
        marks.push(("network", format!("{failed} failed request{}", if failed == 1 { "" } else { "s" })));
    }
    if draft_waiting {
        marks.push(("draft", "A draft waits to be published".to_string()));
    }
    marks
}

/// Console errors the widget captured.
pub fn console_errors(report: &Report) -> Vec<String> {
    report.context.console_errors().to_vec()
}

/// The artifact (room) a report was filed on: title, tool, goal, constraints, URL.
pub fn artifact_facts(report: &Report) -> Vec<Fact> {
    let Some(artifact) = &report.context.artifact else { return Vec::new() };
    let mut facts = Vec::new();
    for (label, value) in [
        ("Artifact", &artifact.title),
        ("Tool", &artifact.tool),
        ("Goal", &artifact.goal),
        ("Artifact URL", &artifact.url),
    ] {
        if let Some(value) = shown(value.as_deref()) {
            let link =
                if label == "Artifact URL" { svc_core::report::link_url(value).map(str::to_string) } else { None };
            facts.push(Fact { label, value: value.to_string(), link, time: false });
        }
    }
    if let Some(constraints) = &artifact.constraints {
        facts.push(Fact { label: "Constraints", value: constraints.join("; "), link: None, time: false });
    }
    facts
}

/// Who filed the report, as shown: identity (verified or not), else the page's user id, else the
/// author's label.
pub struct Reporter {
    pub name: String,
    pub detail: Option<String>,
    /// How a verified reporter proved who they are (`None`: not verified).
    pub method: Option<&'static str>,
}

pub fn reporter(report: &Report) -> Reporter {
    if let Some(identity) = &report.identity {
        let name = shown(identity.name.as_deref())
            .or(shown(identity.email.as_deref()))
            .or(shown(Some(&identity.user_id)))
            .unwrap_or("Reporter");
        let detail = shown(identity.email.as_deref()).filter(|e| *e != name).map(str::to_string);
        let method = identity.verified.then(|| match identity.method {
            Some(svc_core::reporter::SignInMethod::Email) => "signed in with a code mailed to them",
            Some(svc_core::reporter::SignInMethod::Oidc) => "signed in with the project's identity provider",
            Some(svc_core::reporter::SignInMethod::Token) | None => "the site's signed identity token",
        });
        return Reporter { name: name.to_string(), detail, method };
    }
    if report.author.kind == svc_core::model::AuthorKind::Agent {
        let label = report.author.label.clone().unwrap_or_else(|| "an agent".into());
        return Reporter { name: label, detail: Some("agent".into()), method: None };
    }
    match shown(report.context.user_id.as_deref()) {
        Some(user_id) => Reporter { name: user_id.to_string(), detail: Some("user id".into()), method: None },
        None => Reporter { name: "Anonymous".into(), detail: None, method: None },
    }
}

/// The first words of the reporter's text after the title, for the list: the rest of the first
/// text block (its first line is the title), else the first comment on a quote or pinpoint, else
/// the first text of any block.
pub fn snippet(report: &Report) -> String {
    let blocks = &report.blocks;
    let after_title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .map(|text| {
            let text = text.trim_start();
            text.split_once('\n').map_or("", |(_, rest)| rest)
        });
    fn comment(b: &Block) -> Option<&str> {
        match b {
            Block::Quote(q) => Some(q.comment.as_str()),
            Block::Pinpoint(p) => p.comment.as_deref(),
            _ => None,
        }
    }
    fn any_text(b: &Block) -> Option<&str> {
        match b {
            Block::Text(t) => Some(t.text.as_str()),
            Block::Selection(s) => Some(s.text.as_str()),
            Block::Quote(q) => Some(q.text.as_str()),
            _ => None,
        }
    }
    let text = after_title
        .filter(|rest| !rest.trim().is_empty())
        .or_else(|| blocks.iter().find_map(|b| comment(b).filter(|c| !c.trim().is_empty())))
        .or_else(|| blocks.iter().find_map(any_text))
        .unwrap_or_default();
    let line = svc_core::report::fold_whitespace(text);
    if line.chars().count() > 140 { format!("{}…", line.chars().take(140).collect::<String>()) } else { line }
}

pub struct CommentView {
    pub id: String,
    pub author: String,
    pub author_kind: String,
    pub kind: Option<String>,
    pub text: String,
    /// An agent's words rendered from Markdown (sanitised: no raw HTML, only http(s) links);
    /// `None` for everyone else's, shown as text.
    pub html: Option<String>,
    pub draft: bool,
    pub when: When,
    pub published: Option<When>,
}

pub fn comments(comments: &[Comment], now: i64) -> Vec<CommentView> {
    comments
        .iter()
        .map(|c| CommentView {
            id: c.id.clone(),
            author: c.author.label.clone().unwrap_or_else(|| c.author.kind.to_string()),
            author_kind: c.author.kind.to_string(),
            kind: c.kind.clone(),
            text: c.text.clone(),
            html: (c.author.kind == svc_core::model::AuthorKind::Agent).then(|| markdown_html(&c.text)),
            draft: c.draft,
            when: When::at(c.created_at, now),
            published: c.published_at.filter(|at| *at != c.created_at).map(|at| When::at(at, now)),
        })
        .collect()
}

/// CommonMark as HTML that cannot carry markup of its own: raw HTML in the text is shown as text,
/// a link or image becomes a link only to an `http(s)` address (`rel="noopener nofollow
/// noreferrer"`, images never loaded), and everything else is escaped by the renderer.
pub fn markdown_html(text: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let mut links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
            let safe = svc_core::report::link_url(&dest_url).is_some();
            links.push(safe);
            safe.then(|| {
                let href = crate::escape_html(&dest_url);
                Event::InlineHtml(
                    format!("<a href=\"{href}\" rel=\"noopener nofollow noreferrer\" target=\"_blank\">").into(),
                )
            })
        }
        Event::End(TagEnd::Link | TagEnd::Image) => {
            links.pop().unwrap_or(false).then(|| Event::InlineHtml("</a>".into()))
        }
        other => Some(other),
    });
    let mut html = String::with_capacity(text.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
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
            from: c.from_status.to_string(),
            to: c.to_status.to_string(),
            by: c.by.label.clone().unwrap_or_else(|| c.by.kind.to_string()),
            when: When::at(c.at, now),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_core::context::browser_and_os;

    #[test]
    fn titles_are_cut_at_a_word() {
        assert_eq!(cut_at_word("short", 10), "short");
        assert_eq!(cut_at_word("The pay button does nothing at all", 20), "The pay button does…");
        assert_eq!(cut_at_word("Averyveryverylongwordwithoutspaces", 10), "Averyveryv…");
    }

    #[test]
    fn agent_markdown_renders_without_markup_of_its_own() {
        let html = markdown_html(
            "**502** from `/api/pay`\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n\n\
             [docs](https://example.com/a\"b) [bad](javascript:alert(1)) ![pic](https://t.example/p.png)",
        );
        assert!(html.contains("<strong>502</strong>") && html.contains("<code>/api/pay</code>"), "{html}");
        assert!(!html.contains("<script") && !html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "raw HTML is shown as text: {html}");
        assert!(
            html.contains(r#"<a href="https://example.com/a&quot;b" rel="noopener nofollow noreferrer""#),
            "{html}"
        );
        assert!(!html.contains("javascript:"), "an unsafe link is text: {html}");
        assert!(html.contains(" bad ") && html.contains(">pic</a>"), "{html}");
    }

    #[test]
    fn highlight_marks_each_word_case_insensitively() {
        let segments = highlight("The Pay button does nothing", "pay NOTHING");
        let marked: Vec<&str> = segments.iter().filter(|s| s.hit).map(|s| s.text.as_str()).collect();
        assert_eq!(marked, ["Pay", "nothing"]);
        let joined: String = segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(joined, "The Pay button does nothing");
    }

    fn report_of(blocks: serde_json::Value) -> Report {
        let blocks: Vec<Block> = serde_json::from_value(blocks).unwrap();
        Report {
            id: "01a1fdda5efe00b5d80f3ce3".into(),
            project_id: "01a1fdda418d004999fe6783".into(),
            channel_key: "bug".into(),
            status: svc_core::status::Status::New,
            title: svc_core::report::derive_title(&blocks),
            blocks,
            context: Default::default(),
            identity: None,
            identity_error: None,
            author: svc_core::model::Author { kind: svc_core::model::AuthorKind::Reporter, id: None, label: None },
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
    fn the_heading_is_the_first_line_whole_with_its_spaces_folded() {
        let text = |t: &str| serde_json::json!({"type": "text", "text": t});
        let long = "The pay   button\tdoes nothing when the cart holds more than one item, again and again";
        let report = report_of(serde_json::json!([text(format!("\n  {long}  \nSecond line").as_str())]));
        assert!(report.title.chars().count() < long.chars().count(), "the stored title is cut: {}", report.title);
        assert_eq!(
            heading(&report),
            "The pay button does nothing when the cart holds more than one item, again and again"
        );
        assert_eq!(heading(&report_of(serde_json::json!([text("Short\nmore")]))), "Short", "else the title");
        let endless = "é ".repeat(800);
        let cut = heading(&report_of(serde_json::json!([text(endless.as_str())])));
        assert_eq!(cut.chars().count(), 1000, "at most a thousand characters");
        assert!(cut.starts_with("é é é"));
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
