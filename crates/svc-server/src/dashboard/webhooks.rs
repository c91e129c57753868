//! A project's Webhooks tab: the endpoints its events are delivered to (URL, format, events,
//! description, enabled or disabled, and why when Svc disabled one), adding one (its signing secret
//! shown once, on the answer to the form, never in a URL or a log), editing one's URL, events and
//! description (in its card, `?edit=<id>`), enabling, disabling, deleting, rotating the secret,
//! sending a test event, and each endpoint's delivery log with a Resend per delivery. Only people
//! who may change the project's settings see it (an endpoint's URL can itself be a secret, a chat
//! webhook): every call goes through `service::webhooks` with the signed-in person, which checks
//! that and records each change in the audit log.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::event::EVENT_TYPES;
use svc_core::webhook::{
    DeliveryState, MAX_DESCRIPTION_LEN, MAX_URL_LEN, MAX_WEBHOOKS_PER_PROJECT, Webhook, WebhookFormat,
};
use svc_core::{ids, time};
use svc_service::ServiceError;
use svc_service::permissions::Operation;
use svc_service::webhooks::{self, LoggedDelivery, NewWebhook, WebhookChanges};

use super::assets::{self, Assets};
use super::auth::capitalized;
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;

/// Deliveries per page of an endpoint's log.
const LOG_PAGE: u32 = 50;

/// The formats offered: the form value and its label.
const FORMATS: [(&str, &str); 3] = [
    ("standard", "Standard Webhooks (signed JSON)"),
    ("slack", "Slack incoming webhook"),
    ("discord", "Discord webhook"),
];

/// What an event type means, beside its checkbox.
fn event_meaning(event: &str) -> &'static str {
    match event {
        "report.created" => "a report is filed",
        "report.status_changed" => "a report's status changes",
        "report.assigned" => "a report is assigned or unassigned",
        "report.labels_changed" => "a report's labels change",
        "comment.published" => "a comment reaches a report's thread",
        "report.confirmed" => "the reporter answers “does it work now?”",
        "room.created" => "a room is created",
        "report.deleted" => "a report goes with the retention period",
        _ => "",
    }
}

fn format_label(format: WebhookFormat) -> &'static str {
    match format {
        WebhookFormat::Standard => "Standard Webhooks",
        WebhookFormat::Slack => "Slack",
        WebhookFormat::Discord => "Discord",
    }
}

/// An endpoint as the tab lists it.
struct EndpointRow {
    id: String,
    url: String,
    format_label: &'static str,
    chat: bool,
    events: Vec<String>,
    /// The format's defaults (a chat endpoint that named no events).
    events_default: bool,
    description: Option<String>,
    enabled: bool,
    /// Why Svc disabled it.
    disabled_reason: Option<String>,
    /// When its current run of failed attempts began.
    failing_since: Option<When>,
    /// Until when the rotated-out secret still signs beside the current one.
    previous_until: Option<When>,
    created: When,
    /// Its edit form: as stored, or as submitted when it was refused.
    edit: EndpointForm,
    /// Whether the edit form is open in its card.
    editing: bool,
    /// What to fix in the edit form.
    edit_error: Option<String>,
}

impl EndpointRow {
    fn of(hook: &Webhook, now: i64) -> Self {
        EndpointRow {
            id: hook.id.clone(),
            url: hook.url.clone(),
            format_label: format_label(hook.format),
            chat: hook.format.is_chat(),
            events: hook.events.clone(),
            events_default: hook.events_default,
            description: hook.description.clone(),
            enabled: hook.enabled,
            disabled_reason: hook.disabled_reason.clone().filter(|_| !hook.enabled),
            failing_since: hook.failing_since.map(|at| When::at(at, now)),
            previous_until: hook.previous_until.filter(|until| *until > now).map(|until| When::ahead(until, now)),
            created: When::at(hook.created_at, now),
            edit: EndpointForm::of(hook),
            editing: false,
            edit_error: None,
        }
    }
}

/// The add form or an endpoint's edit form as shown: empty or as stored, or as submitted when it
/// was refused.
struct EndpointForm {
    url: String,
    format: String,
    /// (event type, what it means, ticked)
    events: Vec<(&'static str, &'static str, bool)>,
    description: String,
}

impl EndpointForm {
    fn fresh() -> Self {
        EndpointForm::ticked("", "standard", &[], "")
    }

    /// `hook` as stored. A chat endpoint on its format's defaults has nothing ticked, so saving
    /// the form unchanged keeps it on the defaults.
    fn of(hook: &Webhook) -> Self {
        let ticked: &[String] = if hook.events_default { &[] } else { &hook.events };
        EndpointForm::ticked(&hook.url, hook.format.as_str(), ticked, hook.description.as_deref().unwrap_or(""))
    }

