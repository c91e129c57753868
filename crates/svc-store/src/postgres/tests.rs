//! PostgreSQL-only checks the shared conformance suite cannot make (real concurrency between
//! connections) plus an ignored probe of query times at a million reports. Each test runs in its
//! own fresh schema when `SVC_TEST_POSTGRES_URL` is set and passes silently otherwise.

use super::*;
use crate::Store;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use svc_core::ids::{new_id, new_id_at, new_project_key, short_id};

async fn fresh_store() -> Option<Arc<PostgresStore>> {
    let url = std::env::var("SVC_TEST_POSTGRES_URL").ok()?;
    Some(Arc::new(PostgresStore::connect_fresh_schema(&url).await.expect("fresh schema")))
}

async fn project(store: &PostgresStore) -> Project {
    let org = Organization { id: new_id(), name: "Default".into(), created_at: 1 };
    store.create_organization(&org).await.unwrap();
    let project = Project {
        id: new_id(),
        org_id: org.id,
        name: "Default".into(),
        slug: "default".into(),
        project_key: new_project_key(),
        url_patterns: Vec::new(),
        default_channel_key: "bug".into(),
        widget_config: json!({}),
        allowed_origins: Vec::new(),
        identity_secret: None,
        created_at: 1,
    };
    store.create_project(&project, &[]).await.unwrap();
    project
}

fn report(project: &Project, at: i64, artifact_id: Option<String>) -> Report {
    Report {
        id: new_id_at(at),
        project_id: project.id.clone(),
        channel_key: "bug".into(),
        status: "new".into(),
        title: "The save button does nothing".into(),
        blocks: json!([{"type": "text", "text": "The save button does nothing"}]),
        context: json!({"url": "https://app.example.com/settings"}),
        identity: None,
        identity_error: None,
        author: Author { kind: "reporter".into(), id: Some("u-1".into()), label: None },
        artifact_id,
        url: Some("https://app.example.com/settings".into()),
        created_at: at,
        updated_at: at,
    }
}

