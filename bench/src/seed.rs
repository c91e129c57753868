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
        // The search table too: its GIN index's pending entries are merged, and autovacuum does
        // not start on it in the middle of a measurement.
        let store = svc_store::postgres::PostgresStore::connect(url).await?;
        sqlx::query("VACUUM ANALYZE reports, report_search").execute(store.pool()).await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(json!({"reports": count, "seconds": seconds, "per_s": count as f64 / seconds}))
}

/// A dashboard session for the inbox scenarios: an owner of the project's organization and a
/// session for them, written straight into the store (signing in through the form would time
/// Argon2, not the inbox). Returns the cookie value.
pub async fn dashboard_session(url: &str, project_id: &str) -> anyhow::Result<String> {
    use svc_core::account::{Membership, Role, SESSION_LIFETIME_MS, Session, User, new_session_token};
    let store = svc_store::connect(url).await?;
    let project = store.get_project(project_id).await?.ok_or_else(|| anyhow::anyhow!("no project {project_id}"))?;
    let now = svc_core::time::now_ms();
    let user =
        User { id: svc_core::ids::new_id(), email: "bench@example.com".into(), name: "Bench".into(), created_at: now };
    // Nobody signs in with a password here: the hash only fills the column.
    let membership =
        Membership { org_id: project.org_id, user_id: user.id.clone(), role: Role::Owner, created_at: now };
    store.create_user(&user, "unused", Some(&membership), None).await?;
    let token = new_session_token();
    let session = Session {
        id_hash: svc_core::secret::hash_secret(&token),
        user_id: user.id,
        created_at: now,
        last_seen_at: now,
        expires_at: now + SESSION_LIFETIME_MS,
    };
    store.create_session(&session).await?;
    Ok(token)
}
