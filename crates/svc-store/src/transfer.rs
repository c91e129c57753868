//! Copies a whole database between the two backends, SQLite to PostgreSQL or back (`svc migrate`,
//! docs/operations.md, "Moving to PostgreSQL and S3"): every table both schemas share, in the order
//! their foreign keys need, in batches in primary-key order. Each batch lands in one transaction
//! with the table's progress, so an interrupted copy resumes after its last batch. What the service
//! derives from the rows (the search index, short ids, room counts, the migrations' own table) is
//! not copied: the destination builds it again. At the end each table is compared on both sides:
//! its row count and a SHA-256 over its rows in key order, with each value in one canonical form
//! (JSON with sorted keys, booleans as 0 and 1).

use crate::{StoreError, StoreResult};
use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, TypeInfo, ValueRef};
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

/// Rows per batch (and per transaction on the destination).
pub const BATCH_ROWS: usize = 500;
/// The destination's record of a copy in progress; dropped when the copy is complete.
const PROGRESS: &str = "svc_migrate_progress";

/// Tables the service derives from others, or keeps for itself: rebuilt, not copied.
const DERIVED: &[&str] = &[
    "_sqlx_migrations",
    "leases",
    "write_probe",
    "room_activity",
    "report_search",
    "search_progress",
    "search_stale",
    "report_short_ids",
    "short_id_progress",
    "sqlite_sequence",
    PROGRESS,
];

/// One side of the copy.
#[derive(Clone)]
pub enum Database {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Database {
    /// Opens `url` (`postgres://...`, else SQLite). The destination (`create`) is created if missing
    /// and brought to this build's schema; the source must exist.
    pub async fn open(url: &str, create: bool) -> StoreResult<Database> {
        if crate::is_postgres_url(url) {
            let pool = PgPoolOptions::new().max_connections(2).connect_with(PgConnectOptions::from_str(url)?).await?;
            if create {
                sqlx::migrate!("src/postgres/migrations").run(&pool).await?;
            }
            Ok(Database::Postgres(pool))
        } else {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(create)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(std::time::Duration::from_secs(5));
            if create && let Some(folder) = options.get_filename().parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(folder).map_err(sqlx::Error::Io)?;
            }
            // A source's webhook deliveries are in a file of their own beside it (see
            // `sqlite::deliveries`); a destination's go into the database, and move there when the
            // service first opens it.
            let deliveries = crate::sqlite::deliveries::path_beside(options.get_filename());
            let mut pool_options = SqlitePoolOptions::new().max_connections(1);
            if !create && deliveries.exists() {
                let path = deliveries.to_str().ok_or_else(|| StoreError::Corrupt("a path is not UTF-8".into()))?;
                pool_options = crate::sqlite::deliveries::attaching(pool_options, path);
            }
            let pool = pool_options.connect_with(options).await?;
            if create {
                sqlx::migrate!("src/sqlite/migrations").run(&pool).await?;
            }
            Ok(Database::Sqlite(pool))
        }
    }

    pub async fn close(&self) {
        match self {
            Database::Sqlite(pool) => pool.close().await,
            Database::Postgres(pool) => pool.close().await,
        }
    }

    fn is_postgres(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }

    /// The names of this side's tables.
    async fn tables(&self) -> StoreResult<BTreeSet<String>> {
        let names: Vec<String> = match self {
            Database::Sqlite(pool) => {
                sqlx::query_scalar(
                    "SELECT name FROM pragma_table_list WHERE schema IN ('main', 'delivery') AND type = 'table' \
                     AND name NOT LIKE 'sqlite_%'",
                )
                .fetch_all(pool)
                .await?
            }
            Database::Postgres(pool) => {
                sqlx::query_scalar(
                    "SELECT table_name::text FROM information_schema.tables \
                     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
                )
                .fetch_all(pool)
                .await?
            }
        };
        Ok(names.into_iter().collect())
    }

