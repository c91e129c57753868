//! The widget's files: per-project loader, shared bundle, lazy parts, declarations, demo page.

use crate::common::ingest::CHANNEL_FIELDS;
use crate::common::{Resp, TestApp};
use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use svc_server::widget::assets;

async fn get(app: &TestApp, path: &str, if_none_match: Option<&str>) -> Resp {
    let mut builder = Request::builder().uri(path);
    if let Some(tag) = if_none_match {
        builder = builder.header(header::IF_NONE_MATCH, tag);
    }
    app.send(builder.body(Body::empty()).unwrap()).await
}

fn header<'a>(resp: &'a Resp, name: &str) -> &'a str {
    resp.header(name).unwrap_or_else(|| panic!("no {name} header"))
}

/// The JSON the per-project loader bakes in: `(function(__svcPreset){<loader>})(<json>);`.
fn baked_config(body: &str) -> Value {
    let prefix = format!("(function(__svcPreset){{{}}})(", assets::LOADER);
    assert!(body.starts_with(&prefix), "the per-project loader wraps the shared bundle");
    let json = body[prefix.len()..].trim_end().strip_suffix(");").expect("ends with the config call");
    serde_json::from_str(json).expect("the baked-in configuration is JSON")
}

#[tokio::test]
async fn shared_bundle_is_cacheable_javascript() {
    let app = TestApp::new().await;
    let resp = get(&app, "/v1/svc.js", None).await;
    assert_eq!(resp.status, 200);
    assert_eq!(header(&resp, "content-type"), "text/javascript; charset=utf-8");
    assert_eq!(header(&resp, "cache-control"), "public, max-age=300");
    assert_eq!(header(&resp, "x-content-type-options"), "nosniff");
    assert_eq!(resp.text, assets::LOADER);
    assert!(resp.text.contains("__svcPreset"), "the bundle reads a baked-in configuration when there is one");
    let tag = header(&resp, "etag").to_string();
    assert!(tag.starts_with('"') && tag.ends_with('"'));

    let again = get(&app, "/v1/svc.js", Some(&tag)).await;
    assert_eq!(again.status, 304);
    assert!(again.bytes.is_empty());
    assert_eq!(header(&again, "etag"), tag);
    let weak = get(&app, "/v1/svc.js", Some(&format!("\"other\", W/{tag}"))).await;
    assert_eq!(weak.status, 304);
    let stale = get(&app, "/v1/svc.js", Some("\"stale\"")).await;
    assert_eq!(stale.status, 200);
}

