//! Dashboard accounts: users, memberships, sign-in, sessions and one-time links (first owner,
//! password reset). Passwords are hashed with Argon2id off the async threads; session cookies and
//! link tokens are stored only as their SHA-256.

use svc_core::account::{
    self, Email, LINK_LIFETIME_MS, LinkPurpose, Membership, OneTimeLink, Role, SESSION_LIFETIME_MS,
    SESSION_TOUCH_INTERVAL_MS, Session, User,
};
use svc_core::secret::{Secret, hash_secret};
use svc_core::{ids, time};
use svc_store::Store;

use super::{ServiceError, ServiceResult};

/// A person with a live session, and the organizations they belong to.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub user: User,
    pub memberships: Vec<Membership>,
    /// The SHA-256 of the session cookie (to end this session).
    pub session_hash: String,
}

impl SignedIn {
    /// The person's role in an organization, if they belong to it.
    pub fn role_in(&self, org_id: &str) -> Option<Role> {
        self.memberships.iter().find(|m| m.org_id == org_id).map(|m| m.role)
    }
}

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

/// Creates a user and, when given, their membership. A taken email is a `Conflict`.
pub async fn create_user(store: &dyn Store, new: NewUser, join: Option<(&str, Role)>) -> ServiceResult<User> {
    if let Some((org_id, _)) = join
        && store.get_organization(org_id).await?.is_none()
    {
        return Err(ServiceError::NotFound(format!("no organization {org_id}")));
    }
    let password_hash = password::hash(new.password).await?;
    let now = time::now_ms();
    let user = User { id: ids::new_id_at(now), email: new.email.into_string(), name: new.name, created_at: now };
    store.create_user(&user, &password_hash).await.map_err(|error| match error {
        svc_store::StoreError::Conflict(_) => {
            ServiceError::Conflict(format!("a user with the email {} already exists", user.email))
        }
        other => other.into(),
    })?;
    if let Some((org_id, role)) = join {
        store
            .put_membership(&Membership { org_id: org_id.into(), user_id: user.id.clone(), role, created_at: now })
            .await?;
    }
    Ok(user)
}

/// The user with this email, if any.
pub async fn find_user(store: &dyn Store, email: &str) -> ServiceResult<Option<User>> {
    let email = Email::parse(email)?;
    Ok(store.find_user_by_email(email.as_str()).await?.map(|(user, _)| user))
}

/// Sets a user's password and ends all their sessions (whoever knew the old one is signed out).
pub async fn set_password(store: &dyn Store, user_id: &str, password: Secret) -> ServiceResult<()> {
    account::check_password(password.expose())?;
    let password_hash = password::hash(password).await?;
    store.set_password_hash(user_id, &password_hash, time::now_ms()).await?;
    store.delete_user_sessions(user_id).await?;
    Ok(())
}