    /// A table's columns in order.
    async fn columns(&self, table: &str) -> StoreResult<Vec<String>> {
        Ok(match self {
            Database::Sqlite(pool) => {
                sqlx::query_scalar("SELECT name FROM pragma_table_info(?) ORDER BY cid")
                    .bind(table)
                    .fetch_all(pool)
                    .await?
            }
            Database::Postgres(pool) => {
                sqlx::query_scalar(
                    "SELECT column_name::text FROM information_schema.columns \
                     WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                )
                .bind(table)
                .fetch_all(pool)
                .await?
            }
        })
    }

    async fn count(&self, table: &str) -> StoreResult<i64> {
        let sql = format!("SELECT count(*) FROM {}", quote(table));
        Ok(match self {
            Database::Sqlite(pool) => sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await?,
            Database::Postgres(pool) => sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await?,
        })
    }
}

/// A table as both sides hold it: the columns they share, typed as PostgreSQL declares them (the
/// one side that types them strictly), and its primary key.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    columns: Vec<(String, String)>,
    key: Vec<String>,
    /// PostgreSQL identity columns (`GENERATED ALWAYS`): their sequences are moved past the copy.
    identity: Vec<String>,
}

/// A value read from either side.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
    Json(serde_json::Value),
}

/// What the copy found for one table.
#[derive(Debug, Clone)]
pub struct Compared {
    pub table: String,
    pub source_rows: i64,
    pub dest_rows: i64,
    pub source_sha256: String,
    pub dest_sha256: String,
}

impl Compared {
    pub fn same(&self) -> bool {
        self.source_rows == self.dest_rows && self.source_sha256 == self.dest_sha256
    }
}

/// The copy between two open databases, one of them PostgreSQL.
pub struct Transfer {
    source: Database,
    dest: Database,
    tables: Vec<Table>,
}

