//! Column lists and row → model mapping. Every query selects the columns named here, so the
//! mapping functions can read them by name.

use crate::{StoreError, StoreResult};
use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use svc_core::model::*;

// Column lists as macros so they can be spliced into `&'static str` queries with `concat!`.
macro_rules! organization_columns {
    () => {
        "id, name, created_at"
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
macro_rules! report_columns {
    () => {
        "id, project_id, channel_key, status, title, blocks, context, identity, identity_error, \
         author_kind, author_id, author_label, artifact_id, url, created_at, updated_at"
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
pub(super) use {
    blob_columns, channel_columns, comment_columns, flag_columns, hint_columns, key_columns, organization_columns,
    project_columns, report_columns, room_columns, status_change_columns,
};

pub(super) fn organization(row: &PgRow) -> StoreResult<Organization> {
    Ok(Organization { id: row.try_get("id")?, name: row.try_get("name")?, created_at: row.try_get("created_at")? })
}

pub(super) fn project(row: &PgRow) -> StoreResult<Project> {
    Ok(Project {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        slug: row.try_get("slug")?,
        project_key: row.try_get("project_key")?,
        url_patterns: row.try_get::<Json<Vec<String>>, _>("url_patterns")?.0,
        default_channel_key: row.try_get("default_channel_key")?,
        widget_config: row.try_get("widget_config")?,
        allowed_origins: row.try_get::<Json<Vec<String>>, _>("allowed_origins")?.0,
        identity_secret: row.try_get("identity_secret")?,
        created_at: row.try_get("created_at")?,
    })
}

pub(super) fn channel(row: &PgRow) -> StoreResult<Channel> {
    Ok(Channel {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        key: row.try_get("key")?,
        name: row.try_get("name")?,
        color: row.try_get("color")?,
        mascot: row.try_get("mascot")?,
        base_weight: row.try_get("base_weight")?,
        matchers: row.try_get("matchers")?,
        archived: row.try_get("archived")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// An author stored as three columns `<prefix>_kind`, `<prefix>_id`, `<prefix>_label`.
fn author(row: &PgRow, prefix: &str) -> StoreResult<Author> {
    // The two prefixes in use get their column names without formatting them on every row.
    let [kind, id, label] = match prefix {
        "author" => ["author_kind", "author_id", "author_label"].map(std::borrow::Cow::Borrowed),
        "by" => ["by_kind", "by_id", "by_label"].map(std::borrow::Cow::Borrowed),
        _ => ["kind", "id", "label"].map(|field| std::borrow::Cow::Owned(format!("{prefix}_{field}"))),
    };
    Ok(Author { kind: row.try_get(&*kind)?, id: row.try_get(&*id)?, label: row.try_get(&*label)? })
}

pub(super) fn report(row: &PgRow) -> StoreResult<Report> {
    listed_report(row)?.try_into()
}

/// A report row for listings: the JSON columns (type `json`, which keeps its input text) come back
/// as the text [`crate::json_text`] wrote, checked to be JSON but not parsed into values.
pub(super) fn listed_report(row: &PgRow) -> StoreResult<crate::ListedReport> {
    type Raw = Json<Box<serde_json::value::RawValue>>;
    Ok(crate::ListedReport {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        channel_key: row.try_get("channel_key")?,
        status: row.try_get("status")?,
        title: row.try_get("title")?,
        blocks: row.try_get::<Raw, _>("blocks")?.0,
        context: row.try_get::<Raw, _>("context")?.0,
        identity: row.try_get::<Option<Raw>, _>("identity")?.map(|raw| raw.0),
        identity_error: row.try_get("identity_error")?,
        author: author(row, "author")?,
        artifact_id: row.try_get("artifact_id")?,
        url: row.try_get("url")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn status_change(row: &PgRow) -> StoreResult<StatusChange> {
    Ok(StatusChange {
        report_id: row.try_get("report_id")?,
        from_status: row.try_get("from_status")?,
        to_status: row.try_get("to_status")?,
        by: author(row, "by")?,
        at: row.try_get("at")?,
    })
}

pub(super) fn room(row: &PgRow) -> StoreResult<Room> {
    Ok(Room {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        artifact_id: row.try_get("artifact_id")?,
        title: row.try_get("title")?,
        meta: row.try_get::<Option<Value>, _>("meta")?,
        archived: row.try_get("archived")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn api_key(row: &PgRow) -> StoreResult<ApiKey> {
    let id: String = row.try_get("id")?;
    let origin_text: String = row.try_get("origin")?;
    let origin = KeyOrigin::parse(&origin_text)
        .ok_or_else(|| StoreError::Corrupt(format!("api key {id} has unknown origin {origin_text:?}")))?;
    Ok(ApiKey {
        project_id: row.try_get("project_id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        key_hash: row.try_get("key_hash")?,
        scopes: row.try_get::<Json<Vec<String>>, _>("scopes")?.0,
        origin,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
        agent_name: row.try_get("agent_name")?,
        agent_owner: row.try_get("agent_owner")?,
        created_at: row.try_get("created_at")?,
        id,
    })
}

pub(super) fn hint(row: &PgRow) -> StoreResult<Hint> {
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

pub(super) fn comment(row: &PgRow) -> StoreResult<Comment> {
    Ok(Comment {
        id: row.try_get("id")?,
        report_id: row.try_get("report_id")?,
        project_id: row.try_get("project_id")?,
        author: author(row, "author")?,
        text: row.try_get("text")?,
        kind: row.try_get("kind")?,
        draft: row.try_get("draft")?,
        created_at: row.try_get("created_at")?,
        published_at: row.try_get("published_at")?,
    })
}

pub(super) fn flag(row: &PgRow) -> StoreResult<Flag> {
    Ok(Flag {
        project_id: row.try_get("project_id")?,
        key: row.try_get("key")?,
        enabled: row.try_get("enabled")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn blob(row: &PgRow) -> StoreResult<Blob> {
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

/// Maps every row with `map`, stopping at the first error.
pub(super) fn all<T>(rows: &[PgRow], map: fn(&PgRow) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    rows.iter().map(map).collect()
}
