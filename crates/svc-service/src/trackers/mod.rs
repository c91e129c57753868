//! Issue trackers (docs/integrations.md): a project connects a repository, reports become issues
//! (by hand, or by a channel's rule), and each side's changes reach the other.
//!
//! A tracker is the small interface [`IssueTracker`] (check the connection, create an issue,
//! close or reopen it, comment on it) plus the reading of its deliveries; GitHub is the one built
//! ([`github`]). Everything else here is shared by any tracker:
//!
//! - **Out**: the event feed's `trackers` consumer reads Svc's changes in order and sends them to
//!   the linked issues (a status that moves the report between open, done and not planned; a
//!   published comment), and makes the issues channel rules call for. A change that came from the
//!   tracker (its author is `<tracker>:<login>`) is never sent back.
//! - **In**: a signed delivery moves the linked reports as the connection's mapping says, and
//!   mirrors comments into the thread as the tracker's person; the delivery's id is written in the
//!   same transaction, so a replay changes nothing. A delivery that agrees with the report's state
//!   (a close Svc itself asked for) changes nothing either.

pub mod github;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use svc_core::audit::action;
use svc_core::event::{Event, EventKind, consumer};
use svc_core::model::{Author, AuthorKind, Project, Report};
use svc_core::secret::Secret;
use svc_core::status::NewComment;
use svc_core::tracker::{
    self, AuthKind, ChannelRule, IssueLink, IssueState, TrackerConnection, TrackerKind, TrackerSettings,
};
use svc_core::{ids, time};
use svc_store::{Change, StoreError, Write};

use crate::outbound::OutboundPolicy;
use crate::permissions::{self, Operation};
use crate::principal::Principal;
use crate::triage::Triage;
use crate::{Service, ServiceError, ServiceResult};

/// Events read per round of the consumer.
const EVENTS_PER_ROUND: u32 = 50;
/// How long the consumer is held; renewed every round, and long enough for a round's requests.
const CONSUMER_LEASE_MS: i64 = 120_000;
/// Handled deliveries are remembered this long (GitHub redelivers only by hand).
const KEEP_DELIVERIES_MS: i64 = 30 * 24 * 3600 * 1000;
/// How often the consumer looks when nothing announced a change.
const TICK: Duration = Duration::from_secs(5);
/// At most one round this often when changes wake the consumer.
const CHANGE_GATHER: Duration = Duration::from_millis(100);
/// How long the consumer waits out a burst of reports, at most ([`crate::load`]): changes reach
/// the issues a few seconds later; the reports being filed do not wait for them.
const LONGEST_WAIT: Duration = crate::load::LONGEST_WAIT;
const _: () = assert!((LONGEST_WAIT.as_millis() as i64) < CONSUMER_LEASE_MS / 2);

/// Why a tracker did not do what Svc asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrackerError {
    /// The tracker refused, for a reason a person can act on (a permission, a name, a setting).
    #[error("{0}")]
    Refused(String),
    /// Rate limited for longer than Svc waits.
    #[error("{0}")]
    RateLimited(String),
    /// Not reachable, or failing on its side.
    #[error("{0}")]
    Unavailable(String),
}

/// What "Check connection" found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Check {
    /// What is missing, each in words a person can act on; empty when everything works.
    pub problems: Vec<String>,
    /// What works.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewIssue {
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreatedIssue {
    pub number: i64,
    pub url: String,
}

/// What Svc needs of a tracker: one implementation per tracker.
#[async_trait]
pub trait IssueTracker: Send + Sync {
    /// Reads the repository and says what is missing.
    async fn check(&self) -> Result<Check, TrackerError>;
    async fn create_issue(&self, issue: &NewIssue) -> Result<CreatedIssue, TrackerError>;
    async fn set_state(&self, number: i64, state: IssueState) -> Result<(), TrackerError>;
    async fn comment(&self, number: i64, text: &str) -> Result<(), TrackerError>;
}

/// What the trackers need besides the service: the HTTP client (bound by the outbound policy,
/// 10 s timeout, no redirects), the dashboard's public URL for links, GitHub's installation tokens.
#[derive(Clone)]
pub struct Trackers {
    http: reqwest::Client,
    public_url: String,
    github_tokens: Arc<github::Tokens>,
    passed_at: Arc<std::sync::atomic::AtomicI64>,
}

