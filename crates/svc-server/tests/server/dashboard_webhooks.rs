//! The Webhooks tab, driven as a browser would (session cookie, forms with the CSRF token) against
//! a real receiver on a loopback port: the secret shown once is the one deliveries are signed with,
//! a test event shows how the endpoint answered, a failed delivery can be resent, an endpoint Svc
//! disabled says so until it is enabled again; members are refused; what people typed stays text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use svc_core::webhook::Webhook;

use super::common::*;
use super::dashboard_channels::{Tab, audit, redirected};

/// The app, allowed to deliver to private addresses (the receivers listen on 127.0.0.1).
async fn app() -> TestApp {
    let mut config = no_rate_limits();
    config.webhook_policy.allow_private = true;
    config.webhook_timeout = std::time::Duration::from_secs(5);
    TestApp::with_config(config).await
}

/// One request a receiver got.
struct Received {
    headers: HeaderMap,
    body: String,
}

struct Answers {
    /// Status codes to answer with, in turn; the last one repeats.
    statuses: Mutex<VecDeque<u16>>,
    body: &'static str,
    got: Mutex<Vec<Received>>,
}

/// An HTTP endpoint on 127.0.0.1 that keeps every POST it gets and answers with the statuses it
/// was given, in turn.
struct Receiver {
    url: String,
    answers: Arc<Answers>,
}

async fn receive(State(answers): State<Arc<Answers>>, headers: HeaderMap, body: String) -> (StatusCode, &'static str) {
    answers.got.lock().unwrap().push(Received { headers, body });
    let mut statuses = answers.statuses.lock().unwrap();
    let status = if statuses.len() > 1 { statuses.pop_front().unwrap() } else { statuses[0] };
    (StatusCode::from_u16(status).unwrap(), answers.body)
}

impl Receiver {
    async fn start(statuses: &[u16], body: &'static str) -> Receiver {
        let answers =
            Arc::new(Answers { statuses: Mutex::new(statuses.iter().copied().collect()), body, got: Mutex::default() });
        let router = axum::Router::new().route("/hook", axum::routing::post(receive)).with_state(answers.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.expect("the receiver serves") });
        Receiver { url, answers }
    }

    fn count(&self) -> usize {
        self.answers.got.lock().unwrap().len()
    }

    /// A header of the `n`-th request.
    fn header(&self, n: usize, name: &str) -> String {
        let got = self.answers.got.lock().unwrap();
        got[n].headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    }

    fn body(&self, n: usize) -> String {
        self.answers.got.lock().unwrap()[n].body.clone()
    }
}

/// Adds an endpoint through the tab's form.
async fn add(app: &TestApp, tab: &Tab, url: &str, format: &str, events: &[&str], description: &str) -> Resp {
    let mut fields = vec![("url", url), ("format", format), ("description", description)];
    fields.extend(events.iter().map(|e| ("event", *e)));
    tab.post(app, "/webhooks", &fields).await
}

async fn hooks(app: &TestApp) -> Vec<Webhook> {
    app.store.list_webhooks(app.pid()).await.unwrap()
}

/// The only endpoint of the project.
async fn only_hook(app: &TestApp) -> Webhook {
    let mut all = hooks(app).await;
    assert_eq!(all.len(), 1, "one endpoint");
    all.remove(0)
}

/// Submits an endpoint's edit form.
async fn edit(app: &TestApp, tab: &Tab, id: &str, url: &str, events: &[&str], description: &str) -> Resp {
    let mut fields = vec![("url", url), ("description", description)];
    fields.extend(events.iter().map(|e| ("event", *e)));
    tab.post(app, &format!("/webhooks/{id}/edit"), &fields).await
}

