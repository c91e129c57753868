//! Column lists and row → record mapping, written once for both backends.
//!
//! This file is compiled twice, as `sqlite::rows` and `postgres::rows` (`#[path]`), so it names
//! its backend's concrete row type (`super::DbRow`): each copy is the code a hand-written mapping
//! for that backend would be, with no trait bounds to spell out and no per-row dispatch. What
//! differs between the databases comes from the including module: how a report's JSON text column
//! is read (`super::raw_json_column`). JSON columns that are parsed (JSONB on PostgreSQL, TEXT on
//! SQLite) go through `sqlx::types::Json`, which reads either.

use serde::de::DeserializeOwned;
use sqlx::Row;
use sqlx::types::Json;
use svc_core::model::*;
use svc_core::status::Status;

use super::{DbRow, raw_json_column};
use crate::{ListedReport, StoreError, StoreResult};

// Column lists as macros so they can be `concat!`ed into `&'static str` queries.
macro_rules! organization_columns {
    () => {
        "id, name, created_at"
    };
}
macro_rules! project_columns {
    () => {
        "id, org_id, name, slug, project_key, url_patterns, default_channel_key, widget_config, \
         allowed_origins, identity_secret, created_at, retention_days, reporter_auth"
    };
}
/// A project's columns in a join with its key (`find_key_by_hash`), each under a name of its own
/// ([`KEY_PROJECT`]) since the key has columns of the same names.
macro_rules! key_project_columns {
    () => {
        "p.id AS p_id, p.org_id AS p_org_id, p.name AS p_name, p.slug AS p_slug, \
         p.project_key AS p_project_key, p.url_patterns AS p_url_patterns, \
         p.default_channel_key AS p_default_channel_key, p.widget_config AS p_widget_config, \
         p.allowed_origins AS p_allowed_origins, p.identity_secret AS p_identity_secret, \
         p.created_at AS p_created_at, p.retention_days AS p_retention_days, \
         p.reporter_auth AS p_reporter_auth"
    };
}
macro_rules! channel_columns {
    () => {
        "id, project_id, key, name, color, mascot, base_weight, matchers, archived, created_at, updated_at"
    };
}
/// The columns a report is filed with (INSERTs bind exactly these).
macro_rules! report_columns {
    () => {
        "id, project_id, channel_key, status, title, blocks, context, identity, identity_error, \
         author_kind, author_id, author_label, artifact_id, url, created_at, updated_at"
    };
}
/// The columns a report is read with: [`report_columns`] and the triage columns, which filing leaves
/// NULL (no assignee; `labels` is the JSON array of the report's labels, NULL when it has none).
macro_rules! report_select_columns {
    () => {
        "id, project_id, channel_key, status, title, blocks, context, identity, identity_error, \
         author_kind, author_id, author_label, artifact_id, url, created_at, updated_at, assignee_id, labels"
    };
}
macro_rules! status_change_columns {
    () => {
        "report_id, from_status, to_status, by_kind, by_id, by_label, at"
    };
}
macro_rules! room_columns {
    () => {
        "id, project_id, artifact_id, title, meta, archived, created_at, updated_at"
    };
}
macro_rules! key_columns {
    () => {
        "id, project_id, org_id, name, key_hash, scopes, origin, expires_at, revoked_at, last_used_at, \
         agent_name, agent_owner, created_at"
    };
}
macro_rules! hint_columns {
    () => {
        "id, project_id, channel_key, weight, user_id, created_at, expires_at"
    };
}
macro_rules! comment_columns {
    () => {
        "id, report_id, project_id, author_kind, author_id, author_label, text, kind, draft, created_at, \
         published_at"
    };
}
macro_rules! flag_columns {
    () => {
        "project_id, key, enabled, updated_at"
    };
}
macro_rules! blob_columns {
    () => {
        "id, project_id, kind, mime, bytes, width, height, duration_ms, name, report_id, created_at"
    };
}
#[allow(unused_imports)]
pub(super) use {
    blob_columns, channel_columns, comment_columns, flag_columns, hint_columns, key_columns, key_project_columns,
    organization_columns, project_columns, report_columns, report_select_columns, room_columns, status_change_columns,
};

