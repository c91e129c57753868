//! The store's queries where SQLite and PostgreSQL agree, written once.
//!
//! This file is compiled twice, as `sqlite::queries` and `postgres::queries` (`#[path]`), against
//! its backend's concrete types: `super::Db`, `super::ThisStore` and a few items each backend
//! module provides with the same names (see the "What the shared queries need" part of each).
//! The SQL uses `$N` parameters, which both sqlx drivers accept, and the dialect both databases
//! speak; where they differ only in a clause, the backend supplies it (`for_update!`,
//! `status_change_order!`). What differs in substance stays in the backend and is reached through
//! its inherent methods: filing reports (group commit), report listings and short-id lookups
//! (built per backend, mapped here), bulk loads, viewed marks and blob rows.

use async_trait::async_trait;
use sqlx::Executor;
use sqlx::types::Json;
use svc_core::model::*;

use super::rows::{self, *};
// `for_update!` and `status_change_order!` are the including module's, in scope by position.
use super::{Db, ThisStore, list_is_prepared, list_query, map_write_error, report_json};
use crate::health::{PROBE_WRITE, is_storage_failure_of};
use crate::*;

impl ThisStore {
    /// Notes a write that failed because of the storage in the write health (see [`crate::health`]).
    pub(super) fn note_failure(&self, error: &StoreError) {
        if is_storage_failure_of(error) {
            self.health.failed(error);
        }
    }

    /// The probe write of [`crate::health`]: succeeds only if the database accepts writes.
    pub(super) async fn probe_write(&self) -> StoreResult<()> {
        match sqlx::query(PROBE_WRITE).execute(self.write_pool()).await {
            Ok(_) => {
                self.health.succeeded();
                Ok(())
            }
            Err(error) => {
                let error = StoreError::from(error);
                self.note_failure(&error);
                Err(error)
            }
        }
    }
}

fn found_or_not(rows_affected: u64) -> StoreResult<()> {
    if rows_affected == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// `projects.retention_days` as bound: an INTEGER column (svc-core keeps it within 1 to 3650).
fn retention_days_column(days: Option<i64>) -> Option<i32> {
    days.map(|days| i32::try_from(days).unwrap_or(i32::MAX))
}

pub(super) type Query<'q> = sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments>;

/// Binds a report's columns in `report_columns!` order (once per row of a multi-row INSERT).
pub(super) fn bind_report<'q>(query: Query<'q>, report: &Report, text: &ReportText) -> Query<'q> {
    query
        .bind(&report.id)
        .bind(&report.project_id)
        .bind(&report.channel_key)
        .bind(report.status.as_str())
        .bind(&report.title)
        .bind(report_json(&text.blocks))
        .bind(report_json(&text.context))
        .bind(text.identity.as_deref().map(report_json))
        .bind(&report.identity_error)
        .bind(report.author.kind.as_str())
        .bind(&report.author.id)
        .bind(&report.author.label)
        .bind(&report.artifact_id)
        .bind(&report.url)
        .bind(report.created_at)
        .bind(report.updated_at)
}

pub(super) async fn insert_blob<'e>(executor: impl Executor<'e, Database = Db>, blob: &Blob) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO blobs (",
        blob_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    ))
    .bind(&blob.id)
    .bind(&blob.project_id)
    .bind(&blob.kind)
    .bind(&blob.mime)
    .bind(blob.bytes)
    .bind(blob.width)
    .bind(blob.height)
    .bind(blob.duration_ms)
    .bind(&blob.name)
    .bind(&blob.report_id)
    .bind(blob.created_at)
    .execute(executor)
    .await
    .map_err(map_write_error)?;
    Ok(())
}

async fn insert_channel<'e>(executor: impl Executor<'e, Database = Db>, channel: &Channel) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO channels (",
        channel_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    ))
    .bind(&channel.id)
    .bind(&channel.project_id)
    .bind(&channel.key)
    .bind(&channel.name)
    .bind(&channel.color)
    .bind(&channel.mascot)
    .bind(channel.base_weight)
    .bind(Json(&channel.matchers))
    .bind(channel.archived)
    .bind(channel.created_at)
    .bind(channel.updated_at)
    .execute(executor)
    .await
    .map_err(map_write_error)?;
    Ok(())
}

