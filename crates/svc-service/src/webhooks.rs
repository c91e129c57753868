//! Webhooks: a project's endpoints, and the delivery of its events to them the Standard Webhooks
//! way (or as a Slack or Discord message).
//!
//! Deliveries are made from the event feed: the consumer reads events from its remembered position
//! and writes one delivery per event and endpoint in the transaction that moves it on, so a crash
//! loses none and makes none twice (the feed's lease keeps instances from reading the same events;
//! a unique index keeps an event from being delivered to an endpoint twice). Each delivery's body is
//! fixed when it is made; every attempt sends the same bytes under the same `webhook-id`, signed
//! anew with the attempt's timestamp. Senders claim due deliveries with a lease, so instances share
//! them without sending one twice; a failed attempt is retried for 24 hours (5 s, 5 min, 30 min,
//! 2 h, 5 h, 10 h, 14 h, with jitter), and an endpoint whose every delivery failed for 24 hours is
//! disabled and its project's owners are mailed.
//!
//! An endpoint is sent to one delivery at a time per round, and its round stops at its first
//! failure (the rest wait for the next round), while endpoints run side by side: a slow or failing
//! endpoint never holds up another, nor any request.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::StreamExt;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use svc_core::audit::action;
use svc_core::event::{Event, EventKind, consumer};
use svc_core::mail::MailKind;
use svc_core::model::{AuthorKind, Comment, Project, Report};
use svc_core::webhook::{self, TEST_EVENT, Webhook, WebhookAttempt, WebhookDelivery, WebhookFormat};
use svc_core::{ids, time};
use svc_store::{Applied, AttemptOutcome, Change, StoreError, Write};

use crate::mail::{self, Mail};
use crate::outbound::{OutboundPolicy, refusal_of};
use crate::permissions::{self, Operation};
use crate::principal::Principal;
use crate::{Service, ServiceError, ServiceResult};
use svc_store::priority;

/// Events read per round of the consumer.
const EVENTS_PER_ROUND: u32 = 50;
/// Deliveries claimed per batch of a sender (each batch's writes are short transactions).
const DELIVERIES_PER_ROUND: u32 = 100;
/// Deliveries sent to one endpoint side by side.
const AT_ONCE_PER_ENDPOINT: usize = 8;
/// How long one call of [`deliver_due`] or [`queue_events`] keeps taking batches.
const ROUND_TIME: Duration = Duration::from_secs(2);
/// How long the feed's consumer is held: renewed every round (a second apart), and short, so a
/// killed instance's events are taken over soon.
const CONSUMER_LEASE_MS: i64 = 15_000;
/// Bytes of an endpoint's answer kept (the rest is not read).
const MAX_ANSWER_BYTES: usize = 4096;
/// Finished deliveries are kept this long in the log.
const KEEP_MS: i64 = 30 * 24 * 3600 * 1000;
/// Endpoints sent to side by side in one round.
const ENDPOINTS_AT_ONCE: usize = 32;
/// How long the delivery task waits out a burst of reports being filed before it goes on for a
/// batch anyway ([`crate::load`]): within the consumer's lease, so it keeps the feed.
const LONGEST_WAIT: Duration = crate::load::LONGEST_WAIT;
const _: () = assert!((LONGEST_WAIT.as_millis() as i64) < CONSUMER_LEASE_MS / 2);

/// The REST form of what a payload carries, written by the surface that owns those forms.
pub trait PayloadViews: Send + Sync {
    fn report(&self, report: &Report) -> Value;
    fn comment(&self, comment: &Comment) -> Value;
}

/// What delivery needs besides the service: the HTTP client (bound by the outbound policy, 10 s
/// timeout, no redirects), the dashboard's public URL for links, and the REST forms.
#[derive(Clone)]
pub struct Webhooks {
    client: reqwest::Client,
    policy: OutboundPolicy,
    public_url: String,
    views: Arc<dyn PayloadViews>,
    /// How long a sender holds claimed deliveries: two attempts' timeout and a margin. After a
    /// crash, what it held goes out once this has passed.
    lease_ms: i64,
    /// Deliveries this instance's consumer just made, held by this instance (made with its lease):
    /// the senders take them from here, with no claim to write.
    fresh: Arc<std::sync::Mutex<std::collections::VecDeque<WebhookDelivery>>>,
    /// When the consumer last followed the feed with no endpoint anywhere.
    passed_at: Arc<std::sync::atomic::AtomicI64>,
    /// Until when this instance holds the feed's consumer, as far as it knows: renewed once half
    /// of it is left, not with a write every round.
    held_until: Arc<std::sync::atomic::AtomicI64>,
    /// The server's runtime, where delivery runs on a thread of its own ([`on_own_thread`]): its
    /// writes to the server's database go there ([`Webhooks::on_server`]).
    server: Option<tokio::runtime::Handle>,
}

impl Webhooks {
    /// `timeout`: the longest an endpoint may take to answer (10 s in `svc serve`).
    pub fn new(
        policy: OutboundPolicy,
        timeout: Duration,
        public_url: &str,
        views: Arc<dyn PayloadViews>,
    ) -> anyhow::Result<Self> {
        let client = policy.client(timeout)?;
        let lease_ms = 2 * timeout.as_millis() as i64 + 5_000;
        Ok(Webhooks {
            client,
            policy,
            public_url: mail::base(public_url).to_string(),
            views,
            lease_ms,
            fresh: Default::default(),
            passed_at: Default::default(),
            held_until: Default::default(),
            server: None,
        })
    }

    /// Runs `write`, a write to the server's database, on the server's runtime when delivery runs
    /// on a thread of its own ([`on_own_thread`]), else here. On SQLite that database has one
    /// writer connection, which every report waits for: driven from delivery's thread, in the idle
    /// class, it waited for a core between its statements and before going back to the pool (from
    /// a task of the runtime that used it) while reports queued behind it; and a connection opened
    /// there to replace one a failed transaction left unusable would keep that class for good
    /// ([`svc_store::priority`]). The deliveries' own file is written from delivery's thread.
    async fn on_server<T: Send + 'static>(
        &self,
        write: impl Future<Output = ServiceResult<T>> + Send + 'static,
    ) -> ServiceResult<T> {
        let Some(server) = &self.server else { return write.await };
        server
            .spawn(write)
            .await
            .map_err(|error| ServiceError::Internal(format!("a write for webhook delivery did not finish: {error}")))?
    }

    /// Up to `limit` of the deliveries this instance's consumer just made, while this instance
    /// still holds them for a while (one that waited here too long is left to the senders'
    /// claims, which take it once its hold has passed: never both).
    fn take_fresh(&self, limit: usize, now: i64) -> Vec<WebhookDelivery> {
        let mut fresh = self.fresh.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut taken = Vec::new();
        while taken.len() < limit
            && let Some(delivery) = fresh.pop_front()
        {
            if delivery.next_attempt_at - now > self.lease_ms / 2 {
                taken.push(delivery);
            }
        }
        taken
    }

    fn report_link(&self, report_id: &str) -> String {
        mail::report_link(&self.public_url, report_id)
    }

    fn blob_link(&self, blob_id: &str) -> String {
        mail::blob_link(&self.public_url, blob_id)
    }

    /// The report's REST form, with each file's dashboard link beside its id (never the bytes).
    fn report_json(&self, report: &Report) -> Value {
        let mut value = self.views.report(report);
        if let Some(blocks) = value.get_mut("blocks").and_then(Value::as_array_mut) {
            for block in blocks {
                let link = block.get("blobId").and_then(Value::as_str).map(|id| self.blob_link(id));
                if let (Some(link), Some(fields)) = (link, block.as_object_mut()) {
                    fields.insert("url".into(), Value::String(link));
                }
            }
        }
        value
    }
}

