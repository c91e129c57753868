//! GitHub issues, end to end, against a server built from GitHub's published REST API description
//! (`tests/github/server.mjs`, `@octokit/openapi`): every request Svc sends is checked against the
//! description and answered with its examples. Deliveries back are `@octokit/webhooks-examples`
//! payloads signed with `@octokit/webhooks-methods`. The tracker consumer's round
//! (`trackers::sync_events`) is called directly.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use serde_json::{Value, json};
use svc_server::config::ServerConfig;
use svc_service::outbound::OutboundPolicy;
use svc_service::trackers;

use crate::common::ingest::text_report;
use crate::common::{Resp, TestApp, no_rate_limits};
use crate::mcp_support::tool;

#[path = "../github/server.rs"]
mod github_server;
use github_server::{GithubServer, SignedWebhook};

const TOKEN: &str = "github_pat_11AAAAAAA0test0token";
const REPOSITORY: &str = "octo-org/shop";
/// The issue number in the description's example answer to "create an issue".
const EXAMPLE_ISSUE: i64 = 1347;

/// Private addresses allowed (the server is on loopback).
fn config() -> ServerConfig {
    ServerConfig {
        webhook_policy: OutboundPolicy { allow_private: true, ..Default::default() },
        webhook_timeout: Duration::from_secs(5),
        ..no_rate_limits()
    }
}

async fn connect(app: &TestApp, github: &GithubServer, extra: Value) -> Value {
    let mut body = json!({"repository": REPOSITORY, "apiUrl": github.url(), "token": TOKEN});
    for (name, value) in extra.as_object().unwrap() {
        body[name] = value.clone();
    }
    let resp = app.rest("PUT", &app.p("/integrations/github"), Some(body)).await;
    assert!(matches!(resp.status.as_u16(), 200 | 201), "{}", resp.text);
    resp.body.clone()
}

async fn push(app: &TestApp, report_id: &str) -> Resp {
    app.rest("POST", &app.p(&format!("/feedback/{report_id}/github-issue")), None).await
}

async fn deliver(app: &TestApp, hook: &SignedWebhook, signature: Option<&str>) -> Resp {
    let mut request = Request::builder()
        .method("POST")
        .uri("/api/v1/integrations/github/webhook")
        .header("content-type", "application/json")
        .header("x-github-event", &hook.event)
        .header("x-github-delivery", &hook.delivery_id);
    if let Some(signature) = signature.or(Some(hook.signature.as_str())).filter(|s| !s.is_empty()) {
        request = request.header("x-hub-signature-256", signature);
    }
    app.send(request.body(Body::from(hook.body.clone())).unwrap()).await
}

/// An `issues` delivery about `number` of the connected repository.
fn issue_event(github: &GithubServer, secret: &str, action: &str, number: i64, extra: Value) -> SignedWebhook {
    let mut patch = json!({
        "repository": {"full_name": REPOSITORY, "name": "shop", "owner": {"login": "octo-org"}},
        "issue": {"number": number, "state": if action == "closed" { "closed" } else { "open" }},
        "sender": {"login": "hubot"},
    });
    merge(&mut patch, extra);
    github.webhook("issues", Some(action), secret, patch)
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (into, from) => *into = from,
    }
}

async fn status_of(app: &TestApp, id: &str) -> String {
    app.rest("GET", &app.p(&format!("/feedback/{id}")), None).await.ok(200)["status"].as_str().unwrap().to_string()
}

fn requests_to(github: &GithubServer, operation: &str) -> Vec<Value> {
    github.requests().into_iter().filter(|r| r["operationId"] == operation).collect()
}

async fn sync(app: &TestApp) -> usize {
    trackers::sync_events(&app.state.service, &app.state.trackers, svc_core::time::now_ms()).await.expect("sync")
}

