//! The short-id table (`report_short_ids`, migration 0002): filled in batches behind the reports.
//!
//! An index on `substr(id, -6)` puts each new report on a random leaf page, so every group commit
//! wrote and synced one more page per report; with it the writer managed about 9,500 reports/s, and
//! 15,000 without. The indexer instead copies the short ids of reports past
//! `short_id_progress.last_rowid` into the table every [`INTERVAL`], sorted, so a round touches each
//! leaf page once for many reports, in short transactions that each cover one stretch of keys.
//! Lookups read the table and scan the not yet copied tail of the reports table (rowids above
//! `last_rowid`: a few seconds of reports), in one statement, so they see every committed report.

use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use sqlx::{Connection, QueryBuilder};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

use super::group_commit::Job;
use super::push_project_list;
use super::rows::report_select_columns;
use crate::StoreResult;
use crate::health::{WriteHealth, is_storage_failure_of};

/// How often the indexer looks for reports to copy. The longer, the more reports share each page a
/// round touches (under a sustained 12,000 reports/s, a round every second rewrote most of the
/// table's pages), and the longer the tail lookups scan: 5 s of reports at most.
const INTERVAL: Duration = Duration::from_secs(5);
/// Most reports one round of the indexer copies.
const MAX_ROWS_PER_ROUND: i64 = 200_000;
/// Rows per write transaction. A round's rows are sorted by key and written in slices of this
/// many, each its own short transaction covering one stretch of the key space (a few pages), so
/// ingest never waits long for the write lock.
const ROWS_PER_TRANSACTION: usize = 1_000;
/// Rows per INSERT statement (2 parameters each, under SQLite's 32,766).
const ROWS_PER_STATEMENT: usize = 500;

/// A report's entry in `report_short_ids`: its short id and id.
type Entry = (String, String);

/// The reports past the progress mark (at most `max_rows`, in rowid order): their entries and the
/// highest rowid among them with its report's id.
async fn pending_entries(
    conn: &mut SqliteConnection,
    max_rows: i64,
) -> StoreResult<(Vec<Entry>, Option<(i64, String)>)> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT rowid, substr(id, -6), id FROM reports \
         WHERE rowid > (SELECT last_rowid FROM short_id_progress) ORDER BY rowid LIMIT ?",
    )
    .bind(max_rows)
    .fetch_all(&mut *conn)
    .await?;
    let last = rows.last().map(|row| (row.0, row.2.clone()));
    let mut entries: Vec<Entry> = rows.into_iter().map(|(_, short, id)| (short, id)).collect();
    entries.sort_unstable();
    Ok((entries, last))
}

/// Inserts entries (OR IGNORE: a crash between a round's transactions leaves some copied twice).
async fn insert_entries(conn: &mut SqliteConnection, entries: &[Entry]) -> StoreResult<()> {
    for chunk in entries.chunks(ROWS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Sqlite>::new("INSERT OR IGNORE INTO report_short_ids (short_id, report_id) ");
        query.push_values(chunk, |mut row, (short, id)| {
            row.push_bind(short.clone()).push_bind(id.clone());
        });
        query.build().execute(&mut *conn).await?;
    }
    Ok(())
}

async fn set_progress(conn: &mut SqliteConnection, last_rowid: i64) -> StoreResult<()> {
    sqlx::query("UPDATE short_id_progress SET last_rowid = max(last_rowid, ?)")
        .bind(last_rowid)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn still_stored(conn: &mut SqliteConnection, rowid: i64, id: &str) -> StoreResult<bool> {
    Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM reports WHERE rowid = ? AND id = ?)")
        .bind(rowid)
        .bind(id)
        .fetch_one(&mut *conn)
        .await?)
}

/// Copies every pending short id and moves the mark, inside the caller's write transaction (a
/// bulk load, which holds the write lock anyway).
pub(super) async fn copy_all_in(conn: &mut SqliteConnection) -> StoreResult<()> {
    let (entries, last) = pending_entries(conn, i64::MAX).await?;
    if let Some((last, _)) = last {
        insert_entries(conn, &entries).await?;
        set_progress(conn, last).await?;
    }
    Ok(())
}

