//! Deleting a project, or a project's oldest reports (retention), with everything attached to
//! them: written once, compiled per backend like `queries.rs`. What only one backend has (SQLite's
//! FTS5 rows keyed by rowid, its short-id table and its indexers' progress marks; PostgreSQL's
//! indexer lock) is in each backend's `deletion_index.rs`, under the same names.
//!
//! Every table that names a report or a project is covered here: a new table that does must be
//! added (the conformance test `deleting_a_project_leaves_nothing_of_it` counts rows per table).

use async_trait::async_trait;
use sqlx::{QueryBuilder, Row};
use std::collections::BTreeSet;
use svc_core::model::Project;

use super::rows::{self, project_columns};
use super::{Db, ThisStore, deletion_index};
use crate::{DeletedReports, DeletionStore, StoreError, StoreResult};

type Conn = <Db as sqlx::Database>::Connection;

/// Reports per statement list (a few parameters each, well under both databases' limits).
const REPORTS_PER_ROUND: usize = 500;
/// Blob ids per statement when queuing them.
const BLOB_IDS_PER_STATEMENT: usize = 500;

/// `(id, id, ...)` with each id bound.
fn push_list(query: &mut QueryBuilder<Db>, ids: impl IntoIterator<Item = String>) {
    query.push("(");
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(id);
    }
    query.push(")");
}

/// Runs `<statement> (ids...)`, e.g. `DELETE FROM comments WHERE report_id IN `.
async fn run_with_list(conn: &mut Conn, statement: &str, ids: &[String]) -> StoreResult<u64> {
    let mut query = QueryBuilder::<Db>::new(statement);
    push_list(&mut query, ids.iter().cloned());
    Ok(query.build().execute(&mut *conn).await?.rows_affected())
}

/// The report id before which every id is older than `ms`: ids begin with their creation time in
/// 12 hex digits (decisions §2), so `id < prefix` keeps the walk on the `(project_id, id)` index.
fn id_prefix_at(ms: i64) -> String {
    format!("{:012x}", ms.clamp(0, 0xffff_ffff_ffff))
}

/// The oldest `limit` reports of the project (created before `created_before` when given), their
/// rows locked where the backend locks rows: their ids and the keys of their labels.
async fn victims(
    conn: &mut Conn,
    project_id: &str,
    created_before: Option<i64>,
    limit: usize,
) -> StoreResult<(Vec<String>, BTreeSet<String>)> {
    let mut query = QueryBuilder::<Db>::new("SELECT id, labels FROM reports WHERE project_id = ");
    query.push_bind(project_id.to_string());
    if let Some(before) = created_before {
        // Both: the id bound walks the index, the time is what the rule says.
        query.push(" AND id < ").push_bind(id_prefix_at(before));
        query.push(" AND created_at < ").push_bind(before);
    }
    query.push(" ORDER BY id LIMIT ").push_bind(limit as i64).push(for_update!());
    let found = query.build().fetch_all(&mut *conn).await?;
    let mut ids = Vec::with_capacity(found.len());
    let mut label_keys = BTreeSet::new();
    for row in &found {
        ids.push(row.try_get::<String, _>("id")?);
        label_keys.extend(rows::labels(row)?.iter().map(|label| svc_core::triage::key(label)));
    }
    Ok((ids, label_keys))
}

/// Deletes these reports of the project and what hangs off them; returns their blobs' ids (the
/// rows deleted). The caller queues the blob ids and commits.
async fn delete_these(
    conn: &mut Conn,
    project_id: &str,
    ids: &[String],
    label_keys: &BTreeSet<String>,
) -> StoreResult<Vec<String>> {
    deletion_index::forget_reports(&mut *conn, ids).await?;
    run_with_list(conn, "DELETE FROM status_changes WHERE report_id IN ", ids).await?;
    run_with_list(conn, "DELETE FROM viewed_marks WHERE report_id IN ", ids).await?;
    run_with_list(conn, "DELETE FROM issue_links WHERE report_id IN ", ids).await?;
    run_with_list(conn, "DELETE FROM report_duplicates WHERE report_id IN ", ids).await?;
    run_with_list(conn, "DELETE FROM report_duplicates WHERE original_id IN ", ids).await?;
    // Deleting comments marks their reports stale for search (a trigger); those marks go next.
    run_with_list(conn, "DELETE FROM comments WHERE report_id IN ", ids).await?;
    run_with_list(conn, "DELETE FROM search_stale WHERE report_id IN ", ids).await?;
    if !label_keys.is_empty() {
        // The labels column names the rows' keys, so the delete walks the primary key.
        let mut query = QueryBuilder::<Db>::new("DELETE FROM report_labels WHERE label_key IN ");
        push_list(&mut query, label_keys.iter().cloned());
        query.push(" AND report_id IN ");
        push_list(&mut query, ids.iter().cloned());
        query.build().execute(&mut *conn).await?;
    }
    let mut query = QueryBuilder::<Db>::new("DELETE FROM idempotency_keys WHERE project_id = ");
    query.push_bind(project_id.to_string()).push(" AND report_id IN ");
    push_list(&mut query, ids.iter().cloned());
    query.build().execute(&mut *conn).await?;
    let mut query = QueryBuilder::<Db>::new("DELETE FROM blobs WHERE report_id IN ");
    push_list(&mut query, ids.iter().cloned());
    query.push(" RETURNING id");
    let blob_ids: Vec<String> = query.build_query_scalar().fetch_all(&mut *conn).await?;
    let mut query = QueryBuilder::<Db>::new("SELECT artifact_id, count(*) FROM reports WHERE id IN ");
    push_list(&mut query, ids.iter().cloned());
    query.push(" AND artifact_id IS NOT NULL GROUP BY artifact_id");
    let rooms: Vec<(String, i64)> = query.build_query_as().fetch_all(&mut *conn).await?;
    run_with_list(conn, "DELETE FROM reports WHERE id IN ", ids).await?;
    forget_room_activity(conn, project_id, &rooms).await?;
    Ok(blob_ids)
}

