//! Validation of what the widget sends (decisions §3 and §4): report bodies, blocks, context, limits.
//! The ingest surface, the tool endpoint and the benchmark's ceiling server all call this code.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use crate::block::{Annotation, Block, SelectorInfo};
use crate::context::{ArtifactMeta, Context, NetworkEntry};
use crate::steps::{MAX_STEPS, STEP_TEXT_MAX_CHARS, STEP_URL_MAX_CHARS, Step};

/// Limits the widget is told about through `GET /ingest/config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub text_max_chars: usize,
    pub blocks_max: usize,
    pub screenshot_max_bytes: u64,
    pub audio_max_bytes: u64,
    pub audio_max_ms: u64,
    pub file_max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            text_max_chars: 10_000,
            blocks_max: 50,
            screenshot_max_bytes: 4 * 1024 * 1024,
            audio_max_bytes: 10 * 1024 * 1024,
            audio_max_ms: 300_000,
            file_max_bytes: 5 * 1024 * 1024,
        }
    }
}

impl Limits {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "textMaxChars": self.text_max_chars,
            "blocksMax": self.blocks_max,
            "screenshotMaxBytes": self.screenshot_max_bytes,
            "audioMaxBytes": self.audio_max_bytes,
            "audioMaxMs": self.audio_max_ms,
            "fileMaxBytes": self.file_max_bytes,
        })
    }

    /// The size limit of a blob kind.
    pub fn max_bytes(&self, kind: BlobKind) -> u64 {
        match kind {
            BlobKind::Screenshot => self.screenshot_max_bytes,
            BlobKind::Audio => self.audio_max_bytes,
            BlobKind::File => self.file_max_bytes,
        }
    }

    /// The largest limit of any kind: what an upload is held to before its kind is known.
    pub fn largest(&self) -> u64 {
        self.screenshot_max_bytes.max(self.audio_max_bytes).max(self.file_max_bytes)
    }
}

/// Largest `POST /ingest/report` body.
pub const REPORT_BODY_MAX_BYTES: usize = 512 * 1024;
/// Largest `context`, as JSON.
pub const CONTEXT_MAX_BYTES: usize = 64 * 1024;
/// Largest file attachment a server may be configured for.
pub const FILE_MAX_BYTES_CEILING: u64 = 100 * 1024 * 1024;

pub use crate::block::BlobKind;

impl BlobKind {
    /// The block type that references a blob of this kind.
    pub fn block_type(self) -> &'static str {
        self.as_str()
    }
}

/// Why a submission was refused; each maps to one ingest error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// `blocks_invalid`
    Blocks(String),
    /// `context_invalid`
    Context(String),
    /// `blob_id_invalid`
    BlobIdInvalid(String),
}

impl Rejection {
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::Blocks(_) => "blocks_invalid",
            Rejection::Context(_) => "context_invalid",
            Rejection::BlobIdInvalid(_) => "blob_id_invalid",
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Rejection::Blocks(m) | Rejection::Context(m) | Rejection::BlobIdInvalid(m) => m,
        }
    }
}

/// A checked `POST /ingest/report` body, as types.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub blocks: Vec<Block>,
    pub channel_key: Option<String>,
    pub context: Context,
}

/// A block's reference to a stored blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRef {
    pub block_index: usize,
    pub blob_id: String,
    pub kind: BlobKind,
}

impl Submission {
    /// The blobs the blocks reference, in block order.
    pub fn blob_refs(&self) -> Vec<BlobRef> {
        self.blocks
            .iter()
            .enumerate()
            .filter_map(|(block_index, block)| {
                let (blob_id, kind) = block.blob()?;
                Some(BlobRef { block_index, blob_id: blob_id.to_string(), kind })
            })
            .collect()
    }

    pub fn artifact_id(&self) -> Option<&str> {
        self.context.artifact_id.as_deref()
    }
}

/// The body's parts, borrowed from its text: each is checked on its own so an error has the code
/// of the part it is in.
#[derive(Deserialize)]
struct RawBody<'a> {
    #[serde(borrow, default)]
    blocks: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "channelKey")]
    channel_key: Option<&'a RawValue>,
    #[serde(borrow, default)]
    context: Option<&'a RawValue>,
}

/// Checks a whole report body, `{blocks, channelKey?, context?}`, given as JSON text, and parses it
/// into types. The ingest hot path: the body is read once, without an intermediate JSON tree.
pub fn parse_submission(body: &[u8], limits: &Limits) -> Result<Submission, Rejection> {
    let raw: RawBody =
        serde_json::from_slice(body).map_err(|_| Rejection::Blocks("body must be a JSON object".into()))?;
    let blocks = parse_blocks(raw.blocks, limits)?;
    let context = match raw.context.filter(|c| c.get() != "null") {
        None => Context::default(),
        Some(context) => parse_context(context)?,
    };
    // A `channelKey` that is not a string cannot name a channel: it falls back like an unknown key.
    let channel_key = raw.channel_key.and_then(|key| serde_json::from_str::<String>(key.get()).ok());
    Ok(Submission { blocks, channel_key, context })
}