#[tokio::test]
async fn a_connected_repository_is_checked_and_its_secrets_are_never_shown_again() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let made = connect(&app, &github, json!({})).await;
    let secret = made["webhookSecret"].as_str().expect("a webhook secret made and shown once");
    assert!(secret.len() >= 32, "{made}");
    assert_eq!(made["webhookUrl"], "http://127.0.0.1:8080/api/v1/integrations/github/webhook");
    let shown = app.rest("GET", &app.p("/integrations/github"), None).await.ok(200).clone();
    assert_eq!(shown["repository"], REPOSITORY);
    assert_eq!(shown["auth"], "token");
    let text = shown.to_string();
    assert!(!text.contains(TOKEN) && !text.contains(secret), "no secret in {text}");

    let check = app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200).clone();
    assert_eq!(check["ok"], true, "{check}");
    assert!(check["notes"].to_string().contains("octocat/Hello-World"), "{check}");
    let read = requests_to(&github, "repos/get");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0]["headers"]["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(read[0]["headers"]["x-github-api-version"], "2022-11-28");
    assert_eq!(read[0]["apiPath"], format!("/repos/{REPOSITORY}"));
    github.assert_no_violations();

    // A change without the token keeps it; the audit log has both acts.
    connect(&app, &github, json!({"token": null, "sendComments": false})).await;
    app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200);
    assert_eq!(requests_to(&github, "repos/get")[1]["headers"]["authorization"], format!("Bearer {TOKEN}"));
}

#[tokio::test]
async fn check_connection_says_what_is_missing_in_words_a_person_can_act_on() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    connect(&app, &github, json!({})).await;
    for (status, expected) in [(404, "check the name"), (401, "wrong, expired or revoked")] {
        github.respond("repos/get", status, None, 1);
        let check = app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200).clone();
        assert_eq!(check["ok"], false, "{check}");
        assert!(check["problems"][0].as_str().unwrap().contains(expected), "{status}: {check}");
    }
    github.respond("issues/list-for-repo", 403, None, 1);
    let check = app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200).clone();
    assert!(check["problems"][0].as_str().unwrap().contains("Issues: read and write"), "{check}");
    // Bad input is refused before anything is sent.
    let bad = app.rest("PUT", &app.p("/integrations/github"), Some(json!({"repository": "no-slash"}))).await;
    assert!(bad.error(400, "BAD_REQUEST").contains("owner/name"));
    let bad = app
        .rest("PUT", &app.p("/integrations/github"), Some(json!({"repository": "a/b", "auth": "app", "appId": "1"})))
        .await;
    bad.error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn a_report_becomes_one_issue_with_a_body_written_for_people() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let id = app
        .file_report(json!({
            "blocks": [{"type": "text", "text": "Pay button does nothing @octocat #12"}],
            "context": {"url": "https://shop.example/checkout", "consoleErrors": ["TypeError: total is undefined"],
                        "network": [{"method": "POST", "url": "https://shop.example/api/pay", "status": 502,
                                     "durationMs": 120, "time": "2026-11-28T10:00:00Z"}]}
        }))
        .await;
    // Not connected yet: a clear refusal.
    push(&app, &id).await.error(409, "CONFLICT");
    connect(&app, &github, json!({})).await;
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"labels": ["checkout"]}))).await.ok(200);

    let pushed = push(&app, &id).await.ok(201).clone();
    assert_eq!(pushed["created"], true);
    assert_eq!(pushed["link"]["reference"], format!("{REPOSITORY}#{EXAMPLE_ISSUE}"));
    assert_eq!(pushed["link"]["url"], "https://github.com/octocat/Hello-World/issues/1347");
    let made = requests_to(&github, "issues/create");
    assert_eq!(made.len(), 1);
    let body = &made[0]["body"];
    assert_eq!(body["title"], "Pay button does nothing @octocat #12");
    assert_eq!(body["labels"], json!(["checkout"]));
    let text = body["body"].as_str().unwrap();
    let words = text.find("Pay button").unwrap();
    assert!(words < text.find("shop.example/checkout").unwrap(), "the reporter's words first: {text}");
    assert!(text.contains("TypeError: total is undefined") && text.contains("/api/pay"), "{text}");
    assert!(text.contains(&format!("http://127.0.0.1:8080/reports/{id}")), "a link to the report: {text}");

    // Pushing again links the issue it has.
    let again = push(&app, &id).await.ok(200).clone();
    assert_eq!(again["created"], false);
    assert_eq!(requests_to(&github, "issues/create").len(), 1);
    // Every surface that reads the report shows the link.
    let report = app.rest("GET", &app.p(&format!("/feedback/{id}")), None).await.ok(200).clone();
    assert_eq!(report["links"][0]["reference"], format!("{REPOSITORY}#{EXAMPLE_ISSUE}"));
    let (_, agent) = app.mint(&["feedback:read"]).await;
    let document = tool(&app, &agent, "get_report", json!({"id": id})).await;
    assert!(document.text.contains(&format!("{REPOSITORY}#{EXAMPLE_ISSUE}")), "{}", document.text);
    github.assert_no_violations();
}