/// The optional filters of a report listing, after its project condition (both backends build
/// the rest of the listing their own way): all but `before` (see [`push_before`]) and `search`
/// (each backend's own index). `reporter` is matched exactly here; each backend also narrows it
/// through its search index (the author id has no index on the reports table: one would cost every
/// filed report an index entry).
pub(super) fn push_optional_filters(query: &mut sqlx::QueryBuilder<Db>, filter: &ReportFilter) {
    if let Some(status) = &filter.status {
        query.push(" AND status = ").push_bind(status.clone());
    }
    if !filter.statuses.is_empty() {
        query.push(" AND status IN ");
        push_list(query, &filter.statuses);
    }
    if filter.drafts_waiting {
        // The partial index of drafts (few at any time) answers the subquery.
        query.push(" AND id IN (SELECT report_id FROM comments WHERE draft = TRUE)");
    }
    if let Some(channel_key) = &filter.channel_key {
        query.push(" AND channel_key = ").push_bind(channel_key.clone());
    }
    if let Some(artifact_id) = &filter.artifact_id {
        query.push(" AND artifact_id = ").push_bind(artifact_id.clone());
    }
    match &filter.assignee {
        None => {}
        Some(AssigneeFilter::Unassigned) => {
            query.push(" AND assignee_id IS NULL");
        }
        // Implies `assignee_id IS NOT NULL`: the partial index of assigned reports serves it.
        Some(AssigneeFilter::User(user_id)) => {
            query.push(" AND assignee_id = ").push_bind(user_id.clone());
        }
    }
    if let Some(label) = &filter.label {
        query
            .push(" AND id IN (SELECT report_id FROM report_labels WHERE label_key = ")
            .push_bind(svc_core::triage::key(label))
            .push(")");
    }
    if let Some(reporter) = &filter.reporter {
        query.push(" AND author_id = ").push_bind(reporter.clone());
    }
    if filter.verified_only {
        query.push(" AND identity IS NOT NULL");
    }
}

/// ` LIMIT n`, written into the statement rather than bound. SQLite reads a LIMIT that is a bound
/// parameter's value when it prepares the statement, so binding it again, which every run of a
/// cached statement does, makes `sqlite3_step` prepare the whole statement anew: a sixth to a
/// third of a SQLite listing's CPU, measured side by side (bench/README.md, "Listing"). A page
/// size has few values, so few statements.
pub(super) fn push_limit(query: &mut sqlx::QueryBuilder<Db>, limit: impl Into<i64>) {
    query.push(" LIMIT ").push(limit.into());
}

/// The keyset cursor of an id-ordered listing: only reports older than `before`.
pub(super) fn push_before(query: &mut sqlx::QueryBuilder<Db>, filter: &ReportFilter) {
    if let Some(before) = &filter.before {
        query.push(" AND id < ").push_bind(before.clone());
    }
}

/// `(a, b, ...)` of bound values, for `IN`.
pub(super) fn push_list(query: &mut sqlx::QueryBuilder<Db>, values: &[String]) {
    query.push("(");
    let mut list = query.separated(", ");
    for value in values {
        list.push_bind(value.clone());
    }
    query.push(")");
}

/// A report's labels as the `labels` column holds them: a JSON array, NULL when there are none.
pub(super) fn labels_json(labels: &[String]) -> Option<Json<&[String]>> {
    (!labels.is_empty()).then_some(Json(labels))
}