fn corrupt(column: impl std::fmt::Display, error: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{column}: {error}"))
}

/// A column by its name (`&str`) or by its position ([`At`]); named in errors either way.
pub(super) trait Column: sqlx::ColumnIndex<DbRow> + std::fmt::Display + Copy {}
impl<C: sqlx::ColumnIndex<DbRow> + std::fmt::Display + Copy> Column for C {}

/// A JSON column parsed into `T`; JSON that does not parse is `Corrupt`.
fn json_column<T: DeserializeOwned>(row: &DbRow, column: impl Column) -> StoreResult<T> {
    match row.try_get::<Json<T>, _>(column) {
        Ok(Json(value)) => Ok(value),
        Err(sqlx::Error::ColumnDecode { source, .. }) => Err(corrupt(column, source)),
        Err(error) => Err(error.into()),
    }
}

/// A nullable JSON column.
fn optional_json_column<T: DeserializeOwned>(row: &DbRow, column: impl Column) -> StoreResult<Option<T>> {
    optional_json(row.try_get::<Option<Json<T>>, _>(column), column)
}

/// A nullable JSON column's value as read; JSON that does not parse is `Corrupt`.
fn optional_json<T>(read: Result<Option<Json<T>>, sqlx::Error>, column: impl Column) -> StoreResult<Option<T>> {
    match read {
        Ok(value) => Ok(value.map(|Json(value)| value)),
        Err(sqlx::Error::ColumnDecode { source, .. }) => Err(corrupt(column, source)),
        Err(error) => Err(error.into()),
    }
}

/// An author stored as three columns `<prefix>_kind`, `<prefix>_id`, `<prefix>_label`.
fn author<C: Column>(row: &DbRow, [kind, id, label]: [C; 3]) -> StoreResult<Author> {
    Ok(Author { kind: author_kind(row, kind)?, id: row.try_get(id)?, label: row.try_get(label)? })
}

/// An author's kind column.
pub(super) fn author_kind(row: &DbRow, column: impl Column) -> StoreResult<AuthorKind> {
    author_kind_of(row.try_get(column)?, column)
}

/// An author's kind as read from `column`.
fn author_kind_of(text: &str, column: impl std::fmt::Display) -> StoreResult<AuthorKind> {
    AuthorKind::parse(text).ok_or_else(|| StoreError::Corrupt(format!("{column}: unknown author kind {text:?}")))
}

/// A status column.
pub(super) fn status(row: &DbRow, column: impl Column) -> StoreResult<Status> {
    status_of(row.try_get(column)?, column)
}

/// A status as read from `column`.
fn status_of(text: &str, column: impl std::fmt::Display) -> StoreResult<Status> {
    text.parse().map_err(|_| StoreError::Corrupt(format!("{column}: unknown status {text:?}")))
}

const AUTHOR: [&str; 3] = ["author_kind", "author_id", "author_label"];
const CHANGED_BY: [&str; 3] = ["by_kind", "by_id", "by_label"];

pub(super) fn organization(row: &DbRow) -> StoreResult<Organization> {
    Ok(Organization { id: row.try_get("id")?, name: row.try_get("name")?, created_at: row.try_get("created_at")? })
}

/// A project's columns by their names in `project_columns!`, and in `key_project_columns!`.
const PROJECT: [&str; 13] = [
    "id",
    "org_id",
    "name",
    "slug",
    "project_key",
    "url_patterns",
    "default_channel_key",
    "widget_config",
    "allowed_origins",
    "identity_secret",
    "created_at",
    "retention_days",
    "reporter_auth",
];
const KEY_PROJECT: [&str; 13] = [
    "p_id",
    "p_org_id",
    "p_name",
    "p_slug",
    "p_project_key",
    "p_url_patterns",
    "p_default_channel_key",
    "p_widget_config",
    "p_allowed_origins",
    "p_identity_secret",
    "p_created_at",
    "p_retention_days",
    "p_reporter_auth",
];

pub(super) fn project(row: &DbRow) -> StoreResult<Project> {
    project_named(row, PROJECT)
}

