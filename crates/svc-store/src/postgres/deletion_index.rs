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
    use crate::prelude::*;
    use crate::test_fixtures::{FILLED_TABLES, fill_project, project};
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
        let doomed = project(&store).await;
        let kept = project(&store).await;
        let doomed_reports = fill_project(&store, &doomed).await;
        let kept_reports = fill_project(&store, &kept).await;
        for project in [&doomed, &kept] {
            sqlx::query("INSERT INTO widget_sightings (project_id, url, source, seen_at) VALUES ($1, 'https://a.example/', 'loader', 1)")
                .bind(&project.id)
                .execute(&store.pool)
                .await
                .unwrap();
        }
        let before = counts(&store, &doomed.id, &doomed_reports).await;
        for table in FILLED_TABLES {
            assert!(before.get(table).copied().unwrap_or(0) > 0, "the fixture fills {table}: {before:?}");
        }
        let kept_before = counts(&store, &kept.id, &kept_reports).await;

        store.delete_project(&doomed.id).await.unwrap();

        let after = counts(&store, &doomed.id, &doomed_reports).await;
        assert!(after.values().all(|&n| n == 0), "rows of the deleted project remain: {after:?}");
        assert_eq!(store.get_project(&doomed.id).await.unwrap(), None);
        assert_eq!(counts(&store, &kept.id, &kept_reports).await, kept_before, "the other project is untouched");
    }
}