/// The user with this email and password, or `None` for a wrong pair (the two cases are not told
/// apart, and an unknown email costs as much time as a wrong password).
pub async fn check_credentials(store: &dyn Store, email: &str, password: Secret) -> ServiceResult<Option<User>> {
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
pub async fn start_session(store: &dyn Store, user_id: &str) -> ServiceResult<Secret> {
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
pub async fn resolve_session(store: &dyn Store, token: &str) -> ServiceResult<Option<SignedIn>> {
    if !token.starts_with("svs_") {
        return Ok(None);
    }
    let now = time::now_ms();
    let id_hash = hash_secret(token);
    let Some(session) = store.get_session(&id_hash, now).await? else { return Ok(None) };
    let Some(user) = store.get_user(&session.user_id).await? else { return Ok(None) };
    if now - session.last_seen_at >= SESSION_TOUCH_INTERVAL_MS {
        store.touch_session(&id_hash, now, now + SESSION_LIFETIME_MS).await?;
    }
    let memberships = store.list_memberships(&user.id).await?;
    Ok(Some(SignedIn { user, memberships, session_hash: id_hash }))
}

/// Ends one session.
pub async fn end_session(store: &dyn Store, session_hash: &str) -> ServiceResult<()> {
    Ok(store.delete_session(session_hash).await?)
}

/// Ends every session of a user ("sign out everywhere"); returns how many ended.
pub async fn end_all_sessions(store: &dyn Store, user_id: &str) -> ServiceResult<u64> {
    Ok(store.delete_user_sessions(user_id).await?)
}

/// A one-time link token for the first owner of an organization (valid one hour).
pub async fn first_owner_link(store: &dyn Store, org_id: &str) -> ServiceResult<Secret> {
    new_link(store, LinkPurpose::FirstOwner, Some(org_id), None).await
}

/// A one-time link token with which the user of this email sets a new password (valid one hour).
pub async fn password_reset_link(store: &dyn Store, email: &str) -> ServiceResult<Secret> {
    let email = Email::parse(email)?;
    let Some((user, _)) = store.find_user_by_email(email.as_str()).await? else {
        return Err(ServiceError::NotFound(format!("no user with the email {}", email.as_str())));
    };
    new_link(store, LinkPurpose::ResetPassword, None, Some(&user.id)).await
}

async fn new_link(
    store: &dyn Store,
    purpose: LinkPurpose,
    org_id: Option<&str>,
    user_id: Option<&str>,
) -> ServiceResult<Secret> {
    let token = Secret::new(account::new_link_token());
    let now = time::now_ms();
    let link = OneTimeLink {
        token_hash: hash_secret(token.expose()),
        purpose,
        org_id: org_id.map(str::to_string),
        user_id: user_id.map(str::to_string),
        created_at: now,
        expires_at: now + LINK_LIFETIME_MS,
    };
    store.create_link(&link).await?;
    Ok(token)
}

/// The unexpired, unused link of this purpose behind a token (to show its form), without using it.
pub async fn open_link(store: &dyn Store, token: &str, purpose: LinkPurpose) -> ServiceResult<Option<OneTimeLink>> {
    let link = store.peek_link(&hash_secret(token), time::now_ms()).await?;
    Ok(link.filter(|link| link.purpose == purpose))
}

const LINK_GONE: &str = "this link has expired or was already used; ask for a new one";

/// Redeems a first-owner link: creates the user as owner of the link's organization.
pub async fn redeem_first_owner(store: &dyn Store, token: &str, new: NewUser) -> ServiceResult<User> {
    let link = open_link(store, token, LinkPurpose::FirstOwner)
        .await?
        .ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let org_id = link.org_id.clone().ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    // Refuse a taken email before spending the link, so a typo does not cost the person their link.
    if store.find_user_by_email(new.email.as_str()).await?.is_some() {
        return Err(ServiceError::Conflict(format!("a user with the email {} already exists", new.email.as_str())));
    }
    store.take_link(&link.token_hash, time::now_ms()).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    create_user(store, new, Some((&org_id, Role::Owner))).await
}

/// Redeems a password-reset link: sets the password and signs the user out everywhere.
pub async fn redeem_password_reset(store: &dyn Store, token: &str, password: Secret) -> ServiceResult<User> {
    account::check_password(password.expose())?;
    let link = open_link(store, token, LinkPurpose::ResetPassword)
        .await?
        .ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let user_id = link.user_id.clone().ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    let user = store.get_user(&user_id).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    store.take_link(&link.token_hash, time::now_ms()).await?.ok_or_else(|| ServiceError::Invalid(LINK_GONE.into()))?;
    set_password(store, &user.id, password).await?;
    Ok(user)
}

/// The email of the user a password-reset link is for (shown on its form).
pub async fn link_email(store: &dyn Store, link: &OneTimeLink) -> ServiceResult<String> {
    let user = match &link.user_id {
        Some(id) => store.get_user(id).await?,
        None => None,
    };
    Ok(user.map(|user| user.email).unwrap_or_default())
}

/// Which of `report_ids` the viewer has viewed (a person's read state in the inbox).
pub async fn viewed_among(store: &dyn Store, viewer: &str, report_ids: &[String]) -> ServiceResult<Vec<String>> {
    Ok(store.viewed_among(viewer, report_ids).await?)
}

/// Whether nobody has an account yet (then each start prints a first-owner link).
pub async fn no_users_yet(store: &dyn Store) -> ServiceResult<bool> {
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

    use crate::service::{ServiceError, ServiceResult};

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
pub async fn members(store: &dyn Store, org_id: &str) -> ServiceResult<Vec<(User, Membership)>> {
    Ok(store.list_members(org_id).await?)
}

/// The user `user_id` if they belong to the organization (someone a report of it may be assigned
/// to); `Invalid` otherwise, naming the field.
pub async fn assignable(store: &dyn Store, org_id: &str, user_id: &str) -> ServiceResult<User> {
    let not_member =
        || ServiceError::Invalid(format!("assignee: {user_id} is not a member of the project's organization"));
    let user = store.get_user(user_id).await?.ok_or_else(not_member)?;
    let member = store.list_memberships(&user.id).await?.iter().any(|m| m.org_id == org_id);
    if member { Ok(user) } else { Err(not_member()) }
}
