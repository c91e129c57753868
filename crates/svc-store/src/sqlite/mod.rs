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

// What the shared queries need (see `shared/queries.rs`): this backend's types, two SQL
// fragments, and the inherent methods and functions further down.
type Db = Sqlite;
type DbRow = sqlx::sqlite::SqliteRow;
type ThisStore = SqliteStore;
/// A write transaction starts with `BEGIN IMMEDIATE`: it holds the write lock already.
macro_rules! for_update {
    () => {
        ""
    };
}
macro_rules! status_change_order {
    () => {
        "at, seq"
    };
}

pub mod backup;
mod checkpoint;
pub mod deliveries;
#[cfg(test)]
mod deliveries_tests;
pub use checkpoint::Checkpointed;
mod group_commit;
mod memory;

/// Whether the consumer `name` keeps its position in the deliveries' file (see [`deliveries`]).
fn keeps_apart(name: &str) -> bool {
    deliveries::CONSUMERS.contains(&name)
}

/// Events are written by one writer at a time: their ids follow commit order already.
async fn order_events(_conn: &mut sqlx::SqliteConnection) -> StoreResult<()> {
    Ok(())
}
// Compiled once per backend on purpose (see `shared/queries.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "../shared/accounts.rs"]
mod accounts;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/apply.rs"]
mod apply;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/events.rs"]
mod events;

#[path = "../shared/audit.rs"]
mod audit;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/deletion.rs"]
mod deletion;
mod deletion_index;
#[path = "../shared/mail.rs"]
mod mail;
#[path = "../shared/members.rs"]
mod members;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/oauth.rs"]
mod oauth;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/queries.rs"]
mod queries;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/reporters.rs"]
mod reporters;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/rows.rs"]
mod rows;
mod search;
mod short_ids;
#[path = "../shared/sightings.rs"]
mod sightings;
#[cfg(test)]
mod tests;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/trackers.rs"]
mod trackers;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/webhooks.rs"]
mod webhooks;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite};
use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use svc_core::model::*;
use tokio::sync::{mpsc, oneshot};

use crate::cache::HotCache;
use crate::health::WriteHealth;
use crate::{CreatedReport, ReportText, Store, StoreError, StoreResult, json_text};
use group_commit::{Job, QueuedBlob, QueuedReport, QueuedViews};
use rows::{report_columns, report_select_columns};

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const READ_CONNECTIONS: u32 = 4;
/// The name of the writer connection's thread (in `ps -L`, `top -H`, `perf`).
pub const WRITER_THREAD: &str = "svc-db-writer";
/// The name of each reader connection's thread.
pub const READER_THREAD: &str = "svc-db-reader";
/// Rows a reader connection may hand over before it waits for the caller to take them.
const READ_ROW_CHANNEL: usize = 256;
/// The writer's page cache: 8 MiB (a negative `cache_size` is in KiB). At 32 MiB it was a fifth
/// of the server's peak memory under ingest, at the same reports per second (bench/README.md).
const WRITER_CACHE_KIB: &str = "-8192";
/// Up to this many projects, a multi-project listing reads each project's index separately.
const MAX_PROJECTS_PER_UNION: usize = 50;
/// Rows per INSERT statement in bulk loads (16 parameters each, well under SQLite's 32,766).
const BULK_ROWS_PER_STATEMENT: usize = 500;

