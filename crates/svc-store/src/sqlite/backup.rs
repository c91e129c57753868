//! Copies of a SQLite database for `svc backup` and `svc restore` (docs/operations.md, "Backups"):
//! a consistent copy taken while the service keeps writing, and the check a restored copy passes
//! before the service may start on it.

use super::BUSY_TIMEOUT;
use crate::StoreResult;
use sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};
use std::path::Path;

/// Writes a copy of the database at `source` to `dest` (which must not exist) with `VACUUM INTO`:
/// one read transaction, so the copy is the database as of one commit, every report acknowledged
/// before it included, while the service goes on writing beside it (WAL readers do not block the
/// writer). The copy is written with `synchronous=FULL`, so it is on disk when this returns. The
/// webhook deliveries' file beside the database is copied into it too (see `super::deliveries`).
pub async fn copy_database(source: &Path, dest: &Path) -> StoreResult<()> {
    let mut connection = SqliteConnectOptions::new()
        .filename(source)
        .create_if_missing(false)
        .busy_timeout(BUSY_TIMEOUT)
        .synchronous(SqliteSynchronous::Full)
        .connect()
        .await?;
    let dest = dest.to_str().ok_or_else(|| crate::StoreError::Corrupt("the copy's path is not UTF-8".into()))?;
    sqlx::query("VACUUM INTO ?").bind(dest).execute(&mut connection).await?;
    connection.close().await?;
    let mut copy = SqliteConnectOptions::new()
        .filename(dest)
        .create_if_missing(false)
        .synchronous(SqliteSynchronous::Full)
        .connect()
        .await?;
    super::deliveries::copy_into(source, &mut copy).await?;
    copy.close().await?;
    Ok(())
}

/// SQLite's `PRAGMA integrity_check` of the database at `path`: empty when it passes, else the
/// problems SQLite names (at most 20).
pub async fn integrity_problems(path: &Path) -> StoreResult<Vec<String>> {
    let mut connection = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(false)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT)
        .connect()
        .await?;
    let rows: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check(20)").fetch_all(&mut connection).await?;
    connection.close().await?;
    Ok(rows.into_iter().filter(|row| row != "ok").collect())
}