#[tokio::test]
async fn rate_limit_answers_are_waited_out_and_retried() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    connect(&app, &github, json!({})).await;
    let first = app.file_report(text_report("Secondary limit")).await;
    github.rate_limit(1, 429, Some(1));
    push(&app, &first).await.ok(201);
    let second = app.file_report(text_report("Primary limit")).await;
    github.rate_limit(1, 403, Some(1));
    push(&app, &second).await.ok(201);
    let statuses: Vec<u64> =
        requests_to(&github, "issues/create").iter().map(|r| r["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, vec![429, 201, 403, 201]);
    // A permission refusal is not a rate limit: said at once, in words.
    let third = app.file_report(text_report("No permission")).await;
    github.respond("issues/create", 403, None, 1);
    let refused = push(&app, &third).await;
    assert!(refused.error(502, "UPSTREAM").contains("Issues: read and write"), "{}", refused.text);
}

#[tokio::test]
async fn svc_changes_reach_the_issue_and_nothing_comes_back_round() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let made = connect(&app, &github, json!({})).await;
    let secret = made["webhookSecret"].as_str().unwrap().to_string();
    let id = app.file_report(text_report("Search is slow")).await;
    push(&app, &id).await.ok(201);
    sync(&app).await;

    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"status": "in-progress"}))).await.ok(200);
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"status": "fixed"}))).await.ok(200);
    let (_, agent) = app.mint(&["feedback:read", "feedback:write"]).await;
    let out = tool(&app, &agent, "add_comment", json!({"reportId": id, "text": "Fixed in 1.4", "draft": false})).await;
    assert!(!out.is_error, "{}", out.text);
    sync(&app).await;
    // new → in-progress keeps the issue open (nothing sent); fixed closes it as completed.
    let updates = requests_to(&github, "issues/update");
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["body"], json!({"state": "closed", "state_reason": "completed"}));
    assert_eq!(updates[0]["apiPath"], format!("/repos/{REPOSITORY}/issues/{EXAMPLE_ISSUE}"));
    let comments = requests_to(&github, "issues/create-comment");
    assert_eq!(comments.len(), 1);
    let posted = comments[0]["body"]["body"].as_str().unwrap().to_string();
    assert!(posted.contains("Fixed in 1.4") && posted.contains("<!-- svc:comment"), "{posted}");

    // GitHub tells Svc of the close Svc asked for, and of the comment Svc wrote: nothing moves.
    let closed =
        issue_event(&github, &secret, "closed", EXAMPLE_ISSUE, json!({"issue": {"state_reason": "completed"}}));
    assert_eq!(deliver(&app, &closed, None).await.ok(200)["outcome"], "ignored");
    let echo = github.webhook(
        "issue_comment",
        Some("created"),
        &secret,
        json!({"repository": {"full_name": REPOSITORY}, "issue": {"number": EXAMPLE_ISSUE}, "comment": {"body": posted}}),
    );
    assert_eq!(deliver(&app, &echo, None).await.ok(200)["outcome"], "ignored");
    let thread = app.rest("GET", &app.p(&format!("/feedback/{id}/comments")), None).await.ok(200).clone();
    assert_eq!(thread["items"].as_array().unwrap().len(), 1, "{thread}");

    // A change that came from GitHub is not sent back.
    let reopened = issue_event(&github, &secret, "reopened", EXAMPLE_ISSUE, json!({}));
    assert_eq!(deliver(&app, &reopened, None).await.ok(200)["outcome"], "applied");
    assert_eq!(status_of(&app, &id).await, "triaged");
    sync(&app).await;
    assert_eq!(requests_to(&github, "issues/update").len(), 1);
    github.assert_no_violations();
}

