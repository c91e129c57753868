//! The Keys tab of a project: every secret key (how it was made, when it was last used, the agent
//! that introduced itself with it, its expiry), minting one (the plaintext shown once, on the
//! response to the form, never in a URL or a log) and revoking one. Owners mint and revoke;
//! members see the list read-only.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::key::{MAX_TTL_SECS, MIN_TTL_SECS, NewKey};
use svc_core::model::{ApiKey, KeyOrigin};
use svc_core::{scope, time};
use svc_service::permissions::{self, Operation};

use super::assets::{self, Assets};
use super::auth::capitalized;
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::keys;

/// The lifetimes offered when minting: the form value, its label.
const LIFETIMES: [(&str, &str); 7] = [
    ("none", "No expiry"),
    ("3600", "1 hour"),
    ("86400", "1 day"),
    ("2592000", "30 days"),
    ("7776000", "90 days"),
    ("31536000", "1 year"),
    ("custom", "Custom (seconds)"),
];

/// The scopes offered when minting, what each allows, and whether a new form ticks it.
const SCOPES: [(&str, &str, bool); 7] = [
    (scope::FEEDBACK_READ, "list and read reports", true),
    (scope::FEEDBACK_WRITE, "file reports, change status, comment", true),
    (scope::CHANNEL_READ, "list channels", false),
    (scope::CHANNEL_WRITE, "create and change channels, send hints", false),
    (scope::PROJECT_READ, "read the project's settings", false),
    (scope::PROJECT_WRITE, "change the project's settings", false),
    (scope::APIKEY_WRITE, "mint and revoke keys of this project", false),
];

/// How a key was made, as the list says it.
fn origin_label(origin: KeyOrigin) -> &'static str {
    match origin {
        KeyOrigin::Dashboard => "Dashboard",
        KeyOrigin::Setup => "Setup token",
        KeyOrigin::Api => "REST API",
        KeyOrigin::Oauth => "OAuth",
        KeyOrigin::Cli => "Command line",
    }
}

/// A key's state as the lists show it: `active`, `expired` or `revoked`.
pub(super) fn key_state(key: &ApiKey, now: i64) -> &'static str {
    if key.revoked_at.is_some() {
        "revoked"
    } else if key.is_active(now) {
        "active"
    } else {
        "expired"
    }
}

/// A key as the tables list it (a project's Keys tab, an organization's own keys on Members).
pub(super) struct KeyRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) scopes: Vec<String>,
    pub(super) origin: &'static str,
    pub(super) origin_class: &'static str,
    pub(super) created: When,
    pub(super) last_used: Option<When>,
    pub(super) agent_name: Option<String>,
    pub(super) agent_owner: Option<String>,
    /// `None`: never expires.
    pub(super) expires: Option<When>,
    /// `active`, `expired` or `revoked`.
    pub(super) state: &'static str,
    pub(super) revoked: Option<When>,
    /// Where its Revoke form posts.
    pub(super) revoke_action: String,
    /// For a key an OAuth connection made: the client, where it redirects, who connected it, when.
    pub(super) oauth: Option<OAuthFacts>,
}

/// What an OAuth key was made for, as the key tables show it.
pub(super) struct OAuthFacts {
    pub(super) client_name: String,
    pub(super) redirect_host: String,
    pub(super) connected_by: String,
    pub(super) connected: When,
}

/// Rows for `keys`, each OAuth key with its facts; `revoke_action` gives each row's Revoke path.
pub(super) async fn rows(
    state: &AppState,
    keys: Vec<ApiKey>,
    now: i64,
    revoke_action: impl Fn(&ApiKey) -> String,
) -> PageResult<Vec<KeyRow>> {
    let mut grants = svc_service::oauth::grants_of(&state.service, &keys).await?;
    Ok(keys
        .into_iter()
        .map(|key| {
            let facts = grants.remove(&key.id).map(|grant| OAuthFacts {
                client_name: grant.client_name,
                redirect_host: grant.redirect_host,
                connected_by: grant.connected_by.unwrap_or_else(|| "a person no longer here".into()),
                connected: When::at(grant.connected_at, now),
            });
            let action = revoke_action(&key);
            KeyRow { oauth: facts, ..KeyRow::of(key, now, action) }
        })
        .collect())
}

