//! The event feed (`svc_core::event`): writing events inside a change's transaction, reading them
//! in id order, and the consumers' positions and leases. Compiled per backend like `queries.rs`.
//!
//! Ids follow commit order: on SQLite because there is one writer; on PostgreSQL because every
//! transaction takes the same advisory lock before its first event and holds it until it commits
//! (`super::order_events`), so no transaction can commit an id below one already visible.

use async_trait::async_trait;
use sqlx::Row;
use svc_core::event::{Event, EventKind, NewEvent};
use svc_core::model::Author;

use super::{Db, DbRow, ThisStore, map_write_error};
use crate::{EventStore, StoreError, StoreResult};

/// A write transaction of this backend.
pub(super) type Tx = sqlx::Transaction<'static, Db>;

macro_rules! event_columns {
    () => {
        "project_id, report_id, type, data, by_kind, by_id, by_label, at"
    };
}

/// Rows per multi-row INSERT of events (8 parameters each).
const EVENTS_PER_STATEMENT: usize = 500;

/// This backend's connection (a transaction dereferences to it).
pub(super) type Connection = <Db as sqlx::Database>::Connection;

/// Writes `events` inside the transaction open on `conn`, in order, after taking the feed's order
/// (see the module notes).
pub(super) async fn insert_events(conn: &mut Connection, events: &[NewEvent]) -> StoreResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    super::order_events(&mut *conn).await?;
    for chunk in events.chunks(EVENTS_PER_STATEMENT) {
        let mut query = sqlx::QueryBuilder::<Db>::new(concat!("INSERT INTO events (", event_columns!(), ") "));
        query.push_values(chunk, |mut row, event| {
            row.push_bind(event.project_id.clone())
                .push_bind(event.report_id.clone())
                .push_bind(event.kind.type_name())
                .push_bind(event.kind.data().to_string())
                .push_bind(event.by.kind.as_str())
                .push_bind(event.by.id.clone())
                .push_bind(event.by.label.clone())
                .push_bind(event.at);
        });
        query.build().execute(&mut *conn).await.map_err(map_write_error)?;
    }
    Ok(())
}

fn event(row: &DbRow) -> StoreResult<Event> {
    let type_name: String = row.try_get("type")?;
    let data: String = row.try_get("data")?;
    let data: serde_json::Value =
        serde_json::from_str(&data).map_err(|error| StoreError::Corrupt(format!("events.data: {error}")))?;
    let kind = EventKind::from_parts(&type_name, data).map_err(|error| StoreError::Corrupt(error.0))?;
    Ok(Event {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        report_id: row.try_get("report_id")?,
        kind,
        by: Author {
            kind: super::rows::author_kind(row, "by_kind")?,
            id: row.try_get("by_id")?,
            label: row.try_get("by_label")?,
        },
        at: row.try_get("at")?,
    })
}

#[async_trait]
impl EventStore for ThisStore {
    async fn list_events(&self, project_ids: Option<&[String]>, after: i64, limit: u32) -> StoreResult<Vec<Event>> {
        let mut query =
            sqlx::QueryBuilder::<Db>::new(concat!("SELECT id, ", event_columns!(), " FROM events WHERE id > "));
        query.push_bind(after);
        if let Some(project_ids) = project_ids {
            if project_ids.is_empty() {
                return Ok(Vec::new());
            }
            query.push(" AND project_id IN ");
            super::queries::push_list(&mut query, project_ids);
        }
        query.push(" ORDER BY id LIMIT ").push_bind(i64::from(limit));
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(event).collect()
    }

    async fn last_event_id(&self) -> StoreResult<i64> {
        let last: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM events").fetch_one(self.read_pool()).await?;
        Ok(last.unwrap_or(0))
    }

