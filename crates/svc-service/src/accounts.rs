//! Dashboard accounts: users, memberships, sign-in, sessions and one-time links (first owner,
//! password reset). Passwords are hashed with Argon2id off the async threads; session cookies and
//! link tokens are stored only as their SHA-256.

use crate::Service;
use crate::permissions::{self, OrgOperation};
use svc_core::account::{
    self, Email, INVITE_LIFETIME_MS, LINK_LIFETIME_MS, LinkPurpose, Membership, OneTimeLink, Role, SESSION_LIFETIME_MS,
    SESSION_TOUCH_INTERVAL_MS, Session, User,
};
use svc_core::audit::action;
use svc_core::secret::{Secret, hash_secret};
use svc_core::{ids, time};
use svc_store::MemberChange;

use super::{ServiceError, ServiceResult, audit};
use crate::principal::Principal;

pub use crate::principal::SignedIn;

/// A new user with a chosen password, optionally joining an organization with a role.
pub struct NewUser {
    pub email: Email,
    pub name: String,
    pub password: Secret,
}

impl NewUser {
    /// Checks what a person typed: a plausible email, a name on one line, a long enough password.
    pub fn parse(email: &str, name: &str, password: Secret) -> ServiceResult<Self> {
        let email = Email::parse(email)?;
        let name = account::parse_name(name)?;
        account::check_password(password.expose())?;
        Ok(NewUser { email, name, password })
    }
}

/// Creates a user and, when given, their membership. A taken email is a `Conflict`. Every
/// first-owner link stops working: the service has a user now.
pub async fn create_user(svc: &Service, new: NewUser, join: Option<(&str, Role)>) -> ServiceResult<User> {
    insert_user(svc, new, join, None).await
}

/// [`create_user`], as the service's first user when `first_owner_link` is the hash of a valid
/// first-owner link (`NotFound` from the store otherwise).
async fn insert_user(
    svc: &Service,
    new: NewUser,
    join: Option<(&str, Role)>,
    first_owner_link: Option<&str>,
) -> ServiceResult<User> {
    let store = svc.store();
    if let Some((org_id, _)) = join
        && store.get_organization(org_id).await?.is_none()
    {
        return Err(ServiceError::NotFound(format!("no organization {org_id}")));
    }
    let password_hash = password::hash(new.password).await?;
    let now = time::now_ms();
    let user = User { id: ids::new_id_at(now), email: new.email.into_string(), name: new.name, created_at: now };
    let membership = join.map(|(org_id, role)| Membership {
        org_id: org_id.into(),
        user_id: user.id.clone(),
        role,
        created_at: now,
    });
    store.create_user(&user, &password_hash, membership.as_ref(), first_owner_link).await.map_err(
        |error| match error {
            svc_store::StoreError::Conflict(_) => {
                ServiceError::Conflict(format!("a user with the email {} already exists", user.email))
            }
            svc_store::StoreError::NotFound if first_owner_link.is_some() => ServiceError::Invalid(LINK_GONE.into()),
            other => other.into(),
        },
    )?;
    Ok(user)
}

/// The user with this email, if any.
pub async fn find_user(svc: &Service, email: &str) -> ServiceResult<Option<User>> {
    let store = svc.store();
    let email = Email::parse(email)?;
    Ok(store.find_user_by_email(email.as_str()).await?.map(|(user, _)| user))
}

/// Sets a user's password and ends all their sessions (whoever knew the old one is signed out).
pub async fn set_password(svc: &Service, user_id: &str, password: Secret) -> ServiceResult<()> {
    let store = svc.store();
    account::check_password(password.expose())?;
    let password_hash = password::hash(password).await?;
    store.set_password_hash(user_id, &password_hash, time::now_ms()).await?;
    announce_sessions_ended(svc);
    Ok(())
}

/// Changes a signed-in person's password, given their current one: every session of theirs ends
/// (whoever knew the old password is signed out), and a new one starts for the browser that asked
/// (its cookie value is returned). A wrong current password or a weak new one is `Invalid`.
pub async fn change_password(
    svc: &Service,
    person: &SignedIn,
    current: Secret,
    new_password: Secret,
) -> ServiceResult<Secret> {
    account::check_password(new_password.expose())?;
    if check_credentials(svc, &person.user.email, current).await?.is_none() {
        return Err(ServiceError::Invalid("your current password is not right".into()));
    }
    set_password(svc, &person.user.id, new_password).await?;
    start_session(svc, &person.user.id).await
}