impl KeyRow {
    pub(super) fn of(key: ApiKey, now: i64, revoke_action: String) -> Self {
        let state = key_state(&key, now);
        KeyRow {
            id: key.id,
            name: key.name,
            scopes: key.scopes.into_iter().map(|s| if s == scope::ALL { "* (everything)".into() } else { s }).collect(),
            origin: origin_label(key.origin),
            origin_class: key.origin.as_str(),
            created: When::at(key.created_at, now),
            last_used: key.last_used_at.map(|at| When::at(at, now)),
            agent_name: key.agent_name,
            agent_owner: key.agent_owner,
            expires: key.expires_at.map(|at| When::ahead(at, now)),
            state,
            revoked: key.revoked_at.map(|at| When::at(at, now)),
            revoke_action,
            oauth: None,
        }
    }
}

/// The mint form as shown: empty, or as submitted when it was refused.
struct MintForm {
    name: String,
    /// (scope, what it allows, ticked)
    scopes: Vec<(&'static str, &'static str, bool)>,
    ttl: String,
    ttl_custom: String,
}

impl MintForm {
    fn fresh() -> Self {
        MintForm { name: String::new(), scopes: SCOPES.to_vec(), ttl: "none".into(), ttl_custom: String::new() }
    }
}

/// A key just minted: its plaintext, on this one response.
struct Minted {
    id: String,
    name: String,
    secret: String,
}

#[derive(Template)]
#[template(path = "dashboard/keys.html")]
struct KeysPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    frame: ProjectFrame,
    keys: Vec<KeyRow>,
    /// Whether the person may mint and revoke (owners).
    can_mint: bool,
    form: MintForm,
    lifetimes: &'static [(&'static str, &'static str)],
    min_ttl: i64,
    max_ttl: i64,
    api_base: String,
    minted: Option<Minted>,
    error: Option<String>,
    notice: Option<String>,
}

async fn page(
    state: &AppState,
    person: &Person,
    opened: OpenedProject,
    form: MintForm,
    minted: Option<Minted>,
    error: Option<String>,
    notice: Option<String>,
) -> PageResult<KeysPage> {
    let now = time::now_ms();
    let can_mint = permissions::check(&opened.principal, Operation::ManageKeys, &opened.project).is_ok();
    let listed = keys::list(&state.service, &opened.project).await?;
    let project_id = opened.project.id.clone();
    let keys = rows(state, listed, now, |key| format!("/projects/{project_id}/keys/{}/revoke", key.id)).await?;
    Ok(KeysPage {
        assets: assets::get(),
        section: "projects",
        csrf: person.csrf.clone(),
        me: person.signed_in.user.label().to_string(),
        frame: opened.frame,
        keys,
        can_mint,
        form,
        lifetimes: &LIFETIMES,
        min_ttl: MIN_TTL_SECS,
        max_ttl: MAX_TTL_SECS,
        api_base: format!("{}/api/v1", state.config.public_url.trim_end_matches('/')),
        minted,
        error,
        notice,
    })
}

#[derive(Deserialize, Default)]
pub struct KeysQuery {
    #[serde(default)]
    revoked: String,
}

/// `GET /projects/{id}/keys`: every key of the project (owners and members; members read only).
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    Query(query): Query<KeysQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "keys").await?;
    let view = page(&state, &person, opened, MintForm::fresh(), None, None, None).await?;
    let notice = view
        .keys
        .iter()
        .find(|key| !query.revoked.is_empty() && key.id == query.revoked && key.state == "revoked")
        .map(|key| format!("Revoked the key {}. Anything still using it gets 401 from now on.", key.name));
    Ok(render(StatusCode::OK, &KeysPage { notice, ..view }))
}