impl Transfer {
    /// Plans the copy: the shared tables in foreign-key order. Refuses a destination that holds
    /// an installation already, unless it is this copy's own, interrupted.
    pub async fn plan(source: Database, dest: Database) -> StoreResult<Transfer> {
        let postgres = match (&source, &dest) {
            (Database::Postgres(pool), Database::Sqlite(_)) | (Database::Sqlite(_), Database::Postgres(pool)) => {
                pool.clone()
            }
            _ => {
                return Err(StoreError::Corrupt(
                    "svc migrate copies between SQLite and PostgreSQL (one side of each)".into(),
                ));
            }
        };
        let (source_tables, dest_tables) = (source.tables().await?, dest.tables().await?);
        let resuming = dest_tables.contains(PROGRESS);
        if !resuming && dest.count("organizations").await? > 0 {
            return Err(StoreError::Conflict(
                "the destination already holds an installation; migrate into a new, empty database".into(),
            ));
        }
        let shared: BTreeSet<&String> =
            source_tables.intersection(&dest_tables).filter(|name| !DERIVED.contains(&name.as_str())).collect();
        let mut tables = Vec::new();
        for name in shared {
            let types: BTreeMap<String, String> = sqlx::query_as(
                "SELECT column_name::text, data_type::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1",
            )
            .bind(name)
            .fetch_all(&postgres)
            .await?
            .into_iter()
            .collect();
            let dest_columns: BTreeSet<String> = dest.columns(name).await?.into_iter().collect();
            let columns = source
                .columns(name)
                .await?
                .into_iter()
                .filter(|column| dest_columns.contains(column))
                .map(|column| {
                    let kind = types.get(&column).cloned().unwrap_or_else(|| "text".into());
                    (column, kind)
                })
                .collect();
            let key: Vec<String> = sqlx::query_scalar(
                "SELECT a.attname::text FROM pg_index i \
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
                 WHERE i.indrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1)) \
                   AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)",
            )
            .bind(name)
            .fetch_all(&postgres)
            .await?;
            if key.is_empty() {
                return Err(StoreError::Corrupt(format!("table {name} has no primary key")));
            }
            let identity: Vec<String> = sqlx::query_scalar(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'YES'",
            )
            .bind(name)
            .fetch_all(&postgres)
            .await?;
            tables.push(Table { name: name.clone(), columns, key, identity });
        }
        let edges: Vec<(String, String)> = sqlx::query_as(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint \
             WHERE contype = 'f' AND connamespace = current_schema()::regnamespace",
        )
        .fetch_all(&postgres)
        .await?;
        let tables = in_key_order(tables, &edges);
        if !resuming {
            let create = format!(
                "CREATE TABLE {PROGRESS} (table_name TEXT PRIMARY KEY, last_key TEXT, done INTEGER NOT NULL DEFAULT 0)"
            );
            execute(&dest, &create).await?;
        }
        Ok(Transfer { source, dest, tables })
    }

    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// Rows in each table of the source (for a progress bar).
    pub async fn source_rows(&self) -> StoreResult<Vec<(String, i64)>> {
        let mut counts = Vec::new();
        for table in &self.tables {
            counts.push((table.name.clone(), self.source.count(&table.name).await?));
        }
        Ok(counts)
    }

    /// Copies `table` from where an earlier run left it, `batch_rows` rows per transaction; calls
    /// `progress` with the rows of each batch as it lands. `stop_after` batches (a test's
    /// interruption) ends it early: `false`.
    pub async fn copy(
        &self,
        table: &Table,
        progress: &mut dyn FnMut(u64),
        batch_rows: usize,
        stop_after: Option<usize>,
    ) -> StoreResult<bool> {
        let batch_rows = batch_rows.max(1);
        let (last_key, done) = self.progress_of(&table.name).await?;
        if done {
            return Ok(true);
        }
        let mut after: Option<Vec<Value>> = last_key.map(|key| key.into_iter().map(from_json).collect());
        let mut batches = 0;
        loop {
            let rows = self.read_batch(&self.source, table, after.as_deref(), batch_rows).await?;
            let last = rows.last().map(|row| key_of(table, row));
            let count = rows.len();
            let finished = count < batch_rows;
            self.write_batch(table, &rows, last.as_deref(), finished).await?;
            progress(count as u64);
            if finished {
                return Ok(true);
            }
            after = last;
            batches += 1;
            if stop_after.is_some_and(|limit| batches >= limit) {
                return Ok(false);
            }
        }
    }

    /// Moves PostgreSQL's identity sequences past the copied ids, compares every table, and (when
    /// all are the same) drops the progress table: the copy is complete. A table that differs is
    /// marked to be copied again by the next run.
    pub async fn finish(&self) -> StoreResult<Vec<Compared>> {
        if let Database::Postgres(pool) = &self.dest {
            for table in &self.tables {
                for column in &table.identity {
                    let sql = format!(
                        "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), COALESCE(max({column}), 1), max({column}) IS NOT NULL) FROM {table}",
                        table = table.name,
                        column = column,
                    );
                    sqlx::query(sqlx::AssertSqlSafe(sql)).execute(pool).await?;
                }
            }
        }
        let mut compared = Vec::new();
        for table in &self.tables {
            let (source_rows, source_sha256) = self.digest(&self.source, table).await?;
            let (dest_rows, dest_sha256) = self.digest(&self.dest, table).await?;
            compared.push(Compared { table: table.name.clone(), source_rows, dest_rows, source_sha256, dest_sha256 });
        }
        if compared.iter().all(Compared::same) {
            execute(&self.dest, &format!("DROP TABLE {PROGRESS}")).await?;
        } else {
            // A table that differs (the source changed while it was copied) is copied again whole
            // on the next run: its rows are upserts, so changed and added rows land.
            for table in compared.iter().filter(|table| !table.same()) {
                let sql = format!("DELETE FROM {PROGRESS} WHERE table_name = '{}'", table.table.replace('\'', "''"));
                execute(&self.dest, &sql).await?;
            }
        }
        Ok(compared)
    }

    /// The ids of the source's blobs (the objects to copy beside the rows).
    pub async fn blob_ids(&self) -> StoreResult<Vec<String>> {
        let sql = "SELECT id FROM blobs ORDER BY id";
        Ok(match &self.source {
            Database::Sqlite(pool) => sqlx::query_scalar(sql).fetch_all(pool).await?,
            Database::Postgres(pool) => sqlx::query_scalar(sql).fetch_all(pool).await?,
        })
    }

    pub async fn close(self) {
        self.source.close().await;
        self.dest.close().await;
    }

    async fn progress_of(&self, table: &str) -> StoreResult<(Option<Vec<serde_json::Value>>, bool)> {
        let sql = format!("SELECT last_key, done FROM {PROGRESS} WHERE table_name = $1");
        let row: Option<(Option<String>, i32)> = match &self.dest {
            Database::Sqlite(pool) => sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(table).fetch_optional(pool).await?,
            Database::Postgres(pool) => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(table).fetch_optional(pool).await?
            }
        };
        Ok(match row {
            Some((key, done)) => (key.and_then(|key| serde_json::from_str(&key).ok()), done != 0),
            None => (None, false),
        })
    }

    /// Up to `limit` rows of `table` after the key `after`, in key order (byte order for text on
    /// both sides).
    async fn read_batch(
        &self,
        side: &Database,
        table: &Table,
        after: Option<&[Value]>,
        limit: usize,
    ) -> StoreResult<Vec<Vec<Value>>> {
        let columns = table.columns.iter().map(|(name, _)| quote(name)).collect::<Vec<_>>().join(", ");
        let postgres = side.is_postgres();
        let key_expr = |name: &String| {
            let text = table.columns.iter().any(|(column, kind)| column == name && kind == "text");
            if postgres && text { format!("{} COLLATE \"C\"", quote(name)) } else { quote(name) }
        };
        let keys: Vec<String> = table.key.iter().map(key_expr).collect();
        let mut sql = format!("SELECT {columns} FROM {}", quote(&table.name));
        if after.is_some() {
            let params: Vec<String> = (1..=table.key.len()).map(|n| format!("${n}")).collect();
            sql += &format!(" WHERE ({}) > ({})", keys.join(", "), params.join(", "));
        }
        sql += &format!(" ORDER BY {} LIMIT {limit}", keys.join(", "));
        let kinds: Vec<&str> = table.columns.iter().map(|(_, kind)| kind.as_str()).collect();
        match side {
            Database::Sqlite(pool) => {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for value in after.unwrap_or_default() {
                    query = bind_sqlite(query, value);
                }
                let rows = query.fetch_all(pool).await?;
                rows.iter().map(read_sqlite_row).collect()
            }
            Database::Postgres(pool) => {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for value in after.unwrap_or_default() {
                    query = bind_postgres(query, value, None);
                }
                let rows = query.fetch_all(pool).await?;
                rows.iter().map(|row| read_postgres_row(row, &kinds)).collect()
            }
        }
    }

    /// Writes `rows` (an upsert, so a batch written again changes nothing) and the table's progress
    /// in one transaction.
    async fn write_batch(
        &self,
        table: &Table,
        rows: &[Vec<Value>],
        last: Option<&[Value]>,
        done: bool,
    ) -> StoreResult<()> {
        let key_json = last.map(|key| serde_json::Value::Array(key.iter().map(to_json).collect()).to_string());
        let progress = format!(
            "INSERT INTO {PROGRESS} (table_name, last_key, done) VALUES ($1, $2, $3) \
             ON CONFLICT (table_name) DO UPDATE SET last_key = COALESCE(excluded.last_key, {PROGRESS}.last_key), done = excluded.done"
        );
        let insert = (!rows.is_empty()).then(|| self.insert_sql(table, rows.len()));
        // The same steps on either backend (their queries are of different types).
        macro_rules! in_one_transaction {
            ($pool:expr, $bind:expr) => {{
                let mut tx = $pool.begin().await?;
                if let Some(sql) = insert {
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                    for row in rows {
                        for (value, (_, kind)) in row.iter().zip(&table.columns) {
                            query = $bind(query, value, kind);
                        }
                    }
                    query.execute(&mut *tx).await?;
                }
                sqlx::query(sqlx::AssertSqlSafe(progress))
                    .bind(&table.name)
                    .bind(key_json)
                    .bind(i32::from(done))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
            }};
        }
        match &self.dest {
            Database::Sqlite(pool) => in_one_transaction!(pool, |query, value: &Value, kind: &String| bind_sqlite(
                query,
                &for_sqlite(value, kind)
            )),
            Database::Postgres(pool) => {
                in_one_transaction!(pool, |query, value, kind: &String| bind_postgres(query, value, Some(kind)))
            }
        }
        Ok(())
    }

    fn insert_sql(&self, table: &Table, rows: usize) -> String {
        let postgres = self.dest.is_postgres();
        let names: Vec<String> = table.columns.iter().map(|(name, _)| quote(name)).collect();
        let width = table.columns.len();
        let tuples: Vec<String> = (0..rows)
            .map(|row| {
                let values: Vec<String> = table
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, (_, kind))| {
                        let n = row * width + i + 1;
                        if postgres { format!("CAST(${n} AS {})", cast_type(kind)) } else { format!("${n}") }
                    })
                    .collect();
                format!("({})", values.join(", "))
            })
            .collect();
        let keys: Vec<String> = table.key.iter().map(|k| quote(k)).collect();
        let rest: Vec<String> = table
            .columns
            .iter()
            .filter(|(name, _)| !table.key.contains(name))
            .map(|(name, _)| format!("{0} = excluded.{0}", quote(name)))
            .collect();
        let on_conflict = if rest.is_empty() {
            format!("ON CONFLICT ({}) DO NOTHING", keys.join(", "))
        } else {
            format!("ON CONFLICT ({}) DO UPDATE SET {}", keys.join(", "), rest.join(", "))
        };
        let overriding = if postgres && !table.identity.is_empty() { " OVERRIDING SYSTEM VALUE" } else { "" };
        format!(
            "INSERT INTO {} ({}){overriding} VALUES {} {on_conflict}",
            quote(&table.name),
            names.join(", "),
            tuples.join(", ")
        )
    }

    /// Row count and SHA-256 of `table` on `side`, every value in its canonical form.
    async fn digest(&self, side: &Database, table: &Table) -> StoreResult<(i64, String)> {
        let mut hash = Sha256::new();
        let mut rows = 0i64;
        let mut after: Option<Vec<Value>> = None;
        loop {
            let batch = self.read_batch(side, table, after.as_deref(), 2000).await?;
            for row in &batch {
                for (value, (_, kind)) in row.iter().zip(&table.columns) {
                    hash.update(canonical(value, kind).as_bytes());
                    hash.update([0x1f]);
                }
                hash.update([0x1e]);
                rows += 1;
            }
            if batch.len() < 2000 {
                break;
            }
            after = batch.last().map(|row| key_of(table, row));
        }
        Ok((rows, hex::encode(hash.finalize())))
    }
}