/// The user with this email and password, or `None` for a wrong pair (the two cases are not told
/// apart, and an unknown email costs as much time as a wrong password).
pub async fn check_credentials(svc: &Service, email: &str, password: Secret) -> ServiceResult<Option<User>> {
    let store = svc.store();
    let found = match Email::parse(email) {
        Ok(email) => store.find_user_by_email(email.as_str()).await?,
        Err(_) => None,
    };
    match found {
        Some((user, hash)) => Ok(password::verify(password, hash).await?.then_some(user)),
        None => {
            password::verify(password, password::decoy_hash().to_string()).await?;
            Ok(None)
        }
    }
}

/// Starts a session for a user; returns the cookie value (shown to the browser only).
pub async fn start_session(svc: &Service, user_id: &str) -> ServiceResult<Secret> {
    let store = svc.store();
    let token = Secret::new(account::new_session_token());
    let now = time::now_ms();
    let session = Session {
        id_hash: hash_secret(token.expose()),
        user_id: user_id.into(),
        created_at: now,
        last_seen_at: now,
        expires_at: now + SESSION_LIFETIME_MS,
    };
    store.create_session(&session).await?;
    Ok(token)
}

/// The signed-in person behind a session cookie, or `None` when it is unknown or expired. A
/// session in use lives on: its end moves 30 days past its latest use (written at most every ten
/// minutes).
pub async fn resolve_session(svc: &Service, token: &str) -> ServiceResult<Option<SignedIn>> {
    let store = svc.store();
    if !token.starts_with("svs_") {
        return Ok(None);
    }
    let now = time::now_ms();
    let id_hash = hash_secret(token);
    let Some(session) = store.get_session(&id_hash, now).await? else { return Ok(None) };
    if now - session.last_seen_at >= SESSION_TOUCH_INTERVAL_MS {
        store.touch_session(&id_hash, now, now + SESSION_LIFETIME_MS).await?;
    }
    signed_in(svc, session).await
}

/// Who a session (by its hash) still signs in, without counting this as a use: `None` once it
/// ended. What a long-lived view (the live inbox) checks again and again.
pub async fn session_still_valid(svc: &Service, session_hash: &str) -> ServiceResult<Option<SignedIn>> {
    let store = svc.store();
    let Some(session) = store.get_session(session_hash, time::now_ms()).await? else { return Ok(None) };
    signed_in(svc, session).await
}

async fn signed_in(svc: &Service, session: Session) -> ServiceResult<Option<SignedIn>> {
    let store = svc.store();
    let Some(user) = store.get_user(&session.user_id).await? else { return Ok(None) };
    let memberships = store.list_memberships(&user.id).await?;
    Ok(Some(SignedIn { user, memberships, session_hash: session.id_hash }))
}

/// Tells live views on every instance that sessions ended or lost reach, so they check again.
fn announce_sessions_ended(svc: &Service) {
    let store = svc.store();
    store.changes().announce_sessions_ended();
}

/// Ends one session.
pub async fn end_session(svc: &Service, session_hash: &str) -> ServiceResult<()> {
    let store = svc.store();
    store.delete_session(session_hash).await?;
    announce_sessions_ended(svc);
    Ok(())
}

/// Ends every session of a user ("sign out everywhere"); returns how many ended.
pub async fn end_all_sessions(svc: &Service, user_id: &str) -> ServiceResult<u64> {
    let store = svc.store();
    let ended = store.delete_user_sessions(user_id).await?;
    announce_sessions_ended(svc);
    Ok(ended)
}

/// A one-time link token for the first owner of an organization (valid one hour).
pub async fn first_owner_link(svc: &Service, org_id: &str) -> ServiceResult<Secret> {
    new_link(svc, LinkPurpose::FirstOwner, Some(org_id), None, None, LINK_LIFETIME_MS).await
}