#[async_trait]
impl OrganizationStore for ThisStore {
    async fn create_organization(&self, org: &Organization) -> StoreResult<()> {
        sqlx::query(concat!("INSERT INTO organizations (", organization_columns!(), ") VALUES ($1, $2, $3)"))
            .bind(&org.id)
            .bind(&org.name)
            .bind(org.created_at)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn get_organization(&self, id: &str) -> StoreResult<Option<Organization>> {
        let row = sqlx::query(concat!("SELECT ", organization_columns!(), " FROM organizations WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::organization).transpose()
    }

    async fn find_organization_by_name(&self, name: &str) -> StoreResult<Option<Organization>> {
        // Names are not unique; the oldest organization of that name is the one meant.
        let row = sqlx::query(concat!(
            "SELECT ",
            organization_columns!(),
            " FROM organizations WHERE name = $1 ORDER BY created_at, id LIMIT 1"
        ))
        .bind(name)
        .fetch_optional(self.read_pool())
        .await?;
        row.as_ref().map(rows::organization).transpose()
    }

    async fn count_organizations(&self) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM organizations").fetch_one(self.read_pool()).await?)
    }

    async fn list_organizations(&self) -> StoreResult<Vec<Organization>> {
        let rows =
            sqlx::query(concat!("SELECT ", organization_columns!(), " FROM organizations ORDER BY created_at, id"))
                .fetch_all(self.read_pool())
                .await?;
        rows::all(&rows, rows::organization)
    }
}

#[async_trait]
impl ProjectStore for ThisStore {
    async fn create_project(&self, project: &Project, channels: &[Channel]) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(concat!(
            "INSERT INTO projects (",
            project_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        ))
        .bind(&project.id)
        .bind(&project.org_id)
        .bind(&project.name)
        .bind(&project.slug)
        .bind(&project.project_key)
        .bind(Json(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(Json(&project.widget_config))
        .bind(Json(&project.allowed_origins))
        .bind(&project.identity_secret)
        .bind(project.created_at)
        .bind(retention_days_column(project.retention_days))
        .bind(Json(&project.reporter_auth))
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        for channel in channels {
            insert_channel(&mut *tx, channel).await?;
        }
        self.commit_write(tx).await?;
        self.cache.clear();
        Ok(())
    }

    async fn get_project(&self, id: &str) -> StoreResult<Option<Project>> {
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::project).transpose()
    }

    async fn get_project_by_key(&self, project_key: &str) -> StoreResult<Option<Arc<Project>>> {
        if let Some(project) = self.cache.project_by_key(project_key) {
            return Ok(Some(project));
        }
        let generation = self.cache.generation();
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE project_key = $1"))
            .bind(project_key)
            .fetch_optional(self.read_pool())
            .await?;
        let project = row.as_ref().map(rows::project).transpose()?.map(Arc::new);
        if let Some(project) = &project {
            self.cache.remember_project(generation, project);
        }
        Ok(project)
    }

    async fn list_projects(&self, org_id: &str) -> StoreResult<Vec<Project>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            project_columns!(),
            " FROM projects WHERE org_id = $1 ORDER BY created_at, id"
        ))
        .bind(org_id)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::project)
    }

    async fn update_project(&self, project: &Project) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE projects SET name = $2, url_patterns = $3, default_channel_key = $4, widget_config = $5, \
             allowed_origins = $6, retention_days = $7, reporter_auth = $8 WHERE id = $1",
        )
        .bind(&project.id)
        .bind(&project.name)
        .bind(Json(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(Json(&project.widget_config))
        .bind(Json(&project.allowed_origins))
        .bind(retention_days_column(project.retention_days))
        .bind(Json(&project.reporter_auth))
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }

    async fn set_identity_secret(&self, project_id: &str, secret: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE projects SET identity_secret = $2 WHERE id = $1")
            .bind(project_id)
            .bind(secret)
            .execute(self.write_pool())
            .await?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }
}

#[async_trait]
impl ChannelStore for ThisStore {
    async fn list_channels(&self, project_id: &str, include_archived: bool) -> StoreResult<Arc<[Channel]>> {
        if !include_archived && let Some(channels) = self.cache.active_channels(project_id) {
            return Ok(channels);
        }
        let generation = self.cache.generation();
        let rows = sqlx::query(concat!(
            "SELECT ",
            channel_columns!(),
            " FROM channels WHERE project_id = $1 AND ($2 OR NOT archived) ORDER BY created_at, id"
        ))
        .bind(project_id)
        .bind(include_archived)
        .fetch_all(self.read_pool())
        .await?;
        let channels: Arc<[Channel]> = rows::all(&rows, rows::channel)?.into();
        if !include_archived {
            self.cache.remember_channels(generation, project_id, &channels);
        }
        Ok(channels)
    }

    async fn get_channel(&self, project_id: &str, key: &str) -> StoreResult<Option<Channel>> {
        let row =
            sqlx::query(concat!("SELECT ", channel_columns!(), " FROM channels WHERE project_id = $1 AND key = $2"))
                .bind(project_id)
                .bind(key)
                .fetch_optional(self.read_pool())
                .await?;
        row.as_ref().map(rows::channel).transpose()
    }

    async fn create_channel(&self, channel: &Channel) -> StoreResult<()> {
        let result = insert_channel(self.write_pool(), channel).await;
        self.cache.clear();
        result
    }

