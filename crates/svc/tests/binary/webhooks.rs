//! Webhook deliveries survive `kill -9`: deliveries waiting for a retry, and events the delivery
//! task had not read yet, all reach the receiver after a restart, each report's event under one
//! `webhook-id`, every signature checked by the `standardwebhooks` package.

use crate::support::Server;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

#[path = "../../../svc-server/tests/webhooks/receiver.rs"]
mod receiver;

/// The report ids of the deliveries the receiver answered with 200, each with the webhook-ids
/// they came under.
fn delivered(receiver: &receiver::Receiver) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for request in receiver.received() {
        assert_eq!(request["verified"], json!([true]), "{}", request["verify_errors"]);
        if request["answered"] == 200 {
            let report = request["json"]["data"]["report"]["id"].as_str().unwrap().to_string();
            let id = request["headers"]["webhook-id"].as_str().unwrap().to_string();
            found.entry(report).or_default().insert(id);
        }
    }
    found
}

async fn file(http: &reqwest::Client, server: &Server, public_key: &str, words: &str) -> String {
    let body = json!({"blocks": [{"type": "text", "text": words}]});
    let answer: Value = http
        .post(server.url("/ingest/report"))
        .header("x-svc-project-key", public_key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["reportId"].as_str().expect("a report id").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_resume_after_a_kill_and_none_is_lost() {
    let Some(receiver) = receiver::Receiver::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let env = |background: &'static str| [("SVC_WEBHOOK_ALLOW_PRIVATE", "true"), ("SVC_BACKGROUND_WORK", background)];
    let http = reqwest::Client::new();

    // The receiver fails at first: deliveries wait for their retry when the server is killed.
    receiver.answer(500);
    let server = Server::start(&data, &env("on"));
    let boot = server.bootstrap.clone().expect("the first start prints the bootstrap block");
    let made: Value = http
        .post(server.url(&format!("/api/v1/projects/{}/webhooks", boot.project_id)))
        .header("authorization", format!("Bearer {}", boot.setup_token))
        .json(&json!({"url": receiver.url("/hook"), "events": ["report.created"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    receiver.verify_with(&[made["secret"].as_str().expect("a secret")]);
    let mut filed = BTreeSet::new();
    for n in 0..10 {
        filed.insert(file(&http, &server, &boot.public_key, &format!("Before the kill {n}")).await);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.received().is_empty() {
        assert!(Instant::now() < deadline, "no delivery was attempted");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server); // SIGKILL

    // An instance without background work files more, and is killed too: their events wait in
    // the feed.
    let server = Server::start(&data, &env("off"));
    for n in 0..10 {
        filed.insert(file(&http, &server, &boot.public_key, &format!("Between kills {n}")).await);
    }
    drop(server);

    // Restarted with the receiver answering: every report reaches it.
    receiver.answer_ok();
    let _server = Server::start(&data, &env("on"));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = delivered(&receiver);
        if found.len() == filed.len() {
            assert_eq!(found.keys().cloned().collect::<BTreeSet<_>>(), filed);
            for (report, ids) in found {
                assert_eq!(ids.len(), 1, "report {report} came under one webhook-id: {ids:?}");
            }
            break;
        }
        assert!(Instant::now() < deadline, "{} of {} reports delivered", found.len(), filed.len());
        std::thread::sleep(Duration::from_millis(100));
    }
}
