//! Organization-wide keys on the tool endpoint: lists span every project of the organization, reads
//! and triage reach any of them, and writes that create something name the project.

use crate::common::*;
use crate::mcp_support::*;
use serde_json::{Value, json};
use svc_core::model::Project;

struct Org {
    app: TestApp,
    other: Project,
    key: String,
    key_id: String,
}

async fn org() -> Org {
    let app = TestApp::new().await;
    let (other, _) = app.other_project().await;
    let key = app.mint_org_wide(&["feedback:read", "feedback:write"]).await;
    let key_id = app.store.find_key_by_hash(&svc_core::secret::hash_secret(&key)).await.unwrap().unwrap().key.id;
    Org { app, other, key, key_id }
}

#[tokio::test]
async fn list_reports_spans_every_project_with_project_and_project_id() {
    let Org { app, other, key, .. } = org().await;
    let here = app.seed(Seed::text("in Default")).await;
    let there = seed_report(&app.store, &other.id, Seed::text("in Other").status("triaged")).await;
    let items = tool_json(&app, &key, "list_reports", json!({})).await;
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], json!(there.id), "newest first across projects");
    assert_eq!(items[0]["project"], json!("Other"));
    assert_eq!(items[0]["projectId"], json!(other.id));
    assert_eq!(items[1]["id"], json!(here.id));
    assert_eq!(items[1]["project"], json!("Default"));
    assert_eq!(items[1]["projectId"], json!(app.project.id));
    let mut fields = keys_of(&items[0]);
    fields.sort();
    assert_eq!(
        fields,
        ["artifactId", "channelKey", "createdAt", "id", "project", "projectId", "shortId", "status", "title", "url"]
    );
    // Filters still apply across projects.
    let triaged = tool_json(&app, &key, "list_reports", json!({"status": "triaged"})).await;
    assert_eq!(triaged.as_array().unwrap().len(), 1);
    assert_eq!(triaged[0]["id"], json!(there.id));

    // A project key of either project still sees only its own.
    let (_, own) = app.mint(&["feedback:read"]).await;
    let items = tool_json(&app, &own, "list_reports", json!({})).await;
    assert_eq!(items.as_array().unwrap().len(), 1);
    assert_eq!(items[0]["id"], json!(here.id));
    assert!(items[0].get("project").is_none());
}

#[tokio::test]
async fn get_report_set_status_and_add_comment_reach_every_project_of_the_org() {
    let Org { app, other, key, key_id } = org().await;
    let here = app.seed(Seed::text("in Default")).await;
    let there = seed_report(&app.store, &other.id, Seed::text("in Other")).await;
    for (report, project) in [(&here, &app.project), (&there, &other)] {
        for reference in [report.id.clone(), report.id[18..].to_string()] {
            let out = tool(&app, &key, "get_report", json!({"id": reference})).await;
            assert!(!out.is_error, "{}", out.text);
            assert!(out.text.contains(&format!("project: {} (`{}`)", project.name, project.id)), "{}", out.text);
        }
        let answer = tool_json(&app, &key, "set_status", json!({"id": report.id, "status": "fixed"})).await;
        assert_eq!(answer, json!({"id": report.id, "status": "fixed"}));
        let comment = tool_json(&app, &key, "add_comment", json!({"report_id": report.id, "text": "done"})).await;
        assert_eq!(comment["reportId"], json!(report.id));
        assert_eq!(comment["author"], json!(format!("agent:{key_id}")));
        let stored = app.store.get_report(&report.id).await.unwrap().unwrap();
        assert_eq!(stored.status, "fixed");
        let comments = app.store.list_comments(&report.id).await.unwrap();
        assert_eq!(comments.len(), 1);
        assert_eq!(comments[0].project_id, project.id);
        assert!(viewers(&app, &report.id).await.iter().any(|(v, _)| v == &format!("agent:{key_id}")));
    }
}

#[tokio::test]
async fn a_report_of_another_organization_is_out_of_reach() {
    let Org { app, key, .. } = org().await;
    let elsewhere = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let foreign_project = svc_service::projects::create_project(
        app.service(),
        &svc_service::principal::Principal::Operator,
        &elsewhere.id,
        "Foreign",
    )
    .await
    .unwrap();
    let foreign = seed_report(&app.store, &foreign_project.id, Seed::text("not yours")).await;
    assert_eq!(tool_json(&app, &key, "list_reports", json!({})).await, json!([]));
    for (name, arguments) in [
        ("get_report", json!({"id": foreign.id})),
        ("set_status", json!({"id": foreign.id, "status": "fixed"})),
        ("add_comment", json!({"report_id": foreign.id, "text": "hi"})),
    ] {
        tool(&app, &key, name, arguments).await.error_naming(&["no report", &foreign.id]);
    }
    let out = tool(&app, &key, "create_report", json!({"message": "x", "project": foreign_project.id})).await;
    out.error_naming(&["project"]);
}