// ---------------------------------------------------------------------------------------------
// Endpoints.

/// What `POST .../webhooks` takes.
#[derive(Debug, Clone, Default)]
pub struct NewWebhook {
    pub url: String,
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
    pub format: Option<String>,
}

/// What `PATCH .../webhooks/:id` changes (absent: unchanged).
#[derive(Debug, Clone, Default)]
pub struct WebhookChanges {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub enabled: Option<bool>,
    /// `Some(None)` clears it.
    pub description: Option<Option<String>>,
}

async fn audit(svc: &Service, project: &Project, by: &Principal, action: &str, hook: &Webhook) {
    let detail = json!({ "webhookId": hook.id, "url": redacted_url(&hook.url), "format": hook.format.as_str() });
    crate::audit::record(svc, project, &by.author(), action, detail).await;
}

/// A URL for logs and the audit trail: scheme, host and port (a chat URL's path is its secret).
pub fn redacted_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => {
            let port = parsed.port().map(|port| format!(":{port}")).unwrap_or_default();
            format!("{}://{}{port}/…", parsed.scheme(), parsed.host_str().unwrap_or_default())
        }
        Err(_) => "(not a URL)".into(),
    }
}

/// Refuses a URL whose address may not be reached (one written in the URL; a name is checked
/// when it is resolved, on every attempt).
fn check_reachable(hooks: &Webhooks, url: &str) -> ServiceResult<()> {
    let parsed = url::Url::parse(url).map_err(|error| ServiceError::Invalid(format!("url: {error}")))?;
    hooks.policy.check_url(&parsed).map_err(|refusal| ServiceError::Invalid(format!("url: {refusal}")))
}

/// Adds an endpoint; the answer carries its signing secret, the only time it is shown.
pub async fn create(
    svc: &Service,
    hooks: &Webhooks,
    by: &Principal,
    project: &Project,
    new: NewWebhook,
) -> ServiceResult<Webhook> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    let format = match new.format.as_deref() {
        None => WebhookFormat::Standard,
        Some(text) => WebhookFormat::parse(text)?,
    };
    let url = webhook::parse_url(&new.url)?;
    check_reachable(hooks, &url)?;
    let (events, events_default) = webhook::parse_events(new.events, format)?;
    let description = webhook::parse_description(new.description)?;
    let store = svc.store();
    if store.list_webhooks(&project.id).await?.len() >= webhook::MAX_WEBHOOKS_PER_PROJECT {
        return Err(ServiceError::Conflict(format!(
            "a project has at most {} webhooks; delete one first",
            webhook::MAX_WEBHOOKS_PER_PROJECT
        )));
    }
    let now = time::now_ms();
    let hook = Webhook {
        id: ids::new_id_at(now),
        project_id: project.id.clone(),
        url,
        events,
        events_default,
        description,
        format,
        enabled: true,
        disabled_reason: None,
        secret: webhook::new_secret(),
        previous_secret: None,
        previous_until: None,
        failing_since: None,
        paused_until: None,
        enabled_at: now,
        created_at: now,
        updated_at: now,
    };
    store.create_webhook(&hook).await?;
    audit(svc, project, by, action::WEBHOOK_CREATED, &hook).await;
    Ok(hook)
}

pub async fn list(svc: &Service, by: &Principal, project: &Project) -> ServiceResult<Vec<Webhook>> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    Ok(svc.store().list_webhooks(&project.id).await?)
}

pub async fn get(svc: &Service, by: &Principal, project: &Project, id: &str) -> ServiceResult<Webhook> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    svc.store().get_webhook(&project.id, id).await?.ok_or_else(|| ServiceError::NotFound("webhook not found".into()))
}

/// Changes an endpoint. Enabling one (again) clears why Svc disabled it and its run of failures;
/// its waiting deliveries go out again.
pub async fn update(
    svc: &Service,
    hooks: &Webhooks,
    by: &Principal,
    project: &Project,
    id: &str,
    changes: WebhookChanges,
) -> ServiceResult<Webhook> {
    let mut hook = get(svc, by, project, id).await?;
    if let Some(url) = changes.url {
        let url = webhook::parse_url(&url)?;
        check_reachable(hooks, &url)?;
        // A new address is a new receiver: the old one's failures and pause do not follow it.
        if url != hook.url {
            hook.failing_since = None;
            hook.paused_until = None;
        }
        hook.url = url;
    }
    if let Some(events) = changes.events {
        (hook.events, hook.events_default) = webhook::parse_events(Some(events), hook.format)?;
    }
    if let Some(description) = changes.description {
        hook.description = webhook::parse_description(description)?;
    }
    if let Some(enabled) = changes.enabled {
        if enabled && !hook.enabled {
            hook.failing_since = None;
            hook.paused_until = None;
            hook.enabled_at = time::now_ms();
        }
        hook.enabled = enabled;
        hook.disabled_reason = None;
    }
    hook.updated_at = time::now_ms();
    if !svc.store().update_webhook(&hook).await? {
        return Err(ServiceError::NotFound("webhook not found".into()));
    }
    audit(svc, project, by, action::WEBHOOK_UPDATED, &hook).await;
    WAKE.notify_one();
    Ok(hook)
}

pub async fn delete(svc: &Service, by: &Principal, project: &Project, id: &str) -> ServiceResult<()> {
    let hook = get(svc, by, project, id).await?;
    if !svc.store().delete_webhook(&project.id, id).await? {
        return Err(ServiceError::NotFound("webhook not found".into()));
    }
    audit(svc, project, by, action::WEBHOOK_DELETED, &hook).await;
    Ok(())
}

/// A new signing secret; the old one keeps signing beside it for 24 hours, so receivers can move
/// over without missing a delivery.
pub async fn rotate_secret(svc: &Service, by: &Principal, project: &Project, id: &str) -> ServiceResult<Webhook> {
    let mut hook = get(svc, by, project, id).await?;
    let now = time::now_ms();
    hook.previous_secret = Some(std::mem::replace(&mut hook.secret, webhook::new_secret()));
    hook.previous_until = Some(now + webhook::PREVIOUS_SECRET_MS);
    hook.updated_at = now;
    if !svc.store().update_webhook(&hook).await? {
        return Err(ServiceError::NotFound("webhook not found".into()));
    }
    audit(svc, project, by, action::WEBHOOK_SECRET_ROTATED, &hook).await;
    Ok(hook)
}