    fn ticked(url: &str, format: &str, ticked: &[String], description: &str) -> Self {
        EndpointForm {
            url: url.to_string(),
            format: format.to_string(),
            events: EVENT_TYPES.iter().map(|e| (*e, event_meaning(e), ticked.iter().any(|t| t == e))).collect(),
            description: description.to_string(),
        }
    }
}

/// A signing secret just made (a new endpoint, a rotation): on this one response.
struct ShownSecret {
    webhook_id: String,
    url: String,
    format_label: &'static str,
    /// `None` for a chat format: its messages are not signed.
    secret: Option<String>,
    rotated: bool,
    /// After a rotation: until when the previous secret keeps signing.
    previous_until: Option<When>,
}

impl ShownSecret {
    fn of(hook: &Webhook, rotated: bool, now: i64) -> Self {
        ShownSecret {
            webhook_id: hook.id.clone(),
            url: hook.url.clone(),
            format_label: format_label(hook.format),
            secret: (!hook.format.is_chat()).then(|| hook.secret.expose().to_string()),
            rotated,
            previous_until: hook.previous_until.filter(|_| rotated).map(|until| When::ahead(until, now)),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/project_webhooks.html")]
struct WebhooksPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    /// Whether the person may see and change the endpoints (the service said so).
    allowed: bool,
    endpoints: Vec<EndpointRow>,
    form: EndpointForm,
    formats: &'static [(&'static str, &'static str)],
    max_endpoints: usize,
    max_url: usize,
    max_description: usize,
    shown: Option<ShownSecret>,
    notice: Option<String>,
    /// What to fix in the add form.
    error: Option<String>,
}

/// The tab for `opened`, its endpoints as the service lists them for the person (none, and
/// `allowed: false`, when it refuses them).
async fn list_page<'a>(
    state: &AppState,
    person: &'a Person,
    opened: OpenedProject,
    form: EndpointForm,
    shown: Option<ShownSecret>,
    error: Option<String>,
) -> PageResult<WebhooksPage<'a>> {
    let now = time::now_ms();
    let (allowed, endpoints) = match webhooks::list(&state.service, &opened.principal, &opened.project).await {
        Ok(hooks) => (true, hooks.iter().map(|hook| EndpointRow::of(hook, now)).collect()),
        Err(ServiceError::Refused(_)) => (false, Vec::new()),
        Err(other) => return Err(other.into()),
    };
    Ok(WebhooksPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        allowed,
        endpoints,
        form,
        formats: &FORMATS,
        max_endpoints: MAX_WEBHOOKS_PER_PROJECT,
        max_url: MAX_URL_LEN,
        max_description: MAX_DESCRIPTION_LEN,
        shown,
        notice: None,
        error,
    })
}

/// The status a page of the tab answers with: 403 for someone who may not see the endpoints.
fn page_status(page: &WebhooksPage) -> StatusCode {
    if page.allowed { StatusCode::OK } else { StatusCode::FORBIDDEN }
}

/// The page's words for an endpoint or a delivery the service did not find.
fn not_found(error: ServiceError) -> PageError {
    match error {
        ServiceError::NotFound(message) if message.starts_with("delivery") => {
            PageError::NotFound("This delivery is not in this endpoint's log (it may have been cleaned up).".into())
        }
        ServiceError::NotFound(_) => {
            PageError::NotFound("This project has no such webhook endpoint (it may have been deleted).".into())
        }
        other => other.into(),
    }
}

#[derive(Deserialize, Default)]
pub struct ListQuery {
    /// `enabled`, `disabled` or `saved`, with `webhook`.
    #[serde(default)]
    done: String,
    #[serde(default)]
    webhook: String,
    #[serde(default)]
    deleted: String,
    /// The endpoint whose edit form is open.
    #[serde(default)]
    edit: String,
}

