//! Every ingest error code of the contract, provoked through HTTP: `{error: <code>}` with its status.

use crate::common::ingest::*;
use crate::common::*;
use axum::body::Body;
use serde_json::{Value, json};
use std::time::Duration;

const UNKNOWN_KEY: &str = "pr_AAAAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN_BLOB: &str = "0123456789abcdef01234567";

// ---------------------------------------------------------------------------------------------
// 401 invalid_project_key_or_origin

#[tokio::test]
async fn a_missing_or_unknown_project_key_is_refused_on_every_route() {
    let app = TestApp::new().await;
    let (content_type, multipart_body) =
        multipart(&[Part::text("kind", "screenshot"), Part::file("a.png", "image/png", &png(2, 2))]);
    let report_body = serde_json::to_vec(&text_report("hello")).unwrap();
    let bad_keys: [Option<&str>; 5] = [
        None,
        Some(UNKNOWN_KEY),
        Some(""),
        Some("not-a-key"),
        // A secret key is never a project key, even a real one.
        Some(app.token.as_str()),
    ];
    for key in bad_keys {
        for path in ["/ingest/config", "/ingest/channels"] {
            app.ingest("GET", path, key, &[], Body::empty()).await.ingest_error(401, "invalid_project_key_or_origin");
        }
        app.ingest(
            "POST",
            "/ingest/report",
            key,
            &[("content-type", "application/json")],
            Body::from(report_body.clone()),
        )
        .await
        .ingest_error(401, "invalid_project_key_or_origin");
        app.ingest("POST", "/ingest/blob", key, &[("content-type", &content_type)], Body::from(multipart_body.clone()))
            .await
            .ingest_error(401, "invalid_project_key_or_origin");
    }
    assert!(app.reports().await.is_empty(), "nothing was filed");
}

#[tokio::test]
async fn flags_answer_disabled_for_a_bad_key_instead_of_401() {
    let app = TestApp::new().await;
    app.rest("PUT", &app.p("/flags/new-editor"), Some(json!({"enabled": true}))).await.ok(200);
    for key in [None, Some(UNKNOWN_KEY), Some("garbage")] {
        let resp = app.ingest("GET", "/ingest/flags/new-editor", key, &[], Body::empty()).await;
        assert_eq!(resp.ok(200), &json!({"enabled": false}));
    }
    // With the right key the same flag is on; an unknown flag is off.
    assert_eq!(app.ingest_get("/ingest/flags/new-editor").await.ok(200), &json!({"enabled": true}));
    assert_eq!(app.ingest_get("/ingest/flags/no-such-flag").await.ok(200), &json!({"enabled": false}));
}