/// A delivery with its attempts, oldest attempt first.
#[derive(Debug, Clone)]
pub struct LoggedDelivery {
    pub delivery: WebhookDelivery,
    pub attempts: Vec<WebhookAttempt>,
}

/// The endpoint's deliveries, newest first, before the delivery id `before`.
pub async fn deliveries(
    svc: &Service,
    by: &Principal,
    project: &Project,
    id: &str,
    before: Option<&str>,
    limit: u32,
) -> ServiceResult<Vec<LoggedDelivery>> {
    let hook = get(svc, by, project, id).await?;
    let store = svc.store();
    let found = store.list_deliveries(&hook.id, before, limit).await?;
    let ids: Vec<String> = found.iter().map(|delivery| delivery.id.clone()).collect();
    let mut attempts: HashMap<String, Vec<WebhookAttempt>> = HashMap::new();
    for attempt in store.list_attempts(&ids).await? {
        attempts.entry(attempt.delivery_id.clone()).or_default().push(attempt);
    }
    Ok(found
        .into_iter()
        .map(|delivery| LoggedDelivery {
            attempts: delivery.attempts_with(attempts.remove(&delivery.id).unwrap_or_default()),
            delivery,
        })
        .collect())
}

async fn logged(svc: &Service, hook: &Webhook, delivery_id: &str) -> ServiceResult<LoggedDelivery> {
    let store = svc.store();
    let delivery = store
        .get_delivery(&hook.id, delivery_id)
        .await?
        .ok_or_else(|| ServiceError::NotFound("delivery not found".into()))?;
    let attempts = delivery.attempts_with(store.list_attempts(std::slice::from_ref(&delivery.id)).await?);
    Ok(LoggedDelivery { delivery, attempts })
}

/// "Send test event": a `webhook.test` delivery, attempted at once (even while the endpoint is
/// disabled); the answer says how it went. Retried like any other when it fails.
pub async fn send_test(
    svc: &Service,
    hooks: &Webhooks,
    by: &Principal,
    project: &Project,
    id: &str,
) -> ServiceResult<LoggedDelivery> {
    let hook = get(svc, by, project, id).await?;
    let now = time::now_ms();
    let delivery_id = ids::new_id_at(now);
    let data = json!({
        "project": project_json(project),
        "message": "A test event from Svc: this endpoint receives the project's events.",
        "dashboardUrl": format!("{}/projects/{}/webhooks", hooks.public_url, project.id),
    });
    let payload = match hook.format {
        WebhookFormat::Standard => standard_body(TEST_EVENT, now, data),
        WebhookFormat::Slack => slack_message(&ChatMessage::test(hooks, project)),
        WebhookFormat::Discord => discord_message(&ChatMessage::test(hooks, project)),
    };
    let message_id = format!("msg_{delivery_id}");
    let delivery =
        WebhookDelivery::new_pending(delivery_id.clone(), &hook, None, message_id, payload, now, now + hooks.lease_ms);
    svc.store().queue_delivery(&delivery).await?;
    attempt_and_record(svc, hooks, &hook, delivery, now).await?;
    logged(svc, &hook, &delivery_id).await
}

/// "Resend": the delivery goes out again now, under its own `webhook-id`, with a fresh 24 hours
/// of retries; the answer says how the attempt went.
pub async fn resend(
    svc: &Service,
    hooks: &Webhooks,
    by: &Principal,
    project: &Project,
    id: &str,
    delivery_id: &str,
) -> ServiceResult<LoggedDelivery> {
    let hook = get(svc, by, project, id).await?;
    let store = svc.store();
    let now = time::now_ms();
    if store.get_delivery(&hook.id, delivery_id).await?.is_none() {
        return Err(ServiceError::NotFound("delivery not found".into()));
    }
    store.redeliver(&hook.id, delivery_id, now).await?;
    // Claimed like a sender would, so a sender running now does not send it too; a disabled
    // endpoint's delivery waits until it is enabled again.
    if let Some(delivery) =
        store.claim_due_deliveries(now, now + hooks.lease_ms, 1, Some(delivery_id)).await?.into_iter().next()
    {
        attempt_and_record(svc, hooks, &hook, delivery, now).await?;
    }
    logged(svc, &hook, delivery_id).await
}

// ---------------------------------------------------------------------------------------------
// Payloads.

fn project_json(project: &Project) -> Value {
    json!({ "id": project.id, "name": project.name })
}

fn standard_body(event_type: &str, at: i64, data: Value) -> String {
    json!({ "type": event_type, "timestamp": time::iso(at), "data": data }).to_string()
}

/// What an event's payload is made from, read once per round.
struct Subject<'a> {
    report: Option<&'a Report>,
    comment: Option<Comment>,
}

/// The standard payload of an event: `{type, timestamp, data}` with the event's own fields, who
/// did it, the project, the report in its REST form (files as dashboard links) and a link to it.
fn event_payload(hooks: &Webhooks, project: &Project, event: &Event, subject: &Subject) -> String {
    let mut data = json!({
        "eventId": event.id,
        "project": project_json(project),
        "by": { "kind": event.by.kind.as_str(), "id": event.by.id, "label": event.by.label },
    });
    let fields = event.kind.data();
    if let (Some(target), Value::Object(fields)) = (data.as_object_mut(), fields) {
        for (name, value) in fields {
            target.insert(name, value);
        }
        if let Some(report_id) = &event.report_id {
            target.insert("reportId".into(), Value::String(report_id.clone()));
            target.insert("dashboardUrl".into(), Value::String(hooks.report_link(report_id)));
        }
        if let Some(report) = subject.report {
            target.insert("report".into(), hooks.report_json(report));
        }
        if let Some(comment) = &subject.comment {
            target.insert("comment".into(), hooks.views.comment(comment));
        }
    }
    standard_body(event.kind.type_name(), event.at, data)
}

/// A chat message's content, whatever the chat.
struct ChatMessage {
    /// The fallback line (notifications) and the message's heading.
    heading: String,
    /// The reporter's or commenter's words.
    words: String,
    fields: Vec<(&'static str, String)>,
    footer: String,
    link: String,
    /// The first screenshot's dashboard link.
    screenshot: Option<String>,
    at: i64,
}

impl ChatMessage {
    fn test(hooks: &Webhooks, project: &Project) -> Self {
        ChatMessage {
            heading: "Svc test message".into(),
            words: format!("This channel will hear about new reports in {}.", project.name),
            fields: Vec::new(),
            footer: project.name.clone(),
            link: format!("{}/projects/{}/webhooks", hooks.public_url, project.id),
            screenshot: None,
            at: time::now_ms(),
        }
    }

