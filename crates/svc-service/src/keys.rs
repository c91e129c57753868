//! API keys: minting (plaintext returned once, only the hash stored) and authentication.

use super::{ServiceError, ServiceResult, audit};
use crate::Service;
use crate::permissions::{self, OrgOperation};
use crate::principal::Principal;
use svc_core::audit::action;
use svc_core::key::{AgentLabel, NewKey};
use svc_core::model::Author;
use svc_core::model::Project;
use svc_core::model::{ApiKey, KeyOrigin};
use svc_core::secret::{Secret, constant_time_eq, hash_secret};
use svc_core::{ids, scope, time};
pub use svc_store::FoundKey;

/// Setup tokens (scope `*`) live one hour unless told otherwise.
pub const SETUP_TOKEN_TTL_SECS: i64 = 3600;
pub struct MintRequest {
    pub org_id: String,
    /// `None` mints an org-wide key (tool endpoint only).
    pub project_id: Option<String>,
    pub name: String,
    pub scopes: Vec<String>,
    pub ttl_secs: Option<i64>,
    pub origin: KeyOrigin,
    /// Who mints it, for the audit log.
    pub by: Author,
}

/// Mints a key and returns it with its plaintext, which is never stored.
pub async fn mint(svc: &Service, request: MintRequest) -> ServiceResult<(ApiKey, Secret)> {
    let store = svc.store();
    let (key, secret, by) = prepare(request)?;
    store.create_key(&key).await?;
    announce_minted(svc, &key, &by).await;
    Ok((key, secret))
}

/// The key a mint request makes, checked and not yet stored, with its plaintext and who mints it
/// ([`mint`] stores it; OAuth stores it with its grant).
pub(crate) fn prepare(request: MintRequest) -> ServiceResult<(ApiKey, Secret, Author)> {
    // Every mint is held to the administrator's rules; the API's narrower ones come with its `NewKey`.
    let MintRequest { org_id, project_id, name, scopes, ttl_secs, origin, by } = request;
    let NewKey { name, scopes, ttl_secs } = NewKey::by_admin(name, scopes, ttl_secs)?;
    let plaintext = ids::new_secret_key();
    let now = time::now_ms();
    let key = ApiKey {
        id: ids::new_id_at(now),
        project_id,
        org_id,
        name,
        key_hash: hash_secret(&plaintext),
        scopes,
        origin,
        expires_at: ttl_secs.map(|ttl| now + ttl * 1000),
        revoked_at: None,
        last_used_at: None,
        agent_name: None,
        agent_owner: None,
        created_at: now,
    };
    Ok((key, Secret::new(plaintext), by))
}

/// Records a stored key's minting in the audit log (the project's, or the organization's for an
/// org-wide key).
pub(crate) async fn announce_minted(svc: &Service, key: &ApiKey, by: &Author) {
    let detail = serde_json::json!({
        "keyId": key.id,
        "name": key.name,
        "scopes": key.scopes.join(" "),
        "origin": key.origin.as_str(),
        "expiresAt": key.expires_at,
    });
    match &key.project_id {
        Some(project_id) => audit::record_for_report(svc, project_id, by, action::KEY_MINTED, detail).await,
        None => audit::record_for_org(svc, &key.org_id, by, action::KEY_MINTED, detail).await,
    }
}

/// Mints a project key through the API (the plaintext is returned this once).
pub async fn mint_for_project(
    svc: &Service,
    project: &Project,
    new: NewKey,
    origin: KeyOrigin,
    by: &Author,
) -> ServiceResult<(ApiKey, Secret)> {
    let NewKey { name, scopes, ttl_secs } = new;
    let request = MintRequest {
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        name,
        scopes,
        ttl_secs,
        origin,
        by: by.clone(),
    };
    mint(svc, request).await
}

/// Every key of the project, as the dashboard lists them: active keys first, then revoked and
/// expired ones; newest first within each.
pub async fn list(svc: &Service, project: &Project) -> ServiceResult<Vec<ApiKey>> {
    let store = svc.store();
    Ok(active_first(store.list_keys(&project.id).await?))
}

/// Keys as listed: active ones first, then revoked and expired ones; newest first within each.
fn active_first(mut keys: Vec<ApiKey>) -> Vec<ApiKey> {
    let now = time::now_ms();
    keys.sort_by(|a, b| (b.is_active(now), b.created_at, &b.id).cmp(&(a.is_active(now), a.created_at, &a.id)));
    keys
}

/// The organization's own keys (bound to no project: `svc token org`, OAuth grants for a whole
/// organization), listed like a project's.
pub async fn list_org_wide(svc: &Service, org_id: &str) -> ServiceResult<Vec<ApiKey>> {
    let store = svc.store();
    Ok(active_first(store.list_org_keys(org_id).await?))
}

