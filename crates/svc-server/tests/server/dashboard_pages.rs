//! The dashboard's inbox and report view, driven as a browser would (cookie, forms, CSRF token),
//! and checked through the REST API: a person reads every block, changes a status, comments and
//! publishes an agent's draft; reporter content is shown as text only.

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use svc_core::account::Role;
use svc_core::secret::Secret;
use svc_service::accounts::{self, NewUser};

use super::common::ingest::*;
use super::common::*;

/// A person with a session on the app: their cookie and the CSRF token of their pages.
struct Browser {
    cookie: String,
}

impl Browser {
    /// Creates a member of the default organization and signs in through the form.
    async fn sign_in(app: &TestApp, role: Role) -> Browser {
        let new = NewUser::parse("ada@example.com", "Ada Lovelace", Secret::new("correct horse battery")).unwrap();
        accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.unwrap();
        let resp = app
            .send(
                Request::post("/sign-in")
                    .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .header("sec-fetch-site", "same-origin")
                    .body(Body::from("email=ada%40example.com&password=correct+horse+battery"))
                    .unwrap(),
            )
            .await;
        assert_eq!(resp.status.as_u16(), 303, "sign-in answers a redirect: {}", resp.text);
        let set_cookie = resp.header("set-cookie").expect("a session cookie").to_string();
        Browser { cookie: set_cookie.split(';').next().unwrap().to_string() }
    }

    async fn get(&self, app: &TestApp, path: &str) -> Resp {
        app.send(Request::get(path).header(header::COOKIE, &self.cookie).body(Body::empty()).unwrap()).await
    }

