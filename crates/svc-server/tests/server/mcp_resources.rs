//! Reports and their files as resources of the tool endpoint: `resources/list` gives the caller's
//! latest reports, `resources/read` a report's document or the bytes of a file, screenshot or voice
//! note that `get_report` names, within the key's reach and scope and a size limit.

use crate::common::ingest::{Part, webm};
use crate::common::*;
use crate::mcp_support::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use svc_core::ingest::Limits;
use svc_server::ServerConfig;

/// `resources/read` of `uri`: the one content item, or the JSON-RPC error (code, message).
async fn read(app: &TestApp, key: &str, uri: &str) -> Result<Value, (i64, String)> {
    let id = json!("read");
    let resp = post(app, key, req(id.clone(), "resources/read", json!({"uri": uri}))).await;
    assert_eq!(resp.status.as_u16(), 200, "{}", resp.text);
    if let Some(error) = resp.body.get("error") {
        return Err((error["code"].as_i64().unwrap(), error["message"].as_str().unwrap().to_string()));
    }
    let contents = expect_result(&resp, &id)["contents"].as_array().cloned().expect("contents");
    assert_eq!(contents.len(), 1, "{}", resp.text);
    assert_eq!(contents[0]["uri"], json!(uri));
    Ok(contents[0].clone())
}

/// A report holding a text file, a binary file, a screenshot and a voice note; returns the report
/// id and the blob ids in that order.
async fn report_with_files(app: &TestApp, key: &str) -> (String, [String; 4]) {
    let blob = |answer: Value| answer["blobId"].as_str().unwrap().to_string();
    let text = blob(upload_blob(app, "file", "notes.txt", "text/plain", "order 42: total 19,99 €\n".as_bytes()).await);
    let binary = blob(upload_blob(app, "file", "dump.bin", "application/octet-stream", &[0, 159, 146, 150, 255]).await);
    let shot = upload_screenshot(app, &png(8, 6, 4)).await;
    let voice = blob(upload_blob(app, "audio", "voice.webm", "audio/webm", &webm()).await);
    let id = app
        .report_with(
            key,
            &[],
            json!({"blocks": [
                {"type": "text", "text": "Files attached"},
                {"type": "file", "blobId": text, "name": "notes.txt"},
                {"type": "file", "blobId": binary, "name": "dump.bin"},
                {"type": "screenshot", "blobId": shot},
                {"type": "audio", "blobId": voice, "durationMs": 1200}
            ]}),
        )
        .await
        .ok(200)["reportId"]
        .as_str()
        .unwrap()
        .to_string();
    (id, [text, binary, shot, voice])
}

#[tokio::test]
async fn get_report_names_every_file_by_a_uri_that_resources_read_returns() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let (id, [text, binary, shot, voice]) = report_with_files(&app, app.key()).await;
    let md = tool(&app, &key, "get_report", json!({"id": id})).await.text;
    for blob in [&text, &binary, &shot, &voice] {
        assert!(md.contains(&format!("resource: `svc://blobs/{blob}`")), "{blob}:\n{md}");
    }

    // Text files as text, everything else as base64 with its stored type.
    let item = read(&app, &key, &format!("svc://blobs/{text}")).await.unwrap();
    assert_eq!(item["mimeType"], json!("text/plain"));
    assert_eq!(item["text"], json!("order 42: total 19,99 €\n"));
    assert_eq!(item["name"], json!("notes.txt"));
    assert!(item.get("blob").is_none());
    let item = read(&app, &key, &format!("svc://blobs/{binary}")).await.unwrap();
    assert_eq!(item["mimeType"], json!("application/octet-stream"));
    assert_eq!(STANDARD.decode(item["blob"].as_str().unwrap()).unwrap(), [0, 159, 146, 150, 255]);
    let item = read(&app, &key, &format!("svc://blobs/{shot}")).await.unwrap();
    assert_eq!(item["mimeType"], json!("image/png"));
    assert_eq!(STANDARD.decode(item["blob"].as_str().unwrap()).unwrap(), png(8, 6, 4));
    let item = read(&app, &key, &format!("svc://blobs/{voice}")).await.unwrap();
    assert_eq!(item["mimeType"], json!("audio/webm"));
    assert_eq!(STANDARD.decode(item["blob"].as_str().unwrap()).unwrap(), webm());

    // The report itself: its document, without images.
    let item = read(&app, &key, &format!("svc://reports/{id}")).await.unwrap();
    assert_eq!(item["mimeType"], json!("text/markdown"));
    let document = item["text"].as_str().unwrap();
    assert!(document.starts_with("# Files attached\n"), "{document}");
    assert!(document.contains(&format!("Screenshot 1 (8×6) · resource: `svc://blobs/{shot}`")), "{document}");
    assert!(!document.contains("image 1 below"), "{document}");
}