#[tokio::test]
async fn allowed_origins_refuse_other_origins_and_let_requests_without_origin_pass() {
    let app = TestApp::new().await;
    app.rest("PUT", &app.p("/flags/beta"), Some(json!({"enabled": true}))).await.ok(200);
    let project = app.patch_project(json!({"allowedOrigins": ["https://app.example.com"]})).await;
    assert_eq!(project["allowedOrigins"], json!(["https://app.example.com"]));

    let key = app.key().to_string();
    let from = |origin: &'static str| vec![("origin", origin)];
    // A listed origin passes (also written with a trailing slash).
    for origin in ["https://app.example.com", "https://app.example.com/"] {
        app.report_with(&key, &from(origin), text_report("from the app")).await.ok(200);
    }
    // Same-origin requests without `Origin` pass.
    app.report_with(&key, &[], text_report("no origin")).await.ok(200);
    app.ingest_get("/ingest/config").await.ok(200);

    // Any other origin is refused on every route; flags answer disabled.
    for origin in ["https://evil.example.com", "http://app.example.com", "https://app.example.com:8443", "null"] {
        app.report_with(&key, &from(origin), text_report("from elsewhere"))
            .await
            .ingest_error(401, "invalid_project_key_or_origin");
        for path in ["/ingest/config", "/ingest/channels"] {
            app.ingest("GET", path, Some(&key), &from(origin), Body::empty())
                .await
                .ingest_error(401, "invalid_project_key_or_origin");
        }
        let (content_type, body) =
            multipart(&[Part::text("kind", "audio"), Part::file("a.webm", "audio/webm", &webm())]);
        let mut headers = from(origin);
        headers.push(("content-type", &content_type));
        app.ingest("POST", "/ingest/blob", Some(&key), &headers, Body::from(body))
            .await
            .ingest_error(401, "invalid_project_key_or_origin");
        let flag = app.ingest("GET", "/ingest/flags/beta", Some(&key), &from(origin), Body::empty()).await;
        assert_eq!(flag.ok(200), &json!({"enabled": false}));
    }
    let flag =
        app.ingest("GET", "/ingest/flags/beta", Some(&key), &from("https://app.example.com"), Body::empty()).await;
    assert_eq!(flag.ok(200), &json!({"enabled": true}));
    assert_eq!(app.reports().await.len(), 3);

    // Letter case does not matter in the host.
    app.patch_project(json!({"allowedOrigins": ["https://App.Example.com"]})).await;
    app.report_with(&key, &from("https://app.example.com"), text_report("case")).await.ok(200);
    app.report_with(&key, &from("https://evil.example.com"), text_report("still refused"))
        .await
        .ingest_error(401, "invalid_project_key_or_origin");

    // An empty list allows every origin again.
    app.patch_project(json!({"allowedOrigins": []})).await;
    app.report_with(&key, &from("https://evil.example.com"), text_report("anyone")).await.ok(200);
}

// ---------------------------------------------------------------------------------------------
// POST /ingest/blob

#[tokio::test]
async fn kind_invalid_for_an_unknown_or_missing_kind() {
    let app = TestApp::new().await;
    let data = png(2, 2);
    for parts in [
        vec![Part::text("kind", "video"), Part::file("a.png", "image/png", &data)],
        // The file first: held to the largest limit, refused when the form ends.
        vec![Part::file("a.png", "image/png", &data), Part::text("kind", "Screenshot")],
        vec![Part::file("a.png", "image/png", &data)],
        vec![Part::text("kind", ""), Part::file("a.png", "image/png", &data)],
    ] {
        app.upload(&parts).await.ingest_error(400, "kind_invalid");
    }
    assert_no_blob_files(&app);
}

#[tokio::test]
async fn file_required_without_a_file() {
    let app = TestApp::new().await;
    app.upload(&[Part::text("kind", "screenshot")]).await.ingest_error(400, "file_required");
    // An empty file is no file.
    app.upload(&[Part::text("kind", "file"), Part::file("empty.txt", "text/plain", b"")])
        .await
        .ingest_error(400, "file_required");
    // The file under another field name.
    let parts = [
        Part::text("kind", "file"),
        Part::File {
            name: "attachment".into(),
            filename: Some("a.txt".into()),
            content_type: None,
            data: b"hi".to_vec(),
        },
    ];
    app.upload(&parts).await.ingest_error(400, "file_required");
    // Not a multipart body at all.
    let key = app.key().to_string();
    for headers in [vec![("content-type", "application/json")], vec![]] {
        app.ingest("POST", "/ingest/blob", Some(&key), &headers, Body::from("{\"kind\":\"file\"}"))
            .await
            .ingest_error(400, "file_required");
    }
    assert_no_blob_files(&app);
}

#[tokio::test]
async fn duration_too_long_over_five_minutes_of_audio() {
    let app = TestApp::new().await;
    let parts = |ms: &str| {
        vec![Part::text("kind", "audio"), Part::text("durationMs", ms), Part::file("a.webm", "audio/webm", &webm())]
    };
    app.upload(&parts("300001")).await.ingest_error(400, "duration_too_long");
    app.upload(&parts("900000")).await.ingest_error(400, "duration_too_long");
    assert_no_blob_files(&app);
    let at_limit = app.upload(&parts("300000")).await;
    assert_eq!(at_limit.ok(200)["durationMs"], json!(300_000));
}