/// Whether reports are waiting to be copied (a read, so an idle indexer never takes the write lock).
async fn pending(reader: &SqlitePool) -> StoreResult<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM reports WHERE rowid > (SELECT last_rowid FROM short_id_progress))",
    )
    .fetch_one(reader)
    .await?)
}

/// The indexer task: runs until the store is dropped (its write queue closes). Its writes feed the
/// write health like the group commit's. A transaction of it that fails goes back to the writer
/// pool with its connection, which replaces the connection if the failure left it unusable.
pub(super) async fn run_indexer(
    writer: SqlitePool,
    reader: SqlitePool,
    alive: mpsc::WeakSender<Job>,
    health: Arc<WriteHealth>,
) {
    loop {
        tokio::time::sleep(INTERVAL).await;
        if alive.upgrade().is_none() {
            return;
        }
        if let Err(error) = run_once(&writer, &reader, &health).await {
            // The reports are safe either way; lookups scan what is not copied yet.
            tracing::warn!(%error, "could not update the short-id table; will retry");
        }
    }
}

/// One round of the indexer, its outcome noted in the write health (also what
/// `Store::run_maintenance_once` runs, so tests need not wait for the interval).
pub(super) async fn run_once(writer: &SqlitePool, reader: &SqlitePool, health: &WriteHealth) -> StoreResult<()> {
    match copy_round(writer, reader).await {
        Ok(wrote) => {
            if wrote {
                health.succeeded();
            }
            Ok(())
        }
        Err(error) => {
            if is_storage_failure_of(&error) {
                health.failed(&error);
            }
            Err(error)
        }
    }
}

/// One round: reads the pending entries, writes them in key order, one slice per transaction,
/// and moves the mark with the last slice. Lookups see a slice's entries in the table and, until
/// the mark moves, in the tail too; `id IN (...)` counts each report once. Whether it wrote.
async fn copy_round(writer: &SqlitePool, reader: &SqlitePool) -> StoreResult<bool> {
    if !pending(reader).await? {
        return Ok(false);
    }
    let (entries, last) = {
        let mut conn = reader.acquire().await?;
        pending_entries(&mut conn, MAX_ROWS_PER_ROUND).await?
    };
    let Some((last, last_id)) = last else { return Ok(false) };
    let slices: Vec<&[Entry]> = entries.chunks(ROWS_PER_TRANSACTION).collect();
    for (index, slice) in slices.iter().enumerate() {
        let mut conn = writer.acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        insert_entries(&mut tx, slice).await?;
        // The mark moves only while the last report read is still stored: deleted since (see
        // `deletion_index`), its rowid may go to a new report, which must stay past the mark. The
        // next round reads again from the mark.
        if index + 1 == slices.len() && still_stored(&mut tx, last, &last_id).await? {
            set_progress(&mut tx, last).await?;
        }
        tx.commit().await?;
    }
    Ok(true)
}

/// `SELECT` of the reports of these projects whose id ends with the 6 characters `short_id`,
/// newest first: those in the table and those in the tail not copied yet.
pub(super) fn lookup_query(project_ids: &BTreeSet<&str>, short_id: &str, limit: u32) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(concat!(
        "SELECT ",
        report_select_columns!(),
        " FROM reports WHERE id IN (SELECT report_id FROM report_short_ids WHERE short_id = "
    ));
    query.push_bind(short_id.to_string());
    // NOT INDEXED: the tail is a rowid range; left to itself the planner walks an index over every
    // report instead.
    query.push(
        " UNION ALL SELECT id FROM reports NOT INDEXED WHERE rowid > (SELECT last_rowid FROM short_id_progress) \
         AND substr(id, -6) = ",
    );
    query.push_bind(short_id.to_string());
    query.push(") AND project_id IN ");
    push_project_list(&mut query, project_ids);
    query.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
    query
}
