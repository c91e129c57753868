//! Storage for Svc: domain-level store traits, one per area, gathered in [`Store`], with two
//! implementations, SQLite (the embedded default) and PostgreSQL (for several instances). The
//! queries both databases share are written once in `shared/` (see `docs/architecture.md`,
//! "Storage"); each backend keeps only what differs, and its own migrations, run when it connects.

// `unsafe` only in `sqlite::memory` (SQLite's allocator hooks) and `priority` (scheduling classes),
// which allow it for themselves.
#![deny(unsafe_code)]

use async_trait::async_trait;
use std::sync::Arc;
use svc_core::account::{LinkPurpose, Membership, OneTimeLink, Role, Session, User};
use svc_core::audit::AuditEvent;
use svc_core::model::*;

mod cache;
pub mod changes;
mod health;
pub mod load;
mod pacing;
pub mod postgres;
pub mod priority;
pub mod sqlite;
#[cfg(test)]
mod test_fixtures;
pub mod transfer;

pub use cache::TTL as HOT_CACHE_TTL;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule was broken (duplicate channel key, duplicate slug, ...).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A blob named by a new report is already bound to another report.
    #[error("blob {0} is already bound to a report")]
    BlobAlreadyUsed(String),
    #[error("not found")]
    NotFound,
    #[error(transparent)]
    Database(sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A label change would leave this report with more labels than a report may hold.
    #[error("report {0} would hold more than {max} labels", max = svc_core::triage::MAX_LABELS_PER_REPORT)]
    TooManyLabels(String),
    /// A consumer of the event feed was taken over by another instance: what it was about to do
    /// is not done (the other instance does it).
    #[error("the event consumer {0} is leased to another instance")]
    LeaseLost(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// The migration the database has and this build does not know: a newer build migrated it.
    pub fn unknown_migration(&self) -> Option<i64> {
        match self {
            StoreError::Migrate(sqlx::migrate::MigrateError::VersionMissing(version)) => Some(*version),
            _ => None,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        // Every database error passes here on its way out: a lost PostgreSQL connection is seen,
        // whichever query met it, so the pool checks the connections idle since then.
        postgres::note_if_connection_lost(&error);
        StoreError::Database(error)
    }
}

/// What `create_report` did.
#[derive(Debug, Clone, PartialEq)]
pub enum CreatedReport {
    Created(Report),
    /// The idempotency key was used within 24 hours: the first report's id, nothing new stored.
    Repeat(String),
}

/// A listed report whose JSON fields are still JSON text, as the database holds them: a listing
/// that only writes them out again (the REST list) skips parsing them into values and serializing
/// those back. As written out, the text is the same as serializing the parsed value.
#[derive(Debug, Clone)]
pub struct ListedReport {
    pub id: String,
    pub project_id: String,
    pub channel_key: String,
    pub status: svc_core::status::Status,
    pub title: String,
    pub blocks: StoredJson,
    pub context: StoredJson,
    pub identity: Option<StoredJson>,
    pub identity_error: Option<String>,
    pub author: Author,
    pub artifact_id: Option<String>,
    pub url: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub assignee: Option<String>,
    pub labels: Vec<String>,
}

/// JSON text of a report column as the store wrote it ([`json_text`]), read back without being
/// checked again: SQLite holds what serde_json wrote, and PostgreSQL's `json` type checks its input
/// on the way in. A listing writes it out as it is; parsing it into a value checks it anyway
/// ([`Report`]'s `TryFrom<ListedReport>`). Scanning every report's blocks and context once more on
/// each read was a tenth of a listing's CPU (bench/README.md, "Listing").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredJson(Box<str>);

impl StoredJson {
    /// Text read from a report's JSON column.
    pub(crate) fn from_column(text: String) -> Self {
        StoredJson(text.into_boxed_str())
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }
}

/// JSON text for a column: compact, object keys in the order the value holds them. Both backends
/// store report documents as this text and list them from it. Serializing a `Value` or a list of
/// strings cannot fail.
pub(crate) fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("JSON values always serialize")
}

/// The JSON columns of a report as [`json_text`], serialized before the report reaches a writer
/// (SQLite's group commit serializes them on the caller's task, not on the single writer's).
pub(crate) struct ReportText {
    pub blocks: String,
    pub context: String,
    pub identity: Option<String>,
}

impl ReportText {
    pub(crate) fn of(report: &Report) -> Self {
        ReportText {
            blocks: json_text(&report.blocks),
            context: json_text(&report.context),
            identity: report.identity.as_ref().map(json_text),
        }
    }
}

fn stored_json(value: &impl serde::Serialize) -> StoredJson {
    StoredJson::from_column(json_text(value))
}

impl From<Report> for ListedReport {
    fn from(r: Report) -> Self {
        ListedReport {
            blocks: stored_json(&r.blocks),
            context: stored_json(&r.context),
            identity: r.identity.as_ref().map(stored_json),
            id: r.id,
            project_id: r.project_id,
            channel_key: r.channel_key,
            status: r.status,
            title: r.title,
            identity_error: r.identity_error,
            author: r.author,
            artifact_id: r.artifact_id,
            url: r.url,
            created_at: r.created_at,
            updated_at: r.updated_at,
            assignee: r.assignee,
            labels: r.labels,
        }
    }
}

impl TryFrom<ListedReport> for Report {
    type Error = StoreError;

    /// Parses the JSON text of a listed report into values (both backends map a report row once,
    /// to [`ListedReport`], and parse from there when a [`Report`] is wanted).
    fn try_from(r: ListedReport) -> StoreResult<Report> {
        fn parse<T: serde::de::DeserializeOwned>(raw: &StoredJson, field: &str) -> StoreResult<T> {
            serde_json::from_str(raw.get()).map_err(|error| StoreError::Corrupt(format!("{field}: {error}")))
        }
        Ok(Report {
            blocks: parse(&r.blocks, "blocks")?,
            context: parse(&r.context, "context")?,
            identity: r.identity.as_ref().map(|raw| parse(raw, "identity")).transpose()?,
            id: r.id,
            project_id: r.project_id,
            channel_key: r.channel_key,
            status: r.status,
            title: r.title,
            identity_error: r.identity_error,
            author: r.author,
            artifact_id: r.artifact_id,
            url: r.url,
            created_at: r.created_at,
            updated_at: r.updated_at,
            assignee: r.assignee,
            labels: r.labels,
        })
    }
}

/// How long an idempotency key is remembered.
pub const IDEMPOTENCY_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;

/// An API key found by its hash, with the project it is bound to.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundKey {
    pub key: ApiKey,
    /// The key's project; `None` for an org-wide key.
    pub project: Option<Project>,
}