impl Trackers {
    pub fn new(policy: &OutboundPolicy, timeout: Duration, public_url: &str) -> anyhow::Result<Self> {
        Ok(Trackers {
            http: policy.client(timeout)?,
            public_url: crate::mail::base(public_url).to_string(),
            github_tokens: Default::default(),
            passed_at: Default::default(),
        })
    }

    fn client<'a>(&'a self, connection: &'a TrackerConnection) -> Box<dyn IssueTracker + 'a> {
        match connection.tracker {
            TrackerKind::Github => {
                Box::new(github::Github { http: &self.http, tokens: &self.github_tokens, connection })
            }
        }
    }

    /// Where a tracker sends its deliveries.
    pub fn webhook_url(&self, tracker: TrackerKind) -> String {
        format!("{}/api/v1/integrations/{}/webhook", self.public_url, tracker.as_str())
    }
}

impl tracker::DashboardLinks for Trackers {
    fn report(&self, report_id: &str) -> String {
        crate::mail::report_link(&self.public_url, report_id)
    }

    fn blob(&self, blob_id: &str) -> String {
        crate::mail::blob_link(&self.public_url, blob_id)
    }
}

/// A connection as asked for (REST, dashboard). Secrets left out (`None`) keep the stored ones;
/// an empty one is refused like any malformed one.
#[derive(Debug, Clone, Default)]
pub struct ConnectionInput {
    pub repository: String,
    pub api_url: Option<String>,
    /// `token` (default) or `app`.
    pub auth: Option<String>,
    pub token: Option<String>,
    pub app_id: Option<String>,
    pub installation_id: Option<i64>,
    pub private_key: Option<String>,
    pub webhook_secret: Option<String>,
    pub on_closed_completed: Option<svc_core::status::Status>,
    pub on_closed_not_planned: Option<svc_core::status::Status>,
    pub on_reopened: Option<svc_core::status::Status>,
    pub send_status: Option<bool>,
    pub send_comments: Option<bool>,
    pub mirror_comments: Option<bool>,
    pub include_reporter_email: Option<bool>,
    pub rules: Option<Vec<ChannelRule>>,
}

/// A connection just saved, with the webhook secret Svc made for it (shown once).
pub struct Connected {
    pub connection: TrackerConnection,
    pub new_webhook_secret: Option<Secret>,
    pub created: bool,
}

/// The project's connection, for its owners.
pub async fn get(svc: &Service, by: &Principal, project: &Project) -> ServiceResult<Option<TrackerConnection>> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    Ok(svc.store().tracker_connection(&project.id).await?)
}