/// `GET /projects/{id}/webhooks`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    Query(query): Query<ListQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "webhooks").await?;
    let mut view = list_page(&state, &person, opened, EndpointForm::fresh(), None, None).await?;
    if let Some(row) = view.endpoints.iter_mut().find(|hook| !query.edit.is_empty() && hook.id == query.edit) {
        row.editing = true;
    }
    // The notice says what the endpoint is now, and only for one that exists.
    let changed = view.endpoints.iter().find(|hook| !query.webhook.is_empty() && hook.id == query.webhook);
    view.notice = match (query.done.as_str(), changed) {
        ("saved", Some(hook)) => Some(format!(
            "{} is saved: events from now on are sent as set here, and deliveries still waiting go to this address.",
            hook.url
        )),
        ("enabled", Some(hook)) if hook.enabled => {
            Some(format!("{} is enabled: new events go to it, and deliveries that were waiting go out now.", hook.url))
        }
        ("disabled", Some(hook)) if !hook.enabled => {
            Some(format!("{} is disabled: no events are sent to it until it is enabled again.", hook.url))
        }
        _ if query.deleted == "1" => {
            Some("The endpoint is deleted with its delivery log: nothing more is sent to it.".into())
        }
        _ => None,
    };
    Ok(render(page_status(&view), &view))
}

#[derive(Deserialize)]
pub struct AddEndpointForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    format: String,
    #[serde(default)]
    event: Vec<String>,
    #[serde(default)]
    description: String,
}

/// `POST /projects/{id}/webhooks`: adds an endpoint and answers with the page showing its signing
/// secret this once. A refused form comes back filled in, with what to fix.
pub async fn create(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<AddEndpointForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let new = NewWebhook {
        url: form.url.clone(),
        events: Some(form.event.clone()),
        description: Some(form.description.clone()),
        format: Some(form.format.clone()),
    };
    let refused = match webhooks::create(&state.service, &state.webhooks, &opened.principal, &opened.project, new).await
    {
        Ok(hook) => {
            let shown = ShownSecret::of(&hook, false, time::now_ms());
            let view = list_page(&state, &person, opened, EndpointForm::fresh(), Some(shown), None).await?;
            return Ok(render(StatusCode::OK, &view));
        }
        Err(ServiceError::Invalid(message)) => (StatusCode::BAD_REQUEST, message),
        Err(ServiceError::Conflict(message)) => (StatusCode::CONFLICT, message),
        Err(other) => return Err(other.into()),
    };
    let refill = EndpointForm::ticked(&form.url, &form.format, &form.event, &form.description);
    let view = list_page(&state, &person, opened, refill, None, Some(capitalized(&refused.1))).await?;
    Ok(render(refused.0, &view))
}

#[derive(Deserialize)]
pub struct EditEndpointForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    event: Vec<String>,
    #[serde(default)]
    description: String,
}

/// `POST /projects/{id}/webhooks/{webhook}/edit`: changes an endpoint's URL, events and
/// description (its format stays), as `PATCH /api/v1/projects/{id}/webhooks/{webhook}` does. No
/// event ticked is an error for the standard format and the format's defaults for a chat one; an
/// empty description clears it. A refused form comes back open in the endpoint's card, filled in,
/// with what to fix.
pub async fn edit(
    State(state): State<AppState>,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<EditEndpointForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let changes = WebhookChanges {
        url: Some(form.url.clone()),
        events: Some(form.event.clone()),
        enabled: None,
        description: Some(Some(form.description.clone())),
    };
    let refused = match webhooks::update(
        &state.service,
        &state.webhooks,
        &opened.principal,
        &opened.project,
        &webhook_id,
        changes,
    )
    .await
    {
        Ok(hook) => {
            let back =
                format!("/projects/{}/webhooks?done=saved&webhook={}#webhook-{}", opened.project.id, hook.id, hook.id);
            return Ok(see_other_local(Some(&back)));
        }
        Err(ServiceError::Invalid(message)) => (StatusCode::BAD_REQUEST, message),
        Err(ServiceError::Conflict(message)) => (StatusCode::CONFLICT, message),
        Err(other) => return Err(not_found(other)),
    };
    let mut view = list_page(&state, &person, opened, EndpointForm::fresh(), None, None).await?;
    let row = view
        .endpoints
        .iter_mut()
        .find(|hook| hook.id == webhook_id)
        .ok_or_else(|| not_found(ServiceError::NotFound("webhook not found".into())))?;
    row.edit = EndpointForm::ticked(&form.url, &row.edit.format, &form.event, &form.description);
    row.editing = true;
    row.edit_error = Some(capitalized(&refused.1));
    Ok(render(refused.0, &view))
}

#[derive(Deserialize)]
pub struct EnabledForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    /// `on` or `off`.
    #[serde(default)]
    enabled: String,
    /// `log`: back to the endpoint's delivery log rather than the list.
    #[serde(default)]
    back: String,
}

