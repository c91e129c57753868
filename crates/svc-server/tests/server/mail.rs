//! Mail, end to end: messages queued in the outbox and delivered to a real SMTP server (aiosmtpd,
//! started by each test from the venv `scripts/test` installs, and parsed back there by Python's own
//! `email` package); a server that is down or refusing keeps the mail queued with its error until a
//! later round delivers it; without SMTP the outbox page shows mail to the owners of its
//! organization only; new reports at once and as a daily digest; reporters' replies; the account
//! page's settings; one-click unsubscribe links, forged ones refused.

use svc_core::account::{Email, Role};
use svc_core::mail::{MailKind, MailState, NewReports, OutboxMail};
use svc_core::model::{Author, Comment};
use svc_core::secret::Secret;
use svc_core::{ids, time};
use svc_server::ServerConfig;
use svc_service::accounts::{self, NewUser};
use svc_service::mail::{self, Mail};
use svc_service::mailer::{MailConfig, Mailer, SmtpSettings};

use super::common::ingest::text_report;
use super::common::*;

#[path = "../smtp/sink.rs"]
mod sink;
use sink::SmtpSink;

// ---------------------------------------------------------------------------------------------
// Fixtures.

fn config_with_smtp(url: &str) -> ServerConfig {
    ServerConfig {
        public_url: "https://feedback.example.com".into(),
        mail: MailConfig { smtp: Some(SmtpSettings::parse(url).unwrap()), from: None },
        ..no_rate_limits()
    }
}

fn no_smtp() -> ServerConfig {
    ServerConfig { public_url: "https://feedback.example.com".into(), ..no_rate_limits() }
}

fn mailer(app: &TestApp) -> Mailer {
    Mailer::new(&app.state.config.mail, &app.state.config.public_url).unwrap()
}

fn public_url(app: &TestApp) -> &str {
    &app.state.config.public_url
}

/// A person with `role` in `org_id`; returns (user id, session cookie).
async fn person_in(app: &TestApp, org_id: &str, email: &str, role: Role) -> (String, String) {
    let new = NewUser::parse(email, "", Secret::new(PASSWORD)).unwrap();
    let user = accounts::create_user(app.service(), new, Some((org_id, role))).await.unwrap();
    (user.id, app.sign_in(email, PASSWORD).await)
}

/// Saves one project's choices through the account page's form.
async fn choose(app: &TestApp, cookie: &str, project_id: &str, new_reports: &str, replies: &str) -> Resp {
    let (csrf, reports_field, replies_field) =
        (csrf_of(cookie), format!("reports.{project_id}"), format!("replies.{project_id}"));
    let fields = [("_csrf", csrf.as_str()), (reports_field.as_str(), new_reports), (replies_field.as_str(), replies)];
    app.post_form("/account/notifications", &fields, Some(cookie)).await
}

async fn outbox_of(app: &TestApp) -> Vec<OutboxMail> {
    let orgs: Vec<String> = app.store.list_organizations().await.unwrap().into_iter().map(|org| org.id).collect();
    app.store.list_outbox(&orgs, None, 200).await.unwrap()
}

/// The unsubscribe link at the end of a mail body.
#[track_caller]
fn unsubscribe_link(body: &str) -> String {
    let line = body
        .lines()
        .find(|line| line.starts_with("Stop these mails (one click): "))
        .unwrap_or_else(|| panic!("no unsubscribe line in {body}"));
    line.rsplit(' ').next().unwrap().to_string()
}

fn token_of(link: &str) -> &str {
    link.split_once("?token=").expect("a token").1
}

/// The preference the person has for the project (defaults when none is stored).
async fn preference(app: &TestApp, user_id: &str, project_id: &str) -> (NewReports, bool) {
    let stored = app.store.mail_preferences(user_id).await.unwrap();
    stored
        .into_iter()
        .find(|p| p.project_id == project_id)
        .map(|p| (p.new_reports, p.replies))
        .unwrap_or((NewReports::Off, true))
}

/// The time a mail round runs at (the reports filed so far are due for instant mail).
fn settled() -> i64 {
    time::now_ms()
}

// ---------------------------------------------------------------------------------------------
// Delivery over SMTP.