/// Parents before children: Kahn's order over the foreign keys, ties by name.
fn in_key_order(tables: Vec<Table>, edges: &[(String, String)]) -> Vec<Table> {
    let bare = |name: &str| name.rsplit('.').next().unwrap_or(name).trim_matches('"').to_string();
    let names: BTreeSet<String> = tables.iter().map(|t| t.name.clone()).collect();
    let mut parents: BTreeMap<String, BTreeSet<String>> = names.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    for (child, parent) in edges {
        let (child, parent) = (bare(child), bare(parent));
        if child != parent && names.contains(&child) && names.contains(&parent) {
            parents.entry(child).or_default().insert(parent);
        }
    }
    let mut ordered: Vec<String> = Vec::new();
    while ordered.len() < names.len() {
        let ready: Vec<String> = parents
            .iter()
            .filter(|(name, needs)| !ordered.contains(name) && needs.iter().all(|p| ordered.contains(p)))
            .map(|(name, _)| name.clone())
            .collect();
        if ready.is_empty() {
            // A cycle (none today): the rest in name order.
            ordered.extend(names.iter().filter(|n| !ordered.contains(n)).cloned().collect::<Vec<_>>());
            break;
        }
        ordered.extend(ready);
    }
    let mut by_name: BTreeMap<String, Table> = tables.into_iter().map(|t| (t.name.clone(), t)).collect();
    ordered.into_iter().filter_map(|name| by_name.remove(&name)).collect()
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

async fn execute(side: &Database, sql: &str) -> StoreResult<()> {
    match side {
        Database::Sqlite(pool) => {
            sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).execute(pool).await?;
        }
        Database::Postgres(pool) => {
            sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).execute(pool).await?;
        }
    }
    Ok(())
}