/// Connects the project to a repository, or changes its connection. Only GitHub is built.
pub async fn connect(
    svc: &Service,
    by: &Principal,
    project: &Project,
    input: ConnectionInput,
) -> ServiceResult<Connected> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    let store = svc.store();
    let existing = store.tracker_connection(&project.id).await?;
    let repository = tracker::parse_repository(&input.repository)?;
    let auth = match input.auth.as_deref() {
        None => existing.as_ref().map_or(AuthKind::Token, |c| c.settings.auth),
        Some(text) => AuthKind::parse(text).ok_or_else(|| ServiceError::Invalid("auth must be token or app".into()))?,
    };
    let mut settings = match &existing {
        Some(existing) => TrackerSettings { repository, auth, ..existing.settings.clone() },
        None => TrackerSettings::new(repository, auth),
    };
    if let Some(api_url) = &input.api_url {
        settings.api_url = tracker::parse_api_url(api_url)?;
    }
    let same_auth = existing.as_ref().is_some_and(|c| c.settings.auth == auth);
    // What is given is checked whichever way is chosen; only the chosen way's fields are kept.
    let app_id = input.app_id.as_deref().map(tracker::parse_app_id).transpose()?;
    if input.installation_id.is_some_and(|installation| installation <= 0) {
        return Err(ServiceError::Invalid("installationId must be a positive number".into()));
    }
    let token = input.token.as_deref().map(tracker::parse_token).transpose()?;
    let private_key = input.private_key.as_deref().map(tracker::parse_private_key).transpose()?;
    let kept = || existing.as_ref().filter(|_| same_auth).map(|c| c.credential.clone());
    let credential = match auth {
        AuthKind::Token => {
            settings.app_id = None;
            settings.installation_id = None;
            token
                .or_else(kept)
                .ok_or_else(|| ServiceError::Invalid("token is required to connect with a token".into()))?
        }
        AuthKind::App => {
            if app_id.is_some() {
                settings.app_id = app_id;
            }
            if input.installation_id.is_some() {
                settings.installation_id = input.installation_id;
            }
            if settings.app_id.is_none() || settings.installation_id.is_none() {
                return Err(ServiceError::Invalid("appId and installationId are required to connect an app".into()));
            }
            private_key
                .or_else(kept)
                .ok_or_else(|| ServiceError::Invalid("privateKey is required to connect an app".into()))?
        }
    };
    let mut new_webhook_secret = None;
    let webhook_secret = match (input.webhook_secret.as_deref(), &existing) {
        (Some(secret), _) => tracker::parse_webhook_secret(secret)?,
        (None, Some(existing)) => existing.webhook_secret.clone(),
        (None, None) => {
            let made = tracker::new_webhook_secret();
            new_webhook_secret = Some(made.clone());
            made
        }
    };
    for (field, status) in [
        (&mut settings.on_closed_completed, input.on_closed_completed),
        (&mut settings.on_closed_not_planned, input.on_closed_not_planned),
        (&mut settings.on_reopened, input.on_reopened),
    ] {
        if let Some(status) = status {
            *field = status;
        }
    }
    for (field, value) in [
        (&mut settings.send_status, input.send_status),
        (&mut settings.send_comments, input.send_comments),
        (&mut settings.mirror_comments, input.mirror_comments),
        (&mut settings.include_reporter_email, input.include_reporter_email),
    ] {
        if let Some(value) = value {
            *field = value;
        }
    }
    if let Some(mut rules) = input.rules {
        for rule in &mut rules {
            rule.labels = rule.labels.iter().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
            if store.get_channel(&project.id, &rule.channel_key).await?.is_none() {
                return Err(ServiceError::Invalid(format!("rules: the project has no channel {}", rule.channel_key)));
            }
        }
        settings.rules = rules;
    }
    tracker::check_rules(&settings.rules)?;
    tracker::check_mapping(&settings)?;
    let now = time::now_ms();
    let connection = TrackerConnection {
        project_id: project.id.clone(),
        tracker: TrackerKind::Github,
        settings,
        credential,
        webhook_secret,
        // A changed connection starts without the old one's error.
        last_error: None,
        last_error_at: None,
        created_at: existing.as_ref().map_or(now, |c| c.created_at),
        updated_at: now,
    };
    store.put_tracker_connection(&connection).await?;
    let verb = if existing.is_some() { action::TRACKER_UPDATED } else { action::TRACKER_CONNECTED };
    let detail = json!({ "tracker": connection.tracker.name(), "repository": connection.settings.repository });
    crate::audit::record(svc, project, &by.author(), verb, detail).await;
    Ok(Connected { connection, new_webhook_secret, created: existing.is_none() })
}

/// Disconnects the project (its reports keep their links, shown as they were).
pub async fn disconnect(svc: &Service, by: &Principal, project: &Project) -> ServiceResult<()> {
    permissions::check(by, Operation::ConfigureProject, project)?;
    let store = svc.store();
    let Some(existing) = store.tracker_connection(&project.id).await? else {
        return Err(ServiceError::NotFound("the project has no connected repository".into()));
    };
    store.delete_tracker_connection(&project.id).await?;
    let detail = json!({ "tracker": existing.tracker.name(), "repository": existing.settings.repository });
    crate::audit::record(svc, project, &by.author(), action::TRACKER_DISCONNECTED, detail).await;
    Ok(())
}

/// "Check connection": reads the repository with the connection's credentials.
pub async fn check(svc: &Service, trackers: &Trackers, by: &Principal, project: &Project) -> ServiceResult<Check> {
    let connection = connection_of(svc, by, project).await?;
    match trackers.client(&connection).check().await {
        Ok(check) => Ok(check),
        Err(error) => Ok(Check { problems: vec![error.to_string()], notes: Vec::new() }),
    }
}