/// The card of one endpoint on the list.
#[track_caller]
fn card<'a>(html: &'a str, id: &str) -> &'a str {
    let start =
        html.find(&format!(r#"<article class="card webhook" id="webhook-{id}""#)).expect("the endpoint is listed");
    let end = start + html[start..].find("</article>").expect("the card ends");
    &html[start..end]
}

/// The secret shown on the answer to a form.
#[track_caller]
fn shown_secret(html: &str) -> String {
    let at = html.find(r#"id="webhook-secret""#).expect("the signing secret is shown");
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find('<').unwrap();
    html[start..end].to_string()
}

/// The table row of one delivery on an endpoint's log.
#[track_caller]
fn delivery_row<'a>(html: &'a str, delivery_id: &str) -> &'a str {
    let start =
        html.find(&format!(r#"<tr id="delivery-{delivery_id}""#)).unwrap_or_else(|| panic!("no row for {delivery_id}"));
    let end = start + html[start..].find("</tr>").expect("the row ends");
    &html[start..end]
}

/// The page a redirect leads to (without its fragment, which a browser keeps to itself).
async fn follow(app: &TestApp, tab: &Tab, location: &str) -> Resp {
    app.get_page(location.split('#').next().unwrap(), Some(&tab.cookie)).await
}

/// The value of `name` in the query of a redirect.
#[track_caller]
fn query_value(location: &str, name: &str) -> String {
    let query = location.split_once('?').expect("a query").1;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .unwrap_or_else(|| panic!("no {name} in {location}"))
        .1
        .into_owned()
}

/// Whether `signature` (the `webhook-signature` header) holds a signature of this delivery made
/// with `secret`, as a receiver checks it (Standard Webhooks).
fn signed_with(secret: &str, message_id: &str, timestamp: &str, body: &str, signature: &str) -> bool {
    let key = base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{message_id}.{timestamp}.{body}").as_bytes());
    let expected = format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()));
    signature.split(' ').any(|one| one == expected)
}

