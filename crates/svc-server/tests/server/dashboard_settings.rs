//! A project's Settings, Retention and Audit log tabs, driven as a browser would (session cookie,
//! forms, CSRF token): renaming; deleting only after the exact name is typed (and then nothing of
//! the project is left, its blob files included); retention run by housekeeping; the log of who
//! did what.

use serde_json::{Value, json};
use svc_core::account::Role;
use svc_core::model::{Author, NewReport, Project, Report};
use svc_core::{ids, time};
use svc_service::{accounts, audit, housekeeping, projects};

use super::common::*;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A person of the default organization with this role, signed in: their session cookie.
async fn person(app: &TestApp, email: &str, name: &str, role: Role) -> String {
    let new = accounts::NewUser::parse(email, name, svc_core::secret::Secret::new(PASSWORD)).unwrap();
    accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.unwrap();
    app.sign_in(email, PASSWORD).await
}

/// Posts a dashboard form with the session's CSRF token.
async fn submit(app: &TestApp, cookie: &str, path: &str, fields: &[(&str, &str)]) -> Resp {
    let csrf = csrf_of(cookie);
    let mut all = vec![("_csrf", csrf.as_str())];
    all.extend_from_slice(fields);
    app.post_form(path, &all, Some(cookie)).await
}

/// A report in the project filed at `at` (its id carries that time, as a report filed then has),
/// with a screenshot bound to it; returns the report and the blob id.
async fn report_with_screenshot(app: &TestApp, project_id: &str, at: i64, text: &str) -> (Report, String) {
    let blob_id = app.seed_blob(project_id, "screenshot", "image/png", b"\x89PNG\r\n\x1a\nnot really", None).await;
    let blocks =
        serde_json::from_value(json!([{"type": "text", "text": text}, {"type": "screenshot", "blobId": blob_id}]))
            .unwrap();
    let report = Report {
        id: format!("{at:012x}{}", &ids::new_id()[12..]),
        project_id: project_id.into(),
        channel_key: "bug".into(),
        status: "new".parse().unwrap(),
        title: text.into(),
        blocks,
        context: serde_json::from_value(serde_json::json!({"url": "https://app.example.com/"})).unwrap(),
        identity: None,
        identity_error: None,
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: None, label: None },
        artifact_id: None,
        url: Some("https://app.example.com/".into()),
        created_at: at,
        updated_at: at,
        assignee: None,
        labels: Vec::new(),
    };
    let new = NewReport { report: report.clone(), blob_ids: vec![blob_id.clone()], idempotency_key: None };
    app.store.create_report(new).await.unwrap();
    (report, blob_id)
}

/// Whether the blob's object is in the app's local blob folder.
fn blob_file_exists(app: &TestApp, blob_id: &str) -> bool {
    app.dir.path().join("blobs").join(svc_blob::OBJECT_FOLDER).join(blob_id).exists()
}