/// Report count and newest report time of one artifact id (what makes a room implicit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactActivity {
    pub artifact_id: String,
    pub report_count: i64,
    pub last_report_at: i64,
}

/// What a room listing is made of, read in one snapshot so a report filed in between is not
/// half-counted: every stored room of the project (archived ones too) and the report activity of
/// every artifact id its reports carry. The service merges them (see `svc-server`'s rooms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomRows {
    pub stored: Vec<Room>,
    pub activity: Vec<ArtifactActivity>,
}

/// One write of a [`Change`].
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Sets a report's status and records it in the report's history; `report.status_changed`.
    /// Nothing happens when the report has that status already.
    Status {
        report_id: String,
        to: svc_core::status::Status,
    },
    /// Sets (or, with `None`, clears) a report's assignee; `report.assigned` when it changes.
    Assignee {
        report_id: String,
        to: Option<String>,
    },
    /// Changes a report's labels; `report.labels_changed` when they change. `TooManyLabels` past
    /// the limit.
    Labels {
        report_id: String,
        change: svc_core::triage::LabelChange,
    },
    /// Adds a comment; `comment.published` unless it is a draft.
    Comment(Comment),
    /// Publishes a draft of the report (a published comment stays as it is);
    /// `comment.published` with `wasDraft`. `NotFound` when the report has no such comment.
    PublishDraft {
        report_id: String,
        comment_id: String,
    },
    /// Replaces a draft's text; `NotFound` when the report has no such draft.
    EditDraft {
        report_id: String,
        comment_id: String,
        text: String,
    },
    /// Deletes a draft; `NotFound` when the report has no such draft.
    DiscardDraft {
        report_id: String,
        comment_id: String,
    },
    /// Marks a report a duplicate of `of`, another report of its project (replacing an earlier
    /// mark), or with `None` takes the mark away. `NotFound` when either report is out of reach or
    /// they are of different projects.
    Duplicate {
        report_id: String,
        of: Option<String>,
    },
    /// An event no other write causes (a reporter's confirmation, a room created).
    Event(svc_core::event::NewEvent),
    Audit(AuditEvent),
    /// Queues a mail unless its dedupe key is in the outbox already ([`Applied::Skipped`]).
    Mail(svc_core::mail::OutboxMail),
    /// Makes a webhook delivery unless the endpoint has one for that event already
    /// ([`Applied::Skipped`]).
    WebhookDelivery(svc_core::webhook::WebhookDelivery),
    /// Records a delivery of an issue tracker's as handled; the whole change fails with
    /// `Conflict` when it was handled already (a replay changes nothing).
    TrackerDelivery {
        tracker: svc_core::tracker::TrackerKind,
        delivery_id: String,
    },
    /// Moves a consumer of the event feed that `owner` leases to `to`; `LeaseLost` otherwise.
    AdvanceConsumer {
        name: String,
        owner: String,
        to: i64,
    },
}

/// Everything one operation changes, applied in one transaction ([`ChangeStore::apply`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The projects the acting principal reaches: a write naming a report outside them fails the
    /// change with `NotFound`. `None`: any project (Svc's own work).
    pub project_ids: Option<Vec<String>>,
    /// Who makes the change (its history entries and events name them).
    pub by: Author,
    pub at: i64,
    pub writes: Vec<Write>,
}

impl Change {
    /// A change that may touch any project (Svc's own work, imports, tests).
    pub fn anywhere(by: Author, at: i64, writes: Vec<Write>) -> Self {
        Change { project_ids: None, by, at, writes }
    }
}

/// What each write of a change did, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// The status change recorded; `None` when the report had that status.
    Status(Option<StatusChange>),
    Assignee {
        from: Option<String>,
        to: Option<String>,
    },
    /// The report's labels afterwards.
    Labels(Vec<String>),
    /// The comment as stored (added, published or edited).
    Comment(Comment),
    Done,
    /// A mail whose dedupe key was in the outbox already.
    Skipped,
}

/// What one attempt at a webhook delivery leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Failed; tried again at `at`.
    Retry {
        at: i64,
    },
    /// Failed, and the retry window has passed.
    GiveUp,
}

// The operations Svc needs from its database, one trait per area; [`Store`] is all of them.
// Implementations are safe to share across tasks; each multi-row change is one transaction.

#[async_trait]
pub trait OrganizationStore: Send + Sync {
    async fn create_organization(&self, org: &Organization) -> StoreResult<()>;
    async fn get_organization(&self, id: &str) -> StoreResult<Option<Organization>>;
    async fn find_organization_by_name(&self, name: &str) -> StoreResult<Option<Organization>>;
    async fn count_organizations(&self) -> StoreResult<i64>;
    /// Every organization, oldest first.
    async fn list_organizations(&self) -> StoreResult<Vec<Organization>>;
}

