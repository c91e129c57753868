//! Signing in to the dashboard: sessions and their cookies, cross-site and CSRF defences, sign-out
//! (here and everywhere), sign-in throttling, the first owner's setup link, password-reset links and
//! the Content Security Policy on every page.
//!
//! `GET /` (the inbox) is not routed yet; the redirect to sign in is checked on a signed-in-only
//! form instead (`POST /sign-out`).

use crate::common::{PASSWORD, Resp, TestApp, csrf_of, no_rate_limits};
use svc_server::ServerConfig;
use svc_service::accounts;

const WRONG: &str = "not the password";
const NO_MATCH: &str = "That email and password do not match an account.";

#[track_caller]
fn assert_no_cookie(resp: &Resp) {
    assert!(resp.set_cookie().is_none(), "a cookie was set: {:?}", resp.set_cookie());
}

#[tokio::test]
async fn right_password_signs_in_and_a_wrong_one_does_not() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;

    for (email, password) in [("ada@example.com", WRONG), ("nobody@example.com", PASSWORD), ("not an email", PASSWORD)]
    {
        let resp = app.post_form("/sign-in", &[("email", email), ("password", password)], None).await;
        assert_eq!(resp.status, 401, "{email} / {password}: {}", resp.text);
        assert!(resp.text.contains(NO_MATCH), "{}", resp.text);
        assert_no_cookie(&resp);
        // The form comes back with the email as typed, never the password.
        assert!(!resp.text.contains(password), "the password is echoed: {}", resp.text);
    }

    // Emails are not case-sensitive.
    let resp = app.post_form("/sign-in", &[("email", " Ada@Example.COM "), ("password", PASSWORD)], None).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some("/"));
    let cookie = resp.cookie();
    assert!(cookie.starts_with("svc_session=svs_"), "{cookie}");
    assert!(app.signed_in(&cookie).await);
    assert!(!app.signed_in("svc_session=svs_made-up").await);
}

#[tokio::test]
async fn session_cookie_flags_follow_the_public_url() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let resp = app.post_form("/sign-in", &[("email", "ada@example.com"), ("password", PASSWORD)], None).await;
    let set = resp.set_cookie().unwrap().to_string();
    let attributes: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attributes[0].starts_with("svc_session="), "{set}");
    for wanted in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(attributes.contains(&wanted), "{wanted} missing: {set}");
    }
    assert!(!attributes.iter().any(|a| a.eq_ignore_ascii_case("secure")), "no Secure over http: {set}");
    assert!(!set.to_ascii_lowercase().contains("domain="), "{set}");

    let https =
        TestApp::with_config(ServerConfig { public_url: "https://feedback.example.com".into(), ..no_rate_limits() })
            .await;
    https.user("ada@example.com").await;
    let resp = https.post_form("/sign-in", &[("email", "ada@example.com"), ("password", PASSWORD)], None).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    let set = resp.set_cookie().unwrap().to_string();
    let attributes: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attributes[0].starts_with("__Host-svc_session=svs_"), "{set}");
    for wanted in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(attributes.contains(&wanted), "{wanted} missing: {set}");
    }
    assert!(!set.to_ascii_lowercase().contains("domain="), "a __Host- cookie has no Domain: {set}");
    let cookie = resp.cookie();
    assert!(https.signed_in(&cookie).await);
    // The same value under the plain name is not the session over https.
    let plain = cookie.replacen("__Host-svc_session", "svc_session", 1);
    assert!(!https.signed_in(&plain).await);
}

