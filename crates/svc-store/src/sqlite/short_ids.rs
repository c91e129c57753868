//! The short-id table (`report_short_ids`, migration 0002): filled in batches behind the reports.
//!
//! An index on `substr(id, -6)` puts each new report on a random leaf page, so every group commit
//! wrote and synced one more page per report; with it the writer managed about 9,500 reports/s, and
//! 15,000 without. The indexer instead copies the short ids of reports past
//! `short_id_progress.last_rowid` into the table every [`INTERVAL`], sorted, so a round touches each
//! leaf page once for many reports, in short transactions that each cover one stretch of keys.
//! Lookups read the table and scan the not yet copied tail of the reports table (rowids above
//! `last_rowid`: a few seconds of reports), in one statement, so they see every committed report.

use futures_util::TryStreamExt;
use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use sqlx::{Connection, QueryBuilder, Row};
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

/// A round's reports past the progress mark: their ids one after another in one string, and the
/// order in which their entries go into the table, by (short id, id). Under a burst a round holds
/// 50,000-200,000 reports; a `(String, String)` pair per report made each round a spike of 10-15
/// MiB in the server's peak memory (bench/README.md, "The short-id round's memory"), this about 30
/// bytes a report.
#[derive(Default)]
struct Pending {
    ids: String,
    /// Where each id ends in `ids`, in rowid order.
    ends: Vec<u32>,
    /// Indexes into `ends`, sorted by entry.
    order: Vec<u32>,
    /// The highest rowid read, with its report's id.
    last: Option<(i64, String)>,
}

impl Pending {
    fn id(&self, index: u32) -> &str {
        let index = index as usize;
        let start = if index == 0 { 0 } else { self.ends[index - 1] as usize };
        &self.ids[start..self.ends[index] as usize]
    }

    /// The entries (short id, id) of these indexes (a stretch of `order`).
    fn entries<'a>(&'a self, indexes: &'a [u32]) -> impl Iterator<Item = (&'a str, &'a str)> {
        indexes.iter().map(|&index| {
            let id = self.id(index);
            (short_id(id), id)
        })
    }
}

/// What `substr(id, -6)` gives: the id's last six characters.
fn short_id(id: &str) -> &str {
    id.char_indices().rev().nth(5).map_or(id, |(start, _)| &id[start..])
}

/// The reports past the progress mark (at most `max_rows`, in rowid order), read row by row into
/// one [`Pending`].
async fn pending_entries(conn: &mut SqliteConnection, max_rows: i64) -> StoreResult<Pending> {
    let mut rows = sqlx::query(
        "SELECT rowid, id FROM reports \
         WHERE rowid > (SELECT last_rowid FROM short_id_progress) ORDER BY rowid LIMIT ?",
    )
    .bind(max_rows)
    .fetch(&mut *conn);
    let mut pending = Pending::default();
    let mut last_rowid = None;
    while let Some(row) = rows.try_next().await? {
        let id: &str = row.try_get(1)?;
        pending.ids.push_str(id);
        pending.ends.push(
            u32::try_from(pending.ids.len()).map_err(|_| sqlx::Error::Protocol("short-id round too large".into()))?,
        );
        last_rowid = Some(row.try_get::<i64, _>(0)?);
    }
    drop(rows);
    if let Some(rowid) = last_rowid {
        pending.last = Some((rowid, pending.id(pending.ends.len() as u32 - 1).to_string()));
    }
    let mut order: Vec<u32> = (0..pending.ends.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        let (a, b) = (pending.id(a), pending.id(b));
        (short_id(a), a).cmp(&(short_id(b), b))
    });
    pending.order = order;
    Ok(pending)
}

/// Inserts entries (OR IGNORE: a crash between a round's transactions leaves some copied twice).
async fn insert_entries<'a>(
    conn: &mut SqliteConnection,
    entries: impl Iterator<Item = (&'a str, &'a str)>,
) -> StoreResult<()> {
    let mut entries = entries.peekable();
    while entries.peek().is_some() {
        let mut query = QueryBuilder::<Sqlite>::new("INSERT OR IGNORE INTO report_short_ids (short_id, report_id) ");
        query.push_values(entries.by_ref().take(ROWS_PER_STATEMENT), |mut row, (short, id)| {
            row.push_bind(short.to_string()).push_bind(id.to_string());
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
    let pending = pending_entries(conn, i64::MAX).await?;
    if let Some((last, _)) = pending.last {
        insert_entries(conn, pending.entries(&pending.order)).await?;
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
    let pending = {
        let mut conn = reader.acquire().await?;
        pending_entries(&mut conn, MAX_ROWS_PER_ROUND).await?
    };
    let Some((last, last_id)) = &pending.last else { return Ok(false) };
    let slices: Vec<&[u32]> = pending.order.chunks(ROWS_PER_TRANSACTION).collect();
    for (index, slice) in slices.iter().enumerate() {
        let mut conn = writer.acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        insert_entries(&mut tx, pending.entries(slice)).await?;
        // The mark moves only while the last report read is still stored: deleted since (see
        // `deletion_index`), its rowid may go to a new report, which must stay past the mark. The
        // next round reads again from the mark.
        if index + 1 == slices.len() && still_stored(&mut tx, *last, last_id).await? {
            set_progress(&mut tx, *last).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    /// Ids of every shape a report may have: the server's own, imported ones shorter than six
    /// characters, and ones whose last characters take more than one byte.
    const IDS: [&str; 7] =
        ["0193a1b2c3d4e5f60718293a", "0193a1b2c3d4000000000001", "abc", "", "import-ümläut", "x-日本語のid", "zzzzzz"];

    #[tokio::test]
    async fn a_round_reads_every_pending_report_in_the_order_sqlite_sorts_its_entries() {
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE reports (id TEXT NOT NULL); \
             CREATE TABLE short_id_progress (last_rowid INTEGER NOT NULL); INSERT INTO short_id_progress VALUES (1)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        // The first report is past the mark already, so it is not read again.
        for id in std::iter::once("already-copied").chain(IDS) {
            sqlx::query("INSERT INTO reports (id) VALUES (?)").bind(id).execute(&mut conn).await.unwrap();
        }
        let expected: Vec<(String, String)> =
            sqlx::query_as("SELECT substr(id, -6), id FROM reports WHERE rowid > 1 ORDER BY 1, 2")
                .fetch_all(&mut conn)
                .await
                .unwrap();

        let pending = pending_entries(&mut conn, 1_000).await.unwrap();
        let read: Vec<(String, String)> =
            pending.entries(&pending.order).map(|(short, id)| (short.to_string(), id.to_string())).collect();
        assert_eq!(read, expected);
        assert_eq!(pending.last, Some((8, "zzzzzz".to_string())));

        let first_three = pending_entries(&mut conn, 3).await.unwrap();
        assert_eq!(first_three.order.len(), 3);
        assert_eq!(first_three.last, Some((4, "abc".to_string())));
    }
}
