//! Webhooks, end to end: endpoints made over REST, deliveries made from the event feed and sent to
//! a real receiver (`tests/webhooks/receiver.py`) that checks every signature with the
//! `standardwebhooks` package and every Slack message with `slack_sdk`'s Block Kit models. The
//! delivery task's round (`webhooks::run_once`) is called directly, with the clock a test needs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use svc_server::config::ServerConfig;
use svc_service::outbound::OutboundPolicy;
use svc_service::{Service, webhooks};

use crate::common::ingest::text_report;
use crate::common::{PASSWORD, TestApp, csrf_of, no_rate_limits};
use crate::mcp_support::tool;

#[path = "../webhooks/receiver.rs"]
mod receiver;
use receiver::Receiver;

/// Private addresses allowed (the receiver is on loopback); answers within a second.
fn config() -> ServerConfig {
    ServerConfig {
        webhook_policy: OutboundPolicy { allow_private: true, ..Default::default() },
        webhook_timeout: Duration::from_secs(1),
        ..no_rate_limits()
    }
}

async fn create(app: &TestApp, body: Value) -> Value {
    app.rest("POST", &app.p("/webhooks"), Some(body)).await.ok(201).clone()
}

/// One round of the delivery task at `now`.
async fn round(app: &TestApp, now: i64) -> webhooks::Round {
    webhooks::run_once(&app.state.service, &app.state.webhooks, now).await
}

