//! A project's install and widget tabs, driven as a browser would (session cookie, forms, CSRF
//! token) and checked through the REST API, the loader and ingest: the snippets, the setup token
//! shown once and its self-setup prompt, where the widget was last seen, the widget settings saved
//! through the REST PATCH's operation, the URL tester, the preview that cannot file reports, and the
//! demo page that always shows its launcher.

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use svc_core::account::Role;
use svc_core::secret::Secret;
use svc_service::accounts::{self, NewUser};
use svc_service::sightings::{PageKnown, RESOLUTION_MS, Source};

use super::common::ingest::*;
use super::common::*;

/// An owner (or member) of the default organization, signed in: their session cookie.
async fn person(app: &TestApp, email: &str, role: Role) -> String {
    let new = NewUser::parse(email, "Pat Person", Secret::new(PASSWORD)).expect("a valid new user");
    accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.expect("create user");
    app.sign_in(email, PASSWORD).await
}

/// The page's text with HTML's escapes undone (for comparing snippets as a browser shows them).
fn shown(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find(';').filter(|end| *end <= 8);
        let decoded = end.and_then(|end| match &rest[1..end] {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            entity => entity.strip_prefix('#').and_then(|n| n.parse::<u32>().ok()).and_then(char::from_u32),
        });
        match (decoded, end) {
            (Some(c), Some(end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of the element with this id (`<tag id="id" ...>text</tag>`), unescaped.
fn element_text(html: &str, id: &str) -> Option<String> {
    let start = html.find(&format!("id=\"{id}\""))?;
    let open_end = start + html[start..].find('>')? + 1;
    let close = open_end + html[open_end..].find("</")?;
    Some(shown(&html[open_end..close]))
}

fn install(app: &TestApp) -> String {
    format!("/projects/{}/install", app.pid())
}

fn widget(app: &TestApp) -> String {
    format!("/projects/{}/widget", app.pid())
}

#[tokio::test]
async fn the_install_tab_shows_both_snippets_the_ids_and_the_tool_endpoint() {
    let app = TestApp::new().await;
    let cookie = person(&app, "owner@example.com", Role::Owner).await;
    let page = app.get_page(&install(&app), Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let base = app.state.config.public_url.trim_end_matches('/');
    let key = app.key();
    assert_eq!(
        element_text(&page.text, "snippet-loader").unwrap(),
        format!(r#"<script src="{base}/v1/svc/{key}.js"></script>"#)
    );
    let shared = element_text(&page.text, "snippet-shared").unwrap();
    assert!(shared.contains(&format!(r#"<script src="{base}/v1/svc.js"></script>"#)), "{shared}");
    assert!(shared.contains(&format!("Svc.init({{ projectKey: '{key}' }})")), "{shared}");
    assert_eq!(element_text(&page.text, "project-id").unwrap(), app.pid());
    assert_eq!(element_text(&page.text, "project-key").unwrap(), key);
    for id in ["snippet-loader", "snippet-shared", "project-id", "project-key", "tool-claude", "tool-cursor"] {
        assert!(page.text.contains(&format!(r#"data-copy-from="{id}""#)), "a copy button for {id}");
    }
    // Each tool's configuration names the endpoint and reads the key from SVC_KEY.
    let mcp = format!("{base}/mcp");
    assert_eq!(
        element_text(&page.text, "tool-claude").unwrap(),
        format!(r#"claude mcp add --transport http svc {mcp} --header "Authorization: Bearer $SVC_KEY""#)
    );
    let cursor: Value = serde_json::from_str(&element_text(&page.text, "tool-cursor").unwrap()).expect("JSON");
    assert_eq!(cursor["mcpServers"]["svc"], json!({"url": mcp, "headers": {"Authorization": "Bearer ${env:SVC_KEY}"}}));
    let opencode: Value = serde_json::from_str(&element_text(&page.text, "tool-opencode").unwrap()).expect("JSON");
    assert_eq!(opencode["mcp"]["svc"]["type"], "remote");
    assert_eq!(opencode["mcp"]["svc"]["url"], json!(mcp));
    assert_eq!(opencode["mcp"]["svc"]["headers"]["Authorization"], "Bearer {env:SVC_KEY}");
    let codex = element_text(&page.text, "tool-codex").unwrap();
    assert_eq!(codex, format!("[mcp_servers.svc]\nurl = \"{mcp}\"\nbearer_token_env_var = \"SVC_KEY\""));
    assert!(page.text.contains("Not seen yet."), "a new project's widget has not been seen");
    // Someone who does not reach the project gets 404; nobody signed in goes to sign in.
    let (other, _) = app.other_project().await;
    let elsewhere = app.get_page(&format!("/projects/{}/install", other.id), Some(&cookie)).await;
    assert_eq!(elsewhere.status, 200, "the other project is in the same organization");
    assert_eq!(app.get_page(&format!("/projects/{}/install", "0".repeat(24)), Some(&cookie)).await.status, 404);
    assert_eq!(app.get_page(&install(&app), None).await.status, 303);
}

#[tokio::test]
async fn a_setup_token_is_shown_once_with_a_prompt_and_runs_the_self_setup_flow() {
    let app = TestApp::new().await;
    let cookie = person(&app, "owner@example.com", Role::Owner).await;
    let csrf = csrf_of(&cookie);
    let path = format!("{}/setup-token", install(&app));
    let resp = app.post_form(&path, &[("_csrf", &csrf), ("ttl", "3600")], Some(&cookie)).await;
    assert_eq!(resp.status, 200, "the token is shown on the answer itself, not behind a redirect: {}", resp.text);
    assert!(resp.location().is_none());
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let token = element_text(&resp.text, "setup-token-value").expect("the token is shown");
    assert!(token.starts_with("pr_sk_"), "{token}");
    let prompt = element_text(&resp.text, "agent-prompt").expect("the prompt is shown");
    let base = app.state.config.public_url.trim_end_matches('/');
    for needle in [
        format!("SVC_SETUP_TOKEN={token}"),
        format!("curl -s {base}/api/v1/me"),
        format!("-X PATCH {base}/api/v1/projects/{}", app.pid()),
        format!("-X POST {base}/api/v1/projects/{}/channels", app.pid()),
        format!(r#"<script src="{base}/v1/svc/{}.js"></script>"#, app.key()),
        format!("-X POST {base}/api/v1/projects/{}/keys", app.pid()),
        r#""scopes":["feedback:read","feedback:write"]"#.to_string(),
    ] {
        assert!(prompt.contains(&needle), "the prompt says {needle}:\n{prompt}");
    }

    // The token is a setup token of this project (scope *, one hour), kept only as a hash.
    let me = app.get("/api/v1/me", &token).await;
    let me = me.ok(200);
    assert_eq!(me["projectId"], app.pid());
    assert_eq!(me["scopes"], json!(["*"]));
    let key_id = me["keyId"].as_str().unwrap().to_string();
    assert!(prompt.contains(&format!("/keys/{key_id}")), "step 6 names the token's own id");
    let stored = app.store.get_key(&key_id).await.unwrap().unwrap();
    assert_ne!(stored.key_hash, token);
    assert!(!stored.key_hash.contains(&token[6..]), "only the hash is stored");
    let lifetime = stored.expires_at.unwrap() - stored.created_at;
    assert_eq!(lifetime, 3_600_000);
    let minted = app.store.list_audit(app.pid(), None, 10).await.unwrap();
    assert!(
        minted
            .iter()
            .any(|e| e.action == "key.minted" && e.actor.id.as_deref().is_some_and(|id| id.starts_with("user:"))),
        "{minted:?}"
    );

    // The flow, as the prompt says: configure, add a channel, mint the operational key, revoke.
    app.patch(
        &app.p(""),
        &token,
        json!({"urlPatterns": ["http://localhost:3000/*"], "widgetConfig": {"mascot": "owl"}}),
    )
    .await
    .ok(200);
    app.post(
        &app.p("/channels"),
        &token,
        json!({"key": "checkout", "name": "Checkout", "color": "#12a594", "mascot": "fox"}),
    )
    .await
    .ok(201);
    let operational = app
        .post(&app.p("/keys"), &token, json!({"name": "coding agent", "scopes": ["feedback:read", "feedback:write"]}))
        .await;
    let operational = operational.ok(201)["key"].as_str().unwrap().to_string();
    app.call("DELETE", &app.p(&format!("/keys/{key_id}")), &token, None).await.ok(200);
    app.get("/api/v1/me", &token).await.error(401, "UNAUTHORIZED");
    app.get(&app.p("/feedback"), &operational).await.ok(200);

    // Never shown again.
    let again = app.get_page(&install(&app), Some(&cookie)).await;
    assert!(!again.text.contains(&token));
    assert!(element_text(&again.text, "setup-token-value").is_none());
}

#[tokio::test]
async fn setup_tokens_take_an_offered_lifetime_and_only_owners_mint_them() {
    let app = TestApp::new().await;
    let owner = person(&app, "owner@example.com", Role::Owner).await;
    let path = format!("{}/setup-token", install(&app));
    let resp = app.post_form(&path, &[("_csrf", &csrf_of(&owner)), ("ttl", "900")], Some(&owner)).await;
    let token = element_text(&resp.text, "setup-token-value").unwrap();
    let key_id = app.get("/api/v1/me", &token).await.ok(200)["keyId"].as_str().unwrap().to_string();
    let stored = app.store.get_key(&key_id).await.unwrap().unwrap();
    assert_eq!(stored.expires_at.unwrap() - stored.created_at, 900_000, "15 minutes");
    let refused = app.post_form(&path, &[("_csrf", &csrf_of(&owner)), ("ttl", "99999999")], Some(&owner)).await;
    assert_eq!(refused.status, 400);
    let no_csrf = app.post_form(&path, &[("_csrf", "nope"), ("ttl", "3600")], Some(&owner)).await;
    assert_eq!(no_csrf.status, 403);

    let member = person(&app, "member@example.com", Role::Member).await;
    let page = app.get_page(&install(&app), Some(&member)).await;
    assert_eq!(page.status, 200, "members see the snippets");
    assert!(!page.text.contains("Mint a setup token"));
    let denied = app.post_form(&path, &[("_csrf", &csrf_of(&member)), ("ttl", "3600")], Some(&member)).await;
    assert_eq!(denied.status, 403);
    assert!(!denied.text.contains("pr_sk_"));
}

#[tokio::test]
async fn the_install_tab_says_where_the_widget_was_last_seen() {
    let app = TestApp::new().await;
    let cookie = person(&app, "owner@example.com", Role::Owner).await;
    // The loader is served to a page on another site: its Referer names only the origin.
    let loader = Request::get(format!("/v1/svc/{}.js", app.key()))
        .header(header::REFERER, "https://shop.example.com/")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(loader).await.status, 200);
    let page = app.get_page(&install(&app), Some(&cookie)).await;
    assert!(page.text.contains("https://shop.example.com/"), "seen on this instance at once");
    assert!(page.text.contains("the loader was served"));
    app.state.sightings.flush().await;
    let stored = app.store.get_sighting(app.pid()).await.unwrap().expect("written");
    assert_eq!((stored.url.as_deref(), stored.source.as_str()), (Some("https://shop.example.com/"), "loader"));

    // Within the minute, another loader request is not written again...
    let again = Request::get(format!("/v1/svc/{}.js", app.key()))
        .header(header::REFERER, "https://other.example.com/")
        .body(Body::empty())
        .unwrap();
    app.send(again).await;
    app.state.sightings.flush().await;
    assert_eq!(app.store.get_sighting(app.pid()).await.unwrap().unwrap(), stored);
    // ...but a report naming its page is: it knows the page better.
    let mut report = text_report("The total is wrong");
    report["context"] = json!({"url": "https://shop.example.com/checkout?step=2"});
    app.report_with(app.key(), &[("origin", "https://shop.example.com")], report).await.ok(200);
    app.state.sightings.flush().await;
    let seen = app.store.get_sighting(app.pid()).await.unwrap().unwrap();
    assert_eq!(
        (seen.url.as_deref(), seen.source.as_str()),
        (Some("https://shop.example.com/checkout?step=2"), "report")
    );
    let page = app.get_page(&install(&app), Some(&cookie)).await;
    assert!(page.text.contains("https://shop.example.com/checkout?step=2"), "{}", page.text);
    assert!(page.text.contains("a report was filed"));
    assert!(!page.text.contains("Not seen yet."));
}

#[tokio::test]
async fn sightings_are_kept_at_most_about_once_a_minute_per_project() {
    let app = TestApp::new().await;
    let sightings = &app.state.sightings;
    let (other, _) = app.other_project().await;
    let t0 = svc_core::time::now_ms();
    sightings.record(app.pid(), Source::Config, None, PageKnown::FromHeaders, t0);
    // Within the minute: a page from headers knows more than none, then nothing is new.
    sightings.record(app.pid(), Source::Config, Some("https://a.example/"), PageKnown::FromHeaders, t0 + 10);
    sightings.record(app.pid(), Source::Loader, Some("https://b.example/"), PageKnown::FromHeaders, t0 + 20);
    sightings.record(&other.id, Source::Config, Some("javascript:alert(1)"), PageKnown::FromHeaders, t0 + 30);
    sightings.flush().await;
    let seen = app.store.get_sighting(app.pid()).await.unwrap().unwrap();
    assert_eq!((seen.url.as_deref(), seen.seen_at), (Some("https://a.example/"), t0 + 10));
    let other_seen = app.store.get_sighting(&other.id).await.unwrap().unwrap();
    assert_eq!(other_seen.url, None, "only http(s) addresses are kept");
    // A minute later the next one is kept again.
    sightings.record(
        app.pid(),
        Source::Loader,
        Some("https://b.example/"),
        PageKnown::FromHeaders,
        t0 + 10 + RESOLUTION_MS,
    );
    sightings.flush().await;
    let seen = app.store.get_sighting(app.pid()).await.unwrap().unwrap();
    assert_eq!((seen.url.as_deref(), seen.source.as_str()), (Some("https://b.example/"), "loader"));
}

#[tokio::test]
async fn the_widget_tab_saves_through_the_rest_patch_operation() {
    let app = TestApp::new().await;
    let cookie = person(&app, "owner@example.com", Role::Owner).await;
    let page = app.get_page(&widget(&app), Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(r#"<option value="fox" selected>"#), "the default mascot is selected");
    assert!(page.text.contains(r#"<script src="/v1/svc.js"></script>"#), "the preview loads the real widget");
    assert!(page.text.contains(&format!(r#"data-project-key="{}""#, app.key())));
    let csrf = csrf_of(&cookie);
    let fields = |mascot: &'static str, origins: &'static str| {
        vec![
            ("_csrf", csrf.clone()),
            ("action", "save".to_string()),
            ("mascot", mascot.to_string()),
            ("shape", "pill".to_string()),
            ("anchor", "top-left".to_string()),
            ("triggerVariant", "devwidget".to_string()),
            ("size", "52".to_string()),
            ("offsetX", "12".to_string()),
            ("offsetY", "-4".to_string()),
            ("urlPatterns", "https://app.example.com/*\n\n  http://localhost:3000/*  \n".to_string()),
            ("allowedOrigins", origins.to_string()),
            ("defaultChannelKey", "idea".to_string()),
            ("recordSteps", "on".to_string()),
        ]
    };
    let form = fields("owl", "https://app.example.com\nhttp://localhost:3000/");
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = app.post_form(&widget(&app), &form, Some(&cookie)).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some(format!("/projects/{}/widget?saved=1", app.pid()).as_str()));
    let project = app.rest("GET", &app.p(""), None).await;
    let project = project.ok(200);
    assert_eq!(
        project["widgetConfig"],
        json!({"mascot": "owl", "shape": "pill", "anchor": "top-left", "triggerVariant": "devwidget", "size": 52, "offsetX": 12, "offsetY": -4})
    );
    assert_eq!(project["urlPatterns"], json!(["https://app.example.com/*", "http://localhost:3000/*"]));
    assert_eq!(project["allowedOrigins"], json!(["https://app.example.com", "http://localhost:3000"]));
    assert_eq!(project["defaultChannelKey"], "idea");
    let audit = app.store.list_audit(app.pid(), None, 10).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|e| e.action == "settings.changed" && e.actor.id.as_deref().is_some_and(|id| id.starts_with("user:"))),
        "{audit:?}"
    );
    // The loader bakes the new look in; the page shows the saved values.
    let loader = app.send(Request::get(format!("/v1/svc/{}.js", app.key())).body(Body::empty()).unwrap()).await;
    assert!(loader.text.contains(r#""mascot":"owl""#) && loader.text.contains(r#""anchor":"top-left""#));
    let saved = app.get_page(&format!("{}?saved=1", widget(&app)), Some(&cookie)).await;
    assert!(saved.text.contains("Saved."));
    assert!(
        saved.text.contains(
            r#"<input type="checkbox" name="recordSteps" value="on" aria-describedby="w-steps-hint" checked>"#
        )
    );

    // Unticking "Record the steps" stores the project's switch off, which the loader carries.
    let unticked: Vec<(&str, &str)> = form.iter().copied().filter(|(k, _)| *k != "recordSteps").collect();
    let resp = app.post_form(&widget(&app), &unticked, Some(&cookie)).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["widgetConfig"]["recordSteps"], json!(false));
    let loader = app.send(Request::get(format!("/v1/svc/{}.js", app.key())).body(Body::empty()).unwrap()).await;
    assert!(loader.text.contains(r#""recordSteps":false"#));
    let page = app.get_page(&widget(&app), Some(&cookie)).await;
    assert!(page.text.contains(r#"aria-describedby="w-steps-hint">"#), "unticked on the page too");
    assert!(saved.text.contains(r#"<option value="owl" selected>"#));
    assert!(saved.text.contains(r#"<option value="idea" selected>"#));

    // A refused value: the page again, the message shown, everything kept as entered; nothing saved.
    let form = fields("cat", "app.example.com");
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = app.post_form(&widget(&app), &form, Some(&cookie)).await;
    assert_eq!(refused.status, 400);
    assert!(refused.text.contains("is not an origin like https://app.example.com"), "{}", refused.text);
    assert!(refused.text.contains(r#"<option value="cat" selected>"#), "the entered mascot is kept");
    assert!(refused.text.contains("app.example.com</textarea>"), "the entered origins are kept");
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["widgetConfig"]["mascot"], "owl");
    let mut bad_number: Vec<(&str, &str)> = form.clone();
    bad_number.retain(|(k, _)| *k != "allowedOrigins" && *k != "size");
    bad_number.push(("size", "big"));
    let refused = app.post_form(&widget(&app), &bad_number, Some(&cookie)).await;
    assert_eq!(refused.status, 400);
    assert!(refused.text.contains("widgetConfig.size must be a number"));
    // An archived channel cannot become the default (the service's rule).
    app.rest("PATCH", &app.p("/channels/question"), Some(json!({"archived": true}))).await.ok(200);
    let mut archived: Vec<(&str, &str)> = form.clone();
    archived.retain(|(k, _)| *k != "allowedOrigins" && *k != "defaultChannelKey");
    archived.push(("defaultChannelKey", "question"));
    let refused = app.post_form(&widget(&app), &archived, Some(&cookie)).await;
    assert_eq!(refused.status, 400);
    assert!(refused.text.contains("channel question is archived"), "{}", refused.text);

    // Members see the settings but cannot save them.
    let member = person(&app, "member@example.com", Role::Member).await;
    let page = app.get_page(&widget(&app), Some(&member)).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Only an owner"));
    let mut theirs: Vec<(&str, &str)> = form.clone();
    let member_csrf = csrf_of(&member);
    theirs.retain(|(k, _)| *k != "_csrf" && *k != "allowedOrigins");
    theirs.push(("_csrf", &member_csrf));
    let denied = app.post_form(&widget(&app), &theirs, Some(&member)).await;
    assert_eq!(denied.status, 403);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["widgetConfig"]["mascot"], "owl");
}

#[tokio::test]
async fn the_url_tester_uses_the_widgets_glob_and_saves_nothing() {
    let app = TestApp::new().await;
    let cookie = person(&app, "owner@example.com", Role::Owner).await;
    let csrf = csrf_of(&cookie);
    let test = |patterns: &'static str, url: &'static str| {
        let csrf = csrf.clone();
        let cookie = cookie.clone();
        let app = &app;
        async move {
            let fields = [
                ("_csrf", csrf.as_str()),
                ("action", "test"),
                ("urlPatterns", patterns),
                ("testUrl", url),
                ("mascot", "robot"),
            ];
            let resp = app.post_form(&widget(app), &fields, Some(&cookie)).await;
            assert_eq!(resp.status, 200, "{}", resp.text);
            resp.text
        }
    };
    let yes = test("https://shop.test/checkout*\nhttps://*.example.com/*", "https://shop.test/checkout?step=2").await;
    assert!(shown(&yes).contains("Yes: the launcher shows on"), "{yes}");
    assert!(yes.contains("<code>https://shop.test/checkout*</code>"));
    assert!(yes.contains(r#"<option value="robot" selected>"#), "the entered values stay");
    let no = test("http://localhost:3000/*", "http://127.0.0.1:8080/demo").await;
    assert!(no.contains("matches none of the patterns"), "{no}");
    let every = test("", "https://anything.test/").await;
    assert!(every.contains("No URL patterns: the launcher shows on every page"));
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["urlPatterns"], json!([]), "nothing saved");
}

/// The cases `widget/test/glob.test.ts` runs against the widget's `globMatch`: the server's glob
/// (the URL tester, the demo page's notice) answers the same.
#[test]
fn the_servers_glob_answers_like_the_widgets() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("../../../../widget/test/glob-cases.json")).unwrap();
    assert!(cases.len() > 10);
    for case in cases {
        let (pattern, url) = (case["pattern"].as_str().unwrap(), case["url"].as_str().unwrap());
        assert_eq!(svc_core::project::glob_match(pattern, url), case["match"] == json!(true), "{pattern} ~ {url}");
    }
}

#[tokio::test]
async fn the_preview_cannot_file_reports_and_is_not_a_sighting() {
    let app = TestApp::new().await;
    let config = Request::get("/dashboard/widget-preview/ingest/config")
        .header("x-svc-project-key", app.key())
        .header(header::REFERER, "http://127.0.0.1:8080/projects/x/widget")
        .body(Body::empty())
        .unwrap();
    let config = app.send(config).await;
    assert_eq!(config.status, 200);
    assert_eq!(config.body["urlPatterns"], json!([]));
    let channels = Request::get("/dashboard/widget-preview/ingest/channels")
        .header("x-svc-project-key", app.key())
        .body(Body::empty());
    let channels = app.send(channels.unwrap()).await;
    let keys: Vec<&str> =
        channels.body["channels"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "question"]);
    let report = Request::post("/dashboard/widget-preview/ingest/report")
        .header("x-svc-project-key", app.key())
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(text_report("from the preview").to_string()))
        .unwrap();
    app.send(report).await.ingest_error(403, "preview_only");
    assert!(app.reports().await.is_empty(), "nothing was filed");
    app.state.sightings.flush().await;
    assert_eq!(app.store.get_sighting(app.pid()).await.unwrap(), None);
}

#[tokio::test]
async fn the_demo_page_always_shows_the_launcher_and_says_when_the_patterns_would_hide_it() {
    let app = TestApp::new().await;
    let demo = app.send(Request::get("/demo").body(Body::empty()).unwrap()).await;
    assert!(demo.text.contains("data-ignore-url-patterns></script>"), "the launcher shows whatever the patterns");
    assert!(!demo.text.contains("url-patterns-notice"), "no patterns: nothing to say");
    // README quickstart step 2, literally.
    app.patch(&app.p(""), &app.token, json!({"urlPatterns": ["http://localhost:3000/*"], "defaultChannelKey": "bug", "widgetConfig": {"mascot": "owl", "anchor": "bottom-right"}}))
        .await
        .ok(200);
    let demo = app.send(Request::get("/demo").body(Body::empty()).unwrap()).await;
    assert_eq!(demo.status, 200);
    assert!(demo.text.contains("data-ignore-url-patterns></script>"));
    assert!(demo.text.contains(r#"data-testid="url-patterns-notice""#), "{}", demo.text);
    assert!(demo.text.contains("<code>http://localhost:3000/*</code>"));
    assert!(demo.text.contains("on your own pages the launcher would be hidden here"));
    assert!(demo.text.contains(&format!("<code>{}/demo</code>", app.state.config.public_url)));
    // Patterns that match the demo page: no notice.
    app.patch(&app.p(""), &app.token, json!({"urlPatterns": ["http://localhost:3000/*", "http://127.0.0.1:8080/*"]}))
        .await
        .ok(200);
    let demo = app.send(Request::get("/demo").body(Body::empty()).unwrap()).await;
    assert!(!demo.text.contains("url-patterns-notice"));
    // A hostile pattern is text on the page.
    app.patch(&app.p(""), &app.token, json!({"urlPatterns": ["<img src=x onerror=alert(1)>"]})).await.ok(200);
    let demo = app.send(Request::get("/demo").body(Body::empty()).unwrap()).await;
    assert!(demo.text.contains("&lt;img src=x onerror=alert(1)&gt;") && !demo.text.contains("<img src=x"));
}