async fn connection_of(svc: &Service, by: &Principal, project: &Project) -> ServiceResult<TrackerConnection> {
    get(svc, by, project)
        .await?
        .ok_or_else(|| ServiceError::NotFound("the project has no connected repository: connect one first".into()))
}

/// Whether the project has a connected repository (what a report view offers).
pub async fn connected(svc: &Service, project_id: &str) -> ServiceResult<bool> {
    Ok(svc.store().tracker_connection(project_id).await?.is_some())
}

/// The issues of these reports.
pub async fn links(svc: &Service, report_ids: &[String]) -> ServiceResult<Vec<IssueLink>> {
    Ok(svc.store().issue_links(report_ids).await?)
}

/// What a push did.
#[derive(Debug, Clone, PartialEq)]
pub struct Pushed {
    pub link: IssueLink,
    /// `false`: the report had its issue already (it is linked, not made again).
    pub created: bool,
}

/// Why a push failed: Svc's own refusal, or the tracker's.
#[derive(Debug)]
pub enum PushError {
    Service(ServiceError),
    Tracker(TrackerError),
}

impl From<ServiceError> for PushError {
    fn from(error: ServiceError) -> Self {
        PushError::Service(error)
    }
}

impl From<StoreError> for PushError {
    fn from(error: StoreError) -> Self {
        PushError::Service(error.into())
    }
}

/// Makes the report's issue ("Create GitHub issue"): one report, one issue (a report that has
/// one is linked to it, not pushed again). Needs the right to triage the report.
pub async fn push(
    svc: &Service,
    trackers: &Trackers,
    by: &Principal,
    project: &Project,
    report: &Report,
) -> Result<Pushed, PushError> {
    permissions::check(by, Operation::Triage, project).map_err(ServiceError::from)?;
    if report.project_id != project.id {
        return Err(ServiceError::NotFound("report not found in this project".into()).into());
    }
    let store = svc.store();
    let connection = store.tracker_connection(&project.id).await?.ok_or_else(|| {
        ServiceError::Conflict("the project has no connected repository: an owner connects one on Integrations".into())
    })?;
    let labels = report.labels.clone();
    make_issue(svc, trackers, &connection, project, report, labels, &by.author()).await
}

/// Creates the issue and links it (or returns the link the report has).
async fn make_issue(
    svc: &Service,
    trackers: &Trackers,
    connection: &TrackerConnection,
    project: &Project,
    report: &Report,
    mut labels: Vec<String>,
    by: &Author,
) -> Result<Pushed, PushError> {
    let store = svc.store();
    if let Some(link) = store.issue_links(std::slice::from_ref(&report.id)).await?.into_iter().next() {
        return Ok(Pushed { link, created: false });
    }
    // Each label once (GitHub's names ignore case), the rule's first.
    let mut seen = std::collections::HashSet::new();
    labels.retain(|label| seen.insert(label.to_lowercase()));
    labels.truncate(20);
    let issue = NewIssue {
        title: tracker::issue_title(report),
        body: tracker::issue_body(report, trackers, connection.settings.include_reporter_email),
        labels,
    };
    let created = trackers.client(connection).create_issue(&issue).await.map_err(PushError::Tracker)?;
    // The link is shown as a link: only a web address.
    if !(created.url.starts_with("https://") || created.url.starts_with("http://")) {
        return Err(PushError::Tracker(TrackerError::Unavailable(
            "the tracker answered with an issue address that is not a web page".into(),
        )));
    }
    let now = time::now_ms();
    let link = store
        .link_issue(&IssueLink {
            report_id: report.id.clone(),
            project_id: project.id.clone(),
            tracker: connection.tracker,
            repository: connection.settings.repository.clone(),
            number: created.number,
            url: created.url,
            created_at: now,
        })
        .await?;
    let fresh = link.number == created.number;
    if fresh {
        let detail = json!({
            "reportId": report.id,
            "shortId": ids::short_id(&report.id),
            "issue": link.reference(),
            "url": link.url,
        });
        crate::audit::record(svc, project, by, action::ISSUE_CREATED, detail).await;
        store.changes().announce(&project.id);
    }
    Ok(Pushed { link, created: fresh })
}

/// The author id prefix of changes that came from `tracker` (`github:`).
fn origin_prefix(tracker: TrackerKind) -> String {
    format!("{}:", tracker.as_str())
}

