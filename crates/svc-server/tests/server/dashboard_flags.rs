//! The Flags tab: a flag created and toggled in the dashboard is what `Svc.alpha` reads at
//! `GET /ingest/flags/:key`, and what the REST API lists; every change is in the audit log.

use axum::http::StatusCode;
use serde_json::json;

use super::common::*;
use super::dashboard_channels::{Tab, audit, redirected};

async fn alpha(app: &TestApp, key: &str) -> bool {
    app.ingest_get(&format!("/ingest/flags/{key}")).await.ok(200)["enabled"].as_bool().unwrap()
}

#[tokio::test]
async fn a_flag_created_and_toggled_in_the_dashboard_is_what_the_widget_reads() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let page = owner.get(&app, "/flags").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("No flags yet.") && page.text.contains(r#"Svc.alpha("new-checkout")"#), "{}", page.text);
    assert!(!alpha(&app, "new-checkout").await);

    let created = owner.post(&app, "/flags", &[("key", "new-checkout"), ("enabled", "on")]).await;
    assert!(redirected(&created).contains("done=on"));
    assert!(alpha(&app, "new-checkout").await);
    let listed = app.rest("GET", &app.p("/flags"), None).await;
    assert_eq!(listed.ok(200)["items"][0]["key"], json!("new-checkout"));
    assert_eq!(listed.ok(200)["items"][0]["enabled"], json!(true));
    let page = owner.get(&app, "/flags").await.text;
    assert!(page.contains(r#"<code>new-checkout</code>"#) && page.contains(r#"<span class="badge on">On</span>"#));
    assert!(page.contains("Turn off"));

    redirected(&owner.post(&app, "/flags/new-checkout", &[("enabled", "off")]).await);
    assert!(!alpha(&app, "new-checkout").await);
    redirected(&owner.post(&app, "/flags/new-checkout", &[("enabled", "on")]).await);
    assert!(alpha(&app, "new-checkout").await);

    // A flag created off (the box left unticked) stays off.
    redirected(&owner.post(&app, "/flags", &[("key", "beta.search")]).await);
    assert!(!alpha(&app, "beta.search").await);

    let log = audit(&app).await;
    let acts: Vec<(&str, &str, bool)> = log
        .iter()
        .map(|(action, kind, detail)| (action.as_str(), kind.as_str(), detail["enabled"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        acts,
        [
            ("flag.set", "user", false),
            ("flag.set", "user", true),
            ("flag.set", "user", false),
            ("flag.set", "user", true)
        ]
    );
}

#[tokio::test]
async fn a_bad_flag_key_is_refused_with_the_rule() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let bad = owner.post(&app, "/flags", &[("key", "-not ok<"), ("enabled", "on")]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("flag key must be 1 to 64 characters"), "{}", bad.text);
    assert!(bad.text.contains(r#"value="-not ok&#60;""#), "the key typed is kept, as text");
    assert!(app.store.list_flags(app.pid()).await.unwrap().is_empty());
    let toggle = owner.post(&app, "/flags/beta", &[("enabled", "maybe")]).await;
    assert_eq!(toggle.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn flags_set_through_rest_are_in_the_audit_log_once_per_change() {
    let app = TestApp::new().await;
    for enabled in [true, true, false] {
        app.rest("PUT", &app.p("/flags/dark-mode"), Some(json!({"enabled": enabled}))).await.ok(200);
    }
    let log = audit(&app).await;
    let acts: Vec<(&str, &str)> = log.iter().map(|(a, kind, _)| (a.as_str(), kind.as_str())).collect();
    assert_eq!(acts, [("flag.set", "agent"), ("flag.set", "agent")]);
    assert_eq!(log[0].2, json!({"key": "dark-mode", "enabled": false}));
}