/// A one-time link token with which the user of this email sets a new password (valid one hour).
pub async fn password_reset_link(svc: &Service, email: &str) -> ServiceResult<Secret> {
    let store = svc.store();
    let email = Email::parse(email)?;
    let Some((user, _)) = store.find_user_by_email(email.as_str()).await? else {
        return Err(ServiceError::NotFound(format!("no user with the email {}", email.as_str())));
    };
    new_link(svc, LinkPurpose::ResetPassword, None, Some(&user.id), None, LINK_LIFETIME_MS).await
}

async fn new_link(
    svc: &Service,
    purpose: LinkPurpose,
    org_id: Option<&str>,
    user_id: Option<&str>,
    role: Option<Role>,
    lifetime_ms: i64,
) -> ServiceResult<Secret> {
    let store = svc.store();
    let token = Secret::new(account::new_link_token());
    let now = time::now_ms();
    let link = OneTimeLink {
        token_hash: hash_secret(token.expose()),
        purpose,
        org_id: org_id.map(str::to_string),
        user_id: user_id.map(str::to_string),
        created_at: now,
        expires_at: now + lifetime_ms,
        role,
    };
    store.create_link(&link).await?;
    Ok(token)
}

/// The unexpired, unused link of this purpose behind a token (to show its form), without using it.
pub async fn open_link(svc: &Service, token: &str, purpose: LinkPurpose) -> ServiceResult<Option<OneTimeLink>> {
    let store = svc.store();
    let link = store.peek_link(&hash_secret(token), time::now_ms()).await?;
    let Some(link) = link.filter(|link| link.purpose == purpose) else { return Ok(None) };
    // A first-owner link is for a service without users (made before one was created some other way).
    if purpose == LinkPurpose::FirstOwner && !no_users_yet(svc).await? {
        return Ok(None);
    }
    Ok(Some(link))
}

const LINK_GONE: &str = "this link has expired or was already used; ask for a new one";

/// Redeems a first-owner link: creates the user as owner of the link's organization. The link
/// works only while the service has no user at all (checked in the transaction that creates the
/// user), and redeeming it ends every other first-owner link.
pub async fn redeem_first_owner(svc: &Service, token: &str, new: NewUser) -> ServiceResult<User> {
    let link =
        open_link(svc, token, LinkPurpose::FirstOwner).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let org_id = link.org_id.clone().ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    insert_user(svc, new, Some((&org_id, Role::Owner)), Some(&link.token_hash)).await
}

/// Redeems a password-reset link: sets the password and signs the user out everywhere.
pub async fn redeem_password_reset(svc: &Service, token: &str, password: Secret) -> ServiceResult<User> {
    let store = svc.store();
    account::check_password(password.expose())?;
    let link = open_link(svc, token, LinkPurpose::ResetPassword)
        .await?
        .ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let user_id = link.user_id.clone().ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let user = store.get_user(&user_id).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    store.take_link(&link.token_hash, time::now_ms()).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    set_password(svc, &user.id, password).await?;
    Ok(user)
}

/// The email of the user a password-reset link is for (shown on its form).
pub async fn link_email(svc: &Service, link: &OneTimeLink) -> ServiceResult<String> {
    let store = svc.store();
    let user = match &link.user_id {
        Some(id) => store.get_user(id).await?,
        None => None,
    };
    Ok(user.map(|user| user.email).unwrap_or_default())
}

/// Which of `report_ids` the viewer has viewed (a person's read state in the inbox).
pub async fn viewed_among(svc: &Service, viewer: &str, report_ids: &[String]) -> ServiceResult<Vec<String>> {
    let store = svc.store();
    Ok(store.viewed_among(viewer, report_ids).await?)
}

/// Whether nobody has an account yet (then each start prints a first-owner link).
pub async fn no_users_yet(svc: &Service) -> ServiceResult<bool> {
    let store = svc.store();
    Ok(store.count_users().await? == 0)
}

/// Argon2id with the crate's recommended parameters (19 MiB, two passes), run on the blocking pool
/// so a sign-in does not stall other requests on a 2-core machine.
mod password {
    use argon2::Argon2;
    use argon2::password_hash::phc::PasswordHash;
    use argon2::password_hash::{PasswordHasher, PasswordVerifier};
    use std::sync::OnceLock;
    use svc_core::secret::Secret;