/// Takes deleted reports out of their rooms' counts (see migration 0017): once per artifact, the
/// newest report read again from what is left; a room left with no report loses its row.
async fn forget_room_activity(conn: &mut Conn, project_id: &str, rooms: &[(String, i64)]) -> StoreResult<()> {
    for (artifact_id, deleted) in rooms {
        sqlx::query(
            "UPDATE room_activity SET report_count = report_count - $3, last_report_at = COALESCE(\
             (SELECT max(created_at) FROM reports WHERE project_id = $1 AND artifact_id = $2), last_report_at) \
             WHERE project_id = $1 AND artifact_id = $2",
        )
        .bind(project_id)
        .bind(artifact_id)
        .bind(deleted)
        .execute(&mut *conn)
        .await?;
    }
    if !rooms.is_empty() {
        sqlx::query("DELETE FROM room_activity WHERE project_id = $1 AND report_count <= 0")
            .bind(project_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Queues blob ids for deletion from the blob store (see `DeletionStore::pending_blob_deletions`).
async fn queue_blob_deletions(conn: &mut Conn, blob_ids: &[String], now: i64) -> StoreResult<()> {
    for chunk in blob_ids.chunks(BLOB_IDS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Db>::new("INSERT INTO blob_deletions (blob_id, queued_at) ");
        query.push_values(chunk, |mut row, id| {
            row.push_bind(id.clone()).push_bind(now);
        });
        query.push(" ON CONFLICT (blob_id) DO NOTHING");
        query.build().execute(&mut *conn).await?;
    }
    Ok(())
}

/// Deletes up to `limit` of the project's oldest reports (see `delete_reports`), inside the
/// caller's transaction; the blob ids are queued.
async fn delete_reports_in(
    conn: &mut Conn,
    project_id: &str,
    created_before: Option<i64>,
    limit: usize,
) -> StoreResult<DeletedReports> {
    let mut deleted = DeletedReports::default();
    while (deleted.reports as usize) < limit {
        let round = REPORTS_PER_ROUND.min(limit - deleted.reports as usize);
        let (ids, label_keys) = victims(conn, project_id, created_before, round).await?;
        if ids.is_empty() {
            break;
        }
        let blob_ids = delete_these(conn, project_id, &ids, &label_keys).await?;
        queue_blob_deletions(conn, &blob_ids, svc_core::time::now_ms()).await?;
        deleted.reports += ids.len() as u64;
        deleted.blob_ids.extend(blob_ids);
        deleted.report_ids.extend(ids.iter().cloned());
        if ids.len() < round {
            break;
        }
    }
    if deleted.reports > 0 {
        deletion_index::after_reports_deleted(conn).await?;
    }
    Ok(deleted)
}

/// The project's own rows, once its reports and blobs are gone: every table that names a project.
const PROJECT_ROWS: [&str; 16] = [
    "DELETE FROM report_labels WHERE project_id = $1",
    "DELETE FROM idempotency_keys WHERE project_id = $1",
    "DELETE FROM hints WHERE project_id = $1",
    "DELETE FROM flags WHERE project_id = $1",
    "DELETE FROM channels WHERE project_id = $1",
    "DELETE FROM rooms WHERE project_id = $1",
    "DELETE FROM oauth_codes WHERE project_id = $1",
    // Before the keys they name.
    "DELETE FROM oauth_grants WHERE project_id = $1",
    "DELETE FROM api_keys WHERE project_id = $1",
    "DELETE FROM widget_sightings WHERE project_id = $1",
    "DELETE FROM audit_events WHERE project_id = $1",
    "DELETE FROM events WHERE project_id = $1",
    "DELETE FROM reporter_codes WHERE project_id = $1",
    "DELETE FROM reporter_sessions WHERE project_id = $1",
    "DELETE FROM reporter_oidc_states WHERE project_id = $1",
    "DELETE FROM tracker_connections WHERE project_id = $1",
];

#[async_trait]
impl DeletionStore for ThisStore {
    async fn delete_reports(
        &self,
        project_id: &str,
        created_before: Option<i64>,
        limit: u32,
    ) -> StoreResult<DeletedReports> {
        let mut tx = self.begin_write().await?;
        deletion_index::lock(&mut tx).await?;
        let deleted = delete_reports_in(&mut tx, project_id, created_before, limit as usize).await?;
        // Each report that goes is `report.deleted` in the feed, by Svc itself.
        let now = svc_core::time::now_ms();
        let events: Vec<svc_core::event::NewEvent> = deleted
            .report_ids
            .iter()
            .map(|report_id| svc_core::event::NewEvent {
                project_id: project_id.to_string(),
                report_id: Some(report_id.clone()),
                kind: svc_core::event::EventKind::ReportDeleted,
                by: svc_core::model::Author {
                    kind: svc_core::model::AuthorKind::System,
                    id: None,
                    label: Some("retention".into()),
                },
                at: now,
            })
            .collect();
        super::events::insert_events(&mut tx, &events).await?;
        self.commit_write(tx).await?;
        Ok(deleted)
    }

    async fn delete_project(&self, project_id: &str) -> StoreResult<DeletedReports> {
        // Its endpoints go with it, and their deliveries right after (where they are kept apart).
        let webhook_ids: Vec<String> =
            crate::WebhookStore::list_webhooks(self, project_id).await?.into_iter().map(|hook| hook.id).collect();
        let mut tx = self.begin_write().await?;
        deletion_index::lock(&mut tx).await?;
        // Locks the project row (PostgreSQL), so nothing new can name the project until this ends.
        let found: Option<String> = sqlx::query_scalar(concat!("SELECT id FROM projects WHERE id = $1", for_update!()))
            .bind(project_id)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            tx.rollback().await?;
            return Err(StoreError::NotFound);
        }
        // The rooms' counts go first, so deleting every report does not adjust them batch by batch.
        sqlx::query("DELETE FROM room_activity WHERE project_id = $1").bind(project_id).execute(&mut *tx).await?;
        let mut deleted = delete_reports_in(&mut tx, project_id, None, usize::MAX).await?;
        // What is left of its blobs is unbound (uploads no report named; a blob is only ever
        // bound to a report of its own project), so the partial index of unbound blobs finds them.
        let unbound: Vec<String> =
            sqlx::query_scalar("DELETE FROM blobs WHERE report_id IS NULL AND project_id = $1 RETURNING id")
                .bind(project_id)
                .fetch_all(&mut *tx)
                .await?;
        queue_blob_deletions(&mut tx, &unbound, svc_core::time::now_ms()).await?;
        deleted.blob_ids.extend(unbound);
        for statement in PROJECT_ROWS {
            sqlx::query(statement).bind(project_id).execute(&mut *tx).await?;
        }
        sqlx::query("DELETE FROM projects WHERE id = $1").bind(project_id).execute(&mut *tx).await?;
        self.commit_write(tx).await?;
        self.forget_deliveries(Some(&webhook_ids)).await?;
        // Ingest's cached project (by public key) and channels go at once.
        self.cache.clear();
        Ok(deleted)
    }

    async fn list_projects_with_retention(&self) -> StoreResult<Vec<Project>> {
        let found = sqlx::query(concat!(
            "SELECT ",
            project_columns!(),
            " FROM projects WHERE retention_days IS NOT NULL ORDER BY created_at, id"
        ))
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&found, rows::project)
    }

    async fn pending_blob_deletions(&self, limit: u32) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT blob_id FROM blob_deletions ORDER BY queued_at, blob_id LIMIT $1")
            .bind(i64::from(limit))
            .fetch_all(self.read_pool())
            .await?)
    }

    async fn forget_blob_deletions(&self, blob_ids: &[String]) -> StoreResult<()> {
        for chunk in blob_ids.chunks(BLOB_IDS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Db>::new("DELETE FROM blob_deletions WHERE blob_id IN ");
            push_list(&mut query, chunk.iter().cloned());
            query.build().execute(self.write_pool()).await?;
        }
        Ok(())
    }
}
