//! The success shape (and the everyday failures) of every REST route.

use crate::common::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// GET /me

#[tokio::test]
async fn me_describes_the_setup_token() {
    let app = TestApp::new().await;
    let me = app.get("/api/v1/me", &app.token).await.ok(200).clone();
    assert_has_fields(&me, &["keyId", "projectId", "name", "projectKey", "scopes", "projectName"]);
    assert!(is_object_id(&me["keyId"]));
    assert_eq!(me["projectId"], json!(app.pid()));
    assert_eq!(me["projectKey"], json!(app.project.project_key));
    assert!(me["projectKey"].as_str().unwrap().starts_with("pr_"));
    assert!(!me["projectKey"].as_str().unwrap().starts_with("pr_sk_"));
    assert_eq!(me["scopes"], json!(["*"]));
    assert_eq!(me["projectName"], json!("Default"));
    assert_eq!(me["name"], json!("Setup token"));
}

#[tokio::test]
async fn me_describes_a_minted_key_with_its_own_name_and_scopes() {
    let app = TestApp::new().await;
    let minted = app
        .post(&app.p("/keys"), &app.token, json!({"name": "ci reader", "scopes": ["feedback:read", "channel:read"]}))
        .await
        .ok(201)
        .clone();
    let me = app.get("/api/v1/me", minted["key"].as_str().unwrap()).await.ok(200).clone();
    assert_eq!(me["keyId"], minted["id"]);
    assert_eq!(me["name"], json!("ci reader"));
    assert_eq!(me["scopes"], json!(["feedback:read", "channel:read"]));
    assert_eq!(me["projectId"], json!(app.pid()));
}

// ---------------------------------------------------------------------------------------------
// GET / PATCH /projects/:projectId

#[tokio::test]
async fn get_project_has_every_field() {
    let app = TestApp::new().await;
    let project = app.get(&app.p(""), &app.token).await.ok(200).clone();
    assert_has_fields(
        &project,
        &[
            "id",
            "name",
            "projectKey",
            "urlPatterns",
            "defaultChannelKey",
            "identitySecretSet",
            "createdAt",
            "slug",
            "allowedOrigins",
            "widgetConfig",
        ],
    );
    assert_eq!(project["id"], json!(app.pid()));
    assert_eq!(project["name"], json!("Default"));
    assert_eq!(project["slug"], json!("default"));
    assert_eq!(project["projectKey"], json!(app.project.project_key));
    assert_eq!(project["urlPatterns"], json!([]));
    assert_eq!(project["defaultChannelKey"], json!("bug"));
    assert_eq!(project["identitySecretSet"], json!(false));
    assert_eq!(project["allowedOrigins"], json!([]));
    assert!(is_iso(&project["createdAt"]), "createdAt: {}", project["createdAt"]);
    // Omitted widget fields fall back to the defaults.
    let widget = &project["widgetConfig"];
    assert_eq!(widget["mascot"], json!("fox"));
    assert_eq!(widget["shape"], json!("bubble"));
    assert_eq!(widget["anchor"], json!("middle-right"));
    assert_eq!(widget["triggerVariant"], json!("frame-tab"));
    assert_eq!(widget["size"].as_f64(), Some(44.0));
    assert_eq!(widget["offsetX"].as_f64(), Some(0.0));
    assert_eq!(widget["offsetY"].as_f64(), Some(0.0));
}

#[tokio::test]
async fn patch_project_changes_name_patterns_and_origins() {
    let app = TestApp::new().await;
    let body = json!({
        "name": "Shop",
        "urlPatterns": ["https://shop.example.com/*"],
        "allowedOrigins": ["https://shop.example.com/", "http://localhost:3000"],
    });
    let updated = app.patch(&app.p(""), &app.token, body).await.ok(200).clone();
    assert_eq!(updated["id"], json!(app.pid()));
    assert_eq!(updated["name"], json!("Shop"));
    assert_eq!(updated["urlPatterns"], json!(["https://shop.example.com/*"]));
    assert_eq!(updated["allowedOrigins"], json!(["https://shop.example.com", "http://localhost:3000"]));
    // The project key and creation time do not move.
    assert_eq!(updated["projectKey"], json!(app.project.project_key));

    let read = app.get(&app.p(""), &app.token).await.ok(200).clone();
    assert_eq!(read, updated, "GET returns what PATCH answered");

    // An empty list allows every origin again; fields not given are left alone.
    let cleared = app.patch(&app.p(""), &app.token, json!({"allowedOrigins": []})).await.ok(200).clone();
    assert_eq!(cleared["allowedOrigins"], json!([]));
    assert_eq!(cleared["name"], json!("Shop"));
    assert_eq!(cleared["urlPatterns"], json!(["https://shop.example.com/*"]));
}

#[tokio::test]
async fn patch_project_replaces_widget_config_whole() {
    let app = TestApp::new().await;
    let config = json!({"mascot": "owl", "shape": "pill", "anchor": "bottom-left", "offsetX": 12, "offsetY": -4,
                        "size": 50, "triggerVariant": "none"});
    let first = app.patch(&app.p(""), &app.token, json!({"widgetConfig": config})).await.ok(200).clone();
    let widget = &first["widgetConfig"];
    assert_eq!(widget["mascot"], json!("owl"));
    assert_eq!(widget["shape"], json!("pill"));
    assert_eq!(widget["anchor"], json!("bottom-left"));
    assert_eq!(widget["triggerVariant"], json!("none"));
    assert_eq!(widget["offsetX"].as_f64(), Some(12.0));
    assert_eq!(widget["offsetY"].as_f64(), Some(-4.0));
    assert_eq!(widget["size"].as_f64(), Some(50.0));

    // A second PATCH replaces the whole configuration: what it omits goes back to the defaults.
    let second = app.patch(&app.p(""), &app.token, json!({"widgetConfig": {"shape": "tab"}})).await.ok(200).clone();
    let widget = &second["widgetConfig"];
    assert_eq!(widget["shape"], json!("tab"));
    assert_eq!(widget["mascot"], json!("fox"));
    assert_eq!(widget["anchor"], json!("middle-right"));
    assert_eq!(widget["triggerVariant"], json!("frame-tab"));
    assert_eq!(widget["size"].as_f64(), Some(44.0));
    assert_eq!(widget["offsetX"].as_f64(), Some(0.0));

    // Size is clamped to 32..64 like the widget does.
    let clamped = app.patch(&app.p(""), &app.token, json!({"widgetConfig": {"size": 100}})).await.ok(200).clone();
    assert_eq!(clamped["widgetConfig"]["size"].as_f64(), Some(64.0));
    let clamped = app.patch(&app.p(""), &app.token, json!({"widgetConfig": {"size": 1}})).await.ok(200).clone();
    assert_eq!(clamped["widgetConfig"]["size"].as_f64(), Some(32.0));
}

#[tokio::test]
async fn patch_project_refuses_bad_widget_config() {
    let app = TestApp::new().await;
    app.patch(&app.p(""), &app.token, json!({"widgetConfig": {"mascot": "owl"}})).await.ok(200);
    let bad = [
        json!({"mascot": "dragon"}),
        json!({"shape": "square"}),
        json!({"anchor": "center"}),
        json!({"triggerVariant": "button"}),
        json!({"mascot": 3}),
        json!({"size": "big"}),
        json!({"size": null}),
        json!({"offsetX": "10"}),
        json!({"offsetY": true}),
        json!({"colour": "red"}),
        json!("bubble"),
        json!([]),
        Value::Null,
    ];
    for config in bad {
        let resp = app.patch(&app.p(""), &app.token, json!({"widgetConfig": config.clone()})).await;
        resp.error(400, "BAD_REQUEST");
    }
    // Nothing was half-applied.
    let project = app.get(&app.p(""), &app.token).await.ok(200).clone();
    assert_eq!(project["widgetConfig"]["mascot"], json!("owl"));
    assert_eq!(project["widgetConfig"]["shape"], json!("bubble"));
}

