//! The Keys tab of a project, driven as a browser would (session cookie, forms with the CSRF
//! token) and checked where a key is used: REST `/me` answers 200 for a key minted in the page
//! and 401 once it is revoked there.

use serde_json::json;
use svc_core::account::Role;
use svc_core::model::KeyOrigin;
use svc_core::secret::Secret;
use svc_service::accounts::{self, NewUser};
use svc_service::keys::{self, MintRequest};

use super::common::*;
use super::mcp_support::tool;

/// An owner of the default organization, signed in: their cookie.
async fn owner(app: &TestApp) -> String {
    app.user("olivia@example.com").await;
    app.sign_in("olivia@example.com", PASSWORD).await
}

/// Someone with `role` in the default organization, signed in: their cookie.
async fn person(app: &TestApp, email: &str, role: Role) -> String {
    let new = NewUser::parse(email, "", Secret::new(PASSWORD)).unwrap();
    accounts::create_user(app.service(), new, Some((&app.project.org_id, role))).await.unwrap();
    app.sign_in(email, PASSWORD).await
}

fn keys_path(app: &TestApp) -> String {
    format!("/projects/{}/keys", app.pid())
}

/// The table row of one key on the Keys page.
#[track_caller]
fn row<'a>(html: &'a str, key_id: &str) -> &'a str {
    let start = html.find(&format!(r#"<tr id="key-{key_id}""#)).unwrap_or_else(|| panic!("no row for {key_id}"));
    let end = start + html[start..].find("</tr>").expect("the row ends");
    &html[start..end]
}

/// The plaintext shown on the answer to the mint form.
#[track_caller]
fn minted_secret(html: &str) -> String {
    let at = html.find(r#"id="minted-key""#).expect("the minted key is shown");
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find('<').unwrap();
    html[start..end].to_string()
}

async fn me_status(app: &TestApp, key: &str) -> u16 {
    app.get("/api/v1/me", key).await.status.as_u16()
}

/// Mints through the page's form; returns the answer.
async fn mint_form(app: &TestApp, cookie: &str, fields: &[(&str, &str)]) -> Resp {
    let csrf = csrf_of(cookie);
    let mut all = vec![("_csrf", csrf.as_str())];
    all.extend_from_slice(fields);
    app.post_form(&keys_path(app), &all, Some(cookie)).await
}

#[tokio::test]
async fn the_keys_tab_lists_every_key_with_its_origin_last_use_agent_label_expiry_and_state() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&app).await;
    let (agent_id, agent_key) = app.mint(&["feedback:read", "feedback:write"]).await;
    let (oauth, _) = keys::mint(
        app.service(),
        MintRequest {
            org_id: app.project.org_id.clone(),
            project_id: Some(app.pid().into()),
            name: "OAuth: Claude Desktop".into(),
            scopes: vec!["feedback:read".into()],
            ttl_secs: Some(3600),
            origin: KeyOrigin::Oauth,
            by: svc_service::audit::command_line(),
        },
    )
    .await
    .unwrap();
    let (revoked_id, revoked_key) = app.mint(&["project:read"]).await;
    assert_eq!(app.call("DELETE", &app.p(&format!("/keys/{revoked_id}")), &app.token, None).await.status, 200);
    let (expired_id, _) = app.expired_key().await;

    // The agent introduces itself over the tool endpoint and uses its key; uses are written off
    // the request path.
    let intro =
        tool(&app, &agent_key, "introduce", json!({"agentName": "Triage bot", "owner": "ada@example.com"})).await;
    assert!(!intro.is_error, "{}", intro.text);
    assert_eq!(me_status(&app, &agent_key).await, 200);
    assert_eq!(me_status(&app, &revoked_key).await, 401);
    app.state.usage.flush().await;

    let page = app.get_page(&keys_path(&app), Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let html = &page.text;
    let agent = row(html, &agent_id);
    for shown in [
        "key feedback:read feedback:write",
        "feedback:read",
        "feedback:write",
        "REST API",
        "Agent: Triage bot",
        "owner: ada@example.com",
        "Active",
    ] {
        assert!(agent.contains(shown), "the agent's key shows {shown:?}: {agent}");
    }
    assert!(agent.contains("just now"), "last used just now: {agent}");
    assert!(agent.matches(">never<").count() == 1, "never expires, but was used: {agent}");

    let oauth_row = row(html, &oauth.id);
    assert!(oauth_row.contains("OAuth: Claude Desktop") && oauth_row.contains(">OAuth<"), "{oauth_row}");
    assert!(oauth_row.contains("in 59 min") || oauth_row.contains("in 1 h"), "expires in an hour: {oauth_row}");
    let setup_row = html.split("<tr id=\"key-").find(|r| r.contains("Setup token")).expect("the setup token is listed");
    assert!(setup_row.contains("* (everything)"), "{setup_row}");
    assert!(row(html, &revoked_id).contains("Revoked"), "{}", row(html, &revoked_id));
    assert!(row(html, &expired_id).contains("Expired"));
    assert!(!row(html, &revoked_id).contains("/revoke"), "a revoked key has no revoke button");
    assert!(row(html, &agent_id).contains(&format!("/keys/{agent_id}/revoke")));

    // Active keys first, then the revoked and expired ones.
    let at = |id: &str| html.find(&format!(r#"<tr id="key-{id}""#)).unwrap();
    assert!(at(&agent_id) < at(&revoked_id) && at(&oauth.id) < at(&expired_id), "active keys come first");
}

#[tokio::test]
async fn a_key_minted_in_the_dashboard_is_shown_once_and_works_on_the_rest_api() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&app).await;
    let resp = mint_form(
        &app,
        &cookie,
        &[
            ("name", "CI triage"),
            ("scope", "feedback:read"),
            ("scope", "apikey:write"),
            ("ttl", "86400"),
            ("ttl_custom", ""),
        ],
    )
    .await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    assert!(resp.text.contains("shown this once"), "{}", resp.text);
    let secret = minted_secret(&resp.text);
    assert!(secret.starts_with("pr_sk_"), "{secret}");
    assert!(resp.header("location").is_none(), "the secret is never put in a URL");

    let me = app.get("/api/v1/me", &secret).await;
    let me = me.ok(200);
    assert_eq!(me["name"], "CI triage");
    assert_eq!(me["scopes"], json!(["feedback:read", "apikey:write"]));
    // An owner may give a key apikey:write in the dashboard (the API may not): it mints keys itself.
    let child = app.post(&app.p("/keys"), &secret, json!({"name": "child", "scopes": ["feedback:read"]})).await;
    assert_eq!(child.status, 201, "{}", child.text);

    let stored = app.store.list_keys(app.pid()).await.unwrap().into_iter().find(|k| k.name == "CI triage").unwrap();
    assert_eq!(stored.origin, KeyOrigin::Dashboard);
    let lifetime = stored.expires_at.unwrap() - stored.created_at;
    assert_eq!(lifetime, 86_400_000);

    let again = app.get_page(&keys_path(&app), Some(&cookie)).await;
    assert!(!again.text.contains(&secret), "the plaintext is not shown again");
    assert!(!again.text.contains("minted-key"));
    let listed = row(&again.text, &stored.id);
    assert!(listed.contains(">Dashboard<") && listed.contains("apikey:write"), "{listed}");

    let log = svc_service::audit::list(app.service(), &app.project, None, 10).await.unwrap();
    let minted = log.iter().find(|e| e.action == "key.minted" && e.detail["name"] == "CI triage").expect("recorded");
    assert_eq!(minted.actor.kind, "user");
    assert!(!minted.detail.to_string().contains(&secret), "the log never holds the secret");

    // A custom lifetime.
    let resp = mint_form(
        &app,
        &cookie,
        &[("name", "Short"), ("scope", "channel:read"), ("ttl", "custom"), ("ttl_custom", "120")],
    )
    .await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    let short = app.store.list_keys(app.pid()).await.unwrap().into_iter().find(|k| k.name == "Short").unwrap();
    assert_eq!(short.expires_at.unwrap() - short.created_at, 120_000);
}

#[tokio::test]
async fn a_refused_mint_form_comes_back_filled_in_and_mints_nothing() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&app).await;
    let before = app.store.list_keys(app.pid()).await.unwrap().len();
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[("name", "No scopes"), ("ttl", "none")], "Scopes must name at least one scope."),
        (&[("name", "Everything"), ("scope", "*"), ("ttl", "none")], "Scope * is only for setup tokens."),
        (&[("name", "Bad"), ("scope", "feedback:delete"), ("ttl", "none")], "Unknown scope: feedback:delete."),
        (
            &[("name", "Too short"), ("scope", "feedback:read"), ("ttl", "custom"), ("ttl_custom", "30")],
            "from 60 to 31536000",
        ),
        (&[("name", "  "), ("scope", "feedback:read"), ("ttl", "none")], "Name must be 1 to 100 characters."),
    ];
    for (fields, message) in cases {
        let resp = mint_form(&app, &cookie, fields).await;
        assert_eq!(resp.status, 400, "{fields:?}: {}", resp.text);
        assert!(resp.text.contains(message), "{fields:?} says {message:?}: {}", resp.text);
        assert!(!resp.text.contains("minted-key"));
    }
    let resp = mint_form(
        &app,
        &cookie,
        &[("name", "Kept name"), ("scope", "channel:write"), ("ttl", "custom"), ("ttl_custom", "5")],
    )
    .await;
    assert!(resp.text.contains(r#"value="Kept name""#), "the name is kept");
    assert!(resp.text.contains(r#"value="channel:write" checked"#), "the ticked scope stays ticked");
    assert!(!resp.text.contains(r#"value="feedback:read" checked"#), "an unticked scope stays unticked");
    assert_eq!(app.store.list_keys(app.pid()).await.unwrap().len(), before, "nothing was minted");
}

#[tokio::test]
async fn revoking_a_key_in_the_dashboard_makes_the_rest_api_answer_401() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&app).await;
    let (key_id, key) = app.mint(&["feedback:read"]).await;
    assert_eq!(me_status(&app, &key).await, 200);

    let path = format!("/projects/{}/keys/{key_id}/revoke", app.pid());
    let resp = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    let back = resp.location().unwrap().to_string();
    assert_eq!(back, format!("/projects/{}/keys?revoked={key_id}", app.pid()));
    assert_eq!(me_status(&app, &key).await, 401, "revoked keys stop working on the next request");

    let page = app.get_page(&back, Some(&cookie)).await;
    assert!(page.text.contains("Revoked the key key feedback:read."), "{}", page.text);
    assert!(row(&page.text, &key_id).contains("Revoked"));
    let log = svc_service::audit::list(app.service(), &app.project, None, 10).await.unwrap();
    assert!(
        log.iter().any(|e| e.action == "key.revoked" && e.detail["keyId"] == key_id.as_str() && e.actor.kind == "user")
    );

    let twice = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(twice.status, 404, "only an active key is revoked");
}

#[tokio::test]
async fn members_see_the_keys_read_only_and_cannot_mint_or_revoke() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = person(&app, "mia@example.com", Role::Member).await;
    let (key_id, key) = app.mint(&["feedback:read"]).await;
    let before = app.store.list_keys(app.pid()).await.unwrap().len();

    let page = app.get_page(&keys_path(&app), Some(&cookie)).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Only an owner of the organization can mint or revoke them."));
    assert!(row(&page.text, &key_id).contains("key feedback:read"));
    assert!(!page.text.contains("Mint a key") && !page.text.contains("/revoke"), "no forms for members");

    let minted = mint_form(&app, &cookie, &[("name", "Sneaky"), ("scope", "feedback:read"), ("ttl", "none")]).await;
    assert_eq!(minted.status, 403, "{}", minted.text);
    let path = format!("/projects/{}/keys/{key_id}/revoke", app.pid());
    let revoked = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(revoked.status, 403);
    assert_eq!(me_status(&app, &key).await, 200, "the key still works");
    assert_eq!(app.store.list_keys(app.pid()).await.unwrap().len(), before);

    // Someone of another organization does not even find the project.
    let other = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let new = NewUser::parse("eve@example.com", "", Secret::new(PASSWORD)).unwrap();
    accounts::create_user(app.service(), new, Some((&other.id, Role::Owner))).await.unwrap();
    let eve = app.sign_in("eve@example.com", PASSWORD).await;
    assert_eq!(app.get_page(&keys_path(&app), Some(&eve)).await.status, 404);
    let minted = mint_form(&app, &eve, &[("name", "Sneaky"), ("scope", "feedback:read"), ("ttl", "none")]).await;
    assert_eq!(minted.status, 404);
    assert!(app.get_page(&keys_path(&app), None).await.location().unwrap().starts_with("/sign-in?next="));
}

#[tokio::test]
async fn key_forms_from_other_sites_or_without_the_csrf_token_are_refused() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&app).await;
    let (key_id, key) = app.mint(&["feedback:read"]).await;
    let before = app.store.list_keys(app.pid()).await.unwrap().len();
    let csrf = csrf_of(&cookie);
    let fields = [("_csrf", csrf.as_str()), ("name", "Cross"), ("scope", "feedback:read"), ("ttl", "none")];

    let cross =
        app.post_form_with(&keys_path(&app), &fields, Some(&cookie), &[("origin", "https://evil.example")]).await;
    assert_eq!(cross.status, 403);
    assert!(cross.text.contains("This request did not come from the dashboard."));
    let site = app.post_form_with(&keys_path(&app), &fields, Some(&cookie), &[("sec-fetch-site", "cross-site")]).await;
    assert_eq!(site.status, 403);
    let no_token = app.post_form(&keys_path(&app), &fields[1..], Some(&cookie)).await;
    assert_eq!(no_token.status, 403, "{}", no_token.text);
    let wrong = app
        .post_form(&keys_path(&app), &[("_csrf", "0000"), ("name", "W"), ("scope", "feedback:read")], Some(&cookie))
        .await;
    assert_eq!(wrong.status, 403);

    let path = format!("/projects/{}/keys/{key_id}/revoke", app.pid());
    let revoke =
        app.post_form_with(&path, &[("_csrf", &csrf)], Some(&cookie), &[("origin", "https://evil.example")]).await;
    assert_eq!(revoke.status, 403);
    assert_eq!(me_status(&app, &key).await, 200);
    assert_eq!(app.store.list_keys(app.pid()).await.unwrap().len(), before, "nothing was minted");
}
