//! A report's blocks as types (decisions §3): what the reporter wrote, captured or attached, in the
//! order they sent it. Parsed once at the edge ([`crate::ingest`]); every reader below uses these
//! fields. Each struct keeps the fields a newer widget sends that this version does not know
//! (`other`), so nothing is dropped on the way to storage; readers never look at them.
//!
//! Numbers the widget measures (sizes, coordinates) are kept as the JSON numbers they arrived as
//! (`1` stays `1`, not `1.0`), so a stored report reads back exactly as it was sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// Fields this version does not know, kept as they came.
pub type Unknown = Map<String, Value>;

/// One block of a report, tagged by `type`. Adding a type is one variant here and the places the
/// compiler then names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Block {
    /// What the reporter wrote.
    Text(TextBlock),
    Screenshot(ScreenshotBlock),
    /// A voice note.
    Audio(AudioBlock),
    /// Page text the reporter selected, as it is.
    Selection(SelectionBlock),
    /// Page text the reporter selected and commented on.
    Quote(QuoteBlock),
    /// A click on an exact element, with an optional comment.
    Pinpoint(PinpointBlock),
    File(FileBlock),
}

/// The `type` names, for messages.
pub const BLOCK_TYPES: [&str; 7] = ["text", "screenshot", "audio", "selection", "quote", "pinpoint", "file"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    pub text: String,
    #[serde(flatten)]
    pub other: Unknown,
}

/// What every block that holds an upload carries; `mime` and `bytes` (and a screenshot's size, a
/// voice note's duration) are overwritten from the stored blob when the report is filed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotBlock {
    pub blob_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Number>,
    /// Shapes the reporter drew over the screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Vec<Annotation>>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioBlock {
    pub blob_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionBlock {
    pub text: String,
    /// The smallest element holding the selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<SelectorInfo>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuoteBlock {
    pub text: String,
    pub selector: String,
    pub target: SelectorInfo,
    pub comment: String,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinpointBlock {
    pub selector: String,
    pub target: SelectorInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Where on the element, relative to it (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<Point>,
    /// The element's box in the viewport, in CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileBlock {
    pub blob_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    pub x: Number,
    pub y: Number,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rect {
    pub x: Number,
    pub y: Number,
    pub width: Number,
    pub height: Number,
}

/// How an annotation is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationKind {
    Rect,
    Arrow,
    Pen,
    Blur,
}

/// A shape drawn over a screenshot: its points in the screenshot's pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub kind: AnnotationKind,
    pub points: Vec<[Number; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

impl Annotation {
    /// The points as `(x, y)` pixels.
    pub fn xy(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().map(|[x, y]| (number(x), number(y)))
    }
}

/// How the widget names an element so an agent can find it in the code (spec: SelectorInfo; plus
/// `shadowHosts`, `frames`, the element's visible `text` and `accessibleName`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectorInfo {
    pub css: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// Test attributes of the node and up to 10 ancestors, closest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub react_component: Option<String>,
    /// Which of the nodes `css` matches, when it matches several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_index: Option<u64>,
    /// The css of each shadow host from the document down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow_hosts: Option<Vec<String>>,
    /// The css of each iframe from the document down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<String>>,
    /// The element's visible text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible_name: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

impl SelectorInfo {
    pub fn test_ids(&self) -> &[String] {
        self.test_ids.as_deref().unwrap_or_default()
    }
}

/// A JSON number as `f64` (every number the widget sends is finite: checked when parsed).
pub fn number(n: &Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}

/// Which kind of upload a block holds.
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
}

/// What the server knows of a stored upload, copied over a block's own claims when the report is
/// filed (ingest rule 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFacts {
    pub mime: String,
    pub bytes: u64,
    pub width: Option<u64>,
    pub height: Option<u64>,
    pub duration_ms: Option<u64>,
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text(TextBlock { text: text.into(), other: Unknown::new() })
    }

    /// The block's `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Block::Text(_) => "text",
            Block::Screenshot(_) => "screenshot",
            Block::Audio(_) => "audio",
            Block::Selection(_) => "selection",
            Block::Quote(_) => "quote",
            Block::Pinpoint(_) => "pinpoint",
            Block::File(_) => "file",
        }
    }

    /// The upload the block holds, if any.
    pub fn blob(&self) -> Option<(&str, BlobKind)> {
        match self {
            Block::Screenshot(b) => Some((&b.blob_id, BlobKind::Screenshot)),
            Block::Audio(b) => Some((&b.blob_id, BlobKind::Audio)),
            Block::File(b) => Some((&b.blob_id, BlobKind::File)),
            Block::Text(_) | Block::Selection(_) | Block::Quote(_) | Block::Pinpoint(_) => None,
        }
    }

    /// Overwrites what the block says of its upload with what the server stored (ingest rule 1).
    pub fn apply_blob_facts(&mut self, facts: &BlobFacts) {
        let mime = Some(facts.mime.clone());
        let bytes = Some(Number::from(facts.bytes));
        match self {
            Block::Screenshot(b) => {
                b.mime = mime;
                b.bytes = bytes;
                if let Some(width) = facts.width {
                    b.width = Some(width.into());
                }
                if let Some(height) = facts.height {
                    b.height = Some(height.into());
                }
            }
            Block::Audio(b) => {
                b.mime = mime;
                b.bytes = bytes;
                if let Some(duration) = facts.duration_ms {
                    b.duration_ms = Some(duration.into());
                }
            }
            Block::File(b) => {
                b.mime = mime;
                b.bytes = bytes;
            }
            Block::Text(_) | Block::Selection(_) | Block::Quote(_) | Block::Pinpoint(_) => {}
        }
    }

    /// The element the block points at (quotes and pinpoints always; selections when known).
    pub fn target(&self) -> Option<&SelectorInfo> {
        match self {
            Block::Selection(b) => b.target.as_ref(),
            Block::Quote(b) => Some(&b.target),
            Block::Pinpoint(b) => Some(&b.target),
            _ => None,
        }
    }

    /// The reporter's own words in the block, in the order a reader meets them: a text block's
    /// text; a quote's or pinpoint's comment; a voice note's transcript; a file's description.
    pub fn own_words(&self) -> Option<&str> {
        match self {
            Block::Text(b) => Some(&b.text),
            Block::Quote(b) => Some(&b.comment),
            Block::Pinpoint(b) => b.comment.as_deref(),
            Block::Audio(b) => b.transcript.as_deref(),
            Block::File(b) => b.description.as_deref(),
            Block::Screenshot(_) | Block::Selection(_) => None,
        }
    }
}