/// Revokes an organization-wide key (owners of the organization); its next request gets 401.
pub async fn revoke_org_wide(svc: &Service, by: &Principal, org_id: &str, key_id: &str) -> ServiceResult<i64> {
    let store = svc.store();
    permissions::check_org(by, OrgOperation::ManageOrgKeys, org_id)?;
    let not_found = || ServiceError::NotFound("no active organization-wide key with that id".into());
    if !ids::is_object_id(key_id) {
        return Err(not_found());
    }
    let now = time::now_ms();
    let key = match store.get_key(key_id).await? {
        Some(found) if found.org_id == org_id && found.project_id.is_none() && found.is_active(now) => found,
        _ => return Err(not_found()),
    };
    let revoked_at = store.revoke_org_key(org_id, key_id, now).await?.ok_or_else(not_found)?;
    let detail = serde_json::json!({"keyId": key.id, "name": key.name});
    audit::record_for_org(svc, org_id, &by.author(), action::KEY_REVOKED, detail).await;
    Ok(revoked_at)
}

/// Revokes an active key of the project and returns when. Only an active key can be revoked: an
/// expired one is already unusable (spec: 404 when there is no active key with that id).
pub async fn revoke(svc: &Service, project: &Project, key_id: &str, by: &Author) -> ServiceResult<i64> {
    let store = svc.store();
    let project_id = project.id.as_str();
    let not_found = || ServiceError::NotFound("no active key with that id in this project".into());
    if !ids::is_object_id(key_id) {
        return Err(not_found());
    }
    let now = time::now_ms();
    let key = match store.get_key(key_id).await? {
        Some(found) if found.project_id.as_deref() == Some(project_id) && found.is_active(now) => found,
        _ => return Err(not_found()),
    };
    let revoked_at = store.revoke_key(project_id, key_id, now).await?.ok_or_else(not_found)?;
    let detail = serde_json::json!({"keyId": key.id, "name": key.name});
    audit::record(svc, project, by, action::KEY_REVOKED, detail).await;
    Ok(revoked_at)
}

/// Labels what a key does from now on (the tool endpoint's `introduce`).
pub async fn introduce(svc: &Service, by: &Principal, label: &AgentLabel) -> ServiceResult<()> {
    let store = svc.store();
    let key = by.key().ok_or_else(|| ServiceError::Invalid("only a key can introduce itself".into()))?;
    Ok(store.set_key_agent(&key.id, &label.name, label.owner.as_deref()).await?)
}

/// Mints a setup token (scope `*`) for a project.
pub async fn mint_setup_token(
    svc: &Service,
    org_id: &str,
    project_id: &str,
    ttl_secs: Option<i64>,
    by: &Author,
) -> ServiceResult<(ApiKey, Secret)> {
    mint(
        svc,
        MintRequest {
            org_id: org_id.to_string(),
            project_id: Some(project_id.to_string()),
            name: "Setup token".into(),
            scopes: vec![scope::ALL.into()],
            ttl_secs: Some(ttl_secs.unwrap_or(SETUP_TOKEN_TTL_SECS)),
            origin: KeyOrigin::Setup,
            by: by.clone(),
        },
    )
    .await
}

#[derive(Debug, PartialEq, Eq)]
pub enum AuthFailure {
    Missing,
    Malformed,
    Unknown,
    Expired,
    Revoked,
}

impl AuthFailure {
    pub fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing API key: send Authorization: Bearer pr_sk_...",
            AuthFailure::Malformed => "malformed API key: expected Authorization: Bearer pr_sk_...",
            AuthFailure::Unknown => "invalid API key",
            AuthFailure::Expired => "API key expired",
            AuthFailure::Revoked => "API key revoked",
        }
    }
}

/// Resolves an `Authorization` header value to an active key, with the project it is bound to
/// (`None` for an org-wide key), read with it.
pub async fn authenticate(svc: &Service, authorization: Option<&str>) -> Result<FoundKey, AuthResultError> {
    let store = svc.store();
    let header = authorization.ok_or(AuthResultError::Denied(AuthFailure::Missing))?;
    let token = header
        .strip_prefix("Bearer ")
        .or_else(|| header.strip_prefix("bearer "))
        .map(str::trim)
        .ok_or(AuthResultError::Denied(AuthFailure::Malformed))?;
    if !token.starts_with("pr_sk_") || token.len() > 200 {
        return Err(AuthResultError::Denied(AuthFailure::Malformed));
    }
    let hash = hash_secret(token);
    let found = store
        .find_key_by_hash(&hash)
        .await
        .map_err(|e| AuthResultError::Store(e.into()))?
        .ok_or(AuthResultError::Denied(AuthFailure::Unknown))?;
    let key = &found.key;
    // The lookup was by hash; compare again in constant time so equality never short-circuits.
    if !constant_time_eq(key.key_hash.as_bytes(), hash.as_bytes()) {
        return Err(AuthResultError::Denied(AuthFailure::Unknown));
    }
    let now = time::now_ms();
    if key.revoked_at.is_some() {
        return Err(AuthResultError::Denied(AuthFailure::Revoked));
    }
    if key.expires_at.is_some_and(|at| at <= now) {
        return Err(AuthResultError::Denied(AuthFailure::Expired));
    }
    Ok(found)
}

#[derive(Debug)]
pub enum AuthResultError {
    Denied(AuthFailure),
    Store(ServiceError),
}
