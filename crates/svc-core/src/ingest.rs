//! Validation of what the widget sends (decisions §3 and §4): report bodies, blocks, context, limits.
//! The ingest surface, the tool endpoint and the benchmark's ceiling server all call this code.

use serde_json::{Map, Value};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    Screenshot,
    Audio,
    File,
}

impl BlobKind {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "screenshot" => Some(BlobKind::Screenshot),
            "audio" => Some(BlobKind::Audio),
            "file" => Some(BlobKind::File),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            BlobKind::Screenshot => "screenshot",
            BlobKind::Audio => "audio",
            BlobKind::File => "file",
        }
    }
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

/// A checked `POST /ingest/report` body.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub blocks: Vec<Value>,
    pub channel_key: Option<String>,
    pub context: Map<String, Value>,
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
                let kind = BlobKind::parse(block.get("type")?.as_str()?)?;
                let blob_id = block.get("blobId")?.as_str()?.to_string();
                Some(BlobRef { block_index, blob_id, kind })
            })
            .collect()
    }

    pub fn artifact_id(&self) -> Option<&str> {
        self.context.get("artifactId").and_then(Value::as_str)
    }
}

/// Checks a whole report body: `{blocks, channelKey?, context?}`.
pub fn validate_submission(body: &Value, limits: &Limits) -> Result<Submission, Rejection> {
    let object = check_submission(body, limits)?;
    Ok(Submission {
        blocks: object.get("blocks").and_then(Value::as_array).cloned().unwrap_or_default(),
        channel_key: channel_key(object.get("channelKey")).map(String::from),
        context: object.get("context").and_then(Value::as_object).cloned().unwrap_or_default(),
    })
}

/// [`validate_submission`] for a body the caller no longer needs: the same checks, then the
/// blocks and context are moved out instead of copied (the ingest hot path).
pub fn validate_submission_owned(body: Value, limits: &Limits) -> Result<Submission, Rejection> {
    check_submission(&body, limits)?;
    let Value::Object(mut object) = body else { unreachable!("checked: the body is an object") };
    let channel_key = channel_key(object.get("channelKey")).map(String::from);
    let blocks = match object.remove("blocks") {
        Some(Value::Array(blocks)) => blocks,
        _ => unreachable!("checked: blocks is an array"),
    };
    let context = match object.remove("context") {
        Some(Value::Object(context)) => context,
        _ => Map::new(),
    };
    Ok(Submission { blocks, channel_key, context })
}

/// `channelKey` when it is a string; a wrong type cannot name a channel, so it falls back like an
/// unknown key would.
fn channel_key(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// Every check of [`validate_submission`], in its order; the body's object on success.
fn check_submission<'a>(body: &'a Value, limits: &Limits) -> Result<&'a Map<String, Value>, Rejection> {
    let object = body.as_object().ok_or_else(|| Rejection::Blocks("body must be a JSON object".into()))?;
    let blocks = check_blocks(object.get("blocks"), limits)?;
    let context = match object.get("context") {
        None | Some(Value::Null) => None,
        Some(context) => Some(check_context(context)?),
    };
    // NUL characters cannot be stored by every backend and are never meaningful text.
    if blocks.iter().any(contains_nul) {
        return Err(Rejection::Blocks("text must not contain NUL characters".into()));
    }
    if context.is_some_and(|context| context.iter().any(|(k, v)| k.contains('\0') || contains_nul(v))) {
        return Err(Rejection::Context("context must not contain NUL characters".into()));
    }
    Ok(object)
}

fn contains_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(contains_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        _ => false,
    }
}

pub fn validate_blocks(blocks: Option<&Value>, limits: &Limits) -> Result<Vec<Value>, Rejection> {
    check_blocks(blocks, limits).cloned()
}

