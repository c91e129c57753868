//! A project's Settings, Retention and Audit log tabs: renaming and deleting the project, how long
//! its reports are kept, and who did what to it.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::audit::describe;
use svc_core::project::{ProjectChanges, RETENTION_DAYS_MAX};
use svc_core::time;
use svc_service::permissions::Operation;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{OpenedProject, ProjectFrame, open};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::{audit, projects};

/// Events per page of the audit log.
const AUDIT_PAGE: u32 = 50;

#[derive(Deserialize, Default)]
pub struct NoticeQuery {
    #[serde(default)]
    saved: String,
}

#[derive(Template)]
#[template(path = "dashboard/project_settings.html")]
struct SettingsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    slug: String,
    project_key: String,
    created: When,
    /// The name field's value: the stored name, or what was typed when it was refused.
    name_value: String,
    notice: Option<&'static str>,
    rename_error: Option<String>,
    delete_error: Option<String>,
}

fn settings_page<'a>(person: &'a Person, opened: OpenedProject) -> SettingsPage<'a> {
    let project = opened.project;
    SettingsPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        slug: project.slug,
        project_key: project.project_key,
        created: When::at(project.created_at, time::now_ms()),
        name_value: project.name,
        notice: None,
        rename_error: None,
        delete_error: None,
    }
}

/// `GET /projects/{id}/settings`
pub async fn settings(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Query(query): Query<NoticeQuery>,
    person: Person,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::ReadProject, "settings").await?;
    let mut page = settings_page(&person, opened);
    page.notice = (query.saved == "name").then_some("The project is renamed.");
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct RenameForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    name: String,
}
super::csrf_forms!(RenameForm);

/// `POST /projects/{id}/settings`: renames the project (the same operation as REST PATCH `name`).
pub async fn rename(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<RenameForm>,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::ConfigureProject, "settings").await?;
    let by = opened.principal.author();
    let name = form.name.trim().to_string();
    let changes = ProjectChanges::parse(ProjectChanges { name: Some(name.clone()), ..Default::default() });
    let outcome = match changes {
        Ok(changes) => projects::update_project(&state.service, opened.project.clone(), changes, &by).await,
        Err(invalid) => Err(invalid.into()),
    };
    match outcome {
        Ok(_) => Ok(see_other_local(Some(&format!("/projects/{}/settings?saved=name", opened.project.id)))),
        Err(svc_service::ServiceError::Invalid(message)) => {
            let mut page = settings_page(&person, opened);
            page.name_value = form.name;
            page.rename_error = Some(message);
            Ok(render(StatusCode::BAD_REQUEST, &page))
        }
        Err(other) => Err(other.into()),
    }
}

#[derive(Deserialize)]
pub struct DeleteForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    #[serde(default)]
    confirm: String,
}
super::csrf_forms!(DeleteForm);

/// `POST /projects/{id}/delete`: deletes the project and everything in it, once the person (an
/// owner) has typed its name; then back to the projects.
pub async fn delete(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<DeleteForm>,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::DeleteProject, "settings").await?;
    if let Err(refused) = svc_core::project::confirm_deletion(&opened.project.name, &form.confirm) {
        let mut page = settings_page(&person, opened);
        page.delete_error = Some(refused.0);
        return Ok(render(StatusCode::BAD_REQUEST, &page));
    }
    projects::delete_project(&state.service, &opened.principal, &opened.project).await?;
    Ok(see_other_local(Some("/projects?deleted=1")))
}

#[derive(Template)]
#[template(path = "dashboard/project_retention.html")]
struct RetentionPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    retention_days: Option<i64>,
    /// The days field's value.
    days_value: String,
    max_days: i64,
    notice: Option<&'static str>,
    error: Option<String>,
}

fn retention_page<'a>(person: &'a Person, opened: OpenedProject) -> RetentionPage<'a> {
    let days = opened.project.retention_days;
    RetentionPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        retention_days: days,
        days_value: days.map(|d| d.to_string()).unwrap_or_default(),
        max_days: RETENTION_DAYS_MAX,
        notice: None,
        error: None,
    }
}