/// Checks a submission built as types by another surface (the tool endpoint's `create_report`)
/// with the same limits as one parsed from the widget's JSON.
pub fn check_submission(submission: &Submission, limits: &Limits) -> Result<(), Rejection> {
    if submission.blocks.is_empty() || submission.blocks.len() > limits.blocks_max {
        return Err(Rejection::Blocks(format!("blocks must hold 1 to {} blocks", limits.blocks_max)));
    }
    for (i, block) in submission.blocks.iter().enumerate() {
        check_block(block, limits).map_err(|(path, message)| {
            Rejection::Blocks(format!("{}: {message}", at(&format!("blocks[{i}]"), &path)))
        })?;
    }
    check_context(&submission.context)
        .map_err(|(path, message)| Rejection::Context(format!("{}: {message}", at("context", &path))))?;
    let size = json_size(&submission.context);
    if size > CONTEXT_MAX_BYTES {
        return Err(Rejection::Context(format!("context is {size} bytes; at most {CONTEXT_MAX_BYTES}")));
    }
    let text = serde_json::to_string(&(&submission.blocks, &submission.context)).unwrap_or_default();
    if holds_nul(&text) {
        return Err(Rejection::Blocks("text must not contain NUL characters".into()));
    }
    Ok(())
}

/// [`parse_submission`] for a body built as a JSON value (tests).
pub fn validate_submission(body: &Value, limits: &Limits) -> Result<Submission, Rejection> {
    let text = serde_json::to_vec(body).map_err(|_| Rejection::Blocks("body must be a JSON object".into()))?;
    parse_submission(&text, limits)
}

/// Whether JSON text holds a NUL character (written `\u0000`: JSON has no raw control characters
/// in strings). NUL cannot be stored by every backend and is never meaningful text.
fn holds_nul(json: &str) -> bool {
    let bytes = json.as_bytes();
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|b| *b == b'\\') {
        let escape = i + at;
        if bytes.get(escape + 1) == Some(&b'u') && bytes.get(escape + 2..escape + 6) == Some(b"0000".as_slice()) {
            return true;
        }
        // Skip the escaped character too (`\\` must not start another escape).
        i = escape + 2;
        if i >= bytes.len() {
            break;
        }
    }
    false
}

/// Parses JSON text into `T`, naming the field at fault: `(path, message)`, the path empty when the
/// fault is the value itself (a missing field, a wrong type of the whole).
fn typed<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, (String, String)> {
    // Tracking the path costs every field a wrapper; only a body at fault needs it, and then the
    // same text fails the same way again with the path kept.
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let path = if path == "." { String::new() } else { path };
        // serde's own words, minus the position in the text (meaningless to the sender).
        let message = error.inner().to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).replace('`', "");
        (path, message)
    })
}

/// `at` joined with a field path (`blocks[0]` + `target.css`).
fn at(base: &str, path: &str) -> String {
    match path {
        "" => base.to_string(),
        p if p.starts_with('[') => format!("{base}{p}"),
        p => format!("{base}.{p}"),
    }
}

fn parse_blocks(raw: Option<&RawValue>, limits: &Limits) -> Result<Vec<Block>, Rejection> {
    let invalid = Rejection::Blocks;
    let raw =
        raw.filter(|b| b.get() != "null").ok_or_else(|| invalid("blocks is required: an array of blocks".into()))?;
    let list: Vec<&RawValue> =
        serde_json::from_str(raw.get()).map_err(|_| invalid("blocks must be an array of blocks".into()))?;
    if list.is_empty() {
        return Err(invalid("blocks must hold at least one block".into()));
    }
    if list.len() > limits.blocks_max {
        return Err(invalid(format!("at most {} blocks per report", limits.blocks_max)));
    }
    if holds_nul(raw.get()) {
        return Err(invalid("text must not contain NUL characters".into()));
    }
    let mut blocks = Vec::with_capacity(list.len());
    for (i, item) in list.into_iter().enumerate() {
        let here = format!("blocks[{i}]");
        let block = parse_block(item.get()).map_err(|(path, message)| {
            let named = format!("{}: {message}", at(&here, &path));
            // A `blobId` that is not even a string is as invalid an id as a malformed one.
            if path == "blobId" { Rejection::BlobIdInvalid(named) } else { invalid(named) }
        })?;
        check_block(&block, limits).map_err(|(path, message)| invalid(format!("{}: {message}", at(&here, &path))))?;
        if let Some((blob_id, _)) = block.blob()
            && !crate::ids::is_object_id(blob_id)
        {
            return Err(Rejection::BlobIdInvalid(format!("{here}.blobId: {blob_id:?} is not a blob id")));
        }
        blocks.push(block);
    }
    Ok(blocks)
}

