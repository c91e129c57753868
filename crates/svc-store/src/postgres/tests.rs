//! PostgreSQL-only checks the shared conformance suite cannot make (real concurrency between
//! connections) plus an ignored probe of query times at a million reports. Each test runs in its
//! own fresh schema when `SVC_TEST_POSTGRES_URL` is set and passes silently otherwise.

use super::*;
use crate::prelude::*;
use crate::test_fixtures::project;
use std::sync::Arc;
use std::time::Instant;
use svc_core::ids::{new_id, new_id_at, short_id};

async fn fresh_store() -> Option<Arc<PostgresStore>> {
    let url = std::env::var("SVC_TEST_POSTGRES_URL").ok()?;
    Some(Arc::new(PostgresStore::connect_fresh_schema(&url).await.expect("fresh schema")))
}

fn report(project: &Project, at: i64, artifact_id: Option<String>) -> Report {
    Report {
        id: new_id_at(at),
        project_id: project.id.clone(),
        channel_key: "bug".into(),
        status: "new".parse().unwrap(),
        title: "The save button does nothing".into(),
        blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": "The save button does nothing"}]))
            .unwrap(),
        context: serde_json::from_value(serde_json::json!({"url": "https://app.example.com/settings"})).unwrap(),
        identity: None,
        identity_error: None,
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: Some("u-1".into()), label: None },
        artifact_id,
        url: Some("https://app.example.com/settings".into()),
        created_at: at,
        updated_at: at,
        assignee: None,
        labels: Vec::new(),
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
    let project = project(&*store).await;
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
            tokio::spawn(async move { store.create_report(new).await })
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

/// Keyed reports without blobs (what the widget sends) go through the group commit: retries of
/// one report racing each other, beside reports with keys of their own in the same batches, file
/// one report per key; every retry answers with its key's report, then and later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_reports_filed_together_file_one_report_per_key() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    let now = svc_core::time::now_ms();
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let store = store.clone();
            let key = if i % 3 == 0 { "queued-1".to_string() } else { format!("queued-{}", 100 + i) };
            let new = NewReport {
                report: report(&project, now + i, None),
                blob_ids: Vec::new(),
                idempotency_key: Some(key.clone()),
            };
            tokio::spawn(async move { (key, store.create_report(new).await.unwrap()) })
        })
        .collect();
    let mut created = std::collections::HashMap::new();
    let mut repeated = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            (key, CreatedReport::Created(report)) => {
                assert!(created.insert(key.clone(), report.id).is_none(), "{key} filed twice");
            }
            (key, CreatedReport::Repeat(id)) => repeated.push((key, id)),
        }
    }
    assert_eq!(created.len(), 17, "one report per key: {created:?}");
    assert_eq!(repeated.len(), 7, "{repeated:?}");
    for (key, id) in &repeated {
        assert_eq!(key, "queued-1", "only the retries repeat");
        assert_eq!(id, &created["queued-1"], "a retry answers with its key's report");
    }
    let again = NewReport { idempotency_key: Some("queued-101".into()), ..plain(&project) };
    match store.create_report(again).await.unwrap() {
        CreatedReport::Repeat(id) => assert_eq!(id, created["queued-101"]),
        other => panic!("the key is remembered: {other:?}"),
    }
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 50, ..Default::default() };
    assert_eq!(store.list_reports(&filter).await.unwrap().len(), 17);
    let events = store.list_events(Some(std::slice::from_ref(&project.id)), 0, 100).await.unwrap();
    assert_eq!(events.len(), 17, "one report.created per report filed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_naming_overlapping_blobs_in_opposite_orders_do_not_deadlock() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
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
        let (a, b) = tokio::join!(store.create_report(forward), store.create_report(backward));
        let outcomes = [a, b];
        let winners = outcomes.iter().filter(|outcome| matches!(outcome, Ok(CreatedReport::Created(_)))).count();
        assert_eq!(winners, 1, "{outcomes:?}");
        assert!(outcomes.iter().any(|outcome| matches!(outcome, Err(StoreError::BlobAlreadyUsed(_)))), "{outcomes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_named_twice_lists_its_reports_once() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    let filed = report(&project, 3_000_000, None);
    store.insert_reports_bulk(std::slice::from_ref(&filed)).await.unwrap();
    let filter = ReportFilter {
        project_ids: vec![project.id.clone(), project.id.clone(), new_id()],
        limit: 10,
        ..Default::default()
    };
    assert_eq!(store.list_reports(&filter).await.unwrap(), vec![filed]);
}

/// A filtered page reads its reports from the filter's index, however the matches are spread. The
/// newest quarter of the reports here are new and the older ones fixed or verified, ideas or bugs
/// (as on a real project: what was filed lately is new, what was fixed is older). Walking the
/// primary key from the newest report and checking each, the plan PostgreSQL chose at its default
/// page costs for one status or channel, and its only plan for several statuses, read every new
/// report before the first match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtered_page_reads_from_its_filters_index_when_the_matches_are_old() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    let reports: Vec<Report> = (0..20_000)
        .map(|i| {
            let mut filed = report(&project, 1_700_000_000_000 + i * 10, None);
            if i < 15_000 {
                filed.status = if i % 5 == 0 { "verified" } else { "fixed" }.parse().unwrap();
                filed.channel_key = if i % 2 == 0 { "idea" } else { "bug" }.into();
            }
            filed
        })
        .collect();
    store.insert_reports_bulk(&reports).await.unwrap();
    sqlx::query("ANALYZE reports").execute(store.pool()).await.unwrap();
    let newest_fixed = &reports[14_999].id;
    let newest_idea = &reports[14_998].id;
    let cases = [
        (
            ReportFilter { status: Some("fixed".into()), ..Default::default() },
            "reports_project_status_idx",
            newest_fixed,
        ),
        (
            ReportFilter { statuses: vec!["fixed".into()], ..Default::default() },
            "reports_project_status_idx",
            newest_fixed,
        ),
        (
            ReportFilter { statuses: vec!["verified".into(), "fixed".into()], ..Default::default() },
            "reports_project_status_idx",
            newest_fixed,
        ),
        (
            ReportFilter { channel_key: Some("idea".into()), ..Default::default() },
            "reports_project_channel_idx",
            newest_idea,
        ),
    ];
    for (filter, index, newest) in cases {
        let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 101, ..filter };
        let mut explain = reports::listing_after(sqlx::QueryBuilder::new("EXPLAIN "), &filter).unwrap();
        let plan: Vec<String> = explain.build_query_scalar().fetch_all(store.pool()).await.unwrap();
        let plan = plan.join("\n");
        assert!(plan.contains(&format!("Index Scan Backward using {index}")), "{filter:?}: {plan}");
        assert!(!plan.contains("reports_pkey"), "{filter:?}: {plan}");
        let page = store.list_reports(&filter).await.unwrap();
        assert_eq!(page.len(), 101);
        assert_eq!(&page[0].id, newest, "{filter:?}");
        assert!(page.windows(2).all(|pair| pair[0].id > pair[1].id), "{filter:?}: newest first");
        assert!(page.iter().all(|r| filter.statuses.is_empty() || filter.statuses.contains(&r.status.to_string())));
    }
}