fn check_blocks<'a>(blocks: Option<&'a Value>, limits: &Limits) -> Result<&'a Vec<Value>, Rejection> {
    let list = blocks
        .and_then(Value::as_array)
        .ok_or_else(|| Rejection::Blocks("blocks is required: an array of blocks".into()))?;
    if list.is_empty() {
        return Err(Rejection::Blocks("blocks must hold at least one block".into()));
    }
    if list.len() > limits.blocks_max {
        return Err(Rejection::Blocks(format!("at most {} blocks per report", limits.blocks_max)));
    }
    for (i, block) in list.iter().enumerate() {
        check_block(block, limits).map_err(|e| prefix(e, &format!("blocks[{i}]")))?;
    }
    Ok(list)
}

fn prefix(rejection: Rejection, at: &str) -> Rejection {
    match rejection {
        Rejection::Blocks(m) => Rejection::Blocks(format!("{at}: {m}")),
        Rejection::Context(m) => Rejection::Context(format!("{at}: {m}")),
        Rejection::BlobIdInvalid(m) => Rejection::BlobIdInvalid(format!("{at}: {m}")),
    }
}

/// Field-level checks for one object; all errors are `blocks_invalid` unless told otherwise.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    allowed: &'static [&'static str],
}

impl<'a> Fields<'a> {
    fn new(object: &'a Map<String, Value>, allowed: &'static [&'static str]) -> Result<Self, String> {
        if let Some(unknown) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("unknown field {unknown} (allowed: {})", allowed.join(", ")));
        }
        Ok(Fields { object, allowed })
    }
    fn get(&self, name: &str) -> Option<&'a Value> {
        debug_assert!(self.allowed.contains(&name));
        self.object.get(name).filter(|v| !v.is_null())
    }
    fn string(&self, name: &str, min: usize, max: usize, required: bool) -> Result<Option<&'a str>, String> {
        match self.get(name) {
            None if required => Err(format!("{name} is required")),
            None => Ok(None),
            Some(Value::String(s)) => {
                let n = s.chars().count();
                if n < min || n > max { Err(format!("{name} must be {min} to {max} characters")) } else { Ok(Some(s)) }
            }
            Some(_) => Err(format!("{name} must be a string")),
        }
    }
    fn number(&self, name: &str, min: f64, max: f64) -> Result<Option<f64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() && n >= min && n <= max => Ok(Some(n)),
                _ => Err(format!("{name} must be a number between {min} and {max}")),
            },
        }
    }
    fn string_list(&self, name: &str, max_items: usize, max_chars: usize) -> Result<(), String> {
        match self.get(name) {
            None => Ok(()),
            Some(Value::Array(items))
                if items.len() <= max_items
                    && items.iter().all(|i| i.as_str().is_some_and(|s| s.chars().count() <= max_chars)) =>
            {
                Ok(())
            }
            Some(_) => Err(format!("{name} must be an array of at most {max_items} strings")),
        }
    }
}

const TEXT_FIELDS: &[&str] = &["type", "text"];
const SCREENSHOT_FIELDS: &[&str] = &["type", "blobId", "width", "height", "mime", "bytes", "annotations"];
const AUDIO_FIELDS: &[&str] = &["type", "blobId", "durationMs", "mime", "bytes", "transcript"];
const SELECTION_FIELDS: &[&str] = &["type", "text", "selector", "target"];
const QUOTE_FIELDS: &[&str] = &["type", "text", "selector", "target", "comment"];
const PINPOINT_FIELDS: &[&str] = &["type", "selector", "target", "comment", "point", "rect"];
const FILE_FIELDS: &[&str] = &["type", "blobId", "name", "mime", "bytes", "description"];
const SELECTOR_MAX_CHARS: usize = 2_000;
const MAX_PIXELS: f64 = 100_000.0;

/// Checks one block against its type's schema and returns it as stored.
pub fn validate_block(block: &Value, limits: &Limits) -> Result<Value, Rejection> {
    check_block(block, limits)?;
    Ok(block.clone())
}

