//! Triage through the REST API and the service: labels (PATCH and the `label` filter), assignees
//! (the service function and the `assignee` filter), the `reporter` filter and full-text search.

use crate::common::ingest::text_report;
use crate::common::*;
use serde_json::{Value, json};
use svc_core::model::{Author, NewReport, Report};
use svc_core::triage::{Label, LabelChange, LabelSet, ReportIds};
use svc_service::principal::Principal;
use svc_service::triage::Triage;
use svc_service::{ServiceError, triage};

fn ids(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

fn report_ids(reports: &[&Report]) -> ReportIds {
    ReportIds::parse(&reports.iter().map(|r| r.id.clone()).collect::<Vec<_>>()).unwrap()
}

/// A principal for service calls: a key of the app's project with these scopes.
async fn agent(app: &TestApp, scopes: &[&str]) -> Principal {
    let (key_id, _) = app.mint(scopes).await;
    Principal::ProjectKey(app.store.get_key(&key_id).await.unwrap().unwrap())
}

/// Files a report saying `text` by the reporter `author_id`.
async fn filed_by(app: &TestApp, text: &str, author_id: &str) -> Report {
    let seeded = app.seed(Seed::text(text)).await;
    let report = Report {
        id: svc_core::ids::new_id(),
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: Some(author_id.into()), label: None },
        ..seeded
    };
    app.store
        .create_report(NewReport { report: report.clone(), blob_ids: Vec::new(), idempotency_key: None })
        .await
        .unwrap();
    report
}

#[tokio::test]
async fn reports_carry_their_assignee_and_labels() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("needs triage")).await;
    let got = app.get(&app.p(&format!("/feedback/{}", report.id)), &app.token).await.ok(200).clone();
    assert_eq!((&got["assignee"], &got["labels"]), (&Value::Null, &json!([])));
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!((&page["items"][0]["assignee"], &page["items"][0]["labels"]), (&Value::Null, &json!([])));

    app.patch(&app.p(&format!("/feedback/{}", report.id)), &app.token, json!({"labels": ["UX", "later"]}))
        .await
        .ok(200);
    let by = agent(&app, &["feedback:write"]).await;
    let user_a = member(&app, "a@example.com").await;
    triage::apply_to(
        app.service(),
        &by,
        std::slice::from_ref(&app.project),
        &report_ids(&[&report]),
        Triage::assignee(Some(user_a.as_str()).map(str::to_string)),
    )
    .await
    .unwrap();
    let got = app.get(&app.p(&format!("/feedback/{}", report.id)), &app.token).await.ok(200).clone();
    assert_eq!((&got["assignee"], &got["labels"]), (&json!(user_a), &json!(["UX", "later"])));
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!((&page["items"][0]["assignee"], &page["items"][0]["labels"]), (&json!(user_a), &json!(["UX", "later"])));
}

#[tokio::test]
async fn patch_replaces_the_labels_and_may_set_the_status_too() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("slow page")).await;
    let path = app.p(&format!("/feedback/{}", report.id));

    let answer = app.patch(&path, &app.token, json!({"labels": [" Bug ", "ui", "BUG"]})).await.ok(200).clone();
    assert_eq!(answer, json!({"id": report.id, "status": "new", "labels": ["Bug", "ui"]}));
    let answer =
        app.patch(&path, &app.token, json!({"status": "triaged", "labels": ["ui", "later"]})).await.ok(200).clone();
    assert_eq!(answer, json!({"id": report.id, "status": "triaged", "labels": ["ui", "later"]}));
    // A status alone answers as before, without labels.
    let answer = app.patch(&path, &app.token, json!({"status": "fixed"})).await.ok(200).clone();
    assert_eq!(answer, json!({"id": report.id, "status": "fixed"}));
    let answer = app.patch(&path, &app.token, json!({"labels": []})).await.ok(200).clone();
    assert_eq!(answer, json!({"id": report.id, "status": "fixed", "labels": []}));

    let got = app.get(&path, &app.token).await.ok(200).clone();
    assert_eq!(got["labels"], json!([]));
    // Only status changes are in the history.
    assert_eq!(got["statusHistory"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn patch_refuses_bad_labels_and_then_changes_nothing() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("slow page")).await;
    let path = app.p(&format!("/feedback/{}", report.id));
    app.patch(&path, &app.token, json!({"labels": ["keep"]})).await.ok(200);
    let twenty_one: Vec<String> = (0..21).map(|n| format!("label {n}")).collect();
    for body in [
        json!({"labels": null}),
        json!({"labels": "bug"}),
        json!({"labels": [1]}),
        json!({"labels": [null]}),
        json!({"labels": ["  "]}),
        json!({"labels": ["x".repeat(51)]}),
        json!({"labels": ["a\u{7}b"]}),
        json!({"labels": twenty_one}),
        // Both fields are checked before either is applied.
        json!({"status": "fixed", "labels": [""]}),
        json!({"status": "done", "labels": ["fine"]}),
        json!({}),
    ] {
        let message = app.patch(&path, &app.token, body.clone()).await.error(400, "BAD_REQUEST");
        assert!(!message.is_empty(), "{body}");
    }
    let message = app.patch(&path, &app.token, json!({"labels": ["x".repeat(51)]})).await.error(400, "BAD_REQUEST");
    assert!(message.contains("labels") && message.contains("50"), "{message}");
    let got = app.get(&path, &app.token).await.ok(200).clone();
    assert_eq!((&got["status"], &got["labels"]), (&json!("new"), &json!(["keep"])));
    // Fifty characters once trimmed is fine.
    let fifty = format!("  {}  ", "é".repeat(50));
    let answer = app.patch(&path, &app.token, json!({"labels": [fifty]})).await.ok(200).clone();
    assert_eq!(answer["labels"], json!(["é".repeat(50)]));
}

