//! Writes that fail because of the storage, with faults injected on the writer connection: a cap
//! on the database's size (`max_page_count`: the same "database or disk is full" as a full disk,
//! without needing a file system to fill) and `query_only` (the storage refuses every write, as a
//! file system remounted read-only would). The server's tests fill a real tmpfs where they can.

use super::*;
use crate::prelude::*;
use crate::test_fixtures::project;
use svc_core::ids::new_id;

pub(super) async fn open(folder: &std::path::Path) -> SqliteStore {
    SqliteStore::connect(&format!("sqlite://{}", folder.join("svc.db").display())).await.expect("open store")
}

pub(super) fn plain(project: &Project) -> NewReport {
    let at = svc_core::time::now_ms();
    let report = Report {
        id: new_id(),
        project_id: project.id.clone(),
        channel_key: "bug".into(),
        status: "new".parse().unwrap(),
        title: "The save button does nothing".into(),
        blocks: serde_json::from_value(
            serde_json::json!([{"type": "text", "text": "The save button does nothing. ".repeat(20)}]),
        )
        .unwrap(),
        context: serde_json::from_value(serde_json::json!({"url": "https://app.example.com/settings"})).unwrap(),
        identity: None,
        identity_error: None,
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: None, label: None },
        artifact_id: None,
        url: Some("https://app.example.com/settings".into()),
        created_at: at,
        updated_at: at,
        assignee: None,
        labels: Vec::new(),
    };
    NewReport { report, blob_ids: Vec::new(), idempotency_key: None }
}

/// [`plain`] with an idempotency key, as the widget sends every report.
fn keyed(project: &Project, key: &str) -> NewReport {
    NewReport { idempotency_key: Some(key.into()), ..plain(project) }
}

/// Runs a statement on the writer connection (the pool has exactly one).
async fn on_writer(store: &SqliteStore, statement: &str) {
    sqlx::query(sqlx::AssertSqlSafe(statement.to_string())).execute(&store.writer).await.expect(statement);
}

