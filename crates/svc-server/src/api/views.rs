//! The REST API's response shapes and the request bodies its handlers parse (the OpenAPI
//! document shows exactly these types), camelCase as the spec
//! writes them. Times are ISO 8601.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_core::block::Block;
use svc_core::channel::{ChannelChanges, NewChannel, NewHint};
use svc_core::context::Context;
use svc_core::identity::Identity;
use svc_core::key::NewKey;
use svc_core::model::*;
use svc_core::project::ProjectChanges;
use svc_core::room::NewRoom;
use svc_core::status::Status;
use svc_core::time::{iso, iso_opt};
use svc_core::triage::{LabelChange, LabelSet};
use svc_service::triage::Triage;
use svc_store::{ListedReport, StoredJson};
use utoipa::ToSchema;

use super::extract::field;
use super::request_schemas as rules;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeView {
    pub key_id: String,
    pub project_id: String,
    /// The key's own name.
    pub name: String,
    pub project_key: String,
    pub scopes: Vec<String>,
    pub project_name: String,
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectView {
    pub id: String,
    pub name: String,
    pub slug: String,
    pub project_key: String,
    pub url_patterns: Vec<String>,
    pub default_channel_key: String,
    pub identity_secret_set: bool,
    pub allowed_origins: Vec<String>,
    /// The stored configuration with defaults filled in.
    #[schema(value_type = Object)]
    pub widget_config: Value,
    pub created_at: String,
    /// Reports older than this many days are deleted; null keeps them.
    pub retention_days: Option<i64>,
    /// Reporter sign-in: `{mode, required, oidc: {issuer, clientId, clientSecretSet} | null}`.
    #[schema(value_type = Object)]
    pub reporter_auth: Value,
}

impl From<&Project> for ProjectView {
    fn from(p: &Project) -> Self {
        ProjectView {
            id: p.id.clone(),
            name: p.name.clone(),
            slug: p.slug.clone(),
            project_key: p.project_key.clone(),
            url_patterns: p.url_patterns.clone(),
            default_channel_key: p.default_channel_key.clone(),
            identity_secret_set: p.identity_secret.is_some(),
            allowed_origins: p.allowed_origins.clone(),
            widget_config: svc_core::project::widget_config_with_defaults(&p.widget_config),
            created_at: iso(p.created_at),
            retention_days: p.retention_days,
            reporter_auth: p.reporter_auth.to_public_json(),
        }
    }
}

/// PATCH body: any of these fields; `widgetConfig` replaces the stored configuration whole.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectPatch {
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false, pattern = r"\S", max_length = 100)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::url_patterns)]
    pub url_patterns: Option<Vec<String>>,
    /// The key of a channel of the project that is not archived.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::channel_key)]
    pub default_channel_key: Option<String>,
    /// `mascot`, `shape`, `anchor`, `offsetX`, `offsetY`, `size`, `triggerVariant`.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::widget_config)]
    pub widget_config: Option<Value>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::allowed_origins)]
    pub allowed_origins: Option<Vec<String>>,
    /// Delete reports older than this many days (1 to 3650); null keeps them all.
    #[serde(default, deserialize_with = "field::nullable_whole_number")]
    #[schema(value_type = Option<i64>, nullable = true, minimum = 1, maximum = 3650)]
    pub retention_days: Option<Option<i64>>,
    /// Reporter sign-in, replaced whole (a stored OpenID Connect client secret is kept unless
    /// `oidc.clientSecret` is given, or null to clear it).
    #[serde(default, deserialize_with = "field::present")]
    pub reporter_auth: Option<ReporterAuthPatch>,
}

/// How the project's reporters sign in from the widget (docs/widget.md, "Reporter sign-in").
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReporterAuthPatch {
    /// `off` (no sign-in), `email` (a code mailed to the reporter) or `oidc` (the project's
    /// OpenID Connect provider; needs `oidc`).
    #[schema(schema_with = rules::reporter_mode)]
    pub mode: String,
    /// The widget sends nothing before the reporter signs in (else signing in may be skipped).
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub oidc: Option<OidcPatch>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OidcPatch {
    /// The provider's issuer URL (https; http only on a loopback host).
    #[schema(pattern = r"^https?://[^\s?#]+$", max_length = 2000)]
    pub issuer: String,
    #[schema(min_length = 1, max_length = 255, pattern = r"^[^\x00-\x1f\x7f]+$")]
    pub client_id: String,
    /// Absent keeps the stored secret, null clears it (a public client with PKCE).
    #[serde(default, deserialize_with = "field::nullable")]
    #[schema(value_type = Option<String>, nullable = true, min_length = 1, max_length = 500, pattern = r"^[^\x00-\x1f\x7f]+$")]
    pub client_secret: Option<Option<String>>,
}

impl TryFrom<ReporterAuthPatch> for svc_core::reporter::ReporterAuthChange {
    type Error = svc_core::Invalid;

    fn try_from(p: ReporterAuthPatch) -> Result<Self, Self::Error> {
        use svc_core::reporter::{OidcSettings, ReporterAuth, ReporterMode, SecretChange};
        let client_secret = match p.oidc.as_ref().map(|oidc| oidc.client_secret.clone()) {
            None | Some(None) => SecretChange::Keep,
            Some(Some(None)) => SecretChange::Clear,
            Some(Some(Some(secret))) => SecretChange::Set(secret),
        };
        let auth = ReporterAuth {
            mode: ReporterMode::parse(&p.mode)?,
            required: p.required,
            oidc: p.oidc.map(|oidc| OidcSettings {
                issuer: oidc.issuer,
                client_id: oidc.client_id,
                client_secret: None,
            }),
        };
        Ok(svc_core::reporter::ReporterAuthChange { auth, client_secret })
    }
}

impl TryFrom<ProjectPatch> for ProjectChanges {
    type Error = svc_core::Invalid;

    fn try_from(p: ProjectPatch) -> Result<Self, Self::Error> {
        ProjectChanges::parse(ProjectChanges {
            name: p.name,
            url_patterns: p.url_patterns,
            default_channel_key: p.default_channel_key,
            widget_config: p.widget_config,
            allowed_origins: p.allowed_origins,
            retention_days: p.retention_days,
            reporter_auth: p.reporter_auth.map(TryInto::try_into).transpose()?,
        })
    }
}

#[derive(Serialize, ToSchema, Clone)]
pub struct AuthorView {
    /// `reporter` (ingest), `agent` (a key), `user` (a person in the dashboard), `cli` or `system`.
    pub kind: String,
    pub id: Option<String>,
    pub label: Option<String>,
}

impl From<&Author> for AuthorView {
    fn from(a: &Author) -> Self {
        AuthorView { kind: a.kind.as_str().to_string(), id: a.id.clone(), label: a.label.clone() }
    }
}

/// One event of the feed: what happened to a report or a room, by whom, when.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    /// Monotonic per database, in commit order: pass the last one read as `after`.
    pub id: i64,
    #[serde(rename = "type")]
    #[schema(schema_with = rules::event_type)]
    pub kind: String,
    pub project_id: String,
    /// The report it is about (all types but `room.created`).
    pub report_id: Option<String>,
    /// The type's own fields: `report.created` {channelKey}; `report.status_changed` {from, to};
    /// `report.assigned` {from, to} (user ids or null); `report.labels_changed` {added, removed,
    /// labels}; `comment.published` {commentId, wasDraft}; `report.confirmed` {works};
    /// `room.created` {artifactId}; `report.deleted` {}.
    #[schema(value_type = Object)]
    pub data: Value,
    /// Who did it: a person (`user`), an agent (`agent`), the reporter (`reporter`), the command
    /// line (`cli`) or Svc itself (`system`).
    pub by: AuthorView,
    pub at: String,
}