/// Whether a change was made by the tracker's own delivery (it is not sent back).
fn came_from(tracker: TrackerKind, by: &Author) -> bool {
    by.id.as_deref().is_some_and(|id| id.starts_with(&origin_prefix(tracker)))
}

/// A tracker's delivery, as received.
pub struct Delivery<'a> {
    pub tracker: TrackerKind,
    /// `X-GitHub-Event`.
    pub event: &'a str,
    /// `X-GitHub-Delivery`.
    pub delivery_id: &'a str,
    /// `X-Hub-Signature-256`.
    pub signature: Option<&'a str>,
    pub body: &'a [u8],
}

/// What a delivery did.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// Acknowledged; nothing to do (`ping`, an event or action Svc does not act on, an issue
    /// no report is linked to, a change that agrees with the report already). Says which.
    Ignored(String),
    /// Reports moved or comments mirrored.
    Applied { reports: usize },
    /// A delivery id handled before: nothing changed.
    Replayed,
}

/// Why a delivery was refused (nothing changed).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeliveryError {
    #[error("{0}")]
    Malformed(String),
    /// No connection to the delivery's repository.
    #[error("no project is connected to the repository {0}")]
    UnknownRepository(String),
    /// The signature is missing or matches no connection's secret.
    #[error("the signature does not match")]
    BadSignature,
    #[error("the installation {0} is not the one connected to this repository")]
    UnknownInstallation(i64),
    #[error("{0}")]
    Service(String),
}

/// Handles a tracker's signed delivery: checks it, then moves the linked reports as the
/// connection says (docs/integrations.md, "From GitHub to Svc").
pub async fn receive(svc: &Service, delivery: Delivery<'_>) -> Result<Received, DeliveryError> {
    let store = svc.store();
    if delivery.delivery_id.is_empty() || delivery.delivery_id.len() > 100 {
        return Err(DeliveryError::Malformed("the delivery has no X-GitHub-Delivery id".into()));
    }
    let Some(payload) = github::read_payload(delivery.body) else {
        return unattached(svc, &delivery).await;
    };
    let repository_key = payload.repository.to_ascii_lowercase();
    let candidates = store
        .tracker_connections_for(delivery.tracker, &repository_key)
        .await
        .map_err(|error| DeliveryError::Service(error.to_string()))?;
    if candidates.is_empty() {
        return Err(DeliveryError::UnknownRepository(payload.repository));
    }
    let signature = delivery.signature.ok_or(DeliveryError::BadSignature)?;
    // Each project connected to the repository has its own secret: the delivery is for those
    // whose secret signed it.
    let signed: Vec<TrackerConnection> = candidates
        .into_iter()
        .filter(|connection| tracker::signature_matches(&connection.webhook_secret, delivery.body, signature))
        .collect();
    if signed.is_empty() {
        return Err(DeliveryError::BadSignature);
    }
    if let Some(installation) = payload.installation_id {
        let known =
            signed.iter().any(|c| c.settings.auth != AuthKind::App || c.settings.installation_id == Some(installation));
        if !known {
            return Err(DeliveryError::UnknownInstallation(installation));
        }
    }
    let signed: Vec<TrackerConnection> = signed
        .into_iter()
        .filter(|c| {
            c.settings.auth != AuthKind::App
                || payload.installation_id.is_none_or(|i| c.settings.installation_id == Some(i))
        })
        .collect();
    let Some(number) = payload.issue_number else {
        return Ok(Received::Ignored(format!("{} events are not acted on", delivery.event)));
    };
    let what = match (delivery.event, payload.action.as_str()) {
        ("issues", "closed") => match payload.state_reason.as_deref() {
            Some("not_planned") | Some("duplicate") => Inbound::State(IssueState::NotPlanned),
            _ => Inbound::State(IssueState::Completed),
        },
        ("issues", "reopened") => Inbound::State(IssueState::Open),
        ("issue_comment", "created") => match &payload.comment_body {
            Some(body) if body.contains(tracker::COMMENT_MARK) => {
                return Ok(Received::Ignored("a comment Svc wrote".into()));
            }
            Some(_) if !signed.iter().any(|c| c.settings.mirror_comments) => {
                return Ok(Received::Ignored(
                    "comments on the issue are not copied into Svc (mirrorComments is off)".into(),
                ));
            }
            Some(body) => Inbound::Comment(body.clone()),
            None => return Err(DeliveryError::Malformed("the comment has no body".into())),
        },
        (event, action) => return Ok(Received::Ignored(format!("{event} {action} is not acted on"))),
    };
    let links = store
        .links_to_issue(delivery.tracker, &repository_key, number)
        .await
        .map_err(|error| DeliveryError::Service(error.to_string()))?;
    let links: Vec<IssueLink> =
        links.into_iter().filter(|link| signed.iter().any(|c| c.project_id == link.project_id)).collect();
    if links.is_empty() {
        return Ok(Received::Ignored(format!("no report is linked to {}#{number}", payload.repository)));
    }
    let author = Author {
        kind: AuthorKind::User,
        id: Some(format!("{}{}", origin_prefix(delivery.tracker), payload.sender)),
        label: Some(format!("{} on {}", payload.sender, delivery.tracker.name())),
    };
    let handled = Write::TrackerDelivery { tracker: delivery.tracker, delivery_id: delivery.delivery_id.to_string() };
    let outcome = apply_inbound(svc, &signed, &links, &author, what, handled).await;
    match outcome {
        Err(ServiceError::Store(StoreError::Conflict(_))) => Ok(Received::Replayed),
        Err(error) => Err(DeliveryError::Service(error.to_string())),
        Ok(0) => Ok(Received::Ignored("the reports agree with the issue already".into())),
        Ok(reports) => Ok(Received::Applied { reports }),
    }
}