    fn of(hooks: &Webhooks, project: &Project, event: &Event, subject: &Subject) -> Option<Self> {
        let report = subject.report?;
        let title = report.title.clone();
        let (heading, words) = match &event.kind {
            EventKind::ReportCreated { .. } => (format!("New report: {title}"), mail::excerpt(&report.blocks)),
            EventKind::Confirmed { works: true } => (format!("The reporter confirmed the fix: {title}"), String::new()),
            EventKind::Confirmed { works: false } => {
                (format!("The reporter says it is still broken: {title}"), String::new())
            }
            EventKind::CommentPublished { .. } => {
                let comment = subject.comment.as_ref()?;
                let who = comment.author.label.clone().unwrap_or_else(|| comment.author.kind.as_str().into());
                (format!("{who} commented on: {title}"), comment.text.clone())
            }
            EventKind::StatusChanged { from, to } => {
                (format!("Status {} → {}: {title}", from.as_str(), to.as_str()), String::new())
            }
            EventKind::Assigned { .. } => (format!("Assignee changed: {title}"), String::new()),
            EventKind::LabelsChanged { labels, .. } => (format!("Labels changed: {title}"), labels.join(", ")),
            EventKind::RoomCreated { .. } | EventKind::ReportDeleted => return None,
        };
        let mut fields = vec![("Channel", report.channel_key.clone()), ("Status", report.status.as_str().to_string())];
        if let Some(identity) = &report.identity {
            let who = match (&identity.name, &identity.email) {
                (Some(name), Some(email)) => format!("{name} <{email}>"),
                (Some(name), None) => name.clone(),
                (None, Some(email)) => email.clone(),
                (None, None) => String::new(),
            };
            if !who.is_empty() {
                fields.push(("Reporter", who));
            }
        } else if let Some(label) = mail::reporter_label(report) {
            fields.push(("Reporter", label));
        }
        if let Some(url) = &report.url {
            fields.push(("Page", url.clone()));
        }
        let screenshot = report.blocks.iter().find_map(|block| match block {
            svc_core::block::Block::Screenshot(shot) => Some(hooks.blob_link(&shot.blob_id)),
            _ => None,
        });
        Some(ChatMessage {
            heading,
            words,
            fields,
            footer: format!("{} · {}", project.name, ids::short_id(&report.id)),
            link: hooks.report_link(&report.id),
            screenshot,
            at: event.at,
        })
    }
}

/// Text cut to `max` characters (an ellipsis marks the cut).
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max.saturating_sub(1)).collect::<String>() + "…"
}

/// Reporter text made inert for Slack's mrkdwn: `&`, `<` and `>` escaped as Slack asks, so
/// `<!channel>` or a disguised link cannot be written by a reporter.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A Slack incoming-webhook message in Block Kit, within Slack's documented limits: a header
/// (plain text, 150 characters), the words (a section, 3,000), the fields (at most 10, 2,000
/// each), a context line and the buttons (text 75, URL 3,000).
fn slack_message(message: &ChatMessage) -> String {
    let mut blocks = vec![json!({
        "type": "header",
        "text": { "type": "plain_text", "text": cut(&slack_escape(&message.heading), 150), "emoji": false },
    })];
    if !message.words.trim().is_empty() {
        blocks.push(json!({
            "type": "section",
            "text": { "type": "mrkdwn", "text": cut(&slack_escape(message.words.trim()), 3000) },
        }));
    }
    if !message.fields.is_empty() {
        let fields: Vec<Value> = message
            .fields
            .iter()
            .take(10)
            .map(|(name, value)| json!({ "type": "mrkdwn", "text": cut(&format!("*{name}*\n{}", slack_escape(value)), 2000) }))
            .collect();
        blocks.push(json!({ "type": "section", "fields": fields }));
    }
    blocks.push(json!({
        "type": "context",
        "elements": [{ "type": "mrkdwn", "text": cut(&slack_escape(&message.footer), 3000) }],
    }));
    let mut buttons = Vec::new();
    if message.link.len() <= 3000 {
        buttons.push(json!({
            "type": "button", "action_id": "open", "style": "primary",
            "text": { "type": "plain_text", "text": "Open in Svc" }, "url": message.link,
        }));
    }
    if let Some(screenshot) = message.screenshot.as_ref().filter(|url| url.len() <= 3000) {
        buttons.push(json!({
            "type": "button", "action_id": "screenshot",
            "text": { "type": "plain_text", "text": "Screenshot" }, "url": screenshot,
        }));
    }
    if !buttons.is_empty() {
        blocks.push(json!({ "type": "actions", "elements": buttons }));
    }
    json!({ "text": cut(&slack_escape(&message.heading), 3000), "blocks": blocks }).to_string()
}

/// A Discord webhook message with one embed, within Discord's limits (title 256, description
/// 4,096, at most 25 fields of 256 and 1,024, footer 2,048, 6,000 in all); no mentions parsed, so
/// a reporter's `@everyone` pings nobody.
fn discord_message(message: &ChatMessage) -> String {
    let mut fields: Vec<Value> = message
        .fields
        .iter()
        .take(25)
        .map(|(name, value)| json!({ "name": cut(name, 256), "value": cut(value, 1024), "inline": true }))
        .collect();
    if let Some(screenshot) = &message.screenshot {
        fields.push(json!({ "name": "Screenshot", "value": cut(screenshot, 1024), "inline": false }));
    }
    json!({
        "username": "Svc",
        "allowed_mentions": { "parse": [] },
        "embeds": [{
            "title": cut(&message.heading, 256),
            "url": message.link,
            "description": cut(message.words.trim(), 2000),
            "color": 0x4f46e5,
            "fields": fields,
            "footer": { "text": cut(&message.footer, 2048) },
            "timestamp": time::iso(message.at),
        }],
    })
    .to_string()
}

/// The body an endpoint gets for an event; `None` when its format has nothing to say about it.
fn payload_for(
    hooks: &Webhooks,
    hook: &Webhook,
    project: &Project,
    event: &Event,
    subject: &Subject,
) -> Option<String> {
    match hook.format {
        WebhookFormat::Standard => Some(event_payload(hooks, project, event, subject)),
        WebhookFormat::Slack => ChatMessage::of(hooks, project, event, subject).map(|m| slack_message(&m)),
        WebhookFormat::Discord => ChatMessage::of(hooks, project, event, subject).map(|m| discord_message(&m)),
    }
}

// ---------------------------------------------------------------------------------------------
// The feed's consumer: deliveries made from events.

