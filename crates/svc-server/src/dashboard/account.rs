//! The person's own page (`/account`, linked from their name in the top bar): who they are,
//! "Notifications" (every project of their organizations with two choices: new reports off, at once
//! or as a daily digest, and replies from reporters on or off; one form saves them all), and
//! "Connected agents", the keys they made by allowing an application on the OAuth consent page,
//! each with a Disconnect button (only their own; it revokes the key, so the application's next
//! call gets 401).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::collections::BTreeMap;
use svc_core::mail::{DIGEST_HOUR_UTC, NewReports};
use svc_core::time;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_core::secret::Secret;
use svc_service::mail::{self, Choice};
use svc_service::oauth;
use svc_service::{ServiceError, accounts};

struct AgentRow {
    key_id: String,
    client_name: String,
    key_name: String,
    redirect_host: String,
    /// The project, or "every project of <org>".
    reaches: String,
    scopes: Vec<String>,
    connected: When,
    last_used: Option<When>,
    agent_name: Option<String>,
    /// `active`, `expired` or `revoked`.
    state: &'static str,
    ended: Option<When>,
}

struct ProjectRow {
    id: String,
    name: String,
    new_reports: &'static str,
    replies: bool,
}

struct OrgRows {
    name: String,
    projects: Vec<ProjectRow>,
}

#[derive(Template)]
#[template(path = "dashboard/account.html")]
struct AccountPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    name: String,
    email: String,
    agents: Vec<AgentRow>,
    orgs: Vec<OrgRows>,
    delivers: bool,
    digest_hour: i64,
    notice: Option<String>,
    /// Why the password was not changed.
    password_error: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct AccountQuery {
    #[serde(default)]
    disconnected: String,
    #[serde(default)]
    done: String,
}

/// `GET /account`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<AccountQuery>,
) -> PageResult<Response> {
    let saved = match query.done.as_str() {
        "notifications" => Some("Your notification settings are saved.".to_string()),
        "password" => Some("Your password is changed. Every other session of yours is signed out.".to_string()),
        _ => None,
    };
    render_page(&state, &person, &query.disconnected, saved, None).await
}

async fn render_page(
    state: &AppState,
    person: &Person,
    disconnected: &str,
    saved: Option<String>,
    password_error: Option<String>,
) -> PageResult<Response> {
    let now = time::now_ms();
    let agents: Vec<AgentRow> = oauth::connected_agents(&state.service, &person.signed_in)
        .await?
        .into_iter()
        .map(|agent| {
            let key = agent.key;
            let state = super::keys::key_state(&key, now);
            let reaches = match (&key.project_id, agent.reaches) {
                (_, None) => "(deleted)".to_string(),
                (Some(_), Some(project)) => project,
                (None, Some(org)) => format!("every project of {org}"),
            };
            AgentRow {
                key_id: key.id,
                client_name: agent.grant.client_name,
                key_name: key.name,
                redirect_host: agent.grant.redirect_host,
                reaches,
                scopes: key.scopes,
                connected: When::at(agent.grant.created_at, now),
                last_used: key.last_used_at.map(|at| When::at(at, now)),
                agent_name: key.agent_name,
                state,
                ended: key.revoked_at.or(key.expires_at.filter(|_| state == "expired")).map(|at| When::at(at, now)),
            }
        })
        .collect();
    let disconnected = agents
        .iter()
        .find(|agent| !disconnected.is_empty() && agent.key_id == disconnected && agent.state == "revoked")
        .map(|agent| format!("Disconnected {}: its key is revoked, so its next call is refused.", agent.client_name));
    let notice = disconnected.or(saved);
    let orgs = mail::settings(&state.service, &person.signed_in)
        .await?
        .into_iter()
        .map(|org| OrgRows {
            name: org.org.name,
            projects: org
                .projects
                .into_iter()
                .map(|(project, preference)| ProjectRow {
                    id: project.id,
                    name: project.name,
                    new_reports: preference.new_reports.as_str(),
                    replies: preference.replies,
                })
                .collect(),
        })
        .collect();
    let user = &person.signed_in.user;
    let view = AccountPage {
        assets: assets::get(),
        section: "account",
        csrf: person.csrf.clone(),
        me: user.label().to_string(),
        name: user.name.clone(),
        email: user.email.clone(),
        agents,
        orgs,
        delivers: state.config.mail.delivers(),
        digest_hour: DIGEST_HOUR_UTC,
        notice,
        password_error: password_error.clone(),
    };
    let status = if password_error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    Ok(render(status, &view))
}