    async fn update_channel(&self, channel: &Channel) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE channels SET name = $2, color = $3, mascot = $4, base_weight = $5, matchers = $6, \
             archived = $7, updated_at = $8 WHERE id = $1",
        )
        .bind(&channel.id)
        .bind(&channel.name)
        .bind(&channel.color)
        .bind(&channel.mascot)
        .bind(channel.base_weight)
        .bind(Json(&channel.matchers))
        .bind(channel.archived)
        .bind(channel.updated_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }
}

#[async_trait]
impl ReportStore for ThisStore {
    async fn create_report(&self, new: NewReport) -> StoreResult<CreatedReport> {
        self.file_report(new).await
    }

    async fn get_report(&self, id: &str) -> StoreResult<Option<Report>> {
        let row = sqlx::query(concat!("SELECT ", report_select_columns!(), " FROM reports WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::report).transpose()
    }

    async fn get_reports(&self, ids: &[String]) -> StoreResult<Vec<Report>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query =
            sqlx::QueryBuilder::<Db>::new(concat!("SELECT ", report_select_columns!(), " FROM reports WHERE id IN "));
        push_list(&mut query, ids);
        // One statement per list length: not kept in the statement cache, where it would push out
        // the statements every request runs.
        let rows = query.build().persistent(false).fetch_all(self.read_pool()).await?;
        rows::reports(&rows)
    }

    async fn list_reports(&self, filter: &ReportFilter) -> StoreResult<Vec<Report>> {
        let Some(mut query) = list_query(filter) else { return Ok(Vec::new()) };
        let rows = query.build().persistent(list_is_prepared(filter)).fetch_all(self.read_pool()).await?;
        rows::reports(&rows)
    }

    async fn count_reports_up_to(&self, filters: &[ReportFilter], cap: u32) -> StoreResult<Vec<i64>> {
        // One statement for every count (an inbox's views): one round trip, however many.
        let mut query = sqlx::QueryBuilder::<Db>::new("SELECT ");
        let mut counted = 0;
        for filter in filters {
            let mut filter = filter.clone();
            if counted > 0 {
                query.push(", ");
            }
            counted += 1;
            if filter.project_ids.is_empty() || !filter.sanitize() {
                query.push("CAST(0 AS BIGINT)");
                continue;
            }
            query.push("(SELECT count(*) FROM (SELECT 1 FROM reports WHERE project_id IN ");
            push_list(&mut query, &filter.project_ids);
            push_optional_filters(&mut query, &filter);
            push_limit(&mut query, cap);
            query.push(") AS capped)");
        }
        if counted == 0 {
            return Ok(Vec::new());
        }
        let row = query.build().fetch_one(self.read_pool()).await?;
        (0..counted).map(|i| Ok(sqlx::Row::try_get::<i64, _>(&row, i)?)).collect()
    }

    async fn list_reports_text(&self, filter: &ReportFilter) -> StoreResult<Vec<ListedReport>> {
        let Some(mut query) = list_query(filter) else { return Ok(Vec::new()) };
        let rows = query.build().persistent(list_is_prepared(filter)).fetch_all(self.read_pool()).await?;
        rows::listed_reports(&rows)
    }

    async fn find_reports_by_short_id(
        &self,
        project_ids: &[String],
        short_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<Report>> {
        if project_ids.is_empty() || short_id.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let rows = self.short_id_rows(project_ids, short_id, limit).await?;
        rows::reports(&rows)
    }

    async fn status_history(&self, report_id: &str) -> StoreResult<Vec<StatusChange>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            status_change_columns!(),
            " FROM status_changes WHERE report_id = $1 ORDER BY ",
            status_change_order!()
        ))
        .bind(report_id)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::status_change)
    }

    async fn insert_reports_bulk(&self, reports: &[Report]) -> StoreResult<()> {
        self.load_reports_bulk(reports).await
    }

    async fn delete_expired_idempotency_keys(&self, before: i64) -> StoreResult<u64> {
        let result = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(before)
            .execute(self.write_pool())
            .await?;
        Ok(result.rows_affected())
    }
}

