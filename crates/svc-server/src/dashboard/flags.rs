//! A project's Flags tab: the flags `Svc.alpha(key)` asks about (key, on or off, last change),
//! creating one and turning one on or off. Changes go through `service::flags::set`, the operation
//! behind the REST `PUT .../flags/:key`, and are in the audit log.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::time;
use svc_service::permissions::Operation;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::{ServiceError, flags};

struct FlagRow {
    key: String,
    enabled: bool,
    updated: When,
}

#[derive(Template)]
#[template(path = "dashboard/project_flags.html")]
struct FlagsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    flags: Vec<FlagRow>,
    notice: Option<String>,
    error: Option<String>,
    /// The new-flag form as submitted (kept when refused).
    new_key: String,
    new_enabled: bool,
    /// A flag key for the snippet: the first flag's, else an example.
    example_key: String,
}

#[derive(Deserialize, Default)]
pub struct FlagsQuery {
    #[serde(default)]
    done: String,
    #[serde(default)]
    key: String,
}

/// `GET /projects/{id}/flags`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    Query(query): Query<FlagsQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "flags").await?;
    // The notice says what the flag is now, and only for a flag that exists.
    let flag = flags::list(&state.service, &opened.project.id).await?.into_iter().find(|f| f.key == query.key);
    let notice = match (query.done.as_str(), flag) {
        ("on" | "off", Some(flag)) => {
            Some(format!("The flag {} is {}.", flag.key, if flag.enabled { "on" } else { "off" }))
        }
        _ => None,
    };
    respond(&state, &person, opened, notice, None, (String::new(), true), StatusCode::OK).await
}

async fn respond(
    state: &AppState,
    person: &Person,
    opened: OpenedProject,
    notice: Option<String>,
    error: Option<String>,
    (new_key, new_enabled): (String, bool),
    status: StatusCode,
) -> PageResult<Response> {
    let OpenedProject { project, frame, .. } = opened;
    let now = time::now_ms();
    let mut listed = flags::list(&state.service, &project.id).await?;
    listed.sort_by(|a, b| a.key.cmp(&b.key));
    let example_key = listed.first().map(|f| f.key.clone()).unwrap_or_else(|| "new-checkout".into());
    let rows = listed
        .into_iter()
        .map(|f| FlagRow { key: f.key, enabled: f.enabled, updated: When::at(f.updated_at, now) })
        .collect();
    let page = FlagsPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame,
        flags: rows,
        notice,
        error,
        new_key,
        new_enabled,
        example_key,
    };
    Ok(render(status, &page))
}

#[derive(Deserialize)]
pub struct FlagForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    key: String,
    /// `on` or `off` (the toggle), or the checkbox's `on` (absent: off).
    #[serde(default)]
    enabled: String,
}
super::csrf_forms!(FlagForm);

/// `POST /projects/{id}/flags`: creates a flag (on or off).
pub async fn create(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<FlagForm>,
) -> PageResult<Response> {
    let key = form.key.trim().to_string();
    let enabled = form.enabled == "on";
    set(state, person, project_id, key, enabled, true).await
}

/// `POST /projects/{id}/flags/{key}`: turns a flag on or off.
pub async fn toggle(
    State(state): State<AppState>,
    Path((project_id, key)): Path<(String, String)>,
    Submitted(person, form): Submitted<FlagForm>,
) -> PageResult<Response> {
    let enabled = match form.enabled.as_str() {
        "on" => true,
        "off" => false,
        other => return Err(PageError::BadRequest(format!("enabled must be on or off, not {other:?}."))),
    };
    set(state, person, project_id, key, enabled, false).await
}

async fn set(
    state: AppState,
    person: Person,
    project_id: String,
    key: String,
    enabled: bool,
    creating: bool,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "flags").await?;
    let by = opened.principal.author();
    match flags::set(&state.service, &opened.project, &key, enabled, &by).await {
        Ok(flag) => {
            let key: String = url::form_urlencoded::byte_serialize(flag.key.as_bytes()).collect();
            let done = if flag.enabled { "on" } else { "off" };
            Ok(see_other_local(Some(&format!(
                "/projects/{}/flags?done={done}&key={key}#flag-{key}",
                opened.project.id
            ))))
        }
        Err(ServiceError::Invalid(message)) if creating => {
            respond(&state, &person, opened, None, Some(message), (key, enabled), StatusCode::BAD_REQUEST).await
        }
        Err(error) => Err(error.into()),
    }
}
