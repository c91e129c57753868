//! Bulk seeding through the store (never through HTTP): `insert_reports_bulk` in large batches,
//! reports spread over the past year with increasing ids.

use serde_json::{Value, json};
use std::time::Instant;

use crate::data::ReportMaker;

const BATCH: usize = 10_000;
const YEAR_MS: i64 = 365 * 24 * 60 * 60 * 1000;

/// Stores `count` reports in `project_id` of the database at `url` (`sqlite://...` or `postgres://...`).
pub async fn run(url: &str, project_id: &str, count: usize) -> anyhow::Result<Value> {
    let started = Instant::now();
    let store = svc_store::connect(url).await?;
    let now = svc_core::time::now_ms();
    let start_ms = now - YEAR_MS;
    let step_ms = (YEAR_MS / count.max(1) as i64).max(1);
    let mut maker = ReportMaker::new(project_id);
    let mut done = 0;
    while done < count {
        let n = BATCH.min(count - done);
        let batch = maker.batch(n, start_ms, step_ms);
        store.insert_reports_bulk(&batch).await?;
        done += n;
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        // What autovacuum would do within a minute or so of a bulk load; the listings run right
        // after seeding, and without statistics the planner takes a 1M-row table for a tiny one.
        let store = svc_store::postgres::PostgresStore::connect(url).await?;
        sqlx::query("ANALYZE reports").execute(store.pool()).await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(json!({"reports": count, "seconds": seconds, "per_s": count as f64 / seconds}))
}
