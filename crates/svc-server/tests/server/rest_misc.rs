//! Paging, request bodies (size and syntax), the OpenAPI document and the per-key rate limit.

use crate::common::*;
use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use svc_server::ServerConfig;

// ---------------------------------------------------------------------------------------------
// Paging

#[tokio::test]
async fn paging_returns_each_report_once_newest_first() {
    let app = TestApp::new().await;
    let seeded = app.seed_many(250).await;
    let newest_first: Vec<String> = seeded.iter().rev().map(|r| r.id.clone()).collect();

    for limit in [100, 7] {
        let ids = walk(&app, limit).await;
        assert_eq!(ids.len(), 250, "limit {limit}");
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 250, "no report twice (limit {limit})");
        assert_eq!(ids, newest_first, "newest first (limit {limit})");
    }

    // Page boundaries with limit 100: 100, 100, 50.
    let first = app.get(&app.p("/feedback?limit=100"), &app.token).await.ok(200).clone();
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let second = app.get(&app.p(&format!("/feedback?limit=100&before={cursor}")), &app.token).await.ok(200).clone();
    let cursor = second["nextCursor"].as_str().unwrap().to_string();
    let third = app.get(&app.p(&format!("/feedback?limit=100&before={cursor}")), &app.token).await.ok(200).clone();
    assert_eq!(third["items"].as_array().unwrap().len(), 50);
    assert_eq!(third["nextCursor"], Value::Null);

    // Over 100 is cut to 100; the default is 20.
    let clamped = app.get(&app.p("/feedback?limit=150"), &app.token).await.ok(200).clone();
    assert_eq!(clamped["items"].as_array().unwrap().len(), 100);
    assert_eq!(clamped["nextCursor"], json!(seeded[150].id));
    let huge = app.get(&app.p("/feedback?limit=99999999999"), &app.token).await.ok(200).clone();
    assert_eq!(huge["items"].as_array().unwrap().len(), 100);
    let default = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!(default["items"].as_array().unwrap().len(), 20);
    assert_eq!(default["nextCursor"], json!(seeded[230].id));

    // The oldest report as cursor: nothing older.
    let end = app.get(&app.p(&format!("/feedback?before={}", seeded[0].id)), &app.token).await.ok(200).clone();
    assert_eq!(end, json!({"items": [], "nextCursor": null}));
}