#[async_trait]
impl TriageStore for ThisStore {
    async fn list_labels(&self, project_id: &str) -> StoreResult<Vec<LabelCount>> {
        let found: Vec<(String, i64)> = sqlx::query_as(
            "SELECT min(label), count(*) FROM report_labels WHERE project_id = $1 GROUP BY label_key ORDER BY label_key",
        )
        .bind(project_id)
        .fetch_all(self.read_pool())
        .await?;
        Ok(found.into_iter().map(|(label, count)| LabelCount { label, count }).collect())
    }

    async fn duplicate_marks(&self, report_ids: &[String]) -> StoreResult<Vec<(String, String)>> {
        if report_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query =
            sqlx::QueryBuilder::<Db>::new("SELECT report_id, original_id FROM report_duplicates WHERE report_id IN ");
        push_list(&mut query, report_ids);
        Ok(query.build_query_as().fetch_all(self.read_pool()).await?)
    }

    async fn duplicates_of(&self, original_id: &str) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT report_id FROM report_duplicates WHERE original_id = $1 ORDER BY marked_at, report_id",
        )
        .bind(original_id)
        .fetch_all(self.read_pool())
        .await?)
    }
}

#[async_trait]
impl RoomStore for ThisStore {
    async fn get_room(&self, project_id: &str, artifact_id: &str) -> StoreResult<Option<Room>> {
        let row =
            sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = $1 AND artifact_id = $2"))
                .bind(project_id)
                .bind(artifact_id)
                .fetch_optional(self.read_pool())
                .await?;
        row.as_ref().map(rows::room).transpose()
    }

    async fn count_room_reports(&self, project_id: &str, artifact_id: &str) -> StoreResult<i64> {
        let count: Option<i64> =
            sqlx::query_scalar("SELECT report_count FROM room_activity WHERE project_id = $1 AND artifact_id = $2")
                .bind(project_id)
                .bind(artifact_id)
                .fetch_optional(self.read_pool())
                .await?;
        Ok(count.unwrap_or(0))
    }

    async fn upsert_room(
        &self,
        new_room: &Room,
        changes: &RoomChanges,
        created_by: Option<&Author>,
    ) -> StoreResult<(Room, bool)> {
        let mut tx = self.begin_write().await?;
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
        .bind(new_room.meta.as_ref().map(Json))
        .bind(new_room.archived)
        .bind(new_room.created_at)
        .bind(new_room.updated_at)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_write_error)?;
        if let Some(row) = inserted {
            let stored = rows::room(&row)?;
            if let Some(by) = created_by {
                let created = svc_core::event::NewEvent {
                    project_id: stored.project_id.clone(),
                    report_id: None,
                    kind: svc_core::event::EventKind::RoomCreated { artifact_id: stored.artifact_id.clone() },
                    by: by.clone(),
                    at: stored.created_at,
                };
                super::events::insert_events(&mut tx, &[created]).await?;
            }
            self.commit_write(tx).await?;
            return Ok((stored, true));
        }

        // The room exists (the conflicting row is committed, so the UPDATE finds it): apply only the
        // given fields. `updated_at` moves only when something changed.
        let has_changes = *changes != RoomChanges::default();
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
        .bind(meta.map(Json))
        .bind(changes.archived)
        .bind(has_changes)
        .bind(new_room.updated_at)
        .fetch_one(&mut *tx)
        .await?;
        let stored = rows::room(&row)?;
        self.commit_write(tx).await?;
        Ok((stored, false))
    }

    async fn room_rows(&self, project_id: &str) -> StoreResult<RoomRows> {
        // One snapshot for both queries, so a report filed in between is not half-counted.
        let mut tx = self.begin_snapshot().await?;
        // Archived stored rooms are read too: they hide their implicit counterpart.
        let stored = sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = $1"))
            .bind(project_id)
            .fetch_all(&mut *tx)
            .await?;
        // The counts kept as reports are filed and deleted (migration 0017), never the reports.
        let activity: Vec<(String, i64, i64)> =
            sqlx::query_as("SELECT artifact_id, report_count, last_report_at FROM room_activity WHERE project_id = $1")
                .bind(project_id)
                .fetch_all(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(RoomRows {
            stored: rows::all(&stored, rows::room)?,
            activity: activity
                .into_iter()
                .map(|(artifact_id, report_count, last_report_at)| ArtifactActivity {
                    artifact_id,
                    report_count,
                    last_report_at,
                })
                .collect(),
        })
    }
}

