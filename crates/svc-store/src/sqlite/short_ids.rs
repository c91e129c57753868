//! The short-id table (`report_short_ids`, migration 0002): filled in batches behind the reports.
//!
//! An index on `substr(id, -6)` puts each new report on a random leaf page, so every group commit
//! wrote and synced one more page per report; with it the writer managed about 9,500 reports/s, and
//! 15,000 without. The indexer instead copies the short ids of reports past
//! `short_id_progress.last_rowid` into the table every [`INTERVAL`], sorted, so a round touches each
//! leaf page once for many reports, in short transactions that each cover one stretch of keys.
//! Lookups read the table and scan the not yet copied tail of the reports table (rowids above
//! `last_rowid`: a few seconds of reports), in one statement, so they see every committed report.

use serde::Deserializer as _;
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

/// Reports read per statement of a round: each page is one JSON array (see [`read_page`]).
const ROWS_PER_PAGE: i64 = 8_192;

/// A round's reports past the progress mark: their ids one after another in one string, and the
/// order in which their entries go into the table, by (short id, id). Under load a round holds
/// 50,000-200,000 reports; read whole, a row and a `(String, String)` pair each, every round was
/// the largest moment of the server's memory under text ingest (bench/README.md, "The short-id
/// round's memory"). Here a report costs 37 bytes, and the reading a page's worth more.
#[derive(Default)]
struct Pending {
    ids: String,
    /// Where each id ends in `ids`, in rowid order.
    ends: Vec<usize>,
    /// The length in bytes of each id's short id (its last six characters).
    short_lens: Vec<u8>,
    /// Indexes into `ends`, sorted by entry.
    order: Vec<u32>,
    /// The highest rowid read, with its report's id.
    last: Option<(i64, String)>,
}

impl Pending {
    fn id(&self, index: u32) -> &str {
        let index = index as usize;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.ids[start..self.ends[index]]
    }

    /// Report `index`'s entry: (short id, id).
    fn entry(&self, index: u32) -> (&str, &str) {
        let id = self.id(index);
        (&id[id.len() - usize::from(self.short_lens[index as usize])..], id)
    }

    /// The entries of these indexes (a stretch of `order`).
    fn entries<'a>(&'a self, indexes: &'a [u32]) -> impl Iterator<Item = (&'a str, &'a str)> {
        indexes.iter().map(|&index| self.entry(index))
    }
}

/// An id in the JSON array, borrowed from its text unless it holds an escape.
#[derive(serde::Deserialize)]
struct JsonId<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

/// Appends the ids of a JSON array to a [`Pending`].
impl<'de> serde::de::Visitor<'de> for &mut Pending {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("an array of report ids")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut ids: A) -> Result<(), A::Error> {
        while let Some(JsonId(id)) = ids.next_element()? {
            self.ids.push_str(&id);
            self.ends.push(self.ids.len());
            // At most 6 characters of at most 4 bytes.
            self.short_lens.push(short_id(&id).len() as u8);
        }
        Ok(())
    }
}

/// What `substr(id, -6)` gives: the id's last six characters.
fn short_id(id: &str) -> &str {
    id.char_indices().rev().nth(5).map_or(id, |(start, _)| &id[start..])
}

/// Appends up to `limit` reports past rowid `after` to `pending`, and makes the last of them
/// `pending.last`; the highest rowid read, or `None` when there were none. One statement answers
/// with the page's ids as one JSON array: a row each cost a copy of every value on SQLite's thread.
async fn read_page(
    conn: &mut SqliteConnection,
    pending: &mut Pending,
    after: i64,
    limit: i64,
) -> StoreResult<Option<i64>> {
    // One snapshot for both reads: a rowid freed by a deletion may go to a new report.
    let mut snapshot = conn.begin().await?;
    let (last_rowid, ids): (Option<i64>, String) = sqlx::query_as(
        "SELECT max(rowid), json_group_array(id) FROM \
         (SELECT rowid, id FROM reports WHERE rowid > ? ORDER BY rowid LIMIT ?)",
    )
    .bind(after)
    .bind(limit)
    .fetch_one(&mut *snapshot)
    .await?;
    let Some(last_rowid) = last_rowid else { return Ok(None) };
    serde_json::Deserializer::from_str(&ids)
        .deserialize_seq(&mut *pending)
        .map_err(|error| sqlx::Error::Decode(Box::new(error)))?;
    // Read apart from the array, whose order SQLite does not promise.
    let last_id: String =
        sqlx::query_scalar("SELECT id FROM reports WHERE rowid = ?").bind(last_rowid).fetch_one(&mut *snapshot).await?;
    snapshot.commit().await?;
    pending.last = Some((last_rowid, last_id));
    Ok(Some(last_rowid))
}

/// The reports past the progress mark (at most `max_rows`, in rowid order), read `page_rows` at a
/// time ([`ROWS_PER_PAGE`]), with their entries' order.
async fn pending_entries(conn: &mut SqliteConnection, max_rows: i64, page_rows: i64) -> StoreResult<Pending> {
    let mut pending = Pending::default();
    let mut after: i64 = sqlx::query_scalar("SELECT last_rowid FROM short_id_progress").fetch_one(&mut *conn).await?;
    let mut read = 0;
    while read < max_rows {
        let limit = page_rows.min(max_rows - read);
        let Some(last) = read_page(conn, &mut pending, after, limit).await? else { break };
        let count = pending.ends.len() as i64;
        let this_page = count - read;
        (after, read) = (last, count);
        if this_page < limit {
            break;
        }
    }
    let mut order: Vec<u32> = (0..pending.ends.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| pending.entry(a).cmp(&pending.entry(b)));
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
    let pending = pending_entries(conn, i64::MAX, ROWS_PER_PAGE).await?;
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
        pending_entries(&mut conn, MAX_ROWS_PER_ROUND, ROWS_PER_PAGE).await?
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
    query.push(" ORDER BY id DESC");
    super::queries::push_limit(&mut query, limit);
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

        // Whole, and a page of two at a time.
        for page_rows in [1_000, 2] {
            let pending = pending_entries(&mut conn, 1_000, page_rows).await.unwrap();
            let read: Vec<(String, String)> =
                pending.entries(&pending.order).map(|(short, id)| (short.to_string(), id.to_string())).collect();
            assert_eq!(read, expected, "pages of {page_rows}");
            assert_eq!(pending.last, Some((8, "zzzzzz".to_string())), "pages of {page_rows}");
        }

        let first_three = pending_entries(&mut conn, 3, 2).await.unwrap();
        assert_eq!(first_three.order.len(), 3);
        assert_eq!(first_three.last, Some((4, "abc".to_string())));
    }
}
