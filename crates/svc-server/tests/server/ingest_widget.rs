//! What the widget reads: `GET /ingest/config`, `/ingest/channels`, `/ingest/flags/:key`; and the
//! ingest API's CORS (open, no cookies).

use crate::common::ingest::*;
use crate::common::*;
use axum::body::Body;
use serde_json::{Value, json};

#[tokio::test]
async fn config_has_widget_defaults_and_limits() {
    let app = TestApp::new().await;
    let config = app.ingest_get("/ingest/config").await.ok(200).clone();
    assert_eq!(
        config["widgetConfig"],
        json!({"mascot": "fox", "shape": "bubble", "anchor": "middle-right", "offsetX": 0, "offsetY": 0, "size": 44, "triggerVariant": "frame-tab"})
    );
    assert_eq!(config["hints"], json!([]));
    assert_eq!(
        config["limits"],
        json!({
            "textMaxChars": 10_000,
            "blocksMax": 50,
            "screenshotMaxBytes": 4 * 1024 * 1024,
            "audioMaxBytes": 10 * 1024 * 1024,
            "audioMaxMs": 300_000,
            "fileMaxBytes": 5 * 1024 * 1024,
        })
    );

    // Set fields replace their defaults; the others stay.
    app.patch_project(json!({"widgetConfig": {"mascot": "owl", "anchor": "bottom-right", "size": 56}})).await;
    let config = app.ingest_get("/ingest/config").await.ok(200).clone();
    assert_eq!(config["widgetConfig"]["mascot"], json!("owl"));
    assert_eq!(config["widgetConfig"]["anchor"], json!("bottom-right"));
    assert_eq!(config["widgetConfig"]["size"].as_f64(), Some(56.0));
    assert_eq!(config["widgetConfig"]["shape"], json!("bubble"));
    assert_eq!(config["widgetConfig"]["triggerVariant"], json!("frame-tab"));
}

#[tokio::test]
async fn config_lists_hints_for_everyone_plus_the_given_user_only() {
    let app = TestApp::new().await;
    for hint in [
        json!({"channelKey": "idea", "weight": "max"}),
        json!({"channelKey": "question", "weight": 3, "userId": "alice"}),
        json!({"channelKey": "bug", "weight": "suggest", "userId": "bob"}),
    ] {
        assert_eq!(app.rest("POST", &app.p("/hints"), Some(hint)).await.ok(200), &json!({"ok": true}));
    }
    let hints = |path: &'static str| {
        let app = &app;
        async move { app.ingest_get(path).await.ok(200)["hints"].as_array().unwrap().clone() }
    };

    let everyone = hints("/ingest/config").await;
    assert_eq!(everyone, vec![json!({"channelKey": "idea", "weight": "max", "userId": null})]);

    let alice = hints("/ingest/config?userId=alice").await;
    assert_eq!(alice.len(), 2, "{alice:?}");
    assert!(alice.contains(&json!({"channelKey": "idea", "weight": "max", "userId": null})));
    let for_alice = alice.iter().find(|h| h["userId"] == json!("alice")).expect("alice's hint");
    assert_eq!(for_alice["channelKey"], json!("question"));
    assert_eq!(for_alice["weight"].as_f64(), Some(3.0));

    let bob = hints("/ingest/config?userId=bob").await;
    assert_eq!(bob.len(), 2, "{bob:?}");
    assert!(bob.contains(&json!({"channelKey": "bug", "weight": "suggest", "userId": "bob"})));
    for list in [&everyone, &alice, &bob] {
        let users: Vec<&Value> = list.iter().map(|h| &h["userId"]).collect();
        assert!(!(users.contains(&&json!("alice")) && users.contains(&&json!("bob"))), "{list:?}");
    }
    // Another user, or an empty one, sees only the hints for everyone.
    assert_eq!(hints("/ingest/config?userId=carol").await, everyone);
    assert_eq!(hints("/ingest/config?userId=").await, everyone);
}

#[tokio::test]
async fn channels_are_the_active_ones_oldest_first_in_ingest_form() {
    let app = TestApp::new().await;
    let created = app
        .rest(
            "POST",
            &app.p("/channels"),
            Some(json!({
                "key": "billing", "name": "Billing", "color": "#112233", "mascot": "otter", "baseWeight": 2,
                "matchers": [{"conditions": [{"field": "path", "op": "prefix", "value": "/billing"}], "weight": 5, "note": "billing pages"}],
            })),
        )
        .await;
    created.ok(201);
    app.rest("PATCH", &app.p("/channels/question"), Some(json!({"archived": true}))).await.ok(200);

    let answer = app.ingest_get("/ingest/channels").await.ok(200).clone();
    assert_eq!(answer["defaultChannelKey"], json!("bug"));
    let channels = answer["channels"].as_array().unwrap();
    let keys: Vec<&str> = channels.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "billing"]);
    for channel in channels {
        for field in CHANNEL_FIELDS {
            assert!(channel.get(field).is_some(), "channel lacks {field}: {channel}");
        }
        assert_eq!(channel["projectId"], json!(app.pid()));
        assert_eq!(channel["archived"], json!(false));
        assert!(channel["createdAt"].as_str().unwrap().ends_with('Z'));
        assert!(channel["matchers"].is_array());
    }
    let billing = &channels[2];
    assert_eq!(billing["name"], json!("Billing"));
    assert_eq!(billing["color"], json!("#112233"));
    assert_eq!(billing["mascot"], json!("otter"));
    assert_eq!(billing["baseWeight"].as_f64(), Some(2.0));
    assert_eq!(billing["matchers"][0]["weight"].as_f64(), Some(5.0));
    assert_eq!(billing["matchers"][0]["conditions"][0]["op"], json!("prefix"));
    assert_eq!(channels[0]["name"], json!("Bugs"));

    // The default follows the project's setting.
    app.patch_project(json!({"defaultChannelKey": "billing"})).await;
    assert_eq!(app.ingest_get("/ingest/channels").await.ok(200)["defaultChannelKey"], json!("billing"));
}

