//! Mapping between SQLite rows and the domain records: JSON columns are TEXT, booleans INTEGER 0/1.

use serde::de::DeserializeOwned;
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use svc_core::model::*;

use crate::{StoreError, StoreResult};

// Column lists as macros so they can be `concat!`ed into `&'static str` queries.
macro_rules! report_columns {
    () => {
        "id, project_id, channel_key, status, title, blocks, context, identity, identity_error, \
         author_kind, author_id, author_label, artifact_id, url, created_at, updated_at"
    };
}
macro_rules! project_columns {
    () => {
        "id, org_id, name, slug, project_key, url_patterns, default_channel_key, widget_config, \
         allowed_origins, identity_secret, created_at"
    };
}
macro_rules! channel_columns {
    () => {
        "id, project_id, key, name, color, mascot, base_weight, matchers, archived, created_at, updated_at"
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
macro_rules! comment_columns {
    () => {
        "id, report_id, project_id, author_kind, author_id, author_label, text, kind, draft, created_at, \
         published_at"
    };
}
macro_rules! blob_columns {
    () => {
        "id, project_id, kind, mime, bytes, width, height, duration_ms, name, report_id, created_at"
    };
}
pub(crate) use {
    blob_columns, channel_columns, comment_columns, key_columns, project_columns, report_columns, room_columns,
};

pub(crate) use crate::json_text;

fn parse_json<T: DeserializeOwned>(text: &str, column: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt(format!("{column}: {error}")))
}

// JSON columns are parsed straight from the row's text (no copy into a String first).
fn json_column<T: DeserializeOwned>(row: &SqliteRow, column: &str) -> StoreResult<T> {
    let text: &str = row.try_get(column)?;
    parse_json(text, column)
}

fn optional_json_column(row: &SqliteRow, column: &str) -> StoreResult<Option<Value>> {
    let text: Option<&str> = row.try_get(column)?;
    text.map(|text| parse_json(text, column)).transpose()
}

fn author_columns(row: &SqliteRow, prefix: &str) -> StoreResult<Author> {
    // The two prefixes in use get their column names without formatting them on every row.
    let [kind, id, label] = match prefix {
        "author" => ["author_kind", "author_id", "author_label"].map(std::borrow::Cow::Borrowed),
        "by" => ["by_kind", "by_id", "by_label"].map(std::borrow::Cow::Borrowed),
        _ => ["kind", "id", "label"].map(|field| std::borrow::Cow::Owned(format!("{prefix}_{field}"))),
    };
    Ok(Author { kind: row.try_get(&*kind)?, id: row.try_get(&*id)?, label: row.try_get(&*label)? })
}

pub(crate) fn organization(row: &SqliteRow) -> StoreResult<Organization> {
    Ok(Organization { id: row.try_get("id")?, name: row.try_get("name")?, created_at: row.try_get("created_at")? })
}

pub(crate) fn project(row: &SqliteRow) -> StoreResult<Project> {
    Ok(Project {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        slug: row.try_get("slug")?,
        project_key: row.try_get("project_key")?,
        url_patterns: json_column(row, "url_patterns")?,
        default_channel_key: row.try_get("default_channel_key")?,
        widget_config: json_column(row, "widget_config")?,
        allowed_origins: json_column(row, "allowed_origins")?,
        identity_secret: row.try_get("identity_secret")?,
        created_at: row.try_get("created_at")?,
    })
}

pub(crate) fn channel(row: &SqliteRow) -> StoreResult<Channel> {
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

pub(crate) fn report(row: &SqliteRow) -> StoreResult<Report> {
    listed_report(row)?.try_into()
}

/// JSON text of a column, checked to be JSON but not parsed into a value.
fn raw_json_column(row: &SqliteRow, column: &str) -> StoreResult<Box<serde_json::value::RawValue>> {
    let text: String = row.try_get(column)?;
    serde_json::value::RawValue::from_string(text).map_err(|error| StoreError::Corrupt(format!("{column}: {error}")))
}

/// A report row for listings: the JSON columns stay text. They were written by [`json_text`]
/// (compact, keys in order), which is what serializing the parsed value gives again.
pub(crate) fn listed_report(row: &SqliteRow) -> StoreResult<crate::ListedReport> {
    let identity: Option<String> = row.try_get("identity")?;
    Ok(crate::ListedReport {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        channel_key: row.try_get("channel_key")?,
        status: row.try_get("status")?,
        title: row.try_get("title")?,
        blocks: raw_json_column(row, "blocks")?,
        context: raw_json_column(row, "context")?,
        identity: identity
            .map(|text| {
                serde_json::value::RawValue::from_string(text)
                    .map_err(|error| StoreError::Corrupt(format!("identity: {error}")))
            })
            .transpose()?,
        identity_error: row.try_get("identity_error")?,
        author: author_columns(row, "author")?,
        artifact_id: row.try_get("artifact_id")?,
        url: row.try_get("url")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(crate) fn status_change(row: &SqliteRow) -> StoreResult<StatusChange> {
    Ok(StatusChange {
        report_id: row.try_get("report_id")?,
        from_status: row.try_get("from_status")?,
        to_status: row.try_get("to_status")?,
        by: author_columns(row, "by")?,
        at: row.try_get("at")?,
    })
}

pub(crate) fn room(row: &SqliteRow) -> StoreResult<Room> {
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

pub(crate) fn api_key(row: &SqliteRow) -> StoreResult<ApiKey> {
    let origin: String = row.try_get("origin")?;
    Ok(ApiKey {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        key_hash: row.try_get("key_hash")?,
        scopes: json_column(row, "scopes")?,
        origin: KeyOrigin::parse(&origin).ok_or_else(|| StoreError::Corrupt(format!("key origin {origin:?}")))?,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
        agent_name: row.try_get("agent_name")?,
        agent_owner: row.try_get("agent_owner")?,
        created_at: row.try_get("created_at")?,
    })
}

pub(crate) fn hint(row: &SqliteRow) -> StoreResult<Hint> {
    let weight: String = row.try_get("weight")?;
    Ok(Hint {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        channel_key: row.try_get("channel_key")?,
        weight: HintWeight::from_db(&weight),
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

pub(crate) fn comment(row: &SqliteRow) -> StoreResult<Comment> {
    Ok(Comment {
        id: row.try_get("id")?,
        report_id: row.try_get("report_id")?,
        project_id: row.try_get("project_id")?,
        author: author_columns(row, "author")?,
        text: row.try_get("text")?,
        kind: row.try_get("kind")?,
        draft: row.try_get("draft")?,
        created_at: row.try_get("created_at")?,
        published_at: row.try_get("published_at")?,
    })
}

pub(crate) fn flag(row: &SqliteRow) -> StoreResult<Flag> {
    Ok(Flag {
        project_id: row.try_get("project_id")?,
        key: row.try_get("key")?,
        enabled: row.try_get("enabled")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(crate) fn blob(row: &SqliteRow) -> StoreResult<Blob> {
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

/// Maps rows with `map`, stopping at the first row that does not fit.
pub(crate) fn all<T>(rows: &[SqliteRow], map: fn(&SqliteRow) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    rows.iter().map(map).collect()
}
