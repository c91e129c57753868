//! `get_report` as an agent reads it (issue 17): the reporter's message first, every stored fact on
//! its own line, the elements with their visible text and accessible name, annotations drawn on
//! the image and listed, the status history and every author's comments, the project line only
//! where it says something, and a typical report well under 2,000 tokens.

use crate::common::ingest::Part;
use crate::common::*;
use crate::mcp_support::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use svc_core::model::{Author, Comment};

fn rw() -> [&'static str; 2] {
    ["feedback:read", "feedback:write"]
}

/// What the widget sends for a realistic mobile bug: a pinpoint on the Pay button, a quote, a
/// selection, an annotated screenshot, a log file, and the typed message last (as older widgets
/// sent it), with the whole page context.
async fn widget_report(app: &TestApp) -> (String, String, String) {
    let shot = upload_screenshot(app, &png(200, 120, 3)).await;
    let log = upload_blob(app, "file", "console.log", "text/plain", b"GET /api/cart 200\nPOST /api/pay 500\n").await;
    let log = log["blobId"].as_str().unwrap().to_string();
    let pay = json!({"css": "[data-testid=\"pay\"]", "xpath": "/html/body/main/form/button[2]", "testIds": ["pay", "checkout"],
        "text": "Pay now", "accessibleName": "Pay 19.99 EUR now", "reactComponent": "PayButton"});
    let promo =
        json!({"css": ".promo", "xpath": "/html/body/main/p[1]", "testIds": [], "text": "Free shipping on all orders"});
    let email = json!({"css": "input[name=\"email\"]", "xpath": "/html/body/main/form/input", "testIds": [],
        "accessibleName": "Email address"});
    let id = app
        .file_report(json!({
            "channelKey": "bug",
            "blocks": [
                {"type": "pinpoint", "selector": "[data-testid=\"pay\"]", "target": pay, "comment": "Nothing happens here",
                 "point": {"x": 0.25, "y": 0.5}, "rect": {"x": 300, "y": 520.5, "width": 120, "height": 40}},
                {"type": "quote", "text": "Free shipping", "selector": ".promo", "target": promo, "comment": "Not on my order"},
                {"type": "selection", "text": "Email address", "selector": "input[name=\"email\"]", "target": email},
                {"type": "screenshot", "blobId": shot, "annotations": [
                    {"kind": "rect", "points": [[20, 20], [80, 60]], "color": "#0000ff"},
                    {"kind": "arrow", "points": [[150, 100], [100, 40]]},
                    {"kind": "pen", "points": [[10, 110], [40, 100], [70, 112]]},
                    {"kind": "blur", "points": [[120, 10], [190, 50]]}
                ]},
                {"type": "file", "blobId": log, "name": "console.log", "description": "Copied from devtools"},
                {"type": "text", "text": "The Pay button does nothing on my phone\nI tapped it twice."}
            ],
            "context": {
                "url": "https://shop.example.com/checkout?step=pay",
                "pathname": "/checkout",
                "host": "shop.example.com",
                "userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148",
                "language": "en-GB",
                "viewport": {"width": 390, "height": 844},
                "device": "mobile",
                "timestamp": "2026-05-01T09:29:58.120Z",
                "channelSource": "rules",
                "flags": ["new-checkout"],
                "userId": "u_42",
                "extra": {"release": "v1.4.2"},
                "custom": {"plan": "pro"},
                "consoleErrors": ["TypeError: Cannot read properties of undefined (reading 'total')"],
                "network": [
                    {"method": "POST", "url": "https://shop.example.com/api/pay?cart=[redacted]", "status": 500,
                     "durationMs": 132, "time": "2026-05-01T09:29:50.000Z"},
                    {"method": "GET", "url": "https://cdn.example.com/fonts.css", "status": 0, "durationMs": 30000.4,
                     "time": "2026-05-01T09:29:20.000Z"}
                ],
                "artifactId": "checkout-v2",
                "artifact": {"id": "checkout-v2", "title": "Checkout v2", "meta": {"build": "1234"}}
            }
        }))
        .await;
    (id, shot, log)
}

/// Where `needle` starts in the document (it must be there).
#[track_caller]
fn at(md: &str, needle: &str) -> usize {
    md.find(needle).unwrap_or_else(|| panic!("the document should contain {needle:?}:\n{md}"))
}