pub struct SqliteStore {
    writer: SqlitePool,
    /// The writer of the webhook deliveries' own file (see [`deliveries`]); the same pool as
    /// `writer` for an in-memory database.
    delivery_writer: SqlitePool,
    reader: SqlitePool,
    /// New reports and blobs waiting for their group commit.
    write_queue: mpsc::Sender<Job>,
    /// Projects by key and active channels, for ingest (see [`crate::cache`]).
    cache: HotCache,
    /// Whether writes currently fail (see [`crate::health`]).
    health: Arc<WriteHealth>,
    changes: crate::changes::ChangeFeed,
    /// Reports being filed now (see [`crate::load`]).
    load: Arc<crate::load::Load>,
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
        // The deliveries' file: beside the database, or in memory with it (then the one connection
        // attaches it, and writes both).
        let deliveries_path = if in_memory {
            writer_options = deliveries::attaching(writer_options, ":memory:");
            ":memory:".to_string()
        } else {
            deliveries::path_beside(options.get_filename())
                .to_str()
                .ok_or_else(|| StoreError::Corrupt("the database's path is not UTF-8".into()))?
                .to_string()
        };
        let writer = writer_options
            .connect_with(
                options
                    .clone()
                    .thread_name(|_| WRITER_THREAD.into())
                    // The one-trip commits of the group commit, one string per batch size, beside
                    // the hundred statements of every other write.
                    .statement_cache_capacity(100 + group_commit::ONE_TRIP_MAX)
                    .pragma("cache_size", WRITER_CACHE_KIB)
                    .pragma("temp_store", "memory")
                    // Checkpoints run beside the writer; its commits checkpoint only a WAL the
                    // rounds let grow far too long (see `checkpoint`). An in-memory database has
                    // no WAL.
                    .pragma(
                        "wal_autocheckpoint",
                        if in_memory { "1000".into() } else { checkpoint::WRITER_BACKSTOP_FRAMES.to_string() },
                    )
                    .pragma("journal_size_limit", checkpoint::WAL_SIZE_LIMIT.to_string()),
            )
            .await?;
        sqlx::migrate!("src/sqlite/migrations").run(&writer).await?;
        let delivery_writer = if in_memory {
            deliveries::prepare(&writer).await?;
            writer.clone()
        } else {
            deliveries::open_writer(options.clone(), &deliveries_path).await?
        };
        // An in-memory database lives in its connections: readers share the writer's.
        let reader = if in_memory {
            writer.clone()
        } else {
            // All opened now, by the thread connecting the store, and kept for the store's life: a
            // connection's thread starts in the scheduling class of the thread that opens it, and
            // one opened later by webhook delivery (in the idle class, see `crate::priority`) made
            // every request that drew it wait whenever another thread wanted a core (a listing's
            // p99 35-48 ms instead of 10-13). The writer is opened now too, and kept.
            // No ping before each use: a local file cannot drop the connection, and the ping was
            // a round trip to the connection's thread before every read.
            let readers = SqlitePoolOptions::new()
                .max_connections(READ_CONNECTIONS)
                .min_connections(READ_CONNECTIONS)
                .idle_timeout(None)
                .max_lifetime(None)
                .test_before_acquire(false);
            // sqlx hands rows from a connection's thread to the caller through a bounded channel;
            // at its default of 50 the thread stopped half-way through a 101-row page until the
            // caller caught up. A whole page (the largest listing is 201 rows) now fits.
            deliveries::attaching(readers, &deliveries_path)
                .connect_with(options.row_buffer_size(READ_ROW_CHANNEL).thread_name(|_| READER_THREAD.into()))
                .await?
        };

        let health = Arc::new(WriteHealth::new("sqlite"));
        let (write_queue, queue) = mpsc::channel(group_commit::QUEUE_CAPACITY);
        tokio::spawn(group_commit::run_writer(writer.clone(), queue, health.clone()));
        tokio::spawn(short_ids::run_indexer(writer.clone(), reader.clone(), write_queue.downgrade(), health.clone()));
        let load = Arc::new(crate::load::Load::default());
        tokio::spawn(search::run_indexer(
            writer.clone(),
            reader.clone(),
            write_queue.downgrade(),
            health.clone(),
            load.clone(),
        ));
        if !in_memory {
            tokio::spawn(checkpoint::run(writer.clone(), reader.clone(), write_queue.downgrade()));
        }
        Ok(SqliteStore {
            writer,
            delivery_writer,
            reader,
            write_queue,
            cache: HotCache::default(),
            health,
            changes: crate::changes::ChangeFeed::local(),
            load,
        })
    }

    /// One WAL checkpoint now (the task that runs them four times a second calls the same).
    pub async fn checkpoint_wal(&self) -> StoreResult<checkpoint::Checkpointed> {
        checkpoint::run_once(&self.writer, &self.reader).await
    }

    async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
        debug_assert_not_in_background_class();
        // IMMEDIATE takes the write lock up front, so a transaction that reads before it writes
        // cannot fail half-way on a lock held by another process (the CLI, for example).
        self.writer
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::from)
            .inspect_err(|error| self.note_failure(error))
    }

    /// A write transaction on the webhook deliveries' file (see [`deliveries`]): deferred, so it
    /// takes the write lock of that file alone, at its first write.
    async fn begin_delivery_write(&self) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
        self.delivery_writer.begin().await.map_err(StoreError::from).inspect_err(|error| self.note_failure(error))
    }

    fn delivery_pool(&self) -> &SqlitePool {
        &self.delivery_writer
    }

    /// Where the consumer `name` is, when its position is kept in the deliveries' file.
    async fn position_kept_apart(&self, name: &str) -> StoreResult<Option<i64>> {
        if !keeps_apart(name) {
            return Ok(None);
        }
        Ok(sqlx::query_scalar("SELECT position FROM feed_positions WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.reader)
            .await?)
    }

    /// The lowest position kept in the deliveries' file, and the consumer it belongs to (one).
    async fn lowest_position_kept_apart(&self) -> StoreResult<(&'static str, Option<i64>)> {
        let name = deliveries::CONSUMERS[0];
        Ok((name, self.position_kept_apart(name).await?))
    }

    /// Deletes the deliveries of endpoints that were deleted (foreign keys cannot reach across
    /// files): `of` names them, or, when `None`, every delivery whose endpoint is gone.
    async fn forget_deliveries(&self, of: Option<&[String]>) -> StoreResult<u64> {
        let mut query = QueryBuilder::<Sqlite>::new("DELETE FROM webhook_deliveries WHERE webhook_id ");
        match of {
            Some([]) => return Ok(0),
            Some(ids) => {
                query.push("IN ");
                queries::push_list(&mut query, ids);
            }
            None => {
                query.push("NOT IN (SELECT id FROM webhooks)");
            }
        }
        let done = query.build().execute(&self.delivery_writer).await.map_err(map_write_error)?;
        Ok(done.rows_affected())
    }

    /// Commits a transaction of [`Self::begin_write`], noting a failure in the write health.
    async fn commit_write(&self, tx: sqlx::Transaction<'static, Sqlite>) -> StoreResult<()> {
        tx.commit().await.map_err(StoreError::from).inspect_err(|error| self.note_failure(error))
    }
}