/// `POST /projects/{id}/webhooks/{webhook}/enabled`: enables an endpoint (again: also one Svc
/// disabled, whose waiting deliveries then go out) or disables it.
pub async fn set_enabled(
    State(state): State<AppState>,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<EnabledForm>,
) -> PageResult<Response> {
    let enabled = match form.enabled.as_str() {
        "on" => true,
        "off" => false,
        other => return Err(PageError::BadRequest(format!("enabled must be on or off, not {other:?}."))),
    };
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let changes = WebhookChanges { enabled: Some(enabled), ..Default::default() };
    let hook =
        webhooks::update(&state.service, &state.webhooks, &opened.principal, &opened.project, &webhook_id, changes)
            .await
            .map_err(not_found)?;
    let done = if hook.enabled { "enabled" } else { "disabled" };
    let back = if form.back == "log" {
        format!("/projects/{}/webhooks/{}?done={done}", opened.project.id, hook.id)
    } else {
        format!("/projects/{}/webhooks?done={done}&webhook={}#webhook-{}", opened.project.id, hook.id, hook.id)
    };
    Ok(see_other_local(Some(&back)))
}

#[derive(Deserialize)]
pub struct CsrfOnlyForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

super::csrf_forms!(AddEndpointForm, EditEndpointForm, EnabledForm, CsrfOnlyForm);

/// `POST /projects/{id}/webhooks/{webhook}/delete`: deletes an endpoint with its delivery log.
pub async fn delete(
    State(state): State<AppState>,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<CsrfOnlyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    webhooks::delete(&state.service, &opened.principal, &opened.project, &webhook_id).await.map_err(not_found)?;
    Ok(see_other_local(Some(&format!("/projects/{}/webhooks?deleted=1", opened.project.id))))
}

/// `POST /projects/{id}/webhooks/{webhook}/rotate-secret`: a new signing secret, shown on the
/// answer this once; the previous one keeps signing beside it for 24 hours.
pub async fn rotate_secret(
    State(state): State<AppState>,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<CsrfOnlyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let hook = webhooks::rotate_secret(&state.service, &opened.principal, &opened.project, &webhook_id)
        .await
        .map_err(not_found)?;
    let shown = ShownSecret::of(&hook, true, time::now_ms());
    let view = list_page(&state, &person, opened, EndpointForm::fresh(), Some(shown), None).await?;
    Ok(render(StatusCode::OK, &view))
}

/// `POST /projects/{id}/webhooks/{webhook}/test`: sends a test event now, then shows how it went
/// on the endpoint's delivery log.
pub async fn send_test(
    State(state): State<AppState>,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<CsrfOnlyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let logged = webhooks::send_test(&state.service, &state.webhooks, &opened.principal, &opened.project, &webhook_id)
        .await
        .map_err(not_found)?;
    let back = format!("/projects/{}/webhooks/{}?tested={}", opened.project.id, webhook_id, logged.delivery.id);
    Ok(see_other_local(Some(&back)))
}

/// `POST /projects/{id}/webhooks/{webhook}/deliveries/{delivery}/resend`: sends a delivery again
/// now, then shows how it went.
pub async fn resend(
    State(state): State<AppState>,
    Path((project_id, webhook_id, delivery_id)): Path<(String, String, String)>,
    Submitted(person, _): Submitted<CsrfOnlyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let logged = webhooks::resend(
        &state.service,
        &state.webhooks,
        &opened.principal,
        &opened.project,
        &webhook_id,
        &delivery_id,
    )
    .await
    .map_err(not_found)?;
    let back = format!("/projects/{}/webhooks/{}?resent={}", opened.project.id, webhook_id, logged.delivery.id);
    Ok(see_other_local(Some(&back)))
}

/// One attempt at a delivery.
struct AttemptRow {
    at: When,
    status: Option<i64>,
    error: Option<String>,
    duration_ms: i64,
}

/// A delivery as the log lists it.
struct DeliveryRow {
    id: String,
    event_type: String,
    /// The `webhook-id` receivers dedupe by.
    message_id: String,
    /// `pending`, `delivered` or `failed`.
    state: &'static str,
    /// The endpoint's last answer (`None`: none, or not tried yet).
    status: Option<i64>,
    error: Option<String>,
    duration_ms: Option<i64>,
    created: When,
    /// When a pending delivery is tried next.
    next_retry: Option<When>,
    attempts: Vec<AttemptRow>,
}