/// Reads the event feed from where the webhook consumer stopped and makes a delivery for every
/// event and endpoint that wants it, in the transaction that moves the consumer on. Only the
/// instance holding the consumer's lease reads. Returns how many deliveries were made.
pub async fn queue_events(svc: &Service, hooks: &Webhooks, now: i64) -> ServiceResult<usize> {
    let store = svc.store();
    // Nothing new: only reads.
    let last_event = store.last_event_id().await?;
    let read_position = store.consumer_position(consumer::WEBHOOKS).await?;
    if let Some(position) = read_position
        && last_event <= position
    {
        return Ok(0);
    }
    if !store.any_enabled_webhook().await? {
        // No endpoint to deliver to (what happens before one is added is never sent to it): the
        // position follows the feed once a minute without reading it, so the feed's clean-up is
        // not held back, and ingest pays nothing for webhooks nobody set up.
        if now - hooks.passed_at.load(std::sync::atomic::Ordering::Relaxed) >= 60_000
            && lease(svc, hooks, now, now + CONSUMER_LEASE_MS).await?.is_some()
        {
            advance(svc, hooks, Vec::new(), last_event, now).await?;
            hooks.passed_at.store(now, std::sync::atomic::Ordering::Relaxed);
        }
        return Ok(0);
    }
    // While this instance holds the consumer with half its lease left, the position it read is
    // its own (no other instance moves it); the lease is renewed, a write, only after that.
    let held_until = hooks.held_until.load(std::sync::atomic::Ordering::Relaxed);
    let mut position = match read_position {
        Some(position) if held_until - now > CONSUMER_LEASE_MS / 2 => position,
        _ => {
            let until = now + CONSUMER_LEASE_MS;
            let Some(position) = lease(svc, hooks, now, until).await? else {
                return Ok(0);
            };
            hooks.held_until.store(until, std::sync::atomic::Ordering::Relaxed);
            position
        }
    };
    let mut made = 0;
    // How far the events read call for no delivery: the consumer moves past them with the next
    // deliveries, or once at the end (not one write per batch of events nobody wants).
    let mut passed = None;
    // Small batches (short transactions), until caught up or for at most a few seconds a call.
    let started = Instant::now();
    while started.elapsed() < ROUND_TIME {
        let events = store.list_events(None, position, EVENTS_PER_ROUND).await?;
        let Some(last) = events.last().map(|event| event.id) else { break };
        let writes = deliveries_for(svc, hooks, &events, now).await?;
        position = last;
        passed = Some(last);
        if !writes.is_empty() {
            let Some(made_now) = advance(svc, hooks, writes, last, now).await? else { return Ok(made) };
            let mut fresh = hooks.fresh.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            made += made_now.len();
            fresh.extend(made_now);
            passed = None;
        }
        // In a burst of reports, one batch a call (the task waits the burst out before the next).
        if events.len() < EVENTS_PER_ROUND as usize || svc.load().in_burst() {
            break;
        }
    }
    if let Some(last) = passed {
        advance(svc, hooks, Vec::new(), last, now).await?;
    }
    if made > 0 {
        WAKE.notify_one();
    }
    Ok(made)
}

/// Takes or renews the feed's consumer for this instance until `until`: its position, or `None`
/// while another instance holds it.
async fn lease(svc: &Service, hooks: &Webhooks, now: i64, until: i64) -> ServiceResult<Option<i64>> {
    let (store, owner) = (svc.shared_store(), svc.instance_id().to_string());
    hooks.on_server(async move { Ok(store.lease_consumer(consumer::WEBHOOKS, &owner, now, until).await?) }).await
}

/// Makes `writes`' deliveries and moves the webhook consumer to `to`, in one transaction: the
/// deliveries made (not there already), or `None` when another instance took the consumer over
/// (it makes these deliveries).
async fn advance(
    svc: &Service,
    hooks: &Webhooks,
    mut writes: Vec<Write>,
    to: i64,
    now: i64,
) -> ServiceResult<Option<Vec<WebhookDelivery>>> {
    writes.push(Write::AdvanceConsumer { name: consumer::WEBHOOKS.into(), owner: svc.instance_id().to_string(), to });
    let change = Change::anywhere(crate::audit::housekeeping(), now, writes);
    let applied = match svc.store().apply(&change).await {
        Ok(applied) => applied,
        Err(StoreError::LeaseLost(_)) => {
            hooks.held_until.store(0, std::sync::atomic::Ordering::Relaxed);
            return Ok(None);
        }
        Err(error) => return Err(error.into()),
    };
    let made = change
        .writes
        .into_iter()
        .zip(applied)
        .filter_map(|(write, outcome)| match (write, outcome) {
            (Write::WebhookDelivery(delivery), Applied::Done) => Some(delivery),
            _ => None,
        })
        .collect();
    Ok(Some(made))
}

/// The deliveries a run of events calls for, in event order.
async fn deliveries_for(svc: &Service, hooks: &Webhooks, events: &[Event], now: i64) -> ServiceResult<Vec<Write>> {
    let store = svc.store();
    let mut project_ids: Vec<String> = events.iter().map(|event| event.project_id.clone()).collect();
    project_ids.sort();
    project_ids.dedup();
    let endpoints = store.enabled_webhooks(&project_ids).await?;
    if endpoints.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_project: BTreeMap<&str, Vec<&Webhook>> = BTreeMap::new();
    for hook in &endpoints {
        by_project.entry(hook.project_id.as_str()).or_default().push(hook);
    }
    // Who wants each event, then what they need read in one statement each (not one per event).
    let wanted: Vec<(&Event, Vec<&Webhook>)> = events
        .iter()
        .map(|event| {
            let by_reporter = event.by.kind == AuthorKind::Reporter;
            let wanting = by_project
                .get(event.project_id.as_str())
                .map(|hooks| {
                    hooks
                        .iter()
                        .copied()
                        // What happened before an endpoint was added, or while it was off, is not
                        // sent to it (the consumer may read those events only after it was on).
                        .filter(|hook| hook.enabled_at <= event.at && hook.wants(event.kind.type_name(), by_reporter))
                        .collect()
                })
                .unwrap_or_default();
            (event, wanting)
        })
        .filter(|(_, wanting): &(&Event, Vec<&Webhook>)| !wanting.is_empty())
        .collect();
    let mut report_ids: Vec<String> = wanted
        .iter()
        .filter(|(event, _)| !matches!(event.kind, EventKind::ReportDeleted))
        .filter_map(|(event, _)| event.report_id.clone())
        .collect();
    report_ids.sort();
    report_ids.dedup();
    let reports: HashMap<String, Report> =
        store.get_reports(&report_ids).await?.into_iter().map(|report| (report.id.clone(), report)).collect();
    let mut projects: HashMap<String, Option<Project>> = HashMap::new();
    let mut writes = Vec::new();
    for (event, wanting) in wanted {
        if !projects.contains_key(&event.project_id) {
            projects.insert(event.project_id.clone(), store.get_project(&event.project_id).await?);
        }
        let Some(project) = projects[&event.project_id].clone() else { continue };
        let report = match &event.report_id {
            Some(id) if !matches!(event.kind, EventKind::ReportDeleted) => reports.get(id),
            _ => None,
        };
        let comment = match (&event.kind, &event.report_id) {
            (EventKind::CommentPublished { comment_id, .. }, Some(report_id)) => {
                store.list_comments(report_id).await?.into_iter().find(|comment| &comment.id == comment_id)
            }
            _ => None,
        };
        let subject = Subject { report, comment };
        // One body per format: endpoints of one format get the same bytes for an event, stored
        // once, with the first delivery that sends it (the others name that one).
        let mut bodies: Vec<(WebhookFormat, Option<(String, String)>)> = Vec::new();
        for hook in wanting {
            let id = ids::new_id_at(now);
            let (payload, shares_payload_of) = match bodies.iter().find(|(format, _)| *format == hook.format) {
                Some((_, Some((payload, holder)))) => (payload.clone(), Some(holder.clone())),
                Some((_, None)) => continue,
                None => {
                    let payload = payload_for(hooks, hook, &project, event, &subject);
                    bodies.push((hook.format, payload.clone().map(|payload| (payload, id.clone()))));
                    match payload {
                        Some(payload) => (payload, None),
                        None => continue,
                    }
                }
            };
            // The message id is stable for the event: a receiver that saw it from another copy of
            // this database (a restore) still dedupes. Held by this instance from the start: its
            // senders take it from memory.
            let mut delivery = WebhookDelivery::new_pending(
                id,
                hook,
                Some((event.id, event.kind.type_name())),
                format!("msg_{}_{}", event.id, hook.id),
                payload,
                now,
                now + hooks.lease_ms,
            );
            delivery.shares_payload_of = shares_payload_of;
            writes.push(Write::WebhookDelivery(delivery));
        }
    }
    Ok(writes)
}