fn check_block(block: &Value, limits: &Limits) -> Result<(), Rejection> {
    let object = block.as_object().ok_or_else(|| Rejection::Blocks("must be an object".into()))?;
    let block_type =
        object.get("type").and_then(Value::as_str).ok_or_else(|| Rejection::Blocks("type is required".into()))?;
    let text_max = limits.text_max_chars;
    let checked: Result<(), String> = (|| {
        match block_type {
            "text" => {
                let f = Fields::new(object, TEXT_FIELDS)?;
                f.string("text", 1, text_max, true)?;
            }
            "screenshot" => {
                let f = Fields::new(object, SCREENSHOT_FIELDS)?;
                blob_meta(&f)?;
                f.number("width", 0.0, MAX_PIXELS)?;
                f.number("height", 0.0, MAX_PIXELS)?;
                if let Some(annotations) = f.get("annotations") {
                    validate_annotations(annotations)?;
                }
            }
            "audio" => {
                let f = Fields::new(object, AUDIO_FIELDS)?;
                blob_meta(&f)?;
                f.number("durationMs", 0.0, limits.audio_max_ms as f64)?;
                f.string("transcript", 0, 20_000, false)?;
            }
            "selection" => {
                let f = Fields::new(object, SELECTION_FIELDS)?;
                f.string("text", 1, text_max, true)?;
                f.string("selector", 0, SELECTOR_MAX_CHARS, false)?;
                if let Some(target) = f.get("target") {
                    validate_selector_info(target).map_err(|e| format!("target: {e}"))?;
                }
            }
            "quote" => {
                let f = Fields::new(object, QUOTE_FIELDS)?;
                f.string("text", 1, text_max, true)?;
                f.string("selector", 1, SELECTOR_MAX_CHARS, true)?;
                let target = f.get("target").ok_or("target is required")?;
                validate_selector_info(target).map_err(|e| format!("target: {e}"))?;
                f.string("comment", 1, text_max, true)?;
            }
            "pinpoint" => {
                let f = Fields::new(object, PINPOINT_FIELDS)?;
                f.string("selector", 1, SELECTOR_MAX_CHARS, true)?;
                let target = f.get("target").ok_or("target is required")?;
                validate_selector_info(target).map_err(|e| format!("target: {e}"))?;
                f.string("comment", 0, text_max, false)?;
                if let Some(point) = f.get("point") {
                    let p = point.as_object().ok_or("point must be {x, y}")?;
                    let pf = Fields::new(p, &["x", "y"]).map_err(|e| format!("point: {e}"))?;
                    for axis in ["x", "y"] {
                        pf.number(axis, 0.0, 1.0)
                            .map_err(|e| format!("point.{e}"))?
                            .ok_or(format!("point.{axis} is required (0 to 1)"))?;
                    }
                }
                if let Some(rect) = f.get("rect") {
                    let r = rect.as_object().ok_or("rect must be {x, y, width, height}")?;
                    let rf = Fields::new(r, &["x", "y", "width", "height"]).map_err(|e| format!("rect: {e}"))?;
                    for side in ["x", "y", "width", "height"] {
                        rf.number(side, -MAX_PIXELS, MAX_PIXELS)
                            .map_err(|e| format!("rect.{e}"))?
                            .ok_or(format!("rect.{side} is required"))?;
                    }
                }
            }
            "file" => {
                let f = Fields::new(object, FILE_FIELDS)?;
                blob_meta(&f)?;
                f.string("name", 1, 255, true)?;
                f.string("description", 0, text_max, false)?;
            }
            other => return Err(format!("unknown block type {other:?}")),
        }
        Ok(())
    })();
    checked.map_err(Rejection::Blocks)?;
    if let Some(blob_id) = object.get("blobId") {
        let valid = blob_id.as_str().is_some_and(crate::ids::is_object_id);
        if !valid {
            return Err(Rejection::BlobIdInvalid(format!("blobId {blob_id} is not a blob id")));
        }
    }
    Ok(())
}