#[tokio::test]
async fn cross_site_posts_are_refused() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let credentials = [("email", "ada@example.com"), ("password", PASSWORD)];
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")][..],
        &[("origin", "https://evil.example")][..],
        &[("origin", "http://127.0.0.1:8080.evil.example")][..],
        &[("origin", "null")][..],
    ] {
        let resp = app.post_form_with("/sign-in", &credentials, None, headers).await;
        assert_eq!(resp.status, 403, "{headers:?}: {}", resp.text);
        assert!(resp.text.contains("did not come from the dashboard"), "{}", resp.text);
        assert_no_cookie(&resp);
    }
    // The browser's own same-origin form is fine.
    let resp = app.post_form_with("/sign-in", &credentials, None, &[("sec-fetch-site", "same-origin")]).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    let cookie = resp.cookie();

    // Signed in, with the right CSRF token, a cross-site sign-out is still refused.
    let csrf = csrf_of(&cookie);
    for headers in [&[("sec-fetch-site", "cross-site")][..], &[("origin", "https://evil.example")][..]] {
        let resp = app.post_form_with("/sign-out", &[("_csrf", &csrf)], Some(&cookie), headers).await;
        assert_eq!(resp.status, 403, "{headers:?}: {}", resp.text);
        assert!(app.signed_in(&cookie).await);
    }

    // One-time links cannot be redeemed from another site either; the link stays unused.
    let fresh = TestApp::new().await;
    let token = accounts::first_owner_link(fresh.service(), &fresh.project.org_id).await.unwrap();
    let fields = [("token", token.expose()), ("email", "bob@example.com"), ("password", "bob's long password")];
    let resp = fresh.post_form_with("/setup", &fields, None, &[("origin", "https://evil.example")]).await;
    assert_eq!(resp.status, 403, "{}", resp.text);
    assert_eq!(fresh.get_page(&format!("/setup?token={}", token.expose()), None).await.status, 200);
    let reset = accounts::password_reset_link(app.service(), "ada@example.com").await.unwrap();
    let fields = [("token", reset.expose()), ("password", "a password from elsewhere")];
    let resp = app.post_form_with("/reset-password", &fields, None, &[("sec-fetch-site", "cross-site")]).await;
    assert_eq!(resp.status, 403, "{}", resp.text);
    assert!(app.signed_in(&app.sign_in("ada@example.com", PASSWORD).await).await, "the password is unchanged");
}

#[tokio::test]
async fn sign_out_needs_the_csrf_token_and_ends_the_session() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let other = app.sign_in("ada@example.com", PASSWORD).await;

    for fields in [&[][..], &[("_csrf", "")][..], &[("_csrf", "0123456789abcdef0123456789abcdef")][..]] {
        let resp = app.post_form("/sign-out", fields, Some(&cookie)).await;
        assert_eq!(resp.status, 403, "{fields:?}: {}", resp.text);
        assert!(resp.text.contains("Reload the page"), "{}", resp.text);
        assert_no_cookie(&resp);
        assert!(app.signed_in(&cookie).await, "the session survives a refused sign-out");
    }
    // Another session's token is not this session's.
    let resp = app.post_form("/sign-out", &[("_csrf", &csrf_of(&other))], Some(&cookie)).await;
    assert_eq!(resp.status, 403);

    let resp = app.post_form("/sign-out", &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some("/sign-in?notice=signed-out"));
    let cleared = resp.set_cookie().expect("the cookie is cleared");
    assert!(cleared.starts_with("svc_session=;") && cleared.contains("Max-Age=0"), "{cleared}");
    assert!(!app.signed_in(&cookie).await);
    assert!(app.signed_in(&other).await, "only this session ended");
    let page = app.get_page("/sign-in?notice=signed-out", None).await;
    assert!(page.text.contains("You are signed out."), "{}", page.text);

    // Without a session, a signed-in-only form goes to the sign-in page.
    let resp = app.post_form("/sign-out", &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(resp.location(), Some("/sign-in"));
    let resp = app.post_form("/sign-out", &[], None).await;
    assert_eq!(resp.location(), Some("/sign-in"));
}

#[tokio::test]
async fn sign_out_everywhere_ends_every_session_of_the_user() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    app.user("bob@example.com").await;
    let laptop = app.sign_in("ada@example.com", PASSWORD).await;
    let phone = app.sign_in("ada@example.com", PASSWORD).await;
    let bob = app.sign_in("bob@example.com", PASSWORD).await;

    let resp = app.post_form("/sign-out-everywhere", &[("_csrf", "wrong")], Some(&phone)).await;
    assert_eq!(resp.status, 403);
    assert!(app.signed_in(&laptop).await && app.signed_in(&phone).await);

    let resp = app.post_form("/sign-out-everywhere", &[("_csrf", &csrf_of(&phone))], Some(&phone)).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some("/sign-in?notice=signed-out-everywhere"));
    assert!(!app.signed_in(&laptop).await);
    assert!(!app.signed_in(&phone).await);
    assert!(app.signed_in(&bob).await, "other people stay signed in");
    let page = app.get_page("/sign-in?notice=signed-out-everywhere", None).await;
    assert!(page.text.contains("You are signed out on every device."), "{}", page.text);
}