#[tokio::test]
async fn patch_project_default_channel_must_be_an_existing_active_channel() {
    let app = TestApp::new().await;
    let ok = app.patch(&app.p(""), &app.token, json!({"defaultChannelKey": "idea"})).await.ok(200).clone();
    assert_eq!(ok["defaultChannelKey"], json!("idea"));

    app.patch(&app.p(""), &app.token, json!({"defaultChannelKey": "nope"})).await.error(400, "BAD_REQUEST");
    app.patch(&app.p(""), &app.token, json!({"defaultChannelKey": 7})).await.error(400, "BAD_REQUEST");
    app.patch(&app.p(""), &app.token, json!({"defaultChannelKey": null})).await.error(400, "BAD_REQUEST");

    app.patch(&app.p("/channels/question"), &app.token, json!({"archived": true})).await.ok(200);
    app.patch(&app.p(""), &app.token, json!({"defaultChannelKey": "question"})).await.error(400, "BAD_REQUEST");

    // A failed PATCH changes nothing, even the fields it got right.
    app.patch(&app.p(""), &app.token, json!({"name": "Changed", "defaultChannelKey": "nope"}))
        .await
        .error(400, "BAD_REQUEST");
    let project = app.get(&app.p(""), &app.token).await.ok(200).clone();
    assert_eq!(project["defaultChannelKey"], json!("idea"));
    assert_eq!(project["name"], json!("Default"));
}

#[tokio::test]
async fn patch_project_refuses_other_bad_input() {
    let app = TestApp::new().await;
    let bad = [
        json!({"name": ""}),
        json!({"name": "x".repeat(101)}),
        json!({"name": 5}),
        json!({"urlPatterns": "https://a.com/*"}),
        json!({"urlPatterns": [""]}),
        json!({"urlPatterns": [3]}),
        json!({"allowedOrigins": ["app.example.com"]}),
        json!({"allowedOrigins": ["https://app.example.com/path"]}),
        json!({"allowedOrigins": "https://app.example.com"}),
        json!({"projectKey": "pr_xxxxxxxxxxxxxxxxxxxxxxxx"}),
        json!({"identitySecret": "s3cret"}),
    ];
    for body in bad {
        app.patch(&app.p(""), &app.token, body).await.error(400, "BAD_REQUEST");
    }
}

// ---------------------------------------------------------------------------------------------
// GET .../feedback

#[tokio::test]
async fn feedback_list_is_newest_first_with_full_items() {
    let app = TestApp::new().await;
    let seeded = app.seed_many(3).await;
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!(keys_of(&page), vec!["items", "nextCursor"]);
    assert_eq!(page["nextCursor"], Value::Null);
    let items = page["items"].as_array().unwrap();
    let ids: Vec<&str> = items.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![seeded[2].id.as_str(), seeded[1].id.as_str(), seeded[0].id.as_str()]);
    let item = &items[0];
    assert_has_fields(item, &["id", "channelKey", "status", "blocks", "context", "identity", "createdAt"]);
    assert_eq!(item["channelKey"], json!("bug"));
    assert_eq!(item["status"], json!("new"));
    assert_eq!(item["blocks"], json!([{"type": "text", "text": "report 2"}]));
    assert_eq!(item["context"]["extra"], json!({"source": "test"}));
    assert_eq!(item["identity"], Value::Null);
    assert!(is_iso(&item["createdAt"]));
}

#[tokio::test]
async fn feedback_list_of_an_empty_project() {
    let app = TestApp::new().await;
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!(page, json!({"items": [], "nextCursor": null}));
}