impl From<&svc_core::event::Event> for EventView {
    fn from(event: &svc_core::event::Event) -> Self {
        let data = match event.kind.data() {
            Value::Null => Value::Object(Default::default()),
            data => data,
        };
        EventView {
            id: event.id,
            kind: event.kind.type_name().to_string(),
            project_id: event.project_id.clone(),
            report_id: event.report_id.clone(),
            data,
            by: (&event.by).into(),
            at: iso(event.at),
        }
    }
}

/// A page of the event feed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    pub items: Vec<EventView>,
    /// The cursor for the next request: the last id of this page, or the `after` given when the
    /// page is empty (nothing new yet: ask again later with the same value).
    pub next_after: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusChangeView {
    pub from: String,
    pub to: String,
    pub by: AuthorView,
    pub at: String,
}

impl From<&StatusChange> for StatusChangeView {
    fn from(c: &StatusChange) -> Self {
        StatusChangeView {
            from: c.from_status.as_str().into(),
            to: c.to_status.as_str().into(),
            by: (&c.by).into(),
            at: iso(c.at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportView {
    pub id: String,
    pub short_id: String,
    pub project_id: String,
    pub channel_key: String,
    pub status: String,
    pub title: String,
    #[schema(value_type = Vec<Object>)]
    pub blocks: Vec<Block>,
    #[schema(value_type = Object)]
    pub context: Context,
    #[schema(value_type = Option<Object>)]
    pub identity: Option<Identity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_error: Option<String>,
    pub author: AuthorView,
    pub artifact_id: Option<String>,
    pub url: Option<String>,
    /// The user id of the assignee; null when unassigned.
    pub assignee: Option<String>,
    /// The report's labels, in the order they were added.
    pub labels: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    /// On `GET .../feedback/:reportId` only: every status change, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_history: Option<Vec<StatusChangeView>>,
    /// On `GET .../feedback/:reportId` only: the report's issues in trackers (`[]` when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<IssueLinkView>>,
    /// On `GET .../feedback/:reportId` only: the report this one duplicates (null when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, nullable = true)]
    pub duplicate_of: Option<Option<String>>,
    /// On `GET .../feedback/:reportId` only: the reports marked as duplicates of this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<Vec<String>>,
}

impl From<&Report> for ReportView {
    fn from(r: &Report) -> Self {
        ReportView {
            id: r.id.clone(),
            short_id: svc_core::ids::short_id(&r.id).to_string(),
            project_id: r.project_id.clone(),
            channel_key: r.channel_key.clone(),
            status: r.status.as_str().into(),
            title: r.title.clone(),
            blocks: r.blocks.clone(),
            context: r.context.clone(),
            identity: r.identity.clone(),
            identity_error: r.identity_error.clone(),
            author: (&r.author).into(),
            artifact_id: r.artifact_id.clone(),
            url: r.url.clone(),
            assignee: r.assignee.clone(),
            labels: r.labels.clone(),
            created_at: iso(r.created_at),
            updated_at: iso(r.updated_at),
            status_history: None,
            links: None,
            duplicate_of: None,
            duplicates: None,
        }
    }
}

/// The REST forms webhook payloads carry.
pub struct RestForms;

impl svc_service::webhooks::PayloadViews for RestForms {
    fn report(&self, report: &Report) -> Value {
        serde_json::to_value(ReportView::from(report)).unwrap_or_default()
    }

    fn comment(&self, comment: &Comment) -> Value {
        serde_json::to_value(CommentView::from(comment)).unwrap_or_default()
    }
}

/// [`ReportView`] of a listed report, borrowing it: the same JSON, field for field, with the
/// stored JSON text of blocks, context and identity written out as it is (listings skip parsing
/// and re-serializing them). Documented in the API as [`ReportPage`].
pub struct ListedReportView<'a> {
    pub id: &'a str,
    pub short_id: &'a str,
    pub project_id: &'a str,
    pub channel_key: &'a str,
    pub status: &'a str,
    pub title: &'a str,
    pub blocks: &'a StoredJson,
    pub context: &'a StoredJson,
    pub identity: Option<&'a StoredJson>,
    pub identity_error: Option<&'a str>,
    pub author: AuthorRef<'a>,
    pub artifact_id: Option<&'a str>,
    pub url: Option<&'a str>,
    pub assignee: Option<&'a str>,
    pub labels: &'a [String],
    pub created_at: String,
    pub updated_at: String,
}

/// [`AuthorView`], borrowed.
pub struct AuthorRef<'a> {
    pub kind: &'a str,
    pub id: Option<&'a str>,
    pub label: Option<&'a str>,
}

impl<'a> From<&'a ListedReport> for ListedReportView<'a> {
    fn from(r: &'a ListedReport) -> Self {
        ListedReportView {
            id: &r.id,
            short_id: svc_core::ids::short_id(&r.id),
            project_id: &r.project_id,
            channel_key: &r.channel_key,
            status: r.status.as_str(),
            title: &r.title,
            blocks: &r.blocks,
            context: &r.context,
            identity: r.identity.as_ref(),
            identity_error: r.identity_error.as_deref(),
            author: AuthorRef {
                kind: r.author.kind.as_str(),
                id: r.author.id.as_deref(),
                label: r.author.label.as_deref(),
            },
            artifact_id: r.artifact_id.as_deref(),
            url: r.url.as_deref(),
            assignee: r.assignee.as_deref(),
            labels: &r.labels,
            created_at: iso(r.created_at),
            updated_at: iso(r.updated_at),
        }
    }
}

/// A JSON object written field by field: `serde_json` writes each value, and stored JSON text goes
/// in as it is (serde_json has no public way to write text it has not checked, and checking every
/// report's blocks and context again was a tenth of a listing's CPU).
struct ObjectWriter<'w> {
    out: &'w mut Vec<u8>,
    first: bool,
}

