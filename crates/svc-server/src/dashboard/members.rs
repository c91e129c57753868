//! Members: the people of each organization a person belongs to, with their roles; owners invite
//! by a one-time link (shown once), change roles and remove people, and an organization always
//! keeps an owner (the service refuses otherwise). The organization's own log closes the page.
//!
//! Accepting an invitation (`/invite?token=`): a signed-in person joins with one click; someone
//! without an account creates one on the spot; an email that already has an account is asked to
//! sign in first and is brought back to the link.

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use svc_core::account::Role;
use svc_core::audit::describe;
use svc_core::secret::Secret;
use svc_core::time;

use super::assets::{self, Assets};
use super::auth::capitalized;
use super::error::{PageError, PageResult};
use super::keys::KeyRow;
use super::redirect::see_other_local;
use super::session::{self, Person};
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::accounts::{self, Invitation, NewUser, SignedIn};
use svc_service::{ServiceError, audit, keys, projects};

/// Entries of an organization's log shown under its members.
const LOG_ENTRIES: u32 = 20;

struct MemberRow {
    user_id: String,
    name: String,
    email: String,
    role: &'static str,
    joined: When,
    is_me: bool,
    /// The organization's only owner: neither demoted nor removed.
    last_owner: bool,
}

struct InviteRow {
    id: String,
    role: &'static str,
    created: When,
    expires: When,
}

struct LogRow {
    who: String,
    what: String,
    when: When,
}

/// An invitation link just made: shown on this one response.
struct InvitedLink {
    url: String,
    role: &'static str,
    expires: When,
    /// The address the link was mailed to, when it was.
    mailed_to: Option<String>,
}

struct OrgSection {
    id: String,
    name: String,
    is_owner: bool,
    members: Vec<MemberRow>,
    invites: Vec<InviteRow>,
    log: Vec<LogRow>,
    invited: Option<InvitedLink>,
    /// The organization's own keys (tool endpoint only: `svc token org`, OAuth for a whole
    /// organization).
    keys: Vec<KeyRow>,
}

#[derive(Template)]
#[template(path = "dashboard/members.html")]
struct MembersPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    orgs: Vec<OrgSection>,
    notice: Option<&'static str>,
    /// An SMTP server is set: invitations can be mailed.
    can_mail: bool,
}

fn role_word(role: Role) -> &'static str {
    role.as_str()
}

/// The page for `person`; `invited` (an organization id and its new link) is shown once.
async fn members_page(
    state: &AppState,
    person: &Person,
    mut invited: Option<(String, InvitedLink)>,
    notice: Option<&'static str>,
) -> PageResult<MembersPage> {
    let store = &state.service;
    let now = time::now_ms();
    let mut orgs = Vec::new();
    for membership in &person.signed_in.memberships {
        let org_id = membership.org_id.clone();
        let name = projects::find_organization(store, &org_id).await?.map(|org| org.name).unwrap_or_default();
        let is_owner = membership.role == Role::Owner;
        let listed = accounts::members(store, &org_id).await?;
        let owners = listed.iter().filter(|(_, m)| m.role == Role::Owner).count();
        let members = listed
            .into_iter()
            .map(|(user, m)| MemberRow {
                is_me: user.id == person.signed_in.user.id,
                last_owner: m.role == Role::Owner && owners <= 1,
                name: user.name,
                email: user.email,
                user_id: user.id,
                role: role_word(m.role),
                joined: When::at(m.created_at, now),
            })
            .collect();
        let invites = if is_owner {
            accounts::pending_invites(store, &org_id)
                .await?
                .into_iter()
                .map(|invite| InviteRow {
                    id: invite.id,
                    role: role_word(invite.role),
                    created: When::at(invite.created_at, now),
                    expires: When::ahead(invite.expires_at, now),
                })
                .collect()
        } else {
            Vec::new()
        };
        let log = audit::list_for_org(store, &org_id, None, LOG_ENTRIES)
            .await?
            .into_iter()
            .map(|event| LogRow {
                who: event
                    .actor
                    .label
                    .clone()
                    .or(event.actor.id.clone())
                    .unwrap_or_else(|| event.actor.kind.to_string()),
                what: describe(&event.action, &event.detail),
                when: When::at(event.at, now),
            })
            .collect();
        let invited = match invited.take() {
            Some((for_org, link)) if for_org == org_id => Some(link),
            other => {
                invited = other;
                None
            }
        };
        let listed = keys::list_org_wide(store, &org_id).await?;
        let keys =
            super::keys::rows(state, listed, now, |key| format!("/members/{org_id}/keys/{}/revoke", key.id)).await?;
        orgs.push(OrgSection { id: org_id, name, is_owner, members, invites, log, invited, keys });
    }
    Ok(MembersPage {
        assets: assets::get(),
        section: "members",
        csrf: person.csrf.clone(),
        me: person.signed_in.user.label().to_string(),
        orgs,
        notice,
        can_mail: state.config.mail.smtp.is_some(),
    })
}