#[tokio::test]
async fn a_queued_mail_is_delivered_over_smtp_and_parsed_back() {
    let Some(sink) = SmtpSink::start() else { return };
    let app = TestApp::with_config(config_with_smtp(&sink.url(None))).await;
    let mut message = Mail::new(
        &app.project.org_id,
        Email::parse("Ann@Example.com").unwrap(),
        MailKind::ReportUpdate,
        "Your report is fixed:\r\nBcc: victim@example.com — “ünïcode”",
        "Hello Ann,\n\nThe save button works now. Ünïcode survives.\n",
    );
    message.unsubscribe_url = Some("https://feedback.example.com/unsubscribe?token=abc".into());
    let id = mail::queue(app.service(), message).await.unwrap().expect("queued");
    assert_eq!(sink.received().len(), 0, "queuing sends nothing by itself");

    let done = mail::deliver_pending(app.service(), &mailer(&app), time::now_ms()).await.unwrap();
    assert_eq!((done.sent, done.retrying, done.given_up), (1, 0, 0));
    let received = sink.received();
    assert_eq!(received.len(), 1);
    let got = &received[0];
    assert_eq!(got["rcpt_tos"], serde_json::json!(["ann@example.com"]), "one recipient: no header injection");
    assert_eq!(got["to"], "ann@example.com");
    assert_eq!(got["from"], "Svc <svc@feedback.example.com>");
    assert_eq!(got["subject"], "Your report is fixed: Bcc: victim@example.com — “ünïcode”");
    assert_eq!(got["content_type"], "text/plain");
    let body = got["body"].as_str().unwrap().replace("\r\n", "\n");
    assert!(body.starts_with("Hello Ann,\n\nThe save button works now. Ünïcode survives.\n"), "{body}");
    assert!(
        body.trim_end().ends_with("Unsubscribe: https://feedback.example.com/unsubscribe?token=abc"),
        "a notification ends with its unsubscribe line: {body}"
    );
    assert_eq!(got["headers"]["List-Unsubscribe"], "<https://feedback.example.com/unsubscribe?token=abc>");
    assert_eq!(got["headers"]["List-Unsubscribe-Post"], "List-Unsubscribe=One-Click");
    assert_eq!(got["headers"]["Auto-Submitted"], "auto-generated");
    assert_eq!(got["headers"]["Message-ID"], format!("<{id}.svc@feedback.example.com>"));

    let stored = app.store.get_outbox_mail(&id).await.unwrap().unwrap();
    assert_eq!((stored.state(), stored.attempts), (MailState::Sent, 1));
    // Sent is sent: a later round sends nothing again.
    let again = mail::deliver_pending(app.service(), &mailer(&app), time::now_ms() + 3_600_000).await.unwrap();
    assert_eq!(again.sent, 0);
    assert_eq!(sink.received().len(), 1);
}

#[tokio::test]
async fn mail_stays_queued_while_the_smtp_server_is_down_and_goes_out_later() {
    let Some(mut sink) = SmtpSink::start() else { return };
    let app = TestApp::with_config(config_with_smtp(&sink.url(None))).await;
    let to = Email::parse("ann@example.com").unwrap();
    let id = mail::queue(app.service(), Mail::new(&app.project.org_id, to, MailKind::Digest, "Digest", "3 reports"))
        .await
        .unwrap()
        .unwrap();
    let mailer = mailer(&app);
    let start = time::now_ms();

    // Down: nothing listens on the port.
    sink.stop();
    let done = mail::deliver_pending(app.service(), &mailer, start).await.unwrap();
    assert_eq!((done.sent, done.retrying), (0, 1));
    let stored = app.store.get_outbox_mail(&id).await.unwrap().unwrap();
    assert_eq!((stored.state(), stored.attempts), (MailState::Queued, 1));
    let error = stored.last_error.clone().expect("the error is kept");
    assert!(error.to_lowercase().contains("connect") || error.to_lowercase().contains("refused"), "{error}");
    assert_eq!(stored.next_attempt_at, start + mail::backoff_ms(1), "tried again after a minute");

    // Up, but refusing for now (451): still queued, the server's answer kept.
    sink.restart();
    sink.reject();
    assert_eq!(mail::deliver_pending(app.service(), &mailer, start + 1_000).await.unwrap().retrying, 0, "not due yet");
    let second = stored.next_attempt_at;
    let done = mail::deliver_pending(app.service(), &mailer, second).await.unwrap();
    assert_eq!(done.retrying, 1);
    let stored = app.store.get_outbox_mail(&id).await.unwrap().unwrap();
    assert!(stored.last_error.as_deref().unwrap().contains("451"), "{:?}", stored.last_error);
    assert_eq!((stored.attempts, stored.next_attempt_at), (2, second + mail::backoff_ms(2)));
    assert!(sink.received().is_empty());

    // Accepting again: the next round delivers it.
    sink.accept();
    let done = mail::deliver_pending(app.service(), &mailer, stored.next_attempt_at).await.unwrap();
    assert_eq!(done.sent, 1);
    assert_eq!(sink.received()[0]["subject"], "Digest");
    let stored = app.store.get_outbox_mail(&id).await.unwrap().unwrap();
    assert_eq!((stored.state(), stored.attempts, stored.last_error), (MailState::Sent, 3, None));
}