#[tokio::test]
async fn patching_labels_needs_feedback_write_on_a_report_of_the_project() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("slow page")).await;
    let path = app.p(&format!("/feedback/{}", report.id));
    let (_, reader) = app.mint(&["feedback:read"]).await;
    let message = app.patch(&path, &reader, json!({"labels": ["x"]})).await.error(403, "FORBIDDEN");
    assert!(message.contains("feedback:write"), "{message}");
    let (other, other_key) = app.other_project().await;
    let foreign = seed_report(&app.store, &other.id, Seed::text("elsewhere")).await;
    app.patch(&app.p(&format!("/feedback/{}", foreign.id)), &app.token, json!({"labels": ["x"]}))
        .await
        .error(404, "NOT_FOUND");
    app.patch(&format!("/api/v1/projects/{}/feedback/{}", other.id, foreign.id), &other_key, json!({"labels": ["x"]}))
        .await
        .ok(200);
    assert_eq!(app.store.get_report(&report.id).await.unwrap().unwrap().labels, Vec::<String>::new());

    // The service checks the principal itself.
    let by = agent(&app, &["feedback:read"]).await;
    let label = Label::parse("x").unwrap();
    let refused = triage::apply_to(
        app.service(),
        &by,
        std::slice::from_ref(&app.project),
        &report_ids(&[&report]),
        Triage::labels(LabelChange::Add(vec![label])),
    )
    .await
    .unwrap_err();
    assert!(matches!(refused, ServiceError::Refused(_)), "{refused}");
}