#[tokio::test]
async fn github_closing_reopening_and_commenting_move_the_report_as_configured() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let made = connect(&app, &github, json!({})).await;
    let secret = made["webhookSecret"].as_str().unwrap().to_string();
    let id = app.file_report(text_report("Broken link in footer")).await;
    push(&app, &id).await.ok(201);

    let closed =
        issue_event(&github, &secret, "closed", EXAMPLE_ISSUE, json!({"issue": {"state_reason": "completed"}}));
    let answer = deliver(&app, &closed, None).await.ok(200).clone();
    assert_eq!(answer, json!({"outcome": "applied", "reports": 1}));
    assert_eq!(status_of(&app, &id).await, "fixed");
    let report = app.rest("GET", &app.p(&format!("/feedback/{id}")), None).await.ok(200).clone();
    let last = report["statusHistory"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["by"]["label"], "hubot on GitHub", "{last}");

    let reopened = issue_event(&github, &secret, "reopened", EXAMPLE_ISSUE, json!({}));
    deliver(&app, &reopened, None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "triaged");
    let not_planned =
        issue_event(&github, &secret, "closed", EXAMPLE_ISSUE, json!({"issue": {"state_reason": "not_planned"}}));
    deliver(&app, &not_planned, None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "canceled");

    let comment = github.webhook(
        "issue_comment",
        Some("created"),
        &secret,
        json!({"repository": {"full_name": REPOSITORY}, "issue": {"number": EXAMPLE_ISSUE},
               "comment": {"body": "Can you try **again**? @someone"}, "sender": {"login": "mona"}}),
    );
    deliver(&app, &comment, None).await.ok(200);
    let thread = app.rest("GET", &app.p(&format!("/feedback/{id}/comments")), None).await.ok(200).clone();
    let mirrored = &thread["items"][0];
    assert_eq!(mirrored["text"], "Can you try **again**? @someone");
    assert_eq!(mirrored["authorKind"], "user", "a person's comment, never the reporter's: {mirrored}");
    assert_eq!(mirrored["author"], "github:mona");
    assert_eq!(mirrored["authorLabel"], "mona on GitHub");
    assert_eq!(mirrored["kind"], "github");

    // The mapping is editable, and comments can stay on GitHub.
    connect(
        &app,
        &github,
        json!({"onReopened": "in-progress", "onClosedCompleted": "verified", "mirrorComments": false}),
    )
    .await;
    deliver(&app, &issue_event(&github, &secret, "reopened", EXAMPLE_ISSUE, json!({})), None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "in-progress");
    let done = issue_event(&github, &secret, "closed", EXAMPLE_ISSUE, json!({"issue": {"state_reason": "completed"}}));
    deliver(&app, &done, None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "verified");
    let quiet = github.webhook(
        "issue_comment",
        Some("created"),
        &secret,
        json!({"repository": {"full_name": REPOSITORY}, "issue": {"number": EXAMPLE_ISSUE}, "comment": {"body": "x"}}),
    );
    let answer = deliver(&app, &quiet, None).await.ok(200).clone();
    assert!(answer["reason"].as_str().unwrap().contains("mirrorComments is off"), "{answer}");
    let thread = app.rest("GET", &app.p(&format!("/feedback/{id}/comments")), None).await.ok(200).clone();
    assert_eq!(thread["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn forged_replayed_and_foreign_deliveries_change_nothing() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let made = connect(&app, &github, json!({})).await;
    let secret = made["webhookSecret"].as_str().unwrap().to_string();
    let id = app.file_report(text_report("Dark mode flickers")).await;
    push(&app, &id).await.ok(201);
    let closed =
        issue_event(&github, &secret, "closed", EXAMPLE_ISSUE, json!({"issue": {"state_reason": "completed"}}));

    // Signed with another secret, or not at all.
    let forged = issue_event(&github, "another-secret-entirely", "closed", EXAMPLE_ISSUE, json!({}));
    deliver(&app, &forged, None).await.error(401, "UNAUTHORIZED");
    let mut unsigned = closed.clone();
    unsigned.signature.clear();
    deliver(&app, &unsigned, None).await.error(401, "UNAUTHORIZED");
    // The right signature over another body.
    let mut tampered = closed.clone();
    tampered.body = tampered.body.replace("completed", "not_planned");
    deliver(&app, &tampered, None).await.error(401, "UNAUTHORIZED");
    assert_eq!(status_of(&app, &id).await, "new");

    // A delivery naming no repository (a GitHub App's ping): acknowledged when signed.
    let ping = github.webhook("ping", None, &secret, json!({"repository": null}));
    assert_eq!(deliver(&app, &ping, None).await.ok(200)["outcome"], "ignored");
    let forged_ping = github.webhook("ping", None, "another-secret-entirely", json!({"repository": null}));
    deliver(&app, &forged_ping, None).await.error(401, "UNAUTHORIZED");

    // A repository no project connected.
    let foreign = github.webhook("issues", Some("closed"), &secret, json!({"issue": {"number": EXAMPLE_ISSUE}}));
    deliver(&app, &foreign, None).await.error(404, "NOT_FOUND");

    deliver(&app, &closed, None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "fixed");
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"status": "in-progress"}))).await.ok(200);
    // The same delivery again: nothing changes.
    assert_eq!(deliver(&app, &closed, None).await.ok(200)["outcome"], "replayed");
    assert_eq!(status_of(&app, &id).await, "in-progress");

    // An app connection refuses another installation's deliveries.
    let key = include_str!("../github/test-app-key.pem");
    connect(&app, &github, json!({"auth": "app", "appId": "12345", "installationId": 42, "privateKey": key})).await;
    let other = issue_event(
        &github,
        &secret,
        "closed",
        EXAMPLE_ISSUE,
        json!({"installation": {"id": 999}, "issue": {"state_reason": "completed"}}),
    );
    deliver(&app, &other, None).await.error(403, "FORBIDDEN");
    assert_eq!(status_of(&app, &id).await, "in-progress");
    let ours = issue_event(
        &github,
        &secret,
        "closed",
        EXAMPLE_ISSUE,
        json!({"installation": {"id": 42}, "issue": {"state_reason": "completed"}}),
    );
    deliver(&app, &ours, None).await.ok(200);
    assert_eq!(status_of(&app, &id).await, "fixed");
}