#[tokio::test]
async fn block_too_large_for_a_screenshot_over_4_mb() {
    let app = TestApp::new().await;
    let limit = 4 * 1024 * 1024;
    let mut big = png(4, 4);
    big.resize(limit + 1, 0);
    // `kind` first: the upload is cut off while streaming.
    app.upload(&[Part::text("kind", "screenshot"), Part::file("big.png", "image/png", &big)])
        .await
        .ingest_error(413, "block_too_large");
    // `file` first: held to the largest limit, refused when the kind is known.
    app.upload(&[Part::file("big.png", "image/png", &big), Part::text("kind", "screenshot")])
        .await
        .ingest_error(413, "block_too_large");
    assert_no_blob_files(&app);

    // Exactly at the limit is fine.
    big.truncate(limit);
    let answer = app.upload_ok("screenshot", "image/png", &big).await;
    assert_eq!(answer["bytes"], json!(limit));

    // A file attachment over its 5 MB default limit, and audio over 10 MB.
    let mut file = vec![b'x'; 5 * 1024 * 1024 + 1];
    app.upload(&[Part::text("kind", "file"), Part::file("big.log", "text/plain", &file)])
        .await
        .ingest_error(413, "block_too_large");
    file.truncate(5 * 1024 * 1024);
    app.upload_ok("file", "text/plain", &file).await;
    let mut audio = webm();
    audio.resize(10 * 1024 * 1024 + 1, 0);
    app.upload(&[Part::text("kind", "audio"), Part::file("big.webm", "audio/webm", &audio)])
        .await
        .ingest_error(413, "block_too_large");
}

#[tokio::test]
async fn block_too_large_for_a_report_body_over_512_kb() {
    let app = TestApp::new().await;
    // 60 KB of context and 50 text blocks of 10,000 characters: every part valid, the whole too big.
    let blocks: Vec<Value> = (0..50).map(|_| text_block(&"x".repeat(10_000))).collect();
    let body = json!({"blocks": blocks, "context": {"extra": {"note": "y".repeat(60_000)}}});
    assert!(serde_json::to_vec(&body).unwrap().len() > 512 * 1024);
    app.report(body).await.ingest_error(413, "block_too_large");
    // A body of padding that is not even JSON is refused by size first.
    let key = app.key().to_string();
    app.report_raw(&key, &[], vec![b' '; 512 * 1024 + 1]).await.ingest_error(413, "block_too_large");
    assert!(app.reports().await.is_empty());
}

/// A body declared as 100 MB (or 200 MB for an upload) of which 4 KB arrive and then nothing, and
/// how many bytes were taken from it.
fn stalled_100_mb() -> (Body, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use futures_util::StreamExt;
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = taken.clone();
    let stream = futures_util::stream::once(async { vec![b' '; 4096] }).chain(futures_util::stream::pending()).map(
        move |piece: Vec<u8>| {
            counter.fetch_add(piece.len(), std::sync::atomic::Ordering::SeqCst);
            Ok::<_, std::io::Error>(axum::body::Bytes::from(piece))
        },
    );
    (Body::from_stream(stream), taken)
}

#[tokio::test]
async fn huge_declared_bodies_are_answered_from_the_headers_without_reading_them() {
    let app = TestApp::new().await;
    let key = app.key().to_string();
    let multipart = format!("multipart/form-data; boundary={BOUNDARY}");
    for (path, content_type, length) in
        [("/ingest/report", "application/json", "104857600"), ("/ingest/blob", multipart.as_str(), "209715200")]
    {
        let headers = [("content-type", content_type), ("content-length", length)];
        for (key, status, code) in [
            (None, 401, "invalid_project_key_or_origin"),
            (Some(UNKNOWN_KEY), 401, "invalid_project_key_or_origin"),
            (Some(key.as_str()), 413, "block_too_large"),
        ] {
            let (body, taken) = stalled_100_mb();
            let resp = tokio::time::timeout(Duration::from_secs(10), app.ingest("POST", path, key, &headers, body))
                .await
                .unwrap_or_else(|_| panic!("{path} with {key:?}: the server waited for the body"));
            resp.ingest_error(status, code);
            assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), 0, "{path} with {key:?}: the body was read");
        }
    }
    assert!(app.reports().await.is_empty());
}