fn project_named(row: &DbRow, columns: [&str; 13]) -> StoreResult<Project> {
    let [
        id,
        org_id,
        name,
        slug,
        project_key,
        url_patterns,
        default_channel_key,
        widget_config,
        allowed_origins,
        identity_secret,
        created_at,
        retention_days,
        reporter_auth,
    ] = columns;
    Ok(Project {
        id: row.try_get(id)?,
        org_id: row.try_get(org_id)?,
        name: row.try_get(name)?,
        slug: row.try_get(slug)?,
        project_key: row.try_get(project_key)?,
        url_patterns: json_column(row, url_patterns)?,
        default_channel_key: row.try_get(default_channel_key)?,
        widget_config: json_column(row, widget_config)?,
        allowed_origins: json_column(row, allowed_origins)?,
        identity_secret: row.try_get(identity_secret)?,
        created_at: row.try_get(created_at)?,
        // INTEGER on both backends (4 bytes on PostgreSQL, whose driver decodes only i32 from it).
        retention_days: row.try_get::<Option<i32>, _>(retention_days)?.map(i64::from),
        reporter_auth: json_column(row, reporter_auth)?,
    })
}

/// A key joined with its project (`key_columns!`, `key_project_columns!`); the project is `None`
/// for an org-wide key.
pub(super) fn found_key(row: &DbRow) -> StoreResult<crate::FoundKey> {
    let project_id: Option<&str> = row.try_get(KEY_PROJECT[0])?;
    let project = project_id.map(|_| project_named(row, KEY_PROJECT)).transpose()?;
    Ok(crate::FoundKey { key: api_key(row)?, project })
}