#[derive(Deserialize, Default)]
pub struct MembersQuery {
    #[serde(default)]
    done: String,
}

/// `GET /members`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<MembersQuery>,
) -> PageResult<Response> {
    let notice = match query.done.as_str() {
        "role" => Some("The role is changed."),
        "removed" => Some("The member is removed: they no longer reach the organization's projects."),
        "withdrawn" => Some("The invitation is withdrawn: its link no longer works."),
        "key-revoked" => Some("The key is revoked: anything still using it gets 401 from now on."),
        _ => None,
    };
    let view = members_page(&state, &person, None, notice).await?;
    Ok(render(StatusCode::OK, &view))
}

#[derive(Deserialize)]
pub struct InviteForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    role: String,
    /// With an SMTP server set: mail the link to this address too.
    #[serde(default)]
    email: String,
}

#[derive(Deserialize)]
pub struct RoleForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    role: String,
}

#[derive(Deserialize)]
pub struct PlainForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
}

super::csrf_forms!(InviteForm, RoleForm, PlainForm);

fn parse_role(text: &str) -> PageResult<Role> {
    Role::parse(text).map_err(|_| PageError::BadRequest("Choose a role: owner or member.".into()))
}

/// A service refusal as the dashboard words it.
fn refused(error: ServiceError) -> PageError {
    match error {
        ServiceError::Refused(_) => {
            PageError::Forbidden("Only an owner of the organization can change its members.".into())
        }
        ServiceError::Conflict(message) => PageError::Conflict(capitalized(&message)),
        other => other.into(),
    }
}

/// `POST /members/{org}/invite`: makes an invitation link (owners) and shows it this once.
pub async fn invite(
    State(state): State<AppState>,
    Path(org_id): Path<String>,
    Submitted(person, form): Submitted<InviteForm>,
) -> PageResult<Response> {
    let role = parse_role(&form.role)?;
    let email = match form.email.trim() {
        "" => None,
        typed => Some(
            svc_core::account::Email::parse(typed)
                .map_err(|_| PageError::BadRequest("That is not an email address: go back and check it.".into()))?,
        ),
    };
    let (token, expires_at) =
        accounts::invite(&state.service, &person.principal(), &org_id, role).await.map_err(refused)?;
    let url = format!("{}/invite?token={}", state.config.public_url.trim_end_matches('/'), token.expose());
    let mailed_to = match email {
        Some(to) => {
            let address = to.as_str().to_string();
            accounts::mail_invitation(&state.service, &person.principal(), &org_id, to, &url, role, expires_at)
                .await
                .map_err(refused)?;
            Some(address)
        }
        None => None,
    };
    let link = InvitedLink { url, role: role_word(role), expires: When::ahead(expires_at, time::now_ms()), mailed_to };
    let view = members_page(&state, &person, Some((org_id, link)), None).await?;
    Ok(render(StatusCode::OK, &view))
}