#[derive(Deserialize)]
pub struct MintKeyForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    scope: Vec<String>,
    #[serde(default)]
    ttl: String,
    #[serde(default)]
    ttl_custom: String,
}

/// The lifetime chosen in the form, in seconds (`None`: no expiry).
fn chosen_ttl(ttl: &str, custom: &str) -> Result<Option<i64>, String> {
    let out_of_range = || format!("A custom lifetime is a number of seconds from {MIN_TTL_SECS} to {MAX_TTL_SECS}.");
    match ttl {
        "" | "none" => Ok(None),
        "custom" => match custom.trim().parse::<i64>() {
            Ok(secs) if (MIN_TTL_SECS..=MAX_TTL_SECS).contains(&secs) => Ok(Some(secs)),
            _ => Err(out_of_range()),
        },
        preset if LIFETIMES.iter().any(|(value, _)| *value == preset) => {
            preset.parse::<i64>().map(Some).map_err(|_| out_of_range())
        }
        _ => Err("Choose a lifetime from the list.".into()),
    }
}

/// `POST /projects/{id}/keys`: mints a key (owners) and answers with the page showing its
/// plaintext this once. A refused form comes back filled in, with what to fix.
pub async fn mint(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<MintKeyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageKeys, "keys").await?;
    let refill = MintForm {
        name: form.name.clone(),
        scopes: SCOPES.iter().map(|(s, what, _)| (*s, *what, form.scope.iter().any(|c| c == s))).collect(),
        ttl: form.ttl.clone(),
        ttl_custom: form.ttl_custom.clone(),
    };
    let new = chosen_ttl(&form.ttl, &form.ttl_custom).and_then(|ttl| {
        NewKey::by_owner(form.name.clone(), form.scope.clone(), ttl).map_err(|error| capitalized(&error.0))
    });
    let new = match new {
        Ok(new) => new,
        Err(message) => {
            let view = page(&state, &person, opened, refill, None, Some(message), None).await?;
            return Ok(render(StatusCode::BAD_REQUEST, &view));
        }
    };
    let by = opened.principal.author();
    let (key, secret) = keys::mint_for_project(&state.service, &opened.project, new, KeyOrigin::Dashboard, &by).await?;
    let minted = Minted { id: key.id, name: key.name, secret: secret.expose().to_string() };
    let view = page(&state, &person, opened, MintForm::fresh(), Some(minted), None, None).await?;
    Ok(render(StatusCode::OK, &view))
}

#[derive(Deserialize)]
pub struct RevokeKeyForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

super::csrf_forms!(MintKeyForm, RevokeKeyForm);

/// `POST /projects/{id}/keys/{key}/revoke`: revokes an active key (owners); the next request
/// made with it gets 401.
pub async fn revoke(
    State(state): State<AppState>,
    Path((project_id, key_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<RevokeKeyForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageKeys, "keys").await?;
    keys::revoke(&state.service, &opened.project, &key_id, &opened.principal.author()).await.map_err(|error| {
        match error {
            svc_service::ServiceError::NotFound(_) => {
                PageError::NotFound("This key is not active in this project (already revoked or expired).".into())
            }
            other => other.into(),
        }
    })?;
    let back = format!("/projects/{}/keys?revoked={}", opened.project.id, key_id);
    Ok(see_other_local(Some(&back)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_are_read_from_the_form() {
        assert_eq!(chosen_ttl("none", "5"), Ok(None));
        assert_eq!(chosen_ttl("86400", ""), Ok(Some(86_400)));
        assert_eq!(chosen_ttl("custom", " 120 "), Ok(Some(120)));
        assert!(chosen_ttl("custom", "soon").is_err());
        assert!(chosen_ttl("custom", "59").is_err() && chosen_ttl("custom", "31536001").is_err());
        assert_eq!(chosen_ttl("custom", "31536000"), Ok(Some(31_536_000)));
        assert!(chosen_ttl("42", "").is_err(), "only the offered presets");
    }
}