/// `blobId` (presence; its shape is checked as `blob_id_invalid`), `mime?`, `bytes?`.
fn blob_meta(f: &Fields) -> Result<(), String> {
    if f.get("blobId").is_none() {
        return Err("blobId is required".into());
    }
    f.string("mime", 0, 200, false)?;
    f.number("bytes", 0.0, 1e12)?;
    Ok(())
}

fn validate_annotations(annotations: &Value) -> Result<(), String> {
    let list = annotations.as_array().ok_or("annotations must be an array")?;
    if list.len() > 100 {
        return Err("at most 100 annotations".into());
    }
    for (i, shape) in list.iter().enumerate() {
        let at = |m: &str| format!("annotations[{i}]: {m}");
        let object = shape.as_object().ok_or_else(|| at("must be an object"))?;
        let f = Fields::new(object, &["kind", "points", "color"]).map_err(|e| at(&e))?;
        match f.get("kind").and_then(Value::as_str) {
            Some("rect" | "arrow" | "pen" | "blur") => {}
            _ => return Err(at("kind must be rect, arrow, pen or blur")),
        }
        let points = f.get("points").and_then(Value::as_array).ok_or_else(|| at("points must be an array"))?;
        let points_ok = points.len() <= 10_000
            && points.iter().all(|p| {
                p.as_array()
                    .is_some_and(|xy| xy.len() == 2 && xy.iter().all(|n| n.as_f64().is_some_and(f64::is_finite)))
            });
        if !points_ok {
            return Err(at("points must be [[x, y], ...]"));
        }
        f.string("color", 0, 50, false).map_err(|e| at(&e))?;
    }
    Ok(())
}

/// The longest `target.text` and `target.accessibleName` of a SelectorInfo: the widget cuts an
/// element's visible text and accessible name to this many characters.
pub const ELEMENT_TEXT_MAX_CHARS: usize = 200;

/// SelectorInfo: `css`, `xpath`, `testIds`, `reactComponent?`, `matchIndex?`, plus `shadowHosts` and
/// `frames` (decisions §10), and the element's visible `text` and `accessibleName` (each at most
/// [`ELEMENT_TEXT_MAX_CHARS`] characters).
pub fn validate_selector_info(target: &Value) -> Result<(), String> {
    let object = target.as_object().ok_or("must be a SelectorInfo object")?;
    let f = Fields::new(
        object,
        &["css", "xpath", "testIds", "reactComponent", "matchIndex", "shadowHosts", "frames", "text", "accessibleName"],
    )?;
    f.string("css", 1, SELECTOR_MAX_CHARS, true)?;
    f.string("text", 0, ELEMENT_TEXT_MAX_CHARS, false)?;
    f.string("accessibleName", 0, ELEMENT_TEXT_MAX_CHARS, false)?;
    f.string("xpath", 0, SELECTOR_MAX_CHARS, false)?;
    f.string_list("testIds", 11, 500)?;
    f.string("reactComponent", 0, 200, false)?;
    if let Some(index) = f.get("matchIndex") {
        if !index.as_u64().is_some_and(|n| n < 1_000_000) {
            return Err("matchIndex must be a non-negative integer".into());
        }
    }
    f.string_list("shadowHosts", 20, SELECTOR_MAX_CHARS)?;
    f.string_list("frames", 20, SELECTOR_MAX_CHARS)?;
    Ok(())
}

/// The length of a value's compact JSON text, counted without building the text.
fn json_size(value: &Value) -> Option<usize> {
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
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.0)
}

/// Checks the types of the known context fields (unknown top-level fields are kept) and its size.
pub fn validate_context(context: &Value) -> Result<Map<String, Value>, Rejection> {
    check_context(context).cloned()
}

