//! The records Svc keeps. Times are epoch milliseconds. A report is typed through and through
//! ([`crate::block`], [`crate::context`], [`crate::identity::Identity`]); settings documents that
//! only their own module reads (a widget configuration, a room's meta) stay JSON values,
//! validated by the surface that accepted them.

use serde_json::Value;

use crate::block::Block;
use crate::context::Context;
use crate::identity::Identity;
use crate::status::Status;

#[derive(Debug, Clone, PartialEq)]
pub struct Organization {
    pub id: String,
    pub name: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub slug: String,
    /// Public key (`pr_...`) used by the widget and ingest.
    pub project_key: String,
    pub url_patterns: Vec<String>,
    pub default_channel_key: String,
    /// The stored (validated) widget configuration; defaults are filled in at the edges.
    pub widget_config: Value,
    pub allowed_origins: Vec<String>,
    /// HMAC key for identity tokens. It must be usable, so it cannot be stored hashed; it is never
    /// returned by any API (only `identitySecretSet`).
    pub identity_secret: Option<String>,
    pub created_at: i64,
    /// Reports older than this many days are deleted by housekeeping (1 to 3650); `None` keeps
    /// them.
    pub retention_days: Option<i64>,
    /// How the project's reporters sign in from the widget (off by default).
    pub reporter_auth: crate::reporter::ReporterAuth,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    pub id: String,
    pub project_id: String,
    pub key: String,
    pub name: String,
    pub color: String,
    pub mascot: String,
    pub base_weight: f64,
    /// Array of `{conditions, weight, note}` (see `channel::validate_matchers`).
    pub matchers: Value,
    pub archived: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What kind of actor an [`Author`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthorKind {
    /// Whoever filed a report from the widget (verified or not), or answered in their thread.
    Reporter,
    /// A key: an agent on the tool endpoint, a script on the REST API.
    Agent,
    /// A person signed in to the dashboard.
    User,
    /// The command line (`svc ...`).
    Cli,
    /// Svc itself (housekeeping, retention).
    System,
}

impl AuthorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorKind::Reporter => "reporter",
            AuthorKind::Agent => "agent",
            AuthorKind::User => "user",
            AuthorKind::Cli => "cli",
            AuthorKind::System => "system",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [AuthorKind::Reporter, AuthorKind::Agent, AuthorKind::User, AuthorKind::Cli, AuthorKind::System]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// A kind compares with its name (`kind == "agent"`), for templates and tests.
impl PartialEq<&str> for AuthorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for AuthorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who filed a report or made a change: `{kind, id, label}` (decisions §3).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Author {
    pub kind: AuthorKind,
    pub id: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub id: String,
    pub project_id: String,
    pub channel_key: String,
    pub status: Status,
    pub title: String,
    pub blocks: Vec<Block>,
    pub context: Context,
    pub identity: Option<Identity>,
    pub identity_error: Option<String>,
    pub author: Author,
    /// Copied from `context.artifactId`: the room the report belongs to.
    pub artifact_id: Option<String>,
    /// `context.url`, kept apart for the compact list form.
    pub url: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The user the report is assigned to (a user id); `None` when unassigned. Set by triage, never
    /// when filed.
    pub assignee: Option<String>,
    /// The report's labels in the order they were added, each once (see [`crate::triage`]). Set by
    /// triage, never when filed.
    pub labels: Vec<String>,
}

/// Everything needed to file a report atomically: the report, the blobs it binds and its
/// idempotency key.
#[derive(Debug, Clone)]
pub struct NewReport {
    pub report: Report,
    /// Blob ids the report's blocks reference; each is bound to the report in the same transaction.
    pub blob_ids: Vec<String>,
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub report_id: String,
    pub from_status: Status,
    pub to_status: Status,
    pub by: Author,
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Room {
    pub id: String,
    pub project_id: String,
    pub artifact_id: String,
    pub title: String,
    pub meta: Option<Value>,
    pub archived: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A room as listed: stored, implicit (only reports carry its artifact id), or both.
#[derive(Debug, Clone, PartialEq)]
pub struct RoomSummary {
    pub id: Option<String>,
    pub artifact_id: String,
    pub title: String,
    pub meta: Option<Value>,
    pub archived: bool,
    pub last_activity: i64,
    pub count: i64,
}

/// Partial room change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomChanges {
    pub title: Option<String>,
    /// `Some(None)` clears meta.
    pub meta: Option<Option<Value>>,
    pub archived: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrigin {
    Dashboard,
    Setup,
    Api,
    Oauth,
    Cli,
}

impl KeyOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyOrigin::Dashboard => "dashboard",
            KeyOrigin::Setup => "setup",
            KeyOrigin::Api => "api",
            KeyOrigin::Oauth => "oauth",
            KeyOrigin::Cli => "cli",
        }
    }
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "dashboard" => KeyOrigin::Dashboard,
            "setup" => KeyOrigin::Setup,
            "api" => KeyOrigin::Api,
            "oauth" => KeyOrigin::Oauth,
            "cli" => KeyOrigin::Cli,
            _ => return None,
        })
    }
}

/// A secret API key. Bound to one project, or (org-wide, tool endpoint only) to an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: String,
    pub project_id: Option<String>,
    pub org_id: String,
    pub name: String,
    /// Hex SHA-256 of the plaintext.
    pub key_hash: String,
    pub scopes: Vec<String>,
    pub origin: KeyOrigin,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub agent_name: Option<String>,
    pub agent_owner: Option<String>,
    pub created_at: i64,
}