#[tokio::test]
async fn project_loader_bakes_in_configuration_and_channels() {
    let app = TestApp::new().await;
    let key = app.project.project_key.clone();
    let resp = get(&app, &format!("/v1/svc/{key}.js"), None).await;
    assert_eq!(resp.status, 200);
    assert_eq!(header(&resp, "content-type"), "text/javascript; charset=utf-8");
    assert_eq!(header(&resp, "cache-control"), "public, max-age=60");
    let config = baked_config(&resp.text);
    assert_eq!(config["projectKey"], json!(key));
    assert_eq!(config["defaultChannelKey"], "bug");
    assert_eq!(config["urlPatterns"], json!([]));
    assert_eq!(config["apiUrl"], "http://127.0.0.1:8080");
    assert_eq!(
        config["widgetConfig"],
        json!({"mascot": "fox", "shape": "bubble", "anchor": "middle-right", "offsetX": 0, "offsetY": 0, "size": 44, "triggerVariant": "frame-tab"})
    );
    let keys: Vec<&str> = config["channels"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "question"]);
    // The ingest form of a channel, as /ingest/channels gives it.
    for field in CHANNEL_FIELDS {
        assert!(config["channels"][0].get(field).is_some(), "channel field {field}");
    }

    // Revalidation, then a configuration change makes a new loader with a new ETag.
    let tag = header(&resp, "etag").to_string();
    assert_eq!(get(&app, &format!("/v1/svc/{key}.js"), Some(&tag)).await.status, 304);
    let patch =
        json!({"urlPatterns": ["http://localhost:3000/*"], "widgetConfig": {"mascot": "owl", "anchor": "bottom-left"}});
    app.patch(&app.p(""), &app.token, patch).await.ok(200);
    let channel = json!({"key": "checkout", "name": "Checkout", "color": "#12a594", "mascot": "otter", "baseWeight": 2,
        "matchers": [{"conditions": [{"field": "path", "op": "prefix", "value": "/checkout"}], "weight": 5, "note": "checkout pages"}]});
    app.post(&app.p("/channels"), &app.token, channel).await.ok(201);
    app.patch(&app.p("/channels/question"), &app.token, json!({"archived": true})).await.ok(200);

    let changed = get(&app, &format!("/v1/svc/{key}.js"), Some(&tag)).await;
    assert_eq!(changed.status, 200);
    assert_ne!(header(&changed, "etag"), tag);
    let config = baked_config(&changed.text);
    assert_eq!(config["urlPatterns"], json!(["http://localhost:3000/*"]));
    assert_eq!(config["widgetConfig"]["mascot"], "owl");
    assert_eq!(config["widgetConfig"]["anchor"], "bottom-left");
    assert_eq!(config["widgetConfig"]["size"], 44, "defaults fill what the project does not set");
    let keys: Vec<&str> = config["channels"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "checkout"], "archived channels are left out");
    assert_eq!(config["channels"][2]["matchers"][0]["weight"], 5.0);
    assert_eq!(config["channels"][2]["baseWeight"], 2.0);
}

#[tokio::test]
async fn project_loader_carries_only_the_configured_mascot() {
    let app = TestApp::new().await;
    let key = app.project.project_key.clone();
    let names: Vec<&str> = assets::MASCOTS.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["gecko", "owl", "fox", "cat", "axolotl", "raccoon", "chameleon", "otter", "robot", "blob"]);
    for (name, svg) in assets::MASCOTS {
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"), "{name} is an SVG");
        // Drawn under a strict CSP: presentation attributes only, nothing that runs or loads.
        for banned in ["style=", "<script", "href", "on"] {
            let hit = if banned == "on" { svg.contains(" on") } else { svg.contains(banned) };
            assert!(!hit, "{name} contains {banned}");
        }
    }

    let config = baked_config(&get(&app, &format!("/v1/svc/{key}.js"), None).await.text);
    let fox = svc_server::widget::mascot_svg("fox").unwrap();
    assert_eq!(config["mascotSvg"], json!(fox), "the default mascot");
    app.patch(&app.p(""), &app.token, json!({"widgetConfig": {"mascot": "axolotl"}})).await.ok(200);
    let body = get(&app, &format!("/v1/svc/{key}.js"), None).await.text;
    let config = baked_config(&body);
    assert_eq!(config["mascotSvg"], json!(svc_server::widget::mascot_svg("axolotl").unwrap()));
    // Only that one: the fox's face is not in this loader.
    assert!(!body.contains(fox));
    assert!(!assets::LOADER.contains("<svg"), "the shared bundle carries no mascot");
}