/// `GET /projects/{id}/retention`
pub async fn retention(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Query(query): Query<NoticeQuery>,
    person: Person,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::ReadProject, "retention").await?;
    let mut page = retention_page(&person, opened);
    page.notice = match query.saved.as_str() {
        "on" => Some("Saved. Older reports are deleted within a minute or two."),
        "off" => Some("Saved. Every report is kept."),
        _ => None,
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct RetentionForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    /// `save` (with `days`; empty keeps every report) or `off`.
    #[serde(default)]
    action: String,
    #[serde(default)]
    days: String,
}
super::csrf_forms!(RetentionForm);

/// The days a retention form asks for: `None` keeps every report.
fn requested_days(form: &RetentionForm) -> Result<Option<i64>, String> {
    let text = form.days.trim();
    if form.action == "off" || text.is_empty() {
        return Ok(None);
    }
    let days: i64 = text.parse().map_err(|_| {
        format!("Days must be a whole number from 1 to {RETENTION_DAYS_MAX}, or empty to keep every report.")
    })?;
    svc_core::project::validate_retention_days(days).map(Some).map_err(|invalid| invalid.0)
}

/// `POST /projects/{id}/retention`: the same operation as REST PATCH `retentionDays`.
pub async fn set_retention(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<RetentionForm>,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::ConfigureProject, "retention").await?;
    let days = match requested_days(&form) {
        Ok(days) => days,
        Err(message) => {
            let mut page = retention_page(&person, opened);
            page.days_value = form.days;
            page.error = Some(message);
            return Ok(render(StatusCode::BAD_REQUEST, &page));
        }
    };
    let changes = ProjectChanges::parse(ProjectChanges { retention_days: Some(days), ..Default::default() })
        .map_err(|invalid| PageError::BadRequest(invalid.0))?;
    let by = opened.principal.author();
    projects::update_project(&state.service, opened.project.clone(), changes, &by).await?;
    let saved = if days.is_some() { "on" } else { "off" };
    Ok(see_other_local(Some(&format!("/projects/{}/retention?saved={saved}", opened.project.id))))
}

struct AuditRow {
    when: When,
    who: String,
    kind: &'static str,
    what: String,
}

#[derive(Template)]
#[template(path = "dashboard/project_audit.html")]
struct AuditPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    events: Vec<AuditRow>,
    /// The id to pass as `before` for the next (older) page, when there may be one.
    older: Option<String>,
    /// Whether this is a later page (a link back to the newest).
    paged: bool,
}

#[derive(Deserialize, Default)]
pub struct AuditQuery {
    before: Option<String>,
}

/// What kind of actor did it, in words.
fn actor_kind(kind: &str) -> &'static str {
    match kind {
        "user" => "person",
        "agent" => "key",
        "cli" => "command line",
        "system" => "Svc",
        "reporter" => "reporter",
        _ => "other",
    }
}

/// `GET /projects/{id}/audit?before=<event id>`: the project's log, newest first.
pub async fn audit_log(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Query(query): Query<AuditQuery>,
    person: Person,
) -> PageResult<Response> {
    let opened = open(&state, &person, &project_id, Operation::ReadProject, "audit").await?;
    // Only an event id pages; anything else shows the newest.
    let before = query.before.filter(|id| svc_core::ids::is_object_id(id));
    let events = audit::list(&state.service, &opened.project, before.as_deref(), AUDIT_PAGE).await?;
    let now = time::now_ms();
    let older = (events.len() == AUDIT_PAGE as usize).then(|| events.last().map(|e| e.id.clone())).flatten();
    let rows = events
        .into_iter()
        .map(|event| AuditRow {
            when: When::at(event.at, now),
            who: event.actor.label.clone().or(event.actor.id.clone()).unwrap_or_else(|| "unknown".into()),
            kind: actor_kind(event.actor.kind.as_str()),
            what: describe(&event.action, &event.detail),
        })
        .collect();
    let page = AuditPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        events: rows,
        older,
        paged: before.is_some(),
    };
    Ok(render(StatusCode::OK, &page))
}