#[tokio::test]
async fn feedback_list_limit_default_and_refusals() {
    let app = TestApp::new().await;
    let seeded = app.seed_many(23).await;
    let page = app.get(&app.p("/feedback"), &app.token).await.ok(200).clone();
    assert_eq!(page["items"].as_array().unwrap().len(), 20, "default page size is 20");
    assert_eq!(page["nextCursor"], json!(seeded[3].id), "the cursor is the last item's id");

    let page = app.get(&app.p("/feedback?limit=5"), &app.token).await.ok(200).clone();
    assert_eq!(page["items"].as_array().unwrap().len(), 5);

    let page = app.get(&app.p("/feedback?limit=23"), &app.token).await.ok(200).clone();
    assert_eq!(page["items"].as_array().unwrap().len(), 23);
    assert_eq!(page["nextCursor"], Value::Null, "an exactly full last page has no cursor");

    for bad in ["0", "abc", "-1", "1.5", ""] {
        app.get(&app.p(&format!("/feedback?limit={bad}")), &app.token).await.error(400, "BAD_REQUEST");
    }
    // `before` must be a report id.
    app.get(&app.p("/feedback?before=nope"), &app.token).await.error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn feedback_list_filters_by_status_and_channel() {
    let app = TestApp::new().await;
    let a = app.seed(Seed::text("a").channel("bug").status("new")).await;
    let b = app.seed(Seed::text("b").channel("idea").status("triaged")).await;
    let c = app.seed(Seed::text("c").channel("idea").status("new")).await;
    let ids = |page: &Value| -> Vec<String> {
        page["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };

    let page = app.get(&app.p("/feedback?status=new"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![c.id.clone(), a.id.clone()]);
    let page = app.get(&app.p("/feedback?channelKey=idea"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![c.id.clone(), b.id.clone()]);
    let page = app.get(&app.p("/feedback?channelKey=idea&status=triaged"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![b.id.clone()]);

    // Unknown values are not errors: they just match nothing.
    for query in ["status=bogus", "channelKey=nope", "status=", "channelKey=Not%20A%20Key"] {
        let page = app.get(&app.p(&format!("/feedback?{query}")), &app.token).await.ok(200).clone();
        assert_eq!(page, json!({"items": [], "nextCursor": null}), "query {query}");
    }

    // A status change moves a report between filters.
    app.patch(&app.p(&format!("/feedback/{}", a.id)), &app.token, json!({"status": "fixed"})).await.ok(200);
    let page = app.get(&app.p("/feedback?status=fixed"), &app.token).await.ok(200).clone();
    assert_eq!(ids(&page), vec![a.id.clone()]);
}

// ---------------------------------------------------------------------------------------------
// GET / PATCH .../feedback/:reportId

#[tokio::test]
async fn get_report_has_blocks_context_author_and_history() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("The **checkout** button is broken").artifact("checkout-v2")).await;
    let got = app.get(&app.p(&format!("/feedback/{}", report.id)), &app.token).await.ok(200).clone();
    assert_has_fields(
        &got,
        &["id", "channelKey", "status", "blocks", "context", "identity", "createdAt", "author", "statusHistory"],
    );
    assert_eq!(got["id"], json!(report.id));
    assert_eq!(got["status"], json!("new"));
    assert_eq!(got["blocks"], serde_json::to_value(&report.blocks).unwrap());
    assert_eq!(got["context"]["artifactId"], json!("checkout-v2"));
    assert_eq!(got["context"]["url"], json!("https://app.example.com/page"));
    assert_eq!(got["identity"], Value::Null);
    assert_eq!(got["author"], json!({"kind": "reporter", "id": "user-1", "label": "Ada"}));
    assert_eq!(got["statusHistory"], json!([]));
    assert!(is_iso(&got["createdAt"]));
}

#[tokio::test]
async fn get_report_is_404_when_unknown_malformed_or_foreign() {
    let app = TestApp::new().await;
    let (other, other_key) = app.other_project().await;
    let foreign = seed_report(&app.store, &other.id, Seed::text("elsewhere")).await;
    // The other project's key sees it: it exists.
    app.get(&format!("/api/v1/projects/{}/feedback/{}", other.id, foreign.id), &other_key).await.ok(200);

    let unknown = svc_core::ids::new_id();
    for id in [unknown.as_str(), foreign.id.as_str(), "abc", "ZZZZZZZZZZZZZZZZZZZZZZZZ", &foreign.id[18..]] {
        app.get(&app.p(&format!("/feedback/{id}")), &app.token).await.error(404, "NOT_FOUND");
        app.patch(&app.p(&format!("/feedback/{id}")), &app.token, json!({"status": "fixed"}))
            .await
            .error(404, "NOT_FOUND");
        app.get(&app.p(&format!("/feedback/{id}/comments")), &app.token).await.error(404, "NOT_FOUND");
    }
    // The foreign report was not touched.
    let still = app.store.get_report(&foreign.id).await.unwrap().unwrap();
    assert_eq!(still.status, "new");
}

#[tokio::test]
async fn patch_report_status_sets_and_records_every_change() {
    let app = TestApp::new().await;
    let (key_id, key) = app.mint(&["feedback:read", "feedback:write"]).await;
    let report = app.seed(Seed::text("slow page")).await;
    let path = app.p(&format!("/feedback/{}", report.id));

    let statuses = ["triaged", "in-progress", "fixed", "verified", "canceled", "new"];
    for status in statuses {
        let resp = app.patch(&path, &key, json!({"status": status})).await.ok(200).clone();
        assert_eq!(resp, json!({"id": report.id, "status": status}));
    }
    // Back to a state seen before is allowed too (no ordering between states).
    app.patch(&path, &key, json!({"status": "fixed"})).await.ok(200);

    let got = app.get(&path, &key).await.ok(200).clone();
    assert_eq!(got["status"], json!("fixed"));
    let history = got["statusHistory"].as_array().unwrap();
    assert_eq!(history.len(), 7);
    let moves: Vec<(&str, &str)> =
        history.iter().map(|c| (c["from"].as_str().unwrap(), c["to"].as_str().unwrap())).collect();
    assert_eq!(
        moves,
        vec![
            ("new", "triaged"),
            ("triaged", "in-progress"),
            ("in-progress", "fixed"),
            ("fixed", "verified"),
            ("verified", "canceled"),
            ("canceled", "new"),
            ("new", "fixed"),
        ]
    );
    // Who and when.
    assert_eq!(history[0]["by"]["id"], json!(format!("agent:{key_id}")));
    assert!(is_iso(&history[0]["at"]));
}

#[tokio::test]
async fn patch_report_status_refuses_invalid_values() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("slow page")).await;
    let path = app.p(&format!("/feedback/{}", report.id));
    for body in [
        json!({"status": "done"}),
        json!({"status": "Fixed"}),
        json!({"status": ""}),
        json!({"status": 3}),
        json!({"status": null}),
        json!({}),
    ] {
        app.patch(&path, &app.token, body).await.error(400, "BAD_REQUEST");
    }
    let got = app.get(&path, &app.token).await.ok(200).clone();
    assert_eq!(got["status"], json!("new"));
    assert_eq!(got["statusHistory"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// GET .../feedback/:reportId/comments

#[tokio::test]
async fn comments_are_listed_oldest_first_with_drafts() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("needs a fix")).await;
    let quiet = app.seed(Seed::text("no comments")).await;
    let first = app.seed_comment(&report.id, "Published note", false).await;
    let second = app.seed_comment(&report.id, "Draft proposal", true).await;

    let list = app.get(&app.p(&format!("/feedback/{}/comments", report.id)), &app.token).await.ok(200).clone();
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], json!(first.id));
    assert_eq!(items[1]["id"], json!(second.id));
    assert_has_fields(&items[0], &["id", "reportId", "author", "authorLabel", "text", "kind", "draft", "createdAt"]);
    assert_eq!(items[0]["reportId"], json!(report.id));
    assert_eq!(items[0]["text"], json!("Published note"));
    assert_eq!(items[0]["draft"], json!(false));
    assert!(is_iso(&items[0]["publishedAt"]));
    assert_eq!(items[0]["kind"], json!("fix"));
    assert_eq!(items[0]["author"], json!("agent:abc"));
    assert_eq!(items[0]["authorLabel"], json!("Claude"));
    assert_eq!(items[1]["draft"], json!(true));
    assert_eq!(items[1]["text"], json!("Draft proposal"));

    let empty = app.get(&app.p(&format!("/feedback/{}/comments", quiet.id)), &app.token).await.ok(200).clone();
    assert_eq!(empty, json!({"items": []}));
}

// ---------------------------------------------------------------------------------------------
// Rooms

#[tokio::test]
async fn rooms_list_merges_stored_and_implicit_rooms() {
    let app = TestApp::new().await;
    let now = svc_core::time::now_ms();
    // Implicit rooms: only reports carry their artifact ids.
    app.seed(Seed::text("one").artifact("alpha").at(now - 50_000)).await;
    app.seed(Seed::text("two").artifact("alpha").at(now - 40_000)).await;
    app.seed(Seed::text("three").artifact("beta").at(now - 30_000)).await;
    app.seed(Seed::text("no room")).await;

    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    assert_eq!(keys_of(&list), vec!["items"]);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    // Most recent activity first.
    assert_eq!(items[0]["artifactId"], json!("beta"));
    assert_eq!(items[1]["artifactId"], json!("alpha"));
    assert_has_fields(&items[1], &["artifactId", "title", "meta", "archived", "lastActivity", "count"]);
    assert_eq!(items[1]["count"], json!(2));
    assert_eq!(items[1]["title"], json!("alpha"), "title defaults to the artifact id");
    assert_eq!(items[1]["meta"], Value::Null);
    assert_eq!(items[1]["archived"], json!(false));
    assert_eq!(items[1]["lastActivity"], json!(svc_core::time::iso(now - 40_000)));
    assert_eq!(items[0]["count"], json!(1));

    // A stored room with no reports: count 0, and it is the newest activity.
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "gamma", "title": "Gamma doc"})).await.ok(201);
    // Storing an implicit room keeps its count.
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "alpha", "title": "Alpha doc"})).await.ok(200);

    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    let items = list["items"].as_array().unwrap();
    let summary: Vec<(String, i64, String)> = items
        .iter()
        .map(|r| {
            (
                r["artifactId"].as_str().unwrap().into(),
                r["count"].as_i64().unwrap(),
                r["title"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(summary.len(), 3);
    let find = |id: &str| summary.iter().find(|(a, _, _)| a == id).cloned().unwrap();
    assert_eq!(find("gamma").1, 0);
    assert_eq!(find("gamma").2, "Gamma doc");
    assert_eq!(find("alpha").1, 2);
    assert_eq!(find("alpha").2, "Alpha doc");
    assert_eq!(find("beta").1, 1);
    // Sorted by last activity, newest first.
    let times: Vec<i64> =
        items.iter().map(|r| svc_core::time::parse_iso(r["lastActivity"].as_str().unwrap()).unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "sorted by lastActivity: {times:?}");
    assert_eq!(items[2]["artifactId"], json!("beta"), "beta's only report is older than both stored rooms' changes");
}

#[tokio::test]
async fn rooms_post_creates_then_resumes() {
    let app = TestApp::new().await;
    let created = app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "spec-1"})).await;
    let room = created.ok(201).clone();
    assert_has_fields(&room, &["id", "artifactId", "title", "meta", "archived", "created"]);
    assert!(is_object_id(&room["id"]));
    assert_eq!(room["artifactId"], json!("spec-1"));
    assert_eq!(room["title"], json!("spec-1"));
    assert_eq!(room["meta"], Value::Null);
    assert_eq!(room["archived"], json!(false));
    assert_eq!(room["created"], json!(true));

    let meta =
        json!({"tool": "figma", "goal": "review the spec", "constraints": ["no red"], "url": "https://x.example"});
    let again = app
        .post(&app.p("/rooms"), &app.token, json!({"artifactId": "spec-1", "title": "Spec one", "meta": meta}))
        .await;
    let resumed = again.ok(200).clone();
    assert_eq!(resumed["created"], json!(false));
    assert_eq!(resumed["id"], room["id"], "the same room");
    assert_eq!(resumed["title"], json!("Spec one"));
    assert_eq!(resumed["meta"]["tool"], json!("figma"));
    assert_eq!(resumed["meta"]["constraints"], json!(["no red"]));

    // A repeat updates only the fields it gives.
    let third = app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "spec-1"})).await.ok(200).clone();
    assert_eq!(third["created"], json!(false));
    assert_eq!(third["title"], json!("Spec one"));
    assert_eq!(third["meta"]["goal"], json!("review the spec"));

    // Created with title and meta in one go.
    let full = app
        .post(&app.p("/rooms"), &app.token, json!({"artifactId": "spec-2", "title": "Two", "meta": {"source": "cli"}}))
        .await
        .ok(201)
        .clone();
    assert_eq!(full["title"], json!("Two"));
    assert_eq!(full["meta"]["source"], json!("cli"));
}