/// A delivery that names no repository (a GitHub App's `ping`, its `installation` events):
/// acknowledged when a connection's secret signed it, so GitHub does not list it as failed.
async fn unattached(svc: &Service, delivery: &Delivery<'_>) -> Result<Received, DeliveryError> {
    if serde_json::from_slice::<serde_json::Value>(delivery.body).is_err() {
        return Err(DeliveryError::Malformed("the body is not JSON".into()));
    }
    let signature = delivery.signature.ok_or(DeliveryError::BadSignature)?;
    let connections =
        svc.store().all_tracker_connections().await.map_err(|error| DeliveryError::Service(error.to_string()))?;
    let signed = connections.iter().any(|connection| {
        connection.tracker == delivery.tracker
            && tracker::signature_matches(&connection.webhook_secret, delivery.body, signature)
    });
    if !signed {
        return Err(DeliveryError::BadSignature);
    }
    Ok(Received::Ignored(format!("{} events name no repository: nothing to do", delivery.event)))
}

enum Inbound {
    State(IssueState),
    Comment(String),
}

/// Applies an inbound change to every linked report, with the delivery marked handled in the same
/// transaction; how many reports changed.
async fn apply_inbound(
    svc: &Service,
    connections: &[TrackerConnection],
    links: &[IssueLink],
    author: &Author,
    what: Inbound,
    handled: Write,
) -> ServiceResult<usize> {
    let store = svc.store();
    let link = &links[0];
    let connection = connections.iter().find(|c| c.project_id == link.project_id).ok_or_else(not_found)?;
    let project = store.get_project(&link.project_id).await?.ok_or_else(not_found)?;
    let by = Principal::Tracker { project_id: project.id.clone(), author: author.clone() };
    let mut reports = Vec::new();
    for link in links.iter().filter(|l| l.project_id == project.id) {
        if let Some(report) = store.get_report(&link.report_id).await? {
            reports.push(report);
        }
    }
    match what {
        Inbound::State(state) => {
            let to = connection.settings.status_for(state);
            // A report whose status says the same already (a close Svc asked for) stays.
            let moving: Vec<Report> = reports.into_iter().filter(|r| IssueState::of(r.status) != state).collect();
            let count = moving.len();
            crate::triage::triage_with(
                svc,
                &by,
                std::slice::from_ref(&project),
                &moving,
                Triage::status(to),
                vec![handled],
            )
            .await?;
            Ok(count)
        }
        Inbound::Comment(text) => {
            if !connection.settings.mirror_comments {
                svc.store().apply(&Change::anywhere(author.clone(), time::now_ms(), vec![handled])).await?;
                return Ok(0);
            }
            permissions::check(&by, Operation::Comment, &project)?;
            let now = time::now_ms();
            let text: String = text.chars().take(svc_core::status::COMMENT_MAX_CHARS).collect();
            let text = if text.trim().is_empty() { "(an empty comment)".to_string() } else { text };
            let mut writes: Vec<Write> = reports
                .iter()
                .map(|report| {
                    let new =
                        NewComment { text: text.clone(), kind: Some(connection.tracker.as_str().into()), draft: false };
                    Write::Comment(crate::comments::compose(report, author.clone(), new, now))
                })
                .collect();
            let count = writes.len();
            writes.push(handled);
            let change = Change { project_ids: Some(vec![project.id.clone()]), by: author.clone(), at: now, writes };
            store.apply(&change).await?;
            crate::triage::announce(svc, std::slice::from_ref(&project.id));
            Ok(count)
        }
    }
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("report not found".into())
}