/// The writer is one connection every report waits for: a thread in the idle class (webhook
/// delivery's, see `crate::priority`) must not drive it, or reports wait while that thread waits
/// for a core, and a replacement connection it opened would start in the idle class. Checked in
/// debug builds (the tests), where every write from such a thread fails loudly.
fn debug_assert_not_in_background_class() {
    debug_assert!(
        !crate::priority::gives_way(None),
        "a thread in the idle class writes through the server's SQLite writer; send the write to the server's runtime"
    );
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
            "users.email" => "email",
            other if other.ends_with(".id") => "id",
            other => other,
        };
        return StoreError::Conflict(subject.to_string());
    }
    StoreError::Database(error)
}

/// A report's JSON text binds as text: the columns are TEXT.
fn report_json(text: &str) -> &str {
    text
}

/// A report's JSON text column as serde_json wrote it, neither checked again nor parsed.
fn raw_json_column(row: &DbRow, column: impl rows::Column) -> StoreResult<Option<crate::StoredJson>> {
    Ok(row.try_get::<Option<String>, _>(column)?.map(crate::StoredJson::from_column))
}

fn push_project_list(query: &mut QueryBuilder<Sqlite>, project_ids: &BTreeSet<&str>) {
    query.push("(");
    let mut list = query.separated(", ");
    for project_id in project_ids {
        list.push_bind(project_id.to_string());
    }
    query.push(")");
}

/// Listings are prepared statements, kept in each connection's cache.
fn list_is_prepared(_filter: &ReportFilter) -> bool {
    true
}

/// The query of a report listing; `None` when it can only be empty.
fn list_query(filter: &ReportFilter) -> Option<QueryBuilder<Sqlite>> {
    let project_ids: BTreeSet<&str> = filter.project_ids.iter().map(String::as_str).collect();
    if project_ids.is_empty() || filter.limit == 0 {
        return None;
    }
    if search::uses_index(filter) {
        return search::list_query(filter, &project_ids);
    }
    let limit = i64::from(filter.limit);
    let mut query = QueryBuilder::<Sqlite>::new("");
    if project_ids.len() == 1 || project_ids.len() > MAX_PROJECTS_PER_UNION {
        query.push(concat!("SELECT ", report_select_columns!(), " FROM reports WHERE project_id IN "));
        push_project_list(&mut query, &project_ids);
        queries::push_optional_filters(&mut query, filter);
        queries::push_before(&mut query, filter);
    } else {
        // Each project's newest `limit` reports come straight off its index, then the union is
        // merged and cut: an `IN` list over several projects cannot be read in id order.
        for (index, project_id) in project_ids.iter().enumerate() {
            if index > 0 {
                query.push(" UNION ALL ");
            }
            query.push(concat!(
                "SELECT * FROM (SELECT ",
                report_select_columns!(),
                " FROM reports WHERE project_id = "
            ));
            query.push_bind(project_id.to_string());
            queries::push_optional_filters(&mut query, filter);
            queries::push_before(&mut query, filter);
            query.push(" ORDER BY id DESC");
            queries::push_limit(&mut query, limit);
            query.push(")");
        }
    }
    query.push(" ORDER BY id DESC");
    queries::push_limit(&mut query, limit);
    Some(query)
}

