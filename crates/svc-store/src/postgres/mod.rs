//! PostgreSQL backend: for several Svc instances sharing one database. Runtime sqlx queries only;
//! migrations live in `migrations/` and run on connect (sqlx holds an advisory lock while it
//! migrates, so instances starting together do not race).
//!
//! Lost connections (the server restarted, a backend was terminated, the network dropped): a
//! connection whose query failed that way is not reused (sqlx pings a connection as it comes back
//! to the pool and drops it if the ping fails). Idle connections are not pinged before every use,
//! so after a restart the pool would hand out one dead connection per request until all were
//! found; instead, once any query has seen a connection lost, every connection idle since before
//! that moment is pinged before its next use (see [`note_if_connection_lost`]). A plain report
//! whose connection was lost is retried once on a checked connection (see [`group_commit`]), as is
//! the readiness round trip, so a restart costs at most the requests that meet a dead connection
//! before the first one is noticed (one, when requests come one at a time), and no plain report.

mod group_commit;
mod reports;
mod rooms;
mod rows;

use crate::{CreatedReport, Store, StoreError, StoreResult};
use async_trait::async_trait;
use rows::*;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{ConnectOptions, Connection, Executor};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};
use svc_core::model::*;

use crate::cache::HotCache;
use crate::health::{PROBE_WRITE, WriteHealth, is_storage_failure};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("src/postgres/migrations");

const MAX_CONNECTIONS: u32 = 16;
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// A pooled connection idle longer than this is pinged before use.
const PING_WHEN_IDLE_FOR: Duration = Duration::from_secs(30);
/// Idle connections are closed after this, so a quiet instance does not hold server slots.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The time base of [`CONNECTION_LOST_AT`].
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
/// When this process last saw a PostgreSQL connection lost, in nanoseconds since [`EPOCH`] (0:
/// never). Process-wide: every query's error passes through [`note_if_connection_lost`], which has
/// no store at hand; a store that lost nothing only pays one ping per idle connection.
static CONNECTION_LOST_AT: AtomicU64 = AtomicU64::new(0);

fn nanos_since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(*EPOCH).as_nanos()).unwrap_or(u64::MAX)
}

/// Did this error come from a connection that is gone (rather than from the statement)?
pub(crate) fn is_connection_lost(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) => true,
        // Connection exceptions, and the server's own shutdown or termination of the backend
        // (admin_shutdown, crash_shutdown, cannot_connect_now).
        sqlx::Error::Database(database_error) => database_error
            .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
            .is_some_and(|pg| matches!(pg.code(), "57P01" | "57P02" | "57P03") || pg.code().starts_with("08")),
        _ => false,
    }
}

/// Remembers when a connection was lost (see the module notes). Called for every database error.
pub(crate) fn note_if_connection_lost(error: &sqlx::Error) {
    if is_connection_lost(error) {
        CONNECTION_LOST_AT.fetch_max(nanos_since_epoch(Instant::now()).max(1), Ordering::AcqRel);
    }
}

/// Has this connection been idle since before the last lost connection was seen?
fn idle_since_a_loss(idle_for: Duration) -> bool {
    let lost_at = CONNECTION_LOST_AT.load(Ordering::Acquire);
    lost_at != 0 && Instant::now().checked_sub(idle_for).is_some_and(|since| nanos_since_epoch(since) <= lost_at)
}