#[tokio::test]
async fn sign_in_is_throttled_per_account_unless_rate_limits_are_off() {
    let app = TestApp::with_config(ServerConfig::default()).await;
    app.user("ada@example.com").await;
    app.user("bob@example.com").await;
    for attempt in 1..=10 {
        let resp = app.post_form("/sign-in", &[("email", "ada@example.com"), ("password", WRONG)], None).await;
        assert_eq!(resp.status, 401, "attempt {attempt}: {}", resp.text);
    }
    // The 11th attempt within the window is refused, the right password (in another case) included.
    let resp = app.post_form("/sign-in", &[("email", "ADA@example.com"), ("password", PASSWORD)], None).await;
    assert_eq!(resp.status, 429, "{}", resp.text);
    assert!(resp.text.contains("Too many attempts. Try again in"), "{}", resp.text);
    let retry: u64 = resp.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=90).contains(&retry), "Retry-After {retry}");
    assert_no_cookie(&resp);
    assert!(resp.header("content-security-policy").is_some());
    // Other accounts are not affected.
    assert!(app.signed_in(&app.sign_in("bob@example.com", PASSWORD).await).await);

    // SVC_RATE_LIMIT=off turns sign-in throttling off too.
    let open = TestApp::new().await;
    open.user("ada@example.com").await;
    for attempt in 1..=11 {
        let resp = open.post_form("/sign-in", &[("email", "ada@example.com"), ("password", WRONG)], None).await;
        assert_eq!(resp.status, 401, "attempt {attempt}: {}", resp.text);
    }
    assert!(open.signed_in(&open.sign_in("ada@example.com", PASSWORD).await).await);
}

#[tokio::test]
async fn next_never_leads_to_another_site() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let credentials = |next: &'static str| [("email", "ada@example.com"), ("password", PASSWORD), ("next", next)];
    for (next, expected) in [
        ("//evil.example", "/"),
        ("//evil.example/path", "/"),
        ("https://evil.example", "/"),
        ("/\\evil.example", "/"),
        ("evil.example", "/"),
        ("", "/"),
        // Browsers drop tabs and line breaks from URLs: `/\t/evil.example/x` leads off-site.
        ("/\t/evil.example/x", "/"),
        ("/\n/evil.example/x", "/"),
        ("/\r\nSet-Cookie: stolen=1", "/"),
        ("/.//evil.example/x", "/"),
        ("/reports/abc?status=new", "/reports/abc?status=new"),
    ] {
        let resp = app.post_form("/sign-in", &credentials(next), None).await;
        assert_eq!(resp.status, 303, "{next}: {}", resp.text);
        assert_eq!(resp.location(), Some(expected), "next={next}");
    }

    // The form carries only a local `next`, and a signed-in visit goes on to it.
    let page = app.get_page("/sign-in?next=%2F%2Fevil.example", None).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains(r#"name="next" value="/""#), "{}", page.text);
    assert!(!page.text.contains("evil.example"), "{}", page.text);
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let resp = app.get_page("/sign-in?next=%2F%2Fevil.example", Some(&cookie)).await;
    assert_eq!(resp.location(), Some("/"));
    for next in ["/%09/evil.example/x", "/%0a/evil.example", "/%0d%0aX-Injected:%201"] {
        let resp = app.get_page(&format!("/sign-in?next={next}"), Some(&cookie)).await;
        assert_eq!(resp.status, 303, "{next}: {}", resp.text);
        assert_eq!(resp.location(), Some("/"), "next={next}");
    }
}

#[tokio::test]
async fn a_form_that_names_where_to_go_back_never_leaves_the_inbox() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let id = app.file_report(super::common::ingest::text_report("Back to where I was")).await;
    let csrf = csrf_of(&cookie);
    for (back, expected) in [
        ("/?status=new", "/?status=new".to_string()),
        ("/\t/evil.example/x", "/".to_string()),
        ("/?x=\n", "/".to_string()),
        ("https://evil.example/", "/".to_string()),
        ("/projects", format!("/reports/{id}")),
    ] {
        let fields = [("_csrf", csrf.as_str()), ("status", "triaged"), ("back", back)];
        let resp = app.post_form(&format!("/reports/{id}/status"), &fields, Some(&cookie)).await;
        assert_eq!(resp.status, 303, "{back:?}: {}", resp.text);
        assert_eq!(resp.location(), Some(expected.as_str()), "back={back:?}");
    }
}

