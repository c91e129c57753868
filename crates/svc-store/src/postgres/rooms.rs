//! Rooms: stored rows plus implicit rooms derived from the artifact ids of reports.

use super::db_error;
use super::rows::{all, room, room_columns};
use crate::StoreResult;
use sqlx::{PgPool, Row};
use std::collections::HashMap;
use svc_core::model::*;

pub(super) async fn upsert_room(pool: &PgPool, new_room: &Room, changes: &RoomChanges) -> StoreResult<(Room, bool)> {
    let mut tx = pool.begin().await?;
    let inserted = sqlx::query(concat!(
        "INSERT INTO rooms (",
        room_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (project_id, artifact_id) DO NOTHING RETURNING ",
        room_columns!()
    ))
    .bind(&new_room.id)
    .bind(&new_room.project_id)
    .bind(&new_room.artifact_id)
    .bind(&new_room.title)
    .bind(&new_room.meta)
    .bind(new_room.archived)
    .bind(new_room.created_at)
    .bind(new_room.updated_at)
    .fetch_optional(&mut *tx)
    .await
    .map_err(db_error)?;
    if let Some(row) = inserted {
        let stored = room(&row)?;
        tx.commit().await?;
        return Ok((stored, true));
    }

    // The room exists (the conflicting row is committed, so the UPDATE finds it): apply only the
    // given fields. `updated_at` moves only when something changed.
    let has_changes = changes.title.is_some() || changes.meta.is_some() || changes.archived.is_some();
    let (meta_given, meta) = match &changes.meta {
        Some(meta) => (true, meta.as_ref()),
        None => (false, None),
    };
    let row = sqlx::query(concat!(
        "UPDATE rooms SET title = COALESCE($3, title), meta = CASE WHEN $4 THEN $5 ELSE meta END, \
         archived = COALESCE($6, archived), updated_at = CASE WHEN $7 THEN $8 ELSE updated_at END \
         WHERE project_id = $1 AND artifact_id = $2 RETURNING ",
        room_columns!()
    ))
    .bind(&new_room.project_id)
    .bind(&new_room.artifact_id)
    .bind(&changes.title)
    .bind(meta_given)
    .bind(meta)
    .bind(changes.archived)
    .bind(has_changes)
    .bind(new_room.updated_at)
    .fetch_one(&mut *tx)
    .await?;
    let stored = room(&row)?;
    tx.commit().await?;
    Ok((stored, false))
}

/// Report count and newest report time of one artifact id.
struct ReportActivity {
    count: i64,
    last_created_at: i64,
}

pub(super) async fn list_rooms(
    pool: &PgPool,
    project_id: &str,
    include_archived: bool,
) -> StoreResult<Vec<RoomSummary>> {
    // One snapshot for both queries, so a report filed in between is not half-counted.
    let mut tx = pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    // One grouped pass over the (project_id, artifact_id) index instead of a query per room.
    let activity_rows = sqlx::query(
        "SELECT artifact_id, count(*) AS report_count, max(created_at) AS last_created_at FROM reports \
         WHERE project_id = $1 AND artifact_id IS NOT NULL GROUP BY artifact_id",
    )
    .bind(project_id)
    .fetch_all(&mut *tx)
    .await?;
    let mut activity = HashMap::with_capacity(activity_rows.len());
    for row in &activity_rows {
        let artifact_id: String = row.try_get("artifact_id")?;
        let count: i64 = row.try_get("report_count")?;
        let last_created_at: i64 = row.try_get("last_created_at")?;
        activity.insert(artifact_id, ReportActivity { count, last_created_at });
    }

    // Archived stored rooms are read too: they hide their implicit counterpart.
    let stored_rows = sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = $1"))
        .bind(project_id)
        .fetch_all(&mut *tx)
        .await?;
    tx.commit().await?;
    let stored = all(&stored_rows, room)?;

    let mut summaries = Vec::with_capacity(stored.len() + activity.len());
    for stored_room in stored {
        let reports = activity.remove(&stored_room.artifact_id);
        if stored_room.archived && !include_archived {
            continue;
        }
        let (count, last_activity) = match reports {
            Some(reports) => (reports.count, reports.last_created_at.max(stored_room.updated_at)),
            None => (0, stored_room.updated_at),
        };
        summaries.push(RoomSummary {
            id: Some(stored_room.id),
            artifact_id: stored_room.artifact_id,
            title: stored_room.title,
            meta: stored_room.meta,
            archived: stored_room.archived,
            last_activity,
            count,
        });
    }
    // What is left exists only through reports: implicit, titled by its artifact id, never archived.
    summaries.extend(activity.into_iter().map(|(artifact_id, reports)| RoomSummary {
        id: None,
        title: artifact_id.clone(),
        artifact_id,
        meta: None,
        archived: false,
        last_activity: reports.last_created_at,
        count: reports.count,
    }));
    summaries.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then_with(|| a.artifact_id.cmp(&b.artifact_id)));
    Ok(summaries)
}