#[tokio::test]
async fn get_report_shows_the_message_first_and_every_stored_fact() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&rw()).await;
    let (id, shot, log) = widget_report(&app).await;
    assert!(!tool(&app, &key, "introduce", json!({"agentName": "Claude Code"})).await.is_error);
    tool_json(&app, &key, "set_status", json!({"id": id, "status": "triaged"})).await;
    tool_json(&app, &key, "add_comment", json!({"report_id": id, "text": "Looking into it", "draft": false})).await;
    // Comments by people and by the reporter render the same way, by their author's kind.
    for (kind, label) in [("user", "Ada"), ("reporter", "Rita")] {
        let now = svc_core::time::now_ms();
        let comment = Comment {
            id: svc_core::ids::new_id(),
            report_id: id.clone(),
            project_id: app.project.id.clone(),
            author: Author {
                kind: svc_core::model::AuthorKind::parse(kind).unwrap(),
                id: Some(format!("{kind}:1")),
                label: Some(label.into()),
            },
            text: format!("A word from {label}"),
            kind: None,
            draft: false,
            created_at: now,
            published_at: Some(now),
        };
        let change = svc_store::Change::anywhere(comment.author.clone(), now, vec![svc_store::Write::Comment(comment)]);
        app.store.apply(&change).await.unwrap();
    }

    let out = tool(&app, &key, "get_report", json!({"id": id})).await;
    assert!(!out.is_error, "{}", out.text);
    let md = &out.text;

    // The title is the reporter's words; the message is the first thing of the report.
    assert!(md.starts_with("# The Pay button does nothing on my phone\n"), "{md}");
    let report = at(
        md,
        "## Report (written by the reporter; untrusted)\n\n```text\nThe Pay button does nothing on my phone\nI tapped it twice.\n```",
    );
    // Then the other blocks, in the order they were sent.
    let order =
        ["Pinpoint · Element: ", "Quoted text:", "Selected text:", "Screenshot 1 (200×120", "File: `console.log`"];
    let places: Vec<usize> = order.iter().map(|n| at(md, n)).collect();
    assert!(report < places[0] && places.windows(2).all(|w| w[0] < w[1]), "{places:?}\n{md}");
    // The sections an agent reads after the report.
    let sections = [
        "## Console errors (sent by the reporter's page; untrusted)",
        "## Failed requests (sent by the reporter's page; untrusted)",
        "## Page (sent by the reporter's page; untrusted)",
        "## Artifact (sent by the reporter's page; untrusted)",
        "## Status history",
        "## Comments",
    ];
    let section_places: Vec<usize> = sections.iter().map(|s| at(md, s)).collect();
    assert!(places[4] < section_places[0] && section_places.windows(2).all(|w| w[0] < w[1]), "{md}");

    for line in [
        // The pinpoint: what the element shows and is called, then where it is and where it was touched.
        "Pinpoint · Element: `[data-testid=\"pay\"]` · text: `Pay now` · accessible name: `Pay 19.99 EUR now` · testIds: `pay`, `checkout` · component: `PayButton` · xpath: `/html/body/main/form/button[2]` · clicked at 25%, 50% of its box · box: 120×40 at (300, 520.50) on the page\nComment: `Nothing happens here`",
        "Element: `.promo` · text: `Free shipping on all orders` · xpath: `/html/body/main/p[1]`\nComment: `Not on my order`",
        "Element: `input[name=\"email\"]` · accessible name: `Email address` · xpath: `/html/body/main/form/input`",
        // The screenshot with its annotations listed in image pixels.
        &format!(
            "Screenshot 1 (200×120, 4 annotations): image 1 below, the annotations drawn on it · resource: `svc://blobs/{shot}`"
        ),
        "- rect from (20, 20) to (80, 60), color `#0000ff`",
        "- arrow from (150, 100) pointing to (100, 40)",
        "- pen stroke of 3 points within (10, 100) to (70, 112)",
        "- blur from (120, 10) to (190, 50)",
        &format!(
            "File: `console.log` (36 B, `text/plain`) · resource: `svc://blobs/{log}` · download: `/api/v1/projects/{}/blobs/{log}`",
            app.project.id
        ),
        "Description: `Copied from devtools`",
        "```text\nTypeError: Cannot read properties of undefined (reading 'total')\n```",
        "- `POST` `https://shop.example.com/api/pay?cart=[redacted]` → 500 after 132 ms at 2026-05-01T09:29:50.000Z",
        "- `GET` `https://cdn.example.com/fonts.css` → no answer after 30000 ms at 2026-05-01T09:29:20.000Z",
        "- url: `https://shop.example.com/checkout?step=pay`\n- viewport: 390×844 CSS pixels\n- device: `mobile`\n- userAgent: `Mozilla/5.0 (iPhone",
        "- language: `en-GB`\n- timestamp: `2026-05-01T09:29:58.120Z`\n- channelSource: `rules`\n- flags: `new-checkout`\n- extra: `{\"release\":\"v1.4.2\"}`\n- custom: `{\"plan\":\"pro\"}`\n",
        "- title: `Checkout v2`",
        "- meta: `{\"build\":\"1234\"}`",
        ": new → triaged by `Claude Code` (agent)",
        "reporter: user id `u_42` (unverified)",
    ] {
        at(md, line);
    }
    // Comments: the agent's, a team member's and the reporter's, each saying who.
    let headers: Vec<&str> = md.lines().filter(|l| l.starts_with("Comment ")).collect();
    assert_eq!(headers.len(), 3, "{md}");
    assert!(
        headers[0].starts_with("Comment 1 by `Claude Code` (published, ") && headers[0].ends_with("; agent):"),
        "{headers:?}"
    );
    assert!(
        headers[1].starts_with("Comment 2 by `Ada` (published, ") && headers[1].ends_with("; team member):"),
        "{headers:?}"
    );
    assert!(
        headers[2].starts_with("Comment 3 by `Rita` (published, ") && headers[2].ends_with("; reporter):"),
        "{headers:?}"
    );
    // pathname and host only repeat the URL; a project key reaches one project.
    for absent in ["- pathname:", "- host:", "project:"] {
        assert!(!md.contains(absent), "{absent}:\n{md}");
    }
    // A typical report stays well under 2,000 tokens of text (about 4 characters a token).
    assert!(md.chars().count() < 6_000, "{} characters:\n{md}", md.chars().count());

    // The image has the annotations drawn on it: the blue rectangle's side is blue, the blurred
    // box is flat, and the stored screenshot is unchanged.
    let images = out.images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0]["mimeType"], json!("image/jpeg"));
    let drawn = STANDARD.decode(images[0]["data"].as_str().unwrap()).unwrap();
    let picture = svc_core::picture::decode("image/jpeg", &drawn).expect("a JPEG");
    assert_eq!((picture.width, picture.height), (200, 120));
    let px = |x: u32, y: u32| {
        let i = ((y * picture.width + x) * 3) as usize;
        [picture.rgb[i], picture.rgb[i + 1], picture.rgb[i + 2]]
    };
    let side = px(20, 40);
    assert!(side[2] > 180 && side[0] < 90 && side[1] < 90, "the rectangle's left side is blue: {side:?}");
    let stored = app.get(&format!("/api/v1/projects/{}/blobs/{shot}", app.project.id), &app.token).await;
    assert_eq!(stored.header("content-type"), Some("image/png"), "the stored blob stays as uploaded");
}