#[tokio::test]
async fn rooms_post_on_an_implicit_room_answers_200_not_created() {
    let app = TestApp::new().await;
    app.seed(Seed::text("about the doc").artifact("doc-7")).await;
    let resp = app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "doc-7", "title": "Doc seven"})).await;
    let room = resp.ok(200).clone();
    assert_eq!(room["created"], json!(false));
    assert!(is_object_id(&room["id"]), "the implicit room is now stored");
    assert_eq!(room["title"], json!("Doc seven"));

    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["count"], json!(1));
    assert_eq!(list["items"][0]["title"], json!("Doc seven"));
}

#[tokio::test]
async fn rooms_patch_updates_partially_and_archives() {
    let app = TestApp::new().await;
    app.post(
        &app.p("/rooms"),
        &app.token,
        json!({"artifactId": "r1", "title": "First", "meta": {"tool": "a", "goal": "g"}}),
    )
    .await
    .ok(201);
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "r2"})).await.ok(201);

    // Title only: meta stays.
    let room = app.patch(&app.p("/rooms/r1"), &app.token, json!({"title": "Renamed"})).await.ok(200).clone();
    assert_has_fields(&room, &["id", "artifactId", "title", "meta", "archived"]);
    assert_eq!(room["artifactId"], json!("r1"));
    assert_eq!(room["title"], json!("Renamed"));
    assert_eq!(room["meta"], json!({"tool": "a", "goal": "g"}));
    assert!(room.get("created").is_none(), "created is on create/resume only");

    // Meta is replaced whole.
    let room = app.patch(&app.p("/rooms/r1"), &app.token, json!({"meta": {"source": "s"}})).await.ok(200).clone();
    assert_eq!(room["meta"], json!({"source": "s"}));
    assert_eq!(room["title"], json!("Renamed"));
    let room = app.patch(&app.p("/rooms/r1"), &app.token, json!({"meta": null})).await.ok(200).clone();
    assert_eq!(room["meta"], Value::Null);

    // Archived rooms are hidden unless ?archived=true.
    let room = app.patch(&app.p("/rooms/r1"), &app.token, json!({"archived": true})).await.ok(200).clone();
    assert_eq!(room["archived"], json!(true));
    let listed = |list: &Value| -> Vec<String> {
        let mut ids: Vec<String> =
            list["items"].as_array().unwrap().iter().map(|r| r["artifactId"].as_str().unwrap().to_string()).collect();
        ids.sort();
        ids
    };
    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    assert_eq!(listed(&list), vec!["r2"]);
    let list = app.get(&app.p("/rooms?archived=true"), &app.token).await.ok(200).clone();
    assert_eq!(listed(&list), vec!["r1", "r2"]);
    let archived = list["items"].as_array().unwrap().iter().find(|r| r["artifactId"] == json!("r1")).unwrap().clone();
    assert_eq!(archived["archived"], json!(true));
    let list = app.get(&app.p("/rooms?archived=false"), &app.token).await.ok(200).clone();
    assert_eq!(listed(&list), vec!["r2"]);

    // And back.
    app.patch(&app.p("/rooms/r1"), &app.token, json!({"archived": false})).await.ok(200);
    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    assert_eq!(listed(&list), vec!["r1", "r2"]);
}

#[tokio::test]
async fn rooms_patch_is_404_for_a_room_that_does_not_exist_and_200_for_an_implicit_one() {
    let app = TestApp::new().await;
    app.patch(&app.p("/rooms/ghost"), &app.token, json!({"title": "Boo"})).await.error(404, "NOT_FOUND");
    // No upsert happened.
    let list = app.get(&app.p("/rooms?archived=true"), &app.token).await.ok(200).clone();
    assert_eq!(list, json!({"items": []}));

    app.seed(Seed::text("a report").artifact("implicit-1")).await;
    let room = app.patch(&app.p("/rooms/implicit-1"), &app.token, json!({"title": "Now stored"})).await.ok(200).clone();
    assert_eq!(room["artifactId"], json!("implicit-1"));
    assert_eq!(room["title"], json!("Now stored"));
    assert!(is_object_id(&room["id"]));
    let list = app.get(&app.p("/rooms"), &app.token).await.ok(200).clone();
    assert_eq!(list["items"][0]["title"], json!("Now stored"));
    assert_eq!(list["items"][0]["count"], json!(1));
}

#[tokio::test]
async fn rooms_refuse_bad_input() {
    let app = TestApp::new().await;
    let longest = "a".repeat(200);
    let too_long = "a".repeat(201);
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": longest})).await.ok(201);
    for body in [
        json!({"artifactId": too_long}),
        json!({"artifactId": ""}),
        json!({"artifactId": 12}),
        json!({}),
        json!({"title": "no id"}),
        json!({"artifactId": "x", "title": 5}),
        json!({"artifactId": "x", "title": ""}),
        json!({"artifactId": "x", "meta": "string"}),
        json!({"artifactId": "x", "meta": {"colour": "red"}}),
        json!({"artifactId": "x", "meta": {"tool": 5}}),
        json!({"artifactId": "x", "archived": "yes"}),
    ] {
        app.post(&app.p("/rooms"), &app.token, body).await.error(400, "BAD_REQUEST");
    }
    // Nothing was stored by the refused calls.
    app.patch(&app.p("/rooms/x"), &app.token, json!({"title": "T"})).await.error(404, "NOT_FOUND");

    app.patch(&app.p(&format!("/rooms/{too_long}")), &app.token, json!({"title": "T"})).await.error(400, "BAD_REQUEST");
    let path = app.p(&format!("/rooms/{longest}"));
    app.patch(&path, &app.token, json!({"archived": "yes"})).await.error(400, "BAD_REQUEST");
    app.patch(&path, &app.token, json!({"artifactId": "other"})).await.error(400, "BAD_REQUEST");
    app.patch(&path, &app.token, json!({"meta": [1]})).await.error(400, "BAD_REQUEST");
    app.get(&app.p("/rooms?archived=maybe"), &app.token).await.error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn rooms_artifact_id_in_the_path_is_percent_decoded() {
    let app = TestApp::new().await;
    let artifact = "docs/page one?v=2#top café";
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": artifact})).await.ok(201);
    let encoded = "docs%2Fpage%20one%3Fv%3D2%23top%20caf%C3%A9";
    let room =
        app.patch(&app.p(&format!("/rooms/{encoded}")), &app.token, json!({"title": "Encoded"})).await.ok(200).clone();
    assert_eq!(room["artifactId"], json!(artifact));
    assert_eq!(room["title"], json!("Encoded"));

    // A 200-character id whose encoded form is much longer is still within the limit.
    let long: String = "é".repeat(200);
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": long})).await.ok(201);
    let encoded: String = "%C3%A9".repeat(200);
    app.patch(&app.p(&format!("/rooms/{encoded}")), &app.token, json!({"archived": true})).await.ok(200);
}

// ---------------------------------------------------------------------------------------------
// Channels

#[tokio::test]
async fn channels_of_a_new_project() {
    let app = TestApp::new().await;
    let list = app.get(&app.p("/channels"), &app.token).await.ok(200).clone();
    let items = list["items"].as_array().unwrap();
    let keys: Vec<&str> = items.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["bug", "idea", "question"]);
    for channel in items {
        assert_has_fields(channel, &["id", "key", "name", "color", "mascot", "baseWeight", "archived"]);
        assert!(is_object_id(&channel["id"]));
        assert_eq!(channel["archived"], json!(false));
        assert_eq!(channel["baseWeight"].as_f64(), Some(0.0));
        let color = channel["color"].as_str().unwrap();
        assert!(color.len() == 7 && color.starts_with('#'), "color {color}");
        assert!(svc_core::MASCOTS.contains(&channel["mascot"].as_str().unwrap()));
    }
    assert_eq!(items[0]["name"], json!("Bugs"));
    assert_eq!(items[1]["name"], json!("Ideas"));
    assert_eq!(items[2]["name"], json!("Questions"));
}

