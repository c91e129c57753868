//! Successful uploads and reports, read back through the REST API: rule 1 (the stored blob's facts
//! overwrite the block's), channel fallback, titles, rooms, identity tokens and idempotency.

use crate::common::ingest::*;
use crate::common::*;
use axum::body::Body;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Blobs

#[tokio::test]
async fn a_png_declared_as_jpeg_is_stored_as_png_with_its_real_size() {
    let app = TestApp::new().await;
    let image = png(7, 5);
    let answer = app.upload_ok("screenshot", "image/jpeg", &image).await;
    assert!(is_object_id(&answer["blobId"]), "{answer}");
    assert_eq!(answer["mime"], json!("image/png"));
    assert_eq!(answer["bytes"], json!(image.len()));
    assert_eq!(answer["width"], json!(7));
    assert_eq!(answer["height"], json!(5));

    // The client's own numbers never win over the image header.
    let parts = [
        Part::text("kind", "screenshot"),
        Part::text("width", "1920"),
        Part::text("height", "1080"),
        Part::file("shot.jpg", "image/jpeg", &image),
    ];
    let second = app.upload(&parts).await.ok(200).clone();
    assert_eq!((second["width"].clone(), second["height"].clone()), (json!(7), json!(5)));
}

/// A baseline JPEG of `width` x `height` whose frame header sits behind `metadata` bytes of APP1
/// segments (EXIF-like, each at most 64 KiB); the scan data is never read for the size.
fn jpeg_behind_metadata(width: u16, height: u16, metadata: usize) -> Vec<u8> {
    let segment = |marker: u8, payload: &[u8]| {
        let length = u16::try_from(payload.len() + 2).expect("a segment holds at most 64 KiB");
        [&[0xFF, marker][..], &length.to_be_bytes(), payload].concat()
    };
    let mut out = vec![0xFF, 0xD8];
    for start in (0..metadata).step_by(65_533) {
        out.extend(segment(0xE1, &vec![0x20; (metadata - start).min(65_533)]));
    }
    let quantization = [&[0u8][..], &[1; 64]].concat();
    let frame = [&[8u8][..], &height.to_be_bytes(), &width.to_be_bytes(), &[1, 1, 0x11, 0]].concat();
    out.extend(segment(0xDB, &quantization));
    out.extend(segment(0xC0, &frame));
    for class in [0x00u8, 0x10] {
        // One code of length 1, symbol 0.
        out.extend(segment(0xC4, &[&[class, 1][..], &[0; 15], &[0]].concat()));
    }
    out.extend(segment(0xDA, &[1, 1, 0, 0, 0x3F, 0]));
    out.extend_from_slice(&[0x00, 0xFF, 0xD9]);
    out
}

#[tokio::test]
async fn a_jpeg_whose_frame_header_sits_behind_large_metadata_gets_its_real_size() {
    let app = TestApp::new().await;
    // Right after the file's start, and behind 150 KB of metadata (past what an upload keeps of
    // its start while streaming, so read back from the stored file).
    for metadata in [0, 150_000] {
        let image = jpeg_behind_metadata(640, 360, metadata);
        let answer = app.upload_ok("screenshot", "image/jpeg", &image).await;
        assert_eq!(answer["mime"], json!("image/jpeg"), "{metadata}: {answer}");
        assert_eq!(answer["bytes"], json!(image.len()));
        assert_eq!((answer["width"].clone(), answer["height"].clone()), (json!(640), json!(360)), "{metadata}");
    }
}

