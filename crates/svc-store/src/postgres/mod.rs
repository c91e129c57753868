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

// What the shared queries need (see `shared/queries.rs`): this backend's types, two SQL
// fragments, and the inherent methods and functions further down and in `reports`.
type Db = sqlx::Postgres;
type DbRow = sqlx::postgres::PgRow;
type ThisStore = PostgresStore;
/// Row locks: concurrent writers of one report queue up behind each other.
macro_rules! for_update {
    () => {
        " FOR UPDATE"
    };
}
macro_rules! status_change_order {
    () => {
        "at, id"
    };
}

mod group_commit;

/// Every consumer keeps its position in `event_consumers` here.
fn keeps_apart(_name: &str) -> bool {
    false
}

/// The advisory lock every transaction that writes events takes before its first event (held to
/// its commit), so event ids follow commit order (see `shared/events.rs`).
pub(super) const EVENT_ORDER_LOCK: i64 = 0x5356_4345_5645_4e54; // "SVCEVENT"

async fn order_events(conn: &mut sqlx::PgConnection) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(EVENT_ORDER_LOCK).execute(conn).await?;
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
mod reports;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/rows.rs"]
mod rows;
mod search;
#[path = "../shared/sightings.rs"]
mod sightings;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/trackers.rs"]
mod trackers;
#[allow(clippy::duplicate_mod)]
#[path = "../shared/webhooks.rs"]
mod webhooks;

use crate::{CreatedReport, Store, StoreError, StoreResult};
use async_trait::async_trait;
use reports::{list_is_prepared, list_query, raw_json_column, report_json};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, Executor};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};
use svc_core::model::*;

use crate::cache::HotCache;
use crate::health::WriteHealth;

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
    changes: crate::changes::ChangeFeed,
    /// Reports being filed now (see [`crate::load`]).
    load: Arc<crate::load::Load>,
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
        // Every query here is short; a plan the estimates price high (a new table, a backlog)
        // was compiled with LLVM first, costing more than running it.
        // A random page priced like a sequential one (the working set is in memory or on SSD):
        // at the default of 4, a filtered listing (`status=fixed`, a channel) walked the primary
        // key from the newest report and checked each, cheap only while matches are spread evenly;
        // with the newest 100,000 reports new, a page of fixed ones read all of them (160 ms at
        // 1,000,000 reports, against 0.2 ms from the status index).
        let options = options.options([("jit", "off"), ("random_page_cost", "1.1")]);
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
        let changes = crate::changes::ChangeFeed::postgres(pool.clone());
        let load = Arc::new(crate::load::Load::default());
        tokio::spawn(search::run_indexer(
            pool.clone(),
            report_queue.downgrade(),
            health.clone(),
            changes.last_change(),
            load.clone(),
        ));
        Ok(Self { pool, cache: Default::default(), report_queue, health, changes, load })
    }

    /// Another store on the same database and schema, with its own pool and tasks: what a second
    /// `svc serve` instance would open (for tests of several instances).
    pub async fn another_instance(&self) -> StoreResult<Self> {
        Self::connect_with((*self.pool.connect_options()).clone(), 4).await
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
fn map_write_error(error: sqlx::Error) -> StoreError {
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
            // Not "id": a taken key says nothing about whether a report of the same id is stored.
            Some("idempotency_keys_pkey") => "idempotency key",
            Some("users_email_key") => "email",
            Some(name) if name.ends_with("_pkey") => "id",
            Some(name) => name,
            None => "unique constraint",
        };
        return StoreError::Conflict(subject.to_owned());
    }
    StoreError::from(error)
}

impl PostgresStore {
    fn read_pool(&self) -> &PgPool {
        &self.pool
    }

    fn write_pool(&self) -> &PgPool {
        &self.pool
    }

    async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, Db>> {
        Ok(self.pool.begin().await?)
    }

    async fn commit_write(&self, tx: sqlx::Transaction<'static, Db>) -> StoreResult<()> {
        Ok(tx.commit().await?)
    }

    // Webhook deliveries live with everything else here: several writers share PostgreSQL, and
    // foreign keys delete an endpoint's deliveries with it (SQLite keeps them in a file of their
    // own, see `sqlite::deliveries`).
    async fn begin_delivery_write(&self) -> StoreResult<sqlx::Transaction<'static, Db>> {
        self.begin_write().await
    }

    fn delivery_pool(&self) -> &PgPool {
        &self.pool
    }

    async fn position_kept_apart(&self, _name: &str) -> StoreResult<Option<i64>> {
        Ok(None)
    }

    async fn lowest_position_kept_apart(&self) -> StoreResult<(&'static str, Option<i64>)> {
        Ok(("", None))
    }

    async fn forget_deliveries(&self, _of: Option<&[String]>) -> StoreResult<u64> {
        Ok(0)
    }

    /// A read transaction: one snapshot of the database for all its queries.
    async fn begin_snapshot(&self) -> StoreResult<sqlx::Transaction<'static, Db>> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        Ok(tx)
    }

    async fn file_report(&self, new: NewReport) -> StoreResult<CreatedReport> {
        if !new.blob_ids.is_empty() {
            let created = reports::create_report(&self.pool, new).await;
            match &created {
                Ok(CreatedReport::Created(_)) => self.health.succeeded(),
                Ok(CreatedReport::Repeat(_)) => {}
                Err(error) => self.note_failure(error),
            }
            return created;
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let queued = group_commit::Queued { report: new.report, key: new.idempotency_key, reply };
        // Either failure means the dispatcher is gone (the runtime is shutting down).
        self.report_queue.send(queued).await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?;
        answer.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    async fn short_id_rows(&self, project_ids: &[String], short_id: &str, limit: u32) -> StoreResult<Vec<DbRow>> {
        reports::short_id_rows(&self.pool, project_ids, short_id, limit).await
    }

    async fn load_reports_bulk(&self, reports: &[Report]) -> StoreResult<()> {
        reports::insert_reports_bulk(&self.pool, reports).await
    }

    async fn file_blob(&self, blob: &Blob) -> StoreResult<()> {
        queries::insert_blob(&self.pool, blob).await
    }

    async fn record_views(&self, report_ids: &[String], viewer: &str, at: i64) -> StoreResult<()> {
        // One row per report: ON CONFLICT cannot touch the same row twice in one statement, and a
        // fixed order keeps concurrent markers from deadlocking.
        let mut unique_ids = report_ids.to_vec();
        unique_ids.sort_unstable();
        unique_ids.dedup();
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
}

#[async_trait]
impl Store for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn changes(&self) -> &crate::changes::ChangeFeed {
        &self.changes
    }

    fn load(&self) -> &crate::load::Load {
        &self.load
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

    /// The search index's round (see [`search`]).
    async fn run_maintenance_once(&self) -> StoreResult<()> {
        search::run_once(&self.pool, &self.health).await
    }
}

#[cfg(test)]
mod tests;
