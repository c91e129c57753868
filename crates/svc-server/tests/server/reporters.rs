//! Reporters sign in from the widget (email codes; the OpenID Connect popup's refusals), their
//! tokens on ingest, their thread with the team's answers and their replies, and "does it work
//! now?" when a report is fixed. The whole journey in Chromium, with a real SMTP server and a real
//! OpenID Connect provider, is `e2e/dashboard/reporter.test.mjs`.

use axum::body::Body;
use serde_json::{Value, json};
use svc_core::mail::{MailKind, OutboxMail};
use svc_core::reporter::{Reporter, SignInCode};
use svc_core::{ids, time};
use svc_service::reporters;

use crate::common::ingest::{IDENTITY, text_report};
use crate::common::{Resp, TestApp};
use crate::mcp_support::tool;

const ANN: &str = "ann@example.com";

impl TestApp {
    async fn reporter_post(&self, path: &str, headers: &[(&str, &str)], body: Value) -> Resp {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        self.ingest("POST", path, Some(self.key()), &all, Body::from(body.to_string())).await
    }

    async fn set_reporter_auth(&self, reporter_auth: Value) {
        self.patch_project(json!({ "reporterAuth": reporter_auth })).await;
    }

    async fn ask_code(&self, email: &str) -> Resp {
        self.reporter_post("/auth/reporter/email", &[], json!({ "email": email })).await
    }

    async fn type_code(&self, email: &str, code: &str) -> Resp {
        self.reporter_post("/auth/reporter/email/verify", &[], json!({ "email": email, "code": code })).await
    }

    /// The mail of this kind to `to`, newest first.
    async fn mails_to(&self, to: &str, kind: MailKind) -> Vec<OutboxMail> {
        let to = to.to_lowercase();
        let outbox = self.store.list_outbox(std::slice::from_ref(&self.project.org_id), None, 200).await.unwrap();
        outbox.into_iter().filter(|m| m.recipient == to && m.kind == kind).collect()
    }

    /// The code in the newest sign-in mail to `to` (the mail shows it as `123 456`).
    async fn mailed_code(&self, to: &str) -> String {
        let mail = self.mails_to(to, MailKind::SignInCode).await.into_iter().next().expect("a sign-in mail");
        let digits: String = mail
            .body
            .lines()
            .find(|line| line.trim().len() == 7 && line.trim().chars().filter(char::is_ascii_digit).count() == 6)
            .unwrap_or_else(|| panic!("no code line in {}", mail.body))
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits
    }

    /// Email mode on; `email` signs in; returns the sign-in answer (token, session, reporter).
    async fn signed_in_reporter(&self, email: &str) -> Value {
        self.set_reporter_auth(json!({"mode": "email"})).await;
        self.ask_code(email).await.ok(200);
        let code = self.mailed_code(email).await;
        self.type_code(email, &code).await.ok(200).clone()
    }

    async fn confirm_fix(&self, signed_in: &Value, id: &str, body: Value) -> Resp {
        let path = format!("/ingest/reporter/reports/{id}/confirmation");
        self.reporter_post(&path, &[(IDENTITY, token(signed_in))], body).await
    }

    async fn thread(&self, token: &str, known: &[&str]) -> Resp {
        let path = format!("/ingest/reporter/reports?known={}", known.join(","));
        self.ingest("GET", &path, Some(self.key()), &[(IDENTITY, token)], Body::empty()).await
    }
}

fn token(signed_in: &Value) -> &str {
    signed_in["token"].as_str().unwrap()
}

