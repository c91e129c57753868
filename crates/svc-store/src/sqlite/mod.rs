//! SQLite backend: the embedded default.
//!
//! One file in WAL mode with `synchronous=FULL`. Writes go through a single writer connection (SQLite
//! allows one writer at a time anyway, and queuing in-process beats spinning on `SQLITE_BUSY`); reads
//! use their own small pool, so they never wait behind a write. New reports are group-committed (see
//! [`group_commit`]).
//!
//! A write that fails because of the storage (a full disk, an I/O error) must not break the writes
//! after it. SQLite rolls a transaction back by itself when a statement or the COMMIT fails that
//! way, and sqlx then still counts it as open (its ROLLBACK fails: there is nothing to roll back), so
//! every later `BEGIN` on that connection would fail. The writer pool therefore closes a connection
//! that comes back still inside a transaction, and opens a fresh one with the same settings; the
//! failure is noted in the store's write health (see [`crate::health`]), which `ping` reports.

mod group_commit;
mod memory;
mod rows;
mod short_ids;
#[cfg(test)]
mod tests;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite};
use std::collections::{BTreeSet, HashMap};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use svc_core::model::*;
use tokio::sync::{mpsc, oneshot};

use crate::cache::HotCache;
use crate::health::{PROBE_WRITE, WriteHealth, is_storage_failure};
use crate::{CreatedReport, Store, StoreError, StoreResult};
use group_commit::{Job, QueuedBlob, QueuedReport, QueuedViews};
use rows::{
    blob_columns, channel_columns, comment_columns, json_text, key_columns, project_columns, report_columns,
    room_columns,
};

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const READ_CONNECTIONS: u32 = 4;
/// Rows a reader connection may hand over before it waits for the caller to take them.
const READ_ROW_CHANNEL: usize = 256;
/// The writer's page cache: 32 MiB (a negative `cache_size` is in KiB).
const WRITER_CACHE_KIB: &str = "-32768";
/// Up to this many projects, a multi-project listing reads each project's index separately.
const MAX_PROJECTS_PER_UNION: usize = 50;
/// Rows per INSERT statement in bulk loads (16 parameters each, well under SQLite's 32,766).
const BULK_ROWS_PER_STATEMENT: usize = 500;

pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
    /// New reports and blobs waiting for their group commit.
    write_queue: mpsc::Sender<Job>,
    /// Projects by key and active channels, for ingest (see [`crate::cache`]).
    cache: HotCache,
    /// Whether writes currently fail (see [`crate::health`]).
    health: Arc<WriteHealth>,
}

impl SqliteStore {
    /// Opens (creating if missing) the database a `sqlite://path`, `sqlite:path` or bare path names,
    /// runs the migrations and starts the report writer. Must be called inside a Tokio runtime.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        memory::configure();
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory && let Some(folder) = options.get_filename().parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(sqlx::Error::Io)?;
        }

        // The writer connection stays open for the life of the store. Its page cache is larger than
        // SQLite's 2 MB default: the short-id indexer's rounds touch leaves all over its table, and a
        // cached leaf saves the single writer a read from the file (memory grows only with use).
        // Statement journals (a multi-row INSERT keeps one so it can undo itself) stay in memory
        // instead of temporary files: they are never part of what makes a commit durable.
        let mut writer_options = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            // A local file cannot drop the connection: no ping before every write transaction
            // (a round trip to the connection's thread, on the group commit's critical path).
            .test_before_acquire(false);
        if !in_memory {
            // An in-memory database lives only in its connection: closing it would lose everything.
            writer_options =
                writer_options.after_release(|connection, _| Box::pin(discard_if_still_in_transaction(connection)));
        }
        let writer = writer_options
            .connect_with(options.clone().pragma("cache_size", WRITER_CACHE_KIB).pragma("temp_store", "memory"))
            .await?;
        sqlx::migrate!("src/sqlite/migrations").run(&writer).await?;
        // An in-memory database lives in its connections: readers share the writer's.
        let reader = if in_memory {
            writer.clone()
        } else {
            // sqlx hands rows from a connection's thread to the caller through a bounded channel;
            // at its default of 50 the thread stopped half-way through a 101-row page until the
            // caller caught up. A whole page (the largest listing is 201 rows) now fits.
            SqlitePoolOptions::new()
                .max_connections(READ_CONNECTIONS)
                .connect_with(options.row_buffer_size(READ_ROW_CHANNEL))
                .await?
        };

        let health = Arc::new(WriteHealth::new("sqlite"));
        let (write_queue, queue) = mpsc::channel(group_commit::QUEUE_CAPACITY);
        tokio::spawn(group_commit::run_writer(writer.clone(), queue, health.clone()));
        tokio::spawn(short_ids::run_indexer(writer.clone(), reader.clone(), write_queue.downgrade(), health.clone()));
        Ok(SqliteStore { writer, reader, write_queue, cache: HotCache::default(), health })
    }

    async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
        // IMMEDIATE takes the write lock up front, so a transaction that reads before it writes
        // cannot fail half-way on a lock held by another process (the CLI, for example).
        Ok(self.writer.begin_with("BEGIN IMMEDIATE").await.inspect_err(|error| self.note_failure(error))?)
    }

    /// Commits a transaction of [`Self::begin_write`], noting a failure in the write health.
    async fn commit_write(&self, tx: sqlx::Transaction<'static, Sqlite>) -> StoreResult<()> {
        Ok(tx.commit().await.inspect_err(|error| self.note_failure(error))?)
    }

    fn note_failure(&self, error: &sqlx::Error) {
        if is_storage_failure(error) {
            self.health.failed(error);
        }
    }

    /// The probe write of [`crate::health`]: succeeds only if the database accepts writes.
    async fn probe_write(&self) -> StoreResult<()> {
        match sqlx::query(PROBE_WRITE).execute(&self.writer).await {
            Ok(_) => {
                self.health.succeeded();
                Ok(())
            }
            Err(error) => {
                self.note_failure(&error);
                Err(error.into())
            }
        }
    }
}