#[tokio::test]
async fn mime_not_allowed_for_html_or_svg_screenshots_and_text_audio() {
    let app = TestApp::new().await;
    let html = b"<!doctype html><html><script>alert(1)</script></html>".to_vec();
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.to_vec();
    let cases: [(&str, &str, &[u8]); 5] = [
        ("screenshot", "text/html", &html),
        // Declaring an image type does not help: the bytes decide.
        ("screenshot", "image/png", &html),
        ("screenshot", "image/svg+xml", &svg),
        ("audio", "text/plain", b"just some words, not audio at all"),
        ("audio", "audio/webm", b"just some words, not audio at all"),
    ];
    for (kind, declared, data) in cases {
        app.upload(&[Part::text("kind", kind), Part::file("x", declared, data)])
            .await
            .ingest_error(415, "mime_not_allowed");
    }
    assert_no_blob_files(&app);
}

#[tokio::test]
async fn screenshots_that_only_start_like_an_image_are_refused() {
    let app = TestApp::new().await;
    // PNG's signature, then HTML where the header should be: read as a header, its bytes would
    // claim a width of over a billion pixels.
    let mut png_then_html = b"\x89PNG\r\n\x1a\n".to_vec();
    png_then_html.extend_from_slice(b"\0\0\0\rIHDRcxx<html><script>alert(1)</script></html>");
    // A real PNG whose header was edited after its checksum was written.
    let mut tampered = png(4, 3);
    tampered[16] = 0x63;
    let jpeg_then_html = [&[0xFF, 0xD8, 0xFF, 0xE0][..], b"<html><body>not a picture</body></html>"].concat();
    let webp_then_html = b"RIFF\x20\0\0\0WEBPVP8 <html><body>not a picture</body></html>".to_vec();
    for (name, data) in
        [("png_then_html", png_then_html), ("tampered", tampered), ("jpeg", jpeg_then_html), ("webp", webp_then_html)]
    {
        let answer = app
            .upload(&[
                Part::text("kind", "screenshot"),
                Part::text("width", "800"),
                Part::text("height", "600"),
                Part::file("shot.png", "image/png", &data),
            ])
            .await;
        assert_eq!(answer.status.as_u16(), 415, "{name}: {}", answer.text);
        answer.ingest_error(415, "mime_not_allowed");
    }
    assert_no_blob_files(&app);

    // A real image keeps the size its header says, whatever the form claims.
    let answer = app
        .upload(&[
            Part::text("kind", "screenshot"),
            Part::text("width", "999999"),
            Part::text("height", "1"),
            Part::file("shot.png", "image/png", &png(4, 3)),
        ])
        .await;
    let stored = answer.ok(200);
    assert_eq!((stored["width"].clone(), stored["height"].clone()), (json!(4), json!(3)));
}

// ---------------------------------------------------------------------------------------------
// POST /ingest/report