/// Seeds a million reports (`PERF_REPORTS` to change) and prints query times. Run with
/// `cargo test -p svc-store --lib query_times_at_a_million -- --ignored --nocapture`; drops its schema
/// at the end unless `PERF_KEEP_SCHEMA` is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: seeds a million reports"]
async fn query_times_at_a_million_reports() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    let total: i64 = std::env::var("PERF_REPORTS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let statuses = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"];
    let started = Instant::now();
    let mut batch = Vec::with_capacity(50_000);
    for i in 0..total {
        let mut filed = report(&project, 1_700_000_000_000 + i * 10, (i % 3 == 0).then(|| format!("doc-{}", i % 500)));
        filed.status = statuses[(i % 6) as usize].parse().unwrap();
        // Every report says "save"; one in a hundred "error", one in 100,000 "walrus".
        let extra = if i % 100_000 == 7 {
            " walrus"
        } else if i % 100 == 3 {
            " error"
        } else {
            ""
        };
        filed.blocks = serde_json::from_value(serde_json::json!([{"type": "text", "text": format!("The save button does nothing{extra} w{}", i % 5_000)}])).unwrap();
        filed.author.id = Some(format!("user-{}", i % 5_000));
        batch.push(filed);
        if batch.len() == batch.capacity() || i == total - 1 {
            store.insert_reports_bulk(&batch).await.unwrap();
            batch.clear();
        }
    }
    eprintln!("seeded {total} reports in {:?}", started.elapsed());
    sqlx::query("ANALYZE reports").execute(store.pool()).await.unwrap();
    sqlx::query("ANALYZE report_search").execute(store.pool()).await.unwrap();

    let project_ids = vec![project.id.clone()];
    let newest = ReportFilter { project_ids: project_ids.clone(), limit: 100, ..Default::default() };
    let first_page = store.list_reports(&newest).await.unwrap();
    // Enough rounds for PostgreSQL to switch prepared statements to generic plans.
    for _ in 0..7 {
        let timed = Instant::now();
        store.list_reports(&newest).await.unwrap();
        let page_time = timed.elapsed();
        let timed = Instant::now();
        let by_status = ReportFilter {
            status: Some("fixed".parse().unwrap()),
            before: Some(first_page[99].id.clone()),
            ..newest.clone()
        };
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
        assert_eq!(store.room_rows(&project.id).await.unwrap().activity.len(), 500);
        let rooms_time = timed.elapsed();
        let mut searches = Vec::new();
        for (name, filter) in [
            ("save (every report)", ReportFilter { search: Some("save".into()), limit: 21, ..newest.clone() }),
            ("error (1%)", ReportFilter { search: Some("error".into()), limit: 21, ..newest.clone() }),
            ("walrus (10 reports)", ReportFilter { search: Some("walrus".into()), limit: 21, ..newest.clone() }),
            ("w42 (0.02%)", ReportFilter { search: Some("w42".into()), limit: 21, ..newest.clone() }),
            ("no match", ReportFilter { search: Some("zzzz".into()), limit: 21, ..newest.clone() }),
            ("reporter", ReportFilter { reporter: Some("user-42".into()), limit: 21, ..newest.clone() }),
        ] {
            let timed = Instant::now();
            store.list_reports(&filter).await.unwrap();
            searches.push(format!("{name} {:?}", timed.elapsed()));
        }
        eprintln!(
            "page {page_time:?}, status page {status_time:?}, two projects by artifact {across_time:?}, \
             short id {short_id_time:?}, rooms {rooms_time:?}; searches: {}",
            searches.join(", ")
        );
    }
    let schema: String = sqlx::query_scalar("SELECT current_schema()").fetch_one(store.pool()).await.unwrap();
    if std::env::var("PERF_KEEP_SCHEMA").is_ok() {
        eprintln!("kept schema {schema}");
        return;
    }
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA \"{schema}\" CASCADE"))).execute(store.pool()).await.unwrap();
}