#[async_trait]
pub trait ProjectStore: Send + Sync {
    /// Creates a project with its first channels in one transaction. A slug already used in the
    /// organization is `Conflict`.
    async fn create_project(&self, project: &Project, channels: &[Channel]) -> StoreResult<()>;
    async fn get_project(&self, id: &str) -> StoreResult<Option<Project>>;
    /// Shared, not copied: ingest reads it for every report (both backends cache it briefly).
    async fn get_project_by_key(&self, project_key: &str) -> StoreResult<Option<Arc<Project>>>;
    async fn list_projects(&self, org_id: &str) -> StoreResult<Vec<Project>>;
    /// Writes name, url_patterns, default_channel_key, widget_config and allowed_origins.
    async fn update_project(&self, project: &Project) -> StoreResult<()>;
    async fn set_identity_secret(&self, project_id: &str, secret: Option<&str>) -> StoreResult<()>;
}

#[async_trait]
pub trait ChannelStore: Send + Sync {
    /// Oldest first; archived ones only when asked. Shared, not copied: ingest reads the active ones
    /// for every report (both backends cache them briefly).
    async fn list_channels(&self, project_id: &str, include_archived: bool) -> StoreResult<Arc<[Channel]>>;
    async fn get_channel(&self, project_id: &str, key: &str) -> StoreResult<Option<Channel>>;
    /// A duplicate key in the project is `Conflict`.
    async fn create_channel(&self, channel: &Channel) -> StoreResult<()>;
    /// Writes name, color, mascot, base_weight, matchers, archived, updated_at.
    async fn update_channel(&self, channel: &Channel) -> StoreResult<()>;
}