/// `POST /members/{org}/invites/{invite}/withdraw` (owners).
pub async fn withdraw(
    State(state): State<AppState>,
    Path((org_id, invite_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<PlainForm>,
) -> PageResult<Response> {
    accounts::withdraw_invite(&state.service, &person.principal(), &org_id, &invite_id).await.map_err(refused)?;
    Ok(see_other_local(Some("/members?done=withdrawn")))
}

/// `POST /members/{org}/{user}/role` (owners): owner or member; never the last owner to member.
pub async fn change_role(
    State(state): State<AppState>,
    Path((org_id, user_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<RoleForm>,
) -> PageResult<Response> {
    let role = parse_role(&form.role)?;
    accounts::change_role(&state.service, &person.principal(), &org_id, &user_id, role).await.map_err(refused)?;
    Ok(see_other_local(Some("/members?done=role")))
}

/// `POST /members/{org}/{user}/remove` (owners): never the last owner.
pub async fn remove(
    State(state): State<AppState>,
    Path((org_id, user_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<PlainForm>,
) -> PageResult<Response> {
    accounts::remove_member(&state.service, &person.principal(), &org_id, &user_id).await.map_err(refused)?;
    Ok(see_other_local(Some("/members?done=removed")))
}

/// `POST /members/{org}/keys/{key}/revoke` (owners): revokes an organization-wide key.
pub async fn revoke_key(
    State(state): State<AppState>,
    Path((org_id, key_id)): Path<(String, String)>,
    Submitted(person, _): Submitted<PlainForm>,
) -> PageResult<Response> {
    keys::revoke_org_wide(&state.service, &person.principal(), &org_id, &key_id).await.map_err(
        |error| match error {
            ServiceError::Refused(_) => {
                PageError::Forbidden("Only an owner of the organization can revoke its keys.".into())
            }
            ServiceError::NotFound(_) => {
                PageError::NotFound("This key is not active (already revoked or expired).".into())
            }
            other => other.into(),
        },
    )?;
    Ok(see_other_local(Some("/members?done=key-revoked")))
}

// ---------------------------------------------------------------------------------------------
// Accepting an invitation.

#[derive(Template)]
#[template(path = "dashboard/invite.html")]
struct InvitePage<'a> {
    assets: &'static Assets,
    token: &'a str,
    org_name: &'a str,
    role: &'static str,
    expires: When,
    /// Who is signed in on this browser, if anyone (they join with one click).
    signed_in_as: Option<String>,
    already_member: bool,
    csrf: String,
    name: &'a str,
    email: &'a str,
    error: Option<String>,
    /// The email has an account: sign in first, then come back.
    sign_in_first: bool,
    sign_in_href: String,
}

impl<'a> InvitePage<'a> {
    fn new(token: &'a str, invitation: &'a Invitation, signed_in: Option<(&SignedIn, String)>) -> Self {
        let back = format!("/invite?token={token}");
        InvitePage {
            assets: assets::get(),
            token,
            org_name: &invitation.org.name,
            role: role_word(invitation.role),
            expires: When::ahead(invitation.link.expires_at, time::now_ms()),
            already_member: signed_in.as_ref().is_some_and(|(person, _)| person.role_in(&invitation.org.id).is_some()),
            signed_in_as: signed_in.as_ref().map(|(person, _)| person.user.label().to_string()),
            csrf: signed_in.map(|(_, csrf)| csrf).unwrap_or_default(),
            name: "",
            email: "",
            error: None,
            sign_in_first: false,
            sign_in_href: format!(
                "/sign-in?next={}",
                url::form_urlencoded::byte_serialize(back.as_bytes()).collect::<String>()
            ),
        }
    }
}

fn link_gone() -> PageError {
    PageError::NotFound(
        "This link has expired or was already used. Ask the person who invited you for a new one.".into(),
    )
}

/// The person signed in on this browser (with their CSRF token), if anyone.
async fn signed_in(state: &AppState, headers: &HeaderMap) -> PageResult<Option<(SignedIn, String)>> {
    let Some(token) = session::session_token(state, headers) else { return Ok(None) };
    Ok(accounts::resolve_session(&state.service, token).await?.map(|person| (person, session::csrf_token(token))))
}

#[derive(Deserialize)]
pub struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// `GET /invite?token=`: who invites to what, and the way in.
pub async fn invitation(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<TokenQuery>,
) -> PageResult<Response> {
    let invitation = accounts::open_invite(&state.service, &query.token).await?.ok_or_else(link_gone)?;
    let person = signed_in(&state, &headers).await?;
    let page = InvitePage::new(&query.token, &invitation, person.as_ref().map(|(p, csrf)| (p, csrf.clone())));
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct AcceptForm {
    #[serde(default)]
    token: String,
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

/// `POST /invite`: a signed-in person joins (their CSRF token checked); anyone else creates an
/// account with the form and is signed in. Either way they land in the inbox.
pub async fn accept(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<AcceptForm>,
) -> PageResult<Response> {
    session::require_same_origin(&state, &headers)?;
    let store = &state.service;
    if let Some((person, csrf)) = signed_in(&state, &headers).await? {
        let submitted = Person { signed_in: person, csrf };
        submitted.check_csrf(&form.csrf)?;
        return match accounts::accept_invite_as(store, &form.token, &submitted.signed_in).await {
            Ok(invitation) => {
                tracing::info!(user = %submitted.signed_in.user.id, org = %invitation.org.id, "joined by invitation");
                Ok(see_other_local(Some("/")))
            }
            Err(ServiceError::Invalid(_)) => Err(link_gone()),
            Err(ServiceError::Conflict(message)) => Err(PageError::Conflict(capitalized(&message))),
            Err(other) => Err(other.into()),
        };
    }
    let invitation = accounts::open_invite(store, &form.token).await?.ok_or_else(link_gone)?;
    let again = |message: String, sign_in_first: bool| {
        let page = InvitePage {
            name: &form.name,
            email: &form.email,
            error: Some(message),
            sign_in_first,
            ..InvitePage::new(&form.token, &invitation, None)
        };
        render(StatusCode::BAD_REQUEST, &page)
    };
    let new = match NewUser::parse(&form.email, &form.name, Secret::new(form.password.clone())) {
        Ok(new) => new,
        Err(error) => return Ok(again(capitalized(&error.to_string()), false)),
    };
    let user = match accounts::accept_invite_as_new(store, &form.token, new).await {
        Ok((user, _)) => user,
        Err(ServiceError::Conflict(_)) => {
            let message = "An account with this email already exists. Sign in first; you come back to this invitation."
                .to_string();
            return Ok(again(message, true));
        }
        Err(ServiceError::Invalid(_)) => return Err(link_gone()),
        Err(other) => return Err(other.into()),
    };
    let token = accounts::start_session(store, &user.id).await?;
    tracing::info!(user = %user.id, org = %invitation.org.id, "account created by invitation");
    Ok((
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, session::session_cookie(&state, token.expose()))],
        [(header::LOCATION, "/".to_string())],
    )
        .into_response())
}