#[tokio::test]
async fn an_endpoint_added_in_the_dashboard_shows_its_secret_once_and_is_listed() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;

    // The tab is among the project's settings tabs, next to Keys.
    let keys = owner.get(&app, "/keys").await.text;
    let webhooks_tab = format!(r#"<a href="/projects/{}/webhooks">Webhooks</a>"#, app.pid());
    assert!(keys.contains(&webhooks_tab), "{keys}");
    let page = owner.get(&app, "/webhooks").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains(r#"aria-current="page">Webhooks</a>"#));
    assert!(page.text.contains("No endpoints yet.") && page.text.contains("Add an endpoint"));
    for event in svc_core::event::EVENT_TYPES {
        assert!(page.text.contains(&format!(r#"name="event" value="{event}">"#)), "{event} is offered, unticked");
    }

    let added =
        add(&app, &owner, &receiver.url, "standard", &["report.created", "comment.published"], "Ops alerts").await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    assert!(added.location().is_none(), "the secret is never put in a URL");
    assert!(added.text.contains("it is shown this once"), "{}", added.text);
    let secret = shown_secret(&added.text);
    assert!(secret.starts_with("whsec_"), "{secret}");
    let hook = only_hook(&app).await;
    assert_eq!(hook.secret.expose(), secret, "the secret shown is the endpoint's");
    assert_eq!(hook.events, ["report.created", "comment.published"]);
    assert_eq!(hook.description.as_deref(), Some("Ops alerts"));

    // A reload lists the endpoint without the secret.
    let again = owner.get(&app, "/webhooks").await.text;
    assert!(!again.contains(&secret) && !again.contains("webhook-secret"), "the secret is not shown again");
    let card = &again[again.find(&format!(r#"id="webhook-{}""#, hook.id)).expect("the endpoint is listed")..];
    for shown in [
        receiver.url.as_str(),
        "Standard Webhooks",
        "Enabled",
        "Ops alerts",
        "<code>report.created</code>, <code>comment.published</code>",
        "Send test event",
        "Delivery log",
    ] {
        assert!(card.contains(shown), "the endpoint shows {shown:?}: {card}");
    }

    // Deliveries are signed with the secret that was shown.
    let tested = owner.post(&app, &format!("/webhooks/{}/test", hook.id), &[]).await;
    redirected(&tested);
    assert_eq!(receiver.count(), 1);
    let (id, timestamp) = (receiver.header(0, "webhook-id"), receiver.header(0, "webhook-timestamp"));
    let signature = receiver.header(0, "webhook-signature");
    assert!(signed_with(&secret, &id, &timestamp, &receiver.body(0), &signature), "{signature}");

    let log = audit(&app).await;
    assert!(log.iter().any(|(action, kind, detail)| action == "webhook.created"
        && kind == "user"
        && detail["webhookId"] == hook.id.as_str()));
    assert!(!format!("{log:?}").contains(&secret), "the audit log never holds the secret");
}

#[tokio::test]
async fn a_test_event_shows_delivered_with_the_code_in_the_log() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "thanks").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "standard", &["report.created"], "").await;
    let hook = only_hook(&app).await;

    let tested = owner.post(&app, &format!("/webhooks/{}/test", hook.id), &[]).await;
    let back = redirected(&tested);
    assert!(back.starts_with(&format!("/projects/{}/webhooks/{}?tested=", app.pid(), hook.id)), "{back}");
    assert_eq!(receiver.count(), 1, "sent while the form was answered");
    assert!(receiver.body(0).contains(r#""type":"webhook.test""#), "{}", receiver.body(0));

    let page = follow(&app, &owner, &back).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("Test event delivered: the endpoint answered 200 in"), "{}", page.text);
    let row = delivery_row(&page.text, &query_value(&back, "tested"));
    for shown in ["webhook.test", "delivered", ">200<", " ms", "1 attempt<"] {
        assert!(row.contains(shown), "the log shows {shown:?}: {row}");
    }
    assert!(row.contains("/resend"), "every delivery can be resent: {row}");

    // The log page without the result on it still lists the delivery, newest first.
    let plain = owner.get(&app, &format!("/webhooks/{}", hook.id)).await.text;
    assert!(!plain.contains("Test event delivered"));
    assert!(delivery_row(&plain, &query_value(&back, "tested")).contains("delivered"));
}

#[tokio::test]
async fn a_failed_attempt_shows_its_code_and_resend_delivers_it() {
    let app = app().await;
    // The endpoint's answer to a failure is the endpoint's text, not the dashboard's markup.
    let receiver = Receiver::start(&[500, 200], "<b>boom</b>").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "standard", &["report.created"], "").await;
    let hook = only_hook(&app).await;

    let back = redirected(&owner.post(&app, &format!("/webhooks/{}/test", hook.id), &[]).await);
    let delivery = query_value(&back, "tested");
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains(r#"<p class="error" role="alert">The test event was not delivered: answered 500"#), "{page}");
    assert!(page.contains("Svc tries again in"), "{page}");
    assert!(!page.contains("<b>boom</b>") && page.contains("&#60;b&#62;boom&#60;/b&#62;"), "{page}");
    let row = delivery_row(&page, &delivery);
    for shown in ["pending", ">500<", "answered 500", "1 attempt<"] {
        assert!(row.contains(shown), "the log shows {shown:?}: {row}");
    }
    assert!(row.contains("<time"), "a pending delivery says when it is tried next: {row}");

    let resent = owner.post(&app, &format!("/webhooks/{}/deliveries/{delivery}/resend", hook.id), &[]).await;
    let back = redirected(&resent);
    assert_eq!(query_value(&back, "resent"), delivery);
    assert_eq!(receiver.count(), 2);
    assert_eq!(receiver.header(0, "webhook-id"), receiver.header(1, "webhook-id"), "the same webhook-id again");
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains("Sent again and delivered: the endpoint answered 200 in"), "{page}");
    let row = delivery_row(&page, &delivery);
    for shown in ["delivered", ">200<", "2 attempts<", ": 500,", ": 200,"] {
        assert!(row.contains(shown), "the log shows {shown:?}: {row}");
    }

    // A delivery of another endpoint, or none, is not found.
    let missing = owner.post(&app, &format!("/webhooks/{}/deliveries/{}/resend", hook.id, "0".repeat(24)), &[]).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.text);
}

#[tokio::test]
async fn an_endpoint_svc_disabled_says_why_until_it_is_enabled_again() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "standard", &["report.created"], "").await;
    let id = only_hook(&app).await.id;
    let tested = redirected(&owner.post(&app, &format!("/webhooks/{id}/test"), &[]).await);
    let delivery = query_value(&tested, "tested");
    let mut hook = only_hook(&app).await;
    // What the delivery task records when every delivery failed for a day.
    let now = svc_core::time::now_ms();
    hook.enabled = false;
    hook.disabled_reason = Some("every delivery failed for 24 hours".into());
    hook.failing_since = Some(now - 25 * 3600 * 1000);
    assert!(app.store.update_webhook(&hook).await.unwrap());

    let page = owner.get(&app, "/webhooks").await.text;
    assert!(page.contains("Svc disabled this endpoint: every delivery failed for 24 hours."), "{page}");
    assert!(page.contains(r#"<span class="badge state-ended">Disabled</span>"#));
    assert!(page.contains("Enable again"));
    let log = owner.get(&app, &format!("/webhooks/{}", hook.id)).await.text;
    assert!(
        log.contains("Svc disabled this endpoint: every delivery failed for 24 hours.") && log.contains("Enable again")
    );

    // A delivery sent again meanwhile waits for the endpoint.
    let resent = owner.post(&app, &format!("/webhooks/{}/deliveries/{delivery}/resend", hook.id), &[]).await;
    let page = follow(&app, &owner, &redirected(&resent)).await.text;
    assert!(page.contains("Queued again: this endpoint is disabled"), "{page}");
    assert!(delivery_row(&page, &delivery).contains("pending"));
    assert_eq!(receiver.count(), 1, "nothing is sent to a disabled endpoint");

    let enabled = owner.post(&app, &format!("/webhooks/{}/enabled", hook.id), &[("enabled", "on")]).await;
    let back = redirected(&enabled);
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains(&format!("{} is enabled", receiver.url)), "{page}");
    assert!(!page.contains("Svc disabled this endpoint") && !page.contains("Enable again"), "{page}");
    let stored = only_hook(&app).await;
    assert!(stored.enabled && stored.disabled_reason.is_none() && stored.failing_since.is_none());
    // The delivery task's next round sends what waited.
    let round = svc_service::webhooks::run_once(app.service(), &app.state.webhooks, svc_core::time::now_ms()).await;
    assert_eq!(round.delivered, 1, "{round:?}");
    assert_eq!(receiver.count(), 2);
    let log = owner.get(&app, &format!("/webhooks/{}", hook.id)).await.text;
    assert!(delivery_row(&log, &delivery).contains("delivered"));
}

#[tokio::test]
async fn an_owner_disables_rotates_and_deletes_an_endpoint() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    let added = add(&app, &owner, &receiver.url, "standard", &["report.created"], "").await;
    let first = shown_secret(&added.text);
    let hook = only_hook(&app).await;

    // Disabled by a person: no notice from Svc, an Enable button.
    let back = redirected(&owner.post(&app, &format!("/webhooks/{}/enabled", hook.id), &[("enabled", "off")]).await);
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains(&format!("{} is disabled", receiver.url)), "{page}");
    assert!(!page.contains("Svc disabled this endpoint"));
    assert!(page.contains(r#"<input type="hidden" name="enabled" value="on">"#) && page.contains(">Enable</button>"));
    assert!(!only_hook(&app).await.enabled);

    // Rotating shows the new secret once and says the old one signs for another day.
    let rotated = owner.post(&app, &format!("/webhooks/{}/rotate-secret", hook.id), &[]).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text);
    let second = shown_secret(&rotated.text);
    assert!(second.starts_with("whsec_") && second != first);
    assert!(rotated.text.contains("The previous secret keeps signing beside this one for 24 hours"));
    let stored = only_hook(&app).await;
    assert_eq!(stored.secret.expose(), second);
    assert_eq!(stored.previous_secret.as_ref().map(|s| s.expose().to_string()), Some(first.clone()));
    let page = owner.get(&app, "/webhooks").await.text;
    assert!(!page.contains(&second) && !page.contains(&first), "neither secret is shown again");
    assert!(page.contains("the previous secret signs too"), "{page}");

    // Deleting asks first (a confirmation naming what goes), then the endpoint and its log go.
    assert!(page.contains(r#"<details class="confirm">"#) && page.contains("its delivery log goes with it"));
    let path = format!("/webhooks/{}/delete", hook.id);
    let back = redirected(&owner.post(&app, &path, &[]).await);
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains("The endpoint is deleted") && page.contains("No endpoints yet."), "{page}");
    assert!(hooks(&app).await.is_empty());
    assert_eq!(owner.post(&app, &path, &[]).await.status, StatusCode::NOT_FOUND);
    assert_eq!(owner.get(&app, &format!("/webhooks/{}", hook.id)).await.status, StatusCode::NOT_FOUND);

    let acts: Vec<String> = audit(&app).await.into_iter().map(|(action, _, _)| action).collect();
    assert_eq!(acts, ["webhook.deleted", "webhook.secret_rotated", "webhook.updated", "webhook.created"]);
}

#[tokio::test]
async fn a_refused_form_comes_back_filled_in_and_chat_formats_take_their_defaults() {
    let app = app().await;
    let owner = Tab::owner(&app).await;
    let receiver = Receiver::start(&[200], "ok").await;

    let none = add(&app, &owner, &receiver.url, "standard", &[], "Kept text").await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST, "{}", none.text);
    assert!(none.text.contains("Events must name at least one of"), "{}", none.text);
    assert!(none.text.contains(&format!(r#"value="{}""#, receiver.url)) && none.text.contains(r#"value="Kept text""#));
    let bad = add(&app, &owner, r#"javascript:alert(1)//"><script>x</script>"#, "slack", &["room.created"], "").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text.contains("Url must start with https://"), "{}", bad.text);
    assert!(!bad.text.contains("<script>x</script>"), "what was typed comes back as text");
    assert!(bad.text.contains(r#"<option value="slack" selected>"#));
    assert!(bad.text.contains(r#"value="room.created" checked>"#), "the ticked event stays ticked");
    assert!(hooks(&app).await.is_empty(), "nothing was added");

    // Slack with no event ticked: the format's defaults; its messages are not signed.
    let slack = add(&app, &owner, &receiver.url, "slack", &[], "#support").await;
    assert_eq!(slack.status, StatusCode::OK, "{}", slack.text);
    assert!(slack.text.contains("Slack messages are not signed: the URL itself is the secret"));
    assert!(!slack.text.contains("whsec_"));
    let hook = only_hook(&app).await;
    assert!(hook.events_default);
    let page = owner.get(&app, "/webhooks").await.text;
    assert!(page.contains("Slack's defaults"), "{page}");
    assert!(!page.contains(&format!(r#"action="/projects/{}/webhooks/{}/rotate-secret""#, app.pid(), hook.id)));

    // Without private addresses allowed (the default), a loopback URL is refused with the reason.
    let strict = TestApp::new().await;
    let owner = Tab::owner(&strict).await;
    let refused = add(&strict, &owner, &receiver.url, "standard", &["report.created"], "").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.text.contains("a private or special-purpose address"), "{}", refused.text);
}

#[tokio::test]
async fn an_owner_edits_an_endpoints_url_events_and_description() {
    let app = app().await;
    let first = Receiver::start(&[200], "ok").await;
    let second = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    let added = add(&app, &owner, &first.url, "standard", &["report.created"], "Ops alerts").await;
    let secret = shown_secret(&added.text);
    let hook = only_hook(&app).await;

    // The list offers Edit; the form opens in the endpoint's card, filled in as stored.
    let list = owner.get(&app, "/webhooks").await.text;
    let open_it = format!("/projects/{}/webhooks?edit={}#webhook-{}-edit", app.pid(), hook.id, hook.id);
    assert!(card(&list, &hook.id).contains(&format!(r#"href="{open_it}">Edit</a>"#)), "{list}");
    assert!(!list.contains("/edit\""), "no edit form until asked for");
    let log = owner.get(&app, &format!("/webhooks/{}", hook.id)).await.text;
    assert!(log.contains(&format!(r#"href="{open_it}">Edit</a>"#)), "the delivery log links to it too");
    let editing = owner.get(&app, &format!("/webhooks?edit={}", hook.id)).await;
    assert_eq!(editing.status, StatusCode::OK);
    let form = card(&editing.text, &hook.id);
    assert!(form.contains(&format!(r#"action="/projects/{}/webhooks/{}/edit""#, app.pid(), hook.id)), "{form}");
    assert!(form.contains(&format!(r#"name="_csrf" value="{}""#, owner.csrf)));
    assert!(form.contains(&format!(r#"value="{}">"#, first.url)) && form.contains(r#"value="Ops alerts">"#));
    assert!(form.contains(r#"value="report.created" checked>"#) && form.contains(r#"value="room.created">"#));
    assert!(!form.contains(r#"name="format""#), "the format is not changed here");

    let saved =
        edit(&app, &owner, &hook.id, &second.url, &["comment.published", "report.status_changed"], "  Triage room  ")
            .await;
    let back = redirected(&saved);
    assert_eq!(back, format!("/projects/{}/webhooks?done=saved&webhook={}#webhook-{}", app.pid(), hook.id, hook.id));
    let page = follow(&app, &owner, &back).await.text;
    assert!(page.contains(&format!("{} is saved", second.url)), "{page}");
    let shown = card(&page, &hook.id);
    for new in [
        second.url.as_str(),
        "Triage room",
        "<code>comment.published</code>, <code>report.status_changed</code>",
        "Standard Webhooks",
    ] {
        assert!(shown.contains(new), "the list shows {new:?}: {shown}");
    }
    assert!(!shown.contains(&first.url) && !shown.contains("Ops alerts") && !shown.contains("/edit\""), "{shown}");
    let stored = only_hook(&app).await;
    assert_eq!((stored.url.as_str(), stored.description.as_deref()), (second.url.as_str(), Some("Triage room")));
    assert_eq!(stored.events, ["comment.published", "report.status_changed"]);
    assert_eq!(stored.secret.expose(), secret, "the signing secret stays");
    assert!(stored.enabled);

    // Deliveries go to the new address.
    redirected(&owner.post(&app, &format!("/webhooks/{}/test", hook.id), &[]).await);
    assert_eq!((first.count(), second.count()), (0, 1));

    // An empty description removes it.
    redirected(&edit(&app, &owner, &hook.id, &second.url, &["report.created"], "").await);
    assert_eq!(only_hook(&app).await.description, None);

    let acts: Vec<String> = audit(&app).await.into_iter().map(|(action, _, _)| action).collect();
    assert_eq!(acts, ["webhook.updated", "webhook.updated", "webhook.created"]);
    let audit_tab = owner.get(&app, "/audit").await.text;
    let host = second.url.trim_end_matches("/hook");
    assert!(audit_tab.contains(&format!("changed the webhook {host}/…")), "{audit_tab}");
    assert!(audit_tab.contains(&format!("added the webhook {}/… (standard)", first.url.trim_end_matches("/hook"))));
}

#[tokio::test]
async fn a_chat_endpoint_with_no_event_ticked_goes_back_to_its_formats_defaults() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "discord", &["room.created"], "#bugs").await;
    let hook = only_hook(&app).await;
    assert!(!hook.events_default);

    let back = redirected(&edit(&app, &owner, &hook.id, &receiver.url, &[], "#bugs").await);
    let stored = only_hook(&app).await;
    assert!(stored.events_default, "{stored:?}");
    assert_eq!(stored.events, svc_core::webhook::WebhookFormat::Discord.default_events());
    assert!(follow(&app, &owner, &back).await.text.contains("Discord's defaults"));

    // On the defaults, the form has nothing ticked, so saving it unchanged keeps them.
    let form = owner.get(&app, &format!("/webhooks?edit={}", hook.id)).await.text;
    assert!(!card(&form, &hook.id).contains(" checked>"), "{form}");
    assert!(card(&form, &hook.id).contains("With none ticked, Discord's defaults are sent"));
}

#[tokio::test]
async fn a_refused_edit_comes_back_filled_in_with_what_to_fix() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "standard", &["report.created"], "Ops alerts").await;
    let hook = only_hook(&app).await;

    let typed = r#"javascript:alert(1)//"><script>x</script>"#;
    let bad = edit(&app, &owner, &hook.id, typed, &["room.created", "report.assigned"], "New words").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
    assert!(bad.location().is_none());
    let form = card(&bad.text, &hook.id);
    assert!(form.contains(r#"<p class="error" role="alert">Url must start with https://"#), "{form}");
    assert!(form.contains(&format!(r#"action="/projects/{}/webhooks/{}/edit""#, app.pid(), hook.id)));
    assert!(!bad.text.contains("<script>x</script>"), "what was typed comes back as text");
    assert!(form.contains(r#"value="javascript:alert(1)//&#34;&#62;&#60;script&#62;x&#60;/script&#62;">"#), "{form}");
    assert!(form.contains(r#"value="room.created" checked>"#) && form.contains(r#"value="report.assigned" checked>"#));
    assert!(form.contains(r#"value="report.created">"#), "what was unticked stays unticked");
    assert!(form.contains(r#"value="New words">"#));
    let alerts = bad.text.matches(r#"<p class="error" role="alert">"#).count();
    assert_eq!(alerts, 1, "only the edit form says what to fix, not the add form: {}", bad.text);

    // The standard format needs an event.
    let none = edit(&app, &owner, &hook.id, &receiver.url, &[], "New words").await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST);
    assert!(card(&none.text, &hook.id).contains("Events must name at least one of"), "{}", none.text);

    assert_eq!(only_hook(&app).await, hook, "nothing changed");
    assert!(!audit(&app).await.iter().any(|(action, _, _)| action == "webhook.updated"));

    // An endpoint that is not there (deleted meanwhile) is not found.
    let gone = edit(&app, &owner, &"0".repeat(24), &receiver.url, &["report.created"], "").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text);
}

#[tokio::test]
async fn hostile_text_in_a_description_is_shown_as_text() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    let hostile = r#"<script>alert(1)</script><img src=x onerror="alert(2)">"#;
    let url = format!(r#"{}?q="><script>alert(3)</script>"#, receiver.url);
    let added = add(&app, &owner, &url, "standard", &["report.created"], hostile).await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    let hook = only_hook(&app).await;
    for page in [owner.get(&app, "/webhooks").await.text, owner.get(&app, &format!("/webhooks/{}", hook.id)).await.text]
    {
        assert!(!page.contains("<script>alert") && !page.contains("<img src=x"), "{page}");
        assert!(page.contains("&#60;script&#62;alert(1)&#60;/script&#62;"), "the description is shown as text");
    }
}

#[tokio::test]
async fn members_are_refused_the_webhooks_tab_and_its_forms() {
    let app = app().await;
    let receiver = Receiver::start(&[200], "ok").await;
    let owner = Tab::owner(&app).await;
    add(&app, &owner, &receiver.url, "standard", &["report.created"], "").await;
    let id = only_hook(&app).await.id;
    let back = redirected(&owner.post(&app, &format!("/webhooks/{id}/test"), &[]).await);
    let delivery = query_value(&back, "tested");
    let hook = only_hook(&app).await;
    let before = audit(&app).await.len();

    let member = Tab::member(&app).await;
    let page = member.get(&app, "/webhooks").await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.text);
    assert!(page.text.contains("Only an owner of the organization can see and change this project's webhooks"));
    assert!(!page.text.contains(&receiver.url), "a member never sees an endpoint's URL");
    assert!(!page.text.contains(r#"method="post" action="/projects/"#), "no forms for a member");
    let editing = member.get(&app, &format!("/webhooks?edit={}", hook.id)).await;
    assert_eq!(editing.status, StatusCode::FORBIDDEN);
    assert!(!editing.text.contains(&receiver.url) && !editing.text.contains("/edit\""), "no edit form either");
    assert_eq!(member.get(&app, &format!("/webhooks/{}", hook.id)).await.status, StatusCode::FORBIDDEN);

    let attempts: [(String, Vec<(&str, &str)>); 7] = [
        ("/webhooks".into(), vec![("url", receiver.url.as_str()), ("format", "standard"), ("event", "report.created")]),
        (
            format!("/webhooks/{}/edit", hook.id),
            vec![("url", "https://attacker.example/hook"), ("event", "report.created"), ("description", "")],
        ),
        (format!("/webhooks/{}/enabled", hook.id), vec![("enabled", "off")]),
        (format!("/webhooks/{}/rotate-secret", hook.id), vec![]),
        (format!("/webhooks/{}/test", hook.id), vec![]),
        (format!("/webhooks/{}/deliveries/{delivery}/resend", hook.id), vec![]),
        (format!("/webhooks/{}/delete", hook.id), vec![]),
    ];
    for (path, fields) in &attempts {
        let resp = member.post(&app, path, fields).await;
        assert_eq!(resp.status, StatusCode::FORBIDDEN, "{path}: {}", resp.text);
    }
    // An owner's form without the token is refused too.
    let bare = owner.post_bare(&app, &format!("/webhooks/{}/delete", hook.id), &[]).await;
    assert_eq!(bare.status, StatusCode::FORBIDDEN);

    assert_eq!(receiver.count(), 1, "only the owner's test was sent");
    assert_eq!(only_hook(&app).await, hook, "nothing changed");
    assert_eq!(audit(&app).await.len(), before);
}