/// Runs `work` with the service and the delivery hooks the way `svc serve` runs delivery: on SQLite
/// on a thread of its own in the idle class, whose writes to the server's database go back to this
/// runtime (in a debug build the store fails any such write made from that thread); on PostgreSQL
/// here.
async fn as_served<T, F>(app: &TestApp, work: impl FnOnce(Arc<Service>, webhooks::Webhooks) -> F + Send + 'static) -> T
where
    T: Send + 'static,
    F: Future<Output = T> + 'static,
{
    let svc = app.state.service.clone();
    if app.store.backend() != "sqlite" {
        return work(svc, app.state.webhooks.clone()).await;
    }
    let done = webhooks::on_own_thread(app.state.webhooks.clone(), move |hooks| work(svc, hooks)).expect("a thread");
    done.await.expect("delivery's thread finished its work")
}

fn now() -> i64 {
    svc_core::time::now_ms()
}

fn types(received: &[Value]) -> Vec<String> {
    received.iter().map(|r| r["json"]["type"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn every_change_reaches_the_endpoint_once_signed_the_standard_way() {
    let Some(receiver) = Receiver::start() else { return };
    let app = TestApp::with_config(config()).await;
    let hook = create(
        &app,
        json!({"url": receiver.url("/svc"), "description": "CI", "events": [
            "report.created", "report.status_changed", "report.assigned", "report.labels_changed",
            "comment.published", "room.created"
        ]}),
    )
    .await;
    let secret = hook["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{hook}");
    receiver.verify_with(&[secret]);

    let id = app.file_report(text_report("The export button <b>does nothing</b>")).await;
    // A status change through each surface: REST, the tool endpoint, the dashboard.
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"status": "triaged"}))).await.ok(200);
    let (_, agent) = app.mint(&["feedback:read", "feedback:write"]).await;
    let out = tool(&app, &agent, "set_status", json!({"id": id, "status": "in-progress"})).await;
    assert!(!out.is_error, "{}", out.text);
    let ada = app.user("ada@example.com").await;
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let fields = [("_csrf", csrf_of(&cookie)), ("status", "fixed".to_string())];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(app.post_form(&format!("/reports/{id}/status"), &fields, Some(&cookie)).await.status, 303);
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"assignee": ada.id, "labels": ["export"]})))
        .await
        .ok(200);
    let out = tool(&app, &agent, "add_comment", json!({"reportId": id, "text": "Fixed in 1.4", "draft": false})).await;
    assert!(!out.is_error, "{}", out.text);
    app.rest("POST", &app.p("/rooms"), Some(json!({"artifactId": "build-7"}))).await.ok(201);

    let done = round(&app, now()).await;
    assert_eq!(done.delivered, 8, "{done:?}");
    // Nothing is sent twice.
    assert_eq!(round(&app, now() + 10_000).await, webhooks::Round::default());

    // An endpoint gets a few deliveries at a time: in the order of the events by their id.
    let mut received = receiver.received();
    received.sort_by_key(|r| r["json"]["data"]["eventId"].as_i64());
    assert_eq!(
        types(&received),
        [
            "report.created",
            "report.status_changed",
            "report.status_changed",
            "report.status_changed",
            "report.assigned",
            "report.labels_changed",
            "comment.published",
            "room.created"
        ]
    );
    for delivery in &received {
        assert_eq!(delivery["verified"], json!([true]), "{}", delivery["verify_errors"]);
        assert_eq!(delivery["answered"], 200);
    }
    let ids: std::collections::BTreeSet<&str> =
        received.iter().map(|r| r["headers"]["webhook-id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), received.len(), "each delivery has its own webhook-id");

    // The payloads: the change, who made it, the report in its REST form, links.
    let statuses: Vec<(&Value, &Value, &Value)> = received[1..4]
        .iter()
        .map(|r| (&r["json"]["data"]["from"], &r["json"]["data"]["to"], &r["json"]["data"]["by"]["kind"]))
        .collect();
    assert_eq!(
        statuses,
        [
            (&json!("new"), &json!("triaged"), &json!("agent")),
            (&json!("triaged"), &json!("in-progress"), &json!("agent")),
            (&json!("in-progress"), &json!("fixed"), &json!("user")),
        ]
    );
    let created = &received[0]["json"];
    assert!(created["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(created["data"]["report"]["id"], json!(id));
    assert_eq!(created["data"]["report"]["title"], json!("The export button <b>does nothing</b>"));
    assert_eq!(created["data"]["project"]["id"], json!(app.pid()));
    assert!(created["data"]["dashboardUrl"].as_str().unwrap().ends_with(&format!("/reports/{id}")));
    assert_eq!(received[6]["json"]["data"]["comment"]["text"], json!("Fixed in 1.4"));
    assert_eq!(received[7]["json"]["data"]["artifactId"], json!("build-7"));

    // The delivery log says the same.
    let hook_id = hook["id"].as_str().unwrap();
    let log = app.rest("GET", &app.p(&format!("/webhooks/{hook_id}/deliveries")), None).await;
    let items = log.ok(200)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 8);
    assert!(items.iter().all(|d| d["status"] == "delivered" && d["responseCode"] == 200), "{items:?}");
    assert_eq!(items[0]["event"], "room.created", "newest first");
}

#[tokio::test]
async fn sqlite_a_failed_delivery_is_retried_with_the_same_webhook_id_after_a_500_and_a_timeout() {
    a_failed_delivery_is_retried_with_the_same_webhook_id_after_a_500_and_a_timeout(
        TestApp::with_config(config()).await,
    )
    .await;
}

#[tokio::test]
async fn postgres_a_failed_delivery_is_retried_with_the_same_webhook_id_after_a_500_and_a_timeout() {
    let Some(app) = TestApp::postgres_with(config()).await else { return };
    a_failed_delivery_is_retried_with_the_same_webhook_id_after_a_500_and_a_timeout(app).await;
}

async fn a_failed_delivery_is_retried_with_the_same_webhook_id_after_a_500_and_a_timeout(app: TestApp) {
    let Some(receiver) = Receiver::start() else { return };
    let hook = create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    receiver.verify_with(&[hook["secret"].as_str().unwrap()]);
    let hook_id = hook["id"].as_str().unwrap();
    app.file_report(text_report("Checkout spins for ever")).await;

    let start = now();
    receiver.answer(500);
    assert_eq!(round(&app, start).await.retrying, 1);
    // Not due again before its retry (5 s later).
    assert_eq!(round(&app, start + 1_000).await, webhooks::Round::default());
    receiver.answer_ok();
    receiver.delay(3.0);
    assert_eq!(round(&app, start + 6_000).await.retrying, 1, "no answer within the 1 s timeout");
    receiver.no_delay();
    // The next retry is 5 minutes (and a little jitter) after the second attempt.
    assert_eq!(round(&app, start + 6_000 + 60_000).await, webhooks::Round::default());
    assert_eq!(round(&app, start + 6_000 + 331_000).await.delivered, 1);

    let log = app.rest("GET", &app.p(&format!("/webhooks/{hook_id}/deliveries")), None).await;
    let delivery = log.ok(200)["items"][0].clone();
    assert_eq!(delivery["status"], "delivered");
    let attempts: Vec<(Value, bool)> = delivery["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["responseCode"].clone(), a["error"].is_string()))
        .collect();
    assert_eq!(attempts, [(json!(500), true), (Value::Null, true), (json!(200), false)]);
    assert!(delivery["attempts"][1]["error"].as_str().unwrap().contains("timeout"), "{delivery}");

    // The receiver saw the same delivery three times (the slow answer too, after Svc gave up).
    let mut seen = Vec::new();
    for _ in 0..50 {
        seen = receiver.received();
        if seen.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ids: Vec<&Value> = seen.iter().map(|r| &r["headers"]["webhook-id"]).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    assert!(seen.iter().all(|r| r["verified"] == json!([true])));
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_new_one() {
    let Some(receiver) = Receiver::start() else { return };
    let app = TestApp::with_config(config()).await;
    let hook = create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    let hook_id = hook["id"].as_str().unwrap();
    let old = hook["secret"].as_str().unwrap().to_string();
    let rotated = app.rest("POST", &app.p(&format!("/webhooks/{hook_id}/rotate-secret")), None).await;
    let rotated = rotated.ok(200).clone();
    let new = rotated["secret"].as_str().unwrap();
    assert_ne!(new, old);
    assert!(rotated["previousSecretExpiresAt"].is_string());
    // The list never shows a secret.
    let listed = app.rest("GET", &app.p("/webhooks"), None).await;
    assert!(!listed.text.contains("whsec_"), "{}", listed.text);

    receiver.verify_with(&[&old, new]);
    let test = app.rest("POST", &app.p(&format!("/webhooks/{hook_id}/test")), None).await;
    assert_eq!(test.ok(200)["status"], "delivered");
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["json"]["type"], "webhook.test");
    assert_eq!(received[0]["verified"], json!([true, true]), "both secrets verify");
    let signatures = received[0]["headers"]["webhook-signature"].as_str().unwrap();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
}

#[tokio::test]
async fn private_addresses_are_refused_unless_the_operator_allows_them() {
    let Some(receiver) = Receiver::start() else { return };
    let overrides = [("hooks.example.test".to_string(), vec!["127.0.0.1".parse().unwrap()])];
    let strict = ServerConfig {
        webhook_policy: OutboundPolicy {
            allow_private: false,
            resolve_overrides: std::sync::Arc::new(overrides.into_iter().collect()),
        },
        ..config()
    };
    let app = TestApp::with_config(strict).await;
    for url in [receiver.url("/svc"), "http://10.0.0.7/hook".to_string(), "http://[::1]:8080/".to_string()] {
        let refused =
            app.rest("POST", &app.p("/webhooks"), Some(json!({"url": url, "events": ["report.created"]}))).await;
        let message = refused.error(400, "BAD_REQUEST");
        assert!(message.contains("private or special-purpose address"), "{message}");
    }
    // A name is checked when it is resolved: one resolving to 127.0.0.1 is refused on delivery.
    let url = format!("http://hooks.example.test:{}/svc", receiver.port);
    let hook = create(&app, json!({"url": url, "events": ["report.created"]})).await;
    let test = app.rest("POST", &app.p(&format!("/webhooks/{}/test", hook["id"].as_str().unwrap())), None).await;
    let test = test.ok(200);
    assert_eq!(test["status"], "pending", "retried later: {test}");
    assert!(test["error"].as_str().unwrap().contains("127.0.0.1"), "{test}");
    assert!(receiver.received().is_empty(), "nothing reached the receiver");
}

#[tokio::test]
async fn chat_messages_follow_slack_and_discord_rules_and_keep_reporter_text_inert() {
    let Some(receiver) = Receiver::start() else { return };
    let app = TestApp::with_config(config()).await;
    let slack = create(&app, json!({"url": receiver.url("/slack"), "format": "slack"})).await;
    assert_eq!(slack["events"], json!(["report.created", "report.confirmed", "comment.published"]));
    create(&app, json!({"url": receiver.url("/discord"), "format": "discord"})).await;
    let title = format!("<!channel> Pay button broken {}", "very ".repeat(60));
    let body = json!({
        "blocks": [
            {"type": "text", "text": title},
            {"type": "text", "text": "See <https://evil.example|your bank> & @everyone"},
        ],
        "context": {"url": "https://shop.example/checkout"}
    });
    app.file_report(body).await;
    // A team member's comment is not a chat message on the defaults (only the reporter's).
    let (_, agent) = app.mint(&["feedback:read", "feedback:write"]).await;
    let reports = app.reports().await;
    let id = reports[0]["id"].as_str().unwrap();
    tool(&app, &agent, "add_comment", json!({"reportId": id, "text": "On it", "draft": false})).await;
    assert_eq!(round(&app, now()).await.delivered, 2);

    let received = receiver.received();
    let by_path: BTreeMap<&str, &Value> = received.iter().map(|r| (r["path"].as_str().unwrap(), r)).collect();
    let slack = by_path["/slack"];
    assert_eq!(slack["slack"], "ok", "Slack's Block Kit rules: {}", slack["slack"]);
    assert!(slack["headers"].get("webhook-signature").is_none(), "chat formats are not signed");
    let text = slack["body"].as_str().unwrap();
    assert!(!text.contains("<!channel>") && !text.contains("<https://evil"), "{text}");
    assert!(text.contains("&lt;!channel&gt;"), "{text}");
    let blocks = slack["json"]["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "header");
    let button = &blocks.last().unwrap()["elements"][0];
    assert_eq!(button["text"]["text"], "Open in Svc");
    assert!(button["url"].as_str().unwrap().ends_with(&format!("/reports/{id}")));

    let discord = &by_path["/discord"]["json"];
    assert_eq!(discord["allowed_mentions"], json!({"parse": []}), "nobody is pinged");
    let embed = &discord["embeds"][0];
    assert!(embed["title"].as_str().unwrap().chars().count() <= 256);
    assert!(embed["description"].as_str().unwrap().chars().count() <= 4096);
    let fields = embed["fields"].as_array().unwrap();
    assert!(fields.len() <= 25 && fields.iter().all(|f| f["value"].as_str().unwrap().chars().count() <= 1024));
    assert!(fields.iter().any(|f| f["name"] == "Page" && f["value"] == "https://shop.example/checkout"));
}

#[tokio::test]
async fn sqlite_an_endpoint_that_fails_for_a_day_is_disabled_and_its_owners_are_told() {
    an_endpoint_that_fails_for_a_day_is_disabled_and_its_owners_are_told(TestApp::with_config(config()).await).await;
}

#[tokio::test]
async fn postgres_an_endpoint_that_fails_for_a_day_is_disabled_and_its_owners_are_told() {
    let Some(app) = TestApp::postgres_with(config()).await else { return };
    an_endpoint_that_fails_for_a_day_is_disabled_and_its_owners_are_told(app).await;
}

async fn an_endpoint_that_fails_for_a_day_is_disabled_and_its_owners_are_told(app: TestApp) {
    let Some(receiver) = Receiver::start() else { return };
    app.user("owner@example.com").await;
    let hook = create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    let hook_id = hook["id"].as_str().unwrap();
    receiver.answer(500);
    app.file_report(text_report("Search is empty")).await;
    let start = now();
    // As served: the consumer's lease, the endpoint's failures and the owners' mail are written to
    // the server's database from the server's runtime.
    let first = as_served(&app, move |svc, hooks| async move { webhooks::run_once(&svc, &hooks, start).await }).await;
    assert_eq!(first.retrying, 1, "{first:?}");
    // The retries run out after 24 hours; the last one fails too.
    let day_later = start + 24 * 3600 * 1000 + 1_000;
    let last =
        as_served(&app, move |svc, hooks| async move { webhooks::deliver_due(&svc, &hooks, day_later).await }).await;
    let last = last.unwrap();
    assert_eq!(last.given_up, 1, "{last:?}");

    let got = app.rest("GET", &app.p(&format!("/webhooks/{hook_id}")), None).await;
    let got = got.ok(200);
    assert_eq!(got["enabled"], false);
    assert!(got["disabledReason"].as_str().unwrap().contains("24 hours"), "{got}");
    let orgs = vec![app.project.org_id.clone()];
    let outbox = app.store.list_outbox(&orgs, None, 50).await.unwrap();
    let notices: Vec<_> = outbox.iter().filter(|m| m.kind == svc_core::mail::MailKind::WebhookDisabled).collect();
    assert_eq!(notices.len(), 1, "{outbox:?}");
    assert_eq!(notices[0].recipient, "owner@example.com");
    assert!(!notices[0].body.contains("/svc"), "the endpoint's path (a chat URL's secret) is not mailed");

    // Nothing goes to a disabled endpoint; enabled again, it hears of what happens from then on.
    receiver.answer_ok();
    app.file_report(text_report("While disabled")).await;
    assert_eq!(round(&app, day_later + 1_000).await, webhooks::Round::default());
    let enabled = app.rest("PATCH", &app.p(&format!("/webhooks/{hook_id}")), Some(json!({"enabled": true}))).await;
    assert_eq!(enabled.ok(200)["disabledReason"], Value::Null);
    app.file_report(text_report("After enabling")).await;
    assert_eq!(round(&app, day_later + 2_000).await.delivered, 1);
    let last = receiver.received().pop().unwrap();
    assert_eq!(last["json"]["data"]["report"]["title"], "After enabling");
}

#[tokio::test]
async fn what_happens_while_an_endpoint_is_off_is_never_sent_however_late_the_feed_is_read() {
    let Some(receiver) = Receiver::start() else { return };
    let app = TestApp::with_config(config()).await;
    let hook = create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    let path = app.p(&format!("/webhooks/{}", hook["id"].as_str().unwrap()));
    app.rest("PATCH", &path, Some(json!({"enabled": false}))).await.ok(200);
    app.file_report(text_report("While off")).await;
    // Turned on again before the delivery task read the feed (it runs behind under load, and
    // follows the feed only once a minute while no endpoint is on): the first round reads both.
    app.rest("PATCH", &path, Some(json!({"enabled": true}))).await.ok(200);
    app.file_report(text_report("After turning it on")).await;
    assert_eq!(round(&app, now()).await.delivered, 1);
    let titles: Vec<Value> = receiver.received().iter().map(|r| r["json"]["data"]["report"]["title"].clone()).collect();
    assert_eq!(titles, vec![json!("After turning it on")]);
}

/// While a burst of reports is being filed, a round of the delivery task takes one batch of the
/// feed (50 events) and waits for the burst to pass before the rest; nothing is lost or sent twice.
#[tokio::test]
async fn a_burst_of_reports_delays_deliveries_and_loses_none() {
    let Some(receiver) = Receiver::start() else { return };
    let app = TestApp::with_config(config()).await;
    create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    for n in 0..60 {
        app.file_report(text_report(&format!("Report {n}"))).await;
    }
    // Reports being filed right now, as many as make a burst.
    let load = app.state.service.load();
    let burst: Vec<_> = (0..svc_service::load::BURST).map(|_| load.filing()).collect();
    let during = round(&app, now()).await.delivered;
    assert!(during > 0 && during <= 50, "one batch of the feed during the burst, not all 60: {during}");
    drop(burst);
    assert_eq!(round(&app, now()).await.delivered, 60 - during, "the rest once it has passed");
    let mut titles: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r["json"]["data"]["report"]["title"].as_str().unwrap().to_string())
        .collect();
    titles.sort_by_key(|title| title[7..].parse::<u32>().unwrap());
    assert_eq!(titles, (0..60).map(|n| format!("Report {n}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn bad_input_is_named() {
    let app = TestApp::with_config(config()).await;
    for (body, words) in [
        (json!({"url": "ftp://example.com/", "events": ["report.created"]}), "https://"),
        (json!({"url": "https://example.com/"}), "events must name"),
        (json!({"url": "https://example.com/", "events": ["report.exploded"]}), "unknown event type"),
        (json!({"url": "https://example.com/", "events": ["report.created"], "format": "teams"}), "format"),
        (json!({"url": "https://example.com/", "events": ["report.created"], "extra": 1}), "extra"),
    ] {
        let message = app.rest("POST", &app.p("/webhooks"), Some(body.clone())).await.error(400, "BAD_REQUEST");
        assert!(message.contains(words), "{body}: {message}");
    }
    let missing = app.rest("GET", &app.p("/webhooks/0123456789abcdef01234567"), None).await;
    missing.error(404, "NOT_FOUND");
    let hook = create(&app, json!({"url": "https://hooks.example.com/svc", "events": ["report.created"]})).await;
    let log = app.p(&format!("/webhooks/{}/deliveries?before=latest", hook["id"].as_str().unwrap()));
    let message = app.rest("GET", &log, None).await.error(400, "BAD_REQUEST");
    assert!(message.contains("before must be a delivery id"), "{message}");
    // A key without project:write may not read endpoints (a chat URL is a secret).
    let (_, reader) = app.mint(&["feedback:read"]).await;
    app.call("GET", &app.p("/webhooks"), &reader, None).await.error(403, "FORBIDDEN");
}

#[tokio::test]
async fn two_instances_on_one_postgresql_deliver_each_event_exactly_once() {
    let Some(receiver) = Receiver::start() else { return };
    let Some((first, second)) = TestApp::postgres_pair_with(config()).await else { return };
    let hook = create(&first, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
    receiver.verify_with(&[hook["secret"].as_str().unwrap()]);
    let mut filed = Vec::new();
    for n in 0..40 {
        let app = if n % 2 == 0 { &first } else { &second };
        filed.push(app.file_report(text_report(&format!("Report {n}"))).await);
    }
    // Both instances run their rounds at the same time, several times over.
    for _ in 0..3 {
        let t = now();
        tokio::join!(round(&first, t), round(&second, t));
    }
    let received = receiver.received();
    let mut ids: Vec<&str> = received.iter().map(|r| r["json"]["data"]["report"]["id"].as_str().unwrap()).collect();
    ids.sort();
    let mut expected: Vec<&str> = filed.iter().map(String::as_str).collect();
    expected.sort();
    assert_eq!(ids, expected, "each report's event once, none twice");
    assert!(received.iter().all(|r| r["verified"] == json!([true])));
}

#[tokio::test]
async fn sqlite_a_failing_endpoint_is_paused_and_never_holds_up_another() {
    a_failing_endpoint_is_paused_and_never_holds_up_another(TestApp::with_config(config()).await).await;
}

#[tokio::test]
async fn postgres_a_failing_endpoint_is_paused_and_never_holds_up_another() {
    let Some(app) = TestApp::postgres_with(config()).await else { return };
    a_failing_endpoint_is_paused_and_never_holds_up_another(app).await;
}

async fn a_failing_endpoint_is_paused_and_never_holds_up_another(app: TestApp) {
    let (Some(healthy), Some(failing)) = (Receiver::start(), Receiver::start()) else { return };
    create(&app, json!({"url": healthy.url("/ok"), "events": ["report.created"]})).await;
    create(&app, json!({"url": failing.url("/down"), "events": ["report.created"]})).await;
    failing.answer(500);
    for n in 0..12 {
        app.file_report(text_report(&format!("Report {n}"))).await;
    }
    let start = now();
    // The failing endpoint gets one handful of attempts (8 at a time), then it is paused: the
    // rest wait with it.
    let first = round(&app, start).await;
    assert_eq!((first.delivered, first.retrying, first.held_back), (12, 8, 4), "{first:?}");
    assert_eq!(healthy.received().len(), 12);
    assert_eq!(failing.received().len(), 8);

    // While it is paused, new reports still reach the healthy endpoint at once.
    app.file_report(text_report("Report 12")).await;
    let second = round(&app, start + 1_000).await;
    assert_eq!((second.delivered, second.retrying), (1, 0), "{second:?}");
    assert_eq!(failing.received().len(), 8);

    // At the retry, the endpoint gets everything that waited.
    failing.answer_ok();
    let third = round(&app, start + 6_000).await;
    assert_eq!(third.delivered, 13, "{third:?}");
    let mut titles: Vec<String> = failing
        .received()
        .iter()
        .filter(|r| r["answered"] == 200)
        .map(|r| r["json"]["data"]["report"]["title"].as_str().unwrap().to_string())
        .collect();
    titles.sort_by_key(|title| title.trim_start_matches("Report ").parse::<u32>().unwrap());
    assert_eq!(titles, (0..13).map(|n| format!("Report {n}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn deleting_a_project_deletes_its_endpoints_and_their_deliveries() {
    let Some(receiver) = Receiver::start() else { return };
    for app in
        [Some(TestApp::with_config(config()).await), TestApp::postgres_with(config()).await].into_iter().flatten()
    {
        let hook = create(&app, json!({"url": receiver.url("/svc"), "events": ["report.created"]})).await;
        receiver.answer(500);
        app.file_report(text_report("Soon gone")).await;
        assert_eq!(round(&app, now()).await.retrying, 1);
        let hook_id = hook["id"].as_str().unwrap();
        assert_eq!(app.store.list_deliveries(hook_id, None, 10).await.unwrap().len(), 1);
        app.store.delete_project(app.pid()).await.unwrap();
        assert!(app.store.list_webhooks(app.pid()).await.unwrap().is_empty());
        assert!(app.store.list_deliveries(hook_id, None, 10).await.unwrap().is_empty());
        receiver.answer_ok();
    }
}

#[tokio::test]
async fn a_new_url_starts_without_the_old_receivers_failures() {
    let (Some(old), Some(new)) = (Receiver::start(), Receiver::start()) else { return };
    let app = TestApp::with_config(config()).await;
    let hook = create(&app, json!({"url": old.url("/down"), "events": ["report.created"]})).await;
    let path = app.p(&format!("/webhooks/{}", hook["id"].as_str().unwrap()));
    old.answer(500);
    app.file_report(text_report("First")).await;
    let start = now();
    assert_eq!(round(&app, start).await.retrying, 1);
    assert!(app.rest("GET", &path, None).await.ok(200)["failingSince"].is_string());

    // Moved to a receiver that answers: no longer failing, and not paused until the old retry.
    let moved = app.rest("PATCH", &path, Some(json!({"url": new.url("/up")}))).await;
    assert_eq!(moved.ok(200)["failingSince"], Value::Null);
    app.file_report(text_report("Second")).await;
    assert_eq!(round(&app, start + 1_000).await.delivered, 1);
    assert_eq!(new.received().len(), 1);
}