#[tokio::test]
async fn channels_create_and_conflicts() {
    let app = TestApp::new().await;
    let body = json!({
        "key": "billing",
        "name": "Billing",
        "color": "#AABBCC",
        "mascot": "otter",
        "baseWeight": 2.5,
        "matchers": [{"conditions": [{"field": "path", "op": "prefix", "value": "/billing"}], "weight": 5}],
    });
    let created = app.post(&app.p("/channels"), &app.token, body.clone()).await.ok(201).clone();
    assert!(is_object_id(&created["id"]));
    assert_eq!(created["key"], json!("billing"));
    assert_eq!(created["name"], json!("Billing"));
    assert_eq!(created["color"], json!("#AABBCC"));
    assert_eq!(created["mascot"], json!("otter"));
    assert_eq!(created["baseWeight"].as_f64(), Some(2.5));
    assert_eq!(created["archived"], json!(false));
    assert_eq!(created["matchers"][0]["weight"].as_f64(), Some(5.0));
    assert_eq!(created["matchers"][0]["note"], json!(""));
    assert_eq!(created["matchers"][0]["conditions"][0]["value"], json!("/billing"));

    // Minimal body: baseWeight defaults to 0.
    let minimal = app
        .post(
            &app.p("/channels"),
            &app.token,
            json!({"key": "ux", "name": "UX", "color": "#000000", "mascot": "robot"}),
        )
        .await
        .ok(201)
        .clone();
    assert_eq!(minimal["baseWeight"].as_f64(), Some(0.0));
    assert_eq!(minimal["matchers"], json!([]));

    let list = app.get(&app.p("/channels"), &app.token).await.ok(200).clone();
    let keys: Vec<&str> = list["items"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["bug", "idea", "question", "billing", "ux"]);

    // Duplicate keys, of a new or a default channel.
    app.post(&app.p("/channels"), &app.token, body).await.error(409, "CONFLICT");
    app.post(
        &app.p("/channels"),
        &app.token,
        json!({"key": "bug", "name": "Bugs 2", "color": "#111111", "mascot": "fox"}),
    )
    .await
    .error(409, "CONFLICT");
    // An archived channel still holds its key.
    app.patch(&app.p("/channels/ux"), &app.token, json!({"archived": true})).await.ok(200);
    app.post(
        &app.p("/channels"),
        &app.token,
        json!({"key": "ux", "name": "UX", "color": "#000000", "mascot": "robot"}),
    )
    .await
    .error(409, "CONFLICT");

    // The same key in another project is fine.
    let (other, other_key) = app.other_project().await;
    app.post(
        &format!("/api/v1/projects/{}/channels", other.id),
        &other_key,
        json!({"key": "billing", "name": "Billing", "color": "#aabbcc", "mascot": "otter"}),
    )
    .await
    .ok(201);
}

#[tokio::test]
async fn channels_create_refuses_invalid_input() {
    let app = TestApp::new().await;
    let good = json!({"key": "ok-key", "name": "Name", "color": "#a1b2c3", "mascot": "gecko"});
    let with = |field: &str, value: Value| {
        let mut body = good.clone();
        body[field] = value;
        body
    };
    let without = |field: &str| {
        let mut body = good.clone();
        body.as_object_mut().unwrap().remove(field);
        body
    };
    let bad = vec![
        with("key", json!("Bad")),
        with("key", json!("-dash")),
        with("key", json!("has space")),
        with("key", json!("")),
        with("key", json!("k".repeat(41))),
        with("key", json!(7)),
        with("name", json!("")),
        with("name", json!("   ")),
        with("name", json!("n".repeat(81))),
        with("color", json!("red")),
        with("color", json!("#abc")),
        with("color", json!("#gggggg")),
        with("mascot", json!("dragon")),
        with("mascot", json!("Fox")),
        with("baseWeight", json!("high")),
        with("matchers", json!({})),
        with("matchers", json!([{"conditions": [{"field": "cookie", "op": "eq", "value": "x"}], "weight": 1}])),
        with("matchers", json!([{"conditions": [{"field": "url", "op": "like", "value": "x"}], "weight": 1}])),
        with("matchers", json!([{"conditions": [], "weight": "heavy"}])),
        with("matchers", json!([{"weight": 1}])),
        with("unknown", json!(1)),
        without("key"),
        without("name"),
        without("color"),
        without("mascot"),
    ];
    for body in bad {
        let resp = app.post(&app.p("/channels"), &app.token, body.clone()).await;
        assert_eq!(resp.status.as_u16(), 400, "body {body}: {}", resp.text);
        resp.error(400, "BAD_REQUEST");
    }
    // None of them was created.
    let list = app.get(&app.p("/channels?archived=true"), &app.token).await.ok(200).clone();
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
    // The longest key and name are fine.
    app.post(&app.p("/channels"), &app.token, with("key", json!("k".repeat(40)))).await.ok(201);
    app.post(&app.p("/channels"), &app.token, with("name", json!("n".repeat(80)))).await.ok(201);
}

#[tokio::test]
async fn channels_patch_and_archive() {
    let app = TestApp::new().await;
    let updated = app
        .patch(
            &app.p("/channels/idea"),
            &app.token,
            json!({"name": "Feature ideas", "color": "#00ff00", "mascot": "blob", "baseWeight": -1,
                   "matchers": [{"conditions": [{"field": "attr.plan", "op": "in", "value": ["pro"]}], "weight": 3, "note": "pro users"}]}),
        )
        .await
        .ok(200)
        .clone();
    assert_eq!(updated["key"], json!("idea"));
    assert_eq!(updated["name"], json!("Feature ideas"));
    assert_eq!(updated["color"], json!("#00ff00"));
    assert_eq!(updated["mascot"], json!("blob"));
    assert_eq!(updated["baseWeight"].as_f64(), Some(-1.0));
    assert_eq!(updated["matchers"][0]["note"], json!("pro users"));
    assert_eq!(updated["archived"], json!(false));

    // Partial: only the name changes.
    let renamed = app.patch(&app.p("/channels/idea"), &app.token, json!({"name": "Ideas"})).await.ok(200).clone();
    assert_eq!(renamed["color"], json!("#00ff00"));
    assert_eq!(renamed["id"], updated["id"]);

    // Archived channels drop out of the list unless ?archived=true.
    let archived = app.patch(&app.p("/channels/idea"), &app.token, json!({"archived": true})).await.ok(200).clone();
    assert_eq!(archived["archived"], json!(true));
    let list = app.get(&app.p("/channels"), &app.token).await.ok(200).clone();
    let keys: Vec<&str> = list["items"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["bug", "question"]);
    let list = app.get(&app.p("/channels?archived=true"), &app.token).await.ok(200).clone();
    let keys: Vec<&str> = list["items"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["bug", "idea", "question"]);

    // Archiving the default channel is allowed.
    app.patch(&app.p("/channels/bug"), &app.token, json!({"archived": true})).await.ok(200);

    // Errors.
    app.patch(&app.p("/channels/nope"), &app.token, json!({"name": "X"})).await.error(404, "NOT_FOUND");
    for body in [
        json!({"color": "blue"}),
        json!({"mascot": "dragon"}),
        json!({"name": ""}),
        json!({"baseWeight": "x"}),
        json!({"archived": "yes"}),
        json!({"key": "renamed"}),
        json!({"matchers": "none"}),
        json!({"colour": "#000000"}),
    ] {
        app.patch(&app.p("/channels/question"), &app.token, body).await.error(400, "BAD_REQUEST");
    }
    let question = app.get(&app.p("/channels"), &app.token).await.ok(200).clone();
    assert_eq!(question["items"][0]["key"], json!("question"));
    assert_eq!(question["items"][0]["name"], json!("Questions"));
}