fn check_context(context: &Value) -> Result<&Map<String, Value>, Rejection> {
    let object = context.as_object().ok_or_else(|| Rejection::Context("context must be an object".into()))?;
    let size = json_size(context).unwrap_or(usize::MAX);
    if size > CONTEXT_MAX_BYTES {
        return Err(Rejection::Context(format!("context is {size} bytes; at most {CONTEXT_MAX_BYTES}")));
    }
    let bad = |m: String| Rejection::Context(m);
    for (field, value) in object {
        if value.is_null() {
            continue;
        }
        let ok = match field.as_str() {
            "url" | "pathname" | "host" | "userAgent" | "language" | "channelSource" => {
                value.as_str().is_some_and(|s| s.len() <= 8_192)
            }
            "viewport" => value.as_object().is_some_and(|v| {
                v.len() <= 2
                    && ["width", "height"]
                        .iter()
                        .all(|k| v.get(*k).is_none_or(|n| n.as_f64().is_some_and(|n| n >= 0.0)))
            }),
            "device" => matches!(value.as_str(), Some("desktop" | "tablet" | "mobile")),
            "timestamp" => value.as_str().is_some_and(|s| crate::time::parse_iso(s).is_some()),
            "flags" => value.as_array().is_some_and(|a| a.len() <= 100 && a.iter().all(Value::is_string)),
            "reporter" | "extra" | "custom" => value.is_object(),
            "consoleErrors" => value.as_array().is_some_and(|a| {
                a.len() <= 10 && a.iter().all(|e| e.as_str().is_some_and(|s| s.chars().count() <= 2_000))
            }),
            "userId" => value.as_str().is_some_and(|s| s.chars().count() <= 200),
            "artifactId" => value.as_str().is_some_and(|s| (1..=200).contains(&s.chars().count())),
            "artifact" => {
                validate_artifact_meta(value).map_err(|e| bad(format!("artifact: {e}")))?;
                true
            }
            "network" => {
                validate_network(value).map_err(|e| bad(format!("network: {e}")))?;
                true
            }
            _ => true,
        };
        if !ok {
            return Err(bad(match field.as_str() {
                "viewport" => "viewport must be {width, height} numbers".into(),
                "device" => "device must be desktop, tablet or mobile".into(),
                "timestamp" => "timestamp must be an ISO 8601 date-time".into(),
                "flags" => "flags must be an array of strings".into(),
                "consoleErrors" => "consoleErrors must be at most 10 strings of at most 2000 characters".into(),
                "userId" => "userId must be a string of at most 200 characters".into(),
                "artifactId" => "artifactId must be 1 to 200 characters".into(),
                "reporter" | "extra" | "custom" => format!("{field} must be an object"),
                _ => format!("{field} must be a string"),
            }));
        }
    }
    Ok(object)
}

/// The most failed requests `context.network` holds.
pub const NETWORK_MAX_ENTRIES: usize = 10;
/// The longest URL of a `context.network` entry.
pub const NETWORK_URL_MAX_CHARS: usize = 2_000;