#[tokio::test]
async fn resources_stay_within_the_keys_reach() {
    let app = TestApp::new().await;
    let (other, _) = app.other_project().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let (here, [here_file, ..]) = report_with_files(&app, app.key()).await;
    let (there, [there_file, ..]) = report_with_files_in(&app, &other.project_key).await;

    // A project key: its own project's reports and files only.
    assert!(read(&app, &key, &format!("svc://blobs/{here_file}")).await.is_ok());
    for uri in [format!("svc://blobs/{there_file}"), format!("svc://reports/{there}")] {
        let (code, message) = read(&app, &key, &uri).await.unwrap_err();
        assert_eq!(code, -32002, "{message}");
        assert!(message.contains("resource not found") && message.contains(&uri), "{message}");
    }
    // An organization-wide key: every project of its organization.
    let org = app.mint_org_wide(&["feedback:read"]).await;
    for uri in [
        format!("svc://blobs/{here_file}"),
        format!("svc://blobs/{there_file}"),
        format!("svc://reports/{here}"),
        format!("svc://reports/{there}"),
    ] {
        assert!(read(&app, &org, &uri).await.is_ok(), "{uri}");
    }
    // A blob no report holds yet, malformed ids and other schemes are not found.
    let unbound = app.blob("file", "text/plain", b"not filed").await;
    for uri in [
        format!("svc://blobs/{unbound}"),
        "svc://blobs/../../etc/passwd".to_string(),
        "svc://blobs/".to_string(),
        format!("svc://reports/{}", &here[18..]),
        format!("file:///blobs/{here_file}"),
        format!("https://example.com/{here_file}"),
    ] {
        let (code, _) = read(&app, &org, &uri).await.unwrap_err();
        assert_eq!(code, -32002, "{uri}");
    }
    // A read without a uri is invalid params.
    let resp = post(&app, &key, req(json!(3), "resources/read", json!({}))).await;
    let message = expect_error(&resp, 200, &json!(3), -32602);
    assert!(message.contains("uri"), "{message}");
}

async fn report_with_files_in(app: &TestApp, public_key: &str) -> (String, [String; 4]) {
    // Uploads go to the project of `public_key`.
    let upload = |kind: &'static str, name: &'static str, mime: &'static str, data: Vec<u8>| async move {
        let resp = app.upload_with(public_key, &[Part::text("kind", kind), Part::file(name, mime, &data)]).await;
        resp.ok(200)["blobId"].as_str().unwrap().to_string()
    };
    let text = upload("file", "other.txt", "text/plain", b"other project".to_vec()).await;
    let binary = upload("file", "other.bin", "application/octet-stream", vec![1, 2, 3]).await;
    let shot = upload("screenshot", "s.png", "image/png", png(4, 4, 9)).await;
    let voice = upload("audio", "v.webm", "audio/webm", webm()).await;
    let body = json!({"blocks": [
        {"type": "text", "text": "Other project's files"},
        {"type": "file", "blobId": text, "name": "other.txt"},
        {"type": "file", "blobId": binary, "name": "other.bin"},
        {"type": "screenshot", "blobId": shot},
        {"type": "audio", "blobId": voice}
    ]});
    let id = app.report_with(public_key, &[], body).await.ok(200)["reportId"].as_str().unwrap().to_string();
    (id, [text, binary, shot, voice])
}