/// A report whose transaction commits after later reports were indexed is indexed all the same:
/// the indexer never moves past a transaction still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_committed_late_is_indexed_once_its_transaction_ends() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    let search = |text: &str| ReportFilter {
        project_ids: vec![project.id.clone()],
        search: Some(text.into()),
        limit: 10,
        ..Default::default()
    };
    let mut slow = report(&project, 4_000_000, None);
    slow.blocks = serde_json::from_value(serde_json::json!([{"type": "text", "text": "walrus"}])).unwrap();
    let mut open = store.pool().begin().await.unwrap();
    // Takes its transaction id now, before the report filed below.
    super::reports::insert_report(&mut *open, &slow, &crate::ReportText::of(&slow)).await.unwrap();
    let mut quick = report(&project, 4_000_001, None);
    quick.blocks = serde_json::from_value(serde_json::json!([{"type": "text", "text": "narwhal"}])).unwrap();
    store
        .create_report(NewReport { report: quick.clone(), blob_ids: Vec::new(), idempotency_key: None })
        .await
        .unwrap();

    // A round while the first transaction is open indexes neither (the second is newer than it).
    search::round(store.pool(), &store.health, search::Lock::Wait, None).await.unwrap();
    assert!(store.list_reports(&search("narwhal")).await.unwrap().is_empty());
    open.commit().await.unwrap();
    store.run_maintenance_once().await.unwrap();
    assert_eq!(store.list_reports(&search("walrus")).await.unwrap().len(), 1);
    assert_eq!(store.list_reports(&search("narwhal")).await.unwrap().len(), 1);
}