/// Caps the database at its current size: the next write that needs a new page fails with
/// SQLITE_FULL, in the statement that needs it. That rolls back the whole transaction (a
/// single-row INSERT keeps no statement journal), the case that used to leave the writer
/// connection unusable.
async fn cap_at_current_size(store: &SqliteStore) {
    let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&store.writer).await.unwrap();
    on_writer(store, &format!("PRAGMA max_page_count = {pages}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_database_fails_the_batch_and_the_next_write_works_once_there_is_room() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    cap_at_current_size(&store).await;

    let mut failure = None;
    for _ in 0..1_000 {
        if let Err(error) = store.create_report(plain(&project)).await {
            failure = Some(error);
            break;
        }
    }
    let failure = failure.expect("the capped database fills up");
    assert!(failure.to_string().contains("database or disk is full"), "{failure}");
    assert!(store.health.is_failing());
    let stored_before = store
        .list_reports(&ReportFilter { project_ids: vec![project.id.clone()], limit: 200, ..Default::default() })
        .await
        .unwrap()
        .len();

    // Room again. The cap is the connection's: when the failure rolled the whole transaction back
    // the pool replaced the connection (and the cap went with it); when it failed inside a trigger
    // (the fixture's report names a room, counted by one), SQLite rolled back only the statement,
    // and the same connection comes back with its transaction rolled back. Either way the next
    // write must work. (Before, every later write failed: "attempted to call begin_with at
    // non-zero transaction depth".)
    on_writer(&store, "PRAGMA max_page_count = 1073741823").await;
    let created = store.create_report(plain(&project)).await.expect("the writer works again");
    let CreatedReport::Created(report) = created else { panic!("a new report") };
    assert!(!store.health.is_failing(), "a stored report clears the failing mark");
    store.ping().await.expect("ready again");
    let with_key = keyed(&project, "k-1");
    assert!(matches!(store.create_report(with_key).await, Ok(CreatedReport::Created(_))));
    let by = Author { kind: svc_core::model::AuthorKind::Agent, id: None, label: None };
    let triage = crate::Write::Status { report_id: report.id.clone(), to: "triaged".parse().unwrap() };
    store.apply(&crate::Change::anywhere(by, 5, vec![triage])).await.expect("a write transaction works too");
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 200, ..Default::default() };
    assert_eq!(
        store.list_reports(&filter).await.unwrap().len(),
        stored_before + 2,
        "nothing of the failed batch was stored"
    );

    // The same again on the replacement connection, through a write transaction of its own.
    cap_at_current_size(&store).await;
    let many: Vec<Report> = (0..2_000).map(|_| plain(&project).report).collect();
    let error = store.insert_reports_bulk(&many).await.expect_err("no room for 2,000 reports");
    assert!(error.to_string().contains("database or disk is full"), "{error}");
    on_writer(&store, "PRAGMA max_page_count = 4294967294").await;
    store.insert_reports_bulk(&many).await.expect("room again");
    assert!(matches!(store.create_report(plain(&project)).await, Ok(CreatedReport::Created(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_fails_while_writes_fail_and_recovers_by_itself() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    store.ping().await.expect("a new store is ready");

    on_writer(&store, "PRAGMA query_only = 1").await;
    // Reads still work, and nothing has tried to write yet: still ready.
    store.ping().await.expect("ready until a write fails");
    let error = store.create_report(plain(&project)).await.expect_err("writes are refused");
    assert!(error.to_string().contains("readonly"), "{error}");
    // Each readiness check tries a write of its own, and fails while the storage refuses.
    for _ in 0..2 {
        let not_ready = store.ping().await.expect_err("not ready while writes fail");
        assert!(not_ready.to_string().contains("readonly"), "{not_ready}");
    }

    on_writer(&store, "PRAGMA query_only = 0").await;
    // No report needed: the readiness check's own write shows writing works again.
    store.ping().await.expect("ready again once writes work");
    assert!(!store.health.is_failing());
    assert!(matches!(store.create_report(plain(&project)).await, Ok(CreatedReport::Created(_))));
}

/// Commits leave a short WAL to the checkpointer (they copy pages into the database file only
/// once the WAL is long); one checkpoint copies every frame no reader needs, and the reports stay
/// readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpointer_copies_the_wal_the_writer_leaves() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let autocheckpoint: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint").fetch_one(&store.writer).await.unwrap();
    assert_eq!(autocheckpoint, checkpoint::WRITER_BACKSTOP_FRAMES, "the writer's commits checkpoint only a long WAL");
    for _ in 0..200 {
        store.create_report(plain(&project)).await.unwrap();
    }
    let done = store.checkpoint_wal().await.unwrap();
    assert!(done.wal_frames > 0, "the commits left their pages in the WAL: {done:?}");
    assert_eq!(done.copied_frames, done.wal_frames, "a quiet database is checkpointed whole: {done:?}");
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 500, ..Default::default() };
    assert_eq!(store.list_reports(&filter).await.unwrap().len(), 200);
}

/// Commits that never pause (a bulk load, one large transaction after another) still let the WAL
/// start over: a reader's checkpoint never catches up with such a writer, the round's second
/// checkpoint on the writer does, so the WAL file stays smaller than the database (it grew without
/// end when only readers checkpointed: a million bulk-loaded reports left a WAL larger than the
/// database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_starts_over_while_commits_keep_coming() {
    let folder = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(folder.path()).await);
    let project = project(&*store).await;
    let batches: Vec<Vec<Report>> = (0..24).map(|_| (0..1_000).map(|_| plain(&project).report).collect()).collect();
    let loading = tokio::spawn({
        let store = store.clone();
        async move {
            for batch in &batches {
                store.insert_reports_bulk(batch).await.unwrap();
            }
        }
    });
    let wal = folder.path().join("svc.db-wal");
    let (mut largest_wal, mut frames_seen, mut started_over) = (0, 0, false);
    while !loading.is_finished() {
        let done = store.checkpoint_wal().await.unwrap();
        started_over |= done.wal_frames < frames_seen;
        frames_seen = done.wal_frames;
        largest_wal = largest_wal.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
    }
    loading.await.unwrap();
    let written: u64 = std::fs::metadata(folder.path().join("svc.db")).unwrap().len();
    assert!(started_over, "the WAL never started over while the load ran");
    assert!(largest_wal < written, "the WAL grew to {largest_wal} bytes for a {written}-byte database");
    let filter = ReportFilter { project_ids: vec![project.id.clone()], limit: 10, ..Default::default() };
    assert_eq!(store.list_reports(&filter).await.unwrap().len(), 10);
}