#[tokio::test]
async fn blocks_invalid_for_bodies_that_fail_the_schema() {
    let app = TestApp::new().await;
    let many: Vec<Value> = (0..51).map(|i| text_block(&format!("block {i}"))).collect();
    let target = json!({"css": "#buy"});
    let cases = [
        json!({"blocks": [{"type": "video", "blobId": UNKNOWN_BLOB}]}),
        json!({"blocks": [{"type": "text", "text": ""}]}),
        json!({"blocks": [{"type": "text", "text": "x".repeat(10_001)}]}),
        json!({"blocks": [{"type": "text"}]}),
        json!({"blocks": [{"type": "text", "text": 5}]}),
        json!({"blocks": [{"text": "no type"}]}),
        json!({"blocks": many}),
        json!({"blocks": []}),
        json!({"blocks": "text"}),
        json!({"context": {}}),
        json!([text_block("not an object body")]),
        json!({"blocks": [{"type": "screenshot"}]}),
        json!({"blocks": [{"type": "audio", "blobId": UNKNOWN_BLOB, "transcript": "x".repeat(20_001)}]}),
        json!({"blocks": [{"type": "file", "blobId": UNKNOWN_BLOB}]}),
        json!({"blocks": [{"type": "file", "blobId": UNKNOWN_BLOB, "name": "n".repeat(256)}]}),
        json!({"blocks": [{"type": "quote", "text": "t", "selector": "#a", "target": target}]}),
        json!({"blocks": [{"type": "pinpoint", "selector": "#a", "target": target, "point": {"x": 1.5, "y": 0}}]}),
        json!({"blocks": [{"type": "pinpoint", "selector": "#a"}]}),
        json!({"blocks": [{"type": "selection", "text": "t", "target": {"xpath": "/html"}}]}),
        json!({"blocks": [{"type": "screenshot", "blobId": UNKNOWN_BLOB, "annotations": [{"kind": "circle", "points": []}]}]}),
    ];
    for body in cases {
        app.report(body.clone()).await.ingest_error(400, "blocks_invalid");
    }
    // Not JSON at all.
    let key = app.key().to_string();
    for raw in [&b"{\"blocks\": ["[..], b"", b"blocks=text"] {
        app.report_raw(&key, &[], raw.to_vec()).await.ingest_error(400, "blocks_invalid");
    }
    assert!(app.reports().await.is_empty());
    // 50 blocks are fine.
    let fifty: Vec<Value> = (0..50).map(|i| text_block(&format!("block {i}"))).collect();
    app.file_report(json!({"blocks": fifty})).await;
    // Fields a newer widget sends are kept as they came (forward compatibility).
    let newer = json!({"type": "text", "text": "ok", "extra": 1, "mood": {"angry": true}});
    let id = app.file_report(json!({"blocks": [newer]})).await;
    assert_eq!(app.stored(&id).await["blocks"][0], newer);
}

#[tokio::test]
async fn a_refusal_names_the_field_at_fault() {
    let app = TestApp::new().await;
    let said = |resp: &Resp| resp.body["message"].as_str().unwrap_or_default().to_string();
    let resp = app
        .report(json!({"blocks": [text_block("ok"), {"type": "quote", "text": "t", "selector": "#a",
        "target": {"css": "#a"}, "comment": ""}]}))
        .await;
    assert_eq!(resp.body["error"], "blocks_invalid");
    assert_eq!(said(&resp), "blocks[1].comment: must be 1 to 10000 characters");
    let resp = app.report(json!({"blocks": [text_block("ok")], "context": {"viewport": {"width": "wide"}}})).await;
    assert_eq!(resp.body["error"], "context_invalid");
    assert!(said(&resp).starts_with("context.viewport.width: invalid type"), "{}", resp.text);
}

#[tokio::test]
async fn blob_id_invalid_for_malformed_blob_ids() {
    let app = TestApp::new().await;
    for blob_id in [
        json!("../../etc/passwd"),
        json!("0123456789ABCDEF01234567"),
        json!("0123456789abcdef0123456"),
        json!(""),
        json!(12345),
    ] {
        for kind in ["screenshot", "audio"] {
            app.report(json!({"blocks": [{"type": kind, "blobId": blob_id}]}))
                .await
                .ingest_error(400, "blob_id_invalid");
        }
        app.report(json!({"blocks": [text_block("see file"), {"type": "file", "blobId": blob_id, "name": "a.txt"}]}))
            .await
            .ingest_error(400, "blob_id_invalid");
    }
}