impl<'w> ObjectWriter<'w> {
    fn start(out: &'w mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjectWriter { out, first: true }
    }

    /// `"name":`; names are the view's own camelCase field names, which need no escaping.
    fn name(&mut self, name: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn string(&mut self, name: &str, value: &str) {
        self.name(name);
        write_json_string(self.out, value);
    }

    fn optional_string(&mut self, name: &str, value: Option<&str>) {
        self.name(name);
        match value {
            Some(value) => write_json_string(self.out, value),
            None => self.out.extend_from_slice(b"null"),
        }
    }

    fn stored(&mut self, name: &str, value: Option<&StoredJson>) {
        self.name(name);
        self.out.extend_from_slice(value.map_or("null", StoredJson::get).as_bytes());
    }

    fn end(self) {
        self.out.push(b'}');
    }
}

/// `value` as a JSON string, as `serde_json` writes it. Most strings of a report (ids, keys, times,
/// most titles and addresses) have nothing to escape: those are found with one pass that the
/// compiler vectorizes and copied whole, where `serde_json` walks them byte by byte (a sixth of
/// a listing's instructions went there).
fn write_json_string(out: &mut Vec<u8>, value: &str) {
    let plain = value.bytes().fold(true, |plain, byte| plain & (byte >= 0x20) & (byte != b'"') & (byte != b'\\'));
    if plain {
        out.reserve(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(out, value).expect("a string always serializes");
    }
}

impl ListedReportView<'_> {
    /// The report as [`ReportView`]'s JSON, its fields in that order, appended to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::start(out);
        object.string("id", self.id);
        object.string("shortId", self.short_id);
        object.string("projectId", self.project_id);
        object.string("channelKey", self.channel_key);
        object.string("status", self.status);
        object.string("title", self.title);
        object.stored("blocks", Some(self.blocks));
        object.stored("context", Some(self.context));
        object.stored("identity", self.identity);
        if let Some(error) = self.identity_error {
            object.string("identityError", error);
        }
        object.name("author");
        let mut author = ObjectWriter::start(object.out);
        author.string("kind", self.author.kind);
        author.optional_string("id", self.author.id);
        author.optional_string("label", self.author.label);
        author.end();
        object.optional_string("artifactId", self.artifact_id);
        object.optional_string("url", self.url);
        object.optional_string("assignee", self.assignee);
        object.name("labels");
        object.out.push(b'[');
        for (n, label) in self.labels.iter().enumerate() {
            if n > 0 {
                object.out.push(b',');
            }
            write_json_string(object.out, label);
        }
        object.out.push(b']');
        object.string("createdAt", &self.created_at);
        object.string("updatedAt", &self.updated_at);
        object.end();
    }
}

/// [`ReportPage`] of listed reports.
pub struct ListedPage<'a> {
    pub items: Vec<ListedReportView<'a>>,
    pub next_cursor: Option<&'a str>,
}