#[async_trait]
impl KeyStore for ThisStore {
    async fn create_key(&self, key: &ApiKey) -> StoreResult<()> {
        insert_key(self.write_pool(), key).await
    }

    async fn find_key_by_hash(&self, key_hash: &str) -> StoreResult<Option<FoundKey>> {
        // The key's own columns keep their names (selected in the inner query); the project's are
        // renamed, since both have an id, a name, an org_id and a created_at.
        let row = sqlx::query(concat!(
            "SELECT k.*, ",
            key_project_columns!(),
            " FROM (SELECT ",
            key_columns!(),
            " FROM api_keys WHERE key_hash = $1) AS k LEFT JOIN projects AS p ON p.id = k.project_id"
        ))
        .bind(key_hash)
        .fetch_optional(self.read_pool())
        .await?;
        row.as_ref().map(rows::found_key).transpose()
    }

    async fn get_key(&self, id: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!("SELECT ", key_columns!(), " FROM api_keys WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::api_key).transpose()
    }

    async fn list_keys(&self, project_id: &str) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE project_id = $1 ORDER BY created_at, id"
        ))
        .bind(project_id)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::api_key)
    }

    async fn revoke_key(&self, project_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>> {
        Ok(sqlx::query_scalar(
            "UPDATE api_keys SET revoked_at = $3 WHERE project_id = $1 AND id = $2 AND revoked_at IS NULL \
             RETURNING revoked_at",
        )
        .bind(project_id)
        .bind(key_id)
        .bind(at)
        .fetch_optional(self.write_pool())
        .await?)
    }

    async fn touch_key(&self, key_id: &str, at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1")
            .bind(key_id)
            .bind(at)
            .execute(self.write_pool())
            .await?;
        Ok(())
    }

    async fn set_key_agent(&self, key_id: &str, agent_name: &str, owner: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE api_keys SET agent_name = $2, agent_owner = $3 WHERE id = $1")
            .bind(key_id)
            .bind(agent_name)
            .bind(owner)
            .execute(self.write_pool())
            .await?;
        found_or_not(result.rows_affected())
    }
}

#[async_trait]
impl HintStore for ThisStore {
    async fn create_hint(&self, hint: &Hint) -> StoreResult<()> {
        sqlx::query(concat!("INSERT INTO hints (", hint_columns!(), ") VALUES ($1, $2, $3, $4, $5, $6, $7)"))
            .bind(&hint.id)
            .bind(&hint.project_id)
            .bind(&hint.channel_key)
            .bind(hint.weight.to_db())
            .bind(&hint.user_id)
            .bind(hint.created_at)
            .bind(hint.expires_at)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn list_active_hints(&self, project_id: &str, user_id: Option<&str>, now: i64) -> StoreResult<Vec<Hint>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            hint_columns!(),
            " FROM hints WHERE project_id = $1 AND expires_at > $3 AND (user_id IS NULL OR user_id = $2) \
             ORDER BY created_at, id"
        ))
        .bind(project_id)
        .bind(user_id)
        .bind(now)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::hint)
    }

    async fn list_all_active_hints(&self, project_id: &str, now: i64) -> StoreResult<Vec<Hint>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            hint_columns!(),
            " FROM hints WHERE project_id = $1 AND expires_at > $2 ORDER BY created_at, id"
        ))
        .bind(project_id)
        .bind(now)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::hint)
    }

    async fn delete_expired_hints(&self, now: i64) -> StoreResult<u64> {
        let result =
            sqlx::query("DELETE FROM hints WHERE expires_at <= $1").bind(now).execute(self.write_pool()).await?;
        Ok(result.rows_affected())
    }
}

/// One comment row (also written inside a change's transaction, see `apply`).
pub(super) async fn insert_comment<'e>(
    executor: impl Executor<'e, Database = Db>,
    comment: &Comment,
) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO comments (",
        comment_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    ))
    .bind(&comment.id)
    .bind(&comment.report_id)
    .bind(&comment.project_id)
    .bind(comment.author.kind.as_str())
    .bind(&comment.author.id)
    .bind(&comment.author.label)
    .bind(&comment.text)
    .bind(&comment.kind)
    .bind(comment.draft)
    .bind(comment.created_at)
    .bind(comment.published_at)
    .execute(executor)
    .await
    .map_err(map_write_error)?;
    Ok(())
}