    /// Posts a form as the dashboard's own page does.
    async fn post(&self, app: &TestApp, path: &str, fields: &[(&str, &str)]) -> Resp {
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        app.send(
            Request::post(path)
                .header(header::COOKIE, &self.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header("sec-fetch-site", "same-origin")
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }

    /// The CSRF token the page carries in its forms.
    async fn csrf(&self, app: &TestApp) -> String {
        let page = self.get(app, "/").await;
        let marker = r#"name="_csrf" value=""#;
        let at = page.text.find(marker).expect("a form with a CSRF token") + marker.len();
        page.text[at..].split('"').next().unwrap().to_string()
    }
}

const HOSTILE: &str = r#"<script>alert(1)</script><img src=x onerror=alert(2)><svg onload=alert(3)>"#;

#[tokio::test]
async fn without_a_session_the_base_url_is_the_sign_in_page() {
    let app = TestApp::new().await;
    let resp = app.send(Request::get("/").body(Body::empty()).unwrap()).await;
    assert_eq!(resp.status.as_u16(), 303);
    assert_eq!(resp.header("location"), Some("/sign-in"));
    let page = app.send(Request::get("/sign-in").body(Body::empty()).unwrap()).await;
    assert_eq!(page.status.as_u16(), 200);
    for needed in
        [r#"<label for="email">Email</label>"#, r#"<label for="password">Password</label>"#, ">Sign in</button>"]
    {
        assert!(page.text.contains(needed), "sign-in page lacks {needed}");
    }
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
}

#[tokio::test]
async fn the_inbox_lists_reports_and_shows_every_block_as_text() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let shot = app.blob("screenshot", "image/png", &png(40, 30)).await;
    let voice = app.blob("audio", "audio/webm", &webm()).await;
    let id = app
        .file_report(json!({
            "blocks": [
                {"type": "text", "text": format!("Pay button broken {HOSTILE}")},
                {"type": "screenshot", "blobId": shot},
                {"type": "audio", "blobId": voice, "durationMs": 65_000, "transcript": "it just spins"},
                {"type": "pinpoint", "selector": "#pay", "comment": HOSTILE,
                 "target": {"css": "main > button#pay", "xpath": "/html/body/main/button[2]", "testIds": ["pay-button"]},
                 "point": {"x": 0.5, "y": 0.5}, "rect": {"x": 10, "y": 10, "width": 20, "height": 10}},
                {"type": "quote", "text": "Total: $0", "selector": ".total", "target": {"css": ".total"}, "comment": "wrong total"},
            ],
            "context": {"url": "javascript:alert(4)", "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0 Safari/537.36",
                        "viewport": {"width": 40, "height": 30}, "consoleErrors": [HOSTILE], "extra": {"release": HOSTILE}},
        }))
        .await;

    let inbox = browser.get(&app, "/").await;
    assert_eq!(inbox.status.as_u16(), 200, "{}", inbox.text);
    assert!(inbox.text.contains("Pay button broken"), "the list shows the report's title");
    assert!(inbox.text.contains("unread-dot"), "a report nobody opened is unread");

    let page = browser.get(&app, &format!("/?r={id}")).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    let html = &page.text;
    assert!(!html.contains("<script>alert"), "reporter script is never markup");
    assert!(!html.contains("<img src=x"), "reporter HTML is never markup");
    assert!(!html.contains("<svg onload"), "reporter SVG is never markup");
    let around = &html[html.find("alert(1)").unwrap_or(0).saturating_sub(80)..];
    assert!(
        html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "reporter text is shown as text: {}",
        &around[..around.len().min(200)]
    );
    assert!(!html.contains(r#"href="javascript:"#), "a javascript: URL never becomes a link");
    assert!(html.contains(&format!(r#"src="/dashboard/blobs/{shot}""#)), "the screenshot is shown");
    assert!(html.contains("<circle class=\"pin\""), "the pinpoint is marked on the screenshot");
    assert!(
        html.contains(&format!(r#"<audio controls preload="metadata" src="/dashboard/blobs/{voice}">"#)),
        "the voice note plays"
    );
    assert!(html.contains("1:05"), "the voice note's duration");
    assert!(html.contains("<code>main &#62; button#pay</code>"), "the pinpoint's selector");
    assert!(html.contains("/html/body/main/button[2]") && html.contains("pay-button"), "xpath and test ids");
    assert!(html.contains("Chrome 156 on Linux"), "browser and OS from the user agent");

    // The screenshot itself, for the signed-in person only, never sniffed.
    let image = browser.get(&app, &format!("/dashboard/blobs/{shot}")).await;
    assert_eq!(image.status.as_u16(), 200);
    assert_eq!(image.header("content-type"), Some("image/png"));
    assert_eq!(image.header("x-content-type-options"), Some("nosniff"));
    let anonymous = app.send(Request::get(format!("/dashboard/blobs/{shot}")).body(Body::empty()).unwrap()).await;
    assert_eq!(anonymous.status.as_u16(), 303, "no session, no blob");

    // Opening the report marked it read for this person.
    app.state.usage.flush().await;
    let inbox = browser.get(&app, "/").await;
    assert!(!inbox.text.contains("unread-dot"), "an opened report is read");
    let again = browser.get(&app, &format!("/?r={id}")).await;
    assert!(again.text.contains("Ada Lovelace"), "the person is among its viewers");
}

#[tokio::test]
async fn a_person_triages_and_publishes_an_agents_draft() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let id = app.file_report(text_report("Checkout fails")).await;
    let draft = app.seed_comment(&id, "Fixed in #42 by retrying the payment call", true).await;
    let csrf = browser.csrf(&app).await;
    let here = format!("/?r={id}");

    let resp = browser
        .post(&app, &format!("/reports/{id}/status"), &[("_csrf", &csrf), ("status", "in-progress"), ("back", &here)])
        .await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    assert_eq!(resp.header("location"), Some(here.as_str()));
    let stored = app.stored(&id).await;
    assert_eq!(stored["status"], json!("in-progress"));
    let change = stored["statusHistory"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(change["by"]["kind"], json!("user"), "{change}");
    assert_eq!(change["by"]["label"], json!("Ada Lovelace"));

    let bad = browser.post(&app, &format!("/reports/{id}/status"), &[("_csrf", "wrong"), ("status", "fixed")]).await;
    assert_eq!(bad.status.as_u16(), 403, "a wrong CSRF token is refused");
    assert_eq!(app.stored(&id).await["status"], json!("in-progress"));

    let page = browser.get(&app, &here).await;
    assert!(page.text.contains("Draft") && page.text.contains("Publish"), "the draft is marked and can be published");
    let resp = browser
        .post(&app, &format!("/reports/{id}/comments/{}/publish", draft.id), &[("_csrf", &csrf), ("back", &here)])
        .await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    let comments = app.rest("GET", &app.p(&format!("/feedback/{id}/comments")), None).await;
    let published =
        comments.ok(200)["items"].as_array().unwrap().iter().find(|c| c["id"] == json!(draft.id)).unwrap().clone();
    assert_eq!(published["draft"], json!(false));
    assert!(published["publishedAt"].is_string());
    assert_eq!(
        published["authorLabel"],
        draft.author.label.map(Value::from).unwrap_or(Value::Null),
        "it keeps its author"
    );

    let resp = browser
        .post(
            &app,
            &format!("/reports/{id}/comments"),
            &[("_csrf", &csrf), ("text", "Thanks, looking now"), ("back", &here)],
        )
        .await;
    assert_eq!(resp.status.as_u16(), 303);
    let comments = app.rest("GET", &app.p(&format!("/feedback/{id}/comments")), None).await;
    let mine = comments.ok(200)["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["text"] == json!("Thanks, looking now"))
        .unwrap()
        .clone();
    assert_eq!(mine["draft"], json!(false), "a person's comment is published at once");
    assert_eq!(mine["authorLabel"], json!("Ada Lovelace"));
}

#[tokio::test]
async fn a_person_sees_only_their_organizations_reports() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let org = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let foreign = svc_service::projects::create_project(
        app.service(),
        &svc_service::principal::Principal::Operator,
        &org.id,
        "Secret",
    )
    .await
    .unwrap();
    let report = seed_report(&app.store, &foreign.id, Seed::text("Someone else's report")).await;
    let inbox = browser.get(&app, "/").await;
    assert!(!inbox.text.contains("Someone else"), "another organization's report is not listed");
    let direct = browser.get(&app, &format!("/?r={}", report.id)).await;
    assert_eq!(direct.status.as_u16(), 404, "nor shown by id");
}

/// The cells a spreadsheet reads from a CSV line split on `separator`, honouring double quotes.
fn spreadsheet_cells(line: &str, separator: char) -> Vec<String> {
    let (mut cells, mut cell, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

#[tokio::test]
async fn the_filtered_list_exports_as_csv_and_json_lines() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let formula = app.file_report(text_report("=HYPERLINK(\"https://evil.example\",\"click\")")).await;
    app.file_report(text_report("Checkout broken;=1+1;")).await;
    let other = app.file_report(text_report("An ordinary report")).await;
    app.rest("PATCH", &app.p(&format!("/feedback/{other}")), Some(json!({"status": "fixed"}))).await.ok(200);

    let csv = browser.get(&app, "/export?format=csv&status=new").await;
    assert_eq!(csv.status.as_u16(), 200, "{}", csv.text);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(lines[0], "id,shortId,project,status,channel,title,reporter,url,room,issue,createdAt,updatedAt");
    assert_eq!(lines.len(), 3, "only the filtered reports: {}", csv.text);
    let formula_line = lines.iter().find(|line| line.starts_with(&format!("\"{formula}\""))).unwrap();
    assert!(formula_line.contains("\"'=HYPERLINK("), "a formula is neutralised: {formula_line}");
    // A spreadsheet set to split on `;` (or `,`) reads each quoted cell whole: no cell starts a formula.
    for separator in [';', ','] {
        for line in &lines[1..] {
            for cell in spreadsheet_cells(line, separator) {
                assert!(!cell.starts_with(['=', '+', '-', '@']), "{cell:?} in {line} split on {separator:?}");
            }
        }
    }

    let jsonl = browser.get(&app, "/export?format=jsonl").await;
    assert_eq!(jsonl.status.as_u16(), 200);
    let exported: Vec<Value> = jsonl.text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let listed = app.rest("GET", &app.p("/feedback"), None).await;
    assert_eq!(&exported, listed.ok(200)["items"].as_array().unwrap(), "each line is the REST API's report");

    let markdown = browser.get(&app, &format!("/reports/{other}/markdown")).await;
    assert_eq!(markdown.status.as_u16(), 200);
    assert!(markdown.text.starts_with("# An ordinary report"), "{}", markdown.text);
    assert!(markdown.text.contains("status: **fixed**"));
}

#[tokio::test]
async fn an_empty_inbox_says_where_to_start() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Owner).await;
    let inbox = browser.get(&app, "/").await;
    assert_eq!(inbox.status.as_u16(), 200);
    assert!(inbox.text.contains("No reports yet"), "{}", inbox.text);
    assert!(inbox.text.contains(r#"href="/demo""#), "the demo page: {}", inbox.text);
    assert!(inbox.text.contains(&format!(r#"href="/projects/{}/install""#, app.pid())), "{}", inbox.text);
    // A view that filters everything out says so instead.
    app.file_report(text_report("Only a new one")).await;
    let filtered = browser.get(&app, "/?status=fixed").await;
    assert!(!filtered.text.contains("No reports yet"), "{}", filtered.text);
    assert!(filtered.text.contains("No reports match this view."), "{}", filtered.text);
}

#[tokio::test]
async fn rooms_are_listed_renamed_and_archived() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    app.file_report(json!({"blocks": [text_block("Header overlaps")], "context": {"artifactId": "preview-42"}})).await;
    let page = browser.get(&app, "/rooms").await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    assert!(page.text.contains("preview-42"), "an implicit room is listed");
    let csrf = browser.csrf(&app).await;
    let path = format!("/rooms/{}/preview-42", app.pid());
    let resp = browser
        .post(
            &app,
            &path,
            &[
                ("_csrf", &csrf),
                ("action", "save"),
                ("title", "Preview 42"),
                ("meta", "tool: storybook\ngoal: check the header"),
            ],
        )
        .await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    let room = stored_room(&app, "preview-42").await;
    assert_eq!(room["title"], json!("Preview 42"));
    assert_eq!(room["meta"], json!({"tool": "storybook", "goal": "check the header"}));
    browser.post(&app, &path, &[("_csrf", &csrf), ("action", "archive")]).await;
    assert_eq!(stored_room(&app, "preview-42").await["archived"], json!(true));
    assert!(!browser.get(&app, "/rooms").await.text.contains("Preview 42"), "archived rooms are hidden by default");
    assert!(browser.get(&app, "/rooms?archived=1").await.text.contains("Preview 42"));
}

/// A room as the REST API lists it (archived ones included).
async fn stored_room(app: &TestApp, artifact_id: &str) -> Value {
    let rooms = app.rest("GET", &app.p("/rooms?archived=true"), None).await;
    let items = rooms.ok(200)["items"].as_array().unwrap_or_else(|| panic!("{}", rooms.text)).clone();
    items
        .into_iter()
        .find(|r| r["artifactId"] == json!(artifact_id))
        .unwrap_or_else(|| panic!("no room {artifact_id}: {}", rooms.text))
}

#[tokio::test]
async fn selected_reports_change_status_together() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let first = app.file_report(text_report("First")).await;
    let second = app.file_report(text_report("Second")).await;
    let untouched = app.file_report(text_report("Third")).await;
    let csrf = browser.csrf(&app).await;
    let resp = browser
        .post(
            &app,
            "/reports/bulk",
            &[("_csrf", &csrf), ("ids", &first), ("ids", &second), ("status", "canceled"), ("back", "/")],
        )
        .await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    for id in [&first, &second] {
        let stored = app.stored(id).await;
        assert_eq!(stored["status"], json!("canceled"));
        assert_eq!(stored["statusHistory"].as_array().unwrap().len(), 1, "each change is in its report's history");
    }
    assert_eq!(app.stored(&untouched).await["status"], json!("new"));
    let nothing = browser.post(&app, "/reports/bulk", &[("_csrf", &csrf), ("status", "fixed")]).await;
    assert_eq!(nothing.status.as_u16(), 400, "no selection is a clear error");
}

#[tokio::test]
async fn a_person_searches_assigns_and_labels() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let ada = accounts::find_user(app.service(), "ada@example.com").await.unwrap().unwrap();
    let checkout = app.file_report(text_report("Checkout button broken")).await;
    let dark = app.file_report(text_report("Dark mode request")).await;
    app.seed_comment(&dark, "Also mentions the flux capacitor", true).await;
    app.store.run_maintenance_once().await.unwrap();

    let found = browser.get(&app, "/?q=capacitor").await;
    assert!(
        found.text.contains("Dark mode request") && !found.text.contains("Checkout button"),
        "a word of a comment finds its report"
    );
    let marked = browser.get(&app, "/?q=checkout").await;
    assert!(marked.text.contains("<mark>Checkout</mark>"), "the match is highlighted");

    let csrf = browser.csrf(&app).await;
    let resp =
        browser.post(&app, &format!("/reports/{checkout}/assignee"), &[("_csrf", &csrf), ("assignee", &ada.id)]).await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    assert_eq!(app.stored(&checkout).await["assignee"], json!(ada.id));
    let mine = browser.get(&app, "/?assignee=me").await;
    assert!(mine.text.contains("Checkout button") && !mine.text.contains("Dark mode request"), "assigned to me");
    assert!(mine.text.contains("→ Ada Lovelace"), "the list names the assignee");
    let stranger = browser
        .post(
            &app,
            &format!("/reports/{checkout}/assignee"),
            &[("_csrf", &csrf), ("assignee", "01a1fdda418e0038b1149fe5")],
        )
        .await;
    assert_eq!(stranger.status.as_u16(), 400, "only a member can be assigned");

    let resp = browser.post(&app, &format!("/reports/{dark}/labels"), &[("_csrf", &csrf), ("add", "Payments")]).await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    assert_eq!(app.stored(&dark).await["labels"], json!(["Payments"]));
    assert!(
        browser.get(&app, "/?label=payments").await.text.contains("Dark mode request"),
        "the label filter ignores case"
    );
    browser.post(&app, &format!("/reports/{dark}/labels"), &[("_csrf", &csrf), ("remove", "Payments")]).await;
    assert_eq!(app.stored(&dark).await["labels"], json!([]));

    let resp = browser
        .post(
            &app,
            "/reports/bulk",
            &[("_csrf", &csrf), ("ids", &checkout), ("ids", &dark), ("assignee", &ada.id), ("label", "sprint-12")],
        )
        .await;
    assert_eq!(resp.status.as_u16(), 303, "{}", resp.text);
    for id in [&checkout, &dark] {
        let stored = app.stored(id).await;
        assert_eq!((&stored["assignee"], &stored["labels"]), (&json!(ada.id), &json!(["sprint-12"])));
    }
}

#[tokio::test]
async fn rest_assigns_only_members_and_unassigns_with_null() {
    let app = TestApp::new().await;
    let new = NewUser::parse("lin@example.com", "Lin", Secret::new("correct horse battery")).unwrap();
    let lin = accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Member))).await.unwrap();
    let id = app.file_report(text_report("Assign me")).await;
    let path = app.p(&format!("/feedback/{id}"));
    let answer = app.rest("PATCH", &path, Some(json!({"assignee": lin.id}))).await;
    assert_eq!(answer.ok(200)["assignee"], json!(lin.id));
    assert_eq!(app.stored(&id).await["assignee"], json!(lin.id));
    let listed = app.rest("GET", &app.p(&format!("/feedback?assignee={}", lin.id)), None).await;
    assert_eq!(listed.ok(200)["items"].as_array().unwrap().len(), 1);
    let refused =
        app.rest("PATCH", &path, Some(json!({"assignee": "01a1fdda418e0038b1149fe5", "status": "fixed"}))).await;
    refused.error(400, "BAD_REQUEST");
    assert_eq!(app.stored(&id).await["status"], json!("new"), "nothing changes when the assignee is refused");
    let cleared = app.rest("PATCH", &path, Some(json!({"assignee": null}))).await;
    assert_eq!(cleared.ok(200)["assignee"], Value::Null);
    assert_eq!(app.stored(&id).await["assignee"], Value::Null);
}

#[tokio::test]
async fn the_report_view_shows_every_fact_the_agents_document_has() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    app.set_identity_secret(Some("a-long-identity-secret")).await;
    let now = svc_core::time::now_ms() / 1000;
    let token = svc_core::identity::sign(
        &json!({"sub": "u-7", "email": "grace@example.com", "name": "Grace Hopper", "exp": now + 600}),
        "a-long-identity-secret",
    );
    let shot = app.blob("screenshot", "image/png", &png(400, 300)).await;
    let long =
        format!("When I apply the coupon SAVE10 on the checkout page the total {}", "does not change ".repeat(8));
    let body = json!({
        "blocks": [
            {"type": "text", "text": long},
            {"type": "screenshot", "blobId": shot, "annotations": [
                {"kind": "rect", "points": [[10, 20], [110, 70]], "color": "#00ff00"},
                {"kind": "arrow", "points": [[200, 200], [150, 120]]},
                {"kind": "pen", "points": [[5, 5], [9, 12], [14, 20]], "color": "purple"}
            ]},
            {"type": "pinpoint", "selector": "#apply", "target": {"css": "form > button#apply", "text": "Apply coupon", "accessibleName": "Apply the coupon code"}}
        ],
        "context": {"network": [{"method": "POST", "url": "https://shop.example/api/coupons", "status": 422,
                                 "durationMs": 84, "time": "2026-11-28T10:00:00.000Z"}]}
    });
    let id = app.file_report_with(&[("x-svc-identity", &token)], body).await;
    let draft = app
        .seed_comment(
            &id,
            "The coupon API answers **422**; see [the log](https://logs.example/x).\n\n<script>alert(2)</script>",
            true,
        )
        .await;

    let page = browser.get(&app, &format!("/?r={id}")).await;
    let html = &page.text;
    assert_eq!(page.status.as_u16(), 200);
    // The heading is the reporter's first line whole (the list's title is cut at 80 characters).
    let heading = html.split("<h1>").nth(1).unwrap().split("</h1>").next().unwrap();
    assert!(heading.starts_with("When I apply the coupon") && heading.ends_with("does not change"), "{heading}");
    // The failed request, method, address, status and time.
    assert!(html.contains("Failed requests") && html.contains("https://shop.example/api/coupons"), "{html}");
    assert!(html.contains("<td>422</td>") && html.contains("84 ms") && html.contains("2026-11-28T10:00:00.000Z"));
    // The element's text and accessible name.
    assert!(html.contains("Apply coupon") && html.contains("Apply the coupon code"));
    // The reporter, their email and how they were verified.
    assert!(html.contains("Grace Hopper") && html.contains("grace@example.com"));
    assert!(
        html.contains("the site&#39;s signed identity token") || html.contains("the site's signed identity token"),
        "{html}"
    );
    // What the reporter drew, over the screenshot, in the colours given (a bad colour is the default).
    assert!(
        html.contains(r##"<rect class="drawn" x="10" y="20" width="100" height="50" stroke="#00ff00">"##),
        "{html}"
    );
    assert!(html.contains(r#"<polyline class="drawn" points="200,200 150,120"#), "the arrow with its head");
    assert!(html.contains(r##"points="5,5 9,12 14,20" stroke="#e53935""##), "{html}");
    assert!(!html.contains("onload=\"alert"), "a colour is never markup");
    // The agent's draft as Markdown, without markup of its own; Discard asks first.
    assert!(
        html.contains("<strong>422</strong>")
            && html.contains(r#"href="https://logs.example/x" rel="noopener nofollow noreferrer""#)
    );
    assert!(!html.contains("<script>alert(2)"));
    let discard = html.split(&format!("/comments/{}/discard", draft.id)).next().unwrap();
    assert!(
        discard.ends_with("<summary>Discard…</summary>\n            <form method=\"post\" action=\"/reports/")
            || discard.contains("Discard…"),
        "Discard sits behind a confirmation"
    );
}

#[tokio::test]
async fn views_across_the_inbox_count_and_list_what_needs_a_person_and_are_remembered() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let ada = accounts::find_user(app.service(), "ada@example.com").await.unwrap().unwrap();
    let mut ids = Vec::new();
    for (text, status) in [
        ("Fresh one", "new"),
        ("Fresh two", "new"),
        ("Looked at", "triaged"),
        ("Being fixed", "in-progress"),
        ("Fixed it", "fixed"),
        ("Gone", "canceled"),
    ] {
        let id = app.file_report(text_report(text)).await;
        if status != "new" {
            app.rest("PATCH", &app.p(&format!("/feedback/{id}")), Some(json!({"status": status}))).await.ok(200);
        }
        ids.push(id);
    }
    app.rest("PATCH", &app.p(&format!("/feedback/{}", ids[2])), Some(json!({"assignee": ada.id}))).await.ok(200);
    app.seed_comment(&ids[3], "A fix is ready", true).await;

    let titles = |html: &str| -> Vec<String> {
        html.split("<span class=\"title\">")
            .skip(1)
            .map(|rest| rest.split("</span>").next().unwrap().to_string())
            .collect()
    };
    let count = |html: &str, view: &str| -> String {
        let tab = html.split(&format!("data-view=\"{view}\"")).nth(1).unwrap();
        tab.split("<span class=\"view-count\">").nth(1).unwrap().split("</span>").next().unwrap().to_string()
    };
    let page = browser.get(&app, "/").await;
    for (view, expected) in
        [("triage", "2"), ("open", "2"), ("drafts", "1"), ("waiting", "1"), ("mine", "1"), ("all", "6")]
    {
        assert_eq!(count(&page.text, view), expected, "{view}");
    }
    for (view, expected) in [
        ("triage", vec!["Fresh two", "Fresh one"]),
        ("open", vec!["Being fixed", "Looked at"]),
        ("drafts", vec!["Being fixed"]),
        ("waiting", vec!["Fixed it"]),
        ("mine", vec!["Looked at"]),
    ] {
        let shown = browser.get(&app, &format!("/?view={view}")).await;
        assert_eq!(titles(&shown.text), expected, "{view}");
        assert!(
            shown.header("set-cookie").is_some_and(|c| c.starts_with(&format!("svc_view={view};"))),
            "the view is remembered"
        );
        assert!(shown.text.contains(&format!("data-view=\"{view}\" aria-current=\"page\"")));
    }
    // A bare `/` opens the view last chosen on this browser.
    let remembered = app
        .send(
            Request::get("/")
                .header(header::COOKIE, format!("{}; svc_view=open", browser.cookie))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(titles(&remembered.text), vec!["Being fixed", "Looked at"]);
}

#[tokio::test]
async fn moving_through_the_list_asks_for_the_report_pane_alone() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let id = app.file_report(text_report("The export button spins forever")).await;
    let request = Request::get(format!("/?view=all&r={id}"))
        .header(header::COOKIE, &browser.cookie)
        .header("svc-fragment", "report")
        .body(Body::empty())
        .unwrap();
    let pane = app.send(request).await;
    assert_eq!(pane.status.as_u16(), 200);
    assert!(pane.text.contains("<h1>The export button spins forever</h1>"), "{}", pane.text);
    assert!(pane.text.contains("Find similar reports"), "similar reports come after the report");
    assert!(pane.text.contains(&format!(r#"data-report-id="{id}""#)));
    assert!(!pane.text.contains(r#"aria-label="Reports""#), "the list is not rendered again");
    assert!(!pane.text.contains("<html"), "a fragment, not a page");
    assert_eq!(pane.header("vary"), Some("svc-fragment"));
    // Its forms come back to the view it was asked from.
    assert!(pane.text.contains(&format!(r#"name="back" value="/?view=all&#38;r={id}""#)), "{}", pane.text);
}

/// Files a report with `text` on `url`.
async fn report_on(app: &TestApp, text: &str, url: &str) -> String {
    app.file_report(json!({"blocks": [{"type": "text", "text": text}], "context": {"url": url}})).await
}

#[tokio::test]
async fn similar_reports_are_found_and_a_duplicate_follows_its_original_everywhere() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let original = report_on(&app, "Checkout total is wrong after a coupon", "https://shop.example/cart?step=2").await;
    let duplicate = report_on(&app, "Coupon makes the checkout total wrong", "https://shop.example/cart").await;
    let third = report_on(&app, "Wrong total at checkout with two coupons", "https://shop.example/pay").await;
    let unrelated = report_on(&app, "Logo is blurry on retina screens", "https://shop.example/cart").await;
    app.store.run_maintenance_once().await.unwrap();

    // The view links to its similar reports (the script fills them in after the report).
    let view = browser.get(&app, &format!("/?r={original}")).await;
    assert!(view.text.contains("Find similar reports"), "{}", view.text);
    let request = Request::get(format!("/?r={original}"))
        .header(header::COOKIE, &browser.cookie)
        .header("svc-fragment", "similar")
        .body(Body::empty())
        .unwrap();
    let fragment = app.send(request).await;
    assert!(fragment.text.contains(&duplicate) && !fragment.text.contains("<html"), "{}", fragment.text);
    // The panel: the closest first, with why; the unrelated report (same page, no shared words) is not there.
    let view = browser.get(&app, &format!("/?r={original}&similar=1")).await;
    let html = &view.text;
    let panel = &html[html.find(r#"id="similar-title""#).expect("a Similar reports panel")..];
    let panel = &panel[..panel.find("</section>").unwrap()];
    let (at_duplicate, at_third) = (panel.find(&duplicate).unwrap(), panel.find(&third).unwrap());
    assert!(at_duplicate < at_third, "the same page ranks first: {panel}");
    assert!(panel.contains("same page; shares"), "{panel}");
    assert!(panel.contains("“coupon”"), "{panel}");
    assert!(!panel.contains(&unrelated), "{panel}");

    // Marked from the dashboard by short id: canceled, linked, in one change.
    let csrf = browser.csrf(&app).await;
    let short = svc_core::ids::short_id(&original).to_string();
    let path = format!("/reports/{duplicate}/duplicate");
    let marked = browser.post(&app, &path, &[("_csrf", &csrf), ("of", &short), ("back", "/")]).await;
    assert_eq!(marked.status.as_u16(), 303, "{}", marked.text);
    let stored = app.rest("GET", &app.p(&format!("/feedback/{duplicate}")), None).await.ok(200).clone();
    assert_eq!((&stored["status"], &stored["duplicateOf"]), (&json!("canceled"), &json!(original)));
    let history = stored["statusHistory"].as_array().unwrap();
    assert_eq!(history.last().unwrap()["to"], "canceled");
    let first = app.rest("GET", &app.p(&format!("/feedback/{original}")), None).await.ok(200).clone();
    assert_eq!((&first["duplicateOf"], &first["duplicates"]), (&Value::Null, &json!([duplicate])));

    // Both views say so; the original counts its reporters.
    let view = browser.get(&app, &format!("/?r={original}")).await;
    assert!(view.text.contains("2 people reported this"), "{}", view.text);
    let view = browser.get(&app, &format!("/?r={duplicate}")).await;
    assert!(view.text.contains("Duplicate of"), "{}", view.text);

    // An agent reads the same in get_report, and the similar report still open.
    let (_, agent) = app.mint(&["feedback:read"]).await;
    let doc = crate::mcp_support::tool(&app, &agent, "get_report", json!({"id": original})).await.text;
    assert!(doc.contains(&format!("Also reported by: 1 more report marked as duplicates (`{duplicate}`)")), "{doc}");
    assert!(doc.contains("## Similar reports"), "{doc}");
    assert!(doc.contains(&third), "{doc}");
    let doc = crate::mcp_support::tool(&app, &agent, "get_report", json!({"id": duplicate})).await.text;
    assert!(doc.contains(&format!("Duplicate of: `{original}`")), "{doc}");

    // Over REST: itself and unknown reports are refused; null takes the mark away.
    let patch = |id: &str, body: Value| {
        let path = app.p(&format!("/feedback/{id}"));
        let app = &app;
        async move { app.rest("PATCH", &path, Some(body)).await }
    };
    patch(&third, json!({"duplicateOf": third})).await.error(400, "BAD_REQUEST");
    patch(&third, json!({"duplicateOf": "0000000000000000000000000000"})).await.error(404, "NOT_FOUND");
    // A report that duplicates a duplicate is linked to the original.
    let answer = patch(&third, json!({"duplicateOf": duplicate})).await.ok(200).clone();
    assert_eq!(answer["duplicateOf"], json!(original));
    let answer = patch(&third, json!({"duplicateOf": null, "status": "triaged"})).await.ok(200).clone();
    assert_eq!((&answer["duplicateOf"], &answer["status"]), (&Value::Null, &json!("triaged")));
    let first = app.rest("GET", &app.p(&format!("/feedback/{original}")), None).await.ok(200).clone();
    assert_eq!(first["duplicates"], json!([duplicate]));
}

#[tokio::test]
async fn the_steps_before_a_report_are_a_timeline_of_text_with_the_failure_marked() {
    let app = TestApp::new().await;
    let browser = Browser::sign_in(&app, Role::Member).await;
    let id = app
        .file_report(json!({
            "blocks": [{"type": "text", "text": "Pay fails"}],
            "context": {"url": "https://shop.example/cart", "steps": [
                {"kind": "click", "beforeMs": 3000, "target": {"css": format!("#buy{HOSTILE}"), "text": HOSTILE}},
                {"kind": "input", "beforeMs": 2500, "target": {"css": "#card"}, "inputType": "tel", "length": 16},
                {"kind": "navigate", "beforeMs": 2000, "url": format!("https://shop.example/{HOSTILE}"), "via": "push"},
                {"kind": "console", "beforeMs": 900, "message": HOSTILE},
                {"kind": "request", "beforeMs": 800, "method": "POST", "url": "https://shop.example/api/pay", "status": 500}
            ]}
        }))
        .await;
    let page = browser.get(&app, &format!("/?r={id}")).await;
    let html = &page.text;
    let timeline = &html[html.find(r#"id="steps-title""#).expect("a timeline")..];
    let timeline = &timeline[..timeline.find("</section>").unwrap()];
    assert!(!timeline.contains("<script>alert") && !timeline.contains("<img src=x"), "{timeline}");
    assert!(timeline.contains("Typed 16 characters into a tel field (not recorded)"), "{timeline}");
    assert!(
        timeline.contains(r#"<li class="alarm"><span class="step-what">Request failed: POST 500</span>"#),
        "{timeline}"
    );
    assert!(timeline.contains("3.0 s before") && timeline.contains("800 ms before"), "{timeline}");
    assert!(html.contains(&format!(r#"href="/reports/{id}/reproduction.spec.ts" download"#)), "a download");
    let spec = browser.get(&app, &format!("/reports/{id}/reproduction.spec.ts")).await;
    assert_eq!(spec.status.as_u16(), 200);
    assert!(spec.text.contains("import { test, expect"), "{}", spec.text);
}