impl ListedPage<'_> {
    /// The page as [`ReportPage`]'s JSON, in a buffer sized for it from the start (a full page is
    /// about 150 KB; growing a small buffer to that size copied it many times over).
    pub fn to_json(&self) -> Vec<u8> {
        let stored: usize = self
            .items
            .iter()
            .map(|item| item.blocks.get().len() + item.context.get().len() + item.identity.map_or(4, |i| i.get().len()))
            .sum();
        let mut out = Vec::with_capacity(stored + self.items.len() * 640 + 64);
        out.extend_from_slice(b"{\"items\":[");
        for (n, item) in self.items.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            item.write_json(&mut out);
        }
        out.extend_from_slice(b"],\"nextCursor\":");
        serde_json::to_writer(&mut out, &self.next_cursor).expect("a cursor always serializes");
        out.push(b'}');
        out
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportPage {
    pub items: Vec<ReportView>,
    /// Pass as `before` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// PATCH body of a report: any of `status`, `labels`, `assignee`, `duplicateOf`, as one change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportPatch {
    /// One of `new`, `triaged`, `in-progress`, `fixed`, `verified`, `canceled`.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::status)]
    pub status: Option<Status>,
    /// The report's labels, replacing those it has (`[]` removes them all).
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::labels)]
    pub labels: Option<Vec<String>>,
    /// The user id of a member of the project's organization to assign the report to; null
    /// unassigns it.
    #[serde(default, deserialize_with = "field::nullable")]
    #[schema(value_type = Option<String>, nullable = true)]
    pub assignee: Option<Option<String>>,
    /// The id of another report of the project this one duplicates: the report is canceled
    /// (unless `status` says otherwise) and its reporter follows the original. null takes the
    /// mark away.
    #[serde(default, rename = "duplicateOf", deserialize_with = "field::nullable")]
    #[schema(value_type = Option<String>, nullable = true)]
    pub duplicate_of: Option<Option<String>>,
}

impl ReportPatch {
    /// The one triage operation the body asks for, checked (labels replaced when given).
    pub fn triage(self) -> Result<Triage, svc_core::Invalid> {
        let body = self;
        if body.status.is_none() && body.labels.is_none() && body.assignee.is_none() && body.duplicate_of.is_none() {
            return Err(svc_core::Invalid::new("give any of status, labels, assignee, duplicateOf"));
        }
        Ok(Triage {
            status: body.status,
            labels: body.labels.as_deref().map(LabelSet::parse).transpose()?.map(LabelChange::Replace),
            assignee: body.assignee,
        })
    }
}

