//! A report's context as types (decisions §3, "Context"): the page, the browser, and what the widget
//! and the site attached. Parsed once at the edge ([`crate::ingest`]). Unknown top-level fields
//! are kept as they came (`other`): a site may attach anything, and a newer widget more.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::block::Unknown;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The page address as the widget read it (any text: see [`crate::report::link_url`] for
    /// the address a report links to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pathname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewport: Option<Viewport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// When the reporter sent it (ISO 8601, the browser's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The flag keys `Svc.alpha` found enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// The `reporter.profile` given to `init` (unverified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_errors: Option<Vec<String>>,
    /// The page's last failed requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<NetworkEntry>>,
    /// What the reporter did before the report, oldest first (the widget's recorder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<crate::steps::Step>>,
    /// The app's id for the user (unverified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
    /// The widget's attributes (`attributes`, `setAttribute(s)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<Map<String, Value>>,
    /// What groups the report into a room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactMeta>,
    /// How the widget chose the channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_source: Option<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Viewport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Number>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    Desktop,
    Tablet,
    Mobile,
}

impl Device {
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Desktop => "desktop",
            Device::Tablet => "tablet",
            Device::Mobile => "mobile",
        }
    }
}

/// A request of the page that failed (fetch or XHR), URL redacted by the widget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkEntry {
    pub method: String,
    pub url: String,
    /// 0 when there was no answer.
    pub status: u16,
    pub duration_ms: Number,
    /// When it was sent (ISO 8601).
    pub time: String,
    #[serde(flatten)]
    pub other: Unknown,
}

/// The artifact a report is about in artifact-review mode (spec: ArtifactMeta).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ArtifactMeta {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub other: Unknown,
}

impl Context {
    pub fn console_errors(&self) -> &[String] {
        self.console_errors.as_deref().unwrap_or_default()
    }

    pub fn network(&self) -> &[NetworkEntry] {
        self.network.as_deref().unwrap_or_default()
    }

    pub fn steps(&self) -> &[crate::steps::Step] {
        self.steps.as_deref().unwrap_or_default()
    }

    pub fn flags(&self) -> &[String] {
        self.flags.as_deref().unwrap_or_default()
    }

    /// A string field of `extra` (`via`, `author` from the tool endpoint).
    pub fn extra_text(&self, name: &str) -> Option<&str> {
        self.extra.as_ref()?.get(name)?.as_str()
    }
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