/// A PostgreSQL-backed [`Store`]. Cheap to clone (the pool is shared).
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
    /// Projects by key and active channels, for ingest (see [`crate::cache`]).
    cache: std::sync::Arc<HotCache>,
    /// Plain reports waiting for their group commit.
    report_queue: tokio::sync::mpsc::Sender<group_commit::Queued>,
    /// Whether writes currently fail (see [`crate::health`]).
    health: Arc<WriteHealth>,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://...`) and runs pending migrations.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(PgConnectOptions::from_str(url)?, MAX_CONNECTIONS).await
    }

    /// Creates a new, uniquely named schema in the database at `url` and connects with every
    /// pooled connection's `search_path` set to it, migrations included: an isolated store for
    /// one test. The schema is left behind for inspection.
    pub async fn connect_fresh_schema(url: &str) -> StoreResult<Self> {
        let options = PgConnectOptions::from_str(url)?;
        // Object ids are time-ordered with a random tail: unique across processes and tests.
        let schema = format!("t_{}", svc_core::ids::new_id());
        let mut connection = options.connect().await?;
        // The name is `t_` + hex, so it needs no quoting beyond the identifier quotes.
        connection.execute(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\""))).await?;
        drop_stale_test_schemas(&mut connection).await?;
        connection.close().await?;
        // Tests open many pools side by side; keep each small. The schema's name is also the
        // connections' application name, so a test can find its own backends in pg_stat_activity.
        Self::connect_with(options.options([("search_path", schema.as_str())]).application_name(&schema), 4).await
    }

    async fn connect_with(options: PgConnectOptions, max_connections: u32) -> StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .idle_timeout(IDLE_TIMEOUT)
            // A ping before every use was a second round trip per query, and as much PostgreSQL
            // work as a page listing's own query. Only a connection idle for a while is checked
            // (the one likely to be stale after a database restart).
            .test_before_acquire(false)
            .before_acquire(|connection, meta| {
                Box::pin(async move {
                    // Also one that sat idle through a lost connection: the server may have
                    // restarted since (see the module notes).
                    if meta.idle_for > PING_WHEN_IDLE_FOR || idle_since_a_loss(meta.idle_for) {
                        connection.ping().await?;
                    }
                    Ok(true)
                })
            })
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        let health = Arc::new(WriteHealth::new("postgres"));
        let report_queue = group_commit::start(pool.clone(), health.clone());
        Ok(Self { pool, cache: Default::default(), report_queue, health })
    }

    fn note_failure(&self, error: &StoreError) {
        if let StoreError::Database(error) = error
            && is_storage_failure(error)
        {
            self.health.failed(error);
        }
    }

    /// The probe write of [`crate::health`]: succeeds only if the database accepts writes.
    async fn probe_write(&self) -> StoreResult<()> {
        match sqlx::query(PROBE_WRITE).execute(&self.pool).await {
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

    /// The underlying pool (for tools and benchmarks that need raw SQL).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// Test schemas are named after time-ordered ids; drop those older than an hour so repeated test
/// runs do not fill the database. Younger ones may belong to a suite running right now.
async fn drop_stale_test_schemas(connection: &mut sqlx::PgConnection) -> StoreResult<()> {
    let cutoff = svc_core::time::now_ms() - 3_600_000;
    let names: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE nspname ~ '^t_[0-9a-f]{24}$'")
            .fetch_all(&mut *connection)
            .await?;
    for name in names {
        let stale = svc_core::ids::id_time_ms(&name[2..]).is_some_and(|ms| ms < cutoff);
        if stale {
            // Another suite may be dropping the same one; that is fine.
            let _ = connection.execute(sqlx::AssertSqlSafe(format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))).await;
        }
    }
    Ok(())
}

/// Turns a unique violation (SQLSTATE 23505) into `Conflict` naming what was duplicated; any
/// other error passes through as a database error.
fn db_error(error: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &error
        && db.is_unique_violation()
    {
        let subject = match db.constraint() {
            Some("projects_org_slug_key") => "project slug",
            Some("projects_project_key_key") => "project key",
            Some("channels_project_key_key") => "channel key",
            Some("rooms_project_artifact_key") => "room artifact id",
            Some("api_keys_key_hash_key") => "api key hash",
            Some("flags_pkey") => "flag key",
            Some(name) if name.ends_with("_pkey") => "id",
            Some(name) => name,
            None => "unique constraint",
        };
        return StoreError::Conflict(subject.to_owned());
    }
    StoreError::from(error)
}

/// `NotFound` when an update touched no row.
fn require_row(rows_affected: u64) -> StoreResult<()> {
    if rows_affected == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

#[async_trait]
impl Store for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn ping(&self) -> StoreResult<()> {
        if let Err(error) = sqlx::query("SELECT 1").execute(&self.pool).await {
            if !is_connection_lost(&error) {
                return Err(error.into());
            }
            // Once more, on a connection the pool now checks first (see the module notes).
            note_if_connection_lost(&error);
            sqlx::query("SELECT 1").execute(&self.pool).await?;
        }
        if self.health.is_failing() {
            self.probe_write().await?;
        }
        Ok(())
    }

    // Organizations

    async fn create_organization(&self, org: &Organization) -> StoreResult<()> {
        sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(&org.id)
            .bind(&org.name)
            .bind(org.created_at)
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn get_organization(&self, id: &str) -> StoreResult<Option<Organization>> {
        let row = sqlx::query(concat!("SELECT ", organization_columns!(), " FROM organizations WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(organization).transpose()
    }

    async fn find_organization_by_name(&self, name: &str) -> StoreResult<Option<Organization>> {
        // Names are not unique; the oldest organization of that name wins.
        let row = sqlx::query(concat!(
            "SELECT ",
            organization_columns!(),
            " FROM organizations WHERE name = $1 ORDER BY created_at, id LIMIT 1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(organization).transpose()
    }

    async fn count_organizations(&self) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM organizations").fetch_one(&self.pool).await?)
    }

    // Projects

    async fn create_project(&self, project: &Project, channels: &[Channel]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO projects (id, org_id, name, slug, project_key, url_patterns, default_channel_key, \
             widget_config, allowed_origins, identity_secret, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&project.id)
        .bind(&project.org_id)
        .bind(&project.name)
        .bind(&project.slug)
        .bind(&project.project_key)
        .bind(Json(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(&project.widget_config)
        .bind(Json(&project.allowed_origins))
        .bind(&project.identity_secret)
        .bind(project.created_at)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        for channel in channels {
            insert_channel(&mut *tx, channel).await?;
        }
        tx.commit().await?;
        self.cache.clear();
        Ok(())
    }

    async fn get_project(&self, id: &str) -> StoreResult<Option<Project>> {
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(project).transpose()
    }

    async fn get_project_by_key(&self, project_key: &str) -> StoreResult<Option<Project>> {
        if let Some(project) = self.cache.project_by_key(project_key) {
            return Ok(Some(project));
        }
        let generation = self.cache.generation();
        let row = sqlx::query(concat!("SELECT ", project_columns!(), " FROM projects WHERE project_key = $1"))
            .bind(project_key)
            .fetch_optional(&self.pool)
            .await?;
        let found = row.as_ref().map(project).transpose()?;
        if let Some(found) = &found {
            self.cache.remember_project(generation, found);
        }
        Ok(found)
    }

    async fn list_projects(&self, org_id: &str) -> StoreResult<Vec<Project>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            project_columns!(),
            " FROM projects WHERE org_id = $1 ORDER BY created_at, id"
        ))
        .bind(org_id)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, project)
    }

    async fn update_project(&self, project: &Project) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE projects SET name = $2, url_patterns = $3, default_channel_key = $4, widget_config = $5, \
             allowed_origins = $6 WHERE id = $1",
        )
        .bind(&project.id)
        .bind(&project.name)
        .bind(Json(&project.url_patterns))
        .bind(&project.default_channel_key)
        .bind(&project.widget_config)
        .bind(Json(&project.allowed_origins))
        .execute(&self.pool)
        .await?;
        self.cache.clear();
        require_row(result.rows_affected())
    }

    async fn set_identity_secret(&self, project_id: &str, secret: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE projects SET identity_secret = $2 WHERE id = $1")
            .bind(project_id)
            .bind(secret)
            .execute(&self.pool)
            .await?;
        self.cache.clear();
        require_row(result.rows_affected())
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
            " FROM channels WHERE project_id = $1 AND ($2 OR NOT archived) ORDER BY created_at, id"
        ))
        .bind(project_id)
        .bind(include_archived)
        .fetch_all(&self.pool)
        .await?;
        let channels = all(&rows, channel)?;
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
                .fetch_optional(&self.pool)
                .await?;
        row.as_ref().map(channel).transpose()
    }

    async fn create_channel(&self, channel: &Channel) -> StoreResult<()> {
        let result = insert_channel(&self.pool, channel).await;
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
        .bind(&channel.matchers)
        .bind(channel.archived)
        .bind(channel.updated_at)
        .execute(&self.pool)
        .await?;
        self.cache.clear();
        require_row(result.rows_affected())
    }

    // Reports

    async fn create_report(&self, new: &NewReport) -> StoreResult<CreatedReport> {
        if new.idempotency_key.is_some() || !new.blob_ids.is_empty() {
            let created = reports::create_report(&self.pool, new).await;
            match &created {
                Ok(CreatedReport::Created(_)) => self.health.succeeded(),
                Ok(CreatedReport::Repeat(_)) => {}
                Err(error) => self.note_failure(error),
            }
            return created;
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let queued = group_commit::Queued { report: new.report.clone(), reply };
        // Either failure means the dispatcher is gone (the runtime is shutting down).
        self.report_queue.send(queued).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        let report = answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))??;
        Ok(CreatedReport::Created(report))
    }

    async fn get_report(&self, id: &str) -> StoreResult<Option<Report>> {
        let row = sqlx::query(concat!("SELECT ", report_columns!(), " FROM reports WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(report).transpose()
    }

    async fn list_reports(&self, filter: &ReportFilter) -> StoreResult<Vec<Report>> {
        reports::list_reports(&self.pool, filter).await
    }

    async fn list_reports_text(&self, filter: &ReportFilter) -> StoreResult<Vec<crate::ListedReport>> {
        reports::list_reports_text(&self.pool, filter).await
    }

    async fn find_reports_by_short_id(
        &self,
        project_ids: &[String],
        short_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<Report>> {
        reports::find_reports_by_short_id(&self.pool, project_ids, short_id, limit).await
    }

    async fn set_report_status(
        &self,
        report_id: &str,
        status: &str,
        by: &Author,
        at: i64,
    ) -> StoreResult<StatusChange> {
        reports::set_report_status(&self.pool, report_id, status, by, at).await
    }

    async fn status_history(&self, report_id: &str) -> StoreResult<Vec<StatusChange>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            status_change_columns!(),
            " FROM status_changes WHERE report_id = $1 ORDER BY at, id"
        ))
        .bind(report_id)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, status_change)
    }

    async fn insert_reports_bulk(&self, reports: &[Report]) -> StoreResult<()> {
        reports::insert_reports_bulk(&self.pool, reports).await
    }

    // Rooms

    async fn get_room(&self, project_id: &str, artifact_id: &str) -> StoreResult<Option<Room>> {
        let row =
            sqlx::query(concat!("SELECT ", room_columns!(), " FROM rooms WHERE project_id = $1 AND artifact_id = $2"))
                .bind(project_id)
                .bind(artifact_id)
                .fetch_optional(&self.pool)
                .await?;
        row.as_ref().map(room).transpose()
    }

    async fn count_room_reports(&self, project_id: &str, artifact_id: &str) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM reports WHERE project_id = $1 AND artifact_id = $2")
            .bind(project_id)
            .bind(artifact_id)
            .fetch_one(&self.pool)
            .await?)
    }

    async fn upsert_room(&self, room: &Room, changes: &RoomChanges) -> StoreResult<(Room, bool)> {
        rooms::upsert_room(&self.pool, room, changes).await
    }

    async fn list_rooms(&self, project_id: &str, include_archived: bool) -> StoreResult<Vec<RoomSummary>> {
        rooms::list_rooms(&self.pool, project_id, include_archived).await
    }

    // API keys

    async fn create_key(&self, key: &ApiKey) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO api_keys (id, project_id, org_id, name, key_hash, scopes, origin, expires_at, revoked_at, \
             last_used_at, agent_name, agent_owner, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
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
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn find_key_by_hash(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!("SELECT ", key_columns!(), " FROM api_keys WHERE key_hash = $1"))
            .bind(key_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(api_key).transpose()
    }

    async fn get_key(&self, id: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!("SELECT ", key_columns!(), " FROM api_keys WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(api_key).transpose()
    }

    async fn list_keys(&self, project_id: &str) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE project_id = $1 ORDER BY created_at, id"
        ))
        .bind(project_id)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, api_key)
    }

    async fn revoke_key(&self, project_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>> {
        Ok(sqlx::query_scalar(
            "UPDATE api_keys SET revoked_at = $3 WHERE project_id = $1 AND id = $2 AND revoked_at IS NULL \
             RETURNING revoked_at",
        )
        .bind(project_id)
        .bind(key_id)
        .bind(at)
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn touch_key(&self, key_id: &str, at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1")
            .bind(key_id)
            .bind(at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn set_key_agent(&self, key_id: &str, agent_name: &str, owner: Option<&str>) -> StoreResult<()> {
        let result = sqlx::query("UPDATE api_keys SET agent_name = $2, agent_owner = $3 WHERE id = $1")
            .bind(key_id)
            .bind(agent_name)
            .bind(owner)
            .execute(&self.pool)
            .await?;
        require_row(result.rows_affected())
    }

    // Channel hints

    async fn create_hint(&self, hint: &Hint) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO hints (id, project_id, channel_key, weight, user_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&hint.id)
        .bind(&hint.project_id)
        .bind(&hint.channel_key)
        .bind(hint.weight.to_db())
        .bind(&hint.user_id)
        .bind(hint.created_at)
        .bind(hint.expires_at)
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
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
        .fetch_all(&self.pool)
        .await?;
        all(&rows, hint)
    }

    async fn delete_expired_hints(&self, now: i64) -> StoreResult<u64> {
        let result = sqlx::query("DELETE FROM hints WHERE expires_at <= $1").bind(now).execute(&self.pool).await?;
        Ok(result.rows_affected())
    }

    // Comments

    async fn create_comment(&self, comment: &Comment) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO comments (id, report_id, project_id, author_kind, author_id, author_label, text, kind, \
             draft, created_at, published_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
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
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn list_comments(&self, report_id: &str) -> StoreResult<Vec<Comment>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            comment_columns!(),
            " FROM comments WHERE report_id = $1 ORDER BY created_at, id"
        ))
        .bind(report_id)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, comment)
    }

    async fn publish_comment(&self, comment_id: &str, at: i64) -> StoreResult<Option<Comment>> {
        // Publishing twice keeps the first publication time.
        let row = sqlx::query(concat!(
            "UPDATE comments SET draft = FALSE, published_at = COALESCE(published_at, $2) WHERE id = $1 RETURNING ",
            comment_columns!()
        ))
        .bind(comment_id)
        .bind(at)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(comment).transpose()
    }

    async fn edit_draft_comment(&self, comment_id: &str, text: &str) -> StoreResult<Option<Comment>> {
        let row = sqlx::query(concat!(
            "UPDATE comments SET text = $2 WHERE id = $1 AND draft RETURNING ",
            comment_columns!()
        ))
        .bind(comment_id)
        .bind(text)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(comment).transpose()
    }

    async fn discard_draft_comment(&self, comment_id: &str) -> StoreResult<bool> {
        let done =
            sqlx::query("DELETE FROM comments WHERE id = $1 AND draft").bind(comment_id).execute(&self.pool).await?;
        Ok(done.rows_affected() > 0)
    }

    // Viewed marks

    async fn mark_viewed(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()> {
        // One row per report: ON CONFLICT cannot touch the same row twice in one statement, and a
        // fixed order keeps concurrent markers from deadlocking.
        let mut unique_ids = report_ids.to_vec();
        unique_ids.sort_unstable();
        unique_ids.dedup();
        if unique_ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO viewed_marks (report_id, viewer, viewed_at) SELECT id, $2, $3 FROM unnest($1::text[]) AS id \
             ON CONFLICT (report_id, viewer) DO UPDATE \
             SET viewed_at = GREATEST(viewed_marks.viewed_at, EXCLUDED.viewed_at)",
        )
        .bind(&unique_ids)
        .bind(viewer)
        .bind(at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn list_viewers(&self, report_id: &str) -> StoreResult<Vec<(String, i64)>> {
        Ok(sqlx::query_as(
            "SELECT viewer, viewed_at FROM viewed_marks WHERE report_id = $1 ORDER BY viewed_at DESC, viewer",
        )
        .bind(report_id)
        .fetch_all(&self.pool)
        .await?)
    }

    // Flags

    async fn list_flags(&self, project_id: &str) -> StoreResult<Vec<Flag>> {
        let rows = sqlx::query(concat!("SELECT ", flag_columns!(), " FROM flags WHERE project_id = $1 ORDER BY key"))
            .bind(project_id)
            .fetch_all(&self.pool)
            .await?;
        all(&rows, flag)
    }

    async fn get_flag(&self, project_id: &str, key: &str) -> StoreResult<Option<Flag>> {
        let row = sqlx::query(concat!("SELECT ", flag_columns!(), " FROM flags WHERE project_id = $1 AND key = $2"))
            .bind(project_id)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(flag).transpose()
    }

    async fn set_flag(&self, flag: &Flag) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO flags (project_id, key, enabled, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (project_id, key) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at",
        )
        .bind(&flag.project_id)
        .bind(&flag.key)
        .bind(flag.enabled)
        .bind(flag.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    // Blobs

    async fn create_blob(&self, blob: &Blob) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO blobs (id, project_id, kind, mime, bytes, width, height, duration_ms, name, report_id, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
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
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn get_blob(&self, id: &str) -> StoreResult<Option<Blob>> {
        let row = sqlx::query(concat!("SELECT ", blob_columns!(), " FROM blobs WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(blob).transpose()
    }

    async fn list_unbound_blobs(&self, before: i64, limit: u32) -> StoreResult<Vec<Blob>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            blob_columns!(),
            " FROM blobs WHERE report_id IS NULL AND created_at < $1 ORDER BY created_at, id LIMIT $2"
        ))
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        all(&rows, blob)
    }

    async fn delete_unbound_blob(&self, id: &str) -> StoreResult<bool> {
        let result =
            sqlx::query("DELETE FROM blobs WHERE id = $1 AND report_id IS NULL").bind(id).execute(&self.pool).await?;
        Ok(result.rows_affected() > 0)
    }

    async fn delete_expired_idempotency_keys(&self, before: i64) -> StoreResult<u64> {
        let result =
            sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1").bind(before).execute(&self.pool).await?;
        Ok(result.rows_affected())
    }
}

async fn insert_channel<'c, E>(executor: E, channel: &Channel) -> StoreResult<()>
where
    E: Executor<'c, Database = sqlx::Postgres>,
{
    sqlx::query(
        "INSERT INTO channels (id, project_id, key, name, color, mascot, base_weight, matchers, archived, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&channel.id)
    .bind(&channel.project_id)
    .bind(&channel.key)
    .bind(&channel.name)
    .bind(&channel.color)
    .bind(&channel.mascot)
    .bind(channel.base_weight)
    .bind(&channel.matchers)
    .bind(channel.archived)
    .bind(channel.created_at)
    .bind(channel.updated_at)
    .execute(executor)
    .await
    .map_err(db_error)?;
    Ok(())
}

#[cfg(test)]
mod tests;