/// The answer to a report PATCH.
#[derive(Serialize, ToSchema)]
pub struct ReportPatchView {
    pub id: String,
    /// The report's status (changed or not).
    pub status: String,
    /// The report's labels, when the PATCH set them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// The report's assignee (a user id, or null), when the PATCH set it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, nullable = true)]
    pub assignee: Option<Option<String>>,
    /// The original the report duplicates (or null), when the PATCH set it.
    #[serde(rename = "duplicateOf", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, nullable = true)]
    pub duplicate_of: Option<Option<String>>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentView {
    pub id: String,
    pub report_id: String,
    /// `agent:<keyId>` for agents, `user:<userId>` for people, the reporter's id for reporters.
    pub author: Option<String>,
    pub author_label: Option<String>,
    /// `agent`, `user` or `reporter`.
    pub author_kind: String,
    pub text: String,
    pub kind: Option<String>,
    pub draft: bool,
    pub created_at: String,
    pub published_at: Option<String>,
}

impl From<&Comment> for CommentView {
    fn from(c: &Comment) -> Self {
        CommentView {
            id: c.id.clone(),
            report_id: c.report_id.clone(),
            author: c.author.id.clone(),
            author_label: c.author.label.clone(),
            author_kind: c.author.kind.as_str().into(),
            text: c.text.clone(),
            kind: c.kind.clone(),
            draft: c.draft,
            created_at: iso(c.created_at),
            published_at: iso_opt(c.published_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct CommentList {
    pub items: Vec<CommentView>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoomListItem {
    pub id: Option<String>,
    pub artifact_id: String,
    pub title: String,
    #[schema(value_type = Option<Object>)]
    pub meta: Option<Value>,
    pub archived: bool,
    pub last_activity: String,
    pub count: i64,
}

impl From<&RoomSummary> for RoomListItem {
    fn from(r: &RoomSummary) -> Self {
        RoomListItem {
            id: r.id.clone(),
            artifact_id: r.artifact_id.clone(),
            title: r.title.clone(),
            meta: r.meta.clone(),
            archived: r.archived,
            last_activity: iso(r.last_activity),
            count: r.count,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct RoomList {
    pub items: Vec<RoomListItem>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoomView {
    pub id: String,
    pub artifact_id: String,
    pub title: String,
    #[schema(value_type = Option<Object>)]
    pub meta: Option<Value>,
    pub archived: bool,
    /// On create/resume only: whether this call created the room.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
}

impl RoomView {
    pub fn new(room: &Room, created: Option<bool>) -> Self {
        RoomView {
            id: room.id.clone(),
            artifact_id: room.artifact_id.clone(),
            title: room.title.clone(),
            meta: room.meta.clone(),
            archived: room.archived,
            created,
        }
    }
}

/// Room create body; `meta` holds `tool`, `source`, `goal`, `constraints`, `url`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomCreate {
    #[schema(min_length = 1, max_length = 200)]
    pub artifact_id: String,
    /// Defaults to `artifactId`; null keeps the current title.
    #[schema(pattern = r"\S", max_length = 200)]
    pub title: Option<String>,
    /// Null clears it; an object replaces it whole.
    #[serde(default, deserialize_with = "field::nullable")]
    #[schema(schema_with = rules::room_meta)]
    pub meta: Option<Option<Value>>,
    /// Default false.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub archived: Option<bool>,
}

impl TryFrom<RoomCreate> for NewRoom {
    type Error = svc_core::Invalid;

    fn try_from(body: RoomCreate) -> Result<Self, Self::Error> {
        let changes = RoomChanges::parse(body.title, body.meta.map(|m| m.unwrap_or(Value::Null)), body.archived)?;
        NewRoom::parse(body.artifact_id, changes)
    }
}

/// Room update body: any of the fields.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomPatch {
    /// Null keeps the current title.
    #[schema(pattern = r"\S", max_length = 200)]
    pub title: Option<String>,
    /// Null clears it; an object replaces it whole.
    #[serde(default, deserialize_with = "field::nullable")]
    #[schema(schema_with = rules::room_meta)]
    pub meta: Option<Option<Value>>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub archived: Option<bool>,
}

impl TryFrom<RoomPatch> for RoomChanges {
    type Error = svc_core::Invalid;

    fn try_from(body: RoomPatch) -> Result<Self, Self::Error> {
        RoomChanges::parse(body.title, body.meta.map(|m| m.unwrap_or(Value::Null)), body.archived)
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    pub id: String,
    pub key: String,
    pub name: String,
    pub color: String,
    pub mascot: String,
    pub base_weight: f64,
    pub archived: bool,
    /// `[{conditions: [{field, op, value}], weight, note}]`
    #[schema(value_type = Vec<Object>)]
    pub matchers: Value,
}

impl From<&Channel> for ChannelView {
    fn from(c: &Channel) -> Self {
        ChannelView {
            id: c.id.clone(),
            key: c.key.clone(),
            name: c.name.clone(),
            color: c.color.clone(),
            mascot: c.mascot.clone(),
            base_weight: c.base_weight,
            archived: c.archived,
            matchers: c.matchers.clone(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct ChannelList {
    pub items: Vec<ChannelView>,
}

/// Channel create body.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelCreate {
    /// `^[a-z0-9][a-z0-9_-]{0,39}$`, unique in the project.
    #[schema(schema_with = rules::channel_key)]
    pub key: String,
    #[schema(pattern = r"\S", max_length = 80)]
    pub name: String,
    /// `#rrggbb`
    #[schema(schema_with = rules::color)]
    pub color: String,
    #[schema(schema_with = rules::mascot)]
    pub mascot: String,
    /// Default 0.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub base_weight: Option<f64>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::matchers)]
    pub matchers: Option<Value>,
}

impl TryFrom<ChannelCreate> for NewChannel {
    type Error = svc_core::Invalid;

    fn try_from(b: ChannelCreate) -> Result<Self, Self::Error> {
        NewChannel::parse(b.key, b.name, b.color, b.mascot, b.base_weight, b.matchers)
    }
}

/// Channel update body: any of these fields (`key` cannot change).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelPatch {
    /// The channel's own key, so a client may send a channel back as it read it; another value
    /// is refused.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::channel_key)]
    pub key: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false, pattern = r"\S", max_length = 80)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::color)]
    pub color: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::mascot)]
    pub mascot: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub base_weight: Option<f64>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::matchers)]
    pub matchers: Option<Value>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub archived: Option<bool>,
}

impl ChannelPatch {
    /// The changes to the channel `key` (the path's).
    pub fn changes(self, key: &str) -> Result<ChannelChanges, svc_core::Invalid> {
        let b = self;
        if b.key.as_deref().is_some_and(|k| k != key) {
            return Err(svc_core::Invalid::new("key cannot change"));
        }
        ChannelChanges::parse(ChannelChanges {
            name: b.name,
            color: b.color,
            mascot: b.mascot,
            base_weight: b.base_weight,
            matchers: b.matchers,
            archived: b.archived,
        })
    }
}

/// Hint body: `weight` is `suggest`, `max` or a number.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HintCreate {
    /// The key of a channel of the project that is not archived.
    #[schema(schema_with = rules::channel_key)]
    pub channel_key: String,
    #[schema(schema_with = rules::hint_weight)]
    pub weight: Value,
    #[schema(min_length = 1, max_length = 200)]
    pub user_id: Option<String>,
}

impl TryFrom<HintCreate> for NewHint {
    type Error = svc_core::Invalid;

    fn try_from(b: HintCreate) -> Result<Self, Self::Error> {
        NewHint::parse(b.channel_key, &b.weight, b.user_id)
    }
}

#[derive(Serialize, ToSchema)]
pub struct OkView {
    pub ok: bool,
}

/// Key mint body.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyCreate {
    #[schema(pattern = r"\S", max_length = 100)]
    pub name: String,
    /// A non-empty subset of the project's scopes, without `*` and `apikey:write`.
    #[schema(schema_with = rules::mintable_scopes)]
    pub scopes: Vec<String>,
    /// 60 to 31,536,000; absent or null: no expiry.
    #[serde(default, deserialize_with = "field::whole_number")]
    #[schema(minimum = 60, maximum = 31_536_000)]
    pub expires_in_seconds: Option<i64>,
}

impl TryFrom<KeyCreate> for NewKey {
    type Error = svc_core::Invalid;