#[tokio::test]
async fn a_wrong_password_keeps_mail_queued_and_never_shows_the_password() {
    let Some(sink) = SmtpSink::start_with(Some(("svc", "right-password"))) else { return };
    let wrong = TestApp::with_config(config_with_smtp(&sink.url(Some(("svc", "wrong-password-x7"))))).await;
    let to = Email::parse("ann@example.com").unwrap();
    let id = mail::queue(wrong.service(), Mail::new(&wrong.project.org_id, to, MailKind::Digest, "Hi", "Body"))
        .await
        .unwrap()
        .unwrap();
    let done = mail::deliver_pending(wrong.service(), &mailer(&wrong), time::now_ms()).await.unwrap();
    assert_eq!(done.retrying, 1, "a refused login is retried (the settings may be fixed), not dropped");
    let stored = wrong.store.get_outbox_mail(&id).await.unwrap().unwrap();
    let error = stored.last_error.unwrap();
    assert!(error.contains("535"), "{error}");
    assert!(!error.contains("wrong-password-x7"));
    assert!(!format!("{:?}", wrong.state.config).contains("wrong-password-x7"), "the settings never print it");
    assert!(sink.received().is_empty());

    // With the right password (the same database, fixed settings) the same message goes out.
    let fixed = Mailer::new(
        &MailConfig {
            smtp: Some(SmtpSettings::parse(&sink.url(Some(("svc", "right-password")))).unwrap()),
            from: None,
        },
        public_url(&wrong),
    )
    .unwrap();
    let done = mail::deliver_pending(wrong.service(), &fixed, time::now_ms() + 3_600_000).await.unwrap();
    assert_eq!(done.sent, 1);
    assert_eq!(sink.received()[0]["subject"], "Hi");
}

#[tokio::test]
async fn starttls_is_required_unless_plain_text_is_asked_for() {
    let Some(sink) = SmtpSink::start() else { return };
    // `smtp://` without `tls=none`: the test server offers no STARTTLS, so nothing is sent in clear.
    let app = TestApp::with_config(config_with_smtp(&format!("smtp://127.0.0.1:{}", sink.port))).await;
    let to = Email::parse("ann@example.com").unwrap();
    let id = mail::queue(app.service(), Mail::new(&app.project.org_id, to, MailKind::Digest, "Hi", "Body"))
        .await
        .unwrap()
        .unwrap();
    let done = mail::deliver_pending(app.service(), &mailer(&app), time::now_ms()).await.unwrap();
    assert_eq!(done.retrying, 1);
    assert!(sink.received().is_empty());
    let error = app.store.get_outbox_mail(&id).await.unwrap().unwrap().last_error.unwrap();
    assert!(error.to_lowercase().contains("tls"), "{error}");
}

#[tokio::test]
async fn expired_mail_is_dropped_not_sent() {
    let Some(sink) = SmtpSink::start() else { return };
    let app = TestApp::with_config(config_with_smtp(&sink.url(None))).await;
    let mut code = Mail::new(
        &app.project.org_id,
        Email::parse("reporter@example.com").unwrap(),
        MailKind::SignInCode,
        "Your code",
        "123456",
    );
    code.expires_at = Some(time::now_ms() + 600_000);
    let id = mail::queue(app.service(), code).await.unwrap().unwrap();
    let done = mail::deliver_pending(app.service(), &mailer(&app), time::now_ms() + 600_001).await.unwrap();
    assert_eq!((done.sent, done.given_up), (0, 1));
    assert!(sink.received().is_empty());
    assert_eq!(app.store.get_outbox_mail(&id).await.unwrap().unwrap().state(), MailState::Failed);
}