#[async_trait]
impl CommentStore for ThisStore {
    async fn list_comments(&self, report_id: &str) -> StoreResult<Vec<Comment>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            comment_columns!(),
            " FROM comments WHERE report_id = $1 ORDER BY created_at, id"
        ))
        .bind(report_id)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::comment)
    }

    async fn reports_with_drafts(&self, report_ids: &[String]) -> StoreResult<Vec<String>> {
        if report_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = sqlx::QueryBuilder::<Db>::new(
            "SELECT DISTINCT report_id FROM comments WHERE draft = TRUE AND report_id IN ",
        );
        push_list(&mut query, report_ids);
        Ok(query.build_query_scalar().fetch_all(self.read_pool()).await?)
    }
}

#[async_trait]
impl ViewStore for ThisStore {
    async fn mark_viewed(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()> {
        if report_ids.is_empty() {
            return Ok(());
        }
        self.record_views(report_ids, viewer, at).await
    }

    async fn list_viewers(&self, report_id: &str) -> StoreResult<Vec<(String, i64)>> {
        Ok(sqlx::query_as(
            "SELECT viewer, viewed_at FROM viewed_marks WHERE report_id = $1 ORDER BY viewed_at DESC, viewer",
        )
        .bind(report_id)
        .fetch_all(self.read_pool())
        .await?)
    }
}

#[async_trait]
impl FlagStore for ThisStore {
    async fn list_flags(&self, project_id: &str) -> StoreResult<Vec<Flag>> {
        let rows = sqlx::query(concat!("SELECT ", flag_columns!(), " FROM flags WHERE project_id = $1 ORDER BY key"))
            .bind(project_id)
            .fetch_all(self.read_pool())
            .await?;
        rows::all(&rows, rows::flag)
    }

    async fn get_flag(&self, project_id: &str, key: &str) -> StoreResult<Option<Flag>> {
        let row = sqlx::query(concat!("SELECT ", flag_columns!(), " FROM flags WHERE project_id = $1 AND key = $2"))
            .bind(project_id)
            .bind(key)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::flag).transpose()
    }

    async fn set_flag(&self, flag: &Flag) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO flags (",
            flag_columns!(),
            ") VALUES ($1, $2, $3, $4) \
             ON CONFLICT (project_id, key) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at"
        ))
        .bind(&flag.project_id)
        .bind(&flag.key)
        .bind(flag.enabled)
        .bind(flag.updated_at)
        .execute(self.write_pool())
        .await?;
        Ok(())
    }
}

#[async_trait]
impl BlobRowStore for ThisStore {
    async fn create_blob(&self, blob: &Blob) -> StoreResult<()> {
        self.file_blob(blob).await
    }

    async fn get_blob(&self, id: &str) -> StoreResult<Option<Blob>> {
        let row = sqlx::query(concat!("SELECT ", blob_columns!(), " FROM blobs WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(rows::blob).transpose()
    }

    async fn list_unbound_blobs(&self, before: i64, limit: u32) -> StoreResult<Vec<Blob>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            blob_columns!(),
            " FROM blobs WHERE report_id IS NULL AND created_at < $1 ORDER BY created_at, id LIMIT $2"
        ))
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::blob)
    }

    async fn delete_unbound_blob(&self, id: &str) -> StoreResult<bool> {
        let result = sqlx::query("DELETE FROM blobs WHERE id = $1 AND report_id IS NULL")
            .bind(id)
            .execute(self.write_pool())
            .await?;
        Ok(result.rows_affected() > 0)
    }
}

/// Inserts a key with `executor` (the write pool, or a transaction that stores more with it).
pub(super) async fn insert_key<'e, E: sqlx::Executor<'e, Database = Db>>(executor: E, key: &ApiKey) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO api_keys (",
        key_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
    ))
    .bind(&key.id)
    .bind(&key.project_id)
    .bind(&key.org_id)
    .bind(&key.name)
    .bind(&key.key_hash)
    .bind(Json(&key.scopes))
    .bind(key.origin.as_str())
    .bind(key.expires_at)
    .bind(key.revoked_at)
    .bind(key.last_used_at)
    .bind(&key.agent_name)
    .bind(&key.agent_owner)
    .bind(key.created_at)
    .execute(executor)
    .await
    .map_err(map_write_error)?;
    Ok(())
}
