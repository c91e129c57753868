//! Mail: every message is queued in the outbox (the request that causes it never waits for SMTP)
//! and delivered by the mail task with retries; without an SMTP server it stays in the outbox,
//! where the owners of its organization read it in the dashboard. The team's notifications (new
//! reports at once or as a daily digest, reporters' replies) are built here, each with a signed
//! one-click unsubscribe link. See `docs/mail.md`.
//!
//! For other parts of the service: build a [`Mail`] and call [`queue`]; the mail task does the
//! rest.

use crate::Service;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::collections::BTreeMap;
use std::time::Duration;
use svc_core::account::{Email, Role, User};
use svc_core::block::Block;
use svc_core::event::{Event, EventKind, consumer};
use svc_core::mail::{
    MailKind, MailPreference, NewReports, OutboxMail, Subscriber, check_body, clean_subject, digest_boundary, id_floor,
};
use svc_core::model::{AuthorKind, Comment, Organization, Project, Report, ReportFilter};
use svc_core::status::Status;
use svc_core::{ids, time};
use svc_store::{Applied, Change, StoreError, Write};
use tokio::sync::Notify;

use super::accounts::SignedIn;
use super::{ServiceError, ServiceResult};
use crate::mailer::Mailer;
use crate::principal::Refusal;

/// A failing message is tried this many times in all, then given up.
pub const MAX_ATTEMPTS: i64 = 10;
/// A sender holds the messages it took this long (an SMTP conversation times out well before).
const LEASE_MS: i64 = 2 * 60 * 1000;
/// Messages taken per round.
const BATCH: u32 = 50;
/// Sent and given-up messages are kept this long (the outbox is also a delivery log).
pub const KEEP_MS: i64 = 30 * 24 * 3600 * 1000;
/// A report filed longer ago than this when its event is read (mail was stopped for a while) is
/// not mailed at once; the digest still lists it.
const CATCH_UP_MS: i64 = 3600 * 1000;
/// More new reports than this for one person and project in one round: one mail that lists them.
const INSTANT_PER_ROUND: usize = 10;
/// Reports listed in a digest (the newest; the mail says how many there were).
const DIGEST_LISTED: u32 = 20;
/// A digest covers at most this far back (the server was down for days).
const DIGEST_CATCH_UP_MS: i64 = 7 * 24 * 3600 * 1000;
/// How often the mail task looks for work when nothing wakes it.
const TICK: Duration = Duration::from_secs(5);
/// At most one round this often when changes wake the mail task.
const CHANGE_ROUNDS: Duration = Duration::from_secs(1);
/// Events the mail consumer reads per transaction.
const EVENTS_PER_ROUND: u32 = 500;
/// How long an instance holds the mail consumer after taking it (renewed each round; another
/// instance takes over this long after one stops).
const CONSUMER_LEASE_MS: i64 = 60_000;
/// How long reading the feed waits out a burst of reports, at most ([`crate::load`]): mail about
/// new reports can wait a few seconds; the reports being filed cannot.
const LONGEST_WAIT: Duration = crate::load::LONGEST_WAIT;
const _: () = assert!((LONGEST_WAIT.as_millis() as i64) < CONSUMER_LEASE_MS / 2);
/// Most characters of the reporter's words in a mail.
pub(crate) const EXCERPT_CHARS: usize = 1_500;

const UNSUBSCRIBE_KEY: &str = "unsubscribe_key";

/// Wakes this process's mail task when a message is queued (other instances find it on their next
/// tick).
static WAKE: Notify = Notify::const_new();

/// A message to send. Build it, then [`queue`] it.
#[derive(Debug, Clone)]
pub struct Mail {
    /// Owners of this organization see the message in the dashboard's outbox.
    pub org_id: String,
    pub project_id: Option<String>,
    pub to: Email,
    /// One line; line breaks become spaces, cut at 200 characters.
    pub subject: String,
    /// Plain text.
    pub text: String,
    pub kind: MailKind,
    /// Not delivered after this time (ms): a sign-in code that has expired.
    pub expires_at: Option<i64>,
    /// A second message with the same key is not queued (one mail per report and person).
    pub dedupe_key: Option<String>,
    /// For notifications: a link that turns them off. The body ends with it (added when the text
    /// does not hold it yet) and it is sent as `List-Unsubscribe`.
    pub unsubscribe_url: Option<String>,
}

impl Mail {
    /// A message with no project, expiry, dedupe key or unsubscribe link (set those fields after).
    pub fn new(org_id: &str, to: Email, kind: MailKind, subject: impl Into<String>, text: impl Into<String>) -> Self {
        Mail {
            org_id: org_id.into(),
            project_id: None,
            to,
            subject: subject.into(),
            text: text.into(),
            kind,
            expires_at: None,
            dedupe_key: None,
            unsubscribe_url: None,
        }
    }
}

/// Queues a message; returns its outbox id, or `None` when a message with its dedupe key is
/// queued already. Never waits for SMTP: the mail task delivers it (within seconds when an SMTP
/// server is set), else it waits in the outbox.
pub async fn queue(svc: &Service, mail: Mail) -> ServiceResult<Option<String>> {
    queue_in(svc.store(), mail).await
}