#[tokio::test]
async fn channel_invalid_when_neither_the_requested_nor_the_default_channel_resolves() {
    let app = TestApp::new().await;
    let channel = app.rest("PATCH", &app.p("/channels/bug"), Some(json!({"archived": true}))).await;
    assert_eq!(channel.ok(200)["archived"], json!(true));
    for body in [
        text_report("no channel given"),
        json!({"blocks": [text_block("unknown channel")], "channelKey": "nope"}),
        json!({"blocks": [text_block("the archived default itself")], "channelKey": "bug"}),
        json!({"blocks": [text_block("a wrong type")], "channelKey": 7}),
    ] {
        app.report(body).await.ingest_error(400, "channel_invalid");
    }
    // A real active channel still works, and ingest never created a channel.
    let id = app.file_report(json!({"blocks": [text_block("an idea")], "channelKey": "idea"})).await;
    assert_eq!(app.stored(&id).await["channelKey"], json!("idea"));
    let all = app.rest("GET", &app.p("/channels?archived=true"), None).await.ok(200).clone();
    let keys: Vec<&str> = all["items"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "question"]);
}

#[tokio::test]
async fn context_invalid_for_contexts_that_fail_the_schema() {
    let app = TestApp::new().await;
    for context in [
        json!("a string"),
        json!([1, 2]),
        json!({"url": 5}),
        json!({"device": "fridge"}),
        json!({"viewport": {"width": "wide"}}),
        json!({"timestamp": "yesterday"}),
        json!({"flags": "beta"}),
        json!({"consoleErrors": (0..11).map(|i| format!("error {i}")).collect::<Vec<_>>()}),
        json!({"consoleErrors": ["e".repeat(2_001)]}),
        json!({"userId": "u".repeat(201)}),
        json!({"artifactId": ""}),
        json!({"artifactId": "a".repeat(201)}),
        json!({"artifact": {"title": "no id"}}),
        json!({"artifact": {"id": "a", "url": "javascript:alert(1)"}}),
        json!({"extra": "not an object"}),
        json!({"custom": []}),
        json!({"padding": "p".repeat(65 * 1024)}),
        // Failed requests: at most ten, each with {method, url, status, durationMs, time}.
        json!({"network": "POST /pay 500"}),
        json!({"network": (0..11).map(|_| json!({"method": "GET", "url": "/x", "status": 500, "durationMs": 1,
            "time": "2026-05-01T09:30:00Z"})).collect::<Vec<_>>()}),
        json!({"network": [{"method": "GET", "url": "/x", "status": 500, "durationMs": 1}]}),
        json!({"network": [{"method": "GET", "url": "/x", "status": "500", "durationMs": 1, "time": "2026-05-01T09:30:00Z"}]}),
        // Steps: at most fifty, of the known kinds, a time before the report, short texts.
        json!({"steps": (0..51).map(|_| json!({"kind": "click", "beforeMs": 1, "target": {"css": "#a"}})).collect::<Vec<_>>()}),
        json!({"steps": [{"kind": "hover", "beforeMs": 1}]}),
        json!({"steps": [{"kind": "click"}]}),
        json!({"steps": [{"kind": "click", "beforeMs": -5}]}),
        json!({"steps": [{"kind": "click", "beforeMs": 1, "target": {"css": ""}}]}),
        json!({"steps": [{"kind": "change", "beforeMs": 1, "value": "v".repeat(501)}]}),
        json!({"steps": [{"kind": "input", "beforeMs": 1, "length": -1}]}),
    ] {
        app.report(json!({"blocks": [text_block("x")], "context": context})).await.ingest_error(400, "context_invalid");
    }
    assert!(app.reports().await.is_empty());
}

#[tokio::test]
async fn blocks_invalid_for_element_texts_that_fail_the_selector_info_schema() {
    let app = TestApp::new().await;
    for extra in [
        json!({"text": "x".repeat(201)}),
        json!({"accessibleName": "x".repeat(201)}),
        json!({"text": 5}),
        json!({"accessibleName": {"name": "Pay"}}),
    ] {
        let mut target = json!({"css": "#pay", "xpath": "/html/body/button", "testIds": []});
        target.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        for block in [
            json!({"type": "pinpoint", "selector": "#pay", "target": target}),
            json!({"type": "quote", "text": "Pay", "selector": "#pay", "target": target, "comment": "c"}),
            json!({"type": "selection", "text": "Pay", "selector": "#pay", "target": target}),
        ] {
            app.report(json!({"blocks": [block]})).await.ingest_error(400, "blocks_invalid");
        }
    }
    assert!(app.reports().await.is_empty());
}