async fn project_named(app: &TestApp, name: &str) -> Project {
    projects::create_project(app.service(), &svc_service::principal::Principal::Operator, &app.project.org_id, name)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_rename_the_project_and_refuse_a_blank_name() {
    let app = TestApp::new().await;
    let owner = person(&app, "owner@example.com", "Olga Owner", Role::Owner).await;
    let path = format!("/projects/{}/settings", app.pid());

    let page = app.get_page(&path, Some(&owner)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(&app.project.project_key), "the page shows the public key");
    assert!(page.text.contains("Delete this project"));

    let renamed = submit(&app, &owner, &path, &[("name", "  Storefront  ")]).await;
    assert_eq!(renamed.status, 303, "{}", renamed.text);
    assert_eq!(renamed.location(), Some(format!("{path}?saved=name").as_str()));
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["name"], "Storefront");
    let page = app.get_page(&format!("{path}?saved=name"), Some(&owner)).await;
    assert!(page.text.contains("The project is renamed."));

    let blank = submit(&app, &owner, &path, &[("name", "   ")]).await;
    assert_eq!(blank.status, 400);
    assert!(blank.text.contains("name must be 1 to 100 characters"), "{}", blank.text);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["name"], "Storefront");

    // A member sees the settings but cannot change them.
    let member = person(&app, "member@example.com", "Mo Member", Role::Member).await;
    let page = app.get_page(&path, Some(&member)).await;
    assert_eq!(page.status, 200);
    assert!(!page.text.contains("Delete this project"));
    assert!(page.text.contains("Only an owner"));
    assert_eq!(submit(&app, &member, &path, &[("name", "Mine now")]).await.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_project_takes_its_exact_name_and_removes_it_blobs_and_all() {
    let app = TestApp::new().await;
    let owner = person(&app, "owner@example.com", "Olga Owner", Role::Owner).await;
    let doomed = project_named(&app, "Old Shop").await;
    let now = time::now_ms();
    let (kept_report, kept_blob) = report_with_screenshot(&app, app.pid(), now - 5, "kept report").await;
    let (doomed_report, doomed_blob) = report_with_screenshot(&app, &doomed.id, now - 4, "doomed report").await;
    let unbound = app.seed_blob(&doomed.id, "screenshot", "image/png", b"\x89PNG\r\n\x1a\nunbound", None).await;
    let (_, doomed_key) = mint_for(app.service(), &doomed, &["feedback:read"]).await;
    let doomed_feedback = format!("/api/v1/projects/{}/feedback", doomed.id);
    assert_eq!(app.get(&doomed_feedback, &doomed_key).await.status, 200);
    for blob in [&kept_blob, &doomed_blob, &unbound] {
        assert!(blob_file_exists(&app, blob), "blob {blob} is stored as a file");
    }
    let delete = format!("/projects/{}/delete", doomed.id);

    // A wrong name (here: the wrong case) deletes nothing and says why.
    let refused = submit(&app, &owner, &delete, &[("confirm", "old shop")]).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.text.contains("type its name exactly"), "{}", refused.text);
    assert!(refused.text.contains("Nothing was deleted."));
    assert!(app.store.get_project(&doomed.id).await.unwrap().is_some());
    assert!(blob_file_exists(&app, &doomed_blob));

    // A member may not delete, whatever they type.
    let member = person(&app, "member@example.com", "Mo Member", Role::Member).await;
    assert_eq!(submit(&app, &member, &delete, &[("confirm", "Old Shop")]).await.status, 403);
    assert!(app.store.get_project(&doomed.id).await.unwrap().is_some());

    let deleted = submit(&app, &owner, &delete, &[("confirm", "Old Shop")]).await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    assert_eq!(deleted.location(), Some("/projects?deleted=1"));
    let list = app.get_page("/projects?deleted=1", Some(&owner)).await;
    assert!(list.text.contains("The project was deleted"));
    assert!(!list.text.contains("Old Shop"), "the project is no longer listed");

    assert_eq!(app.store.get_project(&doomed.id).await.unwrap(), None);
    assert_eq!(app.store.get_report(&doomed_report.id).await.unwrap(), None);
    assert!(!blob_file_exists(&app, &doomed_blob), "the report's screenshot file is gone");
    assert!(!blob_file_exists(&app, &unbound), "the unbound upload's file is gone");
    assert!(app.store.pending_blob_deletions(10).await.unwrap().is_empty(), "nothing left to retry");
    assert_eq!(app.get(&doomed_feedback, &doomed_key).await.status, 401, "its keys no longer work");
    assert_eq!(app.get_page(&format!("/projects/{}/settings", doomed.id), Some(&owner)).await.status, 404);

    // The other project is untouched: its report, screenshot file and short id.
    assert!(blob_file_exists(&app, &kept_blob));
    assert_eq!(app.stored(&kept_report.id).await["id"], json!(kept_report.id));
    app.store.run_maintenance_once().await.unwrap();
    let short = ids::short_id(&kept_report.id).to_string();
    let found = app.store.find_reports_by_short_id(&[app.pid().to_string()], &short, 5).await.unwrap();
    assert_eq!(found.len(), 1);

    // The organization's log names who deleted what.
    let log = audit::list_for_org(app.service(), &app.project.org_id, None, 10).await.unwrap();
    let event = log.iter().find(|e| e.action == "project.deleted").expect("project.deleted recorded");
    assert_eq!(event.actor.label.as_deref(), Some("Olga Owner"));
    assert_eq!(event.detail["name"], "Old Shop");
    assert_eq!(event.detail["reports"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_set_in_the_dashboard_deletes_old_reports_and_their_blobs_in_housekeeping() {
    let app = TestApp::new().await;
    let owner = person(&app, "owner@example.com", "Olga Owner", Role::Owner).await;
    let path = format!("/projects/{}/retention", app.pid());
    let page = app.get_page(&path, Some(&owner)).await;
    assert!(page.text.contains("Off: every report is kept"), "{}", page.text);

    for bad in ["0", "3651", "twelve", "1.5"] {
        let refused = submit(&app, &owner, &path, &[("action", "save"), ("days", bad)]).await;
        assert_eq!(refused.status, 400, "days {bad}: {}", refused.text);
        assert!(refused.text.contains("role=\"alert\""));
    }
    let saved = submit(&app, &owner, &path, &[("action", "save"), ("days", "30")]).await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["retentionDays"], 30);
    let page = app.get_page(&format!("{path}?saved=on"), Some(&owner)).await;
    assert!(page.text.contains("Reports older than <strong>30 days</strong> are deleted"), "{}", page.text);

    let now = time::now_ms();
    let (old, old_blob) = report_with_screenshot(&app, app.pid(), now - 31 * DAY_MS, "old report").await;
    app.seed_comment(&old.id, "a comment on it", false).await;
    let (recent, recent_blob) = report_with_screenshot(&app, app.pid(), now - 29 * DAY_MS, "recent report").await;
    let keeper = project_named(&app, "Keeps everything").await;
    let (ancient, ancient_blob) = report_with_screenshot(&app, &keeper.id, now - 400 * DAY_MS, "ancient report").await;

    housekeeping::run_once(app.service(), &app.state.blobs, now).await;

    assert_eq!(app.rest("GET", &app.p(&format!("/feedback/{}", old.id)), None).await.status, 404);
    assert!(!blob_file_exists(&app, &old_blob), "the old report's screenshot file is gone");
    assert_eq!(app.stored(&recent.id).await["id"], json!(recent.id));
    assert!(blob_file_exists(&app, &recent_blob));
    assert!(app.store.get_report(&ancient.id).await.unwrap().is_some(), "a project without retention keeps all");
    assert!(blob_file_exists(&app, &ancient_blob));
    let log = audit::list(app.service(), &app.project, None, 10).await.unwrap();
    let expired = log.iter().find(|e| e.action == "reports.expired").expect("reports.expired recorded");
    assert_eq!(expired.detail, json!({"count": 1, "days": 30}));
    assert_eq!(expired.actor.kind, "system");

    // Nothing more to delete: nothing more recorded.
    housekeeping::run_once(app.service(), &app.state.blobs, now).await;
    let log = audit::list(app.service(), &app.project, None, 50).await.unwrap();
    assert_eq!(log.iter().filter(|e| e.action == "reports.expired").count(), 1);

    let off = submit(&app, &owner, &path, &[("action", "off")]).await;
    assert_eq!(off.status, 303);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["retentionDays"], Value::Null);

    // Members read the setting but cannot change it.
    let member = person(&app, "member@example.com", "Mo Member", Role::Member).await;
    assert_eq!(app.get_page(&path, Some(&member)).await.status, 200);
    assert_eq!(submit(&app, &member, &path, &[("action", "save"), ("days", "7")]).await.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_days_is_a_rest_project_field() {
    let app = TestApp::new().await;
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["retentionDays"], Value::Null);
    assert_eq!(app.patch_project(json!({"retentionDays": 90})).await["retentionDays"], 90);
    assert_eq!(app.patch_project(json!({"name": "Renamed"})).await["retentionDays"], 90, "absent keeps it");
    assert_eq!(app.patch_project(json!({"retentionDays": null})).await["retentionDays"], Value::Null);
    for bad in [json!(0), json!(3651), json!("30"), json!(1.5)] {
        let resp = app.rest("PATCH", &app.p(""), Some(json!({"retentionDays": bad}))).await;
        resp.error(400, "BAD_REQUEST");
    }
    let document = app.raw("GET", "/api/v1/openapi.json", None, None).await;
    let schemas = &document.ok(200)["components"]["schemas"];
    let patch = &schemas["ProjectPatch"]["properties"]["retentionDays"];
    assert_eq!((patch["minimum"].as_i64(), patch["maximum"].as_i64()), (Some(1), Some(3650)), "{patch}");
    assert!(schemas["ProjectView"]["properties"]["retentionDays"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_shows_who_did_what_newest_first_in_pages() {
    let app = TestApp::new().await;
    let owner = person(&app, "owner@example.com", "Olga Owner", Role::Owner).await;
    let setup_name = app.rest("GET", "/api/v1/me", None).await.ok(200)["name"].as_str().unwrap().to_string();

    // A key minted through REST (by the setup token), a setting changed by a person, a status set
    // through REST by the minted key, a draft published by a person.
    let minted = app
        .post(&app.p("/keys"), &app.token, json!({"name": "Triage bot", "scopes": ["feedback:read", "feedback:write"]}))
        .await;
    let bot_key = minted.ok(201)["key"].as_str().unwrap().to_string();
    let saved = submit(&app, &owner, &format!("/projects/{}/retention", app.pid()), &[("days", "90")]).await;
    assert_eq!(saved.status, 303);
    let report = app.seed(Seed::text("The save button does nothing")).await;
    let patched = app.patch(&app.p(&format!("/feedback/{}", report.id)), &bot_key, json!({"status": "triaged"})).await;
    patched.ok(200);
    let draft = app.seed_comment(&report.id, "Fixed in 1.2", true).await;
    let published = submit(&app, &owner, &format!("/reports/{}/comments/{}/publish", report.id, draft.id), &[]).await;
    assert_eq!(published.status, 303, "{}", published.text);

    let member = person(&app, "member@example.com", "Mo Member", Role::Member).await;
    let page = app.get_page(&format!("/projects/{}/audit", app.pid()), Some(&member)).await;
    assert_eq!(page.status, 200, "members read the log");
    let short = ids::short_id(&report.id);
    // Newest first, each with who and what kind of actor.
    let rows = [
        ("Olga Owner", "person", format!("published a draft on report {short}")),
        ("Triage bot", "key", format!("moved report {short} from new to triaged")),
        ("Olga Owner", "person", "set retention to 90 days".to_string()),
        (setup_name.as_str(), "key", "minted the key Triage bot (feedback:read feedback:write)".to_string()),
    ];
    let mut at = 0;
    for (who, kind, what) in &rows {
        let row = format!(
            "<td data-label=\"Who\">{who} <span class=\"badge\">{kind}</span></td>\n    <td data-label=\"What\">{what}</td>"
        );
        let found =
            page.text[at..].find(&row).unwrap_or_else(|| panic!("row {row:?} after byte {at} in {}", page.text));
        at += found + row.len();
    }
    assert!(!page.text.contains("rel=\"next\""), "one page only");

    // Older events are a page further on.
    for i in 0..60 {
        audit::record(
            app.service(),
            &app.project,
            &audit::command_line(),
            "flag.set",
            json!({"key": format!("f{i}"), "enabled": true}),
        )
        .await;
    }
    let first = app.get_page(&format!("/projects/{}/audit", app.pid()), Some(&owner)).await;
    assert_eq!(first.text.matches("<td data-label=\"What\">").count(), 50);
    assert!(first.text.contains("turned the flag f59 on"));
    let marker = "audit?before=";
    let start = first.text.find(marker).expect("an Older link") + marker.len();
    let before = &first.text[start..start + 24];
    let second = app.get_page(&format!("/projects/{}/audit?before={before}", app.pid()), Some(&owner)).await;
    let total = audit::list(app.service(), &app.project, None, 200).await.unwrap().len();
    assert_eq!(second.text.matches("<td data-label=\"What\">").count(), total - 50);
    assert!(second.text.contains("turned the flag f0 on"));
    assert!(second.text.contains("minted the key Triage bot"));
    assert!(!second.text.contains("turned the flag f59 on"));
    assert!(!second.text.contains("rel=\"next\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_object_that_cannot_be_deleted_at_once_is_deleted_by_housekeeping_later() {
    let app = TestApp::new().await;
    let doomed = project_named(&app, "Flaky storage").await;
    let (_, blob_id) = report_with_screenshot(&app, &doomed.id, time::now_ms(), "a report").await;
    // The blob store cannot delete the object for now: a folder stands where its file was.
    let object = app.dir.path().join("blobs").join(svc_blob::OBJECT_FOLDER).join(&blob_id);
    std::fs::remove_file(&object).unwrap();
    std::fs::create_dir(&object).unwrap();
    std::fs::write(object.join("in the way"), b"x").unwrap();

    let deleted = projects::delete_project(app.service(), &svc_service::principal::Principal::Operator, &doomed)
        .await
        .expect("the project is deleted even when an object is not");
    assert_eq!((deleted.reports, deleted.blobs), (1, 1));
    assert_eq!(app.store.get_project(&doomed.id).await.unwrap(), None);
    assert_eq!(app.store.pending_blob_deletions(10).await.unwrap(), vec![blob_id.clone()], "kept for a retry");

    // Still failing: still queued.
    housekeeping::run_once(app.service(), &app.state.blobs, time::now_ms()).await;
    assert_eq!(app.store.pending_blob_deletions(10).await.unwrap(), vec![blob_id.clone()]);

    // The storage works again: the next pass deletes the object and empties the queue.
    std::fs::remove_dir_all(&object).unwrap();
    std::fs::write(&object, b"the object").unwrap();
    housekeeping::run_once(app.service(), &app.state.blobs, time::now_ms()).await;
    assert!(!object.exists(), "the object is deleted");
    assert!(app.store.pending_blob_deletions(10).await.unwrap().is_empty());
}