#[tokio::test]
async fn a_github_app_signs_its_token_and_keeps_the_installation_token_until_it_expires() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let key = include_str!("../github/test-app-key.pem");
    connect(&app, &github, json!({"auth": "app", "appId": "12345", "installationId": 42, "privateKey": key, "apiUrl": github.enterprise_url()}))
        .await;
    let expires = svc_core::time::iso(svc_core::time::now_ms() + 3600 * 1000);
    github.respond_patched(
        "apps/create-installation-access-token",
        201,
        json!({"token": "ghs_installation_one", "expires_at": expires}),
        1,
    );
    let check = app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200).clone();
    assert_eq!(check["ok"], true, "{check}");
    assert!(check["notes"].to_string().contains("may read and write issues"), "{check}");
    let id = app.file_report(text_report("From an app")).await;
    push(&app, &id).await.ok(201);

    let trades = requests_to(&github, "apps/create-installation-access-token");
    assert_eq!(trades.len(), 1, "one installation token, kept until it expires");
    assert_eq!(trades[0]["path"], "/api/v3/app/installations/42/access_tokens", "GitHub Enterprise Server's base");
    let jwt = trades[0]["headers"]["authorization"].as_str().unwrap().strip_prefix("Bearer ").unwrap().to_string();
    let public = jsonwebtoken::DecodingKey::from_rsa_pem(include_bytes!("../github/test-app-key.pub.pem")).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_issuer(&["12345"]);
    validation.set_required_spec_claims(&["exp", "iat", "iss"]);
    let claims = jsonwebtoken::decode::<Value>(&jwt, &public, &validation).expect("an RS256 JWT of the app").claims;
    assert!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap() <= 600, "{claims}");
    for request in requests_to(&github, "repos/get").iter().chain(&requests_to(&github, "issues/create")) {
        assert_eq!(request["headers"]["authorization"], "Bearer ghs_installation_one");
    }
    let second = app.file_report(text_report("Second")).await;
    push(&app, &second).await.ok(201);
    assert_eq!(requests_to(&github, "apps/create-installation-access-token").len(), 1);
    // Another installation, whose token (the description's own example) expired in 2016: a new
    // one is traded for on each use.
    connect(&app, &github, json!({"installationId": 43})).await;
    for text in ["Third", "Fourth"] {
        let id = app.file_report(text_report(text)).await;
        push(&app, &id).await.ok(201);
    }
    let trades = requests_to(&github, "apps/create-installation-access-token");
    assert_eq!(trades.len(), 3);
    assert_eq!(trades[2]["apiPath"], "/app/installations/43/access_tokens");
    // A wrong installation id is named as such.
    github.respond("apps/create-installation-access-token", 404, None, 1);
    connect(&app, &github, json!({"installationId": 7})).await;
    let check = app.rest("POST", &app.p("/integrations/github/check"), None).await.ok(200).clone();
    assert!(check["problems"][0].as_str().unwrap().contains("installation 7"), "{check}");
    github.assert_no_violations();
}