fn key_of(table: &Table, row: &[Value]) -> Vec<Value> {
    table
        .key
        .iter()
        .filter_map(|key| table.columns.iter().position(|(name, _)| name == key).map(|i| row[i].clone()))
        .collect()
}

fn read_sqlite_row(row: &sqlx::sqlite::SqliteRow) -> StoreResult<Vec<Value>> {
    (0..row.columns().len())
        .map(|i| {
            let raw = row.try_get_raw(i)?;
            if raw.is_null() {
                return Ok(Value::Null);
            }
            let kind = raw.type_info().name().to_ascii_uppercase();
            Ok(match kind.as_str() {
                "INTEGER" | "BOOLEAN" | "INT" | "BIGINT" => Value::Int(row.try_get(i)?),
                "REAL" | "FLOAT" | "DOUBLE" => Value::Real(row.try_get(i)?),
                "BLOB" => Value::Bytes(row.try_get(i)?),
                _ => Value::Text(row.try_get(i)?),
            })
        })
        .collect()
}

fn read_postgres_row(row: &sqlx::postgres::PgRow, kinds: &[&str]) -> StoreResult<Vec<Value>> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            Ok(match *kind {
                "bigint" => row.try_get::<Option<i64>, _>(i)?.map_or(Value::Null, Value::Int),
                "integer" => row.try_get::<Option<i32>, _>(i)?.map_or(Value::Null, |n| Value::Int(n.into())),
                "smallint" => row.try_get::<Option<i16>, _>(i)?.map_or(Value::Null, |n| Value::Int(n.into())),
                "boolean" => row.try_get::<Option<bool>, _>(i)?.map_or(Value::Null, |b| Value::Int(b.into())),
                "double precision" | "real" => row.try_get::<Option<f64>, _>(i)?.map_or(Value::Null, Value::Real),
                "json" | "jsonb" => row.try_get::<Option<serde_json::Value>, _>(i)?.map_or(Value::Null, Value::Json),
                "bytea" => row.try_get::<Option<Vec<u8>>, _>(i)?.map_or(Value::Null, Value::Bytes),
                _ => row.try_get::<Option<String>, _>(i)?.map_or(Value::Null, Value::Text),
            })
        })
        .collect()
}