    fn try_from(b: KeyCreate) -> Result<Self, Self::Error> {
        NewKey::mintable(b.name, b.scopes, b.expires_in_seconds)
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MintedKeyView {
    pub id: String,
    /// The plaintext secret, returned this once.
    pub key: String,
    pub name: String,
    pub scopes: Vec<String>,
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokedKeyView {
    pub id: String,
    pub revoked_at: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagView {
    pub key: String,
    pub enabled: bool,
    pub updated_at: String,
}

impl From<&Flag> for FlagView {
    fn from(f: &Flag) -> Self {
        FlagView { key: f.key.clone(), enabled: f.enabled, updated_at: iso(f.updated_at) }
    }
}

#[derive(Serialize, ToSchema)]
pub struct FlagList {
    pub items: Vec<FlagView>,
}

/// Flag body.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FlagSet {
    pub enabled: bool,
}

#[cfg(test)]
mod listed_view_tests {
    use super::*;
    use serde_json::json;

    fn report(n: i64, identity: Option<Value>) -> Report {
        let identity = identity.map(|value| serde_json::from_value(value).unwrap());
        Report {
            id: format!("01a1fe145ff9009e2c4d27c{n}"),
            project_id: "01a1fe145ff9009e2c4d27c8".into(),
            channel_key: "bug".into(),
            status: "new".parse().unwrap(),
            // Escapes of every kind, and a title with none (written without `serde_json`).
            title: match n {
                1 => "Checkout \"fails\" \u{e9}".into(),
                2 => "tab\there \u{1f}\u{7f} back\\slash".into(),
                _ => "Plain title \u{e9} \u{1f600} \u{7f} <b>&amp;</b>".into(),
            },
            blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": "line\nnext \u{1f600} \\ \"q\" \u{1}"},
                           {"type": "pinpoint", "selector": "#a > b", "target": {"css": "#a > b"}, "point": {"x": 0.42, "y": 1e-7}, "n": -0.0}])).unwrap(),
            context: serde_json::from_value(serde_json::json!({"url": "https://x.example/?a=1&b=<2>", "viewport": {"width": 1440, "height": 900},
                            "big": 18446744073709551615u64, "neg": -12, "f": 1.5e300, "flags": [], "z": null})).unwrap(),
            identity,
            identity_error: (n == 2).then(|| "expired".to_string()),
            author: Author {
                kind: svc_core::model::AuthorKind::Reporter,
                id: Some("u-1".into()),
                label: (n == 3).then(|| "Ann \"A.\" \\ \n".to_string()),
            },
            artifact_id: (n == 1).then(|| "doc".to_string()),
            url: Some("https://x.example/".into()),
            created_at: 1_795_000_000_000 + n,
            updated_at: 1_795_000_000_500 + n,
            assignee: (n == 1).then(|| "01a1fe145ff9009e2c4d27ca".to_string()),
            labels: if n == 2 { vec!["Bug \"quoted\"".into(), "é".into()] } else { Vec::new() },
        }
    }

    #[test]
    fn a_listed_page_is_the_same_json_as_a_report_page() {
        let reports = vec![
            report(1, None),
            report(2, Some(json!({"userId": "u", "email": "a@b.c", "verified": true}))),
            report(3, Some(json!({"userId": "r", "verified": true, "method": "email", "extra": 1}))),
        ];
        for next_cursor in [None, Some("01a1fe145ff9009e2c4d27c3".to_string())] {
            let page =
                ReportPage { items: reports.iter().map(ReportView::from).collect(), next_cursor: next_cursor.clone() };
            let listed: Vec<ListedReport> = reports.iter().cloned().map(ListedReport::from).collect();
            let view = ListedPage {
                items: listed.iter().map(ListedReportView::from).collect(),
                next_cursor: next_cursor.as_deref(),
            };
            assert_eq!(String::from_utf8(view.to_json()).unwrap(), serde_json::to_string(&page).unwrap());
        }
    }
}

/// A webhook endpoint (its signing secret is shown only when it is made or rotated).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    /// The event types sent to it.
    #[schema(schema_with = rules::event_types)]
    pub events: Vec<String>,
    pub description: Option<String>,
    /// `standard` (signed `{type, timestamp, data}`), `slack` or `discord` (a chat message).
    #[schema(schema_with = rules::webhook_format)]
    pub format: String,
    pub enabled: bool,
    /// Why Svc disabled it (every delivery failed for 24 hours); null when enabled or turned off
    /// by a person.
    pub disabled_reason: Option<String>,
    /// When its current run of failed deliveries began; null when the last one succeeded.
    pub failing_since: Option<String>,
    /// Until when the secret before the last rotation still signs beside the current one.
    pub previous_secret_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&svc_core::webhook::Webhook> for WebhookView {
    fn from(hook: &svc_core::webhook::Webhook) -> Self {
        let now = svc_core::time::now_ms();
        WebhookView {
            id: hook.id.clone(),
            url: hook.url.clone(),
            events: hook.events.clone(),
            description: hook.description.clone(),
            format: hook.format.as_str().into(),
            enabled: hook.enabled,
            disabled_reason: hook.disabled_reason.clone(),
            failing_since: iso_opt(hook.failing_since),
            previous_secret_expires_at: iso_opt(hook.previous_until.filter(|until| *until > now)),
            created_at: iso(hook.created_at),
            updated_at: iso(hook.updated_at),
        }
    }
}

/// A webhook just made or whose secret was just rotated, with its signing secret: the only time
/// it is shown.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookWithSecretView {
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// `whsec_...`: verify deliveries with it (Standard Webhooks). Chat formats are not signed.
    pub secret: String,
}

impl From<&svc_core::webhook::Webhook> for WebhookWithSecretView {
    fn from(hook: &svc_core::webhook::Webhook) -> Self {
        WebhookWithSecretView { webhook: hook.into(), secret: hook.secret.expose().to_string() }
    }
}

#[derive(Serialize, ToSchema)]
pub struct WebhookList {
    pub items: Vec<WebhookView>,
}

/// Webhook create body.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookCreate {
    /// Where deliveries are POSTed: `https://` (or `http://`), at most 2,000 characters. Private,
    /// loopback and link-local addresses are refused unless the operator allows them.
    #[schema(pattern = r"^https?://[^\s/?#@]+([/?#]\S*)?$", max_length = 2000)]
    pub url: String,
    /// The event types to send. Required for `standard`; `slack` and `discord` default to
    /// `report.created`, `report.confirmed` and the reporter's `comment.published`.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::event_types)]
    pub events: Option<Vec<String>>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false, max_length = 200)]
    pub description: Option<String>,
    /// Default `standard`.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::webhook_format)]
    pub format: Option<String>,
}

impl From<WebhookCreate> for svc_service::webhooks::NewWebhook {
    fn from(body: WebhookCreate) -> Self {
        svc_service::webhooks::NewWebhook {
            url: body.url,
            events: body.events,
            description: body.description,
            format: body.format,
        }
    }
}