#[tokio::test]
async fn setup_link_makes_one_owner_once() {
    let app = TestApp::new().await;
    let token = accounts::first_owner_link(app.service(), &app.project.org_id).await.unwrap();
    let token = token.expose();
    let link = format!("/setup?token={token}");

    let page = app.get_page(&link, None).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Create the first account"), "{}", page.text);

    // A mistake in the form does not cost the link.
    let short = [("token", token), ("email", "ada@example.com"), ("password", "short")];
    let resp = app.post_form("/setup", &short, None).await;
    assert_eq!(resp.status, 400, "{}", resp.text);
    assert!(resp.text.contains("Password must be at least 10 characters."), "{}", resp.text);
    assert!(resp.text.contains("ada@example.com"), "the form keeps the email");
    assert_no_cookie(&resp);

    let fields = [("token", token), ("name", "Ada"), ("email", "ada@example.com"), ("password", PASSWORD)];
    let resp = app.post_form("/setup", &fields, None).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some("/"));
    let cookie = resp.cookie();
    assert!(app.signed_in(&cookie).await);
    let (user, _) = app.store.find_user_by_email("ada@example.com").await.unwrap().unwrap();
    assert_eq!(user.name, "Ada");
    let memberships = app.store.list_memberships(&user.id).await.unwrap();
    assert_eq!(memberships.len(), 1);
    assert_eq!(memberships[0].org_id, app.project.org_id);
    assert_eq!(memberships[0].role, svc_core::account::Role::Owner);

    // Used: neither the form nor a second account.
    let page = app.get_page(&link, None).await;
    assert_eq!(page.status, 404);
    assert!(page.text.contains("expired or was already used"), "{}", page.text);
    let again = [("token", token), ("email", "mallory@example.com"), ("password", "mallory's password")];
    let resp = app.post_form("/setup", &again, None).await;
    assert_eq!(resp.status, 404, "{}", resp.text);
    assert_no_cookie(&resp);
    assert!(app.store.find_user_by_email("mallory@example.com").await.unwrap().is_none());
    assert_eq!(app.get_page("/setup?token=svl_made-up", None).await.status, 404);
    assert_eq!(app.get_page("/setup", None).await.status, 404);
}

#[tokio::test]
async fn reset_link_sets_the_password_and_ends_sessions() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let session = app.sign_in("ada@example.com", PASSWORD).await;
    let token = accounts::password_reset_link(app.service(), "ada@example.com").await.unwrap();
    let token = token.expose();

    let page = app.get_page(&format!("/reset-password?token={token}"), None).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("For ada@example.com."), "{}", page.text);
    // A setup link's page does not accept a reset token, nor the other way round.
    assert_eq!(app.get_page(&format!("/setup?token={token}"), None).await.status, 404);

    let resp = app.post_form("/reset-password", &[("token", token), ("password", "short")], None).await;
    assert_eq!(resp.status, 400, "{}", resp.text);
    assert!(resp.text.contains("Password must be at least 10 characters."), "{}", resp.text);
    assert!(app.signed_in(&session).await, "nothing changed yet");

    let resp = app.post_form("/reset-password", &[("token", token), ("password", "a brand new password")], None).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    assert_eq!(resp.location(), Some("/sign-in?notice=password-set"));
    assert_no_cookie(&resp);
    assert!(!app.signed_in(&session).await, "the old session ended");
    let old = app.post_form("/sign-in", &[("email", "ada@example.com"), ("password", PASSWORD)], None).await;
    assert_eq!(old.status, 401);
    assert!(app.signed_in(&app.sign_in("ada@example.com", "a brand new password").await).await);

    // Single use.
    let resp = app.post_form("/reset-password", &[("token", token), ("password", "yet another password")], None).await;
    assert_eq!(resp.status, 404, "{}", resp.text);
    assert_eq!(app.get_page(&format!("/reset-password?token={token}"), None).await.status, 404);
    assert!(app.signed_in(&app.sign_in("ada@example.com", "a brand new password").await).await);
}