#[tokio::test]
async fn channel_rules_make_an_issue_for_every_new_report_in_the_channel() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    let bad = app
        .rest(
            "PUT",
            &app.p("/integrations/github"),
            Some(json!({"repository": REPOSITORY, "token": TOKEN, "apiUrl": github.url(),
            "rules": [{"channelKey": "nope"}]})),
        )
        .await;
    assert!(bad.error(400, "BAD_REQUEST").contains("no channel nope"));
    let before = app.file_report(json!({"channelKey": "bug", "blocks": [{"type": "text", "text": "Before"}]})).await;
    connect(&app, &github, json!({"rules": [{"channelKey": "bug", "labels": ["from-svc", "bug"]}]})).await;
    let bug =
        app.file_report(json!({"channelKey": "bug", "blocks": [{"type": "text", "text": "Crash on save"}]})).await;
    app.file_report(json!({"channelKey": "idea", "blocks": [{"type": "text", "text": "Dark mode"}]})).await;
    sync(&app).await;
    let made = requests_to(&github, "issues/create");
    assert_eq!(made.len(), 1, "only the new bug report: {made:?}");
    assert_eq!(made[0]["body"]["title"], "Crash on save");
    assert_eq!(made[0]["body"]["labels"], json!(["from-svc", "bug"]));
    let report = app.rest("GET", &app.p(&format!("/feedback/{bug}")), None).await.ok(200).clone();
    assert_eq!(report["links"][0]["number"], EXAMPLE_ISSUE);
    let earlier = app.rest("GET", &app.p(&format!("/feedback/{before}")), None).await.ok(200).clone();
    assert_eq!(earlier["links"], json!([]));
    // A failure is kept on the connection for its owners to read.
    github.respond("issues/create", 410, None, 1);
    app.file_report(json!({"channelKey": "bug", "blocks": [{"type": "text", "text": "Another"}]})).await;
    sync(&app).await;
    let shown = app.rest("GET", &app.p("/integrations/github"), None).await.ok(200).clone();
    assert!(shown["lastError"].as_str().unwrap_or_default().contains("Issues are turned off"), "{shown}");
}

mod dashboard {
    //! The Integrations tab and "Create GitHub issue", driven as a browser would (session cookie,
    //! forms with the CSRF token).

    use super::*;
    use crate::dashboard_channels::{Tab, audit, redirected};