/// A batch of plain reports commits in one round trip; a row of it that fails (here a report id
/// that is taken) sends the batch the long way, where only that report fails, and every stored
/// report has its one `report.created` event, in the order stored. (On one thread, so the writer
/// task runs only once all six are queued: one batch.)
#[tokio::test(flavor = "current_thread")]
async fn a_failing_row_fails_alone_and_every_stored_report_has_its_event() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let first = plain(&project);
    store.create_report(first.clone()).await.unwrap();
    let taken =
        NewReport { report: Report { id: first.report.id.clone(), ..plain(&project).report }, ..plain(&project) };
    let batch: Vec<NewReport> = (0..6).map(|i| if i == 3 { taken.clone() } else { plain(&project) }).collect();
    let create = |i: usize| store.create_report(batch[i].clone());
    let (a, b, c, d, e, f) = tokio::join!(create(0), create(1), create(2), create(3), create(4), create(5));
    let outcomes = [a, b, c, d, e, f];
    for (new, outcome) in batch.iter().zip(&outcomes) {
        if new.report.id == first.report.id {
            assert!(matches!(outcome, Err(StoreError::Conflict(_))), "{outcome:?}");
        } else {
            assert!(matches!(outcome, Ok(CreatedReport::Created(_))), "{outcome:?}");
        }
    }
    let events = store.list_events(Some(&[project.id.clone()]), 0, 100).await.unwrap();
    let filed: Vec<&str> = events.iter().filter_map(|event| event.report_id.as_deref()).collect();
    let stored: Vec<String> = store
        .list_reports(&ReportFilter { project_ids: vec![project.id.clone()], limit: 100, ..Default::default() })
        .await
        .unwrap()
        .into_iter()
        .map(|report| report.id)
        .collect();
    assert_eq!(stored.len(), 6, "the first report and the five new ones");
    assert_eq!(filed.len(), 6, "one event per stored report: {filed:?}");
    for id in &stored {
        assert_eq!(filed.iter().filter(|filed| *filed == id).count(), 1, "{id}");
    }
}