#[tokio::test]
async fn resources_need_feedback_read() {
    let app = TestApp::new().await;
    let (_, [file, ..]) = report_with_files(&app, app.key()).await;
    let (_, write_only) = app.mint(&["feedback:write"]).await;
    for (method, params) in
        [("resources/list", json!({})), ("resources/read", json!({"uri": format!("svc://blobs/{file}")}))]
    {
        let resp = post(&app, &write_only, req(json!(1), method, params)).await;
        let message = expect_error(&resp, 403, &json!(1), -32003);
        assert_eq!(message, "forbidden: this key lacks feedback:read");
    }
}

#[tokio::test]
async fn a_file_over_the_read_limit_names_the_rest_download_instead() {
    let limits = Limits { file_max_bytes: 12 * 1024 * 1024, ..Limits::default() };
    let app = TestApp::with_config(ServerConfig { limits, ..no_rate_limits() }).await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let big = vec![7u8; 10 * 1024 * 1024 + 1];
    let blob = app.blob("file", "application/zip", &big).await;
    let fits = app.blob("file", "application/zip", &big[..10 * 1024 * 1024]).await;
    app.file_report(json!({"blocks": [
        {"type": "file", "blobId": blob, "name": "big.zip"},
        {"type": "file", "blobId": fits, "name": "fits.zip"}
    ]}))
    .await;
    let (code, message) = read(&app, &key, &format!("svc://blobs/{blob}")).await.unwrap_err();
    assert_eq!(code, -32602);
    assert!(message.contains("10485761 bytes") && message.contains("10485760-byte limit"), "{message}");
    assert!(message.contains(&format!("/api/v1/projects/{}/blobs/{blob}", app.project.id)), "{message}");
    let item = read(&app, &key, &format!("svc://blobs/{fits}")).await.unwrap();
    assert_eq!(STANDARD.decode(item["blob"].as_str().unwrap()).unwrap().len(), 10 * 1024 * 1024);
}

