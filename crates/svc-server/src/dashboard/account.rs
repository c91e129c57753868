//! The person's own page (`/account`, linked from their name in the top bar): who they are, and
//! "Connected agents", the keys they made by allowing an application on the OAuth consent page,
//! each with a Disconnect button (only their own; it revokes the key, so the application's next
//! call gets 401).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use svc_core::time;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::service::ServiceError;
use crate::service::oauth;
use crate::state::AppState;

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
    notice: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct AccountQuery {
    #[serde(default)]
    disconnected: String,
}

/// `GET /account`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<AccountQuery>,
) -> PageResult<Response> {
    let now = time::now_ms();
    let agents: Vec<AgentRow> = oauth::connected_agents(&*state.store, &person.signed_in)
        .await?
        .into_iter()
        .map(|agent| {
            let key = agent.key;
            let state = if key.revoked_at.is_some() {
                "revoked"
            } else if key.is_active(now) {
                "active"
            } else {
                "expired"
            };
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
    let notice = agents
        .iter()
        .find(|agent| !query.disconnected.is_empty() && agent.key_id == query.disconnected && agent.state == "revoked")
        .map(|agent| format!("Disconnected {}: its key is revoked, so its next call is refused.", agent.client_name));
    let user = &person.signed_in.user;
    let view = AccountPage {
        assets: assets::get(),
        section: "account",
        csrf: person.csrf.clone(),
        me: user.label().to_string(),
        name: user.name.clone(),
        email: user.email.clone(),
        agents,
        notice,
    };
    Ok(render(StatusCode::OK, &view))
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
    oauth::disconnect(&*state.store, &person.signed_in, &key_id).await.map_err(|error| match error {
        ServiceError::NotFound(_) => {
            PageError::NotFound("You have no connected agent with that key (or it is already disconnected).".into())
        }
        other => other.into(),
    })?;
    Ok(Redirect::to(&format!("/account?disconnected={key_id}")).into_response())
}