pub(super) fn channel(row: &DbRow) -> StoreResult<Channel> {
    Ok(Channel {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        key: row.try_get("key")?,
        name: row.try_get("name")?,
        color: row.try_get("color")?,
        mascot: row.try_get("mascot")?,
        base_weight: row.try_get("base_weight")?,
        matchers: json_column(row, "matchers")?,
        archived: row.try_get("archived")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn report(row: &DbRow) -> StoreResult<Report> {
    listed_report(row)?.try_into()
}

/// Report rows (read with `report_select_columns!`), their columns found once for all of them.
pub(super) fn reports(rows: &[DbRow]) -> StoreResult<Vec<Report>> {
    each_report(rows, |row| row?.try_into())
}

/// `make` of every report row, its columns found once, from the first row.
fn each_report<T>(rows: &[DbRow], make: impl Fn(StoreResult<ListedReport>) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    let Some(first) = rows.first() else { return Ok(Vec::new()) };
    let columns = ReportColumns::of(first)?;
    let mut reports = Vec::with_capacity(rows.len());
    reports.push(make(columns.read(first))?);
    for row in &rows[1..] {
        reports.push(make(columns.read_unchecked(row))?);
    }
    Ok(reports)
}

/// A report row for listings (read with `report_select_columns!`): the JSON columns come back as the text [`crate::json_text`] wrote
/// (compact, keys in order: what serializing the parsed value gives again), checked to be JSON but
/// not parsed into values.
pub(super) fn listed_report(row: &DbRow) -> StoreResult<ListedReport> {
    ReportColumns::of(row)?.read(row)
}

/// [`listed_report`] of every row, their columns found once for all of them.
pub(super) fn listed_reports(rows: &[DbRow]) -> StoreResult<Vec<ListedReport>> {
    each_report(rows, |row| row)
}

/// A column of a result by its position, found once by its name. Every row of one statement has
/// the same columns, and a column read by name is looked up by hashing the name, in every row: for
/// a page of 100 reports, 1,800 lookups, about 6% of the listing's instructions.
#[derive(Clone, Copy)]
struct At {
    name: &'static str,
    ordinal: usize,
}

impl At {
    fn of(row: &DbRow, name: &'static str) -> StoreResult<At> {
        use sqlx::Column;
        Ok(At { name, ordinal: row.try_column(name)?.ordinal() })
    }
}

impl std::fmt::Debug for At {
    /// As the name would be (decoding errors name the column with it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.name, f)
    }
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl sqlx::ColumnIndex<DbRow> for At {
    fn index(&self, row: &DbRow) -> Result<usize, sqlx::Error> {
        if self.ordinal < row.len() {
            Ok(self.ordinal)
        } else {
            Err(sqlx::Error::ColumnIndexOutOfBounds { index: self.ordinal, len: row.len() })
        }
    }
}

/// Where `report_select_columns!` are in a result.
pub(super) struct ReportColumns {
    id: At,
    project_id: At,
    channel_key: At,
    status: At,
    title: At,
    blocks: At,
    context: At,
    identity: At,
    identity_error: At,
    author: [At; 3],
    artifact_id: At,
    url: At,
    created_at: At,
    updated_at: At,
    assignee_id: At,
    labels: At,
}

impl ReportColumns {
    pub(super) fn of(row: &DbRow) -> StoreResult<ReportColumns> {
        let at = |name| At::of(row, name);
        Ok(ReportColumns {
            id: at("id")?,
            project_id: at("project_id")?,
            channel_key: at("channel_key")?,
            status: at("status")?,
            title: at("title")?,
            blocks: at("blocks")?,
            context: at("context")?,
            identity: at("identity")?,
            identity_error: at("identity_error")?,
            author: [at(AUTHOR[0])?, at(AUTHOR[1])?, at(AUTHOR[2])?],
            artifact_id: at("artifact_id")?,
            url: at("url")?,
            created_at: at("created_at")?,
            updated_at: at("updated_at")?,
            assignee_id: at("assignee_id")?,
            labels: at("labels")?,
        })
    }

    /// The report in `row`, a row of the result these positions were found in, each column's
    /// type checked against the one read from it (sqlx's `try_get`).
    pub(super) fn read(&self, row: &DbRow) -> StoreResult<ListedReport> {
        self.read_with::<true>(row)
    }

    /// [`Self::read`] for a later row of a result whose first row [`Self::read`] has read, without
    /// sqlx's type checks (`try_get_unchecked`): on PostgreSQL every row of a statement has the
    /// column types of its first, and on SQLite, whose values carry their own types, the
    /// store alone writes these columns. The values are still decoded as they come (text that is
    /// not UTF-8, JSON that does not parse, an unknown status: errors as before). Skipping them
    /// took a seventh off a PostgreSQL listing's instructions (see bench/README.md).
    pub(super) fn read_unchecked(&self, row: &DbRow) -> StoreResult<ListedReport> {
        self.read_with::<false>(row)
    }

    fn read_with<const CHECKED: bool>(&self, row: &DbRow) -> StoreResult<ListedReport> {
        let get = Get::<CHECKED>;
        let required = |column: At| raw_json_column(row, column)?.ok_or_else(|| corrupt(column, "null"));
        let [kind, id, label] = self.author;
        Ok(ListedReport {
            id: get.get(row, self.id)?,
            project_id: get.get(row, self.project_id)?,
            channel_key: get.get(row, self.channel_key)?,
            status: status_of(get.get(row, self.status)?, self.status)?,
            title: get.get(row, self.title)?,
            blocks: required(self.blocks)?,
            context: required(self.context)?,
            identity: raw_json_column(row, self.identity)?,
            identity_error: get.get(row, self.identity_error)?,
            author: Author {
                kind: author_kind_of(get.get(row, kind)?, kind)?,
                id: get.get(row, id)?,
                label: get.get(row, label)?,
            },
            artifact_id: get.get(row, self.artifact_id)?,
            url: get.get(row, self.url)?,
            created_at: get.get(row, self.created_at)?,
            updated_at: get.get(row, self.updated_at)?,
            assignee: get.get(row, self.assignee_id)?,
            labels: optional_json::<Vec<String>>(get.get(row, self.labels), self.labels)?.unwrap_or_default(),
        })
    }
}

/// How [`ReportColumns`] reads a column: with sqlx's type check (`Row::try_get`) or without it
/// (`Row::try_get_unchecked`).
#[derive(Clone, Copy)]
struct Get<const CHECKED: bool>;

impl<const CHECKED: bool> Get<CHECKED> {
    fn get<'r, T>(self, row: &'r DbRow, column: At) -> Result<T, sqlx::Error>
    where
        T: sqlx::Decode<'r, super::Db> + sqlx::Type<super::Db>,
    {
        if CHECKED { row.try_get(column) } else { row.try_get_unchecked(column) }
    }
}

/// A report's `labels` column: a JSON array of strings, NULL when it has none.
pub(super) fn labels(row: &DbRow) -> StoreResult<Vec<String>> {
    labels_in(row, "labels")
}

fn labels_in(row: &DbRow, column: impl Column) -> StoreResult<Vec<String>> {
    Ok(optional_json_column::<Vec<String>>(row, column)?.unwrap_or_default())
}

pub(super) fn status_change(row: &DbRow) -> StoreResult<StatusChange> {
    Ok(StatusChange {
        report_id: row.try_get("report_id")?,
        from_status: status(row, "from_status")?,
        to_status: status(row, "to_status")?,
        by: author(row, CHANGED_BY)?,
        at: row.try_get("at")?,
    })
}

pub(super) fn room(row: &DbRow) -> StoreResult<Room> {
    Ok(Room {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        artifact_id: row.try_get("artifact_id")?,
        title: row.try_get("title")?,
        meta: optional_json_column(row, "meta")?,
        archived: row.try_get("archived")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn api_key(row: &DbRow) -> StoreResult<ApiKey> {
    let origin: &str = row.try_get("origin")?;
    Ok(ApiKey {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        key_hash: row.try_get("key_hash")?,
        scopes: json_column(row, "scopes")?,
        origin: KeyOrigin::parse(origin).ok_or_else(|| corrupt("origin", format_args!("unknown {origin:?}")))?,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
        agent_name: row.try_get("agent_name")?,
        agent_owner: row.try_get("agent_owner")?,
        created_at: row.try_get("created_at")?,
    })
}

pub(super) fn hint(row: &DbRow) -> StoreResult<Hint> {
    Ok(Hint {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        channel_key: row.try_get("channel_key")?,
        weight: HintWeight::from_db(row.try_get("weight")?),
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

pub(super) fn comment(row: &DbRow) -> StoreResult<Comment> {
    Ok(Comment {
        id: row.try_get("id")?,
        report_id: row.try_get("report_id")?,
        project_id: row.try_get("project_id")?,
        author: author(row, AUTHOR)?,
        text: row.try_get("text")?,
        kind: row.try_get("kind")?,
        draft: row.try_get("draft")?,
        created_at: row.try_get("created_at")?,
        published_at: row.try_get("published_at")?,
    })
}

pub(super) fn flag(row: &DbRow) -> StoreResult<Flag> {
    Ok(Flag {
        project_id: row.try_get("project_id")?,
        key: row.try_get("key")?,
        enabled: row.try_get("enabled")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn blob(row: &DbRow) -> StoreResult<Blob> {
    Ok(Blob {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        kind: row.try_get("kind")?,
        mime: row.try_get("mime")?,
        bytes: row.try_get("bytes")?,
        width: row.try_get("width")?,
        height: row.try_get("height")?,
        duration_ms: row.try_get("duration_ms")?,
        name: row.try_get("name")?,
        report_id: row.try_get("report_id")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Maps every row with `map`, stopping at the first that does not fit.
pub(super) fn all<T>(rows: &[DbRow], map: fn(&DbRow) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    rows.iter().map(map).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The joined project's aliases name the same columns as `project_columns!`, in its order.
    #[test]
    fn the_joined_project_columns_are_the_project_columns_renamed() {
        let plain: Vec<&str> = project_columns!().split(", ").collect();
        assert_eq!(plain, PROJECT);
        let joined: Vec<(String, String)> = key_project_columns!()
            .split(", ")
            .map(|column| {
                let (source, alias) = column.split_once(" AS ").expect("an alias");
                (source.to_string(), alias.to_string())
            })
            .collect();
        let expected: Vec<(String, String)> =
            PROJECT.iter().zip(KEY_PROJECT).map(|(name, alias)| (format!("p.{name}"), alias.to_string())).collect();
        assert_eq!(joined, expected);
    }
}