/// One block: its `type` first (read without the rest), then the type's own fields.
fn parse_block(json: &str) -> Result<Block, (String, String)> {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    let kind: Kind = serde_json::from_str(json).map_err(|_| match json.trim_start().starts_with('{') {
        true => ("type".to_string(), "must be a string".to_string()),
        false => (String::new(), "must be an object".to_string()),
    })?;
    let kind = kind.kind.ok_or_else(|| ("type".to_string(), "is required".to_string()))?;
    let mut block = match kind.as_ref() {
        "text" => Block::Text(typed(json)?),
        "screenshot" => Block::Screenshot(typed(json)?),
        "audio" => Block::Audio(typed(json)?),
        "selection" => Block::Selection(typed(json)?),
        "quote" => Block::Quote(typed(json)?),
        "pinpoint" => Block::Pinpoint(typed(json)?),
        "file" => Block::File(typed(json)?),
        other => {
            return Err((
                "type".into(),
                format!("unknown block type {other:?} (known: {})", crate::block::BLOCK_TYPES.join(", ")),
            ));
        }
    };
    // The tag was read as a field of the type's struct too.
    block_unknown_fields(&mut block).remove("type");
    Ok(block)
}

fn block_unknown_fields(block: &mut Block) -> &mut Map<String, Value> {
    match block {
        Block::Text(b) => &mut b.other,
        Block::Screenshot(b) => &mut b.other,
        Block::Audio(b) => &mut b.other,
        Block::Selection(b) => &mut b.other,
        Block::Quote(b) => &mut b.other,
        Block::Pinpoint(b) => &mut b.other,
        Block::File(b) => &mut b.other,
    }
}

/// A check's failure: `(field path, message)`.
type Fault = (String, String);

fn fault(field: &str, message: impl Into<String>) -> Fault {
    (field.to_string(), message.into())
}

/// A string's length in characters is within `min..=max`.
fn chars(field: &str, text: &str, min: usize, max: usize) -> Result<(), Fault> {
    let n = text.chars().count();
    if n < min || n > max { Err(fault(field, format!("must be {min} to {max} characters"))) } else { Ok(()) }
}

fn optional_chars(field: &str, text: Option<&str>, max: usize) -> Result<(), Fault> {
    text.map_or(Ok(()), |text| chars(field, text, 0, max))
}

/// A number is within `min..=max`.
fn within(field: &str, n: Option<&Number>, min: f64, max: f64) -> Result<(), Fault> {
    match n.and_then(Number::as_f64) {
        None if n.is_none() => Ok(()),
        Some(n) if n >= min && n <= max => Ok(()),
        _ => Err(fault(field, format!("must be a number between {min} and {max}"))),
    }
}

fn string_list(field: &str, list: Option<&[String]>, max_items: usize, max_chars: usize) -> Result<(), Fault> {
    let Some(list) = list else { return Ok(()) };
    if list.len() > max_items || list.iter().any(|item| item.chars().count() > max_chars) {
        return Err(fault(
            field,
            format!("must be an array of at most {max_items} strings of at most {max_chars} characters"),
        ));
    }
    Ok(())
}

const SELECTOR_MAX_CHARS: usize = 2_000;
const MAX_PIXELS: f64 = 100_000.0;
const TRANSCRIPT_MAX_CHARS: usize = 20_000;
const MIME_MAX_CHARS: usize = 200;