// ---------------------------------------------------------------------------------------------
// Without SMTP: the outbox.

#[tokio::test]
async fn without_smtp_mail_waits_in_the_outbox_its_owners_read() {
    let app = TestApp::with_config(no_smtp()).await;
    let org = app.project.org_id.clone();
    let (_, owner) = person_in(&app, &org, "owner@example.com", Role::Owner).await;
    let (_, member) = person_in(&app, &org, "member@example.com", Role::Member).await;
    let elsewhere = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let (_, stranger) = person_in(&app, &elsewhere.id, "stranger@example.com", Role::Owner).await;

    let mut code = Mail::new(
        &org,
        Email::parse("reporter@example.com").unwrap(),
        MailKind::SignInCode,
        "Your sign-in code <b>",
        "Your code is 482913.\n<script>alert(1)</script> <img src=x onerror=alert(2)>\n",
    );
    code.project_id = Some(app.project.id.clone());
    mail::queue(app.service(), code).await.unwrap().unwrap();
    let done = mail::deliver_pending(app.service(), &mailer(&app), time::now_ms()).await.unwrap();
    assert_eq!(done, mail::Delivery::default(), "without SMTP nothing is tried");
    assert_eq!(outbox_of(&app).await[0].attempts, 0);

    let page = app.get_page("/outbox", Some(&owner)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("No SMTP server is set"));
    assert!(page.text.contains("Your code is 482913."), "the owner reads the code");
    assert!(page.text.contains("reporter@example.com"));
    assert!(page.text.contains("Your sign-in code &#60;b&#62;"));
    assert!(page.text.contains("&#60;script&#62;alert(1)&#60;/script&#62;"), "the body is text");
    assert!(!page.text.contains("<script>alert") && !page.text.contains("<img src=x"));

    let page = app.get_page("/outbox", Some(&stranger)).await;
    assert_eq!(page.status, 200);
    assert!(!page.text.contains("482913"), "an owner of another organization does not see it");
    assert!(page.text.contains("No mail yet."));

    let page = app.get_page("/outbox", Some(&member)).await;
    assert_eq!(page.status, 200);
    assert!(!page.text.contains("482913"), "a member is not an owner");
    assert!(page.text.contains("Only owners of an organization read its outbox."));

    let page = app.get_page("/outbox", None).await;
    assert_eq!(page.status, 303, "signed out: to the sign-in page");
}

#[tokio::test]
async fn with_smtp_the_outbox_is_a_delivery_log_without_codes() {
    let app = TestApp::with_config(config_with_smtp("smtp://u:hunter2-secret@mail.example.com:587")).await;
    let (_, owner) = person_in(&app, &app.project.org_id, "owner@example.com", Role::Owner).await;
    let reporter = Email::parse("reporter@example.com").unwrap();
    let code = Mail::new(&app.project.org_id, reporter.clone(), MailKind::SignInCode, "Your code", "Code 771204");
    mail::queue(app.service(), code).await.unwrap();
    let news = Mail::new(&app.project.org_id, reporter, MailKind::ReportUpdate, "Fixed", "It is fixed now");
    mail::queue(app.service(), news).await.unwrap();
    let page = app.get_page("/outbox", Some(&owner)).await;
    assert!(page.text.contains("Mail is sent through mail.example.com:587 (STARTTLS required, user u)"));
    assert!(!page.text.contains("hunter2-secret"));
    assert!(!page.text.contains("771204"), "a code is delivered by mail, not shown");
    assert!(page.text.contains("It is fixed now"));
}

// ---------------------------------------------------------------------------------------------
// The team's notifications.