/// The writer pool's check of a connection coming back (see the module notes): closes it if sqlx
/// still counts an open transaction once any queued ROLLBACK has run. Costs one atomic load when
/// the connection is clean.
async fn discard_if_still_in_transaction(connection: &mut SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection;
    if !connection.is_in_transaction() {
        return Ok(true);
    }
    // A dropped transaction queues its ROLLBACK on the connection's thread; a ping runs after it.
    connection.ping().await?;
    if connection.is_in_transaction() {
        tracing::warn!(
            "closing the SQLite writer connection: a failed transaction left it unusable; opening a new one"
        );
        return Ok(false);
    }
    Ok(true)
}

/// A broken uniqueness rule becomes `Conflict` naming what was duplicated (the same subjects as the
/// PostgreSQL backend); anything else stays a database error.
pub(crate) fn map_write_error(error: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(database_error) = &error
        && database_error.is_unique_violation()
    {
        // SQLite names the columns: "UNIQUE constraint failed: projects.org_id, projects.slug".
        let message = database_error.message();
        let columns = message.strip_prefix("UNIQUE constraint failed: ").unwrap_or(message);
        let subject = match columns {
            "projects.org_id, projects.slug" => "project slug",
            "projects.project_key" => "project key",
            "channels.project_id, channels.key" => "channel key",
            "rooms.project_id, rooms.artifact_id" => "room artifact id",
            "api_keys.key_hash" => "api key hash",
            "flags.project_id, flags.key" => "flag key",
            other if other.ends_with(".id") => "id",
            other => other,
        };
        return StoreError::Conflict(subject.to_string());
    }
    StoreError::Database(error)
}