/// The limits of each block type (decisions §3) on a parsed block.
fn check_block(block: &Block, limits: &Limits) -> Result<(), Fault> {
    let text_max = limits.text_max_chars;
    let blob = |mime: Option<&str>, bytes: Option<&Number>| {
        optional_chars("mime", mime, MIME_MAX_CHARS)?;
        within("bytes", bytes, 0.0, 1e12)
    };
    match block {
        Block::Text(b) => chars("text", &b.text, 1, text_max),
        Block::Screenshot(b) => {
            blob(b.mime.as_deref(), b.bytes.as_ref())?;
            within("width", b.width.as_ref(), 0.0, MAX_PIXELS)?;
            within("height", b.height.as_ref(), 0.0, MAX_PIXELS)?;
            check_annotations(b.annotations.as_deref().unwrap_or_default())
        }
        Block::Audio(b) => {
            blob(b.mime.as_deref(), b.bytes.as_ref())?;
            within("durationMs", b.duration_ms.as_ref(), 0.0, limits.audio_max_ms as f64)?;
            optional_chars("transcript", b.transcript.as_deref(), TRANSCRIPT_MAX_CHARS)
        }
        Block::Selection(b) => {
            chars("text", &b.text, 1, text_max)?;
            optional_chars("selector", b.selector.as_deref(), SELECTOR_MAX_CHARS)?;
            b.target.as_ref().map_or(Ok(()), |t| check_selector_info(t).map_err(|(p, m)| (at("target", &p), m)))
        }
        Block::Quote(b) => {
            chars("text", &b.text, 1, text_max)?;
            chars("selector", &b.selector, 1, SELECTOR_MAX_CHARS)?;
            check_selector_info(&b.target).map_err(|(p, m)| (at("target", &p), m))?;
            chars("comment", &b.comment, 1, text_max)
        }
        Block::Pinpoint(b) => {
            chars("selector", &b.selector, 1, SELECTOR_MAX_CHARS)?;
            check_selector_info(&b.target).map_err(|(p, m)| (at("target", &p), m))?;
            optional_chars("comment", b.comment.as_deref(), text_max)?;
            if let Some(point) = &b.point {
                within("point.x", Some(&point.x), 0.0, 1.0)?;
                within("point.y", Some(&point.y), 0.0, 1.0)?;
            }
            if let Some(rect) = &b.rect {
                for (side, n) in [("x", &rect.x), ("y", &rect.y), ("width", &rect.width), ("height", &rect.height)] {
                    within(&format!("rect.{side}"), Some(n), -MAX_PIXELS, MAX_PIXELS)?;
                }
            }
            Ok(())
        }
        Block::File(b) => {
            blob(b.mime.as_deref(), b.bytes.as_ref())?;
            chars("name", &b.name, 1, 255)?;
            optional_chars("description", b.description.as_deref(), text_max)
        }
    }
}

fn check_annotations(annotations: &[Annotation]) -> Result<(), Fault> {
    if annotations.len() > 100 {
        return Err(fault("annotations", "at most 100 annotations"));
    }
    for (i, shape) in annotations.iter().enumerate() {
        if shape.points.len() > 10_000 {
            return Err(fault(&format!("annotations[{i}].points"), "at most 10000 points"));
        }
        optional_chars(&format!("annotations[{i}].color"), shape.color.as_deref(), 50)?;
    }
    Ok(())
}

/// The longest `target.text` and `target.accessibleName` of a SelectorInfo: the widget cuts an
/// element's visible text and accessible name to this many characters.
pub const ELEMENT_TEXT_MAX_CHARS: usize = 200;

/// SelectorInfo's limits: `css` 1 to 2,000 characters, `text` and `accessibleName` at most
/// [`ELEMENT_TEXT_MAX_CHARS`], `testIds` at most 11, `matchIndex` below 1,000,000, `shadowHosts` and
/// `frames` at most 20 selectors.
fn check_selector_info(target: &SelectorInfo) -> Result<(), Fault> {
    chars("css", &target.css, 1, SELECTOR_MAX_CHARS)?;
    optional_chars("text", target.text.as_deref(), ELEMENT_TEXT_MAX_CHARS)?;
    optional_chars("accessibleName", target.accessible_name.as_deref(), ELEMENT_TEXT_MAX_CHARS)?;
    optional_chars("xpath", target.xpath.as_deref(), SELECTOR_MAX_CHARS)?;
    string_list("testIds", target.test_ids.as_deref(), 11, 500)?;
    optional_chars("reactComponent", target.react_component.as_deref(), 200)?;
    if target.match_index.is_some_and(|n| n >= 1_000_000) {
        return Err(fault("matchIndex", "must be a non-negative integer below 1000000"));
    }
    string_list("shadowHosts", target.shadow_hosts.as_deref(), 20, SELECTOR_MAX_CHARS)?;
    string_list("frames", target.frames.as_deref(), 20, SELECTOR_MAX_CHARS)
}