#[tokio::test]
async fn a_filed_report_is_mailed_at_once_and_the_link_in_the_mail_unsubscribes() {
    let Some(sink) = SmtpSink::start() else { return };
    let app = TestApp::with_config(config_with_smtp(&sink.url(None))).await;
    let org = app.project.org_id.clone();
    let (ann, ann_cookie) = person_in(&app, &org, "ann@example.com", Role::Member).await;
    let (_, bob_cookie) = person_in(&app, &org, "bob@example.com", Role::Owner).await;
    let before = app.file_report(text_report("Filed before anyone chose instant mail")).await;
    assert_eq!(choose(&app, &ann_cookie, app.pid(), "instant", "on").await.status, 303);
    // Bob keeps the default: no mail about new reports.
    let _ = bob_cookie;

    let report = app.file_report(text_report("The save button does nothing\n\nI clicked it twice.")).await;
    // Filing queued nothing: notifications are made off the request path, by the mail task.
    assert!(outbox_of(&app).await.is_empty());
    let mailer = mailer(&app);
    mail::run_once(app.service(), &mailer, public_url(&app), settled()).await;

    let received = sink.received();
    assert_eq!(received.len(), 1, "one mail, to Ann only, about the report filed after she chose: {received:?}");
    let got = &received[0];
    assert_eq!(got["to"], "ann@example.com");
    assert_eq!(got["subject"], "[Default] The save button does nothing");
    let body = got["body"].as_str().unwrap().replace("\r\n", "\n");
    assert!(body.contains("> The save button does nothing\n>\n> I clicked it twice."), "{body}");
    assert!(body.contains(&format!("Open the report: https://feedback.example.com/reports/{report}")));
    assert!(!body.contains(&before));
    let link = unsubscribe_link(&body);
    assert!(link.starts_with("https://feedback.example.com/unsubscribe?token="));
    assert_eq!(got["headers"]["List-Unsubscribe"], format!("<{link}>"));
    // Another round mails nothing twice.
    mail::run_once(app.service(), &mailer, public_url(&app), settled() + 5_000).await;
    assert_eq!(sink.received().len(), 1);

    // The link: GET shows a button and changes nothing (link scanners), POST turns it off.
    let path = link.strip_prefix("https://feedback.example.com").unwrap();
    let page = app.get_page(path, None).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("Stop mail to ann@example.com about new reports in Default?"));
    assert_eq!(preference(&app, &ann, app.pid()).await.0, NewReports::Instant);
    let done = app.post_form_with("/unsubscribe", &[("token", token_of(&link))], None, &[("origin", "")]).await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(done.text.contains("ann@example.com no longer gets mail about new reports in Default."));
    assert_eq!(preference(&app, &ann, app.pid()).await, (NewReports::Off, true), "replies stay on");
    let again = app.get_page(path, None).await;
    assert!(again.text.contains("Already unsubscribed"));

    app.file_report(text_report("Filed after unsubscribing")).await;
    mail::run_once(app.service(), &mailer, public_url(&app), settled()).await;
    assert_eq!(sink.received().len(), 1, "no more mail");
}

#[tokio::test]
async fn a_burst_of_reports_is_one_mail_that_lists_them() {
    let app = TestApp::with_config(no_smtp()).await;
    let (_, cookie) = person_in(&app, &app.project.org_id, "ann@example.com", Role::Member).await;
    choose(&app, &cookie, app.pid(), "instant", "on").await;
    for i in 0..12 {
        app.file_report(text_report(&format!("Burst report {i}"))).await;
    }
    let queued = mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap();
    assert_eq!(queued, 1);
    let mails = outbox_of(&app).await;
    assert_eq!(mails[0].subject, "[Default] 12 new reports");
    assert!(mails[0].body.contains("- Burst report 11 ("), "{}", mails[0].body);
    assert!(mails[0].body.contains("and 2 more."));
    assert!(!mails[0].body.contains("- Burst report 1 ("), "the newest ten are listed");
}