#[async_trait]
pub trait ReportStore: Send + Sync {
    /// Stores a report, binds its blobs (each must be unbound and of the report's project, else
    /// `BlobAlreadyUsed` / `NotFound`) and remembers its idempotency key, all in one durable
    /// transaction. A known idempotency key (same project, within 24 hours) stores nothing. A report
    /// is filed without triage: its `assignee` and `labels` are not stored (see [`TriageStore`]).
    async fn create_report(&self, new: NewReport) -> StoreResult<CreatedReport>;
    async fn get_report(&self, id: &str) -> StoreResult<Option<Report>>;
    /// The reports of these ids that exist, in no particular order: one statement for a batch (the
    /// webhook consumer reads one per event it delivers).
    async fn get_reports(&self, ids: &[String]) -> StoreResult<Vec<Report>>;
    /// Newest first, at most `filter.limit` reports, every filter applied.
    ///
    /// `search` and `reporter` read the search index, which the backend keeps up to date off the
    /// write path: a report is found by them once indexed (both backends index new reports and
    /// comment changes within seconds; `Store::run_maintenance_once` does it at once).
    /// On SQLite those listings are newest first by the order reports were stored (the same as id
    /// order but for reports filed within the same moment), and `before` must then be the id of a
    /// stored report (a page's last id, as the cursor always is).
    async fn list_reports(&self, filter: &ReportFilter) -> StoreResult<Vec<Report>>;
    /// How many reports each filter keeps, counting no further than `cap` (the inbox's view counts:
    /// "99+" needs no exact figure), in one statement. `search` and `before` are not looked at.
    async fn count_reports_up_to(&self, filters: &[ReportFilter], cap: u32) -> StoreResult<Vec<i64>>;
    /// [`ReportStore::list_reports`] with the JSON fields as the JSON text the database holds.
    async fn list_reports_text(&self, filter: &ReportFilter) -> StoreResult<Vec<ListedReport>>;
    /// Reports of these projects whose id ends with `short_id` (at most `limit`).
    async fn find_reports_by_short_id(
        &self,
        project_ids: &[String],
        short_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<Report>>;
    /// Oldest first.
    async fn status_history(&self, report_id: &str) -> StoreResult<Vec<StatusChange>>;
    /// Bulk load for benchmarks and imports: reports only, no blobs, idempotency keys or triage. The
    /// reports are in the search index when it returns.
    async fn insert_reports_bulk(&self, reports: &[Report]) -> StoreResult<()>;
    async fn delete_expired_idempotency_keys(&self, before: i64) -> StoreResult<u64>;
}

/// Labels in use (triage changes themselves are [`Write`]s of a [`Change`]).
#[async_trait]
pub trait TriageStore: Send + Sync {
    /// Every label of the project's reports with the number of reports holding it, by label
    /// (compared as `svc_core::triage::key` does).
    async fn list_labels(&self, project_id: &str) -> StoreResult<Vec<LabelCount>>;
    /// The duplicate marks among these reports: (duplicate, original) for each one marked.
    async fn duplicate_marks(&self, report_ids: &[String]) -> StoreResult<Vec<(String, String)>>;
    /// The reports marked as duplicates of this one, oldest mark first.
    async fn duplicates_of(&self, original_id: &str) -> StoreResult<Vec<String>>;
}

#[async_trait]
pub trait RoomStore: Send + Sync {
    async fn get_room(&self, project_id: &str, artifact_id: &str) -> StoreResult<Option<Room>>;
    /// Number of reports carrying this artifact id (is the room implicit?).
    async fn count_room_reports(&self, project_id: &str, artifact_id: &str) -> StoreResult<i64>;
    /// Inserts the room (with a `room.created` event by `created_by` when given: a room only reports
    /// named until now is not new), or when one with the same artifact id exists, applies `changes`
    /// to it. Returns the stored room and whether it was inserted.
    async fn upsert_room(
        &self,
        room: &Room,
        changes: &RoomChanges,
        created_by: Option<&Author>,
    ) -> StoreResult<(Room, bool)>;
    /// The project's stored rooms and the activity of its reports' artifact ids, in no order.
    async fn room_rows(&self, project_id: &str) -> StoreResult<RoomRows>;
}

#[async_trait]
pub trait KeyStore: Send + Sync {
    async fn create_key(&self, key: &ApiKey) -> StoreResult<()>;
    /// The key with this hash, and the project it is bound to (`None` for an org-wide key), read
    /// in one statement: authenticating a request and loading its project is one round trip.
    async fn find_key_by_hash(&self, key_hash: &str) -> StoreResult<Option<FoundKey>>;
    async fn get_key(&self, id: &str) -> StoreResult<Option<ApiKey>>;
    async fn list_keys(&self, project_id: &str) -> StoreResult<Vec<ApiKey>>;
    /// Revokes an active (not revoked) key of the project; `None` when there is none.
    async fn revoke_key(&self, project_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>>;
    async fn touch_key(&self, key_id: &str, at: i64) -> StoreResult<()>;
    async fn set_key_agent(&self, key_id: &str, agent_name: &str, owner: Option<&str>) -> StoreResult<()>;
}

#[async_trait]
pub trait HintStore: Send + Sync {
    async fn create_hint(&self, hint: &Hint) -> StoreResult<()>;
    /// Unexpired hints of the project that carry no user id, plus those for `user_id`.
    async fn list_active_hints(&self, project_id: &str, user_id: Option<&str>, now: i64) -> StoreResult<Vec<Hint>>;
    /// Every unexpired hint of the project, whoever it is for (the dashboard lists them).
    async fn list_all_active_hints(&self, project_id: &str, now: i64) -> StoreResult<Vec<Hint>>;
    async fn delete_expired_hints(&self, now: i64) -> StoreResult<u64>;
}

/// Comments as read (they are written by [`Write::Comment`] and the draft writes of a [`Change`]).
#[async_trait]
pub trait CommentStore: Send + Sync {
    /// Oldest first, drafts included.
    async fn list_comments(&self, report_id: &str) -> StoreResult<Vec<Comment>>;
    /// Which of these reports have a draft waiting to be published.
    async fn reports_with_drafts(&self, report_ids: &[String]) -> StoreResult<Vec<String>>;
}

#[async_trait]
pub trait ViewStore: Send + Sync {
    /// Upserts one (report, viewer) row per report with the last view time.
    async fn mark_viewed(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()>;
    /// (viewer, last viewed at) for a report.
    async fn list_viewers(&self, report_id: &str) -> StoreResult<Vec<(String, i64)>>;
}

#[async_trait]
pub trait FlagStore: Send + Sync {
    async fn list_flags(&self, project_id: &str) -> StoreResult<Vec<Flag>>;
    async fn get_flag(&self, project_id: &str, key: &str) -> StoreResult<Option<Flag>>;
    async fn set_flag(&self, flag: &Flag) -> StoreResult<()>;
}

/// People who sign in to the dashboard: users, memberships, sessions and one-time links.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Creates a user, with their membership if given, in one transaction. Every unused
    /// first-owner link stops working in it (such a link is for a service without users). With
    /// `first_owner_link` (a link's token hash) the user is the service's first: the link must be
    /// unused and unexpired and no user may exist yet, else nothing is written and the answer is
    /// `NotFound`. Fails with `Conflict` when the email is taken.
    async fn create_user(
        &self,
        user: &User,
        password_hash: &str,
        membership: Option<&Membership>,
        first_owner_link: Option<&str>,
    ) -> StoreResult<()>;
    async fn get_user(&self, id: &str) -> StoreResult<Option<User>>;
    /// The user with this (lower-case) email and their password hash.
    async fn find_user_by_email(&self, email: &str) -> StoreResult<Option<(User, String)>>;
    /// Sets a user's password hash and ends every session of theirs, in one transaction.
    async fn set_password_hash(&self, user_id: &str, password_hash: &str, at: i64) -> StoreResult<()>;
    async fn count_users(&self) -> StoreResult<i64>;
    /// Adds the membership, or changes the role of an existing one.
    async fn put_membership(&self, membership: &Membership) -> StoreResult<()>;
    async fn list_memberships(&self, user_id: &str) -> StoreResult<Vec<Membership>>;
    /// The members of an organization with their roles, by name.
    async fn list_members(&self, org_id: &str) -> StoreResult<Vec<(User, Membership)>>;
    async fn create_session(&self, session: &Session) -> StoreResult<()>;
    /// The unexpired session with this id hash.
    async fn get_session(&self, id_hash: &str, now: i64) -> StoreResult<Option<Session>>;
    async fn touch_session(&self, id_hash: &str, last_seen_at: i64, expires_at: i64) -> StoreResult<()>;
    async fn delete_session(&self, id_hash: &str) -> StoreResult<()>;
    /// Ends every session of a user; returns how many there were.
    async fn delete_user_sessions(&self, user_id: &str) -> StoreResult<u64>;
    async fn create_link(&self, link: &OneTimeLink) -> StoreResult<()>;
    /// The unexpired, unused link with this token hash, without using it.
    async fn peek_link(&self, token_hash: &str, now: i64) -> StoreResult<Option<OneTimeLink>>;
    /// Marks the link used and returns it, if it was unexpired and unused: only one caller wins.
    async fn take_link(&self, token_hash: &str, now: i64) -> StoreResult<Option<OneTimeLink>>;
    /// Which of `report_ids` the viewer (`user:<id>`) has viewed: a person's read state.
    async fn viewed_among(&self, viewer: &str, report_ids: &[String]) -> StoreResult<Vec<String>>;
    /// Deletes expired sessions and links; returns how many rows went.
    async fn delete_expired_accounts_rows(&self, now: i64) -> StoreResult<u64>;
}

/// The rows describing uploaded blobs (their bytes live in `svc-blob`).
#[async_trait]
pub trait BlobRowStore: Send + Sync {
    async fn create_blob(&self, blob: &Blob) -> StoreResult<()>;
    async fn get_blob(&self, id: &str) -> StoreResult<Option<Blob>>;
    /// Unbound blobs created before `before` (at most `limit`).
    async fn list_unbound_blobs(&self, before: i64, limit: u32) -> StoreResult<Vec<Blob>>;
    /// Deletes the blob's row only if it is still unbound; returns whether it did.
    async fn delete_unbound_blob(&self, id: &str) -> StoreResult<bool>;
}

/// The audit log: who did what to a project or an organization.
#[async_trait]
pub trait AuditStore: Send + Sync {
    async fn record_audit(&self, event: &AuditEvent) -> StoreResult<()>;
    /// A project's events, newest first, older than the event `before` when given.
    async fn list_audit(&self, project_id: &str, before: Option<&str>, limit: u32) -> StoreResult<Vec<AuditEvent>>;
    /// An organization's own events (those of no project), newest first.
    async fn list_org_audit(&self, org_id: &str, before: Option<&str>, limit: u32) -> StoreResult<Vec<AuditEvent>>;
}

/// Where a project's widget was last seen: the page (when known), what heard from it (`loader`,
/// `config`, `report`) and when (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WidgetSighting {
    pub project_id: String,
    pub url: Option<String>,
    pub source: String,
    pub seen_at: i64,
}

/// The last sighting of each project's widget (written at most about once a minute per instance).
#[async_trait]
pub trait SightingStore: Send + Sync {
    /// Stores the sighting unless a later one of the project is stored already.
    async fn record_sighting(&self, sighting: &WidgetSighting) -> StoreResult<()>;
    async fn get_sighting(&self, project_id: &str) -> StoreResult<Option<WidgetSighting>>;
}

/// What deleting reports removed (see [`DeletionStore`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletedReports {
    /// How many reports went.
    pub reports: u64,
    /// Which.
    pub report_ids: Vec<String>,
    /// The blobs whose rows went with them (bound to those reports, or for a deleted project every
    /// blob of it). Their ids are queued for deletion from the blob store in the same transaction
    /// (see [`DeletionStore::pending_blob_deletions`]).
    pub blob_ids: Vec<String>,
}

