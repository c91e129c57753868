//! Live inbox: `/dashboard/events` tells an open page that reports of the person's projects
//! changed, including reports filed through another instance on the same PostgreSQL.

use axum::body::Body;
use axum::http::{Request, header};
use futures_util::StreamExt;
use std::time::Duration;
use svc_core::account::Role;
use svc_core::secret::Secret;
use svc_service::accounts::{self, NewUser};

use super::common::ingest::*;
use super::common::*;

/// Signs a new owner in directly through the service; returns the cookie header value.
async fn session_cookie(app: &TestApp) -> String {
    let new = NewUser::parse("grace@example.com", "Grace", Secret::new("a long enough password")).unwrap();
    let user = accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Owner))).await.unwrap();
    let token = accounts::start_session(app.service(), &user.id).await.unwrap();
    format!("svc_session={}", token.expose())
}

/// Opens the event stream of `viewer` and returns its body as a stream of chunks.
async fn open_events(viewer: &TestApp, cookie: &str) -> axum::body::BodyDataStream {
    reopen_events(viewer, cookie, None).await
}

/// [`open_events`] as a browser reconnects: with the id of the last event it heard.
async fn reopen_events(viewer: &TestApp, cookie: &str, last_event_id: Option<&str>) -> axum::body::BodyDataStream {
    let mut request = Request::get("/dashboard/events").header(header::COOKIE, cookie);
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let request = request.body(Body::empty()).unwrap();
    let response = tower::ServiceExt::oneshot(viewer.router.clone(), request).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    response.into_body().into_data_stream()
}

/// The next `change` event's data within a few seconds (keep-alive comments skipped).
async fn next_change(events: &mut axum::body::BodyDataStream) -> String {
    next_change_with_id(events).await.1
}

/// The next `change` event's id (the event feed's, when it has one) and data.
async fn next_change_with_id(events: &mut axum::body::BodyDataStream) -> (Option<String>, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout_at(deadline, events.next()).await.expect("a change event in time");
        text.push_str(&String::from_utf8_lossy(&chunk.expect("the stream stays open").unwrap()));
        // Whole events end with a blank line; fields are `name: value` lines.
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            let field =
                |name: &str| event.lines().find_map(|line| line.strip_prefix(&format!("{name}: ")).map(str::to_string));
            if field("event").as_deref() == Some("change") {
                return (field("id"), field("data").unwrap_or_default());
            }
        }
    }
}

#[tokio::test]
async fn an_open_inbox_hears_of_new_reports_and_status_changes() {
    let app = TestApp::new().await;
    let cookie = session_cookie(&app).await;
    let mut events = open_events(&app, &cookie).await;
    let id = app.file_report(text_report("Filed while the inbox is open")).await;
    assert_eq!(next_change(&mut events).await, app.project.id, "a new report");
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(serde_json::json!({"status": "fixed"}))).await.ok(200);
    assert_eq!(next_change(&mut events).await, app.project.id, "a status change");
}

#[tokio::test]
async fn a_reconnecting_inbox_hears_at_once_what_it_missed() {
    let app = TestApp::new().await;
    let cookie = session_cookie(&app).await;
    let mut events = open_events(&app, &cookie).await;
    let id = app.file_report(text_report("Filed while the inbox is open")).await;
    let (heard, project) = next_change_with_id(&mut events).await;
    assert_eq!(project, app.project.id);
    let heard = heard.expect("a change from the event feed carries its id");
    drop(events);
    // The connection drops; meanwhile the report is fixed.
    app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(serde_json::json!({"status": "fixed"}))).await.ok(200);
    let mut events = reopen_events(&app, &cookie, Some(&heard)).await;
    let (missed, project) = next_change_with_id(&mut events).await;
    assert_eq!(project, app.project.id, "told at once, before anything else changes");
    assert!(missed.unwrap().parse::<i64>().unwrap() > heard.parse::<i64>().unwrap());
}

