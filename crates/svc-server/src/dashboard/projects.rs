//! Projects: the list of every project a person reaches, creating one, and the frame every
//! project settings page shares (its header and tabs). The tabs live in modules of their own.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::model::Project;
use svc_core::time;
use svc_service::permissions::{self, Operation, OrgOperation};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::projects;

/// A settings tab of a project: its path segment and its label.
pub const TABS: [(&str, &str); 11] = [
    ("install", "Install"),
    ("widget", "Widget"),
    ("channels", "Channels"),
    ("keys", "Keys"),
    ("webhooks", "Webhooks"),
    ("integrations", "Integrations"),
    ("identity", "Identity"),
    ("flags", "Flags"),
    ("retention", "Retention"),
    ("audit", "Audit log"),
    ("settings", "Settings"),
];

/// What every project settings page shows around its tab: the project, its organization, the
/// tabs with the current one marked, and what the person may change.
pub struct ProjectFrame {
    pub id: String,
    pub name: String,
    pub org_name: String,
    pub tab: &'static str,
    pub tabs: &'static [(&'static str, &'static str)],
    /// Whether the person may change the project's settings (owners).
    pub can_manage: bool,
}

/// Project `project_id` if the principal reaches it; 404 otherwise (whether it exists elsewhere
/// is not told).
pub async fn reachable(state: &AppState, principal: &Principal, project_id: &str) -> PageResult<Project> {
    projects::reachable(&state.service, principal)
        .await?
        .into_iter()
        .find(|p| p.id == project_id)
        .ok_or_else(|| PageError::NotFound("No such project.".into()))
}

/// A project a signed-in person opened, checked: they reach it and hold `needed` in it.
pub struct OpenedProject {
    pub principal: Principal,
    pub project: Project,
    pub frame: ProjectFrame,
}

/// Opens project `project_id` for `person`, refusing with 404 when they do not reach it and
/// 403 when they may not do `op` there.
pub async fn open(
    state: &AppState,
    person: &Person,
    project_id: &str,
    op: Operation,
    tab: &'static str,
) -> PageResult<OpenedProject> {
    let principal = person.principal();
    let project = reachable(state, &principal, project_id).await?;
    permissions::check(&principal, op, &project)?;
    let org_name =
        projects::find_organization(&state.service, &project.org_id).await?.map(|org| org.name).unwrap_or_default();
    let can_manage = permissions::check(&principal, Operation::ConfigureProject, &project).is_ok();
    let frame =
        ProjectFrame { id: project.id.clone(), name: project.name.clone(), org_name, tab, tabs: &TABS, can_manage };
    Ok(OpenedProject { principal, project, frame })
}

struct ProjectRow {
    id: String,
    name: String,
    org_name: String,
    project_key: String,
    created: When,
}

struct OrgChoice {
    id: String,
    name: String,
}

#[derive(Template)]
#[template(path = "dashboard/projects.html")]
struct ProjectsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    projects: Vec<ProjectRow>,
    /// Organizations where the person may create projects (owner).
    owned: Vec<OrgChoice>,
    /// After a project was deleted.
    notice: Option<&'static str>,
}

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    deleted: String,
}

/// `GET /projects`
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<ListQuery>,
) -> PageResult<Response> {
    let now = time::now_ms();
    let principal = person.principal();
    let mut org_names = std::collections::HashMap::new();
    let mut owned = Vec::new();
    for membership in &person.signed_in.memberships {
        let name = projects::find_organization(&state.service, &membership.org_id)
            .await?
            .map(|org| org.name)
            .unwrap_or_default();
        if permissions::check_org(&principal, OrgOperation::CreateProject, &membership.org_id).is_ok() {
            owned.push(OrgChoice { id: membership.org_id.clone(), name: name.clone() });
        }
        org_names.insert(membership.org_id.clone(), name);
    }
    let rows = projects::reachable(&state.service, &person.principal())
        .await?
        .into_iter()
        .map(|project| ProjectRow {
            org_name: org_names.get(&project.org_id).cloned().unwrap_or_default(),
            created: When::at(project.created_at, now),
            id: project.id,
            name: project.name,
            project_key: project.project_key,
        })
        .collect();
    let page = ProjectsPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        projects: rows,
        owned,
        notice: (query.deleted == "1").then_some("The project was deleted, with everything in it."),
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct NewProjectForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    name: String,
    org: String,
}
super::csrf_forms!(NewProjectForm);

/// `POST /projects`: creates a project (owners of its organization) and opens its install page.
pub async fn create(
    State(state): State<AppState>,
    Submitted(person, form): Submitted<NewProjectForm>,
) -> PageResult<Response> {
    let principal = person.principal();
    if permissions::check_org(&principal, OrgOperation::CreateProject, &form.org).is_err() {
        return Err(PageError::Forbidden("Only an owner of the organization can create projects in it.".into()));
    }
    let project = projects::create_project(&state.service, &principal, &form.org, form.name.trim()).await?;
    Ok(see_other_local(Some(&format!("/projects/{}/install", project.id))))
}

/// `GET /projects/{id}`: a project opens on its install page.
pub async fn show(Path(project_id): Path<String>) -> Response {
    see_other_local(Some(&format!("/projects/{}/install", urlencoding_path(&project_id))))
}

/// A path segment from user input, percent-encoded.
fn urlencoding_path(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}