#[derive(Deserialize)]
pub struct PasswordForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
}

super::csrf_forms!(PasswordForm);

/// `POST /account/password`: the person's new password, given the current one. Every session of
/// theirs ends (whoever knew the old password is signed out); this browser gets a new one.
pub async fn change_password(
    State(state): State<AppState>,
    parts: axum::http::request::Parts,
    Submitted(person, form): Submitted<PasswordForm>,
) -> PageResult<Response> {
    let user = &person.signed_in.user;
    let ip = crate::ingest::access::client_ip(&state, &parts);
    // The current password is a password guess like any other: counted as sign-in attempts.
    state
        .rate_limits
        .check_sign_in(&user.email, ip)
        .map_err(|retry_after_secs| PageError::TooManyAttempts { retry_after_secs })?;
    let changed = accounts::change_password(
        &state.service,
        &person.signed_in,
        Secret::new(form.current),
        Secret::new(form.password),
    )
    .await;
    let token = match changed {
        Ok(token) => token,
        Err(ServiceError::Invalid(message)) => {
            return render_page(&state, &person, "", None, Some(super::auth::capitalized(&message))).await;
        }
        Err(other) => return Err(other.into()),
    };
    tracing::info!(user = %user.id, "password changed");
    Ok((
        [(axum::http::header::SET_COOKIE, super::session::session_cookie(&state, token.expose()))],
        see_other_local(Some("/account?done=password")),
    )
        .into_response())
}

#[derive(Deserialize)]
pub struct DisconnectForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

super::csrf_forms!(DisconnectForm);

/// `POST /account/agents/{key}/disconnect`: revokes a key the person connected.
pub async fn disconnect(
    State(state): State<AppState>,
    Path(key_id): Path<String>,
    Submitted(person, _): Submitted<DisconnectForm>,
) -> PageResult<Response> {
    oauth::disconnect(&state.service, &person.signed_in, &key_id).await.map_err(|error| match error {
        ServiceError::NotFound(_) => {
            PageError::NotFound("You have no connected agent with that key (or it is already disconnected).".into())
        }
        other => other.into(),
    })?;
    Ok(see_other_local(Some(&format!("/account?disconnected={key_id}"))))
}

/// The notifications form: `reports.<projectId>` (off, instant, digest) and `replies.<projectId>`
/// (on, off) for each project shown.
#[derive(Deserialize)]
pub struct NotificationsForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(flatten)]
    fields: BTreeMap<String, String>,
}

super::csrf_forms!(NotificationsForm);

/// The choices a form holds, one per project named by a `reports.` field.
fn choices(form: &NotificationsForm) -> PageResult<Vec<Choice>> {
    let mut choices = Vec::new();
    for (name, value) in &form.fields {
        let Some(project_id) = name.strip_prefix("reports.") else { continue };
        let new_reports = NewReports::parse(value)
            .map_err(|_| PageError::BadRequest("Choose off, at once or daily digest.".into()))?;
        let replies = match form.fields.get(&format!("replies.{project_id}")).map(String::as_str) {
            Some("on") => true,
            Some("off") => false,
            _ => return Err(PageError::BadRequest("Choose whether replies from reporters are mailed.".into())),
        };
        choices.push(Choice { project_id: project_id.to_string(), new_reports, replies });
    }
    Ok(choices)
}

/// `POST /account/notifications`
pub async fn save_notifications(
    State(state): State<AppState>,
    Submitted(person, form): Submitted<NotificationsForm>,
) -> PageResult<Response> {
    let choices = choices(&form)?;
    mail::set_choices(&state.service, &person.signed_in, &choices).await.map_err(|error| match error {
        ServiceError::Refused(_) => PageError::Forbidden("One of these projects is not in your organizations.".into()),
        other => other.into(),
    })?;
    Ok(see_other_local(Some("/account?done=notifications")))
}
