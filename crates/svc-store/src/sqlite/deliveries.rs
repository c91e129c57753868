//! The webhook deliveries' own file, beside the database (`svc.db-deliveries` next to `svc.db`).
//!
//! SQLite lets one connection write a file at a time. Delivery bookkeeping (the deliveries a round
//! of the event feed makes, their bodies, every attempt, and the webhook consumer's position) is
//! written in transactions of a hundred rows and more, and on the one writer ingest uses, a report
//! that arrived during one waited for it: at 1,000 reports/s with three endpoints, p99 ingest
//! latency was 1.7 times that without endpoints (bench/README.md, "Where the rest goes"). In a file
//! of its own, with a writer of its own, that bookkeeping never holds the database's write lock.
//!
//! The file is attached (as [`SCHEMA`]) to the readers and to a second writer connection, so every
//! query reads and joins both as one database: table names are unique across the two, and the
//! queries shared with PostgreSQL name them unqualified. The database's own writer does not attach
//! it: its `BEGIN IMMEDIATE` would take the write lock of every attached file too. The deliveries'
//! writer begins deferred instead, so it locks only the file it writes, and reads the database
//! (endpoints, the consumer's lease) without a lock.
//!
//! What this gives up: a change that writes both files is atomic in each, not across both. No
//! operation needs that: the consumer's deliveries and its position are in this file together (it
//! reads the feed, never writes it), and an endpoint's health, written in the database after its
//! attempts are recorded here, is written again by its next attempt. Deliveries whose endpoint is
//! deleted are deleted here right after, and any left by a crash in between are swept with the old
//! deliveries. Foreign keys cannot reach across files: those deletions are explicit here, where
//! PostgreSQL's cascade.
//!
//! A database made before this file existed, a restored backup and a copy made by `svc migrate`
//! hold these tables in the database itself: [`open_writer`] moves their rows here and drops them
//! there, once.

use std::path::{Path, PathBuf};

use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{Connection, Executor, Row};

use crate::StoreResult;

/// The name the file is attached under.
pub const SCHEMA: &str = "delivery";

/// The consumers whose position is kept in this file, beside the writes they make.
pub(super) const CONSUMERS: &[&str] = &[svc_core::event::consumer::WEBHOOKS];

/// The name of the deliveries' writer's thread (webhook delivery puts it in the idle scheduling class).
pub const WRITER_THREAD: &str = "svc-deliveries";

/// The tables kept in this file, parents first.
pub const TABLES: &[&str] = &["webhook_deliveries", "webhook_payloads", "webhook_attempts", "feed_positions"];

/// The file's schema, made if missing (the same tables as PostgreSQL's, less the foreign key to the
/// endpoints, which live in the other file).
const SCHEMA_SQL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS delivery.webhook_deliveries (
        id                TEXT PRIMARY KEY,
        webhook_id        TEXT NOT NULL,
        project_id        TEXT NOT NULL,
        event_id          INTEGER,
        message_id        TEXT NOT NULL,
        event_type        TEXT NOT NULL,
        state             TEXT NOT NULL,
        attempts          INTEGER NOT NULL DEFAULT 0,
        next_attempt_at   INTEGER NOT NULL,
        last_status       INTEGER,
        last_error        TEXT,
        last_attempt_at   INTEGER,
        last_duration_ms  INTEGER,
        created_at        INTEGER NOT NULL,
        delivered_at      INTEGER,
        payload_key       TEXT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS delivery.webhook_deliveries_once ON webhook_deliveries (webhook_id, event_id)",
    "CREATE INDEX IF NOT EXISTS delivery.webhook_deliveries_due ON webhook_deliveries (next_attempt_at) \
     WHERE state = 'pending'",
    "CREATE INDEX IF NOT EXISTS delivery.webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id)",
    // A body is shared by the deliveries that send the same bytes (`payload_key`), so it belongs
    // to no one delivery: [`SHARING_SQL`]'s trigger deletes it with the last that sends it.
    "CREATE TABLE IF NOT EXISTS delivery.webhook_payloads (
        delivery_id  TEXT PRIMARY KEY,
        payload      TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS delivery.webhook_attempts (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        webhook_id   TEXT NOT NULL,
        at           INTEGER NOT NULL,
        status       INTEGER,
        error        TEXT,
        duration_ms  INTEGER NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS delivery.webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id)",
    // The position of each consumer in `CONSUMERS`; its lease stays in `event_consumers`.
    "CREATE TABLE IF NOT EXISTS delivery.feed_positions (
        name      TEXT PRIMARY KEY,
        position  INTEGER NOT NULL
    )",
];