#[tokio::test]
async fn reporter_auth_is_a_project_setting_whose_secret_is_never_shown() {
    let app = TestApp::new().await;
    let shown = app.rest("GET", &app.p(""), None).await.ok(200).clone();
    assert_eq!(shown["reporterAuth"], json!({"mode": "off", "required": false, "oidc": null}));
    let oidc = json!({"issuer": "https://id.example.com", "clientId": "svc", "clientSecret": "s3cret-value"});
    let patched = app.patch_project(json!({"reporterAuth": {"mode": "oidc", "required": true, "oidc": oidc}})).await;
    assert_eq!(
        patched["reporterAuth"],
        json!({"mode": "oidc", "required": true,
               "oidc": {"issuer": "https://id.example.com", "clientId": "svc", "clientSecretSet": true}})
    );
    assert!(!patched.to_string().contains("s3cret-value"));
    // Sent back without the secret (as read), the stored secret stays.
    let again = json!({"mode": "oidc", "oidc": {"issuer": "https://id.example.com", "clientId": "svc"}});
    let kept = app.patch_project(json!({ "reporterAuth": again })).await;
    assert_eq!(kept["reporterAuth"]["oidc"]["clientSecretSet"], true);
    assert_eq!(kept["reporterAuth"]["required"], false);
    let cleared =
        json!({"mode": "oidc", "oidc": {"issuer": "https://id.example.com", "clientId": "svc", "clientSecret": null}});
    assert_eq!(
        app.patch_project(json!({ "reporterAuth": cleared })).await["reporterAuth"]["oidc"]["clientSecretSet"],
        false
    );
    // The widget reads the mode and whether it is required, nothing else.
    let config = app.ingest_get("/ingest/config").await.ok(200).clone();
    assert_eq!(config["reporterAuth"], json!({"mode": "oidc", "required": false}));

    for bad in [
        json!({"mode": "oidc"}),
        json!({"mode": "sms"}),
        json!({"mode": "oidc", "oidc": {"issuer": "http://id.example.com", "clientId": "svc"}}),
        json!({"mode": "email", "oidc": {"issuer": "https://id.example.com", "clientId": ""}}),
        json!({"mode": "email", "unknown": 1}),
    ] {
        let resp = app.rest("PATCH", &app.p(""), Some(json!({ "reporterAuth": bad }))).await;
        resp.error(400, "BAD_REQUEST");
    }
}

#[tokio::test]
async fn a_mailed_code_signs_a_reporter_in_whose_reports_are_verified() {
    let app = TestApp::new().await;
    let signed_in = app.signed_in_reporter("Ann@Example.com").await;
    assert_eq!(
        signed_in["reporter"],
        json!({"id": "email:ann@example.com", "email": ANN, "name": null, "method": "email"})
    );
    assert!(signed_in["session"].as_str().unwrap().starts_with("rs_"));
    let mail = app.mails_to(ANN, MailKind::SignInCode).await.remove(0);
    assert!(mail.expires_at.is_some(), "a code that expired is never sent late");
    assert!(!mail.subject.contains(&app.mailed_code(ANN).await), "the code is in the body only");

    let report_id = app.file_report_with(&[(IDENTITY, token(&signed_in))], text_report("The cart is empty")).await;
    let stored = app.stored(&report_id).await;
    assert_eq!(stored["identity"]["userId"], "email:ann@example.com");
    assert_eq!(stored["identity"]["verified"], true);
    assert_eq!(stored["identity"]["method"], "email");
    assert_eq!(stored["author"], json!({"kind": "reporter", "id": "email:ann@example.com", "label": ANN}));

    // The session renews the token, until the reporter signs out.
    let session = format!("Bearer {}", signed_in["session"].as_str().unwrap());
    let renewed =
        app.ingest("GET", "/auth/reporter-token", Some(app.key()), &[("authorization", &session)], Body::empty()).await;
    let renewed = renewed.ok(200);
    assert_eq!(renewed["reporter"]["id"], "email:ann@example.com");
    assert!(renewed.get("session").is_none(), "the session secret is shown once");
    let out = app
        .ingest("DELETE", "/auth/reporter-token", Some(app.key()), &[("authorization", &session)], Body::empty())
        .await;
    assert_eq!(out.ok(200)["ok"], true);
    app.ingest("GET", "/auth/reporter-token", Some(app.key()), &[("authorization", &session)], Body::empty())
        .await
        .ingest_error(401, "session_invalid");
    app.ingest("GET", "/auth/reporter-token", Some(app.key()), &[], Body::empty())
        .await
        .ingest_error(401, "session_invalid");
}