    use crate::{ServiceError, ServiceResult};

    fn blocking_failed(error: tokio::task::JoinError) -> ServiceError {
        ServiceError::Internal(format!("password hashing task failed: {error}"))
    }

    pub async fn hash(password: Secret) -> ServiceResult<String> {
        tokio::task::spawn_blocking(move || {
            Argon2::default()
                .hash_password(password.expose().as_bytes())
                .map(|hash| hash.to_string())
                .map_err(|error| ServiceError::Internal(format!("password hashing failed: {error}")))
        })
        .await
        .map_err(blocking_failed)?
    }

    pub async fn verify(password: Secret, stored: String) -> ServiceResult<bool> {
        tokio::task::spawn_blocking(move || {
            let Ok(parsed) = PasswordHash::new(&stored) else { return false };
            Argon2::default().verify_password(password.expose().as_bytes(), &parsed).is_ok()
        })
        .await
        .map_err(blocking_failed)
    }

    /// A hash of a random password, verified against for unknown emails so they take as long.
    pub fn decoy_hash() -> &'static str {
        static DECOY: OnceLock<String> = OnceLock::new();
        DECOY.get_or_init(|| {
            Argon2::default()
                .hash_password(svc_core::ids::new_random_secret(32).as_bytes())
                .map(|hash| hash.to_string())
                .unwrap_or_default()
        })
    }
}

/// The members of an organization with their roles, by name (the dashboard's assignee menu).
pub async fn members(svc: &Service, org_id: &str) -> ServiceResult<Vec<(User, Membership)>> {
    let store = svc.store();
    Ok(store.list_members(org_id).await?)
}

/// The user `user_id` if they belong to the organization (someone a report of it may be assigned
/// to); `Invalid` otherwise, naming the field.
pub async fn assignable(svc: &Service, org_id: &str, user_id: &str) -> ServiceResult<User> {
    let store = svc.store();
    let not_member =
        || ServiceError::Invalid(format!("assignee: {user_id} is not a member of the project's organization"));
    let user = store.get_user(user_id).await?.ok_or_else(not_member)?;
    let member = store.list_memberships(&user.id).await?.iter().any(|m| m.org_id == org_id);
    if member { Ok(user) } else { Err(not_member()) }
}

// ---------------------------------------------------------------------------------------------
// Members: invitations, roles and removal. Only an owner of the organization changes its members,
// and an organization always keeps at least one owner (checked by the store in one transaction,
// so two owners demoting each other at once cannot leave none).

/// An invitation someone opened: the link and the organization it joins.
#[derive(Debug, Clone)]
pub struct Invitation {
    pub link: OneTimeLink,
    pub org: svc_core::model::Organization,
    pub role: Role,
}