/// Reports with idempotency keys (what the widget sends) in one batch: their keys are looked up
/// together; a key seen before answers with its report, the first of a batch with a new key is
/// stored, and a second with the same key in the same batch is a repeat of the first. (On one
/// thread, so the writer task runs only once all five are queued: one batch.)
#[tokio::test(flavor = "current_thread")]
async fn keyed_reports_in_one_batch_are_stored_once_per_key() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let earlier = keyed(&project, "k-0");
    let Ok(CreatedReport::Created(earlier_report)) = store.create_report(earlier).await else { panic!("stored") };
    let batch = [
        keyed(&project, "k-1"),
        keyed(&project, "k-2"),
        keyed(&project, "k-1"),
        plain(&project),
        keyed(&project, "k-0"),
    ];
    let create = |i: usize| store.create_report(batch[i].clone());
    let (a, b, c, d, e) = tokio::join!(create(0), create(1), create(2), create(3), create(4));
    let Ok(CreatedReport::Created(first)) = a else { panic!("the first with k-1 is stored: {a:?}") };
    assert!(matches!(b, Ok(CreatedReport::Created(_))), "{b:?}");
    match c {
        Ok(CreatedReport::Repeat(id)) => assert_eq!(id, first.id, "a repeat of the first with k-1"),
        other => panic!("a repeat: {other:?}"),
    }
    assert!(matches!(d, Ok(CreatedReport::Created(_))), "{d:?}");
    match e {
        Ok(CreatedReport::Repeat(id)) => assert_eq!(id, earlier_report.id, "k-0 was stored before"),
        other => panic!("a repeat: {other:?}"),
    }
    // Each key is remembered: a retry later in another batch is a repeat too.
    match store.create_report(keyed(&project, "k-2")).await {
        Ok(CreatedReport::Repeat(_)) => {}
        other => panic!("k-2 remembered: {other:?}"),
    }
    let stored = store
        .list_reports(&ReportFilter { project_ids: vec![project.id.clone()], limit: 100, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(stored.len(), 4, "k-0, k-1, k-2 and the plain report");
    let events = store.list_events(Some(&[project.id.clone()]), 0, 100).await.unwrap();
    assert_eq!(events.len(), 4, "one report.created per stored report");
}

/// A batch of new keys with plain reports among them (what a busy moment of widgets brings) is
/// committed in one trip with the keys: every report stored once, each key remembered for its
/// own report, an event for each.
#[tokio::test(flavor = "current_thread")]
async fn new_keys_are_remembered_with_their_reports_in_one_commit() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let batch = [
        keyed(&project, "0190a1b2-0000-7000-8000-000000000001"),
        plain(&project),
        keyed(&project, "0190a1b2-0000-7000-8000-000000000002"),
    ];
    let create = |i: usize| store.create_report(batch[i].clone());
    let (a, b, c) = tokio::join!(create(0), create(1), create(2));
    let mut ids = Vec::new();
    for created in [a, b, c] {
        let Ok(CreatedReport::Created(report)) = created else { panic!("stored: {created:?}") };
        ids.push(report.id);
    }
    for (i, key) in [(0, "0190a1b2-0000-7000-8000-000000000001"), (2, "0190a1b2-0000-7000-8000-000000000002")] {
        match store.create_report(keyed(&project, key)).await {
            Ok(CreatedReport::Repeat(first)) => assert_eq!(first, ids[i], "{key} answers with its own report"),
            other => panic!("{key} remembered: {other:?}"),
        }
    }
    let events = store.list_events(Some(&[project.id.clone()]), 0, 100).await.unwrap();
    let filed: Vec<_> = events.iter().filter_map(|event| event.report_id.clone()).collect();
    assert_eq!(filed, ids, "one event each, in order");
}

/// While a burst of reports is being filed, a round of the search indexer writes one transaction
/// and leaves the rest for after the burst; then every report is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_reports_holds_the_search_index_back_and_loses_none() {
    let folder = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(folder.path()).await);
    // Reports being filed right now, as many as make a burst (the store's own indexer task waits
    // it out too, 5 s at most, and then writes one transaction as well).
    let burst: Vec<_> = (0..crate::load::BURST).map(|_| store.load().filing()).collect();
    let project = project(&*store).await;
    crate::test_fixtures::file_together(&store, (0..600).map(|_| plain(&project))).await;
    let indexed = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM report_search").fetch_one(&store.reader).await.unwrap()
    };
    let alive = store.write_queue.downgrade();
    search::background_round(&store.writer, &store.reader, &alive, store.load(), &store.health).await.unwrap();
    let during = indexed().await;
    let batch = search::ROWS_PER_TRANSACTION;
    assert!(
        (batch..=2 * batch).contains(&during),
        "one transaction during the burst (two if the task ran), not all 600: {during}"
    );

    drop(burst);
    // Each call indexes everything left, or finds that the indexer task is writing and stops
    // after the task's transaction: a few calls at most.
    for _ in 0..8 {
        store.run_maintenance_once().await.unwrap();
        if indexed().await == 600 {
            break;
        }
    }
    assert_eq!(indexed().await, 600);
    let found = store.list_reports(&crate::test_fixtures::search(&project, "save button", 200)).await.unwrap();
    assert_eq!(found.len(), 200);
}