/// The length of a value's compact JSON text, counted without building the text.
fn json_size(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// Parses and checks a context: the types and limits of the known fields (unknown top-level
/// fields are kept) and its size.
fn parse_context(raw: &RawValue) -> Result<Context, Rejection> {
    let invalid = |path: &str, message: &str| Rejection::Context(format!("{}: {message}", at("context", path)));
    if !raw.get().trim_start().starts_with('{') {
        return Err(Rejection::Context("context must be an object".into()));
    }
    if holds_nul(raw.get()) {
        return Err(Rejection::Context("context must not contain NUL characters".into()));
    }
    let context: Context = typed(raw.get()).map_err(|(path, message)| invalid(&path, &message))?;
    check_context(&context).map_err(|(path, message)| invalid(&path, &message))?;
    let size = json_size(&context);
    if size > CONTEXT_MAX_BYTES {
        return Err(Rejection::Context(format!("context is {size} bytes; at most {CONTEXT_MAX_BYTES}")));
    }
    Ok(context)
}

/// The longest of the page's string facts (`url`, `userAgent`, ...), in bytes.
const PAGE_FACT_MAX_BYTES: usize = 8_192;

fn check_context(context: &Context) -> Result<(), Fault> {
    for (field, value) in [
        ("url", &context.url),
        ("pathname", &context.pathname),
        ("host", &context.host),
        ("userAgent", &context.user_agent),
        ("language", &context.language),
        ("channelSource", &context.channel_source),
    ] {
        if value.as_ref().is_some_and(|v| v.len() > PAGE_FACT_MAX_BYTES) {
            return Err(fault(field, format!("must be at most {PAGE_FACT_MAX_BYTES} bytes")));
        }
    }
    if let Some(viewport) = &context.viewport {
        within("viewport.width", viewport.width.as_ref(), 0.0, f64::MAX)?;
        within("viewport.height", viewport.height.as_ref(), 0.0, f64::MAX)?;
    }
    if let Some(timestamp) = &context.timestamp
        && crate::time::parse_iso(timestamp).is_none()
    {
        return Err(fault("timestamp", "must be an ISO 8601 date-time"));
    }
    string_list("flags", context.flags.as_deref(), 100, usize::MAX)?;
    if context.console_errors().len() > 10 || context.console_errors().iter().any(|e| e.chars().count() > 2_000) {
        return Err(fault("consoleErrors", "must be at most 10 strings of at most 2000 characters"));
    }
    optional_chars("userId", context.user_id.as_deref(), 200)?;
    if let Some(artifact_id) = &context.artifact_id {
        chars("artifactId", artifact_id, 1, 200)?;
    }
    if let Some(artifact) = &context.artifact {
        check_artifact_meta(artifact).map_err(|(p, m)| (at("artifact", &p), m))?;
    }
    if let Some(network) = &context.network {
        check_network(network).map_err(|(p, m)| (at("network", &p), m))?;
    }
    if let Some(steps) = &context.steps {
        check_steps(steps).map_err(|(p, m)| (at("steps", &p), m))?;
    }
    Ok(())
}

/// `context.steps`: at most [`MAX_STEPS`] steps; `beforeMs` 0 to 86,400,000; texts at most
/// [`STEP_TEXT_MAX_CHARS`] characters, addresses at most [`STEP_URL_MAX_CHARS`]; a target's `css`
/// 1 to 2,000 characters and at most 10 test ids.
fn check_steps(steps: &[Step]) -> Result<(), Fault> {
    if steps.len() > MAX_STEPS {
        return Err(fault("", format!("at most {MAX_STEPS} steps")));
    }
    for (i, step) in steps.iter().enumerate() {
        let field = |name: &str| format!("[{i}].{name}");
        within(&field("beforeMs"), Some(&step.before_ms), 0.0, 86_400_000.0)?;
        for (name, value) in [
            ("inputType", &step.input_type),
            ("value", &step.value),
            ("key", &step.key),
            ("via", &step.via),
            ("method", &step.method),
            ("message", &step.message),
        ] {
            optional_chars(&field(name), value.as_deref(), STEP_TEXT_MAX_CHARS)?;
        }
        optional_chars(&field("url"), step.url.as_deref(), STEP_URL_MAX_CHARS)?;
        for (name, value) in [("x", &step.x), ("y", &step.y), ("width", &step.width), ("height", &step.height)] {
            within(&field(name), value.as_ref(), -1e9, 1e9)?;
        }
        if let Some(target) = &step.target {
            chars(&field("target.css"), &target.css, 1, 2_000)?;
            string_list(&field("target.testIds"), target.test_ids.as_deref(), 10, 200)?;
            for (name, value) in
                [("text", &target.text), ("accessibleName", &target.accessible_name), ("tag", &target.tag)]
            {
                optional_chars(&field(&format!("target.{name}")), value.as_deref(), STEP_TEXT_MAX_CHARS)?;
            }
        }
    }
    Ok(())
}

/// The most failed requests `context.network` holds.
pub const NETWORK_MAX_ENTRIES: usize = 10;
/// The longest URL of a `context.network` entry.
pub const NETWORK_URL_MAX_CHARS: usize = 2_000;

/// `context.network`: the page's last failed requests (fetch and XHR), at most
/// [`NETWORK_MAX_ENTRIES`], each `{method, url, status, durationMs, time}`: `method` 1 to 20
/// characters, `url` 1 to [`NETWORK_URL_MAX_CHARS`], `status` a whole number from 0 (no answer) to
/// 999, `durationMs` a number from 0 to 86,400,000, `time` an ISO 8601 date-time.
fn check_network(entries: &[NetworkEntry]) -> Result<(), Fault> {
    if entries.len() > NETWORK_MAX_ENTRIES {
        return Err(fault("", format!("at most {NETWORK_MAX_ENTRIES} entries")));
    }
    for (i, entry) in entries.iter().enumerate() {
        let field = |name: &str| format!("[{i}].{name}");
        chars(&field("method"), &entry.method, 1, 20)?;
        chars(&field("url"), &entry.url, 1, NETWORK_URL_MAX_CHARS)?;
        if entry.status > 999 {
            return Err(fault(&field("status"), "must be a whole number from 0 to 999"));
        }
        within(&field("durationMs"), Some(&entry.duration_ms), 0.0, 86_400_000.0)?;
        chars(&field("time"), &entry.time, 1, 64)?;
        if crate::time::parse_iso(&entry.time).is_none() {
            return Err(fault(&field("time"), "must be an ISO 8601 date-time"));
        }
    }
    Ok(())
}

/// ArtifactMeta: `id` 1 to 200 characters; `title`, `tool`, `source`, `goal` at most 10,000;
/// `constraints` at most 100; `url` http or https; `meta` at most 100 strings.
fn check_artifact_meta(artifact: &ArtifactMeta) -> Result<(), Fault> {
    chars("id", &artifact.id, 1, 200)?;
    for (name, value) in
        [("title", &artifact.title), ("tool", &artifact.tool), ("source", &artifact.source), ("goal", &artifact.goal)]
    {
        optional_chars(name, value.as_deref(), 10_000)?;
    }
    string_list("constraints", artifact.constraints.as_deref(), 100, 10_000)?;
    if let Some(url) = &artifact.url {
        chars("url", url, 1, PAGE_FACT_MAX_BYTES)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(fault("url", "must be an http or https URL"));
        }
    }
    if let Some(meta) = &artifact.meta
        && (meta.len() > 100 || !meta.values().all(Value::is_string))
    {
        return Err(fault("meta", "must map at most 100 names to strings"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits() -> Limits {
        Limits::default()
    }

    const BLOB: &str = "0123456789abcdef01234567";

    #[test]
    fn every_block_type_validates() {
        let target = json!({"css": "#buy", "xpath": "/html/body/button", "testIds": ["buy"]});
        let body = json!({"blocks": [
            {"type": "text", "text": "It broke"},
            {"type": "screenshot", "blobId": BLOB, "annotations": [{"kind": "blur", "points": [[1, 2], [3, 4]]}]},
            {"type": "audio", "blobId": BLOB, "durationMs": 1200, "transcript": "hi"},
            {"type": "selection", "text": "Total", "selector": "#total"},
            {"type": "quote", "text": "Total", "selector": "#total", "target": target, "comment": "wrong"},
            {"type": "pinpoint", "selector": "#buy", "target": target, "point": {"x": 0.5, "y": 1}, "rect": {"x": 1, "y": 2, "width": 3, "height": 4}},
            {"type": "file", "blobId": BLOB, "name": "log.txt"}
        ], "channelKey": "bug", "context": {"url": "https://a.test/x", "artifactId": "build-7", "custom": {"plan": "pro"}, "somethingNew": 1}});
        let submission = validate_submission(&body, &limits()).unwrap();
        assert_eq!(submission.blocks.len(), 7);
        assert_eq!(submission.blob_refs().len(), 3);
        assert_eq!(submission.artifact_id(), Some("build-7"));
        assert_eq!(submission.context.other["somethingNew"], 1);
        assert_eq!(submission.channel_key.as_deref(), Some("bug"));
        // Stored as it came: the typed blocks write out the JSON they were read from.
        assert_eq!(serde_json::to_value(&submission.blocks).unwrap(), body["blocks"]);
        assert_eq!(serde_json::to_value(&submission.context).unwrap(), body["context"]);
    }

    #[test]
    fn bad_blocks_are_blocks_invalid() {
        let cases = [
            json!({"blocks": []}),
            json!({"blocks": [{"type": "video"}]}),
            json!({"blocks": [{"type": "text", "text": ""}]}),
            json!({"blocks": [{"type": "text", "text": "x".repeat(10_001)}]}),
            json!({"blocks": [{"type": "text", "text": 5}]}),
            json!({"blocks": [{"text": "no type"}]}),
            json!({"blocks": ["text"]}),
            json!({"blocks": [{"type": "quote", "text": "x", "selector": "#a", "comment": "c"}]}),
            json!({"blocks": [{"type": "pinpoint", "selector": "#a", "target": {"css": "#a"}, "point": {"x": 2, "y": 0}}]}),
            json!({"blocks": [{"type": "screenshot", "blobId": BLOB, "annotations": [{"kind": "circle", "points": []}]}]}),
            json!({"blocks": (0..51).map(|_| json!({"type": "text", "text": "x"})).collect::<Vec<_>>()}),
            json!({}),
        ];
        for case in cases {
            let err = validate_submission(&case, &limits()).unwrap_err();
            assert_eq!(err.code(), "blocks_invalid", "{case}");
        }
    }

    #[test]
    fn selector_info_takes_the_elements_text_and_accessible_name() {
        let target = |extra: Value| {
            let mut t = json!({"css": "#pay", "xpath": "/html/body/button", "testIds": []});
            t.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!({"blocks": [{"type": "pinpoint", "selector": "#pay", "target": t}]})
        };
        let ok = target(json!({"text": "Pay now", "accessibleName": "Pay for the order"}));
        let stored = validate_submission(&ok, &limits()).unwrap();
        let found = stored.blocks[0].target().unwrap();
        assert_eq!(found.text.as_deref(), Some("Pay now"));
        assert_eq!(found.accessible_name.as_deref(), Some("Pay for the order"));
        let longest = "é".repeat(ELEMENT_TEXT_MAX_CHARS);
        assert!(validate_submission(&target(json!({"text": longest, "accessibleName": ""})), &limits()).is_ok());
        for bad in [
            json!({"text": "x".repeat(ELEMENT_TEXT_MAX_CHARS + 1)}),
            json!({"accessibleName": "x".repeat(ELEMENT_TEXT_MAX_CHARS + 1)}),
            json!({"text": 5}),
            json!({"accessibleName": ["Pay"]}),
        ] {
            let err = validate_submission(&target(bad.clone()), &limits()).unwrap_err();
            assert_eq!(err.code(), "blocks_invalid", "{bad}");
        }
    }

    #[test]
    fn context_network_holds_up_to_ten_failed_requests_of_one_shape() {
        let entry = json!({"method": "POST", "url": "https://a.test/api/pay?cart=[redacted]", "status": 500,
            "durationMs": 132.5, "time": "2026-05-01T09:30:00.000Z"});
        let body = |network: Value| json!({"blocks": [{"type": "text", "text": "x"}], "context": {"network": network}});
        let ten: Vec<Value> = (0..10).map(|_| entry.clone()).collect();
        assert!(validate_submission(&body(json!(ten)), &limits()).is_ok());
        assert!(
            validate_submission(
                &body(json!([{"method": "GET", "url": "/x", "status": 0, "durationMs": 0,
            "time": "2026-05-01T09:30:00Z"}])),
                &limits()
            )
            .is_ok()
        );
        let with = |field: &str, value: Value| {
            let mut e = entry.clone();
            e[field] = value;
            json!([e])
        };
        let without = |field: &str| {
            let mut e = entry.clone();
            e.as_object_mut().unwrap().remove(field);
            json!([e])
        };
        let eleven: Vec<Value> = (0..11).map(|_| entry.clone()).collect();
        for bad in [
            json!(eleven),
            json!({"method": "GET"}),
            json!(["GET /x 500"]),
            with("status", json!(1000)),
            with("status", json!(-1)),
            with("status", json!(500.5)),
            with("status", json!("500")),
            with("durationMs", json!(-1)),
            with("durationMs", json!("fast")),
            with("time", json!("yesterday")),
            with("method", json!("")),
            with("method", json!("X".repeat(21))),
            with("url", json!("")),
            with("url", json!("x".repeat(NETWORK_URL_MAX_CHARS + 1))),
            without("method"),
            without("url"),
            without("status"),
            without("durationMs"),
            without("time"),
        ] {
            let err = validate_submission(&body(bad.clone()), &limits()).unwrap_err();
            assert_eq!(err.code(), "context_invalid", "{bad}");
            assert!(err.message().starts_with("context.network"), "{}", err.message());
        }
    }

    #[test]
    fn nul_characters_are_refused() {
        let blocks = json!({"blocks": [{"type": "text", "text": "a\u{0}b"}]});
        assert_eq!(validate_submission(&blocks, &limits()).unwrap_err().code(), "blocks_invalid");
        let context = json!({"blocks": [{"type": "text", "text": "ok"}], "context": {"extra": {"k": "a\u{0}"}}});
        assert_eq!(validate_submission(&context, &limits()).unwrap_err().code(), "context_invalid");
    }

    #[test]
    fn malformed_blob_ids_are_blob_id_invalid() {
        let body = json!({"blocks": [{"type": "screenshot", "blobId": "../../etc/passwd"}]});
        assert_eq!(validate_submission(&body, &limits()).unwrap_err().code(), "blob_id_invalid");
    }

    #[test]
    fn bad_context_is_context_invalid() {
        let text = json!([{"type": "text", "text": "x"}]);
        let cases = [
            json!({"url": 5}),
            json!({"device": "fridge"}),
            json!({"consoleErrors": (0..11).map(|i| i.to_string()).collect::<Vec<_>>()}),
            json!({"artifactId": "a".repeat(201)}),
            json!({"artifact": {"id": "x", "url": "javascript:alert(1)"}}),
            json!({"timestamp": "yesterday"}),
            json!({"big": "x".repeat(70_000)}),
            json!("not an object"),
        ];
        for context in cases {
            let err = validate_submission(&json!({"blocks": text, "context": context}), &limits()).unwrap_err();
            assert_eq!(err.code(), "context_invalid", "{context}");
        }
    }

    #[test]
    fn the_text_form_and_the_value_form_agree() {
        let text = json!({"type": "text", "text": "x"});
        let bodies = [
            json!({"blocks": [text], "channelKey": "bug", "context": {"url": "https://a.example/", "extra": {"n": 1}}}),
            json!({"blocks": [text], "channelKey": 7, "context": null}),
            json!({"blocks": [text, {"type": "screenshot", "blobId": BLOB, "width": 10}]}),
            json!({"blocks": [], "context": {"url": 5}}),
            json!({"blocks": [text], "context": {"url": 5}}),
            json!({"blocks": [{"type": "text", "text": "a\u{0}"}], "context": {"url": 5}}),
            json!({"blocks": [text], "context": {"extra": {"k": "a\u{0}"}}}),
            json!({"blocks": [{"type": "screenshot", "blobId": "nope"}]}),
            json!(["not", "an", "object"]),
        ];
        for body in bodies {
            let pretty = serde_json::to_vec_pretty(&body).unwrap();
            assert_eq!(parse_submission(&pretty, &limits()), validate_submission(&body, &limits()), "{body}");
        }
    }

    #[test]
    fn fields_a_newer_widget_sends_are_kept() {
        let body = json!({"blocks": [
            {"type": "text", "text": "x", "color": "red"},
            {"type": "pinpoint", "selector": "#a", "target": {"css": "#a", "role": "button"}, "pressure": 0.4}
        ], "context": {"url": "https://a.test/", "viewport": {"width": 390, "height": 844, "scale": 3},
                        "network": [{"method": "GET", "url": "/x", "status": 500, "durationMs": 3,
                                     "time": "2026-05-01T09:30:00Z", "initiator": "fetch"}]}});
        let submission = validate_submission(&body, &limits()).unwrap();
        assert_eq!(serde_json::to_value(&submission.blocks).unwrap(), body["blocks"]);
        assert_eq!(serde_json::to_value(&submission.context).unwrap(), body["context"]);
        // And read back from storage the same.
        let stored: Vec<Block> = serde_json::from_value(body["blocks"].clone()).unwrap();
        assert_eq!(stored, submission.blocks);
        let stored: Context = serde_json::from_value(body["context"].clone()).unwrap();
        assert_eq!(stored, submission.context);
    }

    #[test]
    fn a_refusal_names_the_field_at_fault() {
        let message = |body: Value| validate_submission(&body, &limits()).unwrap_err().message().to_string();
        assert_eq!(
            message(json!({"blocks": [{"type": "text", "text": "ok"}, {"type": "text", "text": ""}]})),
            "blocks[1].text: must be 1 to 10000 characters"
        );
        assert!(
            message(json!({"blocks": [{"type": "pinpoint", "selector": "#a", "target": {"css": 5}}]}))
                .starts_with("blocks[0].target.css: invalid type"),
        );
        assert!(
            message(json!({"blocks": [{"type": "video"}]})).starts_with("blocks[0].type: unknown block type \"video\"")
        );
        assert!(
            message(json!({"blocks": [{"type": "text", "text": "x"}], "context": {"viewport": {"width": "wide"}}}))
                .starts_with("context.viewport.width: invalid type"),
        );
        assert_eq!(
            message(json!({"blocks": [{"type": "text", "text": "x"}], "context": {"network": [{"method": "GET",
                "url": "/x", "status": 1000, "durationMs": 1, "time": "2026-05-01T09:30:00Z"}]}})),
            "context.network[0].status: must be a whole number from 0 to 999"
        );
    }
}