/// The type a PostgreSQL parameter is cast to for a column of `kind`.
fn cast_type(kind: &str) -> &str {
    match kind {
        "bigint" | "integer" | "smallint" | "boolean" | "double precision" | "real" | "json" | "jsonb" | "bytea" => {
            kind
        }
        _ => "text",
    }
}

fn bind_sqlite<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    value: &Value,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    match value.clone() {
        Value::Null => query.bind(None::<String>),
        Value::Int(n) => query.bind(n),
        Value::Real(x) => query.bind(x),
        Value::Text(text) => query.bind(text),
        Value::Bytes(bytes) => query.bind(bytes),
        Value::Json(json) => query.bind(json.to_string()),
    }
}

/// A value bound for PostgreSQL; `kind` is the column's type when writing (a SQLite integer into
/// a boolean column becomes a boolean, SQLite's JSON text into a JSON column is parsed).
fn bind_postgres<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    value: &Value,
    kind: Option<&str>,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    match (value.clone(), kind) {
        (Value::Null, _) => query.bind(None::<String>),
        (Value::Int(n), Some("boolean")) => query.bind(n != 0),
        (Value::Int(n), Some("integer")) => query.bind(i32::try_from(n).unwrap_or(i32::MAX)),
        (Value::Int(n), Some("smallint")) => query.bind(i16::try_from(n).unwrap_or(i16::MAX)),
        (Value::Int(n), Some("double precision" | "real")) => query.bind(n as f64),
        (Value::Int(n), _) => query.bind(n),
        (Value::Real(x), _) => query.bind(x),
        (Value::Text(text), Some("json" | "jsonb")) => query.bind(sqlx::types::Json(
            serde_json::from_str::<serde_json::Value>(&text).unwrap_or(serde_json::Value::String(text)),
        )),
        (Value::Text(text), _) => query.bind(text),
        (Value::Bytes(bytes), _) => query.bind(bytes),
        (Value::Json(json), _) => query.bind(sqlx::types::Json(json)),
    }
}