#[tokio::test]
async fn wrong_expired_and_overused_codes_are_refused() {
    let app = TestApp::new().await;
    app.ask_code(ANN).await.ingest_error(403, "sign_in_not_offered");
    app.set_reporter_auth(json!({"mode": "email"})).await;
    app.ask_code("not an address").await.ingest_error(400, "email_invalid");
    app.type_code(ANN, "123456").await;
    let none_sent = app.type_code("eve@example.com", "123456").await;
    assert_eq!((none_sent.status.as_u16(), &none_sent.body["error"]), (400, &json!("code_invalid")));

    app.ask_code(ANN).await.ok(200);
    let code = app.mailed_code(ANN).await;
    let wrong = if code == "000000" { "111111" } else { "000000" };
    app.type_code(ANN, "12-34").await.ingest_error(400, "code_malformed");
    for tries_left in (1..=4).rev() {
        let resp = app.type_code(ANN, wrong).await;
        assert_eq!(resp.status.as_u16(), 400);
        assert_eq!(
            resp.body,
            json!({"error": "code_invalid", "triesLeft": tries_left}),
            "a malformed code took no try"
        );
    }
    app.type_code(ANN, wrong).await.ingest_error(400, "too_many_tries");
    app.type_code(ANN, &code).await.ingest_error(400, "too_many_tries");

    // A new code works again, once.
    app.ask_code(ANN).await.ok(200);
    let code = app.mailed_code(ANN).await;
    app.type_code(ANN, &code).await.ok(200);
    let used = app.type_code(ANN, &code).await;
    assert_eq!(
        (used.status.as_u16(), &used.body),
        (400, &json!({"error": "code_invalid", "triesLeft": 0})),
        "used once"
    );

    // An expired code: the newest code for the address, made ten minutes ago.
    app.ask_code("bob@example.com").await.ok(200);
    let code = app.mailed_code("bob@example.com").await;
    let sent = app.store.latest_sign_in_code(&app.project.id, "bob@example.com").await.unwrap().unwrap();
    let now = time::now_ms();
    let expired = SignInCode { id: ids::new_id_at(now + 1), created_at: now + 1, expires_at: now - 1, ..sent };
    app.store.create_sign_in_code(&expired).await.unwrap();
    app.type_code("bob@example.com", &code).await.ingest_error(400, "code_expired");

    // Five codes an hour per address.
    for _ in 0..3 {
        app.ask_code("bob@example.com").await.ok(200);
    }
    let limited = app.ask_code("bob@example.com").await;
    limited.ingest_error(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
}

#[tokio::test]
async fn asking_a_code_tells_nothing_about_the_address() {
    let app = TestApp::new().await;
    let signed_in = app.signed_in_reporter(ANN).await;
    app.file_report_with(&[(IDENTITY, token(&signed_in))], text_report("known reporter")).await;
    let known = app.ask_code(ANN).await;
    let unknown = app.ask_code("never-reported@example.com").await;
    assert_eq!((known.status, &known.body), (unknown.status, &unknown.body));
}

#[tokio::test]
async fn bad_reporter_tokens_keep_the_report_unverified_and_open_no_thread() {
    let app = TestApp::new().await;
    let signed_in = app.signed_in_reporter(ANN).await;
    let (other, _) = app.other_project().await;
    let mut other = other;
    other.reporter_auth.mode = svc_core::reporter::ReporterMode::Email;
    app.store.update_project(&other).await.unwrap();

    // A token of another project: the report is filed there, without an identity.
    let resp = app.report_with(&other.project_key, &[(IDENTITY, token(&signed_in))], text_report("elsewhere")).await;
    let stored = app.store.get_report(resp.ok(200)["reportId"].as_str().unwrap()).await.unwrap().unwrap();
    assert_eq!((stored.identity, stored.identity_error.as_deref()), (None, Some("invalid_signature")));

    // A forged payload (another reporter) and an expired token.
    let parts: Vec<&str> = token(&signed_in).split('.').collect();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    claims["sub"] = json!("email:boss@example.com");
    let forged = format!("{}.{}.{}", parts[0], b64.encode(claims.to_string()), parts[2]);
    let key = reporters::token_key(app.service(), &app.project.id).await.unwrap();
    let ann = Reporter::by_email(&svc_core::account::Email::parse(ANN).unwrap());
    let (expired, _) = svc_core::reporter::sign_token(&ann, "s", &key, time::now_ms() / 1000 - 7200);
    for (bad, error) in [(forged.as_str(), "invalid_signature"), (expired.as_str(), "expired")] {
        let id = app.file_report_with(&[(IDENTITY, bad)], text_report("still kept")).await;
        let stored = app.stored(&id).await;
        assert_eq!((&stored["identity"], &stored["identityError"]), (&Value::Null, &json!(error)), "{bad}");
        app.thread(bad, &[]).await.ingest_error(401, "reporter_token_invalid");
    }
    // Not a token at all (and no identity secret to check it with): ignored by ingest, no thread.
    let id = app.file_report_with(&[(IDENTITY, "garbage")], text_report("kept too")).await;
    assert_eq!(app.stored(&id).await["identityError"], Value::Null);
    app.thread("garbage", &[]).await.ingest_error(401, "reporter_token_invalid");
    app.thread(token(&signed_in), &[]).await.ok(200);
    let on_other = app
        .ingest(
            "GET",
            "/ingest/reporter/reports",
            Some(&other.project_key),
            &[(IDENTITY, token(&signed_in))],
            Body::empty(),
        )
        .await;
    on_other.ingest_error(401, "reporter_token_invalid");
}

#[tokio::test]
async fn the_thread_shows_a_reporter_their_own_reports_with_published_answers_and_takes_replies() {
    let app = TestApp::new().await;
    let ann = app.signed_in_reporter(ANN).await;
    let bob = {
        app.ask_code("bob@example.com").await.ok(200);
        let code = app.mailed_code("bob@example.com").await;
        app.type_code("bob@example.com", &code).await.ok(200).clone()
    };
    let mine = app.file_report_with(&[(IDENTITY, token(&ann))], text_report("Checkout button does nothing")).await;
    let bobs = app.file_report_with(&[(IDENTITY, token(&bob))], text_report("Bob's report")).await;
    // Claiming Ann's id without a token is not Ann.
    let claimed = app
        .file_report(
            json!({"blocks": [{"type": "text", "text": "impostor"}], "context": {"userId": "email:ann@example.com"}}),
        )
        .await;
    app.seed_comment(&mine, "A draft nobody outside sees", true).await;
    app.seed_comment(&mine, "Thanks, we are on it", false).await;

    let thread = app.thread(token(&ann), &[&mine, &bobs, &claimed]).await.ok(200).clone();
    let reports = thread["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "only Ann's verified report: {thread}");
    let report = &reports[0];
    assert_eq!(report["id"], mine.as_str());
    assert_eq!(report["title"], "Checkout button does nothing");
    assert_eq!(report["status"], "new");
    assert_eq!(report["awaitingConfirmation"], false);
    let texts: Vec<&str> = report["comments"].as_array().unwrap().iter().map(|c| c["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Thanks, we are on it"], "drafts never reach the reporter");
    assert_eq!(report["comments"][0]["author"], json!({"kind": "agent", "label": "Claude"}));

    // The search index finds her reports too, without the ids.
    app.store.run_maintenance_once().await.unwrap();
    let found = app.thread(token(&ann), &[]).await.ok(200).clone();
    assert_eq!(found["reports"].as_array().unwrap().len(), 1);

    // A reply is a published comment by the reporter, seen by the team and by agents.
    let reply = app
        .reporter_post(
            &format!("/ingest/reporter/reports/{mine}/comments"),
            &[(IDENTITY, token(&ann))],
            json!({"text": "It happens on mobile only"}),
        )
        .await;
    assert_eq!(reply.ok(201)["author"], json!({"kind": "reporter", "label": ANN}));
    let comments = app.rest("GET", &app.p(&format!("/feedback/{mine}/comments")), None).await.ok(200).clone();
    let last = comments["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["text"], &last["draft"], &last["authorKind"]),
        (&json!("It happens on mobile only"), &json!(false), &json!("reporter"))
    );
    let (_, key) = app.mint(&["feedback:read"]).await;
    let markdown = tool(&app, &key, "get_report", json!({"id": mine})).await.text;
    assert!(markdown.contains("It happens on mobile only"), "{markdown}");
    // Not on someone else's report, nor with empty text.
    app.reporter_post(
        &format!("/ingest/reporter/reports/{bobs}/comments"),
        &[(IDENTITY, token(&ann))],
        json!({"text": "hi"}),
    )
    .await
    .ingest_error(404, "report_not_found");
    app.reporter_post(
        &format!("/ingest/reporter/reports/{mine}/comments"),
        &[(IDENTITY, token(&ann))],
        json!({"text": "  "}),
    )
    .await
    .ingest_error(400, "body_invalid");
}

#[tokio::test]
async fn no_value_a_host_page_chooses_names_a_reporter_who_signed_in_another_way() {
    let app = TestApp::new().await;
    let ann = app.signed_in_reporter(ANN).await;
    let mine = app.file_report_with(&[(IDENTITY, token(&ann))], text_report("Checkout button does nothing")).await;
    // The host page signs identity tokens; one names Ann's email reporter id as its sub.
    app.set_identity_secret(Some("site-secret")).await;
    let exp = time::now_ms() / 1000 + 600;
    let site = svc_core::identity::sign(&json!({"sub": "email:ann@example.com", "exp": exp}), "site-secret");
    let sites = app.file_report_with(&[(IDENTITY, site.as_str())], text_report("The site's own user")).await;
    let stored = app.stored(&sites).await;
    assert_eq!(stored["identity"]["userId"], "email:ann@example.com", "the site's user id as the site gave it");
    assert_eq!(stored["author"]["id"], "token:email:ann@example.com", "a reporter id that says how");
    // Anyone may type Ann's id as an unverified user id, many times over.
    for n in 0..25 {
        app.file_report(json!({"blocks": [{"type": "text", "text": format!("impostor {n}")}],
                               "context": {"userId": "email:ann@example.com"}}))
            .await;
    }
    app.store.run_maintenance_once().await.unwrap();

    // The site's token is not Ann: it sees its own report only, and cannot answer on hers.
    let theirs = app.thread(&site, &[&mine]).await.ok(200).clone();
    let ids: Vec<&str> = theirs["reports"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [sites.as_str()], "{theirs}");
    app.reporter_post(
        &format!("/ingest/reporter/reports/{mine}/comments"),
        &[(IDENTITY, &site)],
        json!({"text": "hi"}),
    )
    .await
    .ingest_error(404, "report_not_found");
    // Ann still finds her report through the index, whatever others filed under her id.
    let hers = app.thread(token(&ann), &[]).await.ok(200).clone();
    let ids: Vec<&str> = hers["reports"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [mine.as_str()], "{hers}");
}

#[tokio::test]
async fn a_fixed_report_asks_its_reporter_who_confirms_or_says_it_is_still_broken() {
    let app = TestApp::new().await;
    let ann = app.signed_in_reporter(ANN).await;
    let first = app.file_report_with(&[(IDENTITY, token(&ann))], text_report("Save fails")).await;
    let second = app.file_report_with(&[(IDENTITY, token(&ann))], text_report("Logo is blurry")).await;
    app.confirm_fix(&ann, &first, json!({"works": true})).await.ingest_error(409, "not_fixed");

    let (_, agent) = app.mint(&["feedback:read", "feedback:write"]).await;
    for id in [&first, &second] {
        assert!(!tool(&app, &agent, "set_status", json!({"id": id, "status": "fixed"})).await.is_error);
    }
    // Told by mail (she signed in by email), with a link to answer: the mail task reads the two
    // status changes from the event feed.
    let public_url = &app.state.config.public_url;
    assert_eq!(svc_service::mail::mail_events(app.service(), public_url, svc_core::time::now_ms()).await.unwrap(), 2);
    let fixed_mails = app.mails_to(ANN, MailKind::ReportUpdate).await;
    assert_eq!(fixed_mails.len(), 2);
    assert!(fixed_mails.iter().any(|m| m.subject.contains("Save fails")));
    let thread = app.thread(token(&ann), &[&first, &second]).await.ok(200).clone();
    assert!(thread["reports"].as_array().unwrap().iter().all(|r| r["awaitingConfirmation"] == true));

    // Works now: verified, recorded as her act.
    let answered = app.confirm_fix(&ann, &first, json!({"works": true})).await;
    assert_eq!(answered.ok(200)["status"], "verified");
    let stored = app.rest("GET", &app.p(&format!("/feedback/{first}")), None).await.ok(200).clone();
    let last = stored["statusHistory"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((&last["from"], &last["to"]), (&json!("fixed"), &json!("verified")));
    assert_eq!(last["by"], json!({"kind": "reporter", "id": "email:ann@example.com", "label": ANN}));
    let listed = tool(&app, &agent, "list_reports", json!({"status": "verified"})).await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    app.confirm_fix(&ann, &first, json!({"works": false})).await.ingest_error(409, "not_fixed");

    // Still broken, through the mail's link page: triaged, with her note as a comment.
    let link = fixed_mails
        .iter()
        .find(|m| m.subject.contains("Logo is blurry"))
        .unwrap()
        .body
        .lines()
        .find(|line| line.contains("/reporter/confirm?token="))
        .unwrap()
        .trim()
        .to_string();
    let path = link.split_once("127.0.0.1:8080").map(|(_, path)| path).unwrap_or(&link).to_string();
    let page = app.get_page(&path, None).await;
    assert_eq!(page.status.as_u16(), 200);
    assert!(page.text.contains("Does it work now?") && page.text.contains("Logo is blurry"));
    let token_value = path.split_once("token=").unwrap().1;
    let forged = app.get_page(&format!("/reporter/confirm?token={second}.AAAA"), None).await;
    assert_eq!(forged.status.as_u16(), 404);
    let answered = app
        .post_form(
            "/reporter/confirm",
            &[("token", token_value), ("answer", "broken"), ("note", "Still blurry on retina")],
            None,
        )
        .await;
    assert_eq!(answered.status.as_u16(), 200, "{}", answered.text);
    assert!(answered.text.contains("still broken"));
    let stored = app.rest("GET", &app.p(&format!("/feedback/{second}")), None).await.ok(200).clone();
    assert_eq!(stored["status"], "triaged");
    assert_eq!(stored["statusHistory"].as_array().unwrap().last().unwrap()["by"]["kind"], "reporter");
    let markdown = tool(&app, &agent, "get_report", json!({"id": second})).await.text;
    assert!(markdown.contains("Still blurry on retina"), "{markdown}");
    // From another site, the answer page refuses.
    let cross = app
        .post_form_with(
            "/reporter/confirm",
            &[("token", token_value), ("answer", "works")],
            None,
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(cross.status.as_u16(), 403);
}

#[tokio::test]
async fn the_provider_popup_refuses_foreign_origins_and_unknown_states() {
    let app = TestApp::new().await;
    let start = |origin: &str| format!("/auth/reporter/oidc/start?projectKey={}&origin={origin}", app.key());
    // Not offered.
    let page = app.get_page(&start("https://app.example.com"), None).await;
    assert_eq!(page.status.as_u16(), 403);
    app.patch_project(json!({
        "allowedOrigins": ["https://app.example.com"],
        "reporterAuth": {"mode": "oidc", "oidc": {"issuer": "https://id.example.invalid", "clientId": "svc"}},
    }))
    .await;
    // An origin the project does not allow gets no sign-in, and nothing is posted anywhere.
    let page = app.get_page(&start("https://evil.example.com"), None).await;
    assert_eq!(page.status.as_u16(), 403);
    assert!(page.text.contains("allowedOrigins"));
    assert!(!page.text.contains("svc-sign-in-result"), "no result for a foreign page: {}", page.text);
    // A state nobody started.
    let page = app.get_page("/auth/reporter/oidc/callback?state=made-up&code=c", None).await;
    assert_eq!(page.status.as_u16(), 400);
    assert!(!page.text.contains("svc-sign-in-result"));
    // An unreachable provider: the allowed page is told.
    let page = app.get_page(&start("https://app.example.com"), None).await;
    assert_eq!(page.status.as_u16(), 502, "{}", page.text);
    assert!(page.text.contains(r#"data-origin="https://app.example.com""#));
    assert!(page.text.contains("provider_unavailable"));
}

#[tokio::test]
async fn the_identity_tab_sets_reporter_sign_in_for_owners_only() {
    let app = TestApp::new().await;
    app.user("owner@example.com").await;
    let cookie = app.sign_in("owner@example.com", crate::common::PASSWORD).await;
    let csrf = crate::common::csrf_of(&cookie);
    let path = format!("/projects/{}/identity", app.project.id);
    let page = app.get_page(&path, Some(&cookie)).await;
    assert!(page.text.contains("Reporter sign-in") && page.text.contains("/auth/reporter/oidc/callback"));
    let saved = app
        .post_form(
            &path,
            &[("_csrf", &csrf), ("action", "reporters"), ("mode", "email"), ("required", "yes")],
            Some(&cookie),
        )
        .await;
    assert_eq!(saved.status.as_u16(), 303, "{}", saved.text);
    let project = app.store.get_project(&app.project.id).await.unwrap().unwrap();
    assert_eq!(project.reporter_auth.to_widget_json(), json!({"mode": "email", "required": true}));
    let refused =
        app.post_form(&path, &[("_csrf", &csrf), ("action", "reporters"), ("mode", "oidc")], Some(&cookie)).await;
    assert_eq!(refused.status.as_u16(), 400);
    assert!(refused.text.contains("needs reporterAuth.oidc"));
    let audit = app.store.list_audit(&app.project.id, None, 10).await.unwrap();
    assert!(audit.iter().any(|event| event.detail.to_string().contains("reporterAuth")));
}

#[tokio::test]
async fn the_reporter_of_a_duplicate_follows_the_original_and_confirms_its_fix() {
    let app = TestApp::new().await;
    let ann = app.signed_in_reporter(ANN).await;
    let original = app.file_report(text_report("Checkout total is wrong after a coupon")).await;
    let hers = app.file_report_with(&[(IDENTITY, token(&ann))], text_report("Coupon breaks the total")).await;
    let marked = app.rest("PATCH", &app.p(&format!("/feedback/{hers}")), Some(json!({"duplicateOf": original}))).await;
    assert_eq!(marked.ok(200)["status"], "canceled");

    // The team answers on the original and fixes it: she sees the answer and the fix as her own.
    let (_, agent) = app.mint(&["feedback:read", "feedback:write"]).await;
    let answer = json!({"report_id": original, "text": "Fixed: the coupon was applied twice.", "draft": false});
    assert!(!tool(&app, &agent, "add_comment", answer).await.is_error);
    assert!(!tool(&app, &agent, "set_status", json!({"id": original, "status": "fixed"})).await.is_error);
    let thread = app.thread(token(&ann), &[&hers]).await.ok(200).clone();
    let shown = &thread["reports"][0];
    assert_eq!(shown["id"], json!(hers));
    assert_eq!(shown["status"], "fixed", "{thread}");
    assert_eq!(shown["awaitingConfirmation"], true);
    assert!(shown.to_string().contains("the coupon was applied twice"), "{shown}");

    // Her "works now" verifies the original, as her act.
    app.confirm_fix(&ann, &hers, json!({"works": true})).await.ok(200);
    let stored = app.rest("GET", &app.p(&format!("/feedback/{original}")), None).await.ok(200).clone();
    assert_eq!(stored["status"], "verified");
    assert_eq!(stored["duplicates"], json!([hers]));
    let last = stored["statusHistory"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["by"]["kind"], "reporter");
}