#[tokio::test]
async fn text_and_screenshot_report_is_stored_with_the_blobs_facts() {
    let app = TestApp::new().await;
    let image = png(3, 2);
    let blob_id = app.blob("screenshot", "image/jpeg", &image).await;
    let annotations = json!([{"kind": "rect", "points": [[0, 0], [2, 1]], "color": "#ff0000"}]);
    let report_id = app
        .file_report(json!({
            "blocks": [
                {"type": "text", "text": "# The **Pay** button\nIt does nothing."},
                // Wrong mime, bytes and width: rule 1 overwrites them from the stored blob.
                {"type": "screenshot", "blobId": blob_id, "mime": "image/jpeg", "bytes": 1, "width": 999, "annotations": annotations},
            ],
            "channelKey": "bug",
            "context": {"url": "https://shop.example.com/cart", "device": "desktop", "viewport": {"width": 1280, "height": 800}},
        }))
        .await;
    assert!(is_object_id(&json!(report_id)));

    let report = app.stored(&report_id).await;
    assert_eq!(report["id"], json!(report_id));
    assert_eq!(report["channelKey"], json!("bug"));
    assert_eq!(report["status"], json!("new"));
    assert_eq!(report["title"], json!("The Pay button"));
    assert_eq!(report["url"], json!("https://shop.example.com/cart"));
    assert_eq!(report["identity"], Value::Null);
    assert_eq!(report["author"], json!({"kind": "reporter", "id": null, "label": null}));
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0], json!({"type": "text", "text": "# The **Pay** button\nIt does nothing."}));
    assert_eq!(
        blocks[1],
        json!({"type": "screenshot", "blobId": blob_id, "mime": "image/png", "bytes": image.len(), "width": 3, "height": 2, "annotations": annotations})
    );
    assert_eq!(report["context"]["viewport"], json!({"width": 1280, "height": 800}));

    // The screenshot is served back with its stored type.
    let served = app.rest("GET", &app.p(&format!("/blobs/{blob_id}")), None).await;
    assert_eq!(served.status.as_u16(), 200);
    assert_eq!(served.header("content-type"), Some("image/png"));
    assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(served.bytes, image);
}

#[tokio::test]
async fn audio_report_keeps_the_uploaded_duration_and_type() {
    let app = TestApp::new().await;
    let parts = [
        Part::text("kind", "audio"),
        Part::text("durationMs", "4321"),
        Part::file("note.webm", "audio/webm;codecs=opus", &webm()),
    ];
    let answer = app.upload(&parts).await.ok(200).clone();
    assert_eq!(answer["mime"], json!("audio/webm;codecs=opus"));
    assert_eq!(answer["durationMs"], json!(4321));
    let blob_id = answer["blobId"].as_str().unwrap();
    // An Ogg note declared as something else is typed by its bytes.
    let ogg_answer = app.upload_ok("audio", "application/octet-stream", &ogg()).await;
    assert_eq!(ogg_answer["mime"], json!("audio/ogg"));

    let report_id = app
        .file_report(json!({"blocks": [
            {"type": "audio", "blobId": blob_id, "durationMs": 5, "mime": "audio/mpeg", "bytes": 2, "transcript": "the cart is empty"},
        ]}))
        .await;
    let report = app.stored(&report_id).await;
    // Without text, the title is the reporter's first words: here the transcript.
    assert_eq!(report["title"], json!("the cart is empty"));
    assert_eq!(
        report["blocks"][0],
        json!({"type": "audio", "blobId": blob_id, "durationMs": 4321, "mime": "audio/webm;codecs=opus", "bytes": webm().len(), "transcript": "the cart is empty"})
    );
    let served = app.rest("GET", &app.p(&format!("/blobs/{blob_id}")), None).await;
    assert_eq!(served.header("content-type"), Some("audio/webm;codecs=opus"));
    assert_eq!(served.bytes, webm());
}