/// A PostgreSQL value as SQLite stores it.
fn for_sqlite(value: &Value, _kind: &str) -> Value {
    match value {
        Value::Json(json) => Value::Text(json.to_string()),
        other => other.clone(),
    }
}

/// One form for a value whichever side it came from.
fn canonical(value: &Value, kind: &str) -> String {
    match value {
        Value::Null => "n".into(),
        Value::Int(n) if matches!(kind, "double precision" | "real") => format!("r{}", *n as f64),
        Value::Int(n) => format!("i{n}"),
        Value::Real(x) => format!("r{x}"),
        Value::Text(text) if matches!(kind, "json" | "jsonb") => match serde_json::from_str(text) {
            Ok(json) => format!("j{}", sorted(&json)),
            Err(_) => format!("t{text}"),
        },
        Value::Text(text) => format!("t{text}"),
        Value::Bytes(bytes) => format!("b{}", hex::encode(bytes)),
        Value::Json(json) => format!("j{}", sorted(json)),
    }
}

/// JSON text with every object's keys in order.
fn sorted(json: &serde_json::Value) -> String {
    match json {
        serde_json::Value::Object(map) => {
            let fields: BTreeMap<&String, String> = map.iter().map(|(k, v)| (k, sorted(v))).collect();
            let inner: Vec<String> =
                fields.into_iter().map(|(k, v)| format!("{}:{v}", serde_json::Value::String(k.clone()))).collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(items) => format!("[{}]", items.iter().map(sorted).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Int(n) => (*n).into(),
        Value::Real(x) => serde_json::json!(x),
        Value::Text(text) => text.clone().into(),
        Value::Bytes(bytes) => serde_json::json!({"hex": hex::encode(bytes)}),
        Value::Json(json) => serde_json::json!({"json": json}),
    }
}

fn from_json(value: serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Number(n) => {
            n.as_i64().map(Value::Int).unwrap_or_else(|| Value::Real(n.as_f64().unwrap_or(0.0)))
        }
        serde_json::Value::String(text) => Value::Text(text),
        serde_json::Value::Object(mut map) => match (map.remove("hex"), map.remove("json")) {
            (Some(serde_json::Value::String(hex)), _) => Value::Bytes(hex::decode(hex).unwrap_or_default()),
            (_, Some(json)) => Value::Json(json),
            _ => Value::Null,
        },
        other => Value::Text(other.to_string()),
    }
}