/// Webhook update body: any of these fields.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookPatch {
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false, pattern = r"^https?://[^\s/?#@]+([/?#]\S*)?$", max_length = 2000)]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "field::present")]
    #[schema(schema_with = rules::event_types)]
    pub events: Option<Vec<String>>,
    /// `true` turns it on again (its waiting deliveries go out); `false` stops deliveries to it.
    #[serde(default, deserialize_with = "field::present")]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// null clears it.
    #[serde(default, deserialize_with = "field::nullable")]
    #[schema(value_type = Option<String>, nullable = true, max_length = 200)]
    pub description: Option<Option<String>>,
}

impl From<WebhookPatch> for svc_service::webhooks::WebhookChanges {
    fn from(body: WebhookPatch) -> Self {
        svc_service::webhooks::WebhookChanges {
            url: body.url,
            events: body.events,
            enabled: body.enabled,
            description: body.description,
        }
    }
}

/// One attempt at a delivery.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookAttemptView {
    pub at: String,
    /// The endpoint's HTTP status; null when it did not answer (refused, timed out, unreachable).
    pub response_code: Option<i64>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// One event sent (or to be sent) to an endpoint, with every attempt at it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryView {
    pub id: String,
    /// The event type (`webhook.test` for a test event).
    pub event: String,
    /// The event feed's id (null for a test event).
    pub event_id: Option<i64>,
    /// The `webhook-id` header: the same on every attempt.
    pub message_id: String,
    /// `pending` (waiting for an attempt or a retry), `delivered` or `failed` (24 hours of
    /// retries are over).
    #[schema(schema_with = rules::delivery_status)]
    pub status: String,
    /// The last attempt's HTTP status.
    pub response_code: Option<i64>,
    pub error: Option<String>,
    /// How long the last attempt took.
    pub duration_ms: Option<i64>,
    /// When the last attempt was made.
    pub attempted_at: Option<String>,
    /// When it will be tried again (pending deliveries only).
    pub next_retry_at: Option<String>,
    pub created_at: String,
    pub delivered_at: Option<String>,
    pub attempts: Vec<WebhookAttemptView>,
}

impl From<&svc_service::webhooks::LoggedDelivery> for WebhookDeliveryView {
    fn from(logged: &svc_service::webhooks::LoggedDelivery) -> Self {
        let d = &logged.delivery;
        let pending = d.state == svc_core::webhook::DeliveryState::Pending;
        WebhookDeliveryView {
            id: d.id.clone(),
            event: d.event_type.clone(),
            event_id: d.event_id,
            message_id: d.message_id.clone(),
            status: d.state.as_str().into(),
            response_code: d.last_status,
            error: d.last_error.clone(),
            duration_ms: d.last_duration_ms,
            attempted_at: iso_opt(d.last_attempt_at),
            next_retry_at: pending.then(|| iso(d.next_attempt_at)),
            created_at: iso(d.created_at),
            delivered_at: iso_opt(d.delivered_at),
            attempts: logged
                .attempts
                .iter()
                .map(|a| WebhookAttemptView {
                    at: iso(a.at),
                    response_code: a.status,
                    error: a.error.clone(),
                    duration_ms: a.duration_ms,
                })
                .collect(),
        }
    }
}

/// A page of an endpoint's deliveries, newest first.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryPage {
    pub items: Vec<WebhookDeliveryView>,
    /// Pass as `before` for the next (older) page; null on the last page.
    pub next_before: Option<String>,
}

/// A report's issue in a tracker.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssueLinkView {
    /// `github`.
    pub tracker: String,
    /// `owner/name`.
    pub repository: String,
    pub number: i64,
    /// `owner/name#123`.
    pub reference: String,
    /// The issue's page.
    pub url: String,
    pub created_at: String,
}

impl From<&svc_core::tracker::IssueLink> for IssueLinkView {
    fn from(link: &svc_core::tracker::IssueLink) -> Self {
        IssueLinkView {
            tracker: link.tracker.as_str().into(),
            repository: link.repository.clone(),
            number: link.number,
            reference: link.reference(),
            url: link.url.clone(),
            created_at: iso(link.created_at),
        }
    }
}

/// What "Create GitHub issue" did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuePushView {
    pub link: IssueLinkView,
    /// `false`: the report had its issue already (it is returned, not made again).
    pub created: bool,
}

