//! What deleting reports must also do on PostgreSQL (see `shared/deletion.rs`): remove their rows
//! from the search index, after waiting for any indexing round to end. (Short ids are an index on
//! the reports table: nothing to do.)

use sqlx::postgres::PgConnection;

use crate::StoreResult;

/// Takes the search indexer's progress row, as every indexing round does first: a round that read
/// a report being deleted would otherwise write its index row after this transaction deleted it
/// (and fail on the foreign key, or make this transaction's delete of the report fail).
pub(super) async fn lock(conn: &mut PgConnection) -> StoreResult<()> {
    sqlx::query("SELECT singleton FROM search_progress FOR UPDATE").execute(&mut *conn).await?;
    Ok(())
}

/// Removes the reports' search-index rows.
pub(super) async fn forget_reports(conn: &mut PgConnection, ids: &[String]) -> StoreResult<()> {
    sqlx::query("DELETE FROM report_search WHERE report_id = ANY($1)").bind(ids).execute(&mut *conn).await?;
    Ok(())
}

/// Nothing to do: the indexer follows transaction ids, which deletions do not disturb.
pub(super) async fn after_reports_deleted(_conn: &mut PgConnection) -> StoreResult<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::PostgresStore;
    use crate::test_fixtures::{INSERT_SIGHTING, deleting_a_project_leaves_nothing};
    use std::collections::BTreeMap;

    /// Rows naming the project, or one of its reports, in every table of the schema.
    async fn counts(store: &PostgresStore, project_id: &str, report_ids: &[String]) -> BTreeMap<String, i64> {
        let columns: Vec<(String, String)> = sqlx::query_as(
            "SELECT table_name::text, column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND column_name IN ('project_id', 'report_id')",
        )
        .fetch_all(&store.pool)
        .await
        .unwrap();
        let mut counts = BTreeMap::new();
        for (table, column) in columns {
            let sql = format!("SELECT count(*) FROM \"{table}\" WHERE {column}::text = ANY($1)");
            let names = if column == "project_id" { vec![project_id.to_string()] } else { report_ids.to_vec() };
            let n: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(&names).fetch_one(&store.pool).await.unwrap();
            *counts.entry(table).or_insert(0) += n;
        }
        counts
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deleting_a_project_leaves_nothing_of_it_in_any_table() {
        let Ok(url) = std::env::var("SVC_TEST_POSTGRES_URL") else {
            eprintln!("skipped: SVC_TEST_POSTGRES_URL not set");
            return;
        };
        let store = PostgresStore::connect_fresh_schema(&url).await.unwrap();
        let add_sighting = async |project_id: &str| {
            sqlx::query(INSERT_SIGHTING).bind(project_id).execute(&store.pool).await.unwrap();
        };
        let counts = async |project_id: &str, report_ids: &[String]| counts(&store, project_id, report_ids).await;
        deleting_a_project_leaves_nothing(&store, add_sighting, counts).await;
    }
}