/// This process's threads that are in the idle scheduling class and called one of `named`, by name.
fn threads_giving_way(named: &[&str]) -> Vec<String> {
    named
        .iter()
        .flat_map(|name| crate::priority::threads_named(name).map(move |tid| (name, tid)))
        .filter(|(_, tid)| crate::priority::gives_way(Some(*tid)))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// A connection's thread starts in the scheduling class of the thread that opens it. Webhook
/// delivery's thread is in the idle class and reads through the server's pools; when it opened a
/// reader, the listings that drew that reader waited up to 90 ms for a core. The pools are opened
/// whole when the store connects, so the background thread's reads, as many at once as the pool
/// holds, find their connections open, and none of the server's connection threads gives way.
#[test]
fn the_servers_connections_never_start_in_a_background_threads_class() {
    let folder = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let store = Arc::new(runtime.block_on(open(folder.path())));
    let pool = store.reader.clone();
    // As webhook delivery runs: a thread of its own in the idle class, with a runtime of its own.
    let read = std::thread::spawn(move || {
        assert!(crate::priority::give_way(None), "the idle class, which needs no privileges");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let (a, b, c, d) = tokio::join!(pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire());
            let mut total = 0;
            for mut connection in [a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap()] {
                let (one,): (i64,) = sqlx::query_as("SELECT 1").fetch_one(&mut *connection).await.unwrap();
                total += one;
            }
            total
        })
    })
    .join()
    .unwrap();
    assert_eq!(read, i64::from(READ_CONNECTIONS));
    assert_eq!(threads_giving_way(&[READER_THREAD, WRITER_THREAD]), Vec::<String>::new());
    drop(store);
}

/// Report rows are read by each column's position in the result, found once by name: a result
/// with the columns in another order and one more before them gives the same reports, and a row
/// of another shape is an error, not a wrong value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_rows_are_read_by_their_columns_names_whatever_their_order() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let mut filed = Vec::new();
    for title in ["first", "second", "third"] {
        let mut new = plain(&project);
        new.report.title = title.into();
        new.report.url = Some(format!("https://app.example.com/{title}"));
        let CreatedReport::Created(report) = store.create_report(new).await.unwrap() else { panic!("a new report") };
        filed.push(report);
    }
    let reordered = sqlx::query(
        "SELECT 7 AS extra, labels, assignee_id, updated_at, created_at, url, artifact_id, author_label, author_id, \
         author_kind, identity_error, identity, context, blocks, title, status, channel_key, project_id, id \
         FROM reports ORDER BY rowid",
    )
    .fetch_all(&store.reader)
    .await
    .unwrap();
    let read = rows::reports(&reordered).unwrap();
    let ids: Vec<&str> = read.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, filed.iter().map(|r| r.id.as_str()).collect::<Vec<_>>());
    for (read, filed) in read.iter().zip(&filed) {
        assert_eq!(read.title, filed.title);
        assert_eq!(read.url, filed.url);
        assert_eq!(read.project_id, project.id);
        assert_eq!(serde_json::to_value(&read.blocks).unwrap(), serde_json::to_value(&filed.blocks).unwrap());
    }
    let listed = store
        .list_reports(&ReportFilter { project_ids: vec![project.id.clone()], limit: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(listed.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(), ["third", "second", "first"]);

    let columns = rows::ReportColumns::of(&reordered[0]).unwrap();
    let short = sqlx::query("SELECT id, title FROM reports").fetch_all(&store.reader).await.unwrap();
    assert!(columns.read(&short[0]).is_err(), "positions of one result do not read a row of another shape");
}