#[tokio::test]
async fn create_report_and_create_room_need_the_project_argument() {
    let Org { app, other, key, key_id } = org().await;
    for (name, arguments) in
        [("create_report", json!({"message": "where does this go?"})), ("create_room", json!({"artifact_id": "r"}))]
    {
        let out = tool(&app, &key, name, arguments).await;
        // The error names the argument and the projects to choose from.
        out.error_naming(&["project", "required", &app.project.slug, &other.slug]);
    }
    for unknown in ["nope", "pr_000000000000000000000000", "0190000000000000deadbeef"] {
        let out = tool(&app, &key, "create_report", json!({"message": "x", "project": unknown})).await;
        out.error_naming(&["project", unknown]);
        let out = tool(&app, &key, "create_room", json!({"artifact_id": "r", "project": unknown})).await;
        out.error_naming(&["project", unknown]);
    }
    let out = tool(&app, &key, "create_report", json!({"message": "x", "project": 5})).await;
    out.error_naming(&["project"]);
    assert_eq!(tool_json(&app, &key, "list_reports", json!({})).await, json!([]), "nothing was filed");

    // Any of id, public key, slug or name selects the project.
    for reference in [other.id.clone(), other.project_key.clone(), other.slug.clone(), other.name.clone()] {
        let item = tool_json(
            &app,
            &key,
            "create_report",
            json!({"message": format!("for {reference}"), "project": reference}),
        )
        .await;
        assert_eq!(item["projectId"], json!(other.id), "{reference}");
        assert_eq!(item["project"], json!("Other"));
        let stored = app.store.get_report(item["id"].as_str().unwrap()).await.unwrap().unwrap();
        assert_eq!(stored.project_id, other.id);
        assert_eq!(stored.context.extra_text("via"), Some("mcp"));
        assert_eq!(stored.author.id, Some(format!("agent:{key_id}")));
        assert_eq!(stored.author.label.as_deref(), Some("org key"));
    }
    let here = tool_json(&app, &key, "create_report", json!({"message": "for Default", "project": "default"})).await;
    assert_eq!(here["projectId"], json!(app.project.id));

    let room = tool_json(&app, &key, "create_room", json!({"artifact_id": "shared", "project": other.slug})).await;
    assert_eq!(room["created"], json!(true));
    assert_eq!(room["projectId"], json!(other.id));
    assert_eq!(room["project"], json!("Other"));
    assert!(app.store.get_room(&other.id, "shared").await.unwrap().is_some());
    assert!(app.store.get_room(&app.project.id, "shared").await.unwrap().is_none());
    let again = tool_json(&app, &key, "create_room", json!({"artifact_id": "shared", "project": other.name})).await;
    assert_eq!(again["id"], room["id"]);
    assert_eq!(again["created"], json!(false));
}

#[tokio::test]
async fn an_org_wide_read_only_key_reads_everywhere_and_gets_403_on_writes() {
    let Org { app, other, .. } = org().await;
    let reader = app.mint_org_wide(&["feedback:read"]).await;
    let there = seed_report(&app.store, &other.id, Seed::text("in Other")).await;
    assert_eq!(tool_json(&app, &reader, "list_reports", json!({})).await.as_array().unwrap().len(), 1);
    assert!(!tool(&app, &reader, "get_report", json!({"id": there.id})).await.is_error);
    let resp = post(
        &app,
        &reader,
        req(json!(1), "tools/call", json!({"name": "set_status", "arguments": {"id": there.id, "status": "fixed"}})),
    )
    .await;
    assert_eq!(resp.status.as_u16(), 403);
    assert_eq!(
        resp.body,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32003, "message": "forbidden: this key lacks feedback:write"}})
    );
    // The org-wide key is refused by REST but works for the protocol methods here.
    let result = rpc(&app, &reader, "initialize", json!({})).await;
    assert_eq!(result["protocolVersion"], json!("2024-11-05"));
    assert_eq!(rpc(&app, &reader, "tools/list", json!({})).await["tools"].as_array().unwrap().len(), 7);
    let _: Value = app.get("/api/v1/me", &reader).await.ok(403).clone();
}