impl SqliteStore {
    fn read_pool(&self) -> &SqlitePool {
        &self.reader
    }

    fn write_pool(&self) -> &SqlitePool {
        debug_assert_not_in_background_class();
        &self.writer
    }

    /// A read transaction: one snapshot of the database for all its queries.
    async fn begin_snapshot(&self) -> StoreResult<sqlx::Transaction<'static, Sqlite>> {
        Ok(self.reader.begin().await?)
    }

    /// Queues a write for the group commit and waits for its outcome.
    async fn through_group_commit<T>(&self, job: Job, answer: oneshot::Receiver<StoreResult<T>>) -> StoreResult<T> {
        // Either failure means the writer task is gone (the runtime is shutting down).
        self.write_queue.send(job).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    async fn file_report(&self, new: NewReport) -> StoreResult<CreatedReport> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Report(Box::new(QueuedReport { text: ReportText::of(&new.report), new, reply }));
        self.through_group_commit(job, answer).await
    }

    async fn file_blob(&self, blob: &Blob) -> StoreResult<()> {
        let (reply, answer) = oneshot::channel();
        self.through_group_commit(Job::Blob(QueuedBlob { blob: blob.clone(), reply }), answer).await
    }

    /// Marks are written off the request path and may arrive out of order: the upsert keeps the
    /// latest. They ride the group commit with reports and blobs.
    async fn record_views(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Views(QueuedViews { report_ids: report_ids.to_vec(), viewer: viewer.to_string(), at, reply });
        self.through_group_commit(job, answer).await
    }

    async fn short_id_rows(&self, project_ids: &[String], short_id: &str, limit: u32) -> StoreResult<Vec<DbRow>> {
        let project_ids: BTreeSet<&str> = project_ids.iter().map(String::as_str).collect();
        let mut query = if short_id.len() == 6 {
            short_ids::lookup_query(&project_ids, short_id, limit)
        } else {
            // Any other length (never a short id the API hands out) scans the projects' reports.
            let mut query = QueryBuilder::<Sqlite>::new(concat!("SELECT ", report_select_columns!(), " FROM reports"));
            query.push(" WHERE project_id IN ");
            push_project_list(&mut query, &project_ids);
            query
                .push(" AND substr(id, -")
                .push_bind(short_id.len() as i64)
                .push(") = ")
                .push_bind(short_id.to_string());
            query.push(" ORDER BY id DESC");
            queries::push_limit(&mut query, limit);
            query
        };
        Ok(query.build().fetch_all(&self.reader).await?)
    }

    async fn load_reports_bulk(&self, reports: &[Report]) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        for chunk in reports.chunks(BULK_ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(concat!("INSERT INTO reports (", report_columns!(), ") "));
            query.push_values(chunk, |mut row, report| {
                row.push_bind(report.id.clone())
                    .push_bind(report.project_id.clone())
                    .push_bind(report.channel_key.clone())
                    .push_bind(report.status.as_str())
                    .push_bind(report.title.clone())
                    .push_bind(json_text(&report.blocks))
                    .push_bind(json_text(&report.context))
                    .push_bind(report.identity.as_ref().map(json_text))
                    .push_bind(report.identity_error.clone())
                    .push_bind(report.author.kind.as_str())
                    .push_bind(report.author.id.clone())
                    .push_bind(report.author.label.clone())
                    .push_bind(report.artifact_id.clone())
                    .push_bind(report.url.clone())
                    .push_bind(report.created_at)
                    .push_bind(report.updated_at);
            });
            query.build().execute(&mut *tx).await.map_err(map_write_error)?;
        }
        // A bulk load copies its short ids and indexes its reports for search at once, in the same
        // transaction.
        short_ids::copy_all_in(&mut tx).await?;
        search::index_all_in(&mut tx).await?;
        self.commit_write(tx).await?;
        Ok(())
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn changes(&self) -> &crate::changes::ChangeFeed {
        &self.changes
    }

    fn load(&self) -> &crate::load::Load {
        &self.load
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        if self.health.is_failing() {
            self.probe_write().await?;
        }
        Ok(())
    }

    async fn run_maintenance_once(&self) -> StoreResult<()> {
        short_ids::run_once(&self.writer, &self.reader, &self.health).await?;
        search::run_once(&self.writer, &self.reader, &self.health).await?;
        self.checkpoint_wal().await.map(|_| ())
    }
}