/// Follows the event feed and sends Svc's changes to the linked issues (and makes the issues of
/// channel rules): one round, until caught up or for a few seconds; while a burst of reports is
/// being filed ([`crate::load`]), one batch of the feed. The events that sent something (or failed
/// to).
pub async fn sync_events(svc: &Service, trackers: &Trackers, now: i64) -> ServiceResult<usize> {
    let store = svc.store();
    let last_event = store.last_event_id().await?;
    if let Some(position) = store.consumer_position(consumer::TRACKERS).await?
        && last_event <= position
    {
        return Ok(0);
    }
    let owner = svc.instance_id();
    let connections = store.all_tracker_connections().await?;
    if connections.is_empty() {
        // Nothing connected: the position follows the feed once a minute, without reading it.
        if now - trackers.passed_at.load(std::sync::atomic::Ordering::Relaxed) >= 60_000
            && store.lease_consumer(consumer::TRACKERS, owner, now, now + CONSUMER_LEASE_MS).await?.is_some()
        {
            advance(svc, last_event, now).await?;
            trackers.passed_at.store(now, std::sync::atomic::Ordering::Relaxed);
        }
        return Ok(0);
    }
    let Some(mut position) = store.lease_consumer(consumer::TRACKERS, owner, now, now + CONSUMER_LEASE_MS).await?
    else {
        return Ok(0);
    };
    let started = std::time::Instant::now();
    let mut handled = 0;
    let mut cleared = std::collections::HashSet::new();
    while started.elapsed() < Duration::from_secs(5) {
        let events = store.list_events(None, position, EVENTS_PER_ROUND).await?;
        let Some(last) = events.last().map(|event| event.id) else { break };
        for event in &events {
            let Some(connection) = connections.iter().find(|c| c.project_id == event.project_id) else { continue };
            // What happened before the connection was made is not sent.
            if event.at < connection.created_at || came_from(connection.tracker, &event.by) {
                continue;
            }
            let sent = match send_event(svc, trackers, connection, event).await {
                Err(error) => {
                    tracing::warn!(project = %connection.project_id, event = event.id, %error, "sending a change to the issue tracker failed");
                    store.set_tracker_error(&connection.project_id, Some(&error), time::now_ms()).await?;
                    true
                }
                Ok(sent) => {
                    // A change that went through clears the last failure's message (once a round).
                    if sent && connection.last_error.is_some() && cleared.insert(connection.project_id.as_str()) {
                        store.set_tracker_error(&connection.project_id, None, time::now_ms()).await?;
                    }
                    sent
                }
            };
            // An event that sent something is passed at once (a crash repeats at most that one);
            // the rest are passed with the batch, not one write each.
            if sent {
                handled += 1;
                if !advance(svc, event.id, now).await? {
                    return Ok(handled);
                }
            }
        }
        position = last;
        if !advance(svc, last, now).await? || events.len() < EVENTS_PER_ROUND as usize || svc.load().in_burst() {
            break;
        }
    }
    Ok(handled)
}