#[tokio::test]
async fn without_a_session_there_is_no_event_stream() {
    let app = TestApp::new().await;
    let resp = app.send(Request::get("/dashboard/events").body(Body::empty()).unwrap()).await;
    assert_eq!(resp.status.as_u16(), 303);
}

#[tokio::test]
async fn a_report_filed_through_another_instance_reaches_the_inbox() {
    let Some((first, second)) = TestApp::postgres_pair().await else { return };
    let cookie = session_cookie(&first).await;
    let mut events = open_events(&first, &cookie).await;
    // Filed through the second instance's ingest, into the same project.
    let id = second.file_report(text_report("Through the other instance")).await;
    assert_eq!(next_change(&mut events).await, first.project.id);
    let page = first
        .send(Request::get(format!("/?r={id}")).header(header::COOKIE, &cookie).body(Body::empty()).unwrap())
        .await;
    assert!(page.text.contains("Through the other instance"));
}

/// Whether the stream ends within a few seconds (events still arriving are read past).
async fn ends(events: &mut axum::body::BodyDataStream) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => return false,
            Ok(None) | Ok(Some(Err(_))) => return true,
            Ok(Some(Ok(_))) => continue,
        }
    }
}

/// A session of a new member (`email`) of the app's organization, and the member's user id.
async fn member_session(app: &TestApp, email: &str) -> (String, String) {
    let new = NewUser::parse(email, "Member", Secret::new("a long enough password")).unwrap();
    let user = accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Member))).await.unwrap();
    let token = accounts::start_session(app.service(), &user.id).await.unwrap();
    (format!("svc_session={}", token.expose()), user.id)
}

fn session_hash(cookie: &str) -> String {
    svc_core::secret::hash_secret(cookie.trim_start_matches("svc_session="))
}

#[tokio::test]
async fn an_open_stream_ends_with_its_session() {
    let app = TestApp::new().await;
    let store = app.service();
    let owner = accounts::resolve_session(store, session_cookie(&app).await.trim_start_matches("svc_session="))
        .await
        .unwrap()
        .unwrap();
    let owner = svc_service::principal::Principal::User(Box::new(owner));

    // Sign-out.
    let (cookie, _) = member_session(&app, "a@example.com").await;
    let mut events = open_events(&app, &cookie).await;
    accounts::end_session(store, &session_hash(&cookie)).await.unwrap();
    assert!(ends(&mut events).await, "after signing out");

    // Sign-out everywhere, from another session of the same person.
    let (cookie, user_id) = member_session(&app, "b@example.com").await;
    let mut events = open_events(&app, &cookie).await;
    accounts::end_all_sessions(store, &user_id).await.unwrap();
    assert!(ends(&mut events).await, "after signing out everywhere");

    // A new password (a reset).
    let (cookie, user_id) = member_session(&app, "c@example.com").await;
    let mut events = open_events(&app, &cookie).await;
    accounts::set_password(store, &user_id, Secret::new("another long password")).await.unwrap();
    assert!(ends(&mut events).await, "after a password reset");

    // Removal from the organization.
    let (cookie, user_id) = member_session(&app, "d@example.com").await;
    let mut events = open_events(&app, &cookie).await;
    accounts::remove_member(store, &owner, &app.project.org_id, &user_id).await.unwrap();
    assert!(ends(&mut events).await, "after removal from the organization");

    // A session that lives on keeps its stream.
    let (cookie, _) = member_session(&app, "e@example.com").await;
    let mut events = open_events(&app, &cookie).await;
    app.file_report(text_report("Still listening")).await;
    assert_eq!(next_change(&mut events).await, app.project.id);
}

#[tokio::test]
async fn signing_out_through_one_instance_ends_the_stream_on_another() {
    let Some((first, second)) = TestApp::postgres_pair().await else { return };
    let (cookie, _) = member_session(&first, "f@example.com").await;
    let mut events = open_events(&first, &cookie).await;
    accounts::end_session(second.service(), &session_hash(&cookie)).await.unwrap();
    assert!(ends(&mut events).await, "the other instance's stream ended");
}