/// Under a burst the indexer runs behind ingest; each of its rounds must read the next reports
/// from the index in their order and stop at the limit, not read and sort the whole backlog (on a
/// new table, without statistics, the planner chose a parallel scan of the table). And the
/// store's queries are not compiled with LLVM first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_indexer_reads_pending_reports_from_their_index_and_queries_run_without_jit() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    // A backlog of a few thousand, filed together (through the group commit, as under a burst).
    crate::test_fixtures::file_together(&store, (0..4_000).map(|_| plain(&project))).await;
    let mut tx = store.pool().begin().await.unwrap();
    let horizon = search::pending_horizon(&mut tx).await.unwrap();
    let plan: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("EXPLAIN {}", search::PENDING)))
        .bind(0_i64)
        .bind("")
        .bind(horizon)
        .bind(500_i64)
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("Index Scan using reports_ingest_order_idx"), "{plan}");
    assert!(!plan.contains("Sort") && !plan.contains("Seq Scan") && !plan.contains("Bitmap"), "{plan}");
    tx.rollback().await.unwrap();
    let jit: String = sqlx::query_scalar("SELECT current_setting('jit')").fetch_one(store.pool()).await.unwrap();
    assert_eq!(jit, "off");
}

/// While a burst of reports is being filed, a round of the search indexer writes one batch and
/// leaves the rest for after the burst; then every report is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_reports_holds_the_search_index_back_and_loses_none() {
    let Some(store) = fresh_store().await else { return };
    // Reports being filed right now, as many as make a burst (the store's own indexer task waits
    // it out too, 5 s at most, and then writes one batch as well).
    let burst: Vec<_> = (0..crate::load::BURST).map(|_| store.load().filing()).collect();
    let project = project(&*store).await;
    crate::test_fixtures::file_together(&store, (0..1_100).map(|_| plain(&project))).await;
    let indexed = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM report_search").fetch_one(store.pool()).await.unwrap()
    };
    let last_change = store.changes.last_change();
    search::round(store.pool(), &store.health, search::Lock::Wait, Some((&*last_change, store.load()))).await.unwrap();
    let during = indexed().await;
    // At most one batch of this round and one of the store's task, if it ran meanwhile (fewer when
    // a transaction of another test, still open, holds the indexer's horizon back).
    assert!(during <= 2 * search::ROWS_PER_TRANSACTION, "one batch during the burst, not all 1,100: {during}");

    drop(burst);
    store.run_maintenance_once().await.unwrap();
    assert_eq!(indexed().await, 1_100);
    let found = store.list_reports(&crate::test_fixtures::search(&project, "save button", 200)).await.unwrap();
    assert_eq!(found.len(), 200);
}

fn plain(project: &Project) -> NewReport {
    NewReport { report: report(project, svc_core::time::now_ms(), None), blob_ids: Vec::new(), idempotency_key: None }
}