fn found_or_not(rows_affected: u64) -> StoreResult<()> {
    if rows_affected == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// The JSON columns of a report as text, serialized by the caller before the report is queued, so
/// the single writer task spends its time writing, not serializing.
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

pub(crate) async fn insert_blob(conn: &mut SqliteConnection, blob: &Blob) -> StoreResult<()> {
    sqlx::query(concat!("INSERT INTO blobs (", blob_columns!(), ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"))
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
        .execute(conn)
        .await
        .map_err(map_write_error)?;
    Ok(())
}

pub(crate) async fn insert_report(conn: &mut SqliteConnection, report: &Report, text: &ReportText) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO reports (",
        report_columns!(),
        ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ))
    .bind(&report.id)
    .bind(&report.project_id)
    .bind(&report.channel_key)
    .bind(&report.status)
    .bind(&report.title)
    .bind(&text.blocks)
    .bind(&text.context)
    .bind(&text.identity)
    .bind(&report.identity_error)
    .bind(&report.author.kind)
    .bind(&report.author.id)
    .bind(&report.author.label)
    .bind(&report.artifact_id)
    .bind(&report.url)
    .bind(report.created_at)
    .bind(report.updated_at)
    .execute(conn)
    .await
    .map_err(map_write_error)?;
    Ok(())
}

async fn insert_channel(conn: &mut SqliteConnection, channel: &Channel) -> StoreResult<()> {
    sqlx::query(concat!("INSERT INTO channels (", channel_columns!(), ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"))
        .bind(&channel.id)
        .bind(&channel.project_id)
        .bind(&channel.key)
        .bind(&channel.name)
        .bind(&channel.color)
        .bind(&channel.mascot)
        .bind(channel.base_weight)
        .bind(json_text(&channel.matchers))
        .bind(channel.archived)
        .bind(channel.created_at)
        .bind(channel.updated_at)
        .execute(conn)
        .await
        .map_err(map_write_error)?;
    Ok(())
}

/// The optional filters of a report listing, after its project condition.
fn push_optional_filters(query: &mut QueryBuilder<Sqlite>, filter: &ReportFilter) {
    if let Some(status) = &filter.status {
        query.push(" AND status = ").push_bind(status.clone());
    }
    if let Some(channel_key) = &filter.channel_key {
        query.push(" AND channel_key = ").push_bind(channel_key.clone());
    }
    if let Some(artifact_id) = &filter.artifact_id {
        query.push(" AND artifact_id = ").push_bind(artifact_id.clone());
    }
    if let Some(before) = &filter.before {
        query.push(" AND id < ").push_bind(before.clone());
    }
}

fn push_project_list(query: &mut QueryBuilder<Sqlite>, project_ids: &BTreeSet<&str>) {
    query.push("(");
    let mut list = query.separated(", ");
    for project_id in project_ids {
        list.push_bind(project_id.to_string());
    }
    query.push(")");
}

/// The query of a report listing; `None` when it can only be empty.
fn list_query(filter: &ReportFilter) -> Option<QueryBuilder<Sqlite>> {
    let project_ids: BTreeSet<&str> = filter.project_ids.iter().map(String::as_str).collect();
    if project_ids.is_empty() || filter.limit == 0 {
        return None;
    }
    let limit = i64::from(filter.limit);
    let mut query = QueryBuilder::<Sqlite>::new("");
    if project_ids.len() == 1 || project_ids.len() > MAX_PROJECTS_PER_UNION {
        query.push(concat!("SELECT ", report_columns!(), " FROM reports WHERE project_id IN "));
        push_project_list(&mut query, &project_ids);
        push_optional_filters(&mut query, filter);
    } else {
        // Each project's newest `limit` reports come straight off its index, then the union is
        // merged and cut: an `IN` list over several projects cannot be read in id order.
        for (index, project_id) in project_ids.iter().enumerate() {
            if index > 0 {
                query.push(" UNION ALL ");
            }
            query.push(concat!("SELECT * FROM (SELECT ", report_columns!(), " FROM reports WHERE project_id = "));
            query.push_bind(project_id.to_string());
            push_optional_filters(&mut query, filter);
            query.push(" ORDER BY id DESC LIMIT ").push_bind(limit).push(")");
        }
    }
    query.push(" ORDER BY id DESC LIMIT ").push_bind(limit);
    Some(query)
}

/// What the reports say about one artifact id: how many, and the newest one's time.
struct ArtifactActivity {
    count: i64,
    last_report_at: i64,
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        if self.health.is_failing() {
            self.probe_write().await?;
        }
        Ok(())
    }

    // Organizations

    async fn create_organization(&self, org: &Organization) -> StoreResult<()> {
        sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)")
            .bind(&org.id)
            .bind(&org.name)
            .bind(org.created_at)
            .execute(&self.writer)
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn get_organization(&self, id: &str) -> StoreResult<Option<Organization>> {
        let row = sqlx::query("SELECT id, name, created_at FROM organizations WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::organization).transpose()
    }

    async fn find_organization_by_name(&self, name: &str) -> StoreResult<Option<Organization>> {
        // Names are not unique; the oldest organization of that name is the one meant.
        let row = sqlx::query(
            "SELECT id, name, created_at FROM organizations WHERE name = ? ORDER BY created_at, id LIMIT 1",
        )
        .bind(name)
        .fetch_optional(&self.reader)
        .await?;
        row.as_ref().map(rows::organization).transpose()
    }

    async fn count_organizations(&self) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM organizations").fetch_one(&self.reader).await?)
    }

    // Projects

    async fn create_project(&self, project: &Project, channels: &[Channel]) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(concat!(
            "INSERT INTO projects (",
            project_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(&project.id)
        .bind(&project.org_id)
        .bind(&project.name)
        .bind(&project.slug)
        .bind(&project.project_key)
        .bind(json_text(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(json_text(&project.widget_config))
        .bind(json_text(&project.allowed_origins))
        .bind(&project.identity_secret)
        .bind(project.created_at)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        for channel in channels {
            insert_channel(&mut tx, channel).await?;
        }
        self.commit_write(tx).await?;
        self.cache.clear();
        Ok(())
    }

    async fn get_project(&self, id: &str) -> StoreResult<Option<Project>> {
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::project).transpose()
    }

    async fn get_project_by_key(&self, project_key: &str) -> StoreResult<Option<Project>> {
        if let Some(project) = self.cache.project_by_key(project_key) {
            return Ok(Some(project));
        }
        let generation = self.cache.generation();
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE project_key = ?"))
            .bind(project_key)
            .fetch_optional(&self.reader)
            .await?;
        let project = row.as_ref().map(rows::project).transpose()?;
        if let Some(project) = &project {
            self.cache.remember_project(generation, project);
        }
        Ok(project)
    }

    async fn list_projects(&self, org_id: &str) -> StoreResult<Vec<Project>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            project_columns!(),
            " FROM projects WHERE org_id = ? ORDER BY created_at, id"
        ))
        .bind(org_id)
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::project)
    }

    async fn update_project(&self, project: &Project) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE projects SET name = ?, url_patterns = ?, default_channel_key = ?, widget_config = ?, allowed_origins = ?
             WHERE id = ?",
        )
        .bind(&project.name)
        .bind(json_text(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(json_text(&project.widget_config))
        .bind(json_text(&project.allowed_origins))
        .bind(&project.id)
        .execute(&self.writer)
        .await
        .map_err(map_write_error)?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }

    async fn set_identity_secret(&self, project_id: &str, secret: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE projects SET identity_secret = ? WHERE id = ?")
            .bind(secret)
            .bind(project_id)
            .execute(&self.writer)
            .await?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }

    // Channels

    async fn list_channels(&self, project_id: &str, include_archived: bool) -> StoreResult<Vec<Channel>> {
        if !include_archived && let Some(channels) = self.cache.active_channels(project_id) {
            return Ok(channels);
        }
        let generation = self.cache.generation();
        let rows = sqlx::query(concat!(
            "SELECT ",
            channel_columns!(),
            " FROM channels WHERE project_id = ? AND (? OR archived = 0) ORDER BY created_at, id"
        ))
        .bind(project_id)
        .bind(include_archived)
        .fetch_all(&self.reader)
        .await?;
        let channels = rows::all(&rows, rows::channel)?;
        if !include_archived {
            self.cache.remember_channels(generation, project_id, &channels);
        }
        Ok(channels)
    }

    async fn get_channel(&self, project_id: &str, key: &str) -> StoreResult<Option<Channel>> {
        let row =
            sqlx::query(concat!("SELECT ", channel_columns!(), " FROM channels WHERE project_id = ? AND key = ?"))
                .bind(project_id)
                .bind(key)
                .fetch_optional(&self.reader)
                .await?;
        row.as_ref().map(rows::channel).transpose()
    }

    async fn create_channel(&self, channel: &Channel) -> StoreResult<()> {
        let mut conn = self.writer.acquire().await?;
        let result = insert_channel(&mut conn, channel).await;
        self.cache.clear();
        result
    }

    async fn update_channel(&self, channel: &Channel) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE channels SET name = ?, color = ?, mascot = ?, base_weight = ?, matchers = ?, archived = ?, updated_at = ?
             WHERE id = ?",
        )
        .bind(&channel.name)
        .bind(&channel.color)
        .bind(&channel.mascot)
        .bind(channel.base_weight)
        .bind(json_text(&channel.matchers))
        .bind(channel.archived)
        .bind(channel.updated_at)
        .bind(&channel.id)
        .execute(&self.writer)
        .await
        .map_err(map_write_error)?;
        self.cache.clear();
        found_or_not(result.rows_affected())
    }

    // Reports

    async fn create_report(&self, new: &NewReport) -> StoreResult<CreatedReport> {
        let (reply, answer) = oneshot::channel();
        let queued = Job::Report(QueuedReport { text: ReportText::of(&new.report), new: new.clone(), reply });
        // Either failure means the writer task is gone (the runtime is shutting down).
        self.write_queue.send(queued).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    async fn get_report(&self, id: &str) -> StoreResult<Option<Report>> {
        let row = sqlx::query(concat!("SELECT ", report_columns!(), " FROM reports WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::report).transpose()
    }

    async fn list_reports(&self, filter: &ReportFilter) -> StoreResult<Vec<Report>> {
        let Some(mut query) = list_query(filter) else { return Ok(Vec::new()) };
        let rows = query.build().fetch_all(&self.reader).await?;
        rows::all(&rows, rows::report)
    }

    async fn list_reports_text(&self, filter: &ReportFilter) -> StoreResult<Vec<crate::ListedReport>> {
        let Some(mut query) = list_query(filter) else { return Ok(Vec::new()) };
        let rows = query.build().fetch_all(&self.reader).await?;
        rows::all(&rows, rows::listed_report)
    }

    async fn find_reports_by_short_id(
        &self,
        project_ids: &[String],
        short_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<Report>> {
        let project_ids: BTreeSet<&str> = project_ids.iter().map(String::as_str).collect();
        if project_ids.is_empty() || short_id.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut query = if short_id.len() == 6 {
            short_ids::lookup_query(&project_ids, short_id, limit)
        } else {
            // Any other length (never a short id the API hands out) scans the projects' reports.
            let mut query = QueryBuilder::<Sqlite>::new(concat!("SELECT ", report_columns!(), " FROM reports"));
            query.push(" WHERE project_id IN ");
            push_project_list(&mut query, &project_ids);
            query
                .push(" AND substr(id, -")
                .push_bind(short_id.len() as i64)
                .push(") = ")
                .push_bind(short_id.to_string());
            query.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
            query
        };
        let rows = query.build().fetch_all(&self.reader).await?;
        rows::all(&rows, rows::report)
    }

    async fn set_report_status(
        &self,
        report_id: &str,
        status: &str,
        by: &Author,
        at: i64,
    ) -> StoreResult<StatusChange> {
        let mut tx = self.begin_write().await?;
        let from_status: String = sqlx::query_scalar("SELECT status FROM reports WHERE id = ?")
            .bind(report_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        sqlx::query("UPDATE reports SET status = ?, updated_at = ? WHERE id = ?")
            .bind(status)
            .bind(at)
            .bind(report_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO status_changes (report_id, from_status, to_status, by_kind, by_id, by_label, at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(report_id)
        .bind(&from_status)
        .bind(status)
        .bind(&by.kind)
        .bind(&by.id)
        .bind(&by.label)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        self.commit_write(tx).await?;
        Ok(StatusChange {
            report_id: report_id.to_string(),
            from_status,
            to_status: status.to_string(),
            by: by.clone(),
            at,
        })
    }

    async fn status_history(&self, report_id: &str) -> StoreResult<Vec<StatusChange>> {
        let rows = sqlx::query(
            "SELECT report_id, from_status, to_status, by_kind, by_id, by_label, at FROM status_changes
             WHERE report_id = ? ORDER BY at, seq",
        )
        .bind(report_id)
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::status_change)
    }

    async fn insert_reports_bulk(&self, reports: &[Report]) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        for chunk in reports.chunks(BULK_ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(concat!("INSERT INTO reports (", report_columns!(), ") "));
            query.push_values(chunk, |mut row, report| {
                row.push_bind(report.id.clone())
                    .push_bind(report.project_id.clone())
                    .push_bind(report.channel_key.clone())
                    .push_bind(report.status.clone())
                    .push_bind(report.title.clone())
                    .push_bind(json_text(&report.blocks))
                    .push_bind(json_text(&report.context))
                    .push_bind(report.identity.as_ref().map(json_text))
                    .push_bind(report.identity_error.clone())
                    .push_bind(report.author.kind.clone())
                    .push_bind(report.author.id.clone())
                    .push_bind(report.author.label.clone())
                    .push_bind(report.artifact_id.clone())
                    .push_bind(report.url.clone())
                    .push_bind(report.created_at)
                    .push_bind(report.updated_at);
            });
            query.build().execute(&mut *tx).await.map_err(map_write_error)?;
        }
        // A bulk load copies its short ids at once, in the same transaction.
        short_ids::copy_all_in(&mut tx).await?;
        self.commit_write(tx).await?;
        Ok(())
    }

    // Rooms

    async fn get_room(&self, project_id: &str, artifact_id: &str) -> StoreResult<Option<Room>> {
        let row =
            sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = ? AND artifact_id = ?"))
                .bind(project_id)
                .bind(artifact_id)
                .fetch_optional(&self.reader)
                .await?;
        row.as_ref().map(rows::room).transpose()
    }

    async fn count_room_reports(&self, project_id: &str, artifact_id: &str) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM reports WHERE project_id = ? AND artifact_id = ?")
            .bind(project_id)
            .bind(artifact_id)
            .fetch_one(&self.reader)
            .await?)
    }

    async fn upsert_room(&self, room: &Room, changes: &RoomChanges) -> StoreResult<(Room, bool)> {
        let mut tx = self.begin_write().await?;
        let existing =
            sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = ? AND artifact_id = ?"))
                .bind(&room.project_id)
                .bind(&room.artifact_id)
                .fetch_optional(&mut *tx)
                .await?;
        let (stored, inserted) = match existing.as_ref().map(rows::room).transpose()? {
            None => {
                sqlx::query(concat!("INSERT INTO rooms (", room_columns!(), ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"))
                    .bind(&room.id)
                    .bind(&room.project_id)
                    .bind(&room.artifact_id)
                    .bind(&room.title)
                    .bind(room.meta.as_ref().map(json_text))
                    .bind(room.archived)
                    .bind(room.created_at)
                    .bind(room.updated_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(map_write_error)?;
                (room.clone(), true)
            }
            Some(mut stored) => {
                if *changes != RoomChanges::default() {
                    if let Some(title) = &changes.title {
                        stored.title = title.clone();
                    }
                    if let Some(meta) = &changes.meta {
                        stored.meta = meta.clone();
                    }
                    if let Some(archived) = changes.archived {
                        stored.archived = archived;
                    }
                    stored.updated_at = room.updated_at;
                    sqlx::query("UPDATE rooms SET title = ?, meta = ?, archived = ?, updated_at = ? WHERE id = ?")
                        .bind(&stored.title)
                        .bind(stored.meta.as_ref().map(json_text))
                        .bind(stored.archived)
                        .bind(stored.updated_at)
                        .bind(&stored.id)
                        .execute(&mut *tx)
                        .await?;
                }
                (stored, false)
            }
        };
        self.commit_write(tx).await?;
        Ok((stored, inserted))
    }

    async fn list_rooms(&self, project_id: &str, include_archived: bool) -> StoreResult<Vec<RoomSummary>> {
        // One snapshot for both queries, so a report filed in between is not half-counted.
        let mut tx = self.reader.begin().await?;
        let stored_rows = sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = ?"))
            .bind(project_id)
            .fetch_all(&mut *tx)
            .await?;
        // Walks only the artifact index (it carries created_at), never the report rows.
        let activity_rows = sqlx::query(
            "SELECT artifact_id, count(*) AS report_count, max(created_at) AS last_report_at FROM reports
             WHERE project_id = ? AND artifact_id IS NOT NULL GROUP BY artifact_id",
        )
        .bind(project_id)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;

        let mut activity: HashMap<String, ArtifactActivity> = HashMap::with_capacity(activity_rows.len());
        for row in &activity_rows {
            let artifact_id: String = row.try_get("artifact_id")?;
            activity.insert(
                artifact_id,
                ArtifactActivity {
                    count: row.try_get("report_count")?,
                    last_report_at: row.try_get("last_report_at")?,
                },
            );
        }

        let mut summaries = Vec::with_capacity(stored_rows.len() + activity.len());
        for room in rows::all(&stored_rows, rows::room)? {
            let reports = activity.remove(&room.artifact_id);
            if room.archived && !include_archived {
                continue;
            }
            let (count, last_report_at) = reports.map_or((0, i64::MIN), |a| (a.count, a.last_report_at));
            summaries.push(RoomSummary {
                id: Some(room.id),
                artifact_id: room.artifact_id,
                title: room.title,
                meta: room.meta,
                archived: room.archived,
                last_activity: room.updated_at.max(last_report_at),
                count,
            });
        }
        // What is left are implicit rooms: only reports carry their artifact id.
        for (artifact_id, reports) in activity {
            summaries.push(RoomSummary {
                id: None,
                title: artifact_id.clone(),
                artifact_id,
                meta: None,
                archived: false,
                last_activity: reports.last_report_at,
                count: reports.count,
            });
        }
        summaries.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then_with(|| a.artifact_id.cmp(&b.artifact_id)));
        Ok(summaries)
    }

    // API keys

    async fn create_key(&self, key: &ApiKey) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO api_keys (",
            key_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(&key.id)
        .bind(&key.project_id)
        .bind(&key.org_id)
        .bind(&key.name)
        .bind(&key.key_hash)
        .bind(json_text(&key.scopes))
        .bind(key.origin.as_str())
        .bind(key.expires_at)
        .bind(key.revoked_at)
        .bind(key.last_used_at)
        .bind(&key.agent_name)
        .bind(&key.agent_owner)
        .bind(key.created_at)
        .execute(&self.writer)
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn find_key_by_hash(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!("SELECT ", key_columns!(), " FROM api_keys WHERE key_hash = ?"))
            .bind(key_hash)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::api_key).transpose()
    }

    async fn get_key(&self, id: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!("SELECT ", key_columns!(), " FROM api_keys WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::api_key).transpose()
    }

    async fn list_keys(&self, project_id: &str) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE project_id = ? ORDER BY created_at, id"
        ))
        .bind(project_id)
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::api_key)
    }

    async fn revoke_key(&self, project_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>> {
        let result =
            sqlx::query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL")
                .bind(at)
                .bind(key_id)
                .bind(project_id)
                .execute(&self.writer)
                .await?;
        Ok((result.rows_affected() > 0).then_some(at))
    }

    async fn touch_key(&self, key_id: &str, at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = ? WHERE id = ?")
            .bind(at)
            .bind(key_id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn set_key_agent(&self, key_id: &str, agent_name: &str, owner: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE api_keys SET agent_name = ?, agent_owner = ? WHERE id = ?")
            .bind(agent_name)
            .bind(owner)
            .bind(key_id)
            .execute(&self.writer)
            .await?;
        found_or_not(result.rows_affected())
    }

    // Channel hints

    async fn create_hint(&self, hint: &Hint) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO hints (id, project_id, channel_key, weight, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&hint.id)
        .bind(&hint.project_id)
        .bind(&hint.channel_key)
        .bind(hint.weight.to_db())
        .bind(&hint.user_id)
        .bind(hint.created_at)
        .bind(hint.expires_at)
        .execute(&self.writer)
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn list_active_hints(&self, project_id: &str, user_id: Option<&str>, now: i64) -> StoreResult<Vec<Hint>> {
        let rows = sqlx::query(
            "SELECT id, project_id, channel_key, weight, user_id, created_at, expires_at FROM hints
             WHERE project_id = ? AND expires_at > ? AND (user_id IS NULL OR user_id = ?)
             ORDER BY created_at, id",
        )
        .bind(project_id)
        .bind(now)
        .bind(user_id)
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::hint)
    }

    async fn delete_expired_hints(&self, now: i64) -> StoreResult<u64> {
        let result = sqlx::query("DELETE FROM hints WHERE expires_at <= ?").bind(now).execute(&self.writer).await?;
        Ok(result.rows_affected())
    }

    // Comments

    async fn create_comment(&self, comment: &Comment) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO comments (",
            comment_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(&comment.id)
        .bind(&comment.report_id)
        .bind(&comment.project_id)
        .bind(&comment.author.kind)
        .bind(&comment.author.id)
        .bind(&comment.author.label)
        .bind(&comment.text)
        .bind(&comment.kind)
        .bind(comment.draft)
        .bind(comment.created_at)
        .bind(comment.published_at)
        .execute(&self.writer)
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn list_comments(&self, report_id: &str) -> StoreResult<Vec<Comment>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            comment_columns!(),
            " FROM comments WHERE report_id = ? ORDER BY created_at, id"
        ))
        .bind(report_id)
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::comment)
    }

    async fn publish_comment(&self, comment_id: &str, at: i64) -> StoreResult<Option<Comment>> {
        // Publishing twice keeps the first publication time.
        let row = sqlx::query(concat!(
            "UPDATE comments SET draft = 0, published_at = coalesce(published_at, ?) WHERE id = ? RETURNING ",
            comment_columns!()
        ))
        .bind(at)
        .bind(comment_id)
        .fetch_optional(&self.writer)
        .await?;
        row.as_ref().map(rows::comment).transpose()
    }

    async fn edit_draft_comment(&self, comment_id: &str, text: &str) -> StoreResult<Option<Comment>> {
        let row = sqlx::query(concat!(
            "UPDATE comments SET text = ? WHERE id = ? AND draft = 1 RETURNING ",
            comment_columns!()
        ))
        .bind(text)
        .bind(comment_id)
        .fetch_optional(&self.writer)
        .await?;
        row.as_ref().map(rows::comment).transpose()
    }

    async fn discard_draft_comment(&self, comment_id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM comments WHERE id = ? AND draft = 1")
            .bind(comment_id)
            .execute(&self.writer)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    // Viewed marks

    async fn mark_viewed(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()> {
        if report_ids.is_empty() {
            return Ok(());
        }
        // Marks are written off the request path and may arrive out of order: the upsert keeps the
        // latest. They ride the group commit with reports and blobs.
        let (reply, answer) = oneshot::channel();
        let queued = Job::Views(QueuedViews { report_ids: report_ids.to_vec(), viewer: viewer.to_string(), at, reply });
        self.write_queue.send(queued).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    async fn list_viewers(&self, report_id: &str) -> StoreResult<Vec<(String, i64)>> {
        Ok(sqlx::query_as(
            "SELECT viewer, viewed_at FROM viewed_marks WHERE report_id = ? ORDER BY viewed_at DESC, viewer",
        )
        .bind(report_id)
        .fetch_all(&self.reader)
        .await?)
    }

    // Flags

    async fn list_flags(&self, project_id: &str) -> StoreResult<Vec<Flag>> {
        let rows =
            sqlx::query("SELECT project_id, key, enabled, updated_at FROM flags WHERE project_id = ? ORDER BY key")
                .bind(project_id)
                .fetch_all(&self.reader)
                .await?;
        rows::all(&rows, rows::flag)
    }

    async fn get_flag(&self, project_id: &str, key: &str) -> StoreResult<Option<Flag>> {
        let row =
            sqlx::query("SELECT project_id, key, enabled, updated_at FROM flags WHERE project_id = ? AND key = ?")
                .bind(project_id)
                .bind(key)
                .fetch_optional(&self.reader)
                .await?;
        row.as_ref().map(rows::flag).transpose()
    }

    async fn set_flag(&self, flag: &Flag) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO flags (project_id, key, enabled, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (project_id, key) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at",
        )
        .bind(&flag.project_id)
        .bind(&flag.key)
        .bind(flag.enabled)
        .bind(flag.updated_at)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    // Blobs

    async fn create_blob(&self, blob: &Blob) -> StoreResult<()> {
        let (reply, answer) = oneshot::channel();
        let queued = Job::Blob(QueuedBlob { blob: blob.clone(), reply });
        // Either failure means the writer task is gone (the runtime is shutting down).
        self.write_queue.send(queued).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    async fn get_blob(&self, id: &str) -> StoreResult<Option<Blob>> {
        let row = sqlx::query(concat!("SELECT ", blob_columns!(), " FROM blobs WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(rows::blob).transpose()
    }

    async fn list_unbound_blobs(&self, before: i64, limit: u32) -> StoreResult<Vec<Blob>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            blob_columns!(),
            " FROM blobs WHERE report_id IS NULL AND created_at < ? ORDER BY created_at, id LIMIT ?"
        ))
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await?;
        rows::all(&rows, rows::blob)
    }

    async fn delete_unbound_blob(&self, id: &str) -> StoreResult<bool> {
        let result =
            sqlx::query("DELETE FROM blobs WHERE id = ? AND report_id IS NULL").bind(id).execute(&self.writer).await?;
        Ok(result.rows_affected() > 0)
    }

    async fn delete_expired_idempotency_keys(&self, before: i64) -> StoreResult<u64> {
        let result =
            sqlx::query("DELETE FROM idempotency_keys WHERE created_at < ?").bind(before).execute(&self.writer).await?;
        Ok(result.rows_affected())
    }
}