#[tokio::test]
async fn flags_say_whether_a_flag_is_on() {
    let app = TestApp::new().await;
    assert_eq!(app.ingest_get("/ingest/flags/dark-mode").await.ok(200), &json!({"enabled": false}));
    app.rest("PUT", &app.p("/flags/dark-mode"), Some(json!({"enabled": true}))).await.ok(200);
    assert_eq!(app.ingest_get("/ingest/flags/dark-mode").await.ok(200), &json!({"enabled": true}));
    app.rest("PUT", &app.p("/flags/dark-mode"), Some(json!({"enabled": false}))).await.ok(200);
    assert_eq!(app.ingest_get("/ingest/flags/dark-mode").await.ok(200), &json!({"enabled": false}));
    // A flag of another project is not this project's.
    let (other, other_key) = app.other_project().await;
    let path = format!("/api/v1/projects/{}/flags/only-there", other.id);
    app.call("PUT", &path, &other_key, Some(json!({"enabled": true}))).await.ok(200);
    assert_eq!(app.ingest_get("/ingest/flags/only-there").await.ok(200), &json!({"enabled": false}));
    let key = other.project_key.clone();
    let there = app.ingest("GET", "/ingest/flags/only-there", Some(&key), &[], Body::empty()).await;
    assert_eq!(there.ok(200), &json!({"enabled": true}));
}

// ---------------------------------------------------------------------------------------------
// CORS

fn header_list(resp: &Resp, name: &str) -> Vec<String> {
    resp.header(name).unwrap_or_default().split(',').map(|h| h.trim().to_ascii_lowercase()).collect()
}

#[tokio::test]
async fn preflight_allows_the_ingest_headers_from_any_origin() {
    let app = TestApp::new().await;
    for (path, method) in [
        ("/ingest/report", "POST"),
        ("/ingest/blob", "POST"),
        ("/ingest/config", "GET"),
        ("/ingest/channels", "GET"),
        ("/ingest/flags/x", "GET"),
    ] {
        let resp = app
            .ingest(
                "OPTIONS",
                path,
                None,
                &[
                    ("origin", "https://customer.example.org"),
                    ("access-control-request-method", method),
                    (
                        "access-control-request-headers",
                        "x-svc-project-key, x-svc-identity, content-type, idempotency-key",
                    ),
                ],
                Body::empty(),
            )
            .await;
        assert!(resp.status.is_success(), "{path}: {}", resp.status);
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"), "{path}");
        let allowed = header_list(&resp, "access-control-allow-headers");
        for header in ["x-svc-project-key", "x-svc-identity", "content-type", "idempotency-key"] {
            assert!(allowed.contains(&header.to_string()), "{path}: {allowed:?} lacks {header}");
        }
        let methods = header_list(&resp, "access-control-allow-methods");
        assert!(methods.contains(&method.to_ascii_lowercase()), "{path}: {methods:?}");
        // Credentials are never allowed: the ingest API uses no cookies.
        assert_ne!(resp.header("access-control-allow-credentials"), Some("true"));
    }
}

#[tokio::test]
async fn responses_carry_cors_headers_and_never_set_cookies() {
    let app = TestApp::new().await;
    let origin = [("origin", "https://customer.example.org")];
    let key = app.key().to_string();
    let (content_type, body) =
        multipart(&[Part::text("kind", "screenshot"), Part::file("a.png", "image/png", &png(2, 2))]);
    let blob = app
        .ingest("POST", "/ingest/blob", Some(&key), &[origin[0], ("content-type", &content_type)], Body::from(body))
        .await;
    let blob_id = blob.ok(200)["blobId"].as_str().unwrap().to_string();
    let report_body = json!({"blocks": [{"type": "screenshot", "blobId": blob_id}]});
    let responses = vec![
        blob,
        app.report_with(&key, &origin, report_body).await,
        app.ingest("GET", "/ingest/config", Some(&key), &origin, Body::empty()).await,
        app.ingest("GET", "/ingest/channels", Some(&key), &origin, Body::empty()).await,
        app.ingest("GET", "/ingest/flags/a", Some(&key), &origin, Body::empty()).await,
        // Errors are readable by the page too.
        app.ingest("GET", "/ingest/config", Some("pr_unknown"), &origin, Body::empty()).await,
        app.report_with(&key, &origin, json!({"blocks": []})).await,
    ];
    for resp in &responses {
        // `TestApp::send` already asserts the absence of Set-Cookie on every response.
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"), "{} {}", resp.status, resp.text);
        assert_ne!(resp.header("access-control-allow-credentials"), Some("true"));
        assert!(resp.header("content-type").unwrap_or_default().starts_with("application/json"));
    }
    assert_eq!(responses[5].status.as_u16(), 401);
    assert_eq!(responses[6].status.as_u16(), 400);
}
