//! The REST behaviours that rest on the store (paging, filters, rooms, keys, conflicts, the scope
//! matrix, ingest's idempotency keys) again over PostgreSQL, each test in a fresh schema. Skipped
//! (passing, with a note) when `SVC_TEST_POSTGRES_URL` is not set.

use crate::common::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_idempotency_keys_file_one_report_each() {
    let Some(app) = TestApp::postgres().await else { return };
    crate::ingest_reports::the_same_idempotency_key_files_one_report_on(app).await;
    let Some(app) = TestApp::postgres().await else { return };
    crate::ingest_reports::concurrent_repeats_of_one_idempotency_key_file_one_report_on(app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_paging_and_filters() {
    let Some(app) = TestApp::postgres().await else { return };
    let mut seeded = Vec::new();
    for i in 0..250 {
        let channel = if i % 5 == 0 { "idea" } else { "bug" };
        seeded.push(app.seed(Seed::text(&format!("report {i}")).channel(channel)).await);
    }
    let newest_first: Vec<String> = seeded.iter().rev().map(|r| r.id.clone()).collect();
    for limit in [100, 7] {
        assert_eq!(walk(&app, limit).await, newest_first, "limit {limit}");
    }
    let page = app.get(&app.p("/feedback?limit=150"), &app.token).await.ok(200).clone();
    assert_eq!(page["items"].as_array().unwrap().len(), 100);
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!(page["items"].as_array().unwrap().len(), 20);

    let ideas = app.get(&app.p("/feedback?channelKey=idea&limit=100"), &app.token).await.ok(200).clone();
    assert_eq!(ideas["items"].as_array().unwrap().len(), 50);
    assert_eq!(ideas["nextCursor"], Value::Null);
    assert!(ideas["items"].as_array().unwrap().iter().all(|r| r["channelKey"] == json!("idea")));
    for query in ["status=bogus", "channelKey=nope"] {
        let page = app.get(&app.p(&format!("/feedback?{query}")), &app.token).await.ok(200).clone();
        assert_eq!(page, json!({"items": [], "nextCursor": null}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_reports_status_and_foreign_ids() {
    let Some(app) = TestApp::postgres().await else { return };
    let report = app.seed(Seed::text("broken")).await;
    let path = app.p(&format!("/feedback/{}", report.id));
    app.patch(&path, &app.token, json!({"status": "fixed"})).await.ok(200);
    app.patch(&path, &app.token, json!({"status": "done"})).await.error(400, "BAD_REQUEST");
    let got = app.get(&path, &app.token).await.ok(200).clone();
    assert_eq!(got["status"], json!("fixed"));
    assert_eq!(got["statusHistory"].as_array().unwrap().len(), 1);
    assert_eq!(got["statusHistory"][0]["from"], json!("new"));

    let (other, _) = app.other_project().await;
    let foreign = seed_report(&app.store, &other.id, Seed::text("elsewhere")).await;
    app.get(&app.p(&format!("/feedback/{}", foreign.id)), &app.token).await.error(404, "NOT_FOUND");
    app.get(&app.p("/feedback/nope"), &app.token).await.error(404, "NOT_FOUND");

    app.seed_comment(&report.id, "A note", true).await;
    let comments = app.get(&format!("{path}/comments"), &app.token).await.ok(200).clone();
    assert_eq!(comments["items"][0]["draft"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rooms() {
    let Some(app) = TestApp::postgres().await else { return };
    let now = svc_core::time::now_ms();
    app.seed(Seed::text("one").artifact("alpha").at(now - 50_000)).await;
    app.seed(Seed::text("two").artifact("alpha").at(now - 40_000)).await;
    app.seed(Seed::text("three").artifact("beta").at(now - 30_000)).await;
    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    let ids: Vec<&str> = list["items"].as_array().unwrap().iter().map(|r| r["artifactId"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["beta", "alpha"]);
    assert_eq!(list["items"][1]["count"], json!(2));

    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "gamma"})).await.ok(201);
    let resumed = app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "gamma"})).await.ok(200).clone();
    assert_eq!(resumed["created"], json!(false));
    let implicit = app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "beta"})).await.ok(200).clone();
    assert_eq!(implicit["created"], json!(false));
    app.patch(&app.p("/rooms/ghost"), &app.token, json!({"title": "x"})).await.error(404, "NOT_FOUND");
    app.patch(&app.p("/rooms/alpha"), &app.token, json!({"archived": true})).await.ok(200);
    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    let mut ids: Vec<&str> =
        list["items"].as_array().unwrap().iter().map(|r| r["artifactId"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, vec!["beta", "gamma"]);
    let list = app.get(&app.p("/rooms?archived=true"), &app.token).await.ok(200).clone();
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keys_channels_and_auth() {
    let Some(app) = TestApp::postgres().await else { return };
    let minted = app.mint_api(&["feedback:read"]).await;
    let key = minted["key"].as_str().unwrap();
    app.get(&app.p("/feedback"), key).await.ok(200);
    let id = minted["id"].as_str().unwrap();
    app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.ok(200);
    app.get(&app.p("/feedback"), key).await.error(401, "UNAUTHORIZED");
    app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.error(404, "NOT_FOUND");
    let (expired_id, expired) = app.expired_key().await;
    app.get("/api/v1/me", &expired).await.error(401, "UNAUTHORIZED");
    app.call("DELETE", &app.p(&format!("/keys/{expired_id}")), &app.token, None).await.error(404, "NOT_FOUND");

    let channel = json!({"key": "billing", "name": "Billing", "color": "#aabbcc", "mascot": "otter"});
    app.post(&app.p("/channels"), &app.token, channel.clone()).await.ok(201);
    app.post(&app.p("/channels"), &app.token, channel).await.error(409, "CONFLICT");
    app.patch(&app.p("/channels/nope"), &app.token, json!({"name": "x"})).await.error(404, "NOT_FOUND");

    let org_key = app.mint_org_wide(&["*"]).await;
    app.get("/api/v1/me", &org_key).await.error(403, "FORBIDDEN");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_scope_matrix() {
    let Some(app) = TestApp::postgres().await else { return };
    run_scope_matrix(&app).await;
}

/// Two instances on one database: each housekeeping pass runs on one of them, and when that one
/// stops renewing its lease, the other takes the work over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_housekeeping_runs_on_one_instance_of_two() {
    use svc_service::housekeeping::{LEASE_MS, run_if_leased};
    let Some((first, second)) = TestApp::postgres_pair().await else { return };
    let now = svc_core::time::now_ms();
    let blobs = |app: &TestApp| app.state.blobs.clone();
    assert!(run_if_leased(first.service(), &blobs(&first), now).await, "the first pass runs");
    assert!(!run_if_leased(second.service(), &blobs(&second), now + 1).await, "not twice");
    // The next minute's pass renews the first instance's lease.
    assert!(run_if_leased(first.service(), &blobs(&first), now + 60_000).await);
    assert!(!run_if_leased(second.service(), &blobs(&second), now + 60_000 + LEASE_MS - 1).await);

    // The first instance stops: once its lease runs out, the second does the work, for real.
    let hint = json!({"channelKey": "bug", "weight": "max"});
    second.call("POST", &second.p("/hints"), &second.token, Some(hint)).await.ok(200);
    let later = now + 60_000 + LEASE_MS;
    assert!(run_if_leased(second.service(), &blobs(&second), later + 10 * 60_000).await, "taken over");
    assert!(!run_if_leased(first.service(), &blobs(&first), later + 10 * 60_000 + 1).await, "the second holds it");
    // Read as of its creation: still there unless a pass deleted it.
    let left = first.store.list_all_active_hints(first.pid(), now).await.unwrap();
    assert!(left.is_empty(), "the second instance's pass deleted the expired hint: {left:?}");
}