/// What shares bodies, made once a file made before it has the column (`upgrade`).
const SHARING_SQL: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS delivery.webhook_deliveries_sharing ON webhook_deliveries (payload_key) \
     WHERE payload_key IS NOT NULL",
    // Row by row, as each goes: a body is kept while a delivery names it (its own or shared).
    "CREATE TRIGGER IF NOT EXISTS delivery.webhook_payloads_unshared AFTER DELETE ON webhook_deliveries
     BEGIN
        DELETE FROM webhook_payloads WHERE delivery_id = coalesce(OLD.payload_key, OLD.id)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = coalesce(OLD.payload_key, OLD.id))
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE payload_key = coalesce(OLD.payload_key, OLD.id));
     END",
];

/// Brings a file made before bodies were shared to this shape: the column that names a shared
/// body, and bodies without the foreign key that deleted them with their first delivery. Reads
/// only, when the file has both already.
async fn upgrade(connection: &mut sqlx::SqliteConnection) -> StoreResult<()> {
    let has_key: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pragma_table_info('webhook_deliveries', 'delivery') WHERE name = 'payload_key'",
    )
    .fetch_one(&mut *connection)
    .await?;
    let keyed: i64 = sqlx::query_scalar("SELECT count(*) FROM pragma_foreign_key_list('webhook_payloads', 'delivery')")
        .fetch_one(&mut *connection)
        .await?;
    if has_key == 1 && keyed == 0 {
        return Ok(());
    }
    let mut tx = connection.begin().await?;
    if has_key == 0 {
        tx.execute("ALTER TABLE delivery.webhook_deliveries ADD COLUMN payload_key TEXT").await?;
    }
    if keyed > 0 {
        for statement in [
            "CREATE TABLE delivery.webhook_payloads_shared (delivery_id TEXT PRIMARY KEY, payload TEXT NOT NULL)",
            "INSERT INTO delivery.webhook_payloads_shared (delivery_id, payload) \
             SELECT delivery_id, payload FROM delivery.webhook_payloads",
            "DROP TABLE delivery.webhook_payloads",
            "ALTER TABLE delivery.webhook_payloads_shared RENAME TO webhook_payloads",
        ] {
            tx.execute(statement).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// The file beside the database at `database`.
pub fn path_beside(database: &Path) -> PathBuf {
    let mut name = database.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push("-deliveries");
    database.with_file_name(name)
}

/// Attaches the file at `path` to `connection` (an in-memory database's is in memory too).
async fn attach(connection: &mut sqlx::SqliteConnection, path: &str) -> Result<(), sqlx::Error> {
    sqlx::query("ATTACH DATABASE ? AS delivery").bind(path.to_string()).execute(&mut *connection).await?;
    Ok(())
}

/// Pool options whose connections attach the file at `path`.
pub(crate) fn attaching(options: SqlitePoolOptions, path: &str) -> SqlitePoolOptions {
    let path = path.to_string();
    options.after_connect(move |connection, _| {
        let path = path.clone();
        Box::pin(async move { attach(connection, &path).await })
    })
}

/// The deliveries' writer: one connection to the database with the file attached, its schema made
/// and any rows still in the database moved here.
pub(super) async fn open_writer(options: SqliteConnectOptions, path: &str) -> StoreResult<SqlitePool> {
    let writer = attaching(
        SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false),
        path,
    )
    .after_release(|connection, _| Box::pin(super::discard_if_still_in_transaction(connection)))
    .connect_with(options.thread_name(|_| WRITER_THREAD.into()))
    .await?;
    prepare(&writer).await?;
    Ok(writer)
}

/// Makes the file's schema on `pool` (whose connections attach it) and moves here any rows still in
/// the database.
pub(super) async fn prepare(pool: &SqlitePool) -> StoreResult<()> {
    let mut connection = pool.acquire().await?;
    // WAL is kept in the file once set; `synchronous` is per connection and file.
    sqlx::query("PRAGMA delivery.journal_mode = WAL").execute(&mut *connection).await?;
    // NORMAL: a commit is in the WAL (safe from a crash of the process) without waiting for the
    // disk; only a power loss or a crash of the machine can take back the last commits, and what
    // they made is made again from the event feed, under the same message ids (the consumer's
    // position rolls back with them). An fsync per round of deliveries was one more in the disk's
    // queue in front of the reports' (bench/README.md, "Delivery in the idle class").
    sqlx::query("PRAGMA delivery.synchronous = NORMAL").execute(&mut *connection).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "PRAGMA delivery.journal_size_limit = {}",
        super::checkpoint::WAL_SIZE_LIMIT
    )))
    .execute(&mut *connection)
    .await?;
    for statement in SCHEMA_SQL {
        connection.execute(*statement).await?;
    }
    upgrade(&mut connection).await?;
    for statement in SHARING_SQL {
        connection.execute(*statement).await?;
    }
    move_rows_here(&mut connection).await
}

