//! Members and invitations, driven as browsers would: an owner invites by a one-time link, the
//! invited person creates an account (or joins with theirs) and lands in the inbox with the
//! organization's projects; owners change roles and remove people; an organization always keeps
//! an owner; forms from other sites or without the CSRF token change nothing.

use svc_core::account::{LinkPurpose, OneTimeLink, Role};
use svc_core::secret::{Secret, hash_secret};
use svc_service::accounts::{self, NewUser};

use super::common::*;

/// Someone with `role` in `org_id`, signed in: (user id, cookie).
async fn person_in(app: &TestApp, org_id: &str, email: &str, name: &str, role: Role) -> (String, String) {
    let new = NewUser::parse(email, name, Secret::new(PASSWORD)).unwrap();
    let user = accounts::create_user(app.service(), new, Some((org_id, role))).await.unwrap();
    (user.id, app.sign_in(email, PASSWORD).await)
}

async fn person(app: &TestApp, email: &str, name: &str, role: Role) -> (String, String) {
    person_in(app, &app.project.org_id, email, name, role).await
}

fn org(app: &TestApp) -> &str {
    &app.project.org_id
}

/// The invitation link shown on the answer to the invite form.
#[track_caller]
fn invite_link(html: &str) -> String {
    let at = html.find(r#"id="invite-link-"#).expect("the invitation link is shown");
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find('<').unwrap();
    html[start..end].replace("&#x3d;", "=").replace("&#61;", "=")
}

/// The token of an invitation link.
fn token_of(link: &str) -> String {
    link.split_once("?token=").expect("a token in the link").1.to_string()
}

/// Creates an invitation through the page; returns the link.
async fn invite(app: &TestApp, cookie: &str, role: &str) -> String {
    let path = format!("/members/{}/invite", org(app));
    let resp = app.post_form(&path, &[("_csrf", &csrf_of(cookie)), ("role", role)], Some(cookie)).await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    assert!(resp.text.contains("set an SMTP server (<code>SVC_SMTP_URL</code>) and Svc mails invitations for you"));
    assert!(!resp.text.contains(r#"name="email""#), "no address to mail to without SMTP");
    invite_link(&resp.text)
}

async fn role_of(app: &TestApp, user_id: &str) -> Option<Role> {
    accounts::members(app.service(), org(app))
        .await
        .unwrap()
        .into_iter()
        .find(|(user, _)| user.id == user_id)
        .map(|(_, m)| m.role)
}

async fn org_actions(app: &TestApp) -> Vec<String> {
    let log = svc_service::audit::list_for_org(app.service(), org(app), None, 50).await.unwrap();
    log.into_iter().map(|e| e.action).collect()
}

#[tokio::test]
async fn an_invitation_link_makes_an_account_that_joins_as_member_and_sees_the_projects_in_the_inbox() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, owner) = person(&app, "olivia@example.com", "Olivia Owner", Role::Owner).await;
    app.seed(Seed::text("The checkout button does nothing")).await;

    let link = invite(&app, &owner, "member").await;
    assert!(link.starts_with(&format!("{}/invite?token=svl_", app.state.config.public_url)), "{link}");
    let token = token_of(&link);
    let members = app.get_page("/members", Some(&owner)).await;
    assert!(!members.text.contains(&token), "the link is shown once");
    assert!(
        members.text.contains("Pending invitations") && members.text.contains("A member, made"),
        "{}",
        members.text
    );

    let page = app.get_page(&format!("/invite?token={token}"), None).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("Join Default") && page.text.contains("as a member"), "{}", page.text);
    assert!(page.text.contains("Create account and join"));

    let fields =
        [("token", token.as_str()), ("name", "Nina New"), ("email", "Nina@Example.com"), ("password", PASSWORD)];
    let joined = app.post_form("/invite", &fields, None).await;
    assert_eq!(joined.status, 303, "{}", joined.text);
    assert_eq!(joined.location(), Some("/"));
    let nina = joined.cookie();
    let inbox = app.get_page("/", Some(&nina)).await;
    assert_eq!(inbox.status, 200);
    assert!(inbox.text.contains("The checkout button does nothing"), "the new member sees the organization's reports");
    assert!(inbox.text.contains("Nina New"), "signed in as Nina");

    let user = accounts::find_user(app.service(), "nina@example.com").await.unwrap().expect("an account");
    assert_eq!(role_of(&app, &user.id).await, Some(Role::Member));
    let actions = org_actions(&app).await;
    assert!(
        actions.contains(&"member.invited".to_string()) && actions.contains(&"member.added".to_string()),
        "{actions:?}"
    );
    let members = app.get_page("/members", Some(&owner)).await;
    assert!(members.text.contains("nina@example.com"));
    assert!(members.text.contains("added Nina New as member"), "the log closes the page: {}", members.text);
    assert!(!members.text.contains("Pending invitations"), "the used invitation is no longer pending");

    // Single use: the link is spent.
    assert_eq!(app.get_page(&format!("/invite?token={token}"), None).await.status, 404);
    let fields = [("token", token.as_str()), ("name", "Other"), ("email", "other@example.com"), ("password", PASSWORD)];
    let again = app.post_form("/invite", &fields, None).await;
    assert_eq!(again.status, 404);
    assert!(again.text.contains("This link has expired or was already used."));
    assert!(accounts::find_user(app.service(), "other@example.com").await.unwrap().is_none());
}