    #[tokio::test]
    async fn an_owner_connects_on_the_integrations_tab_and_pushes_a_report_from_its_view() {
        let Some(github) = GithubServer::start() else { return };
        let app = TestApp::with_config(config()).await;
        let owner = Tab::owner(&app).await;
        let page = owner.get(&app, "/integrations").await;
        assert_eq!(page.status.as_u16(), 200);
        assert!(page.text.contains("Connect a repository"), "{}", page.text);

        // A wrong repository name comes back with what to fix, the form kept (never the token).
        let api = github.url();
        let refused = owner
            .post(
                &app,
                "/integrations",
                &[("repository", "not a repo"), ("auth", "token"), ("token", TOKEN), ("api_url", &api)],
            )
            .await;
        assert_eq!(refused.status.as_u16(), 400);
        assert!(refused.text.contains("owner/name") && !refused.text.contains(TOKEN), "{}", refused.text);

        let made = owner
            .post(
                &app,
                "/integrations",
                &[
                    ("repository", REPOSITORY),
                    ("auth", "token"),
                    ("token", TOKEN),
                    ("api_url", &api),
                    ("on_closed_completed", "fixed"),
                    ("on_closed_not_planned", "canceled"),
                    ("on_reopened", "triaged"),
                    ("send_status", "on"),
                    ("mirror_comments", "on"),
                    ("rule", "bug"),
                    ("labels_bug", "from-svc, triage"),
                ],
            )
            .await;
        assert_eq!(made.status.as_u16(), 200, "{}", made.text);
        assert!(
            made.text.contains("Repository connected") && made.text.contains("/api/v1/integrations/github/webhook")
        );
        let connection = app.rest("GET", &app.p("/integrations/github"), None).await.ok(200).clone();
        assert_eq!(connection["rules"], json!([{"channelKey": "bug", "labels": ["from-svc", "triage"]}]));
        assert_eq!(connection["sendComments"], false);
        assert!(!made.text.contains(TOKEN));

        let checked = owner.post(&app, "/integrations/check", &[]).await;
        assert!(checked.text.contains("The connection works."), "{}", checked.text);
        let page = owner.get(&app, "/integrations").await;
        assert!(page.text.contains("Connected to") && page.text.contains("Saved: leave empty to keep it"));

        // The report view offers the push, then shows the link; the inbox row marks it.
        let id = app.file_report(text_report("Totals are wrong")).await;
        let view = app.get_page(&format!("/?r={id}"), Some(&owner.cookie)).await;
        assert!(view.text.contains(">Create GitHub issue</button>"), "{}", view.text);
        let pushed = app
            .post_form(
                &format!("/reports/{id}/github-issue"),
                &[("_csrf", &owner.csrf), ("back", "/")],
                Some(&owner.cookie),
            )
            .await;
        redirected(&pushed);
        let view = app.get_page(&format!("/?r={id}"), Some(&owner.cookie)).await;
        let reference = format!("{REPOSITORY}#{EXAMPLE_ISSUE}");
        assert!(
            view.text.contains(&reference) && !view.text.contains(">Create GitHub issue</button>"),
            "{}",
            view.text
        );
        assert!(view.text.contains("https://github.com/octocat/Hello-World/issues/1347"));

        // A selection: one issue each.
        let others = [app.file_report(text_report("One")).await, app.file_report(text_report("Two")).await];
        let fields =
            [("_csrf", owner.csrf.as_str()), ("ids", &others[0]), ("ids", &others[1]), ("github", "on"), ("back", "/")];
        redirected(&app.post_form("/reports/bulk", &fields, Some(&owner.cookie)).await);
        assert_eq!(requests_to(&github, "issues/create").len(), 3);
        let acts: Vec<String> = audit(&app).await.into_iter().map(|(action, _, _)| action).collect();
        assert!(
            acts.contains(&"tracker.connected".to_string()) && acts.contains(&"issue.created".to_string()),
            "{acts:?}"
        );

        // GitHub refusing says so, in words.
        github.respond("issues/create", 403, None, 1);
        let third = app.file_report(text_report("Three")).await;
        let refused = app
            .post_form(
                &format!("/reports/{third}/github-issue"),
                &[("_csrf", &owner.csrf), ("back", "/")],
                Some(&owner.cookie),
            )
            .await;
        assert_eq!(refused.status.as_u16(), 400);
        assert!(refused.text.contains("Issues: read and write"), "{}", refused.text);

        let gone = owner.post(&app, "/integrations/disconnect", &[]).await;
        assert!(redirected(&gone).contains("done=disconnected"));
        app.rest("GET", &app.p("/integrations/github"), None).await.error(404, "NOT_FOUND");
    }

    #[tokio::test]
    async fn members_cannot_see_or_change_the_connection() {
        let app = TestApp::with_config(config()).await;
        let member = Tab::member(&app).await;
        let page = member.get(&app, "/integrations").await;
        assert_eq!(page.status.as_u16(), 403);
        assert!(page.text.contains("Only an owner"), "{}", page.text);
        let refused = member.post(&app, "/integrations", &[("repository", REPOSITORY), ("token", TOKEN)]).await;
        assert_eq!(refused.status.as_u16(), 403);
    }
}

/// While a burst of reports is being filed, a round of the tracker consumer reads one batch of the
/// feed (50 events) and leaves the rest until the burst has passed; nothing is skipped.
#[tokio::test]
async fn a_burst_of_reports_holds_the_tracker_consumer_back_and_skips_nothing() {
    let Some(github) = GithubServer::start() else { return };
    let app = TestApp::with_config(config()).await;
    connect(&app, &github, json!({})).await;
    // Its first round takes the consumer at the feed's end.
    sync(&app).await;
    let position = async || app.store.consumer_position(svc_core::event::consumer::TRACKERS).await.unwrap().unwrap();
    let start = position().await;
    for n in 0..60 {
        app.file_report(text_report(&format!("Report {n}"))).await;
    }
    let first_batch = app.store.list_events(None, start, 50).await.unwrap();
    assert_eq!(first_batch.len(), 50);
    // Reports being filed right now, as many as make a burst.
    let load = app.state.service.load();
    let burst: Vec<_> = (0..svc_service::load::BURST).map(|_| load.filing()).collect();
    sync(&app).await;
    assert_eq!(position().await, first_batch[49].id, "one batch of the feed during the burst");
    drop(burst);
    sync(&app).await;
    assert_eq!(position().await, app.store.last_event_id().await.unwrap(), "the rest once it has passed");
    github.assert_no_violations();
}