/// The tables of this file the database itself holds (made by its migrations before this file
/// existed, by `svc backup`, or by `svc migrate`).
async fn left_in_database(connection: &mut sqlx::SqliteConnection) -> StoreResult<Vec<String>> {
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM main.sqlite_master WHERE type = 'table'")
        .fetch_all(&mut *connection)
        .await?;
    Ok(TABLES.iter().filter(|table| names.iter().any(|name| name == *table)).map(|t| t.to_string()).collect())
}

/// Moves the rows of [`TABLES`] the database holds into this file, then drops them there; then
/// gives every consumer kept here a position (where the database last had it) if it has none. A
/// crash half-way moves them again on the next start: rows here already are kept.
async fn move_rows_here(connection: &mut sqlx::SqliteConnection) -> StoreResult<()> {
    let left = left_in_database(connection).await?;
    // The usual open: nothing to move, every position there. No write (the `svc` commands open the
    // store beside a running server, whose deliveries' writer would otherwise wait for them).
    let positions: i64 =
        sqlx::query_scalar("SELECT count(*) FROM delivery.feed_positions").fetch_one(&mut *connection).await?;
    if left.is_empty() && positions >= CONSUMERS.len() as i64 {
        return Ok(());
    }
    let mut tx = connection.begin().await?;
    for table in &left {
        let columns: Vec<String> = sqlx::query("SELECT name FROM pragma_table_info(?, 'main') ORDER BY cid")
            .bind(table)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|row| row.try_get::<String, _>("name"))
            .collect::<Result<_, _>>()?;
        let columns = columns.join(", ");
        // A position in a copy is newer than the one the database keeps with its lease.
        let verb = if table == "feed_positions" { "INSERT OR REPLACE" } else { "INSERT OR IGNORE" };
        let sql = format!("{verb} INTO delivery.{table} ({columns}) SELECT {columns} FROM main.{table}");
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await?;
    }
    // Children first: the database's own tables still have their foreign keys.
    for table in left.iter().rev() {
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE main.{table}"))).execute(&mut *tx).await?;
    }
    for name in CONSUMERS {
        sqlx::query(
            "INSERT OR IGNORE INTO delivery.feed_positions (name, position) \
             SELECT name, position FROM main.event_consumers WHERE name = ?",
        )
        .bind(*name)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Adds this file's tables, as they are at this moment, to the copy at `copy` (made by `svc backup`
/// from the database at `database`): the copy is one file, and the service that opens it moves
/// them back into a file of their own.
pub(super) async fn copy_into(database: &Path, copy: &mut sqlx::SqliteConnection) -> StoreResult<()> {
    let path = path_beside(database);
    if !path.exists() {
        return Ok(());
    }
    let path = path.to_str().ok_or_else(|| crate::StoreError::Corrupt("the deliveries' path is not UTF-8".into()))?;
    attach(copy, path).await?;
    let mut tx = copy.begin().await?;
    for table in TABLES {
        let sql = format!("CREATE TABLE IF NOT EXISTS main.{table} AS SELECT * FROM delivery.{table}");
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    sqlx::query("DETACH DATABASE delivery").execute(&mut *copy).await?;
    Ok(())
}