impl DeliveryRow {
    fn of(logged: LoggedDelivery, now: i64) -> Self {
        let delivery = logged.delivery;
        let pending = delivery.state == DeliveryState::Pending;
        DeliveryRow {
            id: delivery.id,
            event_type: delivery.event_type,
            message_id: delivery.message_id,
            state: delivery.state.as_str(),
            status: delivery.last_status,
            error: delivery.last_error,
            duration_ms: delivery.last_duration_ms,
            created: When::at(delivery.created_at, now),
            next_retry: pending.then(|| When::ahead(delivery.next_attempt_at, now)),
            attempts: logged
                .attempts
                .into_iter()
                .map(|attempt| AttemptRow {
                    at: When::at(attempt.at, now),
                    status: attempt.status,
                    error: attempt.error,
                    duration_ms: attempt.duration_ms,
                })
                .collect(),
        }
    }
}

/// How a test event or a resend went, as the top of the log says it.
struct Outcome {
    delivered: bool,
    text: String,
}

/// The outcome of `row` (just tested or resent) on `hook`.
fn outcome(row: &DeliveryRow, hook: &EndpointRow, test: bool) -> Outcome {
    let answer = match (&row.error, row.status) {
        (Some(error), _) => error.trim_end_matches('.').to_string(),
        (None, Some(status)) => format!("answered {status}"),
        (None, None) => "no answer".into(),
    };
    let not_delivered = if test { "The test event was not delivered" } else { "Sent again, not delivered" };
    let text = match row.state {
        "delivered" => {
            let status = row.status.map(|s| format!(" {s}")).unwrap_or_default();
            let took = row.duration_ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default();
            let done = if test { "Test event delivered" } else { "Sent again and delivered" };
            return Outcome { delivered: true, text: format!("{done}: the endpoint answered{status}{took}.") };
        }
        // A disabled endpoint's resent delivery is not attempted (a test event is sent anyway).
        "pending" if !hook.enabled && !test => {
            "Queued again: this endpoint is disabled, so the delivery goes out when it is enabled again.".to_string()
        }
        "pending" => {
            let when = row.next_retry.as_ref().map(|at| at.relative.as_str()).unwrap_or("soon");
            format!("{not_delivered}: {answer}. Svc tries again {when}, and keeps trying for 24 hours.")
        }
        _ => format!("{not_delivered}: {answer}."),
    };
    Outcome { delivered: false, text }
}

#[derive(Template)]
#[template(path = "dashboard/project_webhook_log.html")]
struct LogPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    hook: EndpointRow,
    deliveries: Vec<DeliveryRow>,
    /// The id to pass as `before` for the next (older) page, when there may be one.
    older: Option<String>,
    /// Whether this is a later page (a link back to the newest).
    paged: bool,
    outcome: Option<Outcome>,
    notice: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct LogQuery {
    before: Option<String>,
    #[serde(default)]
    tested: String,
    #[serde(default)]
    resent: String,
    #[serde(default)]
    done: String,
}

/// `GET /projects/{id}/webhooks/{webhook}?before=<delivery id>`: the endpoint and its deliveries,
/// newest first, each with its attempts.
pub async fn log(
    State(state): State<AppState>,
    person: Person,
    Path((project_id, webhook_id)): Path<(String, String)>,
    Query(query): Query<LogQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "webhooks").await?;
    let hook =
        webhooks::get(&state.service, &opened.principal, &opened.project, &webhook_id).await.map_err(not_found)?;
    // Only a delivery id pages; anything else shows the newest.
    let before = query.before.filter(|id| ids::is_object_id(id));
    let page =
        webhooks::deliveries(&state.service, &opened.principal, &opened.project, &hook.id, before.as_deref(), LOG_PAGE)
            .await
            .map_err(not_found)?;
    let now = time::now_ms();
    let older = (page.len() == LOG_PAGE as usize).then(|| page.last().map(|d| d.delivery.id.clone())).flatten();
    let deliveries: Vec<DeliveryRow> = page.into_iter().map(|logged| DeliveryRow::of(logged, now)).collect();
    let hook = EndpointRow::of(&hook, now);
    let (wanted, test) = if query.tested.is_empty() { (&query.resent, false) } else { (&query.tested, true) };
    let outcome =
        deliveries.iter().find(|row| !wanted.is_empty() && row.id == *wanted).map(|row| outcome(row, &hook, test));
    let notice = match query.done.as_str() {
        "enabled" if hook.enabled => {
            Some("The endpoint is enabled: new events go to it, and deliveries that were waiting go out now.".into())
        }
        "disabled" if !hook.enabled => {
            Some("The endpoint is disabled: no events are sent to it until it is enabled again.".into())
        }
        _ => None,
    };
    let view = LogPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        hook,
        deliveries,
        older,
        paged: before.is_some(),
        outcome,
        notice,
    };
    Ok(render(StatusCode::OK, &view))
}