/// `context.network`: the page's last failed requests (fetch and XHR), at most
/// [`NETWORK_MAX_ENTRIES`], each `{method, url, status, durationMs, time}`: `method` 1 to 20
/// characters, `url` 1 to [`NETWORK_URL_MAX_CHARS`], `status` a whole number from 0 (no answer) to 999,
/// `durationMs` a number from 0 to 86,400,000, `time` an ISO 8601 date-time. Nothing else.
pub fn validate_network(value: &Value) -> Result<(), String> {
    let list = value.as_array().ok_or("must be an array of failed requests")?;
    if list.len() > NETWORK_MAX_ENTRIES {
        return Err(format!("at most {NETWORK_MAX_ENTRIES} entries"));
    }
    for (i, entry) in list.iter().enumerate() {
        let at = |m: &str| format!("[{i}]: {m}");
        let object = entry.as_object().ok_or_else(|| at("must be {method, url, status, durationMs, time}"))?;
        let f = Fields::new(object, &["method", "url", "status", "durationMs", "time"]).map_err(|e| at(&e))?;
        f.string("method", 1, 20, true).map_err(|e| at(&e))?;
        f.string("url", 1, NETWORK_URL_MAX_CHARS, true).map_err(|e| at(&e))?;
        let status = f.get("status").and_then(Value::as_u64).filter(|s| *s <= 999);
        if status.is_none() {
            return Err(at("status must be a whole number from 0 to 999"));
        }
        f.number("durationMs", 0.0, 86_400_000.0).map_err(|e| at(&e))?.ok_or_else(|| at("durationMs is required"))?;
        let time = f.string("time", 1, 64, true).map_err(|e| at(&e))?.unwrap_or_default();
        if crate::time::parse_iso(time).is_none() {
            return Err(at("time must be an ISO 8601 date-time"));
        }
    }
    Ok(())
}

/// ArtifactMeta: `id` (required, at most 200 characters); optional `title`, `tool`, `source`, `goal`
/// strings, `constraints` string[], `url` (http or https), `meta` (string → string).
pub fn validate_artifact_meta(value: &Value) -> Result<(), String> {
    let object = value.as_object().ok_or("must be an object")?;
    let f = Fields::new(object, &["id", "title", "tool", "source", "goal", "constraints", "url", "meta"])?;
    f.string("id", 1, 200, true)?;
    for name in ["title", "tool", "source", "goal"] {
        f.string(name, 0, 10_000, false)?;
    }
    f.string_list("constraints", 100, 10_000)?;
    if let Some(url) = f.string("url", 1, 8_192, false)? {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err("url must be an http or https URL".into());
        }
    }
    if let Some(meta) = f.get("meta") {
        let ok = meta.as_object().is_some_and(|m| m.len() <= 100 && m.values().all(Value::is_string));
        if !ok {
            return Err("meta must map strings to strings".into());
        }
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
        assert_eq!(submission.context["somethingNew"], 1);
    }

    #[test]
    fn bad_blocks_are_blocks_invalid() {
        let cases = [
            json!({"blocks": []}),
            json!({"blocks": [{"type": "video"}]}),
            json!({"blocks": [{"type": "text", "text": ""}]}),
            json!({"blocks": [{"type": "text", "text": "x".repeat(10_001)}]}),
            json!({"blocks": [{"type": "text", "text": "x", "color": "red"}]}),
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
        assert_eq!(stored.blocks[0]["target"]["text"], "Pay now");
        assert_eq!(stored.blocks[0]["target"]["accessibleName"], "Pay for the order");
        let longest = "é".repeat(ELEMENT_TEXT_MAX_CHARS);
        assert!(validate_submission(&target(json!({"text": longest, "accessibleName": ""})), &limits()).is_ok());
        for bad in [
            json!({"text": "x".repeat(ELEMENT_TEXT_MAX_CHARS + 1)}),
            json!({"accessibleName": "x".repeat(ELEMENT_TEXT_MAX_CHARS + 1)}),
            json!({"text": 5}),
            json!({"accessibleName": ["Pay"]}),
            json!({"label": "Pay"}),
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
            with("headers", json!({"authorization": "Bearer x"})),
            without("method"),
            without("url"),
            without("status"),
            without("durationMs"),
            without("time"),
        ] {
            let err = validate_submission(&body(bad.clone()), &limits()).unwrap_err();
            assert_eq!(err.code(), "context_invalid", "{bad}");
            assert!(err.message().starts_with("network"), "{}", err.message());
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
    fn the_owned_form_validates_exactly_like_the_borrowed_one() {
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
            assert_eq!(
                validate_submission_owned(body.clone(), &limits()),
                validate_submission(&body, &limits()),
                "{body}"
            );
        }
    }
}