#[tokio::test]
async fn blob_mime_mismatch_when_a_block_references_a_blob_of_another_kind() {
    let app = TestApp::new().await;
    let audio = app.blob("audio", "audio/webm", &webm()).await;
    let screenshot = app.blob("screenshot", "image/png", &png(3, 3)).await;
    let file = app.blob("file", "image/png", &png(3, 3)).await;
    for block in [
        json!({"type": "screenshot", "blobId": audio}),
        json!({"type": "audio", "blobId": screenshot}),
        json!({"type": "file", "blobId": screenshot, "name": "shot.png"}),
        // A file attachment that happens to be a PNG is still not a screenshot.
        json!({"type": "screenshot", "blobId": file}),
    ] {
        app.report(json!({"blocks": [block]})).await.ingest_error(400, "blob_mime_mismatch");
    }
    // None of them was bound by the refusals.
    app.file_report(
        json!({"blocks": [{"type": "audio", "blobId": audio}, {"type": "screenshot", "blobId": screenshot}]}),
    )
    .await;
}

#[tokio::test]
async fn blob_project_mismatch_for_another_projects_blob() {
    let app = TestApp::new().await;
    let (other, _) = app.other_project().await;
    let (content_type, body) =
        multipart(&[Part::text("kind", "screenshot"), Part::file("a.png", "image/png", &png(2, 2))]);
    let resp = app
        .ingest("POST", "/ingest/blob", Some(&other.project_key), &[("content-type", &content_type)], Body::from(body))
        .await;
    let blob_id = resp.ok(200)["blobId"].as_str().unwrap().to_string();
    app.report(json!({"blocks": [{"type": "screenshot", "blobId": blob_id}]}))
        .await
        .ingest_error(403, "blob_project_mismatch");
    // Its own project may use it.
    app.report_with(&other.project_key, &[], json!({"blocks": [{"type": "screenshot", "blobId": blob_id}]}))
        .await
        .ok(200);
}

#[tokio::test]
async fn blob_not_found_for_a_well_formed_unknown_id() {
    let app = TestApp::new().await;
    app.report(json!({"blocks": [{"type": "screenshot", "blobId": UNKNOWN_BLOB}]}))
        .await
        .ingest_error(404, "blob_not_found");
    let real = app.blob("screenshot", "image/png", &png(2, 2)).await;
    // One unknown blob among known ones refuses the whole report and binds nothing.
    app.report(json!({"blocks": [{"type": "screenshot", "blobId": real}, {"type": "audio", "blobId": UNKNOWN_BLOB}]}))
        .await
        .ingest_error(404, "blob_not_found");
    app.file_report(json!({"blocks": [{"type": "screenshot", "blobId": real}]})).await;
}

