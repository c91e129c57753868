//! Authentication and authorization: 401 for missing, malformed, unknown, expired and revoked keys;
//! 403 for another project's id, org-wide keys and missing scopes; the scope matrix of every route.

use crate::common::*;
use serde_json::json;

/// A handful of routes of different methods, for the 401 cases.
fn sample_routes(app: &TestApp) -> Vec<(&'static str, String, Option<serde_json::Value>)> {
    vec![
        ("GET", "/api/v1/me".to_string(), None),
        ("GET", app.p(""), None),
        ("GET", app.p("/feedback"), None),
        ("POST", app.p("/rooms"), Some(json!({"artifactId": "a"}))),
        ("PATCH", app.p("/channels/bug"), Some(json!({"name": "B"}))),
        ("DELETE", app.p(&format!("/keys/{}", svc_core::ids::new_id())), None),
        ("PUT", app.p("/flags/beta"), Some(json!({"enabled": true}))),
    ]
}

async fn assert_all_unauthorized(app: &TestApp, authorization: Option<&str>) {
    for (method, path, body) in sample_routes(app) {
        let resp = app.raw(method, &path, authorization, body.map(|b| serde_json::to_vec(&b).unwrap())).await;
        assert_eq!(resp.status.as_u16(), 401, "{method} {path} with {authorization:?}: {}", resp.text);
        resp.error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn missing_key_is_401() {
    let app = TestApp::new().await;
    assert_all_unauthorized(&app, None).await;
    // Nothing was changed by the refused calls.
    let flags = app.store.list_flags(app.pid()).await.unwrap();
    assert!(flags.is_empty());
}

#[tokio::test]
async fn malformed_authorization_is_401() {
    let app = TestApp::new().await;
    let bare = app.token.clone();
    let basic = format!("Basic {}", app.token);
    let token_prefix = format!("Token {}", app.token);
    for value in [
        "Bearer abc",
        "Basic x",
        "Bearer",
        "Bearer ",
        "",
        "Bearer pr_abc",
        bare.as_str(),
        basic.as_str(),
        token_prefix.as_str(),
    ] {
        assert_all_unauthorized(&app, Some(value)).await;
    }
}

#[tokio::test]
async fn unknown_key_is_401() {
    let app = TestApp::new().await;
    let unknown = format!("Bearer {}", svc_core::ids::new_secret_key());
    assert_all_unauthorized(&app, Some(&unknown)).await;
    // A real key with one character changed.
    let mut altered = app.token.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'a' { 'b' } else { 'a' });
    assert_all_unauthorized(&app, Some(&format!("Bearer {altered}"))).await;
}

#[tokio::test]
async fn expired_key_is_401() {
    let app = TestApp::new().await;
    // A key minted with a TTL works until it expires...
    let minted = app
        .post(&app.p("/keys"), &app.token, json!({"name": "ttl", "scopes": ["feedback:read"], "expiresInSeconds": 60}))
        .await
        .ok(201)
        .clone();
    assert!(minted["expiresAt"].is_string());
    app.get(&app.p("/feedback"), minted["key"].as_str().unwrap()).await.ok(200);
    // ...and once past its expiry (written directly, as if the clock had moved on) it is refused.
    let (_, expired) = app.expired_key().await;
    let message = app.get("/api/v1/me", &expired).await.error(401, "UNAUTHORIZED");
    assert!(message.contains("expired"), "{message}");
    assert_all_unauthorized(&app, Some(&format!("Bearer {expired}"))).await;
}

#[tokio::test]
async fn revoked_key_is_401() {
    let app = TestApp::new().await;
    let (id, key) = app.mint(&ALL_SCOPES).await;
    app.get("/api/v1/me", &key).await.ok(200);
    app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.ok(200);
    let message = app.get("/api/v1/me", &key).await.error(401, "UNAUTHORIZED");
    assert!(message.contains("revoked"), "{message}");
    assert_all_unauthorized(&app, Some(&format!("Bearer {key}"))).await;
}

#[tokio::test]
async fn unauthorized_answers_carry_www_authenticate() {
    let app = TestApp::new().await;
    let resp = app.raw("GET", "/api/v1/me", None, None).await;
    resp.error(401, "UNAUTHORIZED");
    assert!(resp.headers.get("www-authenticate").is_some());
}

#[tokio::test]
async fn a_key_on_another_projects_id_is_403() {
    let app = TestApp::new().await;
    let (other, other_key) = app.other_project().await;
    let fixture = app.fixture().await;
    for case in project_routes() {
        let path = app.route_path(&case, &fixture);
        let resp = app.call(case.method, &path, &other_key, case.body.clone()).await;
        assert_eq!(resp.status.as_u16(), 403, "{} {path}: {}", case.method, resp.text);
        let message = resp.error(403, "FORBIDDEN");
        assert!(message.contains("another project"), "{message}");
    }
    // The other key is fine on its own project.
    app.get(&format!("/api/v1/projects/{}", other.id), &other_key).await.ok(200);
    // And this project is untouched: its name did not change.
    assert_eq!(app.get(&app.p(""), &app.token).await.ok(200)["name"], json!("Default"));
}

#[tokio::test]
async fn the_public_key_as_project_id_is_404_pointing_at_me() {
    let app = TestApp::new().await;
    let public = app.project.project_key.clone();
    for path in [
        format!("/api/v1/projects/{public}"),
        format!("/api/v1/projects/{public}/feedback"),
        format!("/api/v1/projects/{public}/channels"),
    ] {
        let message = app.get(&path, &app.token).await.error(404, "NOT_FOUND");
        assert!(message.contains("GET") && message.contains("/me"), "{message}");
    }
    let message = app
        .patch(&format!("/api/v1/projects/{public}"), &app.token, json!({"name": "X"}))
        .await
        .error(404, "NOT_FOUND");
    assert!(message.contains("/me"), "{message}");
}

#[tokio::test]
async fn a_malformed_or_unknown_project_id_is_404_or_403() {
    let app = TestApp::new().await;
    for id in ["abc", "DEFAULT", "default"] {
        app.get(&format!("/api/v1/projects/{id}"), &app.token).await.error(404, "NOT_FOUND");
        app.get(&format!("/api/v1/projects/{id}/feedback"), &app.token).await.error(404, "NOT_FOUND");
    }
    // A well-formed id that is not the key's project: the key belongs elsewhere.
    let unknown = svc_core::ids::new_id();
    app.get(&format!("/api/v1/projects/{unknown}"), &app.token).await.error(403, "FORBIDDEN");
}

#[tokio::test]
async fn an_org_wide_key_is_403_on_every_route_me_included() {
    let app = TestApp::new().await;
    let org_key = app.mint_org_wide(&["*"]).await;
    let fixture = app.fixture().await;
    let message = app.get("/api/v1/me", &org_key).await.error(403, "FORBIDDEN");
    assert!(message.contains("org-wide"), "{message}");
    for case in project_routes() {
        let path = app.route_path(&case, &fixture);
        let resp = app.call(case.method, &path, &org_key, case.body.clone()).await;
        assert_eq!(resp.status.as_u16(), 403, "{} {path}: {}", case.method, resp.text);
        resp.error(403, "FORBIDDEN");
    }
    // Scopes do not matter.
    let narrow = app.mint_org_wide(&["feedback:read"]).await;
    app.get("/api/v1/me", &narrow).await.error(403, "FORBIDDEN");
    app.get(&app.p("/feedback"), &narrow).await.error(403, "FORBIDDEN");
}

/// For every route: a key with every scope but the one the route needs gets 403; a key with only
/// that scope succeeds.
#[tokio::test]
async fn scope_matrix() {
    let app = TestApp::new().await;
    run_scope_matrix(&app).await;
}

/// `*` satisfies every scope.
#[tokio::test]
async fn star_satisfies_every_route() {
    let app = TestApp::new().await;
    let fixture = app.fixture().await;
    let (_, star) = app.mint(&["*"]).await;
    for case in project_routes() {
        let path = app.route_path(&case, &fixture);
        let resp = app.call(case.method, &path, &star, case.body.clone()).await;
        assert_eq!(resp.status.as_u16(), case.success, "{} {}: {}", case.method, case.path, resp.text);
    }
}

#[tokio::test]
async fn me_works_with_any_single_scope() {
    let app = TestApp::new().await;
    for scope in ALL_SCOPES.iter().copied().chain(["*"]) {
        let (id, key) = app.mint(&[scope]).await;
        let me = app.get("/api/v1/me", &key).await.ok(200).clone();
        assert_eq!(me["keyId"], json!(id), "scope {scope}");
        assert_eq!(me["scopes"], json!([scope]));
        assert_eq!(me["projectId"], json!(app.pid()));
        assert_eq!(me["projectKey"], json!(app.project.project_key));
    }
}