    async fn lease_consumer(&self, name: &str, owner: &str, now: i64, until: i64) -> StoreResult<Option<i64>> {
        // A position kept apart (SQLite's webhook consumer) is copied here with each lease, so a
        // file of deliveries lost or never restored starts again from near where it was.
        let kept_apart = self.position_kept_apart(name).await?;
        let mut tx = self.begin_write().await?;
        // A consumer starts at the feed's end: it acts on what happens from then on.
        sqlx::query(
            "INSERT INTO event_consumers (name, position, lease_owner, lease_until) \
             SELECT $1, COALESCE(max(id), 0), NULL, 0 FROM events WHERE TRUE ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        let position: Option<i64> = sqlx::query_scalar(
            "UPDATE event_consumers SET lease_owner = $2, lease_until = $4, \
             position = CASE WHEN $5 > position THEN $5 ELSE position END \
             WHERE name = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until <= $3) RETURNING position",
        )
        .bind(name)
        .bind(owner)
        .bind(now)
        .bind(until)
        .bind(kept_apart)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_write_error)?;
        self.commit_write(tx).await?;
        Ok(position.map(|position| kept_apart.unwrap_or(position)))
    }

    async fn release_consumer(&self, name: &str, owner: &str) -> StoreResult<()> {
        sqlx::query(
            "UPDATE event_consumers SET lease_owner = NULL, lease_until = 0 WHERE name = $1 AND lease_owner = $2",
        )
        .bind(name)
        .bind(owner)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn take_lease(&self, name: &str, owner: &str, now: i64, until: i64) -> StoreResult<bool> {
        let taken = sqlx::query(
            "INSERT INTO leases (name, owner, until) VALUES ($1, $2, $4) \
             ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until \
             WHERE leases.owner = excluded.owner OR leases.until <= $3",
        )
        .bind(name)
        .bind(owner)
        .bind(now)
        .bind(until)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(taken.rows_affected() == 1)
    }

    async fn consumer_position(&self, name: &str) -> StoreResult<Option<i64>> {
        if let Some(position) = self.position_kept_apart(name).await? {
            return Ok(Some(position));
        }
        Ok(sqlx::query_scalar("SELECT position FROM event_consumers WHERE name = $1")
            .bind(name)
            .fetch_optional(self.read_pool())
            .await?)
    }

    async fn delete_events_before(&self, at: i64) -> StoreResult<u64> {
        // Never an event a consumer has still to read (the one whose position is kept apart is
        // read first: it only grows, so this may keep a few too many, never too few).
        let (apart, apart_position) = self.lowest_position_kept_apart().await?;
        let done = sqlx::query(
            "DELETE FROM events WHERE at < $1 AND id <= $3 \
             AND id <= COALESCE((SELECT min(position) FROM event_consumers WHERE name <> $2), (SELECT max(id) FROM events))",
        )
        .bind(at)
        .bind(apart)
        .bind(apart_position.unwrap_or(i64::MAX))
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(done.rows_affected())
    }
}

/// Moves a leased consumer to `to` in `tx`; `LeaseLost` when `owner` no longer holds it (another
/// instance took it over: this change must not happen twice).
pub(super) async fn advance_consumer(tx: &mut Tx, name: &str, owner: &str, to: i64) -> StoreResult<()> {
    let sql = if super::keeps_apart(name) {
        // In the deliveries' file, beside the deliveries; the lease stays with the others.
        "UPDATE feed_positions SET position = $3 WHERE name = $1 AND position <= $3 \
         AND EXISTS (SELECT 1 FROM event_consumers WHERE name = $1 AND lease_owner = $2)"
    } else {
        "UPDATE event_consumers SET position = $3 WHERE name = $1 AND lease_owner = $2 AND position <= $3"
    };
    let done = sqlx::query(sql).bind(name).bind(owner).bind(to).execute(&mut **tx).await.map_err(map_write_error)?;
    if done.rows_affected() == 0 { Err(StoreError::LeaseLost(name.to_string())) } else { Ok(()) }
}