// ---------------------------------------------------------------------------------------------
// Sending.

/// What one sending round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub delivered: usize,
    /// Failed this time; retried later.
    pub retrying: usize,
    /// Failed for good (the 24 hours of retries are over).
    pub given_up: usize,
    /// Not tried this round: their endpoint failed just before (they wait for the next round).
    pub held_back: usize,
}

/// The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret
/// that signs now, separated by spaces.
pub fn signature_header(hook: &Webhook, message_id: &str, timestamp: i64, body: &str, now: i64) -> String {
    hook.signing_secrets(now)
        .into_iter()
        .map(|secret| {
            let mut mac = Hmac::<Sha256>::new_from_slice(&webhook::secret_key(secret)).expect("HMAC takes any key");
            mac.update(format!("{message_id}.{timestamp}.").as_bytes());
            mac.update(body.as_bytes());
            format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What an endpoint answered.
struct Answer {
    status: Option<i64>,
    error: Option<String>,
}

impl Answer {
    fn ok(&self) -> bool {
        self.status.is_some_and(|status| (200..300).contains(&status))
    }
}

/// One attempt: the body, signed for now (standard format), to the endpoint's URL.
async fn send(hooks: &Webhooks, hook: &Webhook, delivery: &WebhookDelivery, now: i64) -> Answer {
    let mut request = hooks
        .client
        .post(&hook.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::USER_AGENT, concat!("Svc-Webhooks/", env!("CARGO_PKG_VERSION")))
        .body(delivery.payload.clone());
    if hook.format == WebhookFormat::Standard {
        // The wall clock, whatever clock the round runs on: receivers refuse a timestamp more
        // than a few minutes off theirs.
        let timestamp = time::now_ms() / 1000;
        request = request
            .header("webhook-id", &delivery.message_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                signature_header(hook, &delivery.message_id, timestamp, &delivery.payload, now),
            );
    }
    match request.send().await {
        Ok(mut response) => {
            let status = i64::from(response.status().as_u16());
            // At most 4 KB of the answer is read (it is only kept for the log).
            let mut kept = Vec::new();
            while kept.len() < MAX_ANSWER_BYTES {
                match response.chunk().await {
                    Ok(Some(chunk)) => kept.extend_from_slice(&chunk[..chunk.len().min(MAX_ANSWER_BYTES - kept.len())]),
                    _ => break,
                }
            }
            let error = (!(200..300).contains(&status)).then(|| {
                let text = String::from_utf8_lossy(&kept);
                let text = cut(text.trim(), 300);
                if text.is_empty() { format!("answered {status}") } else { format!("answered {status}: {text}") }
            });
            Answer { status: Some(status), error }
        }
        Err(error) => {
            let message = if let Some(refusal) = refusal_of(&error) {
                refusal.to_string()
            } else if error.is_timeout() {
                "no answer within the timeout".to_string()
            } else if error.is_connect() {
                "could not connect".to_string()
            } else {
                format!("request failed: {error}")
            };
            Answer { status: None, error: Some(message) }
        }
    }
}

/// One attempt at a claimed delivery: what to record, and whether it was delivered.
async fn attempt(
    hooks: &Webhooks,
    hook: &Webhook,
    delivery: &WebhookDelivery,
    started_at: i64,
) -> (WebhookAttempt, AttemptOutcome) {
    let started = Instant::now();
    let answer = send(hooks, hook, delivery, started_at).await;
    let now = started_at + started.elapsed().as_millis() as i64;
    let attempts = delivery.attempts + 1;
    let outcome = if answer.ok() {
        AttemptOutcome::Delivered
    } else {
        match webhook::next_retry(delivery.created_at, attempts, now, rand_fraction()) {
            Some(at) => AttemptOutcome::Retry { at },
            None => AttemptOutcome::GiveUp,
        }
    };
    if let Some(error) = &answer.error {
        tracing::warn!(
            webhook = %hook.id,
            delivery = %delivery.id,
            url = %redacted_url(&hook.url),
            attempts,
            error = %error,
            "webhook delivery failed"
        );
    }
    let attempt = WebhookAttempt {
        delivery_id: delivery.id.clone(),
        webhook_id: hook.id.clone(),
        at: now,
        status: answer.status,
        error: answer.error,
        duration_ms: started.elapsed().as_millis() as i64,
    };
    (attempt, outcome)
}

/// Records a round of attempts at one endpoint (and the deliveries held back behind a failure);
/// mails the owners when this disabled the endpoint.
async fn record(
    svc: &Service,
    hooks: &Webhooks,
    hook: &Webhook,
    attempts: Vec<(WebhookAttempt, AttemptOutcome)>,
    held: Vec<String>,
) -> ServiceResult<()> {
    // The attempts go to the deliveries' file; an endpoint's health, when it changes, to the
    // server's database.
    let (store, webhook_id) = (svc.shared_store(), hook.id.clone());
    let disabled =
        hooks.on_server(async move { Ok(store.record_attempts(&webhook_id, &attempts, &held).await?) }).await?;
    if disabled {
        mail_owners_disabled(svc, hooks, hook).await;
    }
    Ok(())
}

/// Attempts one claimed delivery at once and records it ("Send test event", "Resend").
async fn attempt_and_record(
    svc: &Service,
    hooks: &Webhooks,
    hook: &Webhook,
    delivery: WebhookDelivery,
    started_at: i64,
) -> ServiceResult<()> {
    let done = attempt(hooks, hook, &delivery, started_at).await;
    record(svc, hooks, hook, vec![done], Vec::new()).await
}

fn rand_fraction() -> f64 {
    use rand::RngExt;
    rand::rng().random_range(0.0..1.0)
}

/// Tells the project's owners that Svc disabled an endpoint.
async fn mail_owners_disabled(svc: &Service, hooks: &Webhooks, hook: &Webhook) {
    let store = svc.store();
    let Ok(Some(project)) = store.get_project(&hook.project_id).await else { return };
    let Ok(members) = store.list_members(&project.org_id).await else { return };
    let settings = format!("{}/projects/{}/webhooks", hooks.public_url, project.id);
    for (user, membership) in members {
        if membership.role != svc_core::account::Role::Owner {
            continue;
        }
        let Ok(to) = svc_core::account::Email::parse(&user.email) else { continue };
        let text = format!(
            "Every delivery to a webhook of {project} failed for 24 hours, so Svc disabled it.\n\n\
             Endpoint: {url}\n\nNew events are not sent to it until it is enabled again; deliveries still \
             waiting go out then. See what the endpoint answered, and enable it, in the project's \
             settings:\n{settings}\n",
            project = project.name,
            url = redacted_url(&hook.url),
        );
        let mut mail = Mail::new(
            &project.org_id,
            to,
            MailKind::WebhookDisabled,
            format!("A webhook of {} was disabled", project.name),
            text,
        );
        mail.project_id = Some(project.id.clone());
        mail.dedupe_key =
            Some(format!("webhook-disabled:{}:{}:{}", hook.id, user.id, hook.failing_since.unwrap_or_default()));
        let store = svc.shared_store();
        if let Err(error) = hooks.on_server(async move { mail::queue_in(&*store, mail).await }).await {
            tracing::warn!(%error, "mailing an owner about a disabled webhook failed");
        }
    }
}

/// Sends every delivery due at `now`: endpoints side by side, each endpoint's deliveries one
/// after another, stopping at its first failure (the rest are held back to the next round). The
/// delivery task calls this; tests call it directly.
pub async fn deliver_due(svc: &Service, hooks: &Webhooks, now: i64) -> ServiceResult<Round> {
    let mut round = Round::default();
    // Small batches (short transactions on the database every request writes to), as many as
    // are due, for at most a few seconds a call.
    let started = Instant::now();
    loop {
        let (done, claimed) = deliver_batch(svc, hooks, now).await?;
        round.delivered += done.delivered;
        round.retrying += done.retrying;
        round.given_up += done.given_up;
        round.held_back += done.held_back;
        // In a burst of reports, one batch a call (the task waits the burst out before the next).
        if claimed < DELIVERIES_PER_ROUND as usize || started.elapsed() > ROUND_TIME || svc.load().in_burst() {
            return Ok(round);
        }
    }
}

/// One batch of [`deliver_due`]: what it did and how many deliveries it claimed.
async fn deliver_batch(svc: &Service, hooks: &Webhooks, now: i64) -> ServiceResult<(Round, usize)> {
    let store = svc.store();
    let mut round = Round::default();
    // What this instance's consumer just made first (held already), then what is due.
    let mut claimed = hooks.take_fresh(DELIVERIES_PER_ROUND as usize, now);
    // A claim is a write on the database ingest writes to: only when something is due (a read).
    if claimed.len() < DELIVERIES_PER_ROUND as usize && store.deliveries_due(now).await? {
        let room = (DELIVERIES_PER_ROUND as usize - claimed.len()) as u32;
        claimed.extend(store.claim_due_deliveries(now, now + hooks.lease_ms, room, None).await?);
    }
    let count = claimed.len();
    let mut by_endpoint: BTreeMap<String, Vec<WebhookDelivery>> = BTreeMap::new();
    for delivery in claimed {
        by_endpoint.entry(delivery.webhook_id.clone()).or_default().push(delivery);
    }
    let mut endpoints = Vec::new();
    for (webhook_id, deliveries) in by_endpoint {
        let project_id = deliveries[0].project_id.clone();
        let Some(hook) = store.get_webhook(&project_id, &webhook_id).await? else { continue };
        // Just made, for an endpoint that is paused or was turned off meanwhile: they wait.
        let wait_until = match hook.paused_until {
            _ if !hook.enabled => Some(now),
            Some(until) if until > now => Some(until),
            _ => None,
        };
        if let Some(until) = wait_until {
            let ids: Vec<String> = deliveries.iter().map(|delivery| delivery.id.clone()).collect();
            store.reschedule_deliveries(&ids, until).await?;
            round.held_back += ids.len();
            continue;
        }
        endpoints.push((hook, deliveries));
    }
    let results: Vec<ServiceResult<Round>> = futures_util::stream::iter(endpoints)
        .map(|(hook, deliveries)| async move {
            let mut done = Round::default();
            let started = Instant::now();
            // Until when the batch is held: the earliest end of its deliveries' holds.
            let mut leased_for =
                deliveries.iter().map(|delivery| delivery.next_attempt_at - now).min().unwrap_or(hooks.lease_ms);
            let mut attempts: Vec<(WebhookAttempt, AttemptOutcome)> = Vec::new();
            let mut next = 0;
            while next < deliveries.len() {
                let elapsed = started.elapsed().as_millis() as i64;
                // A long round records what it did so far and renews its hold on the rest, so no
                // other sender takes those meanwhile (the lease covers two attempts and a margin).
                if leased_for - elapsed < hooks.lease_ms / 2 {
                    record(svc, hooks, &hook, std::mem::take(&mut attempts), Vec::new()).await?;
                    let rest: Vec<String> = deliveries[next..].iter().map(|d| d.id.clone()).collect();
                    svc.store().reschedule_deliveries(&rest, now + elapsed + hooks.lease_ms).await?;
                    leased_for = elapsed + hooks.lease_ms;
                }
                // A few at a time; the first chunk with a failure is the last.
                let chunk = &deliveries[next..(next + AT_ONCE_PER_ENDPOINT).min(deliveries.len())];
                next += chunk.len();
                let tried = futures_util::future::join_all(
                    chunk.iter().map(|delivery| attempt(hooks, &hook, delivery, now + elapsed)),
                )
                .await;
                let mut failed = false;
                for (attempt, outcome) in tried {
                    match outcome {
                        AttemptOutcome::Delivered => {
                            done.delivered += 1;
                            // Successes first: the store reads the endpoint's health from the last.
                            attempts.insert(0, (attempt, outcome));
                            continue;
                        }
                        AttemptOutcome::Retry { .. } => done.retrying += 1,
                        AttemptOutcome::GiveUp => done.given_up += 1,
                    }
                    failed = true;
                    attempts.push((attempt, outcome));
                }
                if failed {
                    break;
                }
            }
            // Held back behind a failure: they wait with the paused endpoint.
            let held: Vec<String> = deliveries[next..].iter().map(|delivery| delivery.id.clone()).collect();
            done.held_back = held.len();
            record(svc, hooks, &hook, attempts, held).await?;
            Ok(done)
        })
        .buffer_unordered(ENDPOINTS_AT_ONCE)
        .collect()
        .await;
    for result in results {
        let done = result?;
        round.delivered += done.delivered;
        round.retrying += done.retrying;
        round.given_up += done.given_up;
        round.held_back += done.held_back;
    }
    Ok((round, count))
}

/// Deletes finished deliveries older than 30 days; how many went.
pub async fn delete_old(svc: &Service, now: i64) -> ServiceResult<u64> {
    Ok(svc.store().delete_old_deliveries(now - KEEP_MS).await?)
}

/// One round of the webhook task: make the deliveries new events call for, then send what is due.
pub async fn run_once(svc: &Service, hooks: &Webhooks, now: i64) -> Round {
    if let Err(error) = queue_events(svc, hooks, now).await {
        tracing::warn!(%error, "making webhook deliveries for new events failed");
    }
    match deliver_due(svc, hooks, now).await {
        Ok(round) => round,
        Err(error) => {
            tracing::warn!(%error, "webhook delivery round failed");
            Round::default()
        }
    }
}

/// Wakes the webhook task early (new deliveries were made, an endpoint was enabled).
static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();
/// A round every second, at once after a change anywhere; at most this many rounds in flight.
const TICK: Duration = Duration::from_secs(1);
/// At most one pass of the feed this often when changes wake the consumer.
const CHANGE_ROUNDS: Duration = Duration::from_millis(100);
const ROUNDS_IN_FLIGHT: usize = 4;

/// Starts the webhook tasks (`svc serve`): the feed's consumer, which makes deliveries as events
/// come (soon after a change anywhere), and the senders, whose rounds run side by side (a round
/// waiting on a slow endpoint does not stop the next). Old deliveries are deleted once an hour.
///
/// While a burst of reports is being filed, both wait it out ([`crate::load`]), [`LONGEST_WAIT`] at
/// most, then take one batch each and wait again: a burst delays deliveries, and the reports
/// are filed at the rate they would be without endpoints.
///
/// On SQLite (one instance, one machine) they run on a thread of their own in the idle scheduling
/// class ([`on_own_thread`]), with the deliveries' SQLite writer: on the server's runtime
/// their work (payloads, signatures, requests) waited in line with the requests', and a report
/// filed during it waited too; at a lower nice value it still held a core for a time slice after a
/// request's thread woke (bench/README.md, "Delivery in the idle class"). On
/// PostgreSQL they stay on the server's runtime: its connections are driven by the runtime that
/// opened them, and several instances spread the work instead.
pub fn spawn(svc: Arc<Service>, hooks: Webhooks) {
    if svc.store().backend() != "sqlite" {
        spawn_here(svc, hooks);
        return;
    }
    let started = on_own_thread(hooks, move |hooks| async move {
        spawn_here(svc, hooks);
        std::future::pending::<()>().await;
    });
    if let Err(error) = started {
        tracing::error!(%error, "webhook delivery could not start its thread");
    }
}

/// Runs `work` on a new thread in the idle scheduling class (see [`svc_store::priority`]), on a
/// runtime of its own, with the deliveries' SQLite writer moved to that class too. The hooks
/// `work` is given send their writes to the server's database back to the runtime this is called
/// on ([`Webhooks::on_server`]). Resolves with `work`'s result; an error when the thread could not
/// start.
pub fn on_own_thread<F, T>(
    hooks: Webhooks,
    work: impl FnOnce(Webhooks) -> F + Send + 'static,
) -> std::io::Result<tokio::sync::oneshot::Receiver<T>>
where
    F: Future<Output = T> + 'static,
    T: Send + 'static,
{
    let hooks = Webhooks { server: Some(tokio::runtime::Handle::current()), ..hooks };
    let (done, answer) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("svc-webhooks".into()).spawn(move || {
        priority::give_way(None);
        if let Some(writer) = priority::thread_named(svc_store::sqlite::deliveries::WRITER_THREAD) {
            priority::give_way(Some(writer));
        }
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(error) => return tracing::error!(%error, "webhook delivery could not start its runtime"),
        };
        let _ = done.send(runtime.block_on(work(hooks)));
    })?;
    Ok(answer)
}

fn spawn_here(svc: Arc<Service>, hooks: Webhooks) {
    let (consumer_svc, consumer_hooks) = (svc.clone(), hooks.clone());
    tokio::spawn(async move {
        let (svc, hooks) = (consumer_svc, consumer_hooks);
        let mut changes = svc.store().changes().subscribe();
        loop {
            svc.load().wait_out_burst(LONGEST_WAIT).await;
            if let Err(error) = queue_events(&svc, &hooks, time::now_ms()).await {
                tracing::warn!(%error, "making webhook deliveries for new events failed");
            }
            crate::events::next_pass(&mut changes, CHANGE_ROUNDS, TICK).await;
        }
    });
    tokio::spawn(async move {
        let rounds = Arc::new(tokio::sync::Semaphore::new(ROUNDS_IN_FLIGHT));
        let mut cleaned_at = 0;
        loop {
            svc.load().wait_out_burst(LONGEST_WAIT).await;
            let now = time::now_ms();
            if let Ok(permit) = rounds.clone().acquire_owned().await {
                let (svc, hooks) = (svc.clone(), hooks.clone());
                tokio::spawn(async move {
                    if let Err(error) = deliver_due(&svc, &hooks, time::now_ms()).await {
                        tracing::warn!(%error, "webhook delivery round failed");
                    }
                    drop(permit);
                });
            }
            if now - cleaned_at >= 3600 * 1000 {
                cleaned_at = now;
                if let Err(error) = delete_old(&svc, now).await {
                    tracing::warn!(%error, "webhook delivery log clean-up failed");
                }
            }
            tokio::select! {
                _ = WAKE.notified() => {}
                _ = tokio::time::sleep(TICK) => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Delivery moves the deliveries' SQLite writer into the idle class by its thread's name: a
    /// store that is open has that thread, and the move works without privileges.
    #[tokio::test]
    async fn the_deliveries_writer_is_found_by_name_and_gives_way() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", folder.path().join("svc.db").display());
        let _store = svc_store::sqlite::SqliteStore::connect(&url).await.unwrap();
        let writer = priority::thread_named(svc_store::sqlite::deliveries::WRITER_THREAD).expect("the writer's thread");
        assert!(priority::give_way(Some(writer)));
        assert!(priority::gives_way(Some(writer)));
    }
}