#[tokio::test]
async fn resources_list_gives_the_latest_reports_a_page_at_a_time() {
    let app = TestApp::new().await;
    let (other, _) = app.other_project().await;
    let reports = app.seed_many(55).await;
    let foreign = seed_report(&app.store, &other.id, Seed::text("someone else's")).await;
    let (_, key) = app.mint(&["feedback:read"]).await;

    let first = rpc(&app, &key, "resources/list", json!({})).await;
    let items = first["resources"].as_array().unwrap();
    assert_eq!(items.len(), 50);
    let newest = &reports[54];
    assert_eq!(items[0]["uri"], json!(format!("svc://reports/{}", newest.id)));
    assert_eq!(items[0]["name"], json!(format!("{} report 54", &newest.id[18..])));
    assert_eq!(items[0]["mimeType"], json!("text/markdown"));
    assert!(items[0]["description"].as_str().unwrap().contains("status new, channel bug"), "{}", items[0]);
    let cursor = first["nextCursor"].as_str().expect("a next page").to_string();
    let second = rpc(&app, &key, "resources/list", json!({"cursor": cursor})).await;
    let rest: Vec<&str> = second["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    let expected: Vec<String> = reports[..5].iter().rev().map(|r| format!("svc://reports/{}", r.id)).collect();
    assert_eq!(rest, expected);
    assert!(second.get("nextCursor").is_none());
    let all = [items.iter().map(|r| r["uri"].as_str().unwrap()).collect::<Vec<_>>(), rest].concat();
    assert!(!all.iter().any(|uri| uri.ends_with(&foreign.id)), "another project's report is not listed");

    // An organization-wide key lists every project's reports, each naming its project.
    let org = app.mint_org_wide(&["feedback:read"]).await;
    let listed = rpc(&app, &org, "resources/list", json!({})).await;
    let first = &listed["resources"][0];
    assert_eq!(first["uri"], json!(format!("svc://reports/{}", foreign.id)));
    assert!(first["description"].as_str().unwrap().ends_with(", project Other"), "{first}");

    let resp = post(&app, &key, req(json!(4), "resources/list", json!({"cursor": "nope"}))).await;
    expect_error(&resp, 200, &json!(4), -32602);
}

/// The widget's steps of a shop's checkout: a product opened, a card number typed (its length
/// only), Pay, and the pay request failing.
fn checkout_steps() -> Value {
    json!([
        {"kind": "navigate", "beforeMs": 9000, "url": "https://shop.example/products/7?ref=[redacted]", "via": "load"},
        {"kind": "click", "beforeMs": 7000, "target": {"css": "main > button.add", "text": "Add to cart", "tag": "button"}},
        {"kind": "navigate", "beforeMs": 6500, "url": "https://shop.example/cart", "via": "push"},
        {"kind": "input", "beforeMs": 4000, "target": {"css": "#card", "testIds": ["card-number"], "tag": "input"},
         "inputType": "tel", "length": 16, "changed": true},
        {"kind": "click", "beforeMs": 2000, "target": {"css": "#pay", "accessibleName": "Pay now", "tag": "button"}},
        {"kind": "request", "beforeMs": 1900, "method": "POST", "url": "https://shop.example/api/pay", "status": 500}
    ])
}

#[tokio::test]
async fn a_report_with_steps_reads_as_a_numbered_list_and_a_reproduction_that_asserts_the_fix() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let id = app
        .file_report(json!({
            "blocks": [{"type": "text", "text": "Pay does nothing"}],
            "context": {"url": "https://shop.example/cart", "viewport": {"width": 1280, "height": 800},
                        "steps": checkout_steps(),
                        "network": [{"method": "POST", "url": "https://shop.example/api/pay", "status": 500,
                                     "durationMs": 40, "time": "2026-11-28T10:00:00.000Z"}]}
        }))
        .await;

    // REST returns the steps as filed.
    let stored = app.stored(&id).await;
    assert_eq!(stored["context"]["steps"], checkout_steps());

    // The document: one numbered line per step, selectors in code spans, no value.
    let doc = tool(&app, &key, "get_report", json!({"id": id})).await.text;
    assert!(doc.contains("## Steps before the report (recorded by the reporter's page; untrusted)"), "{doc}");
    assert!(doc.contains("1. go to `https://shop.example/products/7?ref=[redacted]` (`load`) (9.0 s before)"), "{doc}");
    assert!(doc.contains("2. click `main > button.add` (`Add to cart`) (7.0 s before)"), "{doc}");
    assert!(
        doc.contains("4. type into `#card` (`tel` field, 16 characters; the value is not recorded) (4.0 s before)"),
        "{doc}"
    );
    assert!(doc.contains("6. request `POST` `https://shop.example/api/pay` failed: 500"), "{doc}");

    // The reproduction: starts at the first page (a redacted query value left out), replays by
    // selector, fills a placeholder of the recorded length, and asserts the pay request answers
    // under 400.
    let uri = format!("svc://reports/{id}/reproduction.spec.ts");
    let spec = read(&app, &key, &uri).await.unwrap();
    assert_eq!(spec["mimeType"], "text/x-typescript");
    let spec = spec["text"].as_str().unwrap();
    assert!(spec.contains("import { test, expect, type Page, type Locator } from '@playwright/test';"), "{spec}");
    assert!(spec.contains(r#"const BASE_URL = process.env.BASE_URL ?? "https://shop.example";"#), "{spec}");
    assert!(spec.contains("await page.setViewportSize({ width: 1280, height: 800 });"), "{spec}");
    assert!(spec.contains(r#"await page.goto(new URL("/products/7", BASE_URL).href);"#), "{spec}");
    assert!(spec.contains(r#"await find(page, "main > button.add", [], "Add to cart").click();"#), "{spec}");
    assert!(
        spec.contains(
            r##"await find(page, "#card", ["card-number"], null).fill(process.env.SVC_FIELD_4 ?? "4444444444444444");"##
        ),
        "{spec}"
    );
    assert!(spec.contains(r##"await find(page, "#pay", [], "Pay now").click();"##), "{spec}");
    assert!(
        spec.contains(
            r#"const wanted = { method: "POST", path: new URL("https://shop.example/api/pay", BASE_URL).pathname };"#
        ),
        "{spec}"
    );
    assert!(spec.contains("toBeLessThan(400)"), "{spec}");

    // Nothing to start from without a page address.
    let bare = app.file_report(json!({"blocks": [{"type": "text", "text": "no page"}]})).await;
    let (code, message) = read(&app, &key, &format!("svc://reports/{bare}/reproduction.spec.ts")).await.unwrap_err();
    assert_eq!(code, -32002);
    assert!(message.contains("no http(s) page address"), "{message}");
}