#[tokio::test]
async fn the_label_filter_ignores_case_and_a_project_keeps_one_spelling() {
    let app = TestApp::new().await;
    let first = app.seed(Seed::text("first")).await;
    let second = app.seed(Seed::text("second")).await;
    let third = app.seed(Seed::text("third")).await;
    app.patch(&app.p(&format!("/feedback/{}", first.id)), &app.token, json!({"labels": ["Needs Design"]}))
        .await
        .ok(200);
    let answer = app
        .patch(&app.p(&format!("/feedback/{}", second.id)), &app.token, json!({"labels": ["needs design", "later"]}))
        .await
        .ok(200)
        .clone();
    assert_eq!(answer["labels"], json!(["Needs Design", "later"]));

    let page = app.get(&app.p("/feedback?label=NEEDS%20DESIGN"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![second.id.clone(), first.id.clone()]);
    let page = app.get(&app.p("/feedback?label=later&status=new"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![second.id.clone()]);
    for query in ["label=nope", "label=", "label=later&status=fixed"] {
        let page = app.get(&app.p(&format!("/feedback?{query}")), &app.token).await.ok(200).clone();
        assert_eq!(page, json!({"items": [], "nextCursor": null}), "{query}");
    }
    let counts = triage::labels(app.service(), &app.project).await.unwrap();
    let counts: Vec<(String, i64)> = counts.into_iter().map(|c| (c.label, c.count)).collect();
    assert_eq!(counts, vec![("later".to_string(), 1), ("Needs Design".to_string(), 2)]);
    let _ = third;
}

#[tokio::test]
async fn labels_change_on_many_reports_at_once_or_not_at_all() {
    let app = TestApp::new().await;
    let reports = [app.seed(Seed::text("a")).await, app.seed(Seed::text("b")).await, app.seed(Seed::text("c")).await];
    let all = report_ids(&reports.iter().collect::<Vec<_>>());
    let by = agent(&app, &["feedback:write"]).await;
    let projects = std::slice::from_ref(&app.project);
    let store = app.service();

    let changed = triage::apply_to(
        store,
        &by,
        projects,
        &all,
        Triage::labels(LabelChange::Add(vec![Label::parse("Regression").unwrap()])),
    )
    .await
    .unwrap();
    assert!(changed.iter().all(|labelled| labelled.labels == Some(vec!["Regression".to_string()])), "{changed:?}");
    let two = report_ids(&[&reports[0], &reports[1]]);
    let changed = triage::apply_to(
        store,
        &by,
        projects,
        &two,
        Triage::labels(LabelChange::Remove(vec![Label::parse("regression").unwrap()])),
    )
    .await
    .unwrap();
    assert!(changed.iter().all(|labelled| labelled.labels == Some(Vec::new())), "{changed:?}");
    let page = app.get(&app.p("/feedback?label=regression"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![reports[2].id.clone()]);

    // One report of another project: nothing changes anywhere.
    let (other, _) = app.other_project().await;
    let foreign = seed_report(&app.store, &other.id, Seed::text("elsewhere")).await;
    let mixed = report_ids(&[&reports[0], &foreign]);
    let refused = triage::apply_to(
        store,
        &by,
        projects,
        &mixed,
        Triage::labels(LabelChange::Add(vec![Label::parse("x").unwrap()])),
    )
    .await
    .unwrap_err();
    assert!(matches!(refused, ServiceError::NotFound(_)), "{refused}");
    assert!(app.store.get_report(&reports[0].id).await.unwrap().unwrap().labels.is_empty());

    // More than twenty on one report: refused for all.
    let nineteen: Vec<String> = (0..19).map(|n| format!("l{n}")).collect();
    triage::apply_to(
        store,
        &by,
        projects,
        &report_ids(&[&reports[1]]),
        Triage::labels(LabelChange::Replace(LabelSet::parse(&nineteen).unwrap())),
    )
    .await
    .unwrap();
    let refused = triage::apply_to(
        store,
        &by,
        projects,
        &all,
        Triage::labels(LabelChange::Add(vec![Label::parse("two more").unwrap()])),
    )
    .await;
    assert!(refused.is_ok(), "twenty is the limit, not over it: {refused:?}");
    let refused = triage::apply_to(
        store,
        &by,
        projects,
        &all,
        Triage::labels(LabelChange::Add(vec![Label::parse("one too many").unwrap()])),
    )
    .await
    .unwrap_err();
    assert!(matches!(&refused, ServiceError::Invalid(message) if message.contains(&reports[1].id)), "{refused}");
    assert_eq!(app.store.get_report(&reports[0].id).await.unwrap().unwrap().labels, vec!["two more".to_string()]);
}

#[tokio::test]
async fn the_assignee_filter_finds_a_users_reports_or_the_unassigned() {
    let app = TestApp::new().await;
    let reports = [app.seed(Seed::text("a")).await, app.seed(Seed::text("b")).await, app.seed(Seed::text("c")).await];
    let by = agent(&app, &["feedback:write"]).await;
    let projects = std::slice::from_ref(&app.project);
    let user_a = member(&app, "a@example.com").await;
    triage::apply_to(
        app.service(),
        &by,
        projects,
        &report_ids(&[&reports[0], &reports[2]]),
        Triage::assignee(Some(user_a.as_str()).map(str::to_string)),
    )
    .await
    .unwrap();
    let page = app.get(&app.p(&format!("/feedback?assignee={user_a}")), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![reports[2].id.clone(), reports[0].id.clone()]);
    let page = app.get(&app.p("/feedback?assignee=none"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![reports[1].id.clone()]);
    let page = app.get(&app.p("/feedback?assignee=user-b"), &app.token).await.ok(200).clone();
    assert!(ids(&page).is_empty());

    triage::apply_to(app.service(), &by, projects, &report_ids(&[&reports[0]]), Triage::assignee(None)).await.unwrap();
    let page = app.get(&app.p("/feedback?assignee=none"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![reports[1].id.clone(), reports[0].id.clone()]);
    let reader = agent(&app, &["feedback:read"]).await;
    let refused = triage::apply_to(
        app.service(),
        &reader,
        projects,
        &report_ids(&[&reports[1]]),
        Triage::assignee(Some(user_a.as_str()).map(str::to_string)),
    )
    .await
    .unwrap_err();
    assert!(matches!(refused, ServiceError::Refused(_)), "{refused}");
}

#[tokio::test]
async fn the_reporter_filter_finds_one_reporters_reports() {
    let app = TestApp::new().await;
    let first = filed_by(&app, "first", "ada@example.com").await;
    let other = filed_by(&app, "other", "grace").await;
    let second = filed_by(&app, "second", "ada@example.com").await;
    app.store.run_maintenance_once().await.unwrap();
    let page = app.get(&app.p("/feedback?reporter=ada%40example.com"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![second.id.clone(), first.id.clone()]);
    let page = app.get(&app.p("/feedback?reporter=grace&status=new"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![other.id.clone()]);
    let page = app.get(&app.p("/feedback?reporter=ada"), &app.token).await.ok(200).clone();
    assert!(ids(&page).is_empty());
}

#[tokio::test]
async fn a_search_finds_words_of_reports_and_their_comments() {
    let app = TestApp::new().await;
    let checkout = app.seed(Seed::text("The checkout total is wrong")).await;
    let upload = app.seed(Seed::text("Profile photo upload fails").channel("idea")).await;
    app.seed_comment(&upload.id, "Traced to the resize worker", true).await;
    app.store.run_maintenance_once().await.unwrap();

    async fn search(app: &TestApp, query: &str) -> Resp {
        app.get(&app.p(&format!("/feedback?search={query}")), &app.token).await
    }
    assert_eq!(ids(search(&app, "worker").await.ok(200)), vec![upload.id.clone()]);
    assert_eq!(ids(search(&app, "CHECKOUT%20wrong").await.ok(200)), vec![checkout.id.clone()]);
    assert_eq!(ids(search(&app, "%22total%20is%20wrong%22").await.ok(200)), vec![checkout.id.clone()]);
    assert_eq!(ids(search(&app, "upload%20or%20checkout").await.ok(200)), vec![upload.id.clone(), checkout.id.clone()]);
    assert_eq!(ids(search(&app, "the%20-worker").await.ok(200)), vec![checkout.id.clone()]);
    let page = app.get(&app.p("/feedback?search=worker&channelKey=bug"), &app.token).await.ok(200).clone();
    assert!(ids(&page).is_empty());
    // Blank is no search; what users type never fails.
    assert_eq!(ids(search(&app, "%20%20").await.ok(200)).len(), 2);
    for typed in ["%22", "%27", "NEAR(", "a%20AND", "*", "body%3Ax", "-", "(", "%5C", "%E6%97%A5"] {
        search(&app, typed).await.ok(200);
    }
    let message = search(&app, &"x".repeat(501)).await.error(400, "BAD_REQUEST");
    assert!(message.contains("search"), "{message}");
}

#[tokio::test]
async fn paging_through_a_search_sees_each_match_once_newest_first() {
    let app = TestApp::new().await;
    let mut alphas = Vec::new();
    for n in 0..23 {
        alphas.push(app.seed(Seed::text(&format!("alpha {n}"))).await.id);
        app.seed(Seed::text(&format!("beta {n}"))).await;
    }
    app.store.run_maintenance_once().await.unwrap();
    alphas.reverse();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => app.p("/feedback?search=alpha&limit=5"),
            Some(before) => app.p(&format!("/feedback?search=alpha&limit=5&before={before}")),
        };
        let page = app.get(&path, &app.token).await.ok(200).clone();
        seen.extend(ids(&page));
        match &page["nextCursor"] {
            Value::String(next) => cursor = Some(next.clone()),
            _ => break,
        }
        assert!(seen.len() < 100, "paging does not end");
    }
    assert_eq!(seen, alphas);
}

#[tokio::test]
async fn the_openapi_document_shows_the_triage_fields_and_filters() {
    let app = TestApp::new().await;
    let doc = app.raw("GET", "/api/v1/openapi.json", None, None).await.ok(200).clone();
    let report = &doc["components"]["schemas"]["ReportView"]["properties"];
    assert!(report["assignee"].is_object() && report["labels"].is_object(), "{report}");
    let patch = &doc["components"]["schemas"]["ReportPatch"]["properties"];
    assert!(patch["labels"].is_object() && patch["status"].is_object(), "{patch}");
    let parameters: Vec<&str> = doc["paths"]["/api/v1/projects/{projectId}/feedback"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in ["assignee", "label", "reporter", "search"] {
        assert!(parameters.contains(&name), "{name} missing from {parameters:?}");
    }
}

/// A new member of the app's organization; returns their user id.
async fn member(app: &TestApp, email: &str) -> String {
    use svc_service::accounts::{self, NewUser};
    let new = NewUser::parse(email, "Member", svc_core::secret::Secret::new("a long enough password")).unwrap();
    let role = svc_core::account::Role::Member;
    accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.unwrap().id
}

/// A NUL in any list filter (the API fuzzer sends them) is an empty list, never a database error:
/// PostgreSQL refuses NUL in text and SQLite's full-text query syntax ends a string at it.
async fn nul_filters_match_nothing(app: &TestApp) {
    app.seed(Seed::text("checkout broke")).await;
    app.store.run_maintenance_once().await.unwrap();
    for query in
        ["reporter=%00ab", "search=check%00out", "status=new%00", "channelKey=bug%00", "artifactId=%00", "label=%00x"]
    {
        let resp = app.rest("GET", &app.p(&format!("/feedback?{query}")), None).await;
        let body = resp.ok(200);
        assert!(body["items"].is_array(), "{query}: {body}");
        if !query.starts_with("search") {
            assert_eq!(body["items"], json!([]), "{query}");
        }
    }
}

#[tokio::test]
async fn sqlite_nul_filters_match_nothing() {
    nul_filters_match_nothing(&TestApp::new().await).await;
}

#[tokio::test]
async fn postgres_nul_filters_match_nothing() {
    if let Some(app) = TestApp::postgres().await {
        nul_filters_match_nothing(&app).await;
    }
}

#[tokio::test]
async fn the_event_feed_pages_with_a_cursor_in_commit_order() {
    let app = TestApp::new().await;
    let first = app.file_report(text_report("First")).await;
    let second = app.file_report(text_report("Second")).await;
    app.rest("PATCH", &app.p(&format!("/feedback/{first}")), Some(json!({"status": "fixed"}))).await.ok(200);

    let page = app.rest("GET", &app.p("/events?limit=2"), None).await.ok(200).clone();
    let items = page["items"].as_array().unwrap();
    let filed: Vec<(&Value, &Value)> = items.iter().map(|e| (&e["type"], &e["reportId"])).collect();
    assert_eq!(filed, [(&json!("report.created"), &json!(first)), (&json!("report.created"), &json!(second))]);
    assert_eq!(items[0]["data"], json!({"channelKey": "bug"}));
    assert_eq!(items[0]["by"]["kind"], "reporter");
    assert_eq!(page["nextAfter"], items[1]["id"]);

    let next = app.rest("GET", &app.p(&format!("/events?after={}", page["nextAfter"])), None).await.ok(200).clone();
    let changed = &next["items"][0];
    assert_eq!((&changed["type"], &changed["reportId"]), (&json!("report.status_changed"), &json!(first)));
    assert_eq!(changed["data"], json!({"from": "new", "to": "fixed"}));
    assert_eq!(changed["by"]["kind"], "agent");
    assert!(changed["at"].as_str().is_some_and(|at| at.ends_with('Z')));
    // Nothing new: an empty page that hands the same cursor back.
    let idle = app.rest("GET", &app.p(&format!("/events?after={}", next["nextAfter"])), None).await.ok(200).clone();
    assert_eq!((idle["items"].as_array().unwrap().len(), &idle["nextAfter"]), (0, &next["nextAfter"]));

    // Parameters are checked by name; the feed is for keys that read reports.
    let refused = app.rest("GET", &app.p("/events?after=soon"), None).await.error(400, "BAD_REQUEST");
    assert!(refused.starts_with("after:"), "{refused}");
    app.rest("GET", &app.p("/events?after=-1"), None).await.error(400, "BAD_REQUEST");
    app.rest("GET", &app.p("/events?limit=0"), None).await.error(400, "BAD_REQUEST");
    let (_, writer) = app.mint(&["feedback:write"]).await;
    app.get(&app.p("/events"), &writer).await.error(403, "FORBIDDEN");
}