#[tokio::test]
async fn blob_already_used_for_a_blob_bound_to_another_report() {
    let app = TestApp::new().await;
    let blob_id = app.blob("screenshot", "image/png", &png(2, 2)).await;
    let first = app.file_report(json!({"blocks": [{"type": "screenshot", "blobId": blob_id}]})).await;
    app.report(json!({"blocks": [text_block("again"), {"type": "screenshot", "blobId": blob_id}]}))
        .await
        .ingest_error(409, "blob_already_used");
    let reports = app.reports().await;
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["id"], json!(first));
    // Two blocks of one report may show the same blob.
    let twice = app.blob("screenshot", "image/png", &png(2, 2)).await;
    app.file_report(
        json!({"blocks": [{"type": "screenshot", "blobId": twice}, {"type": "screenshot", "blobId": twice}]}),
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// 500 internal: a full disk, and healing once there is room again

/// A small tmpfs mounted for one test. Dropping it (also when the test fails) unmounts it lazily,
/// so files the app still holds open do not keep it mounted, then removes its folder.
struct Tmpfs {
    mount: std::path::PathBuf,
    /// Dropped after the unmount: removes the then empty mount point.
    _root: tempfile::TempDir,
}

impl Tmpfs {
    /// `None`, after saying so, where this machine does not let the test mount (not root).
    fn mount(size: &str) -> Option<Self> {
        let root = tempfile::tempdir().expect("temporary folder");
        let mount = root.path().join("tmpfs");
        std::fs::create_dir(&mount).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .output();
        match mounted {
            Ok(output) if output.status.success() => Some(Tmpfs { mount, _root: root }),
            outcome => {
                let why = match outcome {
                    Ok(output) => String::from_utf8_lossy(&output.stderr).trim().to_string(),
                    Err(error) => error.to_string(),
                };
                eprintln!(
                    "skipped: cannot mount a tmpfs here ({why}); run as root to fill a real file system. \
                     The store's own tests inject the same failures (svc-store sqlite::tests, svc-blob tests)."
                );
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// Writes `path` until the file system has no byte left: large chunks, then smaller ones for the
/// last partly used page.
fn fill(path: &std::path::Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).expect("create the filler");
    let chunk = vec![0u8; 64 * 1024];
    for size in [64 * 1024, 4096, 1] {
        loop {
            match file.write(&chunk[..size]) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::StorageFull => break,
                Err(error) => panic!("filling the tmpfs: {error}"),
            }
        }
    }
}

async fn readyz(app: &TestApp) -> Resp {
    app.ingest("GET", "/readyz", None, &[], Body::empty()).await
}

/// The data directory's file system fills up: reports and uploads answer 500 and `/readyz` 503
/// (reads still work, so only a write can tell). Once there is room again, the same process files
/// reports and blobs and is ready again: no restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_answers_500_and_not_ready_then_heals_once_there_is_room() {
    let Some(tmpfs) = Tmpfs::mount("8m") else { return };
    let app = TestApp::in_folder(&tmpfs.mount, no_rate_limits()).await;
    assert_eq!(readyz(&app).await.ok(200), &json!({"ok": true}));
    let before = app.file_report(text_report("filed before the disk filled up")).await;

    let filler = tmpfs.mount.join("filler");
    fill(&filler);
    app.report(text_report("filed on a full disk")).await.ingest_error(500, "internal");
    let shot = png(2, 2);
    let upload = [Part::text("kind", "screenshot"), Part::file("shot.png", "image/png", &shot)];
    app.upload(&upload).await.ingest_error(500, "internal");
    for _ in 0..2 {
        let not_ready = readyz(&app).await;
        assert_eq!(not_ready.ok(503), &json!({"ok": false, "database": false, "blobStore": false}));
    }
    // Reads go on while writes fail.
    assert_eq!(app.reports().await.len(), 1);
    app.report(text_report("filed on a full disk, again")).await.ingest_error(500, "internal");

    std::fs::remove_file(&filler).unwrap();
    let after = app.file_report(text_report("filed once there was room again")).await;
    assert_eq!(readyz(&app).await.ok(200), &json!({"ok": true}));
    let blob_id = app.blob("screenshot", "image/png", &shot).await;
    app.file_report(json!({"blocks": [{"type": "screenshot", "blobId": blob_id}]})).await;

    let ids: Vec<Value> = app.reports().await.iter().map(|report| report["id"].clone()).collect();
    assert_eq!(ids.len(), 3, "the reports answered 500 were not stored: {ids:?}");
    assert!(ids.contains(&json!(before)) && ids.contains(&json!(after)), "{ids:?}");
}

/// No refused upload leaves bytes behind in the blob folder.
fn assert_no_blob_files(app: &TestApp) {
    let folder = app.dir.path().join("blobs").join("objects");
    let files: Vec<_> = match std::fs::read_dir(&folder) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => vec![],
    };
    assert!(files.is_empty(), "refused uploads left files behind: {files:?}");
}