/// A pending invitation as an owner sees it (the link itself is never shown again).
#[derive(Debug, Clone)]
pub struct PendingInvite {
    /// The SHA-256 of the link's token: names the invitation to withdraw it.
    pub id: String,
    pub role: Role,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The words the audit log keeps about a member.
fn member_detail(user: &User, role: Role) -> serde_json::Value {
    serde_json::json!({"member": user.label(), "email": user.email, "userId": user.id, "role": role.as_str()})
}

/// A one-time invitation link token to join the organization with `role`, valid seven days
/// (owners only). The token is returned this once; only its SHA-256 is stored.
pub async fn invite(svc: &Service, by: &Principal, org_id: &str, role: Role) -> ServiceResult<(Secret, i64)> {
    permissions::check_org(by, OrgOperation::ManageMembers, org_id)?;
    let token = new_link(svc, LinkPurpose::Invite, Some(org_id), None, Some(role), INVITE_LIFETIME_MS).await?;
    let expires_at = time::now_ms() + INVITE_LIFETIME_MS;
    let detail = serde_json::json!({"role": role.as_str(), "expiresAt": expires_at});
    audit::record_for_org(svc, org_id, &by.author(), action::MEMBER_INVITED, detail).await;
    Ok((token, expires_at))
}

/// Mails an invitation link to `to` (queued: the mail task sends it once an SMTP server is set).
pub async fn mail_invitation(
    svc: &Service,
    by: &Principal,
    org_id: &str,
    to: svc_core::account::Email,
    link: &str,
    role: Role,
    expires_at: i64,
) -> ServiceResult<()> {
    let store = svc.store();
    permissions::check_org(by, OrgOperation::ManageMembers, org_id)?;
    let org =
        store.get_organization(org_id).await?.ok_or_else(|| ServiceError::NotFound("no such organization".into()))?;
    let inviter = by.author().label.unwrap_or_else(|| "An owner".into());
    let role_words = match role {
        Role::Owner => "an owner (settings, keys and members too)",
        Role::Member => "a member (read and triage reports)",
    };
    let text = format!(
        "{inviter} invites you to join {org} on Svc as {role_words}.\n\nJoin with this link (it works once, until {until} \
         UTC):\n\n{link}\n\nIt creates your account, or signs you in with the one you have. If you did not expect \
         this, ignore this mail.\n",
        org = org.name,
        until = time::iso(expires_at).get(..16).unwrap_or_default().replace('T', " "),
    );
    let mut mail = super::mail::Mail::new(
        org_id,
        to,
        svc_core::mail::MailKind::Invitation,
        format!("Join {} on Svc", org.name),
        text,
    );
    mail.expires_at = Some(expires_at);
    super::mail::queue(svc, mail).await?;
    Ok(())
}

/// The organization's pending invitations, newest first.
pub async fn pending_invites(svc: &Service, org_id: &str) -> ServiceResult<Vec<PendingInvite>> {
    let store = svc.store();
    let links = store.list_org_links(org_id, LinkPurpose::Invite, time::now_ms()).await?;
    Ok(links
        .into_iter()
        .map(|link| PendingInvite {
            id: link.token_hash,
            role: link.role.unwrap_or(Role::Member),
            created_at: link.created_at,
            expires_at: link.expires_at,
        })
        .collect())
}

/// Withdraws a pending invitation (owners only): its link stops working.
pub async fn withdraw_invite(svc: &Service, by: &Principal, org_id: &str, invite_id: &str) -> ServiceResult<()> {
    let store = svc.store();
    permissions::check_org(by, OrgOperation::ManageMembers, org_id)?;
    if !store.delete_org_link(org_id, invite_id).await? {
        return Err(ServiceError::NotFound("no pending invitation with that id".into()));
    }
    audit::record_for_org(svc, org_id, &by.author(), action::MEMBER_INVITE_WITHDRAWN, serde_json::json!({})).await;
    Ok(())
}

/// The unexpired, unused invitation behind a token, with its organization (to show its page).
pub async fn open_invite(svc: &Service, token: &str) -> ServiceResult<Option<Invitation>> {
    let store = svc.store();
    let Some(link) = open_link(svc, token, LinkPurpose::Invite).await? else { return Ok(None) };
    let Some(org_id) = link.org_id.as_deref() else { return Ok(None) };
    let Some(org) = store.get_organization(org_id).await? else { return Ok(None) };
    let role = link.role.unwrap_or(Role::Member);
    Ok(Some(Invitation { link, org, role }))
}

/// The author recorded for someone who joined by themselves.
fn joined_by(user: &User) -> svc_core::model::Author {
    svc_core::model::Author {
        kind: svc_core::model::AuthorKind::User,
        id: Some(format!("user:{}", user.id)),
        label: Some(user.label().to_string()),
    }
}

/// Redeems an invitation for a new account: creates the user as a member of the invitation's
/// organization with its role. A taken email is a `Conflict` and leaves the link unused (the person
/// signs in and opens the link again).
pub async fn accept_invite_as_new(svc: &Service, token: &str, new: NewUser) -> ServiceResult<(User, Invitation)> {
    let store = svc.store();
    let invitation = open_invite(svc, token).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    if store.find_user_by_email(new.email.as_str()).await?.is_some() {
        return Err(ServiceError::Conflict(format!("a user with the email {} already exists", new.email.as_str())));
    }
    store
        .take_link(&invitation.link.token_hash, time::now_ms())
        .await?
        .ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let user = create_user(svc, new, Some((&invitation.org.id, invitation.role))).await?;
    let detail = member_detail(&user, invitation.role);
    audit::record_for_org(svc, &invitation.org.id, &joined_by(&user), action::MEMBER_ADDED, detail).await;
    Ok((user, invitation))
}

/// Redeems an invitation for someone signed in: they join with the invitation's role. Someone who
/// already belongs to the organization keeps their role and the link stays unused (`Conflict`).
pub async fn accept_invite_as(svc: &Service, token: &str, person: &SignedIn) -> ServiceResult<Invitation> {
    let store = svc.store();
    let invitation = open_invite(svc, token).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let already = || ServiceError::Conflict(format!("you already belong to {}", invitation.org.name));
    if person.role_in(&invitation.org.id).is_some() {
        return Err(already());
    }
    let now = time::now_ms();
    store.take_link(&invitation.link.token_hash, now).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let membership = Membership {
        org_id: invitation.org.id.clone(),
        user_id: person.user.id.clone(),
        role: invitation.role,
        created_at: now,
    };
    if !store.add_member(&membership).await? {
        return Err(already());
    }
    let detail = member_detail(&person.user, invitation.role);
    audit::record_for_org(svc, &invitation.org.id, &joined_by(&person.user), action::MEMBER_ADDED, detail).await;
    Ok(invitation)
}

/// The member `user_id` of the organization, or `NotFound`.
async fn member_of(svc: &Service, org_id: &str, user_id: &str) -> ServiceResult<User> {
    let store = svc.store();
    let not_member = || ServiceError::NotFound("no such member of this organization".into());
    let user = store.get_user(user_id).await?.ok_or_else(not_member)?;
    if store.list_memberships(&user.id).await?.iter().any(|m| m.org_id == org_id) {
        Ok(user)
    } else {
        Err(not_member())
    }
}

fn last_owner(user: &User) -> ServiceError {
    ServiceError::Conflict(format!(
        "the organization would be left without an owner: {} is its last owner; make someone else an owner first",
        user.label()
    ))
}

/// Gives a member another role (owners only). The last owner cannot be made a member.
pub async fn change_role(svc: &Service, by: &Principal, org_id: &str, user_id: &str, role: Role) -> ServiceResult<()> {
    let store = svc.store();
    permissions::check_org(by, OrgOperation::ManageMembers, org_id)?;
    let user = member_of(svc, org_id, user_id).await?;
    match store.change_member_role(org_id, user_id, role).await? {
        MemberChange::Done { previous } if previous == role => Ok(()),
        MemberChange::Done { previous } => {
            let mut detail = member_detail(&user, role);
            detail["from"] = previous.as_str().into();
            audit::record_for_org(svc, org_id, &by.author(), action::MEMBER_ROLE_CHANGED, detail).await;
            Ok(())
        }
        MemberChange::LastOwner => Err(last_owner(&user)),
        MemberChange::NotMember => Err(ServiceError::NotFound("no such member of this organization".into())),
    }
}

/// Removes a member from the organization (owners only): they lose every project of it at once,
/// the keys they connected there through OAuth are revoked, and someone left in no organization is
/// signed out everywhere. The last owner cannot be removed.
pub async fn remove_member(svc: &Service, by: &Principal, org_id: &str, user_id: &str) -> ServiceResult<()> {
    let store = svc.store();
    permissions::check_org(by, OrgOperation::ManageMembers, org_id)?;
    let user = member_of(svc, org_id, user_id).await?;
    match store.remove_member(org_id, user_id).await? {
        MemberChange::Done { previous } => {
            // Their open live views lose the organization's projects (or end) at once.
            announce_sessions_ended(svc);
            let detail = member_detail(&user, previous);
            audit::record_for_org(svc, org_id, &by.author(), action::MEMBER_REMOVED, detail).await;
            // What they granted to agents through OAuth ends with their membership.
            super::oauth::revoke_for_removed_member(svc, org_id, user_id, &by.author()).await?;
            Ok(())
        }
        MemberChange::LastOwner => Err(last_owner(&user)),
        MemberChange::NotMember => Err(ServiceError::NotFound("no such member of this organization".into())),
    }
}
