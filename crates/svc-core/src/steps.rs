//! `context.steps`: what the reporter did on the page before the report, as the widget's recorder
//! kept it (issue: steps and reproductions). Up to [`MAX_STEPS`] steps, oldest first, each at a
//! time before the report was sent. Values typed into fields are never part of a step: an input
//! step says the field's type and the value's length, and whether it changed.

use serde::{Deserialize, Serialize};
use serde_json::Number;

use crate::block::Unknown;
use crate::block::number;

/// The most steps a report holds (the recorder keeps the last ones).
pub const MAX_STEPS: usize = 50;
/// The longest text of a step (an element's text, an option, a console message, a URL).
pub const STEP_TEXT_MAX_CHARS: usize = 500;
/// The longest address of a navigation or request step.
pub const STEP_URL_MAX_CHARS: usize = 2_000;

/// What a step was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// A click or tap on `target`.
    Click,
    /// Typing into the field `target` (`inputType`, `length`, `changed`; never the value).
    Input,
    /// A select, checkbox or radio `target` set to `value` (the option's text, `checked`,
    /// `unchecked`).
    Change,
    /// A key that acts: `Enter`, `Escape`, or `Tab` out of a field.
    Key,
    /// The page moved to `url`, `via` a full load, `push`, `replace`, `pop` or `hash`.
    Navigate,
    /// The page scrolled to `x`, `y` (scrolls close together are one step).
    Scroll,
    /// The viewport became `width` × `height`.
    Resize,
    /// A failed request of the page (`method`, `url`, `status`), as in `context.network`.
    Request,
    /// An error in the page's console (`message`).
    Console,
    /// Something inside an area the site marked private; nothing else is kept.
    Private,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Click => "click",
            StepKind::Input => "input",
            StepKind::Change => "change",
            StepKind::Key => "key",
            StepKind::Navigate => "navigate",
            StepKind::Scroll => "scroll",
            StepKind::Resize => "resize",
            StepKind::Request => "request",
            StepKind::Console => "console",
            StepKind::Private => "private",
        }
    }
}

/// The element a step acted on: how to find it again.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepTarget {
    pub css: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_ids: Option<Vec<String>>,
    /// The element's visible text (a button's label, a link's words), cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible_name: Option<String>,
    /// The element's tag name, lower case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

/// One step before the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub kind: StepKind,
    /// How long before the report was sent, in milliseconds (0 to 86,400,000).
    pub before_ms: Number,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<StepTarget>,
    /// input: the field's type (`text`, `email`, `password`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// input: the value's length in characters afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u32>,
    /// input: whether the value differs from what the field held before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
    /// change: the chosen option's text, `checked` or `unchecked` (never a typed value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// key: `Enter`, `Escape` or `Tab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// navigate and request: the address (query values redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// navigate: `load`, `push`, `replace`, `pop` or `hash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// scroll: where the page scrolled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<Number>,
    /// resize: the viewport afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Number>,
    /// request: the method and the status (0: no answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// console: the error's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

impl Step {
    /// Seconds before the report, as people write it ("12.3 s before").
    pub fn before_text(&self) -> String {
        let ms = number(&self.before_ms);
        if ms < 1_000.0 { format!("{ms:.0} ms before") } else { format!("{:.1} s before", ms / 1_000.0) }
    }
}