#[tokio::test]
async fn every_dashboard_response_has_a_strict_content_security_policy() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let cookie = app.sign_in("ada@example.com", PASSWORD).await;
    let setup = accounts::first_owner_link(app.service(), &app.project.org_id).await.unwrap();
    let reset = accounts::password_reset_link(app.service(), "ada@example.com").await.unwrap();
    let sign_in_page = app.get_page("/sign-in", None).await;
    let stylesheet = sign_in_page
        .text
        .split("href=\"")
        .map(|rest| rest.split('"').next().unwrap())
        .find(|href| href.starts_with("/dashboard/assets/"))
        .expect("the page links its stylesheet")
        .to_string();

    let mut responses = vec![
        ("GET /sign-in", sign_in_page),
        ("GET /sign-in signed in", app.get_page("/sign-in", Some(&cookie)).await),
        ("GET /sign-in?notice", app.get_page("/sign-in?notice=signed-out", None).await),
        ("GET /setup", app.get_page(&format!("/setup?token={}", setup.expose()), None).await),
        ("GET /setup used", app.get_page("/setup?token=svl_made-up", None).await),
        ("GET /reset-password", app.get_page(&format!("/reset-password?token={}", reset.expose()), None).await),
        ("GET stylesheet", app.get_page(&stylesheet, None).await),
        ("GET missing asset", app.get_page("/dashboard/assets/nope.js", None).await),
    ];
    let wrong = [("email", "ada@example.com"), ("password", WRONG)];
    responses.push(("POST /sign-in wrong", app.post_form("/sign-in", &wrong, None).await));
    let right = [("email", "ada@example.com"), ("password", PASSWORD)];
    responses.push(("POST /sign-in", app.post_form("/sign-in", &right, None).await));
    let cross = [("origin", "https://evil.example")];
    responses.push(("POST /sign-in cross-site", app.post_form_with("/sign-in", &right, None, &cross).await));
    responses.push(("POST /sign-out bad csrf", app.post_form("/sign-out", &[("_csrf", "x")], Some(&cookie)).await));
    responses.push(("POST /sign-out no session", app.post_form("/sign-out", &[], None).await));
    responses.push((
        "POST /setup short",
        app.post_form("/setup", &[("token", setup.expose()), ("email", "b@example.com"), ("password", "x")], None)
            .await,
    ));

    for (what, resp) in &responses {
        let policy = resp.header("content-security-policy").unwrap_or_else(|| panic!("{what}: no CSP"));
        for wanted in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"] {
            assert!(policy.contains(wanted), "{what}: {wanted} missing from {policy}");
        }
        assert!(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "{what}: {policy}");
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"), "{what}");
        if resp.header("content-type").is_some_and(|t| t.starts_with("text/html")) {
            // Nothing on the page needs what the policy forbids.
            assert!(!resp.text.contains(" style="), "{what}: inline style");
            for script in resp.text.split("<script").skip(1) {
                assert!(script.split('>').next().unwrap().contains("src="), "{what}: inline script");
            }
        }
    }
}

#[tokio::test]
async fn sessions_and_links_on_postgres() {
    let Some(app) = TestApp::postgres().await else { return };
    let token = accounts::first_owner_link(app.service(), &app.project.org_id).await.unwrap();
    let fields = [("token", token.expose()), ("email", "ada@example.com"), ("password", PASSWORD)];
    let resp = app.post_form("/setup", &fields, None).await;
    assert_eq!(resp.status, 303, "{}", resp.text);
    let first = resp.cookie();
    assert_eq!(app.post_form("/setup", &fields, None).await.status, 404, "single use");

    let second = app.sign_in("ada@example.com", PASSWORD).await;
    assert_eq!(app.post_form("/sign-in", &[("email", "ada@example.com"), ("password", WRONG)], None).await.status, 401);
    let resp = app.post_form("/sign-out", &[("_csrf", &csrf_of(&second))], Some(&second)).await;
    assert_eq!(resp.status, 303);
    assert!(!app.signed_in(&second).await && app.signed_in(&first).await);
    let third = app.sign_in("ada@example.com", PASSWORD).await;

    let reset = accounts::password_reset_link(app.service(), "ada@example.com").await.unwrap();
    let fields = [("token", reset.expose()), ("password", "a brand new password")];
    assert_eq!(app.post_form("/reset-password", &fields, None).await.status, 303);
    assert!(!app.signed_in(&first).await && !app.signed_in(&third).await, "a new password ends every session");
    let fourth = app.sign_in("ada@example.com", "a brand new password").await;
    let fifth = app.sign_in("ada@example.com", "a brand new password").await;
    let resp = app.post_form("/sign-out-everywhere", &[("_csrf", &csrf_of(&fifth))], Some(&fifth)).await;
    assert_eq!(resp.status, 303);
    assert!(!app.signed_in(&fourth).await && !app.signed_in(&fifth).await);
}