/// Moves the consumer; `false` when another instance took it over.
async fn advance(svc: &Service, to: i64, now: i64) -> ServiceResult<bool> {
    let writes = vec![Write::AdvanceConsumer { name: consumer::TRACKERS.into(), owner: svc.instance_id().into(), to }];
    match svc.store().apply(&Change::anywhere(crate::audit::housekeeping(), now, writes)).await {
        Ok(_) => Ok(true),
        Err(StoreError::LeaseLost(_)) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// Sends one event of a connected project: whether something was sent; an error says what
/// failed, for the connection's page.
async fn send_event(
    svc: &Service,
    trackers: &Trackers,
    connection: &TrackerConnection,
    event: &Event,
) -> Result<bool, String> {
    let store = svc.store();
    let Some(report_id) = &event.report_id else { return Ok(false) };
    let settings = &connection.settings;
    let link =
        || async { store.issue_links(std::slice::from_ref(report_id)).await.map(|links| links.into_iter().next()) };
    match &event.kind {
        EventKind::ReportCreated { channel_key } => {
            let Some(rule) = settings.rule_for(channel_key) else { return Ok(false) };
            let (Some(report), Some(project)) = (
                store.get_report(report_id).await.map_err(|e| e.to_string())?,
                store.get_project(&event.project_id).await.map_err(|e| e.to_string())?,
            ) else {
                return Ok(false);
            };
            let mut labels = rule.labels.clone();
            labels.extend(report.labels.iter().cloned());
            let by =
                Author { kind: AuthorKind::System, id: None, label: Some(format!("the {channel_key} channel's rule")) };
            match make_issue(svc, trackers, connection, &project, &report, labels, &by).await {
                Ok(pushed) => Ok(pushed.created),
                Err(PushError::Tracker(error)) => {
                    Err(format!("making the issue of report {}: {error}", ids::short_id(report_id)))
                }
                Err(PushError::Service(error)) => Err(error.to_string()),
            }
        }
        EventKind::StatusChanged { from, to } if settings.send_status => {
            let state = IssueState::of(*to);
            if IssueState::of(*from) == state {
                return Ok(false);
            }
            let Some(link) = link().await.map_err(|e| e.to_string())? else { return Ok(false) };
            trackers
                .client(connection)
                .set_state(link.number, state)
                .await
                .map(|()| true)
                .map_err(|error| format!("changing {}: {error}", link.reference()))
        }
        EventKind::CommentPublished { comment_id, .. } if settings.send_comments => {
            let Some(link) = link().await.map_err(|e| e.to_string())? else { return Ok(false) };
            let comments = store.list_comments(report_id).await.map_err(|e| e.to_string())?;
            let Some(comment) = comments.into_iter().find(|c| &c.id == comment_id) else { return Ok(false) };
            if came_from(connection.tracker, &comment.author) {
                return Ok(false);
            }
            let label = match comment.author.kind {
                // The reporter's name stays in Svc unless the project shares the reporter.
                AuthorKind::Reporter if !settings.include_reporter_email => "The reporter".to_string(),
                _ => comment.author.label.clone().unwrap_or_else(|| comment.author.kind.as_str().to_string()),
            };
            let body = tracker::issue_comment(&label, &comment.text, &comment.id);
            trackers
                .client(connection)
                .comment(link.number, &body)
                .await
                .map(|()| true)
                .map_err(|error| format!("commenting on {}: {error}", link.reference()))
        }
        _ => Ok(false),
    }
}

/// Forgets handled deliveries after 30 days.
pub async fn delete_old(svc: &Service, now: i64) -> ServiceResult<u64> {
    Ok(svc.store().delete_old_tracker_deliveries(now - KEEP_DELIVERIES_MS).await?)
}

/// Runs the tracker consumer in the background: after every announced change, and every few
/// seconds. While a burst of reports is being filed it waits the burst out, [`LONGEST_WAIT`] at
/// most, then takes one batch of the feed and waits again.
pub fn spawn(svc: Arc<Service>, trackers: Trackers) {
    tokio::spawn(async move {
        let mut changes = svc.store().changes().subscribe();
        let mut cleaned_at = 0;
        loop {
            svc.load().wait_out_burst(LONGEST_WAIT).await;
            let now = time::now_ms();
            if let Err(error) = sync_events(&svc, &trackers, now).await {
                tracing::warn!(%error, "sending changes to issue trackers failed");
            }
            if now - cleaned_at >= 3600 * 1000 {
                cleaned_at = now;
                if let Err(error) = delete_old(&svc, now).await {
                    tracing::warn!(%error, "forgetting old tracker deliveries failed");
                }
            }
            crate::events::next_pass(&mut changes, CHANGE_GATHER, TICK).await;
        }
    });
}