#[tokio::test]
async fn unknown_keys_get_a_script_that_says_so() {
    let app = TestApp::new().await;
    for key in ["pr_000000000000000000000000", "not-a-key", "pr_\"quoted\"</script>"] {
        let path = format!(
            "/v1/svc/{}.js",
            key.replace('"', "%22").replace('<', "%3C").replace('>', "%3E").replace('/', "%2F")
        );
        let resp = get(&app, &path, None).await;
        assert_eq!(resp.status, 200, "{key}: always 200 so the browser runs it");
        assert_eq!(header(&resp, "content-type"), "text/javascript; charset=utf-8");
        assert!(resp.text.contains("[Svc] unknown project key: "), "{}", resp.text);
        assert!(!resp.text.contains("__svcPreset"), "nothing else runs");
        assert!(resp.text.len() < 400);
    }
    let resp = get(&app, "/v1/svc/pr_000000000000000000000000.js", None).await;
    assert!(resp.text.contains(r#"var k="pr_000000000000000000000000""#), "{}", resp.text);
    // A quote in the key cannot break out of the string.
    let resp = get(&app, "/v1/svc/pr_%22x.js", None).await;
    assert!(resp.text.contains(r#"var k="pr_\"x""#), "{}", resp.text);
}

#[tokio::test]
async fn parts_are_content_hashed_and_cached_for_a_year() {
    let app = TestApp::new().await;
    assert!(!assets::PARTS.is_empty());
    let manifest: Value = serde_json::from_str(include_str!("../../../../widget/dist/manifest.json")).unwrap();
    let listed: Vec<&str> = manifest["parts"].as_object().unwrap().values().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(listed.len(), assets::PARTS.len(), "assets.rs embeds every part of the manifest");
    for (file, body) in assets::PARTS {
        assert!(listed.contains(file), "{file} is in the manifest");
        assert!(assets::LOADER.contains(file), "the loader knows {file}");
        let name_hash = file.rsplit('.').nth(1).unwrap();
        assert_eq!(name_hash.len(), 10);
        let resp = get(&app, &format!("/v1/parts/{file}"), None).await;
        assert_eq!(resp.status, 200);
        assert_eq!(resp.text, *body);
        assert_eq!(header(&resp, "cache-control"), "public, max-age=31536000, immutable");
        assert_eq!(header(&resp, "content-type"), "text/javascript; charset=utf-8");
        let tag = header(&resp, "etag").to_string();
        assert_eq!(get(&app, &format!("/v1/parts/{file}"), Some(&tag)).await.status, 304);
    }
    let panel = assets::PARTS.iter().find(|(f, _)| f.starts_with("panel.")).expect("a panel part");
    assert!(panel.1.contains("__svcDefine"));
    for missing in ["/v1/parts/panel.0000000000.js", "/v1/parts/nope.js", "/v1/parts/..%2Fsvc.js"] {
        assert_eq!(get(&app, missing, None).await.status, 404, "{missing}");
    }
}

#[tokio::test]
async fn typescript_declarations() {
    let app = TestApp::new().await;
    let resp = get(&app, "/v1/svc.d.ts", None).await;
    assert_eq!(resp.status, 200);
    assert!(header(&resp, "content-type").starts_with("application/typescript"));
    assert!(header(&resp, "etag").starts_with('"'));
    for needle in [
        "declare namespace Svc",
        "interface InitOptions",
        "projectKey: string",
        "report(",
        "attachFile(",
        "setChannel(",
        "declare var Svc",
    ] {
        assert!(resp.text.contains(needle), "declarations mention {needle}");
    }
}

#[tokio::test]
async fn demo_page_embeds_the_bootstrap_project() {
    let app = TestApp::new().await;
    // A second project does not change which one the demo shows.
    let _ = app.other_project().await;
    let resp = get(&app, "/demo", None).await;
    assert_eq!(resp.status, 200);
    assert!(header(&resp, "content-type").starts_with("text/html"));
    let tag = format!(r#"<script src="/v1/svc/{}.js" data-ignore-url-patterns></script>"#, app.project.project_key);
    assert!(resp.text.contains(&tag), "{}", resp.text);
    assert!(resp.text.contains("Svc.openForm()"));
}

#[tokio::test]
async fn built_files_are_the_ones_committed() {
    // The embedded files are the committed dist files (assets.rs includes them; this guards the paths).
    assert_eq!(assets::LOADER, include_str!("../../../../widget/dist/svc.js"));
    assert_eq!(assets::TYPES, include_str!("../../../../widget/dist/svc.d.ts"));
    assert!(assets::LOADER.starts_with("\"use strict\";(()=>{"), "an IIFE");
    assert!(!assets::VERSION.is_empty());
}