#[tokio::test]
async fn paging_with_a_filter_and_new_reports_arriving() {
    let app = TestApp::new().await;
    let mut ideas = Vec::new();
    for i in 0..30 {
        let channel = if i % 3 == 0 { "idea" } else { "bug" };
        let report = app.seed(Seed::text(&format!("r{i}")).channel(channel)).await;
        if channel == "idea" {
            ideas.push(report.id);
        }
    }
    let first = app.get(&app.p("/feedback?channelKey=idea&limit=4"), &app.token).await.ok(200).clone();
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    // A report filed meanwhile does not shift the next page.
    app.seed(Seed::text("late").channel("idea")).await;
    let mut ids: Vec<String> =
        first["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    let rest = app
        .get(&app.p(&format!("/feedback?channelKey=idea&limit=100&before={cursor}")), &app.token)
        .await
        .ok(200)
        .clone();
    assert_eq!(rest["nextCursor"], Value::Null);
    ids.extend(rest["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()));
    ideas.reverse();
    assert_eq!(ids, ideas);
}

// ---------------------------------------------------------------------------------------------
// Request bodies

/// Every route that takes a JSON body (method, path under the project).
fn body_routes(app: &TestApp) -> Vec<(&'static str, String)> {
    vec![
        ("PATCH", app.p("")),
        ("PATCH", app.p(&format!("/feedback/{}", svc_core::ids::new_id()))),
        ("POST", app.p("/rooms")),
        ("PATCH", app.p("/rooms/some-room")),
        ("POST", app.p("/channels")),
        ("PATCH", app.p("/channels/bug")),
        ("POST", app.p("/hints")),
        ("POST", app.p("/keys")),
        ("PUT", app.p("/flags/beta")),
    ]
}

#[tokio::test]
async fn bodies_over_one_megabyte_are_413() {
    let app = TestApp::new().await;
    // Valid JSON, just too big.
    let big = serde_json::to_vec(&json!({"name": "x".repeat(1024 * 1024 + 10)})).unwrap();
    let auth = format!("Bearer {}", app.token);
    for (method, path) in body_routes(&app) {
        let resp = app.raw(method, &path, Some(&auth), Some(big.clone())).await;
        assert_eq!(resp.status.as_u16(), 413, "{method} {path}: {}", resp.text);
        resp.error(413, "PAYLOAD_TOO_LARGE");
    }
    // The project name did not change.
    assert_eq!(app.get(&app.p(""), &app.token).await.ok(200)["name"], json!("Default"));

    // Just under the limit is read (and then judged on its content).
    let padding = 1024 * 1024 - 200;
    let fits = serde_json::to_vec(&json!({"name": "ok", "urlPatterns": ["x".repeat(padding)]})).unwrap();
    assert!(fits.len() < 1024 * 1024);
    let resp = app.raw("PATCH", &app.p(""), Some(&auth), Some(fits)).await;
    resp.error(400, "BAD_REQUEST"); // a 2000-character pattern limit, not a size error
}

/// A request declaring a 100 MB body of which 4 KB arrive and then nothing.
fn declared_100_mb(method: &str, path: &str, authorization: Option<&str>) -> (Request<Body>, Arc<AtomicUsize>) {
    let (body, taken) = counted_body(1, 4096, true);
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, "104857600");
    if let Some(value) = authorization {
        builder = builder.header(header::AUTHORIZATION, value);
    }
    (builder.body(body).unwrap(), taken)
}

#[tokio::test]
async fn a_100_mb_body_is_answered_from_the_headers_without_reading_it() {
    let app = TestApp::new().await;
    let unknown = format!("Bearer pr_sk_{}", "A".repeat(40));
    let valid = format!("Bearer {}", app.token);
    for (method, path) in body_routes(&app) {
        // No key, or a bad one: 401 in the REST shape, the body untouched.
        for authorization in [None, Some(unknown.as_str())] {
            let (request, taken) = declared_100_mb(method, &path, authorization);
            let resp = send_within(&app, request).await;
            resp.error(401, "UNAUTHORIZED");
            assert_eq!(resp.headers[header::WWW_AUTHENTICATE], "Bearer");
            assert_eq!(taken.load(Ordering::SeqCst), 0, "{method} {path}: nothing of the body is read");
        }
        // A valid key: 413 from the declared length, still unread.
        let (request, taken) = declared_100_mb(method, &path, Some(&valid));
        send_within(&app, request).await.error(413, "PAYLOAD_TOO_LARGE");
        assert_eq!(taken.load(Ordering::SeqCst), 0, "{method} {path}: refused by its Content-Length");
    }
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_is_a_rest_413_and_is_read_no_further() {
    let app = TestApp::new().await;
    let valid = format!("Bearer {}", app.token);
    for (method, path) in body_routes(&app) {
        // 3 MB without a Content-Length: past the 1 MB limit and past axum's own 2 MB default,
        // whose plain-text 413 must not be what a client sees.
        let (body, taken) = counted_body(48, 64 * 1024, false);
        let request = Request::builder()
            .method(method)
            .uri(&path)
            .header(header::AUTHORIZATION, &valid)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap();
        let resp = send_within(&app, request).await;
        resp.error(413, "PAYLOAD_TOO_LARGE");
        let read = taken.load(Ordering::SeqCst);
        assert!(read <= 1024 * 1024 + 64 * 1024, "{method} {path}: read {read} bytes past the limit");
    }
}

#[tokio::test]
async fn invalid_json_is_400() {
    let app = TestApp::new().await;
    let auth = format!("Bearer {}", app.token);
    let bad_bodies: [&[u8]; 7] = [b"{", b"{\"name\": }", b"not json", b"", b"[1, 2]", b"\"a string\"", b"\xff\xfe"];
    for (method, path) in body_routes(&app) {
        for body in bad_bodies {
            let resp = app.raw(method, &path, Some(&auth), Some(body.to_vec())).await;
            assert_eq!(
                resp.status.as_u16(),
                400,
                "{method} {path} with {:?}: {}",
                String::from_utf8_lossy(body),
                resp.text
            );
            resp.error(400, "BAD_REQUEST");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAPI

#[tokio::test]
async fn openapi_document_lists_every_route() {
    let app = TestApp::new().await;
    let doc = app.raw("GET", "/api/v1/openapi.json", None, None).await.ok(200).clone();
    let version = doc["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3.1"), "OpenAPI 3.1, not {version}");
    assert!(doc["info"]["title"].is_string());
    let paths = doc["paths"].as_object().expect("paths");

    let mut missing = Vec::new();
    for (method, path) in REST_ROUTES {
        if path == "/api/v1/openapi.json" {
            continue; // the document itself
        }
        if paths.get(path).and_then(|item| item.get(method)).is_none() {
            missing.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    assert!(missing.is_empty(), "routes missing from the OpenAPI document: {missing:?}; it has {:?}", paths.keys());

    // Keyed routes declare the bearer scheme.
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    assert!(doc["paths"]["/api/v1/me"]["get"]["security"].is_array());
    // And the error body is described.
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}

// ---------------------------------------------------------------------------------------------
// Rate limit

#[tokio::test]
async fn the_fourth_request_of_a_key_in_a_minute_is_429() {
    let app =
        TestApp::with_config(ServerConfig { rate_limits: true, key_requests_per_minute: 3, ..Default::default() })
            .await;
    for _ in 0..3 {
        app.get("/api/v1/me", &app.token).await.ok(200);
    }
    let resp = app.get(&app.p("/feedback"), &app.token).await;
    resp.error(429, "RATE_LIMITED");
    let retry_after: u64 = resp
        .headers
        .get("retry-after")
        .expect("Retry-After header")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After is a number of seconds");
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");

    // The window is per key: another key still gets through.
    let (_, other) = app.mint(&["feedback:read"]).await;
    app.get(&app.p("/feedback"), &other).await.ok(200);
    // The OpenAPI document is not keyed, so not limited.
    for _ in 0..5 {
        app.raw("GET", "/api/v1/openapi.json", None, None).await.ok(200);
    }
}