/// Deleting a project, or a project's oldest reports, with everything attached to them: status
/// history, comments, labels, viewed marks, idempotency keys, search and short-id index entries and
/// blob rows (the blob objects are the blob store's: their ids are queued here until deleted there).
#[async_trait]
pub trait DeletionStore: Send + Sync {
    /// Deletes up to `limit` of the project's reports, oldest first, in one transaction: every
    /// report when `created_before` is `None`, else those created before that time (ms).
    async fn delete_reports(
        &self,
        project_id: &str,
        created_before: Option<i64>,
        limit: u32,
    ) -> StoreResult<DeletedReports>;
    /// Deletes the project and everything of it in one transaction: reports (as
    /// [`DeletionStore::delete_reports`]), blobs (bound or not), channels, rooms, keys, hints,
    /// flags, idempotency keys, the widget sighting and the project's audit events. `NotFound`
    /// when there is no such project.
    async fn delete_project(&self, project_id: &str) -> StoreResult<DeletedReports>;
    /// Every project with a retention period, in any organization.
    async fn list_projects_with_retention(&self) -> StoreResult<Vec<Project>>;
    /// Blob ids queued for deletion from the blob store, oldest first (at most `limit`).
    async fn pending_blob_deletions(&self, limit: u32) -> StoreResult<Vec<String>>;
    /// Takes blob ids off the queue once their objects are deleted.
    async fn forget_blob_deletions(&self, blob_ids: &[String]) -> StoreResult<()>;
}

/// What a change to a membership did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Done; the member had this role before.
    Done { previous: Role },
    /// The person does not belong to the organization.
    NotMember,
    /// Refused: the organization would be left without an owner.
    LastOwner,
}