/// [`queue`], given the store.
pub(crate) async fn queue_in(store: &dyn svc_store::Store, mail: Mail) -> ServiceResult<Option<String>> {
    let outbox = outbox_row(mail, time::now_ms())?;
    if store.queue_mail(&outbox).await? {
        WAKE.notify_one();
        Ok(Some(outbox.id))
    } else {
        Ok(None)
    }
}

/// The outbox row of a message queued at `now`: the subject on one line, the unsubscribe link at
/// the end of the body, both checked.
fn outbox_row(mail: Mail, now: i64) -> ServiceResult<OutboxMail> {
    let subject = clean_subject(&mail.subject);
    if subject.is_empty() {
        return Err(ServiceError::Invalid("a mail needs a subject".into()));
    }
    let mut body = mail.text.replace("\r\n", "\n");
    if let Some(url) = &mail.unsubscribe_url
        && !body.contains(url.as_str())
    {
        body = format!("{}\n\n-- \nUnsubscribe: {url}\n", body.trim_end());
    }
    check_body(&body)?;
    Ok(OutboxMail {
        id: ids::new_id_at(now),
        org_id: mail.org_id,
        project_id: mail.project_id,
        recipient: mail.to.into_string(),
        subject,
        body,
        kind: mail.kind,
        dedupe_key: mail.dedupe_key,
        unsubscribe_url: mail.unsubscribe_url,
        created_at: now,
        expires_at: mail.expires_at,
        next_attempt_at: now,
        attempts: 0,
        last_error: None,
        sent_at: None,
        given_up_at: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Delivery.

/// What one delivery round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    pub sent: usize,
    /// Failed this time; tried again later.
    pub retrying: usize,
    /// Failed for good (too many attempts, a refused address) or expired.
    pub given_up: usize,
}

/// The wait before attempt `attempts + 1`: one minute, doubling, at most an hour.
pub fn backoff_ms(attempts: i64) -> i64 {
    let doublings = (attempts - 1).clamp(0, 6) as u32;
    (60_000i64 << doublings).min(3600 * 1000)
}

/// Delivers every message due at `now` (queued, and its retry time reached). Without an SMTP
/// server it does nothing: messages wait in the outbox. A failure is recorded on the message
/// (`last_error`) and retried after [`backoff_ms`], up to [`MAX_ATTEMPTS`]; a message past its
/// `expires_at` is dropped. The mail task calls this; tests call it directly.
pub async fn deliver_pending(svc: &Service, mailer: &Mailer, now: i64) -> ServiceResult<Delivery> {
    let store = svc.store();
    let mut done = Delivery::default();
    if !mailer.delivers() || !store.mail_due(now).await? {
        return Ok(done);
    }
    // At most 20 rounds a call, so one call cannot run for ever while mail keeps coming.
    for _ in 0..20 {
        let batch = store.claim_due_mail(now, now + LEASE_MS, BATCH).await?;
        let full = batch.len() == BATCH as usize;
        for mail in batch {
            if mail.expires_at.is_some_and(|at| at <= now) {
                store.mail_failed(&mail.id, "expired before it could be delivered", None, now).await?;
                done.given_up += 1;
                continue;
            }
            match mailer.send(&mail).await {
                Ok(()) => {
                    store.mail_sent(&mail.id, now).await?;
                    done.sent += 1;
                }
                Err(error) => {
                    let retry_at =
                        (!error.permanent && mail.attempts < MAX_ATTEMPTS).then(|| now + backoff_ms(mail.attempts));
                    // The recipient stays out of the logs; the outbox shows it to owners.
                    tracing::warn!(
                        mail = %mail.id,
                        attempts = mail.attempts,
                        retry = retry_at.is_some(),
                        error = %error.message,
                        "mail delivery failed"
                    );
                    store.mail_failed(&mail.id, &error.message, retry_at, now).await?;
                    if retry_at.is_some() {
                        done.retrying += 1;
                    } else {
                        done.given_up += 1;
                    }
                }
            }
        }
        if !full {
            break;
        }
    }
    Ok(done)
}

/// One round of the mail task: queue what new events call for and the digests that are due, then
/// deliver. Each part runs whatever the others do; failures are logged. A round with nothing to do
/// only reads.
pub async fn run_once(svc: &Service, mailer: &Mailer, public_url: &str, now: i64) {
    read_feed(svc, public_url, now).await;
    queue_digests_and_deliver(svc, mailer, public_url, now).await;
}

/// Reads the feed for mail ([`mail_events`]), logging a failure; whether there is more to read at
/// once (the call stopped at its limit).
async fn read_feed(svc: &Service, public_url: &str, now: i64) -> bool {
    match read_feed_once(svc, public_url, now).await {
        Ok(read) => read.more,
        Err(error) => {
            tracing::warn!(%error, "queuing mail for new events failed");
            false
        }
    }
}

async fn queue_digests_and_deliver(svc: &Service, mailer: &Mailer, public_url: &str, now: i64) {
    if let Err(error) = queue_digests(svc, public_url, now).await {
        tracing::warn!(%error, "queuing digests failed");
    }
    match deliver_pending(svc, mailer, now).await {
        Ok(Delivery { sent: 0, retrying: 0, given_up: 0 }) => {}
        Ok(done) => {
            tracing::info!(sent = done.sent, retrying = done.retrying, given_up = done.given_up, "mail delivered")
        }
        Err(error) => tracing::warn!(%error, "mail delivery round failed"),
    }
}

/// Deletes sent and given-up messages older than [`KEEP_MS`]; how many went.
pub async fn delete_old(svc: &Service, now: i64) -> ServiceResult<u64> {
    let store = svc.store();
    Ok(store.delete_old_mail(now - KEEP_MS).await?)
}

/// Starts the mail tasks (`svc serve`), the two halves of [`run_once`]. The feed's reader reads
/// soon after a change anywhere (it may call for mail) and every few seconds; while a burst of
/// reports is being filed it waits the burst out, [`LONGEST_WAIT`] at most ([`crate::load`]), then
/// reads one batch (see [`mail_events`]); behind the feed after a burst, it reads again at once.
/// The sender queues the digests that are due and delivers every few seconds, and at once when
/// this process queues a message, bursts or not (a reporter's sign-in code does not wait); it
/// deletes old mail once an hour.
pub fn spawn(svc: std::sync::Arc<Service>, mailer: Mailer, public_url: String) {
    let (reader_svc, reader_url) = (svc.clone(), public_url.clone());
    tokio::spawn(async move {
        let (svc, public_url) = (reader_svc, reader_url);
        let mut changes = svc.store().changes().subscribe();
        loop {
            svc.load().wait_out_burst(LONGEST_WAIT).await;
            if read_feed(&svc, &public_url, time::now_ms()).await {
                continue;
            }
            crate::events::next_pass(&mut changes, CHANGE_ROUNDS, TICK).await;
        }
    });
    tokio::spawn(async move {
        let mut cleaned_at = 0;
        loop {
            let now = time::now_ms();
            queue_digests_and_deliver(&svc, &mailer, &public_url, now).await;
            if now - cleaned_at >= 3600 * 1000 {
                cleaned_at = now;
                if let Err(error) = delete_old(&svc, now).await {
                    tracing::warn!(%error, "outbox clean-up failed");
                }
            }
            tokio::select! {
                _ = WAKE.notified() => {}
                _ = tokio::time::sleep(TICK) => {}
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// The team's notifications.

/// What an unsubscribe link turns off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// New reports (at once or as a digest).
    NewReports,
    /// Reporters' replies.
    Replies,
}

impl Topic {
    fn code(self) -> &'static str {
        match self {
            Topic::NewReports => "reports",
            Topic::Replies => "replies",
        }
    }

    fn parse(code: &str) -> Option<Self> {
        match code {
            "reports" => Some(Topic::NewReports),
            "replies" => Some(Topic::Replies),
            _ => None,
        }
    }

    /// Words for the confirmation page ("new reports").
    pub fn words(self) -> &'static str {
        match self {
            Topic::NewReports => "new reports",
            Topic::Replies => "replies from reporters",
        }
    }
}

/// The key unsubscribe links are signed with: made once, kept in the database (every instance
/// signs with the same key).
async fn signing_key(svc: &Service) -> ServiceResult<Vec<u8>> {
    let store = svc.store();
    let key = match store.mail_state(UNSUBSCRIBE_KEY).await? {
        Some(key) => key,
        None => store.init_mail_state(UNSUBSCRIBE_KEY, &ids::new_random_secret(43)).await?,
    };
    Ok(key.into_bytes())
}

fn signature(key: &[u8], user_id: &str, project_id: &str, topic: Topic) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(format!("svc-unsubscribe\n{user_id}\n{project_id}\n{}", topic.code()).as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// A token that turns `topic` off for this person and project: `<user>.<project>.<topic>.<mac>`.
fn unsubscribe_token(key: &[u8], user_id: &str, project_id: &str, topic: Topic) -> String {
    let mac = URL_SAFE_NO_PAD.encode(signature(key, user_id, project_id, topic));
    format!("{user_id}.{project_id}.{}.{mac}", topic.code())
}

fn unsubscribe_url(public_url: &str, key: &[u8], user_id: &str, project_id: &str, topic: Topic) -> String {
    format!("{}/unsubscribe?token={}", base(public_url), unsubscribe_token(key, user_id, project_id, topic))
}

/// The public URL without its trailing slash.
pub(crate) fn base(public_url: &str) -> &str {
    public_url.trim_end_matches('/')
}

/// What an unsubscribe link is for.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsubscription {
    pub user: User,
    pub project: Project,
    pub topic: Topic,
    /// The mails are already off.
    pub already_off: bool,
}

/// Reads an unsubscribe token: `None` when it is forged, malformed, or names a person or project
/// that no longer exists (or a project of an organization the person left).
pub async fn check_unsubscribe(svc: &Service, token: &str) -> ServiceResult<Option<Unsubscription>> {
    let store = svc.store();
    let mut parts = token.trim().split('.');
    let (Some(user_id), Some(project_id), Some(code), Some(mac), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Ok(None);
    };
    let Some(topic) = Topic::parse(code) else { return Ok(None) };
    if !ids::is_object_id(user_id) || !ids::is_object_id(project_id) {
        return Ok(None);
    }
    let Ok(mac) = URL_SAFE_NO_PAD.decode(mac) else { return Ok(None) };
    let key = signing_key(svc).await?;
    if !svc_core::secret::constant_time_eq(&mac, &signature(&key, user_id, project_id, topic)) {
        return Ok(None);
    }
    let (Some(user), Some(project)) = (store.get_user(user_id).await?, store.get_project(project_id).await?) else {
        return Ok(None);
    };
    if !store.list_memberships(user_id).await?.iter().any(|m| m.org_id == project.org_id) {
        return Ok(None);
    }
    let preference = preference_of(svc, user_id, project_id).await?;
    let already_off = match topic {
        Topic::NewReports => preference.new_reports == NewReports::Off,
        Topic::Replies => !preference.replies,
    };
    Ok(Some(Unsubscription { user, project, topic, already_off }))
}

/// Turns off what a valid unsubscribe token names (no sign-in needed: the token is the proof);
/// `None` when the token is not valid (see [`check_unsubscribe`]).
pub async fn unsubscribe(svc: &Service, token: &str) -> ServiceResult<Option<Unsubscription>> {
    let store = svc.store();
    let Some(found) = check_unsubscribe(svc, token).await? else { return Ok(None) };
    let mut preference = preference_of(svc, &found.user.id, &found.project.id).await?;
    match found.topic {
        Topic::NewReports => preference.new_reports = NewReports::Off,
        Topic::Replies => preference.replies = false,
    }
    preference.reports_since = time::now_ms();
    store.put_mail_preference(&preference).await?;
    Ok(Some(found))
}

async fn preference_of(svc: &Service, user_id: &str, project_id: &str) -> ServiceResult<MailPreference> {
    let store = svc.store();
    Ok(store
        .mail_preferences(user_id)
        .await?
        .into_iter()
        .find(|p| p.project_id == project_id)
        .unwrap_or_else(|| MailPreference::default_for(user_id, project_id)))
}

/// The reports of a project made in `[from, until)` (ms): the newest `limit`, oldest first.
async fn reports_between(
    svc: &Service,
    project_id: &str,
    from: i64,
    until: i64,
    limit: u32,
) -> ServiceResult<Vec<Report>> {
    let store = svc.store();
    let filter = ReportFilter {
        project_ids: vec![project_id.to_string()],
        before: Some(id_floor(until)),
        limit,
        ..Default::default()
    };
    let floor = id_floor(from);
    let mut reports: Vec<Report> =
        store.list_reports(&filter).await?.into_iter().filter(|report| report.id >= floor).collect();
    reports.reverse();
    Ok(reports)
}

/// The projects a round mails about, read once each.
#[derive(Default)]
struct Projects(BTreeMap<String, Option<Project>>);

impl Projects {
    async fn get(&mut self, svc: &Service, id: &str) -> ServiceResult<Option<Project>> {
        let store = svc.store();
        if !self.0.contains_key(id) {
            let project = store.get_project(id).await?;
            self.0.insert(id.to_string(), project);
        }
        Ok(self.0[id].clone())
    }
}

/// Reads the event feed from where the mail consumer stopped and queues the mails its events call
/// for: new reports for the members who want them at once, reporters' replies for the members who
/// get replies, "does it work now?" for a reporter whose report was marked fixed. The mails are
/// queued in the transaction that moves the consumer past their events, so a crash before it
/// commits leaves the events to read again and a crash after it leaves the mails queued: each
/// event is mailed once. Only the instance holding the consumer's lease reads, so instances on one
/// PostgreSQL take turns and never mail an event twice. The mail task calls this; tests call it
/// directly. While a burst of reports is being filed ([`crate::load`]), a call reads one batch of
/// the feed and leaves the rest until the burst has passed. Returns how many mails were queued.
pub async fn mail_events(svc: &Service, public_url: &str, now: i64) -> ServiceResult<usize> {
    Ok(read_feed_once(svc, public_url, now).await?.queued)
}

/// What a call of [`mail_events`] did.
struct FeedRead {
    /// Mails queued.
    queued: usize,
    /// Whether it stopped at its limit of batches with more to read.
    more: bool,
}

async fn read_feed_once(svc: &Service, public_url: &str, now: i64) -> ServiceResult<FeedRead> {
    let store = svc.store();
    let nothing = FeedRead { queued: 0, more: false };
    // Nothing new: only reads.
    if let Some(position) = store.consumer_position(consumer::MAIL).await?
        && store.last_event_id().await? <= position
    {
        return Ok(nothing);
    }
    let owner = svc.instance_id();
    let Some(mut position) = store.lease_consumer(consumer::MAIL, owner, now, now + CONSUMER_LEASE_MS).await? else {
        return Ok(nothing);
    };
    let mut queued = 0;
    let mut more = false;
    // How far the events read call for no mail: the consumer moves past them with the next mails,
    // or once at the end (not one write per round when a burst of reports mails nobody).
    let mut passed = None;
    // At most 20 rounds a call, so one call cannot run for ever while events keep coming.
    for batch in 1..=20 {
        let events = store.list_events(None, position, EVENTS_PER_ROUND).await?;
        let Some(last) = events.last().map(|event| event.id) else { break };
        let mut writes = Vec::new();
        for mail in mails_for(svc, public_url, &events, now).await? {
            match outbox_row(mail, now) {
                Ok(row) => writes.push(Write::Mail(row)),
                // One mail that cannot be built must not hold up every mail after it.
                Err(error) => tracing::warn!(%error, "a notification could not be built; skipped"),
            }
        }
        position = last;
        passed = Some(last);
        if !writes.is_empty() {
            let Some(mailed) = advance_mail_consumer(svc, writes, last, now).await? else {
                return Ok(FeedRead { queued, more: false });
            };
            queued += mailed;
            passed = None;
        }
        if events.len() < EVENTS_PER_ROUND as usize || svc.load().in_burst() {
            break;
        }
        more = batch == 20;
    }
    if let Some(last) = passed {
        advance_mail_consumer(svc, Vec::new(), last, now).await?;
    }
    if queued > 0 {
        WAKE.notify_one();
    }
    Ok(FeedRead { queued, more })
}

/// Queues `mails` and moves the mail consumer to `to`, in one transaction: how many mails were
/// queued, or `None` when another instance took the consumer over (it mails these events).
async fn advance_mail_consumer(
    svc: &Service,
    mut writes: Vec<Write>,
    to: i64,
    now: i64,
) -> ServiceResult<Option<usize>> {
    writes.push(Write::AdvanceConsumer { name: consumer::MAIL.into(), owner: svc.instance_id().to_string(), to });
    let change = Change::anywhere(super::audit::housekeeping(), now, writes);
    let applied = match svc.store().apply(&change).await {
        Ok(applied) => applied,
        Err(StoreError::LeaseLost(_)) => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    let queued = change
        .writes
        .iter()
        .zip(&applied)
        .filter(|(write, outcome)| matches!((write, outcome), (Write::Mail(_), Applied::Done)))
        .count();
    Ok(Some(queued))
}

/// The mails a run of events calls for, in event order.
async fn mails_for(svc: &Service, public_url: &str, events: &[Event], now: i64) -> ServiceResult<Vec<Mail>> {
    let store = svc.store();
    let mut projects = Projects::default();
    let mut mails = Vec::new();
    // New reports are gathered per project: many at once make one mail per person, not one each.
    // Only their ids for now: a report is read only when someone wants it mailed (under a burst of
    // reports, reading each one back would cost as much as filing it).
    let mut new_reports: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for event in events {
        let Some(report_id) = &event.report_id else { continue };
        match &event.kind {
            EventKind::ReportCreated { .. } if event.at >= now - CATCH_UP_MS => {
                new_reports.entry(&event.project_id).or_default().push(report_id);
            }
            EventKind::CommentPublished { comment_id, .. } if event.by.kind == AuthorKind::Reporter => {
                let Some(report) = store.get_report(report_id).await? else { continue };
                let Some(project) = projects.get(svc, &report.project_id).await? else { continue };
                let comments = store.list_comments(report_id).await?;
                if let Some(reply) = comments.iter().find(|comment| &comment.id == comment_id) {
                    mails.extend(reply_mails(svc, public_url, &project, &report, reply).await?);
                }
            }
            EventKind::StatusChanged { to: Status::Fixed, .. } => {
                let Some(report) = store.get_report(report_id).await? else { continue };
                let Some(project) = projects.get(svc, &report.project_id).await? else { continue };
                mails.extend(super::reporters::fixed_mail(svc, public_url, &project, &report, event.at).await?);
            }
            _ => {}
        }
    }
    if new_reports.is_empty() {
        return Ok(mails);
    }
    let subscribers = store.report_subscribers(NewReports::Instant).await?;
    if subscribers.is_empty() {
        return Ok(mails);
    }
    let key = signing_key(svc).await?;
    let window = format!("{}-{}", events[0].id, events[events.len() - 1].id);
    for (project_id, report_ids) in new_reports {
        if !subscribers.iter().any(|s| s.project_id == project_id) {
            continue;
        }
        let Some(project) = projects.get(svc, project_id).await? else { continue };
        let mut reports = Vec::with_capacity(report_ids.len());
        for report_id in report_ids {
            reports.extend(store.get_report(report_id).await?);
        }
        for subscriber in subscribers.iter().filter(|s| s.project_id == project_id) {
            let theirs: Vec<&Report> =
                reports.iter().filter(|report| report.created_at >= subscriber.preference.reports_since).collect();
            mails.extend(new_report_mails(public_url, &key, &project, subscriber, &theirs, &window));
        }
    }
    Ok(mails)
}

/// A person's new-report mails for reports filed together (oldest first): one each, or one that
/// lists them when there are more than [`INSTANT_PER_ROUND`]. `window` names the run of events they
/// came in (the list mail's dedupe key).
fn new_report_mails(
    public_url: &str,
    key: &[u8],
    project: &Project,
    subscriber: &Subscriber,
    reports: &[&Report],
    window: &str,
) -> Vec<Mail> {
    let Ok(to) = Email::parse(&subscriber.email) else { return Vec::new() };
    if reports.is_empty() {
        return Vec::new();
    }
    let footer = Footer::new(public_url, key, subscriber, project, Topic::NewReports);
    let mail = |subject: String, text: String, dedupe_key: String| {
        let mut mail = Mail::new(&project.org_id, to.clone(), MailKind::NewReport, subject, text);
        mail.project_id = Some(project.id.clone());
        mail.dedupe_key = Some(dedupe_key);
        mail.unsubscribe_url = Some(footer.unsubscribe.clone());
        mail
    };
    if reports.len() <= INSTANT_PER_ROUND {
        return reports
            .iter()
            .map(|report| {
                mail(
                    format!("[{}] {}", project.name, report.title),
                    new_report_text(public_url, project, report, &footer),
                    format!("new-report:{}:{}", report.id, subscriber.user_id),
                )
            })
            .collect();
    }
    let count = reports.len() as i64;
    let listed: Vec<&Report> = reports.iter().rev().take(INSTANT_PER_ROUND).copied().collect();
    let heading = format!("{} in {}:", reports_count(count), project.name);
    vec![mail(
        format!("[{}] {}", project.name, reports_count(count)),
        report_list_text(public_url, project, &heading, &listed, count, &footer),
        format!("new-reports:{}:{}:{window}", project.id, subscriber.user_id),
    )]
}

/// Queues the daily digests that are due: at [`svc_core::mail::DIGEST_HOUR_UTC`]:00 UTC, one mail
/// per person and project listing the reports made since their last digest (or since they chose
/// the digest), when there are any. Runs in the mail task; tests call it with the time they want.
pub async fn queue_digests(svc: &Service, public_url: &str, now: i64) -> ServiceResult<usize> {
    let store = svc.store();
    let boundary = digest_boundary(now);
    let subscribers = store.report_subscribers(NewReports::Digest).await?;
    let mut projects = Projects::default();
    let mut key = None;
    let mut queued = 0;
    for subscriber in &subscribers {
        let through = subscriber.preference.digest_through.unwrap_or(subscriber.preference.reports_since);
        if through >= boundary {
            continue;
        }
        let from = through.max(boundary - DIGEST_CATCH_UP_MS);
        let count = store.count_reports_between(&subscriber.project_id, &id_floor(from), &id_floor(boundary)).await?;
        if count > 0
            && let Some(project) = projects.get(svc, &subscriber.project_id).await?
            && let Ok(to) = Email::parse(&subscriber.email)
        {
            if key.is_none() {
                key = Some(signing_key(svc).await?);
            }
            let key = key.as_deref().unwrap_or_default();
            let footer = Footer::new(public_url, key, subscriber, &project, Topic::NewReports);
            let reports = reports_between(svc, &project.id, from, boundary, DIGEST_LISTED).await?;
            let listed: Vec<&Report> = reports.iter().rev().collect();
            let heading = format!(
                "{} in {} between {} and {} (UTC):",
                reports_count(count),
                project.name,
                short_time(from),
                short_time(boundary)
            );
            let mut mail = Mail::new(
                &project.org_id,
                to,
                MailKind::Digest,
                format!("[{}] Digest: {}", project.name, reports_count(count)),
                report_list_text(public_url, &project, &heading, &listed, count, &footer),
            );
            mail.project_id = Some(project.id.clone());
            mail.dedupe_key = Some(format!("digest:{}:{}:{boundary}", project.id, subscriber.user_id));
            mail.unsubscribe_url = Some(footer.unsubscribe.clone());
            queued += usize::from(queue(svc, mail).await?.is_some());
        }
        store.set_digest_through(&subscriber.user_id, &subscriber.project_id, boundary).await?;
    }
    Ok(queued)
}

/// The mails telling the project's team that a reporter replied on a report (a comment by the
/// reporter): one to each member of the project's organization who gets replies (the default),
/// with the reply quoted.
async fn reply_mails(
    svc: &Service,
    public_url: &str,
    project: &Project,
    report: &Report,
    reply: &Comment,
) -> ServiceResult<Vec<Mail>> {
    let store = svc.store();
    let subscribers = store.reply_subscribers(&project.id).await?;
    if subscribers.is_empty() {
        return Ok(Vec::new());
    }
    let key = signing_key(svc).await?;
    let who = reply.author.label.clone().or_else(|| reporter_label(report)).unwrap_or_else(|| "The reporter".into());
    let mut mails = Vec::new();
    for subscriber in &subscribers {
        let Ok(to) = Email::parse(&subscriber.email) else { continue };
        let footer = Footer::new(public_url, &key, subscriber, project, Topic::Replies);
        let text = format!(
            "{who} replied on a report in {project} ({short}: {title}):\n\n{quoted}\n\nOpen the report: {link}\n{footer}",
            project = project.name,
            short = ids::short_id(&report.id),
            title = report.title,
            quoted = quote(&reply.text, EXCERPT_CHARS),
            link = report_link(public_url, &report.id),
            footer = footer.text,
        );
        let mut mail = Mail::new(
            &project.org_id,
            to,
            MailKind::ReporterReply,
            format!("[{}] Reply from {who}: {}", project.name, report.title),
            text,
        );
        mail.project_id = Some(project.id.clone());
        mail.dedupe_key = Some(format!("reply:{}:{}", reply.id, subscriber.user_id));
        mail.unsubscribe_url = Some(footer.unsubscribe.clone());
        mails.push(mail);
    }
    Ok(mails)
}

/// The end of every team notification: why it came, the one-click way out, and the settings.
struct Footer {
    unsubscribe: String,
    text: String,
}

impl Footer {
    fn new(public_url: &str, key: &[u8], subscriber: &Subscriber, project: &Project, topic: Topic) -> Self {
        let unsubscribe = unsubscribe_url(public_url, key, &subscriber.user_id, &project.id, topic);
        let why = match (topic, subscriber.preference.new_reports) {
            (Topic::Replies, _) => "replies from reporters".to_string(),
            (Topic::NewReports, NewReports::Digest) => "a daily digest of new reports".to_string(),
            (Topic::NewReports, _) => "new reports at once".to_string(),
        };
        let text = format!(
            "\n-- \nYou get this mail because you chose {why} for {project} in Svc.\n\
             Stop these mails (one click): {unsubscribe}\nAll your mail settings: {base}/account\n",
            project = project.name,
            base = base(public_url),
        );
        Footer { unsubscribe, text }
    }
}

pub(crate) fn report_link(public_url: &str, report_id: &str) -> String {
    format!("{}/reports/{report_id}", base(public_url))
}

/// A report's file in the dashboard (it needs a sign-in): what webhooks and issues link to.
pub(crate) fn blob_link(public_url: &str, blob_id: &str) -> String {
    format!("{}/dashboard/blobs/{blob_id}", base(public_url))
}

fn reports_count(count: i64) -> String {
    if count == 1 { "1 new report".into() } else { format!("{count} new reports") }
}

/// `2026-01-02 08:00`.
fn short_time(ms: i64) -> String {
    let iso = time::iso(ms);
    iso.get(..16).map(|text| text.replace('T', " ")).unwrap_or(iso)
}

/// Who filed a report: the author's label, else the verified identity's name or email.
pub(crate) fn reporter_label(report: &Report) -> Option<String> {
    report.author.label.clone().or_else(|| {
        let identity = report.identity.as_ref()?;
        identity.name.clone().or_else(|| identity.email.clone())
    })
}

/// The body of one new-report mail.
fn new_report_text(public_url: &str, project: &Project, report: &Report, footer: &Footer) -> String {
    let verified = report.identity.as_ref().is_some_and(|i| i.verified);
    let from = match reporter_label(report) {
        Some(label) if verified => format!("{label} (verified)"),
        Some(label) => label,
        None => "someone who did not say who they are".into(),
    };
    let mut text = format!(
        "New report in {project} ({channel}, {short}): {title}\n\nFrom: {from}\n",
        project = project.name,
        channel = report.channel_key,
        short = ids::short_id(&report.id),
        title = report.title,
    );
    if let Some(url) = &report.url {
        text.push_str(&format!("Page: {url}\n"));
    }
    let words = excerpt(&report.blocks);
    if !words.is_empty() {
        text.push_str(&format!("\nThe reporter wrote:\n\n{}\n", quote(&words, EXCERPT_CHARS)));
    }
    text.push_str(&format!("\nOpen the report: {}\n{}", report_link(public_url, &report.id), footer.text));
    text
}

/// The body of a mail listing reports (a digest, or many new reports at once).
fn report_list_text(
    public_url: &str,
    project: &Project,
    heading: &str,
    listed: &[&Report],
    count: i64,
    footer: &Footer,
) -> String {
    let mut text = format!("{heading}\n\n");
    for report in listed {
        text.push_str(&format!(
            "- {title} ({channel}, {short}, {when} UTC)\n  {link}\n",
            title = report.title,
            channel = report.channel_key,
            short = ids::short_id(&report.id),
            when = short_time(report.created_at),
            link = report_link(public_url, &report.id),
        ));
    }
    let more = count - listed.len() as i64;
    if more > 0 {
        text.push_str(&format!("\nand {more} more.\n"));
    }
    let inbox = url::form_urlencoded::Serializer::new(String::new()).append_pair("project", &project.id).finish();
    text.push_str(&format!("\nThe project's reports: {}/?{inbox}\n{}", base(public_url), footer.text));
    text
}

/// The reporter's words in a report's blocks, as plain text: text blocks as written, selections
/// and quotes in quotation marks, attachments by kind.
pub(crate) fn excerpt(blocks: &[Block]) -> String {
    let trimmed = |text: Option<&str>| text.unwrap_or_default().trim().to_string();
    let mut parts = Vec::new();
    for block in blocks {
        let part = match block {
            Block::Text(b) => b.text.trim().to_string(),
            Block::Selection(b) => format!("“{}”", b.text.trim()),
            Block::Quote(b) => format!("“{}”\n{}", b.text.trim(), b.comment.trim()),
            Block::Pinpoint(b) => match trimmed(b.comment.as_deref()) {
                comment if comment.is_empty() => "[pinpoint]".into(),
                comment => format!("[pinpoint] {comment}"),
            },
            Block::Screenshot(_) => "[screenshot]".into(),
            Block::Audio(b) => match trimmed(b.transcript.as_deref()) {
                transcript if transcript.is_empty() => "[voice note]".into(),
                transcript => format!("[voice note] {transcript}"),
            },
            Block::File(b) => format!("[file {}]", b.name.trim()),
        };
        if !part.trim().is_empty() {
            parts.push(part);
        }
    }
    parts.join("\n\n")
}

/// Text as an email quotation (`> ` before every line), cut at `max` characters: the reporter's
/// words cannot pass for the mail's own lines.
pub(crate) fn quote(text: &str, max: usize) -> String {
    let mut text: String = text.chars().filter(|c| *c == '\n' || !c.is_control()).collect();
    if text.chars().count() > max {
        text = text.chars().take(max).collect::<String>() + " […]";
    }
    text.lines().map(|line| format!("> {line}").trim_end().to_string()).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------------------------
// A person's settings, and the outbox.

/// One organization's projects with the person's settings for each.
#[derive(Debug, Clone)]
pub struct OrgSettings {
    pub org: Organization,
    pub projects: Vec<(Project, MailPreference)>,
}

/// The person's mail settings for every project of their organizations (defaults where they
/// chose nothing).
pub async fn settings(svc: &Service, person: &SignedIn) -> ServiceResult<Vec<OrgSettings>> {
    let store = svc.store();
    let stored = store.mail_preferences(&person.user.id).await?;
    let mut out = Vec::new();
    for membership in &person.memberships {
        let Some(org) = store.get_organization(&membership.org_id).await? else { continue };
        let projects = store
            .list_projects(&org.id)
            .await?
            .into_iter()
            .map(|project| {
                let preference = stored
                    .iter()
                    .find(|p| p.project_id == project.id)
                    .cloned()
                    .unwrap_or_else(|| MailPreference::default_for(&person.user.id, &project.id));
                (project, preference)
            })
            .collect();
        out.push(OrgSettings { org, projects });
    }
    Ok(out)
}

/// A person's choice for one project.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub project_id: String,
    pub new_reports: NewReports,
    pub replies: bool,
}

/// Stores the person's choices (only for projects of their organizations: any other is refused
/// before anything is stored); returns how many changed.
pub async fn set_choices(svc: &Service, person: &SignedIn, choices: &[Choice]) -> ServiceResult<usize> {
    let store = svc.store();
    let current = settings(svc, person).await?;
    let find = |project_id: &str| {
        current.iter().flat_map(|org| org.projects.iter()).find(|(project, _)| project.id == project_id)
    };
    for choice in choices {
        if find(&choice.project_id).is_none() {
            return Err(ServiceError::Refused(Refusal::OtherProject));
        }
    }
    let now = time::now_ms();
    let mut changed = 0;
    for choice in choices {
        let Some((_, preference)) = find(&choice.project_id) else { continue };
        if preference.new_reports == choice.new_reports && preference.replies == choice.replies {
            continue;
        }
        let updated = MailPreference {
            new_reports: choice.new_reports,
            replies: choice.replies,
            reports_since: now,
            ..preference.clone()
        };
        store.put_mail_preference(&updated).await?;
        changed += 1;
    }
    Ok(changed)
}

/// The outbox as the person may read it: the messages of the organizations they own, newest first.
pub async fn outbox(
    svc: &Service,
    person: &SignedIn,
    before: Option<&str>,
    limit: u32,
) -> ServiceResult<Vec<OutboxMail>> {
    let store = svc.store();
    let owned: Vec<String> =
        person.memberships.iter().filter(|m| m.role == Role::Owner).map(|m| m.org_id.clone()).collect();
    Ok(store.list_outbox(&owned, before, limit.clamp(1, 200)).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        assert_eq!(backoff_ms(1), 60_000);
        assert_eq!(backoff_ms(2), 120_000);
        assert_eq!(backoff_ms(5), 16 * 60_000);
        assert_eq!(backoff_ms(9), 3600 * 1000);
    }

    #[test]
    fn reporter_words_are_quoted_and_cut() {
        let blocks: Vec<Block> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "It breaks\n-- \nStop these mails: https://evil.example"},
            {"type": "screenshot", "blobId": "x"},
            {"type": "quote", "text": "Save", "comment": "does nothing", "selector": "b", "target": {"css": "b"}},
        ]))
        .unwrap();
        let text = quote(&excerpt(&blocks), 1_000);
        assert!(text.lines().all(|line| line.starts_with('>')), "{text}");
        assert!(text.contains("> [screenshot]"));
        assert!(text.contains("> “Save”\n> does nothing"));
        assert!(quote(&"a".repeat(50), 10).ends_with("[…]"));
    }

    #[test]
    fn tokens_are_bound_to_person_project_and_topic() {
        let key = b"key";
        let token = unsubscribe_token(key, "u", "p", Topic::NewReports);
        assert!(token.starts_with("u.p.reports."));
        assert_ne!(signature(key, "u", "p", Topic::NewReports), signature(key, "u", "p", Topic::Replies));
        assert_ne!(signature(key, "u", "p", Topic::NewReports), signature(b"other", "u", "p", Topic::NewReports));
    }
}