async fn stored_blob(store: &PostgresStore, project: &Project) -> String {
    let blob = Blob {
        id: new_id(),
        project_id: project.id.clone(),
        kind: "screenshot".into(),
        mime: "image/png".into(),
        bytes: 10,
        width: Some(1),
        height: Some(1),
        duration_ms: None,
        name: None,
        report_id: None,
        created_at: 1,
    };
    store.create_blob(&blob).await.unwrap();
    blob.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_with_one_idempotency_key_file_one_report() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&store).await;
    let blob_id = stored_blob(&store, &project).await;
    // Retries of one queued report carry the same key and the same blobs: the losers must repeat
    // the winner, not fail on the blob it bound.
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let store = store.clone();
            let new = NewReport {
                report: report(&project, 1_000_000 + i, None),
                blob_ids: vec![blob_id.clone()],
                idempotency_key: Some("queued-1".into()),
            };
            tokio::spawn(async move { store.create_report(&new).await })
        })
        .collect();
    let mut created = Vec::new();
    let mut repeated = Vec::new();
    for task in tasks {
        match task.await.unwrap().unwrap() {
            CreatedReport::Created(report) => created.push(report.id),
            CreatedReport::Repeat(id) => repeated.push(id),
        }
    }
    assert_eq!(created.len(), 1);
    assert!(repeated.iter().all(|id| *id == created[0]), "{repeated:?} should all be {}", created[0]);
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 50, ..Default::default() };
    assert_eq!(store.list_reports(&filter).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_naming_overlapping_blobs_in_opposite_orders_do_not_deadlock() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&store).await;
    for round in 0..10 {
        let first = stored_blob(&store, &project).await;
        let second = stored_blob(&store, &project).await;
        let forward = NewReport {
            report: report(&project, 2_000_000 + round * 2, None),
            blob_ids: vec![first.clone(), second.clone()],
            idempotency_key: None,
        };
        let backward = NewReport {
            report: report(&project, 2_000_001 + round * 2, None),
            blob_ids: vec![second, first],
            idempotency_key: None,
        };
        let (a, b) = tokio::join!(store.create_report(&forward), store.create_report(&backward));
        let outcomes = [a, b];
        let winners = outcomes.iter().filter(|outcome| matches!(outcome, Ok(CreatedReport::Created(_)))).count();
        assert_eq!(winners, 1, "{outcomes:?}");
        assert!(outcomes.iter().any(|outcome| matches!(outcome, Err(StoreError::BlobAlreadyUsed(_)))), "{outcomes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_named_twice_lists_its_reports_once() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&store).await;
    let filed = report(&project, 3_000_000, None);
    store.insert_reports_bulk(std::slice::from_ref(&filed)).await.unwrap();
    let filter = ReportFilter {
        project_ids: vec![project.id.clone(), project.id.clone(), new_id()],
        limit: 10,
        ..Default::default()
    };
    assert_eq!(store.list_reports(&filter).await.unwrap(), vec![filed]);
}

/// Seeds a million reports (`PERF_REPORTS` to change) and prints query times. Run with
/// `cargo test -p svc-store --lib million -- --ignored --nocapture`; drops its schema at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: seeds a million reports"]
async fn query_times_at_a_million_reports() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&store).await;
    let total: i64 = std::env::var("PERF_REPORTS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let statuses = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"];
    let started = Instant::now();
    let mut batch = Vec::with_capacity(50_000);
    for i in 0..total {
        let mut filed = report(&project, 1_700_000_000_000 + i * 10, (i % 3 == 0).then(|| format!("doc-{}", i % 500)));
        filed.status = statuses[(i % 6) as usize].into();
        batch.push(filed);
        if batch.len() == batch.capacity() || i == total - 1 {
            store.insert_reports_bulk(&batch).await.unwrap();
            batch.clear();
        }
    }
    eprintln!("seeded {total} reports in {:?}", started.elapsed());
    sqlx::query("ANALYZE reports").execute(store.pool()).await.unwrap();

    let project_ids = vec![project.id.clone()];
    let newest = ReportFilter { project_ids: project_ids.clone(), limit: 100, ..Default::default() };
    let first_page = store.list_reports(&newest).await.unwrap();
    // Enough rounds for PostgreSQL to switch prepared statements to generic plans.
    for _ in 0..7 {
        let timed = Instant::now();
        store.list_reports(&newest).await.unwrap();
        let page_time = timed.elapsed();
        let timed = Instant::now();
        let by_status =
            ReportFilter { status: Some("fixed".into()), before: Some(first_page[99].id.clone()), ..newest.clone() };
        store.list_reports(&by_status).await.unwrap();
        let status_time = timed.elapsed();
        let timed = Instant::now();
        let across = ReportFilter {
            project_ids: vec![project.id.clone(), new_id()],
            artifact_id: Some("doc-7".into()),
            ..newest.clone()
        };
        store.list_reports(&across).await.unwrap();
        let across_time = timed.elapsed();
        let timed = Instant::now();
        assert!(
            !store.find_reports_by_short_id(&project_ids, short_id(&first_page[5].id), 5).await.unwrap().is_empty()
        );
        let short_id_time = timed.elapsed();
        let timed = Instant::now();
        assert_eq!(store.list_rooms(&project.id, false).await.unwrap().len(), 500);
        let rooms_time = timed.elapsed();
        eprintln!(
            "page {page_time:?}, status page {status_time:?}, two projects by artifact {across_time:?}, \
             short id {short_id_time:?}, rooms {rooms_time:?}"
        );
    }
    let schema: String = sqlx::query_scalar("SELECT current_schema()").fetch_one(store.pool()).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA \"{schema}\" CASCADE"))).execute(store.pool()).await.unwrap();
}
