//! What deleting reports must also do on SQLite (see `shared/deletion.rs`): remove their rows from
//! the search index (FTS5, keyed by the report's rowid) and the short-id table, and keep both
//! indexers' progress marks honest.
//!
//! Rowids: a new report gets the largest rowid in the table plus one, so once the newest reports
//! are deleted their rowids are handed out again. Both indexers take "every report past the mark"
//! as what is left to do, so after such a deletion each mark is lowered to the largest rowid left:
//! a report that reuses a rowid is then past the mark and indexed. An indexer round that read
//! reports before a deletion checks, in its write transaction, that what it read is still there
//! (see `search::index_new` and `short_ids::copy_round`), so it neither indexes a deleted report
//! under a rowid that a new one now has nor moves its mark over one.

use sqlx::QueryBuilder;
use sqlx::sqlite::{Sqlite, SqliteConnection};

use crate::StoreResult;

/// Nothing to lock: the write transaction (`BEGIN IMMEDIATE`) holds the database's write lock.
pub(super) async fn lock(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Removes the reports' search-index rows and short-id entries (before the reports themselves:
/// the index rows are found by the reports' rowids). Reports not indexed yet have none; deleting
/// a missing row is a no-op.
pub(super) async fn forget_reports(conn: &mut SqliteConnection, ids: &[String]) -> StoreResult<()> {
    let mut query = QueryBuilder::<Sqlite>::new(
        "DELETE FROM report_search WHERE rowid IN (SELECT rowid FROM reports WHERE id IN (",
    );
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(id.clone());
    }
    query.push("))");
    query.build().execute(&mut *conn).await?;

    let mut query = QueryBuilder::<Sqlite>::new("DELETE FROM report_short_ids WHERE (short_id, report_id) IN (VALUES ");
    let mut list = query.separated(", ");
    for id in ids {
        list.push("(").push_bind_unseparated(svc_core::ids::short_id(id).to_string());
        list.push_unseparated(", ").push_bind_unseparated(id.clone()).push_unseparated(")");
    }
    query.push(")");
    query.build().execute(&mut *conn).await?;
    Ok(())
}

/// Lowers the short-id and search marks to the largest rowid left (see the module notes).
pub(super) async fn after_reports_deleted(conn: &mut SqliteConnection) -> StoreResult<()> {
    sqlx::query(
        "UPDATE short_id_progress SET last_rowid = min(last_rowid, COALESCE((SELECT max(rowid) FROM reports), 0))",
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE search_progress SET last_rowid = min(last_rowid, COALESCE((SELECT max(rowid) FROM reports), 0))",
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::SqliteStore;
    use crate::test_fixtures::{INSERT_SIGHTING, deleting_a_project_leaves_nothing};
    use std::collections::BTreeMap;

    /// Rows of the project (or of its reports) in `table`, found by its `project_id` or
    /// `report_id` column; the search index (contentless FTS5) by its `project` column.
    async fn count(store: &SqliteStore, table: &str, project_id: &str, report_ids: &[String]) -> i64 {
        if table == "report_search" {
            return sqlx::query_scalar("SELECT count(*) FROM report_search WHERE report_search MATCH ?")
                .bind(format!("project : \"{project_id}\""))
                .fetch_one(&store.reader)
                .await
                .unwrap();
        }
        let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?)")
            .bind(table)
            .fetch_all(&store.reader)
            .await
            .unwrap();
        let mut total = 0;
        if columns.iter().any(|c| c == "project_id") {
            let sql = format!("SELECT count(*) FROM \"{table}\" WHERE project_id = ?");
            let n: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(project_id).fetch_one(&store.reader).await.unwrap();
            total += n;
        }
        if columns.iter().any(|c| c == "report_id") {
            for report_id in report_ids {
                let sql = format!("SELECT count(*) FROM \"{table}\" WHERE report_id = ?");
                let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(report_id)
                    .fetch_one(&store.reader)
                    .await
                    .unwrap();
                total += n;
            }
        }
        total
    }

    /// Every table (the search index's own storage tables aside, counted through the index).
    async fn tables(store: &SqliteStore) -> Vec<String> {
        sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name NOT LIKE 'report_search_%' ORDER BY name",
        )
        .fetch_all(&store.reader)
        .await
        .unwrap()
    }

    async fn counts(store: &SqliteStore, project_id: &str, report_ids: &[String]) -> BTreeMap<String, i64> {
        let mut counts = BTreeMap::new();
        for table in tables(store).await {
            counts.insert(table.clone(), count(store, &table, project_id, report_ids).await);
        }
        counts
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deleting_a_project_leaves_nothing_of_it_in_any_table() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", folder.path().join("svc.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        let add_sighting = async |project_id: &str| {
            sqlx::query(INSERT_SIGHTING).bind(project_id).execute(&store.writer).await.unwrap();
        };
        let counts = async |project_id: &str, report_ids: &[String]| counts(&store, project_id, report_ids).await;
        deleting_a_project_leaves_nothing(&store, add_sighting, counts).await;
    }
}