// ---------------------------------------------------------------------------------------------
// Hints

#[tokio::test]
async fn hints_accept_suggest_max_and_numbers() {
    let app = TestApp::new().await;
    for body in [
        json!({"channelKey": "idea", "weight": "suggest"}),
        json!({"channelKey": "idea", "weight": "max"}),
        json!({"channelKey": "question", "weight": 3}),
        json!({"channelKey": "question", "weight": -2.5, "userId": "user-42"}),
        json!({"channelKey": "bug", "weight": "max", "userId": null}),
    ] {
        let resp = app.post(&app.p("/hints"), &app.token, body).await.ok(200).clone();
        assert_eq!(resp, json!({"ok": true}));
    }
    let hints = app.store.list_active_hints(app.pid(), Some("user-42"), svc_core::time::now_ms()).await.unwrap();
    assert_eq!(hints.len(), 5);
    let others = app.store.list_active_hints(app.pid(), Some("someone-else"), svc_core::time::now_ms()).await.unwrap();
    assert_eq!(others.len(), 4, "a user's hint applies to that user only");
}

#[tokio::test]
async fn hints_refuse_bad_input() {
    let app = TestApp::new().await;
    app.patch(&app.p("/channels/question"), &app.token, json!({"archived": true})).await.ok(200);
    for body in [
        json!({"channelKey": "idea"}),
        json!({"channelKey": "idea", "weight": null}),
        json!({"channelKey": "idea", "weight": "high"}),
        json!({"channelKey": "idea", "weight": true}),
        json!({"weight": "max"}),
        json!({"channelKey": 3, "weight": "max"}),
        json!({"channelKey": "nope", "weight": "max"}),
        json!({"channelKey": "question", "weight": "max"}),
        json!({"channelKey": "idea", "weight": 1, "userId": 5}),
    ] {
        app.post(&app.p("/hints"), &app.token, body).await.error(400, "BAD_REQUEST");
    }
    let hints = app.store.list_active_hints(app.pid(), None, svc_core::time::now_ms()).await.unwrap();
    assert!(hints.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Keys

#[tokio::test]
async fn keys_mint_returns_a_working_plaintext_key_once() {
    let app = TestApp::new().await;
    let resp = app
        .post(&app.p("/keys"), &app.token, json!({"name": "ops", "scopes": ["feedback:read", "feedback:write"]}))
        .await;
    let minted = resp.ok(201).clone();
    assert_eq!(keys_of(&minted), vec!["expiresAt", "id", "key", "name", "scopes"]);
    assert!(is_object_id(&minted["id"]));
    let key = minted["key"].as_str().unwrap();
    assert!(key.starts_with("pr_sk_"), "{key}");
    assert_eq!(key.len(), "pr_sk_".len() + 40);
    assert!(key["pr_sk_".len()..].bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(minted["name"], json!("ops"));
    assert_eq!(minted["scopes"], json!(["feedback:read", "feedback:write"]));
    assert_eq!(minted["expiresAt"], Value::Null);

    // The key works, within its scopes.
    app.get(&app.p("/feedback"), key).await.ok(200);
    app.get(&app.p("/channels"), key).await.error(403, "FORBIDDEN");
    // Only the hash is stored.
    let stored = app.store.get_key(minted["id"].as_str().unwrap()).await.unwrap().unwrap();
    assert_ne!(stored.key_hash, key);
    assert!(!stored.key_hash.contains(key));
}

#[tokio::test]
async fn keys_mint_with_a_ttl() {
    let app = TestApp::new().await;
    let before = svc_core::time::now_ms();
    let minted = app
        .post(
            &app.p("/keys"),
            &app.token,
            json!({"name": "short", "scopes": ["project:read"], "expiresInSeconds": 3600}),
        )
        .await
        .ok(201)
        .clone();
    let after = svc_core::time::now_ms();
    let expires = svc_core::time::parse_iso(minted["expiresAt"].as_str().unwrap()).unwrap();
    assert!(expires >= before + 3_600_000 - 1 && expires <= after + 3_600_000 + 1, "expiresAt {expires}");
    let me = app.get("/api/v1/me", minted["key"].as_str().unwrap()).await.ok(200).clone();
    assert_eq!(me["keyId"], minted["id"]);

    for ttl in [json!(59), json!(31_536_001), json!(0), json!(-5), json!("3600"), json!(1.5)] {
        app.post(
            &app.p("/keys"),
            &app.token,
            json!({"name": "k", "scopes": ["project:read"], "expiresInSeconds": ttl}),
        )
        .await
        .error(400, "BAD_REQUEST");
    }
    app.post(&app.p("/keys"), &app.token, json!({"name": "k", "scopes": ["project:read"], "expiresInSeconds": 60}))
        .await
        .ok(201);
    app.post(
        &app.p("/keys"),
        &app.token,
        json!({"name": "k", "scopes": ["project:read"], "expiresInSeconds": 31_536_000}),
    )
    .await
    .ok(201);
}

#[tokio::test]
async fn keys_mint_refuses_star_apikey_write_and_unknown_scopes() {
    let app = TestApp::new().await;
    let all_six: Vec<&str> = ALL_SCOPES.iter().copied().filter(|s| *s != "apikey:write").collect();
    app.post(&app.p("/keys"), &app.token, json!({"name": "six", "scopes": all_six})).await.ok(201);
    for body in [
        json!({"name": "k", "scopes": ["*"]}),
        json!({"name": "k", "scopes": ["apikey:write"]}),
        json!({"name": "k", "scopes": ["feedback:read", "apikey:write"]}),
        json!({"name": "k", "scopes": ["feedback:read", "*"]}),
        json!({"name": "k", "scopes": ["feedback:delete"]}),
        json!({"name": "k", "scopes": ["admin"]}),
        json!({"name": "k", "scopes": []}),
        json!({"name": "k", "scopes": "feedback:read"}),
        json!({"name": "k", "scopes": [1]}),
        json!({"name": "k"}),
        json!({"scopes": ["feedback:read"]}),
        json!({"name": "", "scopes": ["feedback:read"]}),
        json!({"name": "n".repeat(101), "scopes": ["feedback:read"]}),
    ] {
        app.post(&app.p("/keys"), &app.token, body).await.error(400, "BAD_REQUEST");
    }
    // Only the six-scope key (and the setup token) exist.
    assert_eq!(app.store.list_keys(app.pid()).await.unwrap().len(), 2);
}

#[tokio::test]
async fn keys_revoke_and_the_revoked_key_is_refused() {
    let app = TestApp::new().await;
    let minted = app.mint_api(&["feedback:read"]).await;
    let id = minted["id"].as_str().unwrap();
    let key = minted["key"].as_str().unwrap();
    app.get(&app.p("/feedback"), key).await.ok(200);

    let revoked = app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.ok(200).clone();
    assert_eq!(keys_of(&revoked), vec!["id", "revokedAt"]);
    assert_eq!(revoked["id"], json!(id));
    assert!(is_iso(&revoked["revokedAt"]));

    // Takes effect on the next request.
    app.get(&app.p("/feedback"), key).await.error(401, "UNAUTHORIZED");
    app.get("/api/v1/me", key).await.error(401, "UNAUTHORIZED");

    // Already revoked, unknown, malformed, or another project's key: 404.
    let (_, other_key) = app.other_project().await;
    let other_me = app.get("/api/v1/me", &other_key).await.ok(200).clone();
    let other_id = other_me["keyId"].as_str().unwrap().to_string();
    for key_id in [id, svc_core::ids::new_id().as_str(), "nope", other_id.as_str()] {
        app.call("DELETE", &app.p(&format!("/keys/{key_id}")), &app.token, None).await.error(404, "NOT_FOUND");
    }
    // The other project's key still works.
    app.get("/api/v1/me", &other_key).await.ok(200);
}

#[tokio::test]
async fn keys_the_setup_token_can_revoke_itself() {
    let app = TestApp::new().await;
    let me = app.get("/api/v1/me", &app.token).await.ok(200).clone();
    let id = me["keyId"].as_str().unwrap();
    // Step 5 then step 6 of the self-setup flow.
    let operational = app.mint_api(&["feedback:read", "feedback:write"]).await;
    app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.ok(200);
    app.get("/api/v1/me", &app.token).await.error(401, "UNAUTHORIZED");
    app.get(&app.p("/feedback"), operational["key"].as_str().unwrap()).await.ok(200);
}

#[tokio::test]
async fn keys_an_expired_key_is_not_active_so_revoking_it_is_404() {
    let app = TestApp::new().await;
    let (id, _) = app.expired_key().await;
    app.call("DELETE", &app.p(&format!("/keys/{id}")), &app.token, None).await.error(404, "NOT_FOUND");
    assert_eq!(app.store.get_key(&id).await.unwrap().unwrap().revoked_at, None);
}

#[tokio::test]
async fn keys_record_their_last_use() {
    let app = TestApp::new().await;
    let (id, key) = app.mint(&["feedback:read"]).await;
    assert_eq!(app.store.get_key(&id).await.unwrap().unwrap().last_used_at, None);
    let before = svc_core::time::now_ms();
    app.get(&app.p("/feedback"), &key).await.ok(200);
    // Written off the request path, with the next write of what callers used.
    app.state.usage.flush().await;
    let used = app.store.get_key(&id).await.unwrap().unwrap().last_used_at.expect("lastUsedAt recorded");
    assert!(used >= before);
}

// ---------------------------------------------------------------------------------------------
// Flags

#[tokio::test]
async fn flags_list_and_set() {
    let app = TestApp::new().await;
    let list = app.get(&app.p("/flags"), &app.token).await.ok(200).clone();
    assert_eq!(list, json!({"items": []}));

    let set =
        app.call("PUT", &app.p("/flags/new-editor"), &app.token, Some(json!({"enabled": true}))).await.ok(200).clone();
    assert_eq!(keys_of(&set), vec!["enabled", "key", "updatedAt"]);
    assert_eq!(set["key"], json!("new-editor"));
    assert_eq!(set["enabled"], json!(true));
    assert!(is_iso(&set["updatedAt"]));
    app.call("PUT", &app.p("/flags/beta.2"), &app.token, Some(json!({"enabled": false}))).await.ok(200);

    let list = app.get(&app.p("/flags"), &app.token).await.ok(200).clone();
    let mut flags: Vec<(String, bool)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["key"].as_str().unwrap().to_string(), f["enabled"].as_bool().unwrap()))
        .collect();
    flags.sort();
    assert_eq!(flags, vec![("beta.2".to_string(), false), ("new-editor".to_string(), true)]);

    // Setting again replaces.
    app.call("PUT", &app.p("/flags/new-editor"), &app.token, Some(json!({"enabled": false}))).await.ok(200);
    let list = app.get(&app.p("/flags"), &app.token).await.ok(200).clone();
    assert!(list["items"].as_array().unwrap().iter().all(|f| f["enabled"] == json!(false)));
    assert_eq!(list["items"].as_array().unwrap().len(), 2);

    // Bad input.
    for body in [json!({}), json!({"enabled": "yes"}), json!({"enabled": 1})] {
        app.call("PUT", &app.p("/flags/x"), &app.token, Some(body)).await.error(400, "BAD_REQUEST");
    }
    app.call("PUT", &app.p("/flags/bad%20key"), &app.token, Some(json!({"enabled": true})))
        .await
        .error(400, "BAD_REQUEST");
    app.call("PUT", &app.p(&format!("/flags/{}", "f".repeat(65))), &app.token, Some(json!({"enabled": true})))
        .await
        .error(400, "BAD_REQUEST");
}

// ---------------------------------------------------------------------------------------------
// Blobs (decisions §4: read back with feedback:read)

#[tokio::test]
async fn blobs_are_served_back_with_their_type() {
    let app = TestApp::new().await;
    let png = b"\x89PNG\r\n\x1a\n not really an image";
    let id = app.seed_blob(app.pid(), "screenshot", "image/png", png, None).await;
    let resp = app.get(&app.p(&format!("/blobs/{id}")), &app.token).await;
    assert_eq!(resp.status.as_u16(), 200, "{}", resp.text);
    assert_eq!(resp.bytes, png.to_vec());
    assert_eq!(resp.headers["content-type"], "image/png");
    assert_eq!(resp.headers["x-content-type-options"], "nosniff");
    assert_eq!(resp.headers["content-length"], png.len().to_string().as_str());

    // Files come only as downloads.
    let html = b"<script>alert(1)</script>";
    let id = app.seed_blob(app.pid(), "file", "text/html", html, Some("page.html")).await;
    let resp = app.get(&app.p(&format!("/blobs/{id}")), &app.token).await;
    assert_eq!(resp.status.as_u16(), 200, "{}", resp.text);
    assert_eq!(resp.bytes, html.to_vec());
    let disposition = resp.headers["content-disposition"].to_str().unwrap();
    assert!(disposition.starts_with("attachment") && disposition.contains("page.html"), "{disposition}");
    assert_eq!(resp.headers["x-content-type-options"], "nosniff");
    assert_ne!(resp.headers["content-type"], "text/html");
}

#[tokio::test]
async fn blobs_are_404_when_unknown_malformed_or_foreign() {
    let app = TestApp::new().await;
    let (other, other_key) = app.other_project().await;
    let foreign = app.seed_blob(&other.id, "screenshot", "image/png", b"png", None).await;
    app.get(&format!("/api/v1/projects/{}/blobs/{foreign}", other.id), &other_key).await.ok(200);
    let unknown = svc_core::ids::new_id();
    for id in [foreign.as_str(), unknown.as_str(), "nope", "../../etc/passwd", "%2e%2e%2fsecret"] {
        app.get(&app.p(&format!("/blobs/{id}")), &app.token).await.error(404, "NOT_FOUND");
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAPI and unknown routes

#[tokio::test]
async fn openapi_document_needs_no_key() {
    let app = TestApp::new().await;
    let resp = app.raw("GET", "/api/v1/openapi.json", None, None).await;
    let doc = resp.ok(200).clone();
    assert!(doc["paths"].is_object());
    assert!(
        resp.headers.get("content-type").unwrap().to_str().unwrap().starts_with("application/json"),
        "served as JSON"
    );
    // A bad key does not matter either.
    app.raw("GET", "/api/v1/openapi.json", Some("Bearer nonsense"), None).await.ok(200);
}

#[tokio::test]
async fn a_method_a_path_does_not_take_answers_405_in_the_error_shape() {
    let app = TestApp::new().await;
    for (method, path) in [
        ("DELETE", "/api/v1/me".to_string()),
        ("POST", app.p("")),
        ("DELETE", app.p("/channels/bug")),
        ("PUT", app.p("/feedback")),
        ("GET", app.p("/hints")),
    ] {
        let resp = app.call(method, &path, &app.token, None).await;
        assert_eq!(resp.status.as_u16(), 405, "{method} {path}: {}", resp.text);
        resp.error(405, "METHOD_NOT_ALLOWED");
        assert!(resp.headers.get("allow").is_some(), "{method} {path} names the allowed methods");
    }
}

#[tokio::test]
async fn unknown_routes_answer_404_in_the_error_shape() {
    let app = TestApp::new().await;
    app.get("/api/v1/nothing-here", &app.token).await.error(404, "NOT_FOUND");
    app.get(&app.p("/unknown"), &app.token).await.error(404, "NOT_FOUND");
}

#[tokio::test]
async fn every_documented_body_refuses_an_unknown_field() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("a report")).await;
    let channel = json!({"key": "k1", "name": "K", "color": "#000000", "mascot": "owl"});
    let cases = [
        ("PATCH", "/projects/{projectId}", app.p(""), json!({"name": "Renamed"})),
        (
            "PATCH",
            "/projects/{projectId}/feedback/{reportId}",
            app.p(&format!("/feedback/{}", report.id)),
            json!({"status": "fixed"}),
        ),
        ("POST", "/projects/{projectId}/rooms", app.p("/rooms"), json!({"artifactId": "r1"})),
        ("PATCH", "/projects/{projectId}/rooms/{artifactId}", app.p("/rooms/r1"), json!({"title": "T"})),
        ("POST", "/projects/{projectId}/channels", app.p("/channels"), channel),
        ("PATCH", "/projects/{projectId}/channels/{channelKey}", app.p("/channels/bug"), json!({"name": "Bugs"})),
        ("POST", "/projects/{projectId}/hints", app.p("/hints"), json!({"channelKey": "bug", "weight": "max"})),
        ("POST", "/projects/{projectId}/keys", app.p("/keys"), json!({"name": "k", "scopes": ["project:read"]})),
        ("PUT", "/projects/{projectId}/flags/{key}", app.p("/flags/f"), json!({"enabled": true})),
    ];
    let doc = app.raw("GET", "/api/v1/openapi.json", None, None).await.ok(200).clone();
    for (method, route, path, body) in cases {
        let mut with_extra = body.clone();
        with_extra["surprise"] = json!(1);
        let message = app.call(method, &path, &app.token, Some(with_extra)).await.error(400, "BAD_REQUEST");
        assert!(message.contains("surprise"), "{method} {path}: the message names the field: {message}");
        let resp = app.call(method, &path, &app.token, Some(body.clone())).await;
        assert!(resp.status.is_success(), "{method} {path} {body}: {}", resp.text);
        // The document says the same: no other field is accepted.
        let operation = &doc["paths"][format!("/api/v1{route}")][method.to_lowercase()];
        let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
        let schema = match schema["$ref"].as_str() {
            Some(reference) => &doc["components"]["schemas"][reference.rsplit('/').next().unwrap()],
            None => schema,
        };
        assert_eq!(schema["additionalProperties"], json!(false), "{method} {route}: {schema}");
    }
}

#[tokio::test]
async fn patch_tells_an_absent_field_from_null() {
    let app = TestApp::new().await;
    let meta = json!({"goal": "ship it"});
    app.post(&app.p("/rooms"), &app.token, json!({"artifactId": "r", "title": "Room", "meta": meta})).await.ok(201);
    // Absent: meta is kept.
    let room = app.patch(&app.p("/rooms/r"), &app.token, json!({"title": "Renamed"})).await.ok(200).clone();
    assert_eq!(room["meta"], meta);
    // Null: meta is cleared; a null title keeps the title.
    let room = app.patch(&app.p("/rooms/r"), &app.token, json!({"meta": null, "title": null})).await.ok(200).clone();
    assert_eq!(room["meta"], Value::Null);
    assert_eq!(room["title"], json!("Renamed"));
    // A field that may not be null is refused, not taken as absent.
    app.patch(&app.p("/rooms/r"), &app.token, json!({"archived": null})).await.error(400, "BAD_REQUEST");
    app.patch(&app.p("/channels/bug"), &app.token, json!({"baseWeight": null})).await.error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn a_draft_comment_is_published_on_its_own_report_only() {
    use svc_service::principal::Principal;
    use svc_service::{ServiceError, comments};
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("a report")).await;
    let report = app.store.get_report(&report.id).await.unwrap().unwrap();
    let other = app.seed(Seed::text("another report")).await;
    let other = app.store.get_report(&other.id).await.unwrap().unwrap();
    let (key_id, _) = app.mint(&["feedback:write"]).await;
    let agent = Principal::ProjectKey(app.store.get_key(&key_id).await.unwrap().unwrap());
    let new = svc_core::status::NewComment::parse("Fixed in 1.2", Some("fix"), None).unwrap();
    let draft = comments::add(app.service(), &agent, &app.project, &report, new).await.unwrap();
    assert!(draft.draft && draft.published_at.is_none());
    assert_eq!(draft.author.id, Some(format!("agent:{key_id}")));

    let operator = Principal::Operator;
    let refused = comments::publish(app.service(), &operator, &app.project, &other, &draft.id, None).await.unwrap_err();
    assert!(matches!(refused, ServiceError::NotFound(_)), "{refused}");
    let published = comments::publish(app.service(), &operator, &app.project, &report, &draft.id, None).await.unwrap();
    assert!(!published.draft && published.published_at.is_some());
    let listed = app.get(&app.p(&format!("/feedback/{}/comments", report.id)), &app.token).await.ok(200).clone();
    assert_eq!(listed["items"][0]["draft"], json!(false));
    assert_eq!(listed["items"][0]["kind"], json!("fix"));
    // A published comment is no longer a draft: it can be neither edited nor discarded.
    let refused =
        comments::edit_draft(app.service(), &agent, &app.project, &report, &draft.id, "again").await.unwrap_err();
    assert!(matches!(refused, ServiceError::NotFound(_)), "{refused}");
    assert!(comments::discard(app.service(), &agent, &app.project, &report, &draft.id).await.is_err());
}

#[tokio::test]
async fn a_draft_comment_can_be_edited_or_discarded_before_it_is_published() {
    use svc_service::principal::Principal;
    use svc_service::{ServiceError, comments};
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("a report")).await;
    let report = app.store.get_report(&report.id).await.unwrap().unwrap();
    let (key_id, _) = app.mint(&["feedback:write"]).await;
    let agent = Principal::ProjectKey(app.store.get_key(&key_id).await.unwrap().unwrap());
    let draft = |text: &str| svc_core::status::NewComment::parse(text, None, None).unwrap();
    let first = comments::add(app.service(), &agent, &app.project, &report, draft("frist")).await.unwrap();
    let second = comments::add(app.service(), &agent, &app.project, &report, draft("not this one")).await.unwrap();

    let edited = comments::edit_draft(app.service(), &agent, &app.project, &report, &first.id, "first").await.unwrap();
    assert_eq!((edited.text.as_str(), edited.draft), ("first", true));
    let blank = comments::edit_draft(app.service(), &agent, &app.project, &report, &first.id, "  ").await.unwrap_err();
    assert!(matches!(blank, ServiceError::Invalid(_)), "{blank}");
    comments::discard(app.service(), &agent, &app.project, &report, &second.id).await.unwrap();

    let listed = app.get(&app.p(&format!("/feedback/{}/comments", report.id)), &app.token).await.ok(200).clone();
    let texts: Vec<&str> = listed["items"].as_array().unwrap().iter().map(|c| c["text"].as_str().unwrap()).collect();
    assert_eq!(texts, vec!["first"]);
}

#[tokio::test]
async fn a_channel_patch_may_carry_the_channels_own_key() {
    let app = TestApp::new().await;
    let channel =
        app.patch(&app.p("/channels/idea"), &app.token, json!({"key": "idea", "name": "Wishes"})).await.ok(200).clone();
    assert_eq!(channel["name"], json!("Wishes"));
    app.patch(&app.p("/channels/idea"), &app.token, json!({"key": "bug"})).await.error(400, "BAD_REQUEST");
}