#[tokio::test]
async fn file_attachments_take_any_type_and_are_served_only_as_downloads() {
    let app = TestApp::new().await;
    let html = b"<html><script>alert(document.cookie)</script></html>".to_vec();
    let answer = app
        .upload(&[Part::text("kind", "file"), Part::file("page.html", "text/html; charset=utf-8", &html)])
        .await
        .ok(200)
        .clone();
    assert_eq!(answer["mime"], json!("text/html"));
    assert_eq!(answer["bytes"], json!(html.len()));
    let blob_id = answer["blobId"].as_str().unwrap().to_string();

    let report_id = app
        .file_report(json!({"blocks": [
            {"type": "file", "blobId": blob_id, "name": "page.html", "mime": "image/png", "description": "the page as saved"},
        ]}))
        .await;
    let report = app.stored(&report_id).await;
    assert_eq!(report["title"], json!("the page as saved"), "the file's description: the reporter's words");
    assert_eq!(
        report["blocks"][0],
        json!({"type": "file", "blobId": blob_id, "name": "page.html", "mime": "text/html", "bytes": html.len(), "description": "the page as saved"})
    );

    let served = app.rest("GET", &app.p(&format!("/blobs/{blob_id}")), None).await;
    assert_eq!(served.status.as_u16(), 200);
    let disposition = served.header("content-disposition").unwrap();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert!(disposition.contains("page.html"), "{disposition}");
    assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    assert_ne!(served.header("content-type"), Some("text/html"));
    assert_eq!(served.bytes, html);

    // Ingest never serves blobs back, and REST only to this project with a key.
    let (other, other_key) = app.other_project().await;
    let foreign = app.get(&format!("/api/v1/projects/{}/blobs/{blob_id}", other.id), &other_key).await;
    assert_eq!(foreign.status.as_u16(), 404);
    let key = app.key().to_string();
    let via_ingest = app.ingest("GET", &format!("/ingest/blob/{blob_id}"), Some(&key), &[], Body::empty()).await;
    assert_ne!(via_ingest.status.as_u16(), 200);
}

#[tokio::test]
async fn multipart_fields_may_come_in_any_order() {
    let app = TestApp::new().await;
    let image = png(4, 6);
    let answer = app
        .upload(&[
            Part::file("shot.png", "image/png", &image),
            Part::text("width", "1"),
            Part::text("kind", "screenshot"),
        ])
        .await
        .ok(200)
        .clone();
    assert_eq!(answer["mime"], json!("image/png"));
    assert_eq!((answer["width"].clone(), answer["height"].clone()), (json!(4), json!(6)));
    let audio = app
        .upload(&[
            Part::file("a.ogg", "audio/ogg", &ogg()),
            Part::text("durationMs", "1500"),
            Part::text("kind", "audio"),
        ])
        .await
        .ok(200)
        .clone();
    assert_eq!(audio["durationMs"], json!(1500));
    // Unknown fields are ignored.
    let file = app
        .upload(&[
            Part::text("note", "ignored"),
            Part::file("a.txt", "text/plain", b"hello"),
            Part::text("kind", "file"),
        ])
        .await
        .ok(200)
        .clone();
    assert_eq!(file["mime"], json!("text/plain"));

    let report_id = app
        .file_report(json!({"blocks": [
            {"type": "screenshot", "blobId": answer["blobId"]},
            {"type": "audio", "blobId": audio["blobId"]},
            {"type": "file", "blobId": file["blobId"], "name": "a.txt"},
        ]}))
        .await;
    let report = app.stored(&report_id).await;
    assert_eq!(report["title"], json!("Screenshot"));
    assert_eq!(report["blocks"][0]["width"], json!(4));
    assert_eq!(report["blocks"][1]["durationMs"], json!(1500));
}

// ---------------------------------------------------------------------------------------------
// Reports

#[tokio::test]
async fn every_block_type_is_accepted_and_kept_as_sent() {
    let app = TestApp::new().await;
    let target = json!({"css": "#pay", "xpath": "/html/body/main/button[2]", "testIds": ["pay-button"], "reactComponent": "PayButton", "matchIndex": 0});
    let blocks = json!([
        {"type": "pinpoint", "selector": "#pay", "target": target, "comment": "nothing happens", "point": {"x": 0.5, "y": 0.25}, "rect": {"x": 10, "y": 20, "width": 100, "height": 40}},
        {"type": "selection", "text": "Total: $0.00", "selector": "#total"},
        {"type": "quote", "text": "Free shipping", "selector": "#promo", "target": {"css": "#promo"}, "comment": "not true"},
        {"type": "text", "text": "Second text"},
    ]);
    let report_id = app.file_report(json!({"blocks": blocks})).await;
    let report = app.stored(&report_id).await;
    assert_eq!(report["blocks"], blocks);
    // The title comes from the first text block, wherever it is.
    assert_eq!(report["title"], json!("Second text"));
    // Without one, the reporter's first words: the pinpoint's comment.
    let pin_only = app.file_report(json!({"blocks": [blocks[0].clone()]})).await;
    assert_eq!(app.stored(&pin_only).await["title"], json!("nothing happens"));
    // Without any, what the element shows, else its selector.
    let mut silent = blocks[0].clone();
    silent.as_object_mut().unwrap().remove("comment");
    let pin_only = app.file_report(json!({"blocks": [silent]})).await;
    assert_eq!(app.stored(&pin_only).await["title"], json!("Pinpoint on #pay"));
}