/// A channel rule: every new report in the channel becomes an issue, with these labels.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelRuleView {
    pub channel_key: String,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A project's GitHub connection (never its token, private key or webhook secret).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GithubConnectionView {
    pub repository: String,
    /// `https://api.github.com`, or a GitHub Enterprise Server's `https://<host>/api/v3`.
    pub api_url: String,
    /// `token` (a fine-grained personal access token) or `app` (a GitHub App installation).
    pub auth: String,
    pub app_id: Option<String>,
    pub installation_id: Option<i64>,
    /// Where GitHub sends its deliveries: the repository's (or the app's) webhook URL, with the
    /// events Issues and Issue comments.
    pub webhook_url: String,
    /// The status a report takes when its issue is closed as completed.
    pub on_closed_completed: String,
    /// ... closed as not planned (or as a duplicate).
    pub on_closed_not_planned: String,
    /// ... reopened (an open status).
    pub on_reopened: String,
    /// Svc's status changes close and reopen the issue.
    pub send_status: bool,
    /// Comments published in Svc are posted on the issue.
    pub send_comments: bool,
    /// Comments on the issue are mirrored into the report's thread (as GitHub's person).
    pub mirror_comments: bool,
    /// The reporter's email is written in new issues.
    pub include_reporter_email: bool,
    pub rules: Vec<ChannelRuleView>,
    /// The last change Svc could not send to GitHub, and when.
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Only in the answer that made it: the webhook secret Svc chose (enter it in GitHub's
    /// webhook settings). Shown this once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

impl GithubConnectionView {
    pub fn new(connection: &svc_core::tracker::TrackerConnection, webhook_url: String) -> Self {
        let settings = &connection.settings;
        GithubConnectionView {
            repository: settings.repository.clone(),
            api_url: settings.api_url.clone(),
            auth: settings.auth.as_str().into(),
            app_id: settings.app_id.clone(),
            installation_id: settings.installation_id,
            webhook_url,
            on_closed_completed: settings.on_closed_completed.as_str().into(),
            on_closed_not_planned: settings.on_closed_not_planned.as_str().into(),
            on_reopened: settings.on_reopened.as_str().into(),
            send_status: settings.send_status,
            send_comments: settings.send_comments,
            mirror_comments: settings.mirror_comments,
            include_reporter_email: settings.include_reporter_email,
            rules: settings
                .rules
                .iter()
                .map(|rule| ChannelRuleView { channel_key: rule.channel_key.clone(), labels: rule.labels.clone() })
                .collect(),
            last_error: connection.last_error.clone(),
            last_error_at: iso_opt(connection.last_error_at),
            created_at: iso(connection.created_at),
            updated_at: iso(connection.updated_at),
            webhook_secret: None,
        }
    }
}

/// Connects a GitHub repository, or changes the connection. Secrets left out keep the stored
/// ones; every other field left out keeps its value (or its default on a new connection).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GithubConnectionInput {
    /// `owner/name`.
    #[schema(pattern = r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")]
    pub repository: String,
    /// Default `https://api.github.com`; a GitHub Enterprise Server's `https://<host>/api/v3`.
    #[serde(default)]
    #[schema(pattern = r"^https?://[^\s/?#@]+(/[^\s?#]*)?$", max_length = 2000)]
    pub api_url: Option<String>,
    /// `token` (default) or `app`.
    #[serde(default)]
    #[schema(pattern = "^(token|app)$")]
    pub auth: Option<String>,
    /// A fine-grained personal access token with Issues: read and write on the repository.
    #[serde(default)]
    #[schema(pattern = r"^[!-~]{1,255}$")]
    pub token: Option<String>,
    /// The GitHub App's id.
    #[serde(default)]
    #[schema(pattern = r"^[A-Za-z0-9.]{1,64}$")]
    pub app_id: Option<String>,
    #[serde(default)]
    #[schema(minimum = 1)]
    pub installation_id: Option<i64>,
    /// The GitHub App's private key (PEM).
    #[serde(default)]
    pub private_key: Option<String>,
    /// The secret GitHub signs deliveries with (16 to 255 characters); Svc makes one when a new
    /// connection has none (returned once as `webhookSecret`).
    #[serde(default)]
    #[schema(pattern = r"^[!-~]{16,255}$")]
    pub webhook_secret: Option<String>,
    #[serde(default)]
    #[schema(pattern = "^(new|triaged|in-progress|fixed|verified|canceled)$")]
    pub on_closed_completed: Option<String>,
    #[serde(default)]
    #[schema(pattern = "^(new|triaged|in-progress|fixed|verified|canceled)$")]
    pub on_closed_not_planned: Option<String>,
    /// An open status: `new`, `triaged` or `in-progress`.
    #[serde(default)]
    #[schema(pattern = "^(new|triaged|in-progress)$")]
    pub on_reopened: Option<String>,
    #[serde(default)]
    pub send_status: Option<bool>,
    #[serde(default)]
    pub send_comments: Option<bool>,
    #[serde(default)]
    pub mirror_comments: Option<bool>,
    #[serde(default)]
    pub include_reporter_email: Option<bool>,
    #[serde(default)]
    #[schema(max_items = 20)]
    pub rules: Option<Vec<ChannelRuleView>>,
}

impl TryFrom<GithubConnectionInput> for svc_service::trackers::ConnectionInput {
    type Error = svc_core::Invalid;

    fn try_from(body: GithubConnectionInput) -> Result<Self, Self::Error> {
        let status = |name: &str, text: Option<String>| -> Result<Option<Status>, svc_core::Invalid> {
            text.map(|text| {
                text.parse::<Status>().map_err(|_| svc_core::Invalid::new(format!("{name}: {}", Status::expected())))
            })
            .transpose()
        };
        Ok(svc_service::trackers::ConnectionInput {
            repository: body.repository,
            api_url: body.api_url,
            auth: body.auth,
            token: body.token,
            app_id: body.app_id,
            installation_id: body.installation_id,
            private_key: body.private_key,
            webhook_secret: body.webhook_secret,
            on_closed_completed: status("onClosedCompleted", body.on_closed_completed)?,
            on_closed_not_planned: status("onClosedNotPlanned", body.on_closed_not_planned)?,
            on_reopened: status("onReopened", body.on_reopened)?,
            send_status: body.send_status,
            send_comments: body.send_comments,
            mirror_comments: body.mirror_comments,
            include_reporter_email: body.include_reporter_email,
            rules: body.rules.map(|rules| {
                rules
                    .into_iter()
                    .map(|rule| svc_core::tracker::ChannelRule { channel_key: rule.channel_key, labels: rule.labels })
                    .collect()
            }),
        })
    }
}

/// What "Check connection" found.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheckView {
    /// `true` when nothing is missing.
    pub ok: bool,
    /// What is missing, each in words a person can act on.
    pub problems: Vec<String>,
    /// What works.
    pub notes: Vec<String>,
}

/// What a delivery from GitHub did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryReceivedView {
    /// `applied`, `ignored` or `replayed` (a delivery id handled before: nothing changed).
    pub outcome: String,
    /// Reports moved or given a comment.
    pub reports: usize,
    /// Why nothing was done, for `ignored`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
