//! API keys: minting (plaintext returned once, only the hash stored) and authentication.

use super::{ServiceError, ServiceResult};
use svc_core::model::{ApiKey, KeyOrigin};
use svc_core::secret::{Secret, constant_time_eq, hash_secret};
use svc_core::{Invalid, ids, scope, time};
use svc_store::Store;

/// Setup tokens (scope `*`) live one hour unless told otherwise.
pub const SETUP_TOKEN_TTL_SECS: i64 = 3600;
pub const MIN_TTL_SECS: i64 = 60;
pub const MAX_TTL_SECS: i64 = 31_536_000;

pub struct MintRequest {
    pub org_id: String,
    /// `None` mints an org-wide key (tool endpoint only).
    pub project_id: Option<String>,
    pub name: String,
    pub scopes: Vec<String>,
    pub ttl_secs: Option<i64>,
    pub origin: KeyOrigin,
}

pub fn validate_key_name(name: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() || name.chars().count() > 100 {
        return Err(Invalid::new("name must be 1 to 100 characters"));
    }
    Ok(())
}

pub fn validate_ttl(ttl_secs: i64) -> Result<(), Invalid> {
    if !(MIN_TTL_SECS..=MAX_TTL_SECS).contains(&ttl_secs) {
        return Err(Invalid::new(format!("expiresInSeconds must be between {MIN_TTL_SECS} and {MAX_TTL_SECS}")));
    }
    Ok(())
}

/// Mints a key and returns it with its plaintext, which is never stored.
pub async fn mint(store: &dyn Store, request: MintRequest) -> ServiceResult<(ApiKey, Secret)> {
    validate_key_name(&request.name)?;
    if let Some(ttl) = request.ttl_secs {
        validate_ttl(ttl)?;
    }
    scope::validate_known(&request.scopes)?;
    let plaintext = ids::new_secret_key();
    let now = time::now_ms();
    let key = ApiKey {
        id: ids::new_id_at(now),
        project_id: request.project_id,
        org_id: request.org_id,
        name: request.name,
        key_hash: hash_secret(&plaintext),
        scopes: request.scopes,
        origin: request.origin,
        expires_at: request.ttl_secs.map(|ttl| now + ttl * 1000),
        revoked_at: None,
        last_used_at: None,
        agent_name: None,
        agent_owner: None,
        created_at: now,
    };
    store.create_key(&key).await?;
    Ok((key, Secret::new(plaintext)))
}

/// Mints a setup token (scope `*`) for a project.
pub async fn mint_setup_token(
    store: &dyn Store,
    org_id: &str,
    project_id: &str,
    ttl_secs: Option<i64>,
) -> ServiceResult<(ApiKey, Secret)> {
    mint(
        store,
        MintRequest {
            org_id: org_id.to_string(),
            project_id: Some(project_id.to_string()),
            name: "Setup token".into(),
            scopes: vec![scope::ALL.into()],
            ttl_secs: Some(ttl_secs.unwrap_or(SETUP_TOKEN_TTL_SECS)),
            origin: KeyOrigin::Setup,
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

/// Resolves an `Authorization` header value to an active key.
pub async fn authenticate(store: &dyn Store, authorization: Option<&str>) -> Result<ApiKey, AuthResultError> {
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
    let key = store
        .find_key_by_hash(&hash)
        .await
        .map_err(|e| AuthResultError::Store(e.into()))?
        .ok_or(AuthResultError::Denied(AuthFailure::Unknown))?;
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
    Ok(key)
}

#[derive(Debug)]
pub enum AuthResultError {
    Denied(AuthFailure),
    Store(ServiceError),
}