/// Terminates every backend of this store's pool (its connections carry the test schema's name as
/// their application name, so no other test's connection is touched); returns how many.
async fn terminate_backends(store: &PostgresStore) -> i64 {
    let url = std::env::var("SVC_TEST_POSTGRES_URL").unwrap();
    let application: String =
        sqlx::query_scalar("SELECT current_setting('application_name')").fetch_one(store.pool()).await.unwrap();
    assert!(application.starts_with("t_"), "a test store names its connections after its schema: {application}");
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    // The timeout makes pg_terminate_backend wait until each backend is gone.
    let terminated = sqlx::query_scalar(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1",
    )
    .bind(&application)
    .fetch_one(&mut admin)
    .await
    .unwrap();
    admin.close().await.unwrap();
    terminated
}

/// A server restart kills every pooled connection at once. The pool does not ping idle
/// connections before each use, so this checks that the dead ones cost no write: the first plain
/// report meets one, is retried on a checked connection, and every request after it gets a live
/// connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pooled_connection_terminated_costs_no_write() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    // Fill the pool: four connections, all idle (their return to the pool runs as a task).
    let held: Vec<_> = hold_four_connections(&store).await;
    drop(held);
    let deadline = Instant::now() + std::time::Duration::from_secs(5);
    while store.pool().num_idle() < 4 {
        assert!(Instant::now() < deadline, "the connections came back to the pool");
        tokio::task::yield_now().await;
    }

    assert_eq!(terminate_backends(&store).await, 4);

    for _ in 0..4 {
        store.create_report(plain(&project)).await.expect("a plain report is filed despite the lost connections");
    }
    let keyed = NewReport { idempotency_key: Some("after-restart".into()), ..plain(&project) };
    assert!(matches!(store.create_report(keyed).await, Ok(CreatedReport::Created(_))), "a report in a transaction");
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 50, ..Default::default() };
    assert_eq!(store.list_reports(&filter).await.unwrap().len(), 5, "each report stored once");
    store.ping().await.expect("ready");

    // Readiness after the next loss: its own round trip is retried too.
    terminate_backends(&store).await;
    store.ping().await.expect("ready after the connections were lost again");
}

/// Four connections of the pool at once.
async fn hold_four_connections(store: &PostgresStore) -> Vec<sqlx::pool::PoolConnection<sqlx::Postgres>> {
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(store.pool().acquire().await.unwrap());
    }
    held
}

/// A server out of disk space answers writes with SQLSTATE 53100 while reads keep working. A
/// trigger in the test's own schema raises exactly that for the reports and the probe table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_fails_while_the_server_refuses_writes_and_recovers_by_itself() {
    let Some(store) = fresh_store().await else { return };
    let project = project(&*store).await;
    store.ping().await.expect("a new store is ready");
    for statement in [
        "CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$",
        "CREATE TRIGGER full_disk BEFORE INSERT OR UPDATE ON reports EXECUTE FUNCTION refuse_write()",
        "CREATE TRIGGER full_disk BEFORE INSERT OR UPDATE ON write_probe EXECUTE FUNCTION refuse_write()",
    ] {
        sqlx::query(statement).execute(store.pool()).await.unwrap();
    }

    let error = store.create_report(plain(&project)).await.expect_err("the write is refused");
    assert!(error.to_string().contains("No space left on device"), "{error}");
    for _ in 0..2 {
        let not_ready = store.ping().await.expect_err("not ready while writes fail");
        assert!(not_ready.to_string().contains("No space left on device"), "{not_ready}");
    }

    for table in ["reports", "write_probe"] {
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP TRIGGER full_disk ON {table}")))
            .execute(store.pool())
            .await
            .unwrap();
    }
    store.ping().await.expect("ready again once writes work");
    assert!(!store.health.is_failing());
    assert!(matches!(store.create_report(plain(&project)).await, Ok(CreatedReport::Created(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_events_deliveries_keep_one_body_until_the_last_goes() {
    let Some(store) = fresh_store().await else { return };
    let bodies = async || {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM webhook_payloads").fetch_one(store.pool()).await.unwrap()
    };
    crate::test_fixtures::one_body_until_the_last_delivery_goes(&*store, bodies).await;
}