/// While a burst of reports is being filed, reading the feed for mail takes one batch (500 events)
/// and leaves the rest until the burst has passed; every report is mailed once.
#[tokio::test]
async fn a_burst_of_reports_holds_the_mail_back_and_loses_none() {
    let app = TestApp::with_config(no_smtp()).await;
    let (_, cookie) = person_in(&app, &app.project.org_id, "ann@example.com", Role::Member).await;
    choose(&app, &cookie, app.pid(), "instant", "on").await;
    app.seed_many(520).await;
    // Reports being filed right now, as many as make a burst.
    let load = app.service().load();
    let burst: Vec<_> = (0..svc_service::load::BURST).map(|_| load.filing()).collect();
    assert_eq!(mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap(), 1);
    let subjects = |mails: Vec<OutboxMail>| mails.into_iter().map(|mail| mail.subject).collect::<Vec<_>>();
    assert_eq!(subjects(outbox_of(&app).await), ["[Default] 500 new reports"], "one batch of the feed");
    drop(burst);
    assert_eq!(
        mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap(),
        1,
        "the rest once it has passed"
    );
    let mut mailed = subjects(outbox_of(&app).await);
    mailed.sort();
    assert_eq!(mailed, ["[Default] 20 new reports", "[Default] 500 new reports"]);
    assert_eq!(mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap(), 0, "each once");
}

#[tokio::test]
async fn digests_group_a_days_reports_per_person_and_project() {
    let app = TestApp::with_config(no_smtp()).await;
    let org = app.project.org_id.clone();
    let (other, _) = app.other_project().await;
    let (ann, ann_cookie) = person_in(&app, &org, "ann@example.com", Role::Member).await;
    let (_, bob_cookie) = person_in(&app, &org, "bob@example.com", Role::Member).await;
    choose(&app, &ann_cookie, app.pid(), "digest", "on").await;
    choose(&app, &ann_cookie, &other.id, "digest", "on").await;
    choose(&app, &bob_cookie, app.pid(), "instant", "on").await;
    let first = app.seed(Seed::text("First report of the day")).await;
    let second = app.seed(Seed::text("Second report of the day")).await;
    seed_report(&app.store, &other.id, Seed::text("A report in the other project")).await;

    // Before the digest hour nothing is due; two days on, the day's digest is.
    let now = time::now_ms();
    let boundary = svc_core::mail::digest_boundary(now + 2 * 86_400_000);
    assert!(boundary > now);
    let queued = mail::queue_digests(app.service(), public_url(&app), now + 2 * 86_400_000).await.unwrap();
    assert_eq!(queued, 2, "one per person and project with reports");
    let mails: Vec<OutboxMail> = outbox_of(&app).await.into_iter().filter(|m| m.kind == MailKind::Digest).collect();
    assert_eq!(mails.len(), 2);
    assert!(mails.iter().all(|m| m.recipient == "ann@example.com"), "Bob wants instant mail, not digests");
    let default = mails.iter().find(|m| m.project_id.as_deref() == Some(app.pid())).unwrap();
    assert_eq!(default.subject, "[Default] Digest: 2 new reports");
    let (newest, oldest) =
        (default.body.find("Second report of the day").unwrap(), default.body.find("First report of the day").unwrap());
    assert!(newest < oldest, "newest first: {}", default.body);
    assert!(default.body.contains(&format!("https://feedback.example.com/reports/{}", first.id)));
    assert!(default.body.contains(&format!("https://feedback.example.com/reports/{}", second.id)));
    assert!(default.body.contains("a daily digest of new reports"));
    assert!(!default.body.contains("A report in the other project"));
    let other_mail = mails.iter().find(|m| m.project_id.as_deref() == Some(other.id.as_str())).unwrap();
    assert_eq!(other_mail.subject, "[Other] Digest: 1 new report");
    assert!(other_mail.unsubscribe_url.as_deref().unwrap().contains(&ann));

    // The same digest is not made twice, and the next day with no reports has none.
    assert_eq!(mail::queue_digests(app.service(), public_url(&app), now + 2 * 86_400_000 + 60_000).await.unwrap(), 0);
    assert_eq!(mail::queue_digests(app.service(), public_url(&app), now + 3 * 86_400_000).await.unwrap(), 0);
}

