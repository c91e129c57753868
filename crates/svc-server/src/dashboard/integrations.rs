//! A project's Integrations tab: the GitHub repository its reports become issues in (a
//! fine-grained token or a GitHub App, GitHub.com or an Enterprise Server), the way back (the
//! webhook URL and secret to enter in GitHub), how an issue's state moves the report, which way
//! status and comments travel, the channels whose new reports become issues, "Check connection",
//! and Disconnect. Only people who may change the project's settings see it; every call goes
//! through `service::trackers`, which checks that and records each change in the audit log.
//! Also "Create GitHub issue" on a report, and on a selection of reports.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::status::{STATUSES, Status};
use svc_core::time;
use svc_core::tracker::{AuthKind, ChannelRule, TrackerConnection, TrackerKind};
use svc_service::ServiceError;
use svc_service::permissions::Operation;
use svc_service::trackers::{self, Check, ConnectionInput, PushError};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;

/// A channel's row in the rules: whether its new reports become issues, with which labels.
struct RuleRow {
    key: String,
    name: String,
    on: bool,
    labels: String,
}

/// The connection as the tab shows it.
struct Connected {
    repository: String,
    /// The repository's page on GitHub (or the Enterprise Server).
    repository_url: String,
    auth_label: &'static str,
    last_error: Option<String>,
    last_error_at: Option<When>,
    since: When,
}

/// The form: as stored (or the defaults), or as submitted when it was refused.
struct ConnectionForm {
    repository: String,
    api_url: String,
    auth: &'static str,
    app_id: String,
    installation_id: String,
    token_set: bool,
    key_set: bool,
    on_closed_completed: String,
    on_closed_not_planned: String,
    on_reopened: String,
    send_status: bool,
    send_comments: bool,
    mirror_comments: bool,
    include_reporter_email: bool,
    rules: Vec<RuleRow>,
}

impl ConnectionForm {
    fn of(connection: Option<&TrackerConnection>, channels: &[(String, String)]) -> Self {
        let defaults = svc_core::tracker::TrackerSettings::new(String::new(), AuthKind::Token);
        let settings = connection.map_or(&defaults, |c| &c.settings);
        ConnectionForm {
            repository: settings.repository.clone(),
            api_url: settings.api_url.clone(),
            auth: settings.auth.as_str(),
            app_id: settings.app_id.clone().unwrap_or_default(),
            installation_id: settings.installation_id.map(|i| i.to_string()).unwrap_or_default(),
            token_set: connection.is_some_and(|c| c.settings.auth == AuthKind::Token),
            key_set: connection.is_some_and(|c| c.settings.auth == AuthKind::App),
            on_closed_completed: settings.on_closed_completed.as_str().into(),
            on_closed_not_planned: settings.on_closed_not_planned.as_str().into(),
            on_reopened: settings.on_reopened.as_str().into(),
            send_status: settings.send_status,
            send_comments: settings.send_comments,
            mirror_comments: settings.mirror_comments,
            include_reporter_email: settings.include_reporter_email,
            rules: channels
                .iter()
                .map(|(key, name)| {
                    let rule = settings.rule_for(key);
                    RuleRow {
                        key: key.clone(),
                        name: name.clone(),
                        on: rule.is_some(),
                        labels: rule.map(|r| r.labels.join(", ")).unwrap_or_default(),
                    }
                })
                .collect(),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/project_integrations.html")]
struct IntegrationsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    allowed: bool,
    connected: Option<Connected>,
    form: ConnectionForm,
    webhook_url: String,
    statuses: &'static [&'static str],
    open_statuses: &'static [&'static str],
    /// The webhook secret Svc just made: on this one response.
    new_secret: Option<String>,
    check: Option<Check>,
    notice: Option<String>,
    error: Option<String>,
}

/// The repository's page: GitHub.com's, or the Enterprise Server's (its API under `/api/v3`).
fn repository_url(connection: &TrackerConnection) -> String {
    let settings = &connection.settings;
    let web = if settings.api_url == svc_core::tracker::GITHUB_API_URL {
        "https://github.com".to_string()
    } else {
        settings.api_url.trim_end_matches("/api/v3").to_string()
    };
    format!("{web}/{}", settings.repository)
}

