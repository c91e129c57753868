//! A project's Identity tab: how its reporters sign in from the widget (off, a mailed code, or the
//! project's OpenID Connect provider; optional or required), saved through the same operation as
//! the REST PATCH's `reporterAuth`; whether an identity secret is set; setting one (generated here and
//! shown once, or pasted), rotating it (a new one: the old stops verifying at once) and clearing
//! it; and how a site signs identity tokens with it (decisions §3 "Identity"). The secret is never
//! shown again after the response that set it. Changes go through
//! `service::projects::set_identity_secret`, as the CLI's do, and are in the audit log.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::ids;
use svc_service::permissions::Operation;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::{Submitted, render};
use crate::state::AppState;
use svc_core::project::ProjectChanges;
use svc_core::reporter::{OidcSettings, ReporterAuth, ReporterAuthChange, ReporterMode, SecretChange};
use svc_service::projects as project_service;
use svc_service::reporter_oidc;

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
    /// Reporter sign-in as stored (or as entered, when a change was refused).
    reporter: ReporterForm,
    client_secret_set: bool,
    /// The callback URL to register at the provider.
    callback_url: String,
    allowed_origins: Vec<String>,
}

/// The reporter sign-in fields, as stored or as entered.
#[derive(Deserialize, Default, Clone)]
pub struct ReporterForm {
    #[serde(default)]
    mode: String,
    #[serde(default)]
    required: String,
    #[serde(default)]
    issuer: String,
    #[serde(default)]
    client_id: String,
    /// Blank keeps the stored secret.
    #[serde(default)]
    client_secret: String,
    /// `yes`: forget the stored secret (a public client).
    #[serde(default)]
    clear_client_secret: String,
}

impl ReporterForm {
    fn of(auth: &ReporterAuth) -> Self {
        let oidc = auth.oidc.clone().unwrap_or_default();
        ReporterForm {
            mode: auth.mode.as_str().into(),
            required: if auth.required { "yes".into() } else { String::new() },
            issuer: oidc.issuer,
            client_id: oidc.client_id,
            client_secret: String::new(),
            clear_client_secret: String::new(),
        }
    }

    /// The change it asks for; provider fields left blank mean no provider.
    fn change(&self) -> Result<ReporterAuthChange, svc_core::Invalid> {
        let issuer = self.issuer.trim();
        let client_id = self.client_id.trim();
        let oidc = (!issuer.is_empty() || !client_id.is_empty()).then(|| OidcSettings {
            issuer: issuer.to_string(),
            client_id: client_id.to_string(),
            client_secret: None,
        });
        let auth = ReporterAuth { mode: ReporterMode::parse(&self.mode)?, required: self.required == "yes", oidc };
        let client_secret = match (self.clear_client_secret == "yes", self.client_secret.trim()) {
            (true, _) => SecretChange::Clear,
            (false, "") => SecretChange::Keep,
            (false, secret) => SecretChange::Set(secret.to_string()),
        };
        Ok(ReporterAuthChange { auth, client_secret })
    }

    fn is(&self, mode: &str) -> bool {
        self.mode == mode
    }
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
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "identity").await?;
    let notice = match query.done.as_str() {
        "reporters" => Some("Reporter sign-in is saved; the widget picks it up within a minute."),
        "set" => Some("The identity secret is set. Tokens signed with the old one (if any) no longer verify."),
        "cleared" => Some("The identity secret is cleared: the x-svc-identity header is now ignored."),
        _ => None,
    };
    Ok(respond(&state, &person, opened, None, notice, None, None, StatusCode::OK))
}

#[allow(clippy::too_many_arguments)]
fn respond(
    state: &AppState,
    person: &Person,
    opened: OpenedProject,
    new_secret: Option<String>,
    notice: Option<&'static str>,
    error: Option<String>,
    entered: Option<ReporterForm>,
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
        reporter: entered.unwrap_or_else(|| ReporterForm::of(&project.reporter_auth)),
        client_secret_set: project.reporter_auth.oidc.as_ref().is_some_and(|o| o.client_secret.is_some()),
        callback_url: reporter_oidc::callback_url(&state.config.public_url),
        allowed_origins: project.allowed_origins.clone(),
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
    /// With `reporters`: the sign-in settings.
    #[serde(flatten)]
    reporter: ReporterForm,
}
super::csrf_forms!(IdentityForm);

/// `POST /projects/{id}/identity`: generates (and shows once), sets or clears the secret.
pub async fn change(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<IdentityForm>,
) -> PageResult<Response> {
    let mut opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "identity").await?;
    let by = opened.principal.author();
    let store = &state.service;
    match form.action.as_str() {
        "generate" => {
            let secret = ids::new_random_secret(GENERATED_SECRET_CHARS);
            project_service::set_identity_secret(store, &opened.project, Some(&secret), &by).await?;
            opened.project.identity_secret = Some(secret.clone());
            Ok(respond(&state, &person, opened, Some(secret), None, None, None, StatusCode::OK))
        }
        "set" => {
            let secret = form.secret.trim();
            match project_service::set_identity_secret(store, &opened.project, Some(secret), &by).await {
                Ok(()) => Ok(see_other_local(Some(&format!("/projects/{}/identity?done=set", opened.project.id)))),
                Err(svc_service::ServiceError::Invalid(message)) => {
                    Ok(respond(&state, &person, opened, None, None, Some(message), None, StatusCode::BAD_REQUEST))
                }
                Err(other) => Err(other.into()),
            }
        }
        "clear" => {
            if form.confirm != "yes" {
                let message = "Tick the box to confirm: clearing the secret stops every identity token from verifying.";
                return Ok(respond(
                    &state,
                    &person,
                    opened,
                    None,
                    None,
                    Some(message.into()),
                    None,
                    StatusCode::BAD_REQUEST,
                ));
            }
            project_service::set_identity_secret(store, &opened.project, None, &by).await?;
            Ok(see_other_local(Some(&format!("/projects/{}/identity?done=cleared", opened.project.id))))
        }
        "reporters" => {
            let changes = form
                .reporter
                .change()
                .map(|change| ProjectChanges { reporter_auth: Some(change), ..Default::default() })
                .and_then(ProjectChanges::parse);
            let saved = match changes {
                Ok(changes) => project_service::update_project(store, opened.project.clone(), changes, &by).await,
                Err(invalid) => Err(invalid.into()),
            };
            match saved {
                Ok(project) => Ok(see_other_local(Some(&format!("/projects/{}/identity?done=reporters", project.id)))),
                Err(svc_service::ServiceError::Invalid(message)) => {
                    let entered = Some(form.reporter.clone());
                    Ok(respond(&state, &person, opened, None, None, Some(message), entered, StatusCode::BAD_REQUEST))
                }
                Err(other) => Err(other.into()),
            }
        }
        other => Err(PageError::BadRequest(format!("Unknown action {other:?}."))),
    }
}