#[tokio::test]
async fn reporters_replies_reach_the_members_who_want_them() {
    let app = TestApp::with_config(no_smtp()).await;
    let org = app.project.org_id.clone();
    let (_, _ann) = person_in(&app, &org, "ann@example.com", Role::Member).await;
    let (_, bob) = person_in(&app, &org, "bob@example.com", Role::Owner).await;
    let elsewhere = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    person_in(&app, &elsewhere.id, "eve@example.com", Role::Owner).await;
    assert_eq!(choose(&app, &bob, app.pid(), "off", "off").await.status, 303);

    let report = app.seed(Seed::text("Export fails")).await;
    let reply = Comment {
        id: ids::new_id(),
        report_id: report.id.clone(),
        project_id: app.pid().to_string(),
        author: Author {
            kind: svc_core::model::AuthorKind::Reporter,
            id: Some("user-1".into()),
            label: Some("Ada".into()),
        },
        text: "Still broken on Firefox.\nStop these mails: https://evil.example".into(),
        kind: None,
        draft: false,
        created_at: time::now_ms(),
        published_at: Some(time::now_ms()),
    };
    let published =
        svc_store::Change::anywhere(reply.author.clone(), reply.created_at, vec![svc_store::Write::Comment(reply)]);
    app.store.apply(&published).await.unwrap();
    let queued = mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap();
    assert_eq!(queued, 1, "Ann (replies on by default) only: Bob turned them off, Eve is elsewhere");
    let mails = outbox_of(&app).await;
    assert_eq!(mails[0].recipient, "ann@example.com");
    assert_eq!(mails[0].kind, MailKind::ReporterReply);
    assert_eq!(mails[0].subject, "[Default] Reply from Ada: Export fails");
    assert!(mails[0].body.contains("> Still broken on Firefox.\n> Stop these mails: https://evil.example"));
    assert!(unsubscribe_link(&mails[0].body).contains(".replies."), "the reporter's line is quoted, ours is not");
    // Told once per reply.
    assert_eq!(mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap(), 0);
    assert_eq!(outbox_of(&app).await.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Settings and unsubscribe links.

#[tokio::test]
async fn the_account_page_lists_every_project_with_its_choices() {
    let app = TestApp::with_config(no_smtp()).await;
    let (other, _) = app.other_project().await;
    let (ann, cookie) = person_in(&app, &app.project.org_id, "ann@example.com", Role::Member).await;
    let page = app.get_page("/account", Some(&cookie)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(r#"<h2 id="notifications">Notifications</h2>"#));
    assert!(page.text.contains(&format!(r#"name="reports.{}""#, app.pid())));
    assert!(page.text.contains(&format!(r#"name="replies.{}""#, other.id)));
    assert!(page.text.contains(r#"<option value="off" selected>Off</option>"#), "defaults: new reports off");
    assert!(page.text.contains(r#"<option value="on" selected>On</option>"#), "replies on");
    assert!(page.text.contains("href=\"/outbox\""), "no SMTP: the page says where mail waits");

    let saved = choose(&app, &cookie, &other.id, "digest", "off").await;
    assert_eq!(saved.location(), Some("/account?done=notifications"));
    assert_eq!(preference(&app, &ann, &other.id).await, (NewReports::Digest, false));
    assert_eq!(preference(&app, &ann, app.pid()).await, (NewReports::Off, true));
    let page = app.get_page("/account?done=notifications", Some(&cookie)).await;
    assert!(page.text.contains("Your notification settings are saved."));
    assert!(page.text.contains(r#"<option value="digest" selected>Daily digest</option>"#));

    // Not a choice, a project of another organization, or no CSRF token: refused, nothing stored.
    assert_eq!(choose(&app, &cookie, app.pid(), "hourly", "on").await.status, 400);
    let foreign = svc_service::projects::create_organization(app.service(), "Elsewhere").await.unwrap();
    let theirs = svc_service::projects::create_project(
        app.service(),
        &svc_service::principal::Principal::Operator,
        &foreign.id,
        "Theirs",
    )
    .await
    .unwrap();
    assert_eq!(choose(&app, &cookie, &theirs.id, "instant", "on").await.status, 403);
    assert!(app.store.mail_preferences(&ann).await.unwrap().iter().all(|p| p.project_id != theirs.id));
    let field = format!("reports.{}", app.pid());
    let reply_field = format!("replies.{}", app.pid());
    let forged =
        app.post_form("/account/notifications", &[(&field, "instant"), (&reply_field, "on")], Some(&cookie)).await;
    assert_eq!(forged.status, 403);
    assert_eq!(preference(&app, &ann, app.pid()).await, (NewReports::Off, true));
}

#[tokio::test]
async fn forged_and_foreign_unsubscribe_links_are_refused() {
    let app = TestApp::with_config(no_smtp()).await;
    let (other, _) = app.other_project().await;
    let (ann, cookie) = person_in(&app, &app.project.org_id, "ann@example.com", Role::Member).await;
    choose(&app, &cookie, app.pid(), "instant", "on").await;
    choose(&app, &cookie, &other.id, "instant", "on").await;
    app.file_report(text_report("Something broke")).await;
    mail::mail_events(app.service(), public_url(&app), settled()).await.unwrap();
    let mails = outbox_of(&app).await;
    assert_eq!(mails.len(), 1);
    let token = token_of(&unsubscribe_link(&mails[0].body)).to_string();
    let (user, rest) = token.split_once('.').unwrap();
    let (project, rest) = rest.split_once('.').unwrap();
    let (topic, mac) = rest.split_once('.').unwrap();
    assert_eq!((user, project, topic), (ann.as_str(), app.pid(), "reports"));

    let mut flipped = mac.to_string().into_bytes();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    let forgeries = [
        format!("{user}.{project}.{topic}.{}", String::from_utf8(flipped).unwrap()),
        format!("{user}.{}.{topic}.{mac}", other.id),
        format!("{user}.{project}.replies.{mac}"),
        format!("{}.{project}.{topic}.{mac}", ids::new_id()),
        format!("{user}.{project}.{topic}"),
        "nonsense".to_string(),
        String::new(),
    ];
    for forged in &forgeries {
        let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("token", forged).finish();
        let page = app.get_page(&format!("/unsubscribe?{query}"), None).await;
        assert_eq!(page.status, 404, "{forged}: {}", page.text);
        assert!(page.text.contains("This unsubscribe link is not valid"));
        let post = app.post_form_with("/unsubscribe", &[("token", forged)], None, &[("origin", "")]).await;
        assert_eq!(post.status, 404, "{forged}");
    }
    assert_eq!(preference(&app, &ann, app.pid()).await, (NewReports::Instant, true));
    assert_eq!(preference(&app, &ann, &other.id).await, (NewReports::Instant, true));

    // A mail program's one-click POST (RFC 8058): the token in the URL, no origin, no session.
    let one_click = app
        .post_form_with(
            &format!("/unsubscribe?token={token}"),
            &[("List-Unsubscribe", "One-Click")],
            None,
            &[("origin", "")],
        )
        .await;
    assert_eq!(one_click.status, 200, "{}", one_click.text);
    assert_eq!(preference(&app, &ann, app.pid()).await, (NewReports::Off, true));
    assert_eq!(preference(&app, &ann, &other.id).await, (NewReports::Instant, true), "only that project");

    // Someone who left the organization: the link no longer works.
    app.store.remove_member(&app.project.org_id, &ann).await.unwrap();
    let page = app.get_page(&format!("/unsubscribe?token={token}"), None).await;
    assert_eq!(page.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_mail_each_new_report_once() {
    let Some((first, second)) = TestApp::postgres_pair().await else { return };
    let (ann, cookie) = person_in(&first, &first.project.org_id, "ann@example.com", Role::Member).await;
    assert_eq!(choose(&first, &cookie, first.pid(), "instant", "off").await.status, 303);
    let mut reports = Vec::new();
    for i in 0..3 {
        reports.push(first.file_report(text_report(&format!("Report {i} on a shared database"))).await);
    }
    // Both instances' mail tasks run the same round at once, then again.
    let now = settled();
    let (a, b) = tokio::join!(
        mail::mail_events(first.service(), public_url(&first), now),
        mail::mail_events(second.service(), public_url(&second), now),
    );
    let (c, d) = tokio::join!(
        mail::mail_events(first.service(), public_url(&first), now + 5_000),
        mail::mail_events(second.service(), public_url(&second), now + 5_000),
    );
    assert_eq!(a.unwrap() + b.unwrap() + c.unwrap() + d.unwrap(), 3, "three reports, three mails in all");
    let mails = outbox_of(&second).await;
    let mut mailed: Vec<&str> = mails.iter().map(|m| m.dedupe_key.as_deref().unwrap()).collect();
    mailed.sort();
    let mut expected: Vec<String> = reports.iter().map(|id| format!("new-report:{id}:{ann}")).collect();
    expected.sort();
    assert_eq!(mailed, expected);
}