async fn tab<'a>(
    state: &AppState,
    person: &'a Person,
    opened: OpenedProject,
    form: Option<ConnectionForm>,
) -> PageResult<IntegrationsPage<'a>> {
    let now = time::now_ms();
    let (allowed, connection) = match trackers::get(&state.service, &opened.principal, &opened.project).await {
        Ok(connection) => (true, connection),
        Err(ServiceError::Refused(_)) => (false, None),
        Err(other) => return Err(other.into()),
    };
    let channels: Vec<(String, String)> = svc_service::channels::list(&state.service, &opened.project.id, false)
        .await?
        .iter()
        .map(|c| (c.key.clone(), c.name.clone()))
        .collect();
    let connected = connection.as_ref().map(|c| Connected {
        repository: c.settings.repository.clone(),
        repository_url: repository_url(c),
        auth_label: match c.settings.auth {
            AuthKind::Token => "a fine-grained personal access token",
            AuthKind::App => "a GitHub App",
        },
        last_error: c.last_error.clone(),
        last_error_at: c.last_error_at.map(|at| When::at(at, now)),
        since: When::at(c.created_at, now),
    });
    Ok(IntegrationsPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        form: form.unwrap_or_else(|| ConnectionForm::of(connection.as_ref(), &channels)),
        frame: opened.frame,
        allowed,
        connected,
        webhook_url: state.trackers.webhook_url(TrackerKind::Github),
        statuses: &STATUSES,
        open_statuses: &STATUSES[..3],
        new_secret: None,
        check: None,
        notice: None,
        error: None,
    })
}

fn page_status(page: &IntegrationsPage) -> StatusCode {
    if page.allowed { StatusCode::OK } else { StatusCode::FORBIDDEN }
}

/// `GET /projects/{id}/integrations`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "integrations").await?;
    let mut view = tab(&state, &person, opened, None).await?;
    view.notice = match query.get("done").map(String::as_str) {
        Some("saved") => Some("Saved: the connection works as set here from now on.".into()),
        Some("disconnected") => Some(
            "Disconnected: nothing more goes to GitHub or comes from it. Reports keep their links to the issues made."
                .into(),
        ),
        _ => None,
    };
    Ok(render(page_status(&view), &view))
}

#[derive(Deserialize)]
pub struct ConnectForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    repository: String,
    #[serde(default)]
    api_url: String,
    #[serde(default)]
    auth: String,
    #[serde(default)]
    token: String,
    #[serde(default)]
    app_id: String,
    #[serde(default)]
    installation_id: String,
    #[serde(default)]
    private_key: String,
    #[serde(default)]
    webhook_secret: String,
    #[serde(default)]
    on_closed_completed: String,
    #[serde(default)]
    on_closed_not_planned: String,
    #[serde(default)]
    on_reopened: String,
    #[serde(default)]
    send_status: Option<String>,
    #[serde(default)]
    send_comments: Option<String>,
    #[serde(default)]
    mirror_comments: Option<String>,
    #[serde(default)]
    include_reporter_email: Option<String>,
    /// The channel keys whose new reports become issues.
    #[serde(default)]
    rule: Vec<String>,
    /// `labels_<channel key>` fields, read from the raw form.
    #[serde(flatten)]
    other: std::collections::HashMap<String, String>,
}

#[derive(Deserialize)]
pub struct CsrfOnly {
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

super::csrf_forms!(ConnectForm, CsrfOnly);

fn input_of(form: &ConnectForm) -> Result<ConnectionInput, String> {
    let status = |name: &str, text: &str| -> Result<Option<Status>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        text.parse::<Status>().map(Some).map_err(|_| format!("{name}: {}", Status::expected()))
    };
    let installation_id = match form.installation_id.trim() {
        "" => None,
        text => Some(text.parse::<i64>().map_err(|_| "The installation id is a number.".to_string())?),
    };
    let rules = form
        .rule
        .iter()
        .map(|key| ChannelRule {
            channel_key: key.clone(),
            labels: form
                .other
                .get(&format!("labels_{key}"))
                .map(|text| text.split(',').map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect())
                .unwrap_or_default(),
        })
        .collect();
    let text = |value: &str| Some(value.trim().to_string()).filter(|v| !v.is_empty());
    Ok(ConnectionInput {
        repository: form.repository.clone(),
        api_url: text(&form.api_url),
        auth: text(&form.auth),
        token: text(&form.token),
        app_id: text(&form.app_id),
        installation_id,
        private_key: text(&form.private_key),
        webhook_secret: text(&form.webhook_secret),
        on_closed_completed: status("When an issue is closed as completed", &form.on_closed_completed)?,
        on_closed_not_planned: status("When an issue is closed as not planned", &form.on_closed_not_planned)?,
        on_reopened: status("When an issue is reopened", &form.on_reopened)?,
        send_status: Some(form.send_status.is_some()),
        send_comments: Some(form.send_comments.is_some()),
        mirror_comments: Some(form.mirror_comments.is_some()),
        include_reporter_email: Some(form.include_reporter_email.is_some()),
        rules: Some(rules),
    })
}