#[tokio::test]
async fn an_expired_or_withdrawn_invitation_no_longer_works() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, owner) = person(&app, "olivia@example.com", "", Role::Owner).await;
    let token = "svl_expiredexpiredexpiredexpiredexpiredexpire";
    let now = svc_core::time::now_ms();
    let link = OneTimeLink {
        token_hash: hash_secret(token),
        purpose: LinkPurpose::Invite,
        org_id: Some(org(&app).to_string()),
        user_id: None,
        created_at: now - 8 * 24 * 3600 * 1000,
        expires_at: now - 1,
        role: Some(Role::Owner),
    };
    app.store.create_link(&link).await.unwrap();
    assert_eq!(app.get_page(&format!("/invite?token={token}"), None).await.status, 404);
    let fields = [("token", token), ("name", "Late"), ("email", "late@example.com"), ("password", PASSWORD)];
    assert_eq!(app.post_form("/invite", &fields, None).await.status, 404);

    // A fresh invitation lives seven days.
    let token = token_of(&invite(&app, &owner, "member").await);
    let stored = app.store.peek_link(&hash_secret(&token), now).await.unwrap().unwrap();
    assert_eq!(stored.role, Some(Role::Member));
    let days = (stored.expires_at - stored.created_at) / (24 * 3600 * 1000);
    assert_eq!(days, 7);

    // Withdrawn by the owner.
    let members = app.get_page("/members", Some(&owner)).await;
    let id = hash_secret(&token);
    let withdraw = format!("/members/{}/invites/{id}/withdraw", org(&app));
    assert!(members.text.contains(&withdraw), "a pending invitation can be withdrawn");
    let resp = app.post_form(&withdraw, &[("_csrf", &csrf_of(&owner))], Some(&owner)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(app.get_page(&format!("/invite?token={token}"), None).await.status, 404);
    assert!(app.get_page("/members?done=withdrawn", Some(&owner)).await.text.contains("The invitation is withdrawn"));
}

#[tokio::test]
async fn a_signed_in_person_joins_with_one_click_and_keeps_their_role_if_already_a_member() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, owner) = person(&app, "olivia@example.com", "", Role::Owner).await;
    let elsewhere = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let (sam_id, sam) = person_in(&app, &elsewhere.id, "sam@example.com", "Sam Signed", Role::Owner).await;

    let token = token_of(&invite(&app, &owner, "owner").await);
    let page = app.get_page(&format!("/invite?token={token}"), Some(&sam)).await;
    assert!(page.text.contains("You are signed in as Sam Signed."), "{}", page.text);
    assert!(page.text.contains("as an owner") && page.text.contains(">Join Default<"));
    assert!(!page.text.contains("Create account and join"));

    // Wrong CSRF token, or from another site: refused, nothing joined, the link still works.
    let wrong = app.post_form("/invite", &[("token", &token), ("_csrf", "nope")], Some(&sam)).await;
    assert_eq!(wrong.status, 403);
    let cross = app
        .post_form_with(
            "/invite",
            &[("token", &token), ("_csrf", &csrf_of(&sam))],
            Some(&sam),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(cross.status, 403);
    assert_eq!(role_of(&app, &sam_id).await, None);

    let joined = app.post_form("/invite", &[("token", &token), ("_csrf", &csrf_of(&sam))], Some(&sam)).await;
    assert_eq!(joined.status, 303, "{}", joined.text);
    assert_eq!(joined.location(), Some("/"));
    assert_eq!(role_of(&app, &sam_id).await, Some(Role::Owner));
    let members = app.get_page("/members", Some(&sam)).await;
    assert!(
        members.text.contains(">Default<") && members.text.contains(">Elsewhere<"),
        "both organizations are listed"
    );

    // Someone who already belongs keeps their role; the link is not spent on them.
    let (mia_id, mia) = person(&app, "mia@example.com", "", Role::Member).await;
    let token = token_of(&invite(&app, &owner, "owner").await);
    let page = app.get_page(&format!("/invite?token={token}"), Some(&mia)).await;
    assert!(page.text.contains("already belong to Default"), "{}", page.text);
    let resp = app.post_form("/invite", &[("token", &token), ("_csrf", &csrf_of(&mia))], Some(&mia)).await;
    assert_eq!(resp.status, 409);
    assert!(resp.text.contains("You already belong to Default."));
    assert_eq!(role_of(&app, &mia_id).await, Some(Role::Member));
    assert_eq!(app.get_page(&format!("/invite?token={token}"), None).await.status, 200, "still usable");
}