#[tokio::test]
async fn the_project_line_is_only_for_organization_wide_keys() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("Where is this?")).await;
    let (_, project_key) = app.mint(&["feedback:read"]).await;
    let md = tool(&app, &project_key, "get_report", json!({"id": report.id})).await.text;
    assert!(!md.lines().any(|l| l.starts_with("project:")), "{md}");
    let org_key = app.mint_org_wide(&["feedback:read"]).await;
    let md = tool(&app, &org_key, "get_report", json!({"id": report.id})).await.text;
    assert!(md.contains(&format!("\nproject: Default (`{}`)\n", app.project.id)), "{md}");
}

#[tokio::test]
async fn titles_come_from_the_reporters_words_or_the_elements_text() {
    let app = TestApp::new().await;
    let target = json!({"css": "#pay", "xpath": "/html/body/button", "testIds": [], "text": "Pay now"});
    let pin = app.file_report(json!({"blocks": [{"type": "pinpoint", "selector": "#pay", "target": target}]})).await;
    assert_eq!(app.stored(&pin).await["title"], json!("Pinpoint on “Pay now”"));
    let commented = app
        .file_report(json!({"blocks": [
            {"type": "pinpoint", "selector": "#pay", "target": target},
            {"type": "pinpoint", "selector": "#pay", "target": target, "comment": "Should be green"}
        ]}))
        .await;
    assert_eq!(app.stored(&commented).await["title"], json!("Should be green"));
}

#[tokio::test]
async fn an_annotated_screenshot_that_cannot_be_decoded_is_sent_as_stored() {
    // A PNG whose header is fine but whose image data is not: the header check at upload passes,
    // drawing cannot decode it, and the agent still gets the stored bytes.
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let mut broken = png(40, 30, 1);
    let cut = broken.len() - 200;
    broken.truncate(cut);
    let answer = app.upload(&[Part::text("kind", "screenshot"), Part::file("s.png", "image/png", &broken)]).await;
    let blob = answer.ok(200)["blobId"].as_str().unwrap().to_string();
    let id = app
        .file_report(json!({"blocks": [{"type": "screenshot", "blobId": blob,
            "annotations": [{"kind": "rect", "points": [[1, 1], [10, 10]]}]}]}))
        .await;
    let out = tool(&app, &key, "get_report", json!({"id": id})).await;
    assert!(out.text.contains("Screenshot 1 (40×30, 1 annotation): image 1 below, as stored"), "{}", out.text);
    let images = out.images();
    assert_eq!(images[0]["mimeType"], json!("image/png"));
    assert_eq!(STANDARD.decode(images[0]["data"].as_str().unwrap()).unwrap(), broken);
}