/// The form as submitted (secrets never echoed back).
fn submitted(form: &ConnectForm, channels: &[(String, String)], existing: &ConnectionForm) -> ConnectionForm {
    ConnectionForm {
        repository: form.repository.clone(),
        api_url: form.api_url.clone(),
        auth: AuthKind::parse(&form.auth).unwrap_or(AuthKind::Token).as_str(),
        app_id: form.app_id.clone(),
        installation_id: form.installation_id.clone(),
        token_set: existing.token_set,
        key_set: existing.key_set,
        on_closed_completed: form.on_closed_completed.clone(),
        on_closed_not_planned: form.on_closed_not_planned.clone(),
        on_reopened: form.on_reopened.clone(),
        send_status: form.send_status.is_some(),
        send_comments: form.send_comments.is_some(),
        mirror_comments: form.mirror_comments.is_some(),
        include_reporter_email: form.include_reporter_email.is_some(),
        rules: channels
            .iter()
            .map(|(key, name)| RuleRow {
                key: key.clone(),
                name: name.clone(),
                on: form.rule.contains(key),
                labels: form.other.get(&format!("labels_{key}")).cloned().unwrap_or_default(),
            })
            .collect(),
    }
}

/// `POST /projects/{id}/integrations`: connects the repository or saves the connection. A new
/// connection's webhook secret (when Svc made it) is shown on this answer only.
pub async fn save(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<ConnectForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "integrations").await?;
    let (principal, project) = (opened.principal.clone(), opened.project.clone());
    let refused = match input_of(&form) {
        Err(message) => message,
        Ok(input) => match trackers::connect(&state.service, &principal, &project, input).await {
            Ok(connected) => {
                let Some(secret) = connected.new_webhook_secret else {
                    return Ok(see_other_local(Some(&format!("/projects/{}/integrations?done=saved", project.id))));
                };
                let mut view = tab(&state, &person, opened, None).await?;
                view.new_secret = Some(secret.expose().to_string());
                return Ok(render(StatusCode::OK, &view));
            }
            Err(ServiceError::Invalid(message) | ServiceError::Conflict(message)) => message,
            Err(other) => return Err(other.into()),
        },
    };
    let mut view = tab(&state, &person, opened, None).await?;
    let channels: Vec<(String, String)> = view.form.rules.iter().map(|r| (r.key.clone(), r.name.clone())).collect();
    view.form = submitted(&form, &channels, &view.form);
    view.error = Some(refused);
    Ok(render(StatusCode::BAD_REQUEST, &view))
}

/// `POST /projects/{id}/integrations/check`: reads the repository with the saved credentials and
/// shows what works and what is missing.
pub async fn check(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, _form): Submitted<CsrfOnly>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "integrations").await?;
    let found = trackers::check(&state.service, &state.trackers, &opened.principal, &opened.project).await?;
    let mut view = tab(&state, &person, opened, None).await?;
    view.check = Some(found);
    Ok(render(StatusCode::OK, &view))
}

/// `POST /projects/{id}/integrations/disconnect`
pub async fn disconnect(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, _form): Submitted<CsrfOnly>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "integrations").await?;
    trackers::disconnect(&state.service, &opened.principal, &opened.project).await?;
    Ok(see_other_local(Some(&format!("/projects/{project_id}/integrations?done=disconnected"))))
}

#[derive(Deserialize)]
pub struct PushForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    back: String,
}

super::csrf_forms!(PushForm);

/// What GitHub said, for the page that tells a person their issue was not made.
fn push_refused(error: PushError) -> PageError {
    match error {
        PushError::Service(error) => error.into(),
        PushError::Tracker(error) => PageError::BadRequest(format!("GitHub did not make the issue: {error}")),
    }
}

/// `POST /reports/{id}/github-issue`: "Create GitHub issue" on the report view; back to the
/// report, which shows the link. What GitHub refused is said on a page of its own.
pub async fn push(
    State(state): State<AppState>,
    Path(report_id): Path<String>,
    Submitted(person, form): Submitted<PushForm>,
) -> PageResult<Response> {
    let (report, project) = super::inbox::writable_report_in(&state, &person, &report_id).await?;
    trackers::push(&state.service, &state.trackers, &person.principal(), &project, &report)
        .await
        .map_err(push_refused)?;
    Ok(super::inbox::back_to(&form.back, &report.id))
}

/// "Create GitHub issues" on a selection: one issue each, in order; a project without a
/// connected repository, or GitHub's refusal, stops there and says so (the issues made so far
/// stay made and linked).
pub async fn push_each(
    state: &AppState,
    principal: &svc_service::principal::Principal,
    projects: &[svc_core::model::Project],
    reports: &[svc_core::model::Report],
) -> PageResult<()> {
    for report in reports {
        let Some(project) = projects.iter().find(|p| p.id == report.project_id) else { continue };
        trackers::push(&state.service, &state.trackers, principal, project, report).await.map_err(push_refused)?;
    }
    Ok(())
}