#[tokio::test]
async fn titles_are_derived_from_the_first_text_line() {
    let app = TestApp::new().await;
    let long = "word ".repeat(40);
    for (text, title) in [
        ("\n\n  - [ ] Checkout **fails** on Safari  \nsecond line", "Checkout fails on Safari"),
        (long.as_str(), long.chars().take(80).collect::<String>().trim_end()),
    ] {
        let id = app.file_report(text_report(text)).await;
        assert_eq!(app.stored(&id).await["title"], json!(title));
    }
}

#[tokio::test]
async fn an_unknown_channel_falls_back_to_the_default_channel() {
    let app = TestApp::new().await;
    let cases = [
        (json!({"blocks": [text_block("a")], "channelKey": "does-not-exist"}), "bug"),
        (json!({"blocks": [text_block("b")]}), "bug"),
        (json!({"blocks": [text_block("c")], "channelKey": null}), "bug"),
        (json!({"blocks": [text_block("d")], "channelKey": "idea"}), "idea"),
    ];
    for (body, channel) in cases {
        let id = app.file_report(body).await;
        assert_eq!(app.stored(&id).await["channelKey"], json!(channel));
    }
    // An archived channel is not used; the default takes over.
    app.rest("PATCH", &app.p("/channels/question"), Some(json!({"archived": true}))).await.ok(200);
    let id = app.file_report(json!({"blocks": [text_block("e")], "channelKey": "question"})).await;
    assert_eq!(app.stored(&id).await["channelKey"], json!("bug"));
    // A changed default is followed.
    app.patch_project(json!({"defaultChannelKey": "idea"})).await;
    let id = app.file_report(json!({"blocks": [text_block("f")], "channelKey": "nope"})).await;
    assert_eq!(app.stored(&id).await["channelKey"], json!("idea"));
    // Ingest never creates channels.
    let channels = app.rest("GET", &app.p("/channels?archived=true"), None).await.ok(200).clone();
    assert_eq!(channels["items"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn element_texts_and_failed_requests_are_stored_as_sent() {
    let app = TestApp::new().await;
    let target = json!({"css": "#pay", "xpath": "/html/body/button", "testIds": ["pay"], "text": "Pay now",
        "accessibleName": "Pay 19.99 EUR"});
    let network = json!([
        {"method": "POST", "url": "https://shop.example.com/api/pay?cart=[redacted]", "status": 500, "durationMs": 132,
         "time": "2026-05-01T09:30:00.000Z"},
        {"method": "GET", "url": "/api/me", "status": 0, "durationMs": 0.5, "time": "2026-05-01T09:29:00Z"}
    ]);
    let id = app
        .file_report(json!({
            "blocks": [
                {"type": "pinpoint", "selector": "#pay", "target": target},
                {"type": "quote", "text": "Pay", "selector": "#pay", "target": target, "comment": "this"},
                {"type": "selection", "text": "Pay", "selector": "#pay", "target": target}
            ],
            "context": {"network": network}
        }))
        .await;
    let stored = app.stored(&id).await;
    for block in stored["blocks"].as_array().unwrap() {
        assert_eq!(block["target"], target);
    }
    assert_eq!(stored["context"]["network"], network);
}

#[tokio::test]
async fn context_is_kept_and_artifact_id_puts_the_report_in_its_room() {
    let app = TestApp::new().await;
    let context = json!({
        "url": "https://app.example.com/editor/42",
        "pathname": "/editor/42",
        "host": "app.example.com",
        "userAgent": "Mozilla/5.0",
        "language": "en-GB",
        "viewport": {"width": 390, "height": 844},
        "device": "mobile",
        "timestamp": "2025-01-02T03:04:05.678Z",
        "flags": ["new-editor"],
        "reporter": {"email": "ann@example.com", "name": "Ann"},
        "consoleErrors": ["TypeError: x is undefined"],
        "userId": "user-7",
        "extra": {"plan": "pro", "nested": {"a": 1}},
        "custom": {"team": "growth"},
        "artifactId": "design-42",
        "artifact": {"id": "design-42", "title": "Landing page v2", "tool": "figma", "constraints": ["mobile first"], "url": "https://figma.example.com/f/42", "meta": {"rev": "7"}},
        "channelSource": "matcher",
        "somethingNew": {"kept": true},
    });
    let id = app.file_report(json!({"blocks": [text_block("Logo is cut off")], "context": context})).await;
    let report = app.stored(&id).await;
    assert_eq!(report["context"], context);
    assert_eq!(report["artifactId"], json!("design-42"));
    // Without a verified identity the author is the context's user id.
    assert_eq!(report["author"], json!({"kind": "reporter", "id": "user-7", "label": null}));

    let rooms = app.rest("GET", &app.p("/rooms"), None).await.ok(200).clone();
    let items = rooms["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{rooms}");
    assert_eq!(items[0]["artifactId"], json!("design-42"));
    assert_eq!(items[0]["count"], json!(1));
    let listed = app.rest("GET", &app.p("/feedback?artifactId=design-42"), None).await.ok(200).clone();
    assert_eq!(listed["items"][0]["id"], json!(id));
}

// ---------------------------------------------------------------------------------------------
// Identity

const SECRET: &str = "identity-secret-for-the-ingest-tests";

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn token(claims: Value, secret: &str) -> String {
    svc_core::identity::sign(&claims, secret)
}

#[tokio::test]
async fn a_valid_identity_token_gives_a_verified_identity() {
    let app = TestApp::new().await;
    app.set_identity_secret(Some(SECRET)).await;
    let claims = json!({"sub": "u-123", "email": "ann@example.com", "name": "Ann Smith", "avatarUrl": "https://cdn.example.com/ann.png", "iat": now_secs(), "exp": now_secs() + 600});
    let jwt = token(claims, SECRET);
    let key = app.key().to_string();
    let body = json!({"blocks": [text_block("signed in")], "context": {"userId": "someone-else"}});
    let resp = app.report_with(&key, &[(IDENTITY, &jwt)], body).await;
    let id = resp.ok(200)["reportId"].as_str().unwrap().to_string();
    let report = app.stored(&id).await;
    assert_eq!(
        report["identity"],
        json!({"userId": "u-123", "email": "ann@example.com", "name": "Ann Smith", "avatarUrl": "https://cdn.example.com/ann.png", "verified": true})
    );
    assert!(report.get("identityError").is_none_or(Value::is_null), "{report}");
    // The verified reporter wins over the context's user id (their id says how they were
    // verified); the label is the name.
    assert_eq!(report["author"], json!({"kind": "reporter", "id": "token:u-123", "label": "Ann Smith"}));

    // Only `sub` and `exp` are required; the label falls back to the email.
    let minimal = token(json!({"sub": "u-9", "email": "bo@example.com", "exp": now_secs() + 60}), SECRET);
    let id = app.report_with(&key, &[(IDENTITY, &minimal)], text_report("minimal")).await.ok(200)["reportId"]
        .as_str()
        .unwrap()
        .to_string();
    let report = app.stored(&id).await;
    assert_eq!(
        report["identity"],
        json!({"userId": "u-9", "email": "bo@example.com", "name": null, "avatarUrl": null, "verified": true})
    );
    assert_eq!(report["author"], json!({"kind": "reporter", "id": "token:u-9", "label": "bo@example.com"}));
}

#[tokio::test]
async fn a_bad_identity_token_still_files_the_report_without_identity() {
    let app = TestApp::new().await;
    app.set_identity_secret(Some(SECRET)).await;
    let key = app.key().to_string();
    let good_claims = json!({"sub": "u-1", "name": "Ann", "exp": now_secs() + 600});
    let cases = [
        (token(good_claims.clone(), "another-secret"), "invalid_signature"),
        // Expired beyond the 60 s leeway.
        (token(json!({"sub": "u-1", "exp": now_secs() - 120}), SECRET), "expired"),
        ("not-a-jwt".to_string(), "malformed"),
        // Signed correctly but without the required `sub`.
        (token(json!({"name": "Ann", "exp": now_secs() + 600}), SECRET), "malformed"),
        // Another algorithm is never accepted.
        (unsigned(&good_claims), "invalid_signature"),
    ];
    for (jwt, error) in cases {
        let body = json!({"blocks": [text_block("my words count")], "context": {"userId": "ctx-user"}});
        let resp = app.report_with(&key, &[(IDENTITY, &jwt)], body).await;
        let id = resp.ok(200)["reportId"].as_str().unwrap().to_string();
        let report = app.stored(&id).await;
        assert_eq!(report["identity"], Value::Null, "{error}");
        assert_eq!(report["identityError"], json!(error));
        assert_eq!(report["author"]["id"], json!("ctx-user"));
        assert_eq!(report["blocks"][0]["text"], json!("my words count"));
    }
    // A header that is not text is a malformed token too; an empty header is no token.
    let binary = axum::http::Request::post("/ingest/report")
        .header(PROJECT_KEY, &key)
        .header("content-type", "application/json")
        .header(IDENTITY, axum::http::HeaderValue::from_bytes(b"eyJ\xff\xfe.x.y").unwrap())
        .body(Body::from(serde_json::to_vec(&text_report("odd header")).unwrap()))
        .unwrap();
    let id = app.send(binary).await.ok(200)["reportId"].as_str().unwrap().to_string();
    let report = app.stored(&id).await;
    assert_eq!((report["identity"].clone(), report["identityError"].clone()), (Value::Null, json!("malformed")));
    let id = app.report_with(&key, &[(IDENTITY, "")], text_report("empty header")).await.ok(200)["reportId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(app.stored(&id).await.get("identityError").is_none_or(Value::is_null));

    // Within the leeway the token still counts.
    let recent = token(json!({"sub": "u-2", "exp": now_secs() - 30}), SECRET);
    let id = app.report_with(&key, &[(IDENTITY, &recent)], text_report("just expired")).await.ok(200)["reportId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(app.stored(&id).await["identity"]["userId"], json!("u-2"));
}

/// The same claims with `alg: none` and no signature.
fn unsigned(claims: &Value) -> String {
    let signed = token(claims.clone(), SECRET);
    let payload = signed.split('.').nth(1).unwrap();
    // base64url of {"alg":"none","typ":"JWT"}
    format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.")
}

#[tokio::test]
async fn without_an_identity_secret_the_header_is_ignored() {
    let app = TestApp::new().await;
    let key = app.key().to_string();
    for jwt in [token(json!({"sub": "u-1", "exp": now_secs() + 600}), SECRET), "garbage".to_string()] {
        let id = app.report_with(&key, &[(IDENTITY, &jwt)], text_report("no secret")).await.ok(200)["reportId"]
            .as_str()
            .unwrap()
            .to_string();
        let report = app.stored(&id).await;
        assert_eq!(report["identity"], Value::Null);
        assert!(report.get("identityError").is_none_or(Value::is_null), "{report}");
    }
    // Clearing a secret goes back to ignoring the header.
    app.set_identity_secret(Some(SECRET)).await;
    app.set_identity_secret(None).await;
    let id = app.report_with(&key, &[(IDENTITY, "garbage")], text_report("cleared")).await.ok(200)["reportId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(app.stored(&id).await.get("identityError").is_none_or(Value::is_null));
}

// ---------------------------------------------------------------------------------------------
// Idempotency

#[tokio::test]
async fn the_same_idempotency_key_files_one_report() {
    the_same_idempotency_key_files_one_report_on(TestApp::new().await).await;
}

/// Also run over PostgreSQL (`rest_postgres.rs`), where keyed reports share the group commit.
pub(crate) async fn the_same_idempotency_key_files_one_report_on(app: TestApp) {
    let key = app.key().to_string();
    let blob_id = app.blob("screenshot", "image/png", &png(2, 2)).await;
    let body = json!({"blocks": [text_block("queued while offline"), {"type": "screenshot", "blobId": blob_id}]});
    let first = app.report_with(&key, &[("idempotency-key", "queue-item-1")], body.clone()).await.ok(200).clone();
    // The repeat answers 200 with the first id, even though its blob is now bound.
    let again = app.report_with(&key, &[("idempotency-key", "queue-item-1")], body.clone()).await.ok(200).clone();
    assert_eq!(first, again);
    assert_eq!(app.reports().await.len(), 1);

    // A different key is a different report (and here the blob is taken).
    app.report_with(&key, &[("idempotency-key", "queue-item-2")], body).await.ingest_error(409, "blob_already_used");
    let other =
        app.report_with(&key, &[("idempotency-key", "queue-item-2")], text_report("second")).await.ok(200).clone();
    assert_ne!(other["reportId"], first["reportId"]);
    // Without a key every request files a report.
    app.file_report(text_report("no key")).await;
    app.file_report(text_report("no key")).await;
    assert_eq!(app.reports().await.len(), 4);

    // The same key in another project is independent.
    let (project, other_key) = app.other_project().await;
    let elsewhere = app
        .report_with(&project.project_key, &[("idempotency-key", "queue-item-1")], text_report("other project"))
        .await
        .ok(200)
        .clone();
    assert_ne!(elsewhere["reportId"], first["reportId"]);
    let listed = app.get(&format!("/api/v1/projects/{}/feedback", project.id), &other_key).await;
    let items = listed.ok(200)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], elsewhere["reportId"]);
    assert_eq!(app.reports().await.len(), 4);
}

#[tokio::test]
async fn concurrent_repeats_of_one_idempotency_key_file_one_report() {
    concurrent_repeats_of_one_idempotency_key_file_one_report_on(TestApp::new().await).await;
}

/// Also run over PostgreSQL (`rest_postgres.rs`).
pub(crate) async fn concurrent_repeats_of_one_idempotency_key_file_one_report_on(app: TestApp) {
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let router = app.router.clone();
        let key = app.key().to_string();
        tasks.push(tokio::spawn(async move {
            let request = axum::http::Request::post("/ingest/report")
                .header(PROJECT_KEY, key)
                .header("content-type", "application/json")
                .header("idempotency-key", "retry-storm")
                .body(Body::from(serde_json::to_vec(&text_report("once")).unwrap()))
                .unwrap();
            let response = tower::ServiceExt::oneshot(router, request).await.unwrap();
            into_resp(response).await.ok(200)["reportId"].as_str().unwrap().to_string()
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(task.await.unwrap());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(app.reports().await.len(), 1);
}

#[tokio::test]
async fn an_unusable_idempotency_key_is_refused_rather_than_dropped() {
    let app = TestApp::new().await;
    let key = app.key().to_string();
    let long = "k".repeat(201);
    for value in ["", long.as_str()] {
        app.report_with(&key, &[("idempotency-key", value)], text_report("x"))
            .await
            .ingest_error(400, "blocks_invalid");
    }
    let at_limit = "k".repeat(200);
    app.report_with(&key, &[("idempotency-key", &at_limit)], text_report("x")).await.ok(200);
}

#[tokio::test]
async fn a_page_address_that_is_not_http_is_kept_as_text_but_never_the_report_link() {
    let app = TestApp::new().await;
    for (url, link) in [
        ("javascript:alert(document.cookie)", None),
        ("file:///home/me/index.html", None),
        ("https://app.example.com/x\n## Comments\n- forged", None),
        ("https://app.example.com/checkout?step=2", Some("https://app.example.com/checkout?step=2")),
    ] {
        let id = app.file_report(json!({"blocks": [text_block("it broke")], "context": {"url": url}})).await;
        let stored = app.stored(&id).await;
        assert_eq!(stored["context"]["url"], json!(url), "the reporter's text is kept");
        assert_eq!(stored["url"], json!(link), "{url:?}");
    }
}