/// Members of an organization, their invitations, and the organization's own keys. Changes that could take away an
/// organization's last owner check and change in one transaction that holds the organization's
/// row (PostgreSQL: `FOR UPDATE`; SQLite: the write lock), so two owners demoting each other at
/// once cannot both succeed.
#[async_trait]
pub trait MemberStore: Send + Sync {
    /// Adds a membership unless the person already belongs to the organization (their role then
    /// stays as it is); whether it was added.
    async fn add_member(&self, membership: &Membership) -> StoreResult<bool>;
    /// Gives a member another role, unless that leaves the organization without an owner.
    async fn change_member_role(&self, org_id: &str, user_id: &str, role: Role) -> StoreResult<MemberChange>;
    /// Removes a member, unless they are the organization's last owner. A person left in no
    /// organization has every session ended too.
    async fn remove_member(&self, org_id: &str, user_id: &str) -> StoreResult<MemberChange>;
    /// The unused, unexpired links of this purpose for an organization (pending invitations),
    /// newest first.
    async fn list_org_links(&self, org_id: &str, purpose: LinkPurpose, now: i64) -> StoreResult<Vec<OneTimeLink>>;
    /// Deletes an unused link of the organization (an invitation withdrawn); whether there was one.
    async fn delete_org_link(&self, org_id: &str, token_hash: &str) -> StoreResult<bool>;
    /// The organization's own keys (bound to no project: `svc token org`, OAuth grants for a whole
    /// organization), oldest first.
    async fn list_org_keys(&self, org_id: &str) -> StoreResult<Vec<ApiKey>>;
    /// Revokes an unrevoked organization-wide key; when, or `None` when there is no such key.
    async fn revoke_org_key(&self, org_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>>;
}

/// OAuth for the tool endpoint: registered clients, authorization codes (only their SHA-256) and
/// what each OAuth key was made for (its grant). The key itself is an ordinary API key.
#[async_trait]
pub trait OAuthStore: Send + Sync {
    async fn create_oauth_client(&self, client: &svc_core::oauth::OAuthClient) -> StoreResult<()>;
    /// Stores a client read from its metadata document, replacing the one read before (its
    /// `last_used_at` kept).
    async fn put_oauth_client(&self, client: &svc_core::oauth::OAuthClient) -> StoreResult<()>;
    async fn get_oauth_client(&self, client_id: &str) -> StoreResult<Option<svc_core::oauth::OAuthClient>>;
    async fn create_oauth_code(&self, code: &svc_core::oauth::OAuthCode) -> StoreResult<()>;
    /// Marks the code used and returns it, if it was unexpired (at `now`) and unused: only one
    /// caller wins.
    async fn take_oauth_code(&self, code_hash: &str, now: i64) -> StoreResult<Option<svc_core::oauth::OAuthCode>>;
    /// Stores the key minted for a grant and its grant, and marks the grant's client used (its
    /// `last_used_at` becomes the grant's `created_at`), in one transaction.
    async fn create_oauth_key(&self, key: &ApiKey, grant: &svc_core::oauth::OAuthGrant) -> StoreResult<()>;
    /// The grants of those of these keys that were made by OAuth, in no order.
    async fn oauth_grants_of(&self, key_ids: &[String]) -> StoreResult<Vec<svc_core::oauth::OAuthGrant>>;
    /// The keys a person connected through OAuth (revoked and expired ones too), with their
    /// grants, newest first.
    async fn list_user_oauth_keys(&self, user_id: &str) -> StoreResult<Vec<(ApiKey, svc_core::oauth::OAuthGrant)>>;
    /// Revokes an unrevoked key the person connected through OAuth; when, or `None` when there
    /// is no such key.
    async fn revoke_user_oauth_key(&self, user_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>>;
    /// Deletes codes expired at `now`, and registrations made before `unused_before` that never
    /// completed a token exchange (with their codes); how many rows went.
    async fn delete_stale_oauth_rows(&self, now: i64, unused_before: i64) -> StoreResult<u64>;
}

/// Mail (see `svc_core::mail` and docs/mail.md): the outbox messages wait in, each person's mail
/// settings per project, and the service's own small mail state.
#[async_trait]
pub trait MailStore: Send + Sync {
    /// Stores a message; `false` (nothing stored) when a message with its dedupe key is in the
    /// outbox already.
    async fn queue_mail(&self, mail: &svc_core::mail::OutboxMail) -> StoreResult<bool>;
    /// Takes up to `limit` messages due at `now` (queued and `next_attempt_at <= now`), oldest
    /// first: each counts one more attempt and is held until `lease_until`, so no other sender
    /// takes it meanwhile.
    async fn claim_due_mail(
        &self,
        now: i64,
        lease_until: i64,
        limit: u32,
    ) -> StoreResult<Vec<svc_core::mail::OutboxMail>>;
    /// Whether any message is due at `now` (a read: a sender with nothing to do writes nothing).
    async fn mail_due(&self, now: i64) -> StoreResult<bool>;
    async fn mail_sent(&self, id: &str, at: i64) -> StoreResult<()>;
    /// Records a failed attempt: try again at `retry_at`, or (`None`) give up at `at`.
    async fn mail_failed(&self, id: &str, error: &str, retry_at: Option<i64>, at: i64) -> StoreResult<()>;
    /// The messages of these organizations, newest first, older than the message `before`.
    async fn list_outbox(
        &self,
        org_ids: &[String],
        before: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<svc_core::mail::OutboxMail>>;
    async fn get_outbox_mail(&self, id: &str) -> StoreResult<Option<svc_core::mail::OutboxMail>>;
    /// Deletes sent and given-up messages created before `created_before`; how many went.
    async fn delete_old_mail(&self, created_before: i64) -> StoreResult<u64>;
    /// The person's stored settings (projects without a row keep the defaults).
    async fn mail_preferences(&self, user_id: &str) -> StoreResult<Vec<svc_core::mail::MailPreference>>;
    /// Stores a person's settings for a project. `reports_since` (and the digest's mark) start
    /// again only when `new_reports` changes.
    async fn put_mail_preference(&self, preference: &svc_core::mail::MailPreference) -> StoreResult<()>;
    /// Moves the end of what the person's last digest of the project covered (never back).
    async fn set_digest_through(&self, user_id: &str, project_id: &str, through: i64) -> StoreResult<()>;
    /// Everyone whose new-reports choice is `mode`, on any project, who is still a member of the
    /// project's organization; by project.
    async fn report_subscribers(
        &self,
        mode: svc_core::mail::NewReports,
    ) -> StoreResult<Vec<svc_core::mail::Subscriber>>;
    /// The members of the project's organization who get reporters' replies (the default).
    async fn reply_subscribers(&self, project_id: &str) -> StoreResult<Vec<svc_core::mail::Subscriber>>;
    /// How many of the project's reports have ids in `[from_id, until_id)` (see
    /// `svc_core::mail::id_floor`).
    async fn count_reports_between(&self, project_id: &str, from_id: &str, until_id: &str) -> StoreResult<i64>;
    async fn mail_state(&self, name: &str) -> StoreResult<Option<String>>;
    /// Stores `value` under `name` unless a value is there; returns the stored value.
    async fn init_mail_state(&self, name: &str, value: &str) -> StoreResult<String>;
}

/// Reporter sign-in (see `svc_core::reporter`): the codes mailed in email mode, the sessions signed-in
/// widgets renew their tokens with, and OpenID Connect sign-ins under way.
#[async_trait]
pub trait ReporterStore: Send + Sync {
    async fn create_sign_in_code(&self, code: &svc_core::reporter::SignInCode) -> StoreResult<()>;
    /// How many codes were made for the address and project since `since` (used or not).
    async fn count_sign_in_codes(&self, project_id: &str, email: &str, since: i64) -> StoreResult<i64>;
    /// The newest code made for the address and project, used or not.
    async fn latest_sign_in_code(
        &self,
        project_id: &str,
        email: &str,
    ) -> StoreResult<Option<svc_core::reporter::SignInCode>>;
    /// Counts one more try of an unused code before it is compared; the tries made so far, or
    /// `None` when the code is used.
    async fn count_sign_in_code_try(&self, id: &str) -> StoreResult<Option<i64>>;
    /// Marks an unused code used; whether this call did.
    async fn consume_sign_in_code(&self, id: &str, at: i64) -> StoreResult<bool>;
    async fn create_reporter_session(&self, session: &svc_core::reporter::ReporterSession) -> StoreResult<()>;
    /// The session whose secret hashes to this, expired or not.
    async fn reporter_session(&self, secret_hash: &str) -> StoreResult<Option<svc_core::reporter::ReporterSession>>;
    async fn touch_reporter_session(&self, id: &str, last_used_at: i64, expires_at: i64) -> StoreResult<()>;
    /// Ends a session; whether there was one.
    async fn delete_reporter_session(&self, id: &str) -> StoreResult<bool>;
    async fn put_oidc_state(&self, state: &svc_core::reporter::OidcState) -> StoreResult<()>;
    /// Takes (deletes) a sign-in under way; `None` when there is none or it expired at `now`.
    async fn take_oidc_state(&self, state_hash: &str, now: i64) -> StoreResult<Option<svc_core::reporter::OidcState>>;
    /// Deletes codes made before `codes_before`, and sessions and sign-ins expired at `now`; how
    /// many rows went.
    async fn delete_stale_reporter_rows(&self, now: i64, codes_before: i64) -> StoreResult<u64>;
}

/// Whole changes: the writes of one operation, the events they cause, and their audit and mail,
/// in one transaction.
#[async_trait]
pub trait ChangeStore: Send + Sync {
    /// Applies every write in order and commits; on any failure nothing of it is stored.
    async fn apply(&self, change: &Change) -> StoreResult<Vec<Applied>>;
}

/// The event feed (`svc_core::event`): every event, in commit order, and how far each consumer has
/// read. Events are written by the changes that cause them ([`ChangeStore::apply`], filing a
/// report, deleting reports).
#[async_trait]
pub trait EventStore: Send + Sync {
    /// Events after the id `after`, oldest first, at most `limit`; only these projects' when given.
    async fn list_events(
        &self,
        project_ids: Option<&[String]>,
        after: i64,
        limit: u32,
    ) -> StoreResult<Vec<svc_core::event::Event>>;
    /// The newest event's id (0 before the first).
    async fn last_event_id(&self) -> StoreResult<i64>;
    /// Takes the consumer `name` for `owner` until `until` unless another owner holds an unexpired
    /// lease; its position, or `None` when it is taken. A new consumer starts at the feed's end.
    async fn lease_consumer(&self, name: &str, owner: &str, now: i64, until: i64) -> StoreResult<Option<i64>>;
    /// Gives the lease up (shutting down), so another instance need not wait for it to expire.
    async fn release_consumer(&self, name: &str, owner: &str) -> StoreResult<()>;
    /// Takes (or renews) the lease `name` for `owner` until `until`, unless another owner holds it
    /// past `now`; whether `owner` holds it now.
    async fn take_lease(&self, name: &str, owner: &str, now: i64, until: i64) -> StoreResult<bool>;
    async fn consumer_position(&self, name: &str) -> StoreResult<Option<i64>>;
    /// Deletes events older than `at` that every consumer has read; how many went.
    async fn delete_events_before(&self, at: i64) -> StoreResult<u64>;
}

/// Every operation Svc needs from its database, held as [`DynStore`]. Bring the area traits into
/// scope to call them (`use svc_store::prelude::*`).
/// Webhook endpoints, their deliveries and the attempts at them.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    async fn create_webhook(&self, hook: &svc_core::webhook::Webhook) -> StoreResult<()>;
    async fn list_webhooks(&self, project_id: &str) -> StoreResult<Vec<svc_core::webhook::Webhook>>;
    /// Whether any project has an enabled endpoint.
    async fn any_enabled_webhook(&self) -> StoreResult<bool>;
    /// The enabled endpoints of these projects (the event feed's deliveries are made for them).
    async fn enabled_webhooks(&self, project_ids: &[String]) -> StoreResult<Vec<svc_core::webhook::Webhook>>;
    async fn get_webhook(&self, project_id: &str, id: &str) -> StoreResult<Option<svc_core::webhook::Webhook>>;
    /// Saves every changeable field; `false` when there is no such endpoint.
    async fn update_webhook(&self, hook: &svc_core::webhook::Webhook) -> StoreResult<bool>;
    /// Deletes the endpoint with its deliveries and attempts.
    async fn delete_webhook(&self, project_id: &str, id: &str) -> StoreResult<bool>;
    /// Makes a delivery outside the feed (a test event); `false` when it exists already.
    async fn queue_delivery(&self, delivery: &svc_core::webhook::WebhookDelivery) -> StoreResult<bool>;
    /// Whether any delivery of an endpoint is due at `now` (a read, so idle rounds write nothing).
    async fn deliveries_due(&self, now: i64) -> StoreResult<bool>;
    /// Takes up to `limit` due deliveries of enabled endpoints (`only`: that one alone) and holds
    /// them until `lease_until`, so no other sender takes them meanwhile.
    async fn claim_due_deliveries(
        &self,
        now: i64,
        lease_until: i64,
        limit: u32,
        only: Option<&str>,
    ) -> StoreResult<Vec<svc_core::webhook::WebhookDelivery>>;
    /// Sets when pending deliveries are due (claimed ones given back unattempted, or held longer).
    async fn reschedule_deliveries(&self, ids: &[String], at: i64) -> StoreResult<()>;
    /// Records a round of attempts at one endpoint's deliveries, in order, and the endpoint's
    /// health after them, in one transaction: after a failure the endpoint is paused until the
    /// failed delivery's retry, and the `held` deliveries (claimed, not tried) wait as long.
    /// `true` when this failure disabled the endpoint (it failed for the whole retry window).
    async fn record_attempts(
        &self,
        webhook_id: &str,
        attempts: &[(svc_core::webhook::WebhookAttempt, AttemptOutcome)],
        held: &[String],
    ) -> StoreResult<bool>;
    /// An endpoint's deliveries, newest first, before the id `before`.
    async fn list_deliveries(
        &self,
        webhook_id: &str,
        before: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<svc_core::webhook::WebhookDelivery>>;
    async fn get_delivery(&self, webhook_id: &str, id: &str)
    -> StoreResult<Option<svc_core::webhook::WebhookDelivery>>;
    /// The attempts at these deliveries, oldest first.
    async fn list_attempts(&self, delivery_ids: &[String]) -> StoreResult<Vec<svc_core::webhook::WebhookAttempt>>;
    /// Makes a delivery due again at `now` with a fresh retry window ("Resend"); `false` when
    /// there is no such delivery, or it is due already.
    async fn redeliver(&self, webhook_id: &str, id: &str, now: i64) -> StoreResult<bool>;
    /// Deletes finished deliveries made before `created_before`; how many went.
    async fn delete_old_deliveries(&self, created_before: i64) -> StoreResult<u64>;
}

/// Issue trackers: each project's connection, the issue each report became, and the tracker's
/// deliveries already handled.
#[async_trait]
pub trait TrackerStore: Send + Sync {
    /// Saves a project's connection, made or changed.
    async fn put_tracker_connection(&self, connection: &svc_core::tracker::TrackerConnection) -> StoreResult<()>;
    async fn tracker_connection(&self, project_id: &str) -> StoreResult<Option<svc_core::tracker::TrackerConnection>>;
    /// Every project's connection to this repository (`owner/name` lowercased).
    async fn tracker_connections_for(
        &self,
        tracker: svc_core::tracker::TrackerKind,
        repository_key: &str,
    ) -> StoreResult<Vec<svc_core::tracker::TrackerConnection>>;
    async fn all_tracker_connections(&self) -> StoreResult<Vec<svc_core::tracker::TrackerConnection>>;
    async fn delete_tracker_connection(&self, project_id: &str) -> StoreResult<bool>;
    /// Notes what Svc could not send (`None` clears it).
    async fn set_tracker_error(&self, project_id: &str, error: Option<&str>, at: i64) -> StoreResult<()>;
    /// Links a report to its issue unless it has one already; the report's link afterwards.
    async fn link_issue(&self, link: &svc_core::tracker::IssueLink) -> StoreResult<svc_core::tracker::IssueLink>;
    /// The links of these reports (the ones that have an issue).
    async fn issue_links(&self, report_ids: &[String]) -> StoreResult<Vec<svc_core::tracker::IssueLink>>;
    /// The reports linked to one issue.
    async fn links_to_issue(
        &self,
        tracker: svc_core::tracker::TrackerKind,
        repository_key: &str,
        number: i64,
    ) -> StoreResult<Vec<svc_core::tracker::IssueLink>>;
    /// Forgets handled deliveries received before `received_before`; how many went.
    async fn delete_old_tracker_deliveries(&self, received_before: i64) -> StoreResult<u64>;
}

#[async_trait]
pub trait Store:
    OrganizationStore
    + ProjectStore
    + ChannelStore
    + ReportStore
    + TriageStore
    + RoomStore
    + KeyStore
    + HintStore
    + CommentStore
    + ViewStore
    + FlagStore
    + BlobRowStore
    + AccountStore
    + AuditStore
    + SightingStore
    + DeletionStore
    + MemberStore
    + OAuthStore
    + MailStore
    + ReporterStore
    + ChangeStore
    + EventStore
    + WebhookStore
    + TrackerStore
    + 'static
{
    /// Backend name for logs and metrics (`sqlite`, `postgres`).
    fn backend(&self) -> &'static str;
    /// Announcements of changed reports, across instances (see [`changes`]).
    fn changes(&self) -> &changes::ChangeFeed;
    /// Reports being filed now, counted by the service while it files each; background work
    /// (search indexing here, webhook delivery in the service) waits out bursts of them.
    fn load(&self) -> &load::Load;
    /// Readiness: a cheap round trip to the database and, while writes are failing (a write
    /// failed because of the storage and none has succeeded since), a tiny probe write that must
    /// succeed too. An error says why the store is not ready.
    async fn ping(&self) -> StoreResult<()>;
    /// One round of the backend's own background upkeep, now, until it has caught up (SQLite:
    /// copying new reports' short ids into their table; both: indexing new reports and the reports
    /// whose comments changed for search). The background tasks keep doing it on their own; tests
    /// call this instead of waiting for them.
    async fn run_maintenance_once(&self) -> StoreResult<()>;
}

/// The store traits, for `use svc_store::prelude::*` where store methods are called.
pub mod prelude {
    pub use crate::{
        AccountStore, AuditStore, BlobRowStore, ChangeStore, ChannelStore, CommentStore, DeletionStore, EventStore,
        FlagStore, HintStore, KeyStore, MailStore, MemberStore, OAuthStore, OrganizationStore, ProjectStore,
        ReportStore, ReporterStore, RoomStore, SightingStore, Store, TrackerStore, TriageStore, ViewStore,
        WebhookStore,
    };
}

pub type DynStore = Arc<dyn Store>;

/// Whether a database URL names PostgreSQL (`postgres://`, `postgresql://`); anything else is SQLite.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The file a SQLite URL names (`sqlite://path`, `sqlite:path` or a bare path, its query left out);
/// `None` for PostgreSQL and for an in-memory database.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    if is_postgres_url(url) {
        return None;
    }
    let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && !path.contains(":memory:")).then(|| std::path::PathBuf::from(path))
}

/// Opens the store a URL names: `postgres://` / `postgresql://` selects PostgreSQL, `sqlite:` a
/// SQLite file. Migrations run before it returns.
pub async fn connect(url: &str) -> StoreResult<DynStore> {
    if is_postgres_url(url) {
        Ok(Arc::new(postgres::PostgresStore::connect(url).await?))
    } else {
        Ok(Arc::new(sqlite::SqliteStore::connect(url).await?))
    }
}
