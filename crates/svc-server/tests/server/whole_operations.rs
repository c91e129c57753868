//! A triage that changes status, assignee and labels is one operation in one transaction: when its
//! last write fails (a fault injected in the database: the events table refuses
//! `report.labels_changed`, the last event such a change writes), nothing of it is stored and no
//! event is written; once the fault is gone the same request works and writes its events. For REST
//! `PATCH .../feedback/:id` and the dashboard's bulk edit, on SQLite and PostgreSQL.

use serde_json::{Value, json};

use crate::common::ingest::text_report;
use crate::common::{PASSWORD, TestApp, csrf_of};

/// The project's events as `GET .../events` lists them: (type, report id).
async fn events(app: &TestApp) -> Vec<(String, String)> {
    let page = app.rest("GET", &app.p("/events?after=0&limit=500"), None).await;
    page.ok(200)["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap().to_string(), e["reportId"].as_str().unwrap_or_default().to_string()))
        .collect()
}

/// What triage may have changed on a report: status, assignee, labels, history.
async fn triage_state(app: &TestApp, id: &str) -> Value {
    let stored = app.stored(id).await;
    json!([stored["status"], stored["assignee"], stored["labels"], stored["statusHistory"]])
}

fn untouched() -> Value {
    json!(["new", null, [], []])
}

async fn rest_patch_is_whole(app: TestApp) {
    let id = app.file_report(text_report("Export fails")).await;
    let member = app.user("lin@example.com").await.id;
    let before = events(&app).await;
    let body = json!({"status": "in-progress", "labels": ["export"], "assignee": member});
    let path = app.p(&format!("/feedback/{id}"));

    app.inject_event_fault("report.labels_changed").await;
    app.rest("PATCH", &path, Some(body.clone())).await.error(500, "INTERNAL");
    assert_eq!(triage_state(&app, &id).await, untouched(), "no part of the change is stored");
    assert_eq!(events(&app).await, before, "and no event is written");

    app.clear_fault().await;
    let done = app.rest("PATCH", &path, Some(body)).await;
    assert_eq!(done.ok(200)["status"], "in-progress");
    let stored = app.stored(&id).await;
    assert_eq!((&stored["assignee"], &stored["labels"]), (&json!(member), &json!(["export"])));
    let written: Vec<String> = events(&app).await.into_iter().skip(before.len()).map(|(kind, _)| kind).collect();
    assert_eq!(written, ["report.status_changed", "report.assigned", "report.labels_changed"]);
}

async fn dashboard_bulk_edit_is_whole(app: TestApp) {
    let ids = [
        app.file_report(text_report("First")).await,
        app.file_report(text_report("Second")).await,
        app.file_report(text_report("Third")).await,
    ];
    let ada = app.user("ada@example.com").await;
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let csrf = csrf_of(&cookie);
    let mut fields = vec![("_csrf", csrf.as_str()), ("status", "triaged"), ("assignee", ada.id.as_str())];
    fields.extend(ids.iter().map(|id| ("ids", id.as_str())));
    fields.push(("label", "sprint-12"));
    let before = events(&app).await;

    app.inject_event_fault("report.labels_changed").await;
    let failed = app.post_form("/reports/bulk", &fields, Some(&cookie)).await;
    assert_eq!(failed.status.as_u16(), 500, "{}", failed.text);
    for id in &ids {
        assert_eq!(triage_state(&app, id).await, untouched(), "no report changed, not even the first");
    }
    assert_eq!(events(&app).await, before, "and no event is written");

    app.clear_fault().await;
    let done = app.post_form("/reports/bulk", &fields, Some(&cookie)).await;
    assert_eq!(done.status.as_u16(), 303, "{}", done.text);
    for id in &ids {
        let stored = app.stored(id).await;
        assert_eq!((&stored["status"], &stored["labels"]), (&json!("triaged"), &json!(["sprint-12"])));
        assert_eq!(stored["statusHistory"][0]["by"]["kind"], "user");
    }
    assert_eq!(events(&app).await.len(), before.len() + 3 * 3, "status, assignee and labels of each report");
}

#[tokio::test]
async fn sqlite_a_rest_patch_is_stored_whole_or_not_at_all() {
    rest_patch_is_whole(TestApp::new().await).await;
}

#[tokio::test]
async fn postgres_a_rest_patch_is_stored_whole_or_not_at_all() {
    let Some(app) = TestApp::postgres().await else { return };
    rest_patch_is_whole(app).await;
}

#[tokio::test]
async fn sqlite_a_dashboard_bulk_edit_is_stored_whole_or_not_at_all() {
    dashboard_bulk_edit_is_whole(TestApp::new().await).await;
}

#[tokio::test]
async fn postgres_a_dashboard_bulk_edit_is_stored_whole_or_not_at_all() {
    let Some(app) = TestApp::postgres().await else { return };
    dashboard_bulk_edit_is_whole(app).await;
}
