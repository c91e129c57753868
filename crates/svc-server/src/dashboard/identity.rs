//! A project's Identity tab: whether an identity secret is set; setting one (generated here and
//! shown once, or pasted), rotating it (a new one: the old stops verifying at once) and clearing
//! it; and how a site signs identity tokens with it (decisions §3 "Identity"). The secret is never
//! shown again after the response that set it. Changes go through
//! `service::projects::set_identity_secret`, as the CLI's do, and are in the audit log.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use svc_core::{ids, scope};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::session::Person;
use super::{Submitted, render};
use crate::service::projects as project_service;
use crate::state::AppState;

/// Generated secrets: 48 base62 characters (about 285 random bits).
const GENERATED_SECRET_CHARS: usize = 48;

#[derive(Template)]
#[template(path = "dashboard/project_identity.html")]
struct IdentityPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    secret_set: bool,
    /// The secret just generated, shown this once.
    new_secret: Option<String>,
    notice: Option<&'static str>,
    error: Option<String>,
    base_url: &'a str,
    project_key: &'a str,
}

#[derive(Deserialize, Default)]
pub struct IdentityQuery {
    #[serde(default)]
    done: String,
}

/// `GET /projects/{id}/identity`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    Query(query): Query<IdentityQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, scope::PROJECT_READ, "identity").await?;
    let notice = match query.done.as_str() {
        "set" => Some("The identity secret is set. Tokens signed with the old one (if any) no longer verify."),
        "cleared" => Some("The identity secret is cleared: the x-svc-identity header is now ignored."),
        _ => None,
    };
    Ok(respond(&state, &person, opened, None, notice, None, StatusCode::OK))
}

fn respond(
    state: &AppState,
    person: &Person,
    opened: OpenedProject,
    new_secret: Option<String>,
    notice: Option<&'static str>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    let OpenedProject { project, frame, .. } = opened;
    let page = IdentityPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame,
        secret_set: project.identity_secret.is_some(),
        new_secret,
        notice,
        error,
        base_url: state.config.public_url.trim_end_matches('/'),
        project_key: &project.project_key,
    };
    render(status, &page)
}

#[derive(Deserialize)]
pub struct IdentityForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    /// `generate`, `set` or `clear`.
    #[serde(default)]
    action: String,
    /// With `set`: the secret to use.
    #[serde(default)]
    secret: String,
    /// With `clear`: `yes` once the person confirmed.
    #[serde(default)]
    confirm: String,
}
super::csrf_forms!(IdentityForm);

/// `POST /projects/{id}/identity`: generates (and shows once), sets or clears the secret.
pub async fn change(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<IdentityForm>,
) -> PageResult<Response> {
    let mut opened = projects::open(&state, &person, &project_id, scope::PROJECT_WRITE, "identity").await?;
    let by = opened.principal.author();
    let store = &*state.store;
    match form.action.as_str() {
        "generate" => {
            let secret = ids::new_random_secret(GENERATED_SECRET_CHARS);
            project_service::set_identity_secret(store, &opened.project, Some(&secret), &by).await?;
            opened.project.identity_secret = Some(secret.clone());
            Ok(respond(&state, &person, opened, Some(secret), None, None, StatusCode::OK))
        }
        "set" => {
            let secret = form.secret.trim();
            match project_service::set_identity_secret(store, &opened.project, Some(secret), &by).await {
                Ok(()) => {
                    Ok(Redirect::to(&format!("/projects/{}/identity?done=set", opened.project.id)).into_response())
                }
                Err(crate::service::ServiceError::Invalid(message)) => {
                    Ok(respond(&state, &person, opened, None, None, Some(message), StatusCode::BAD_REQUEST))
                }
                Err(other) => Err(other.into()),
            }
        }
        "clear" => {
            if form.confirm != "yes" {
                let message = "Tick the box to confirm: clearing the secret stops every identity token from verifying.";
                return Ok(respond(&state, &person, opened, None, None, Some(message.into()), StatusCode::BAD_REQUEST));
            }
            project_service::set_identity_secret(store, &opened.project, None, &by).await?;
            Ok(Redirect::to(&format!("/projects/{}/identity?done=cleared", opened.project.id)).into_response())
        }
        other => Err(PageError::BadRequest(format!("Unknown action {other:?}."))),
    }
}