#[tokio::test]
async fn before_the_first_account_the_sign_in_page_says_where_it_comes_from() {
    let app = TestApp::new().await;
    let page = app.get_page("/sign-in", None).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("No account exists yet"), "{}", page.text);
    assert!(page.text.contains("/setup?token="), "names the link: {}", page.text);
    assert!(page.text.contains("Restart the service"), "says how to get a new one: {}", page.text);
    app.user("ada@example.com").await;
    let page = app.get_page("/sign-in", None).await;
    assert!(!page.text.contains("No account exists yet"), "{}", page.text);
}

#[tokio::test]
async fn a_person_changes_their_password_and_their_other_sessions_end() {
    let app = TestApp::new().await;
    app.user("ada@example.com").await;
    let laptop = app.sign_in("ada@example.com", PASSWORD).await;
    let phone = app.sign_in("ada@example.com", PASSWORD).await;
    let page = app.get_page("/account", Some(&laptop)).await;
    assert!(page.text.contains("Change password"), "{}", page.text);
    let change = |current: &'static str, new: &'static str| {
        let csrf = csrf_of(&laptop);
        let laptop = laptop.clone();
        let app = &app;
        async move {
            app.post_form(
                "/account/password",
                &[("_csrf", &csrf), ("current", current), ("password", new)],
                Some(&laptop),
            )
            .await
        }
    };
    let wrong = change("not my password", "a brand new password").await;
    assert_eq!(wrong.status, 400, "{}", wrong.text);
    assert!(wrong.text.contains("Your current password is not right."), "{}", wrong.text);
    let short = change(PASSWORD, "short").await;
    assert_eq!(short.status, 400);
    assert!(short.text.contains("at least 10 characters"), "{}", short.text);
    assert!(app.signed_in(&phone).await, "nothing changed yet");

    let done = change(PASSWORD, "a brand new password").await;
    assert_eq!(done.status, 303, "{}", done.text);
    assert_eq!(done.location(), Some("/account?done=password"));
    let fresh = done.cookie();
    assert!(app.signed_in(&fresh).await, "this browser stays signed in");
    assert!(!app.signed_in(&laptop).await && !app.signed_in(&phone).await, "every other session ended");
    let notice = app.get_page("/account?done=password", Some(&fresh)).await;
    assert!(notice.text.contains("Your password is changed."), "{}", notice.text);
    assert_eq!(
        app.post_form("/sign-in", &[("email", "ada@example.com"), ("password", PASSWORD)], None).await.status,
        401
    );
    assert!(app.signed_in(&app.sign_in("ada@example.com", "a brand new password").await).await);
}

#[tokio::test]
async fn csp_reports_are_small_and_limited_per_address() {
    use axum::body::Body;
    use axum::extract::ConnectInfo;
    use axum::http::{Request, header};
    let app = TestApp::with_config(ServerConfig { rate_limits: true, ..ServerConfig::default() }).await;
    let report = |ip: &str, body: String| {
        let mut request = Request::post("/dashboard/csp-report")
            .header(header::CONTENT_TYPE, "application/csp-report")
            .body(Body::from(body))
            .unwrap();
        request.extensions_mut().insert(ConnectInfo(std::net::SocketAddr::new(ip.parse().unwrap(), 40000)));
        request
    };
    let small = || r#"{"csp-report":{"violated-directive":"script-src","blocked-uri":"inline"}}"#.to_string();
    let large = format!(r#"{{"csp-report":{{"blocked-uri":"{}"}}}}"#, "x".repeat(17 * 1024));
    assert_eq!(app.send(report("203.0.113.9", large)).await.status.as_u16(), 413);
    for n in 1..20 {
        assert_eq!(app.send(report("203.0.113.9", small())).await.status.as_u16(), 204, "report {n}");
    }
    assert_eq!(app.send(report("203.0.113.9", small())).await.status.as_u16(), 429, "over the limit");
    assert_eq!(app.send(report("198.51.100.9", small())).await.status.as_u16(), 204, "another address");
}