impl ApiKey {
    /// Usable at `now`: not revoked and not expired.
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// A hint's weight: `suggest`, `max`, or a number.
#[derive(Debug, Clone, PartialEq)]
pub enum HintWeight {
    Suggest,
    Max,
    Number(f64),
}

impl HintWeight {
    pub fn to_json(&self) -> Value {
        match self {
            HintWeight::Suggest => Value::from("suggest"),
            HintWeight::Max => Value::from("max"),
            HintWeight::Number(n) => serde_json::Number::from_f64(*n).map(Value::Number).unwrap_or(Value::Null),
        }
    }
    pub fn from_json(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) if s == "suggest" => Some(HintWeight::Suggest),
            Value::String(s) if s == "max" => Some(HintWeight::Max),
            Value::Number(n) => n.as_f64().filter(|n| n.is_finite()).map(HintWeight::Number),
            _ => None,
        }
    }
    /// Stored form: `suggest`, `max` or the number as text.
    pub fn to_db(&self) -> String {
        match self {
            HintWeight::Suggest => "suggest".into(),
            HintWeight::Max => "max".into(),
            HintWeight::Number(n) => n.to_string(),
        }
    }
    pub fn from_db(text: &str) -> Self {
        match text {
            "suggest" => HintWeight::Suggest,
            "max" => HintWeight::Max,
            other => HintWeight::Number(other.parse().unwrap_or(0.0)),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub id: String,
    pub project_id: String,
    pub channel_key: String,
    pub weight: HintWeight,
    pub user_id: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Hints live five minutes.
pub const HINT_TTL_MS: i64 = 5 * 60 * 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: String,
    pub report_id: String,
    pub project_id: String,
    pub author: Author,
    pub text: String,
    pub kind: Option<String>,
    pub draft: bool,
    pub created_at: i64,
    pub published_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub project_id: String,
    pub key: String,
    pub enabled: bool,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Blob {
    pub id: String,
    pub project_id: String,
    /// `screenshot`, `audio` or `file`.
    pub kind: String,
    pub mime: String,
    pub bytes: i64,
    pub width: Option<i64>,
    pub height: Option<i64>,
    pub duration_ms: Option<i64>,
    /// Original file name (file blobs).
    pub name: Option<String>,
    /// The report it is bound to; `None` while unbound.
    pub report_id: Option<String>,
    pub created_at: i64,
}

/// Report list query: one project, or several (org-wide keys on the tool endpoint, the dashboard's
/// inbox). Every filter given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportFilter {
    pub project_ids: Vec<String>,
    pub status: Option<String>,
    /// Any of these statuses (a view such as "open"); empty: any.
    pub statuses: Vec<String>,
    /// Only reports with an agent's draft waiting to be published.
    pub drafts_waiting: bool,
    pub channel_key: Option<String>,
    pub artifact_id: Option<String>,
    pub assignee: Option<AssigneeFilter>,
    /// Reports holding this label, compared as [`crate::triage::key`] does.
    pub label: Option<String>,
    /// Reports whose author id is this: the verified identity's userId, else `context.userId`
    /// (decisions §3). The author id is a column of its own, which the search index holds too, so
    /// the filter is indexed (and, like `search`, finds a report once it is indexed); an identity's
    /// email lives inside its JSON and is found through `search` instead.
    pub reporter: Option<String>,
    /// Only reports whose reporter proved who they are (a reporter's own thread: an unverified
    /// report may name any author id).
    pub verified_only: bool,
    /// Full-text search (see [`crate::search`]); `None` or blank text: no search.
    pub search: Option<String>,
    /// Only reports older than this one (keyset cursor: the last id of the previous page).
    pub before: Option<String>,
    pub limit: u32,
}

impl ReportFilter {
    /// Readies a filter of any strings for the store: a NUL character can be in no stored value
    /// (PostgreSQL refuses it in text), so an exact filter holding one matches nothing (`false`),
    /// and in search words it separates words like a space.
    pub fn sanitize(&mut self) -> bool {
        if let Some(search) = self.search.as_mut() {
            *search = search.replace('\0', " ");
        }
        let exact = [&self.status, &self.channel_key, &self.artifact_id, &self.label, &self.reporter, &self.before];
        let assignee = match &self.assignee {
            Some(AssigneeFilter::User(id)) => id.contains('\0'),
            _ => false,
        };
        let statuses = self.statuses.iter().any(|status| status.contains('\0'));
        !assignee && !statuses && !exact.iter().any(|value| value.as_deref().is_some_and(|v| v.contains('\0')))
    }
}

/// Whose reports an assignee filter keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssigneeFilter {
    /// Reports nobody is assigned to.
    Unassigned,
    /// Reports assigned to this user id.
    User(String),
}

impl AssigneeFilter {
    /// `none` is unassigned; anything else a user id.
    pub fn parse(text: &str) -> Self {
        if text == "none" { AssigneeFilter::Unassigned } else { AssigneeFilter::User(text.to_string()) }
    }
}

/// A label of a project and how many of its reports hold it (the filter menu of an inbox).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCount {
    pub label: String,
    pub count: i64,
}