#[tokio::test]
async fn an_existing_email_is_asked_to_sign_in_first_and_comes_back_to_the_invitation() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, owner) = person(&app, "olivia@example.com", "", Role::Owner).await;
    let elsewhere = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    person_in(&app, &elsewhere.id, "sam@example.com", "", Role::Owner).await;
    let token = token_of(&invite(&app, &owner, "member").await);

    let fields =
        [("token", token.as_str()), ("name", "Sam"), ("email", "SAM@example.com"), ("password", "another password")];
    let resp = app.post_form("/invite", &fields, None).await;
    assert_eq!(resp.status, 400, "{}", resp.text);
    assert!(resp.text.contains("An account with this email already exists. Sign in first"));
    let next = url::form_urlencoded::byte_serialize(format!("/invite?token={token}").as_bytes()).collect::<String>();
    let sign_in = format!("/sign-in?next={next}");
    assert!(resp.text.contains(&sign_in.replace('=', "&#x3d;")) || resp.text.contains(&sign_in), "{}", resp.text);
    assert!(resp.set_cookie().is_none(), "nobody is signed in");

    // Signing in with that `next` leads back to the invitation, which is still unused.
    let signed = app
        .post_form(
            "/sign-in",
            &[("email", "sam@example.com"), ("password", PASSWORD), ("next", &format!("/invite?token={token}"))],
            None,
        )
        .await;
    assert_eq!(signed.location(), Some(format!("/invite?token={token}").as_str()));
    let page = app.get_page(&format!("/invite?token={token}"), Some(&signed.cookie())).await;
    assert!(page.text.contains(">Join Default<"), "{}", page.text);

    // A short password is said, and does not spend the link either.
    let fields = [("token", token.as_str()), ("name", "New"), ("email", "new@example.com"), ("password", "short")];
    let resp = app.post_form("/invite", &fields, None).await;
    assert_eq!(resp.status, 400);
    assert!(resp.text.contains("Password must be at least 10 characters."));
    assert!(resp.text.contains(r#"value="new@example.com""#), "the form keeps what was typed");
    assert_eq!(app.get_page(&format!("/invite?token={token}"), None).await.status, 200);
}

#[tokio::test]
async fn owners_change_roles_and_remove_members_but_never_the_last_owner() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (ada_id, ada) = person(&app, "ada@example.com", "Ada", Role::Owner).await;
    let (bob_id, bob) = person(&app, "bob@example.com", "Bob", Role::Member).await;
    let role = |user: &str| format!("/members/{}/{user}/role", org(&app));
    let remove = |user: &str| format!("/members/{}/{user}/remove", org(&app));

    // The only owner can neither step down nor leave.
    let page = app.get_page("/members", Some(&ada)).await;
    assert!(page.text.contains("The last owner: make someone else an owner before changing this role."));
    let resp = app.post_form(&role(&ada_id), &[("_csrf", &csrf_of(&ada)), ("role", "member")], Some(&ada)).await;
    assert_eq!(resp.status, 409, "{}", resp.text);
    assert!(
        resp.text.contains("The organization would be left without an owner: Ada is its last owner"),
        "{}",
        resp.text
    );
    let resp = app.post_form(&remove(&ada_id), &[("_csrf", &csrf_of(&ada))], Some(&ada)).await;
    assert_eq!(resp.status, 409);
    assert_eq!(role_of(&app, &ada_id).await, Some(Role::Owner));

    // A member may not change anyone.
    let resp = app.post_form(&role(&bob_id), &[("_csrf", &csrf_of(&bob)), ("role", "owner")], Some(&bob)).await;
    assert_eq!(resp.status, 403);
    let resp = app.post_form(&remove(&ada_id), &[("_csrf", &csrf_of(&bob))], Some(&bob)).await;
    assert_eq!(resp.status, 403);
    let invite_path = format!("/members/{}/invite", org(&app));
    assert_eq!(
        app.post_form(&invite_path, &[("_csrf", &csrf_of(&bob)), ("role", "owner")], Some(&bob)).await.status,
        403
    );
    let page = app.get_page("/members", Some(&bob)).await;
    assert!(!page.text.contains("Create invitation link") && !page.text.contains("Change role"), "members read only");

    // Promote Bob; then Ada may step down, and Bob is now the one who cannot.
    let resp = app.post_form(&role(&bob_id), &[("_csrf", &csrf_of(&ada)), ("role", "owner")], Some(&ada)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(resp.location(), Some("/members?done=role"));
    assert_eq!(role_of(&app, &bob_id).await, Some(Role::Owner));
    let resp = app.post_form(&role(&ada_id), &[("_csrf", &csrf_of(&ada)), ("role", "member")], Some(&ada)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(role_of(&app, &ada_id).await, Some(Role::Member));
    let resp = app.post_form(&role(&bob_id), &[("_csrf", &csrf_of(&bob)), ("role", "member")], Some(&bob)).await;
    assert_eq!(resp.status, 409);

    // Bob removes Ada: her membership goes, and (belonging nowhere else) so do her sessions.
    assert!(app.signed_in(&ada).await);
    let resp = app.post_form(&remove(&ada_id), &[("_csrf", &csrf_of(&bob))], Some(&bob)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(role_of(&app, &ada_id).await, None);
    assert!(!app.signed_in(&ada).await, "a removed member is signed out");
    let page = app.get_page("/members?done=removed", Some(&bob)).await;
    assert!(page.text.contains("The member is removed"));
    assert!(!page.text.contains("ada@example.com\n") && !page.text.contains(r#"data-member="ada@example.com""#));
    for said in ["made Bob owner", "made Ada member", "removed Ada"] {
        assert!(page.text.contains(said), "the log says {said:?}: {}", page.text);
    }
    let actions = org_actions(&app).await;
    assert_eq!(actions.iter().filter(|a| *a == "member.role_changed").count(), 2, "{actions:?}");
    assert!(actions.contains(&"member.removed".to_string()));
}

#[tokio::test]
async fn member_forms_from_other_sites_or_without_the_csrf_token_change_nothing() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, ada) = person(&app, "ada@example.com", "Ada", Role::Owner).await;
    let (bob_id, _) = person(&app, "bob@example.com", "Bob", Role::Member).await;
    let csrf = csrf_of(&ada);
    let evil = [("origin", "https://evil.example")];

    let invite_path = format!("/members/{}/invite", org(&app));
    assert_eq!(
        app.post_form_with(&invite_path, &[("_csrf", &csrf), ("role", "owner")], Some(&ada), &evil).await.status,
        403
    );
    assert_eq!(app.post_form(&invite_path, &[("role", "owner")], Some(&ada)).await.status, 403, "no token");
    assert!(accounts::pending_invites(app.service(), org(&app)).await.unwrap().is_empty(), "no link was made");

    let role = format!("/members/{}/{bob_id}/role", org(&app));
    assert_eq!(app.post_form_with(&role, &[("_csrf", &csrf), ("role", "owner")], Some(&ada), &evil).await.status, 403);
    assert_eq!(app.post_form(&role, &[("_csrf", "wrong"), ("role", "owner")], Some(&ada)).await.status, 403);
    let remove = format!("/members/{}/{bob_id}/remove", org(&app));
    assert_eq!(
        app.post_form_with(&remove, &[("_csrf", &csrf)], Some(&ada), &[("sec-fetch-site", "cross-site")]).await.status,
        403
    );
    assert_eq!(role_of(&app, &bob_id).await, Some(Role::Member));

    // An anonymous invitation form from another site is refused before anything is read.
    let token = token_of(&invite(&app, &ada, "member").await);
    let fields = [("token", token.as_str()), ("name", "X"), ("email", "x@example.com"), ("password", PASSWORD)];
    assert_eq!(app.post_form_with("/invite", &fields, None, &evil).await.status, 403);
    assert!(accounts::find_user(app.service(), "x@example.com").await.unwrap().is_none());
}

/// `tools/list` on the tool endpoint with a key: the HTTP status.
async fn tool_endpoint_status(app: &TestApp, key: &str) -> u16 {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    super::mcp_support::post(app, key, body).await.status.as_u16()
}

#[tokio::test]
async fn organization_wide_keys_are_listed_on_members_and_revoked_by_owners() {
    let app = TestApp::with_config(no_rate_limits()).await;
    let (_, ada) = person(&app, "ada@example.com", "Ada", Role::Owner).await;
    let (_, bob) = person(&app, "bob@example.com", "Bob", Role::Member).await;
    let key = app.mint_org_wide(&["feedback:read"]).await;
    let id = app.store.find_key_by_hash(&hash_secret(&key)).await.unwrap().unwrap().key.id;
    assert_eq!(tool_endpoint_status(&app, &key).await, 200);

    let page = app.get_page("/members", Some(&ada)).await;
    assert!(page.text.contains("Organization-wide keys"), "{}", page.text);
    assert!(
        page.text.contains(r#"<tr id="key-"#) && page.text.contains("org key") && page.text.contains(">Command line<")
    );
    let revoke = format!("/members/{}/keys/{id}/revoke", org(&app));
    assert!(page.text.contains(&revoke));
    let as_member = app.get_page("/members", Some(&bob)).await;
    assert!(as_member.text.contains("org key") && !as_member.text.contains(&revoke), "members read only");
    assert_eq!(app.post_form(&revoke, &[("_csrf", &csrf_of(&bob))], Some(&bob)).await.status, 403);
    assert_eq!(
        app.post_form_with(&revoke, &[("_csrf", &csrf_of(&ada))], Some(&ada), &[("origin", "https://evil.example")])
            .await
            .status,
        403
    );
    assert_eq!(tool_endpoint_status(&app, &key).await, 200, "still works");

    let resp = app.post_form(&revoke, &[("_csrf", &csrf_of(&ada))], Some(&ada)).await;
    assert_eq!(resp.status, 303);
    assert_eq!(tool_endpoint_status(&app, &key).await, 401, "revoked: the next request is refused");
    let page = app.get_page("/members?done=key-revoked", Some(&ada)).await;
    assert!(page.text.contains("The key is revoked") && page.text.contains("revoked the key org key"), "{}", page.text);
    assert_eq!(app.post_form(&revoke, &[("_csrf", &csrf_of(&ada))], Some(&ada)).await.status, 404);

    // A project key is not revoked through this route.
    let (project_key_id, project_key) = app.mint(&["feedback:read"]).await;
    let wrong = format!("/members/{}/keys/{project_key_id}/revoke", org(&app));
    assert_eq!(app.post_form(&wrong, &[("_csrf", &csrf_of(&ada))], Some(&ada)).await.status, 404);
    assert_eq!(app.get("/api/v1/me", &project_key).await.status, 200);
}

#[tokio::test]
async fn with_an_smtp_server_an_invitation_is_mailed_and_member_changes_show_in_each_project_log() {
    let mut config = no_rate_limits();
    config.mail = svc_service::mailer::MailConfig::parse(Some("smtp://127.0.0.1:9?tls=none"), None, &config.public_url)
        .expect("mail settings");
    let app = TestApp::with_config(config).await;
    let (_, owner) = person(&app, "olivia@example.com", "Olivia Owner", Role::Owner).await;
    let members = app.get_page("/members", Some(&owner)).await;
    assert!(members.text.contains(r#"name="email""#) && members.text.contains("Email it to"));

    let path = format!("/members/{}/invite", org(&app));
    let fields = [("_csrf", csrf_of(&owner)), ("role", "owner".into()), ("email", "Nina@Example.com".into())];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = app.post_form(&path, &fields, Some(&owner)).await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    assert!(resp.text.contains("on its way by mail to nina@example.com"), "{}", resp.text);
    let link = invite_link(&resp.text);
    let outbox = app.store.list_outbox(&[org(&app).to_string()], None, 10).await.unwrap();
    let mail = outbox.iter().find(|m| m.recipient == "nina@example.com").expect("the invitation mail");
    assert_eq!(mail.kind, svc_core::mail::MailKind::Invitation);
    assert_eq!(mail.subject, "Join Default on Svc");
    assert!(mail.body.contains(&link) && mail.body.contains("Olivia Owner") && mail.body.contains("as an owner"));
    assert!(mail.expires_at.is_some(), "not sent after the link expired");

    let refused =
        app.post_form(&path, &[("_csrf", &csrf_of(&owner)), ("role", "member"), ("email", "nope")], Some(&owner)).await;
    assert_eq!(refused.status, 400);

    // The person joins; the project's own audit log shows it beside the project's events.
    let fields = [
        ("token", token_of(&link)),
        ("name", "Nina".into()),
        ("email", "nina@example.com".into()),
        ("password", PASSWORD.into()),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(app.post_form("/invite", &fields, None).await.status, 303);
    let log = app.get_page(&format!("/projects/{}/audit", app.pid()), Some(&owner)).await;
    assert_eq!(log.status, 200);
    assert!(log.text.contains("invited an owner"), "{}", log.text);
    assert!(log.text.contains("added Nina as owner"), "{}", log.text);
}
