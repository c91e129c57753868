//! Resolving a request's API key (the `Authorization` header) into the acting
//! [`Principal`](svc_service::principal::Principal): authenticated by the service, rate limited
//! and its use recorded here. The dashboard resolves its session cookie and the widget's routes
//! their reporter tokens the same way, each in its own module. Surfaces map [`AuthError`] to their
//! own wire format.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use svc_core::model::Project;
use svc_core::time;
use svc_service::keys::{self, AuthFailure, AuthResultError, FoundKey};
pub use svc_service::principal::{Principal, Refusal};

use crate::state::AppState;

/// Why a request has no principal.
#[derive(Debug)]
pub enum AuthError {
    /// No credential, or one that is malformed, unknown, expired or revoked.
    Unauthenticated(AuthFailure),
    /// Over the per-credential rate limit; retry after this many seconds.
    RateLimited(u64),
    Internal(anyhow::Error),
}

impl AuthError {
    pub fn message(&self) -> &'static str {
        match self {
            AuthError::Unauthenticated(failure) => failure.message(),
            AuthError::RateLimited(_) => "rate limit exceeded",
            AuthError::Internal(_) => "internal error",
        }
    }
}

/// A request's key as a principal, with the project the key is bound to.
pub struct Authenticated {
    pub principal: Principal,
    /// The key's project, read in the same statement as the key; `None` for an org-wide key.
    pub project: Option<Project>,
}

/// Authenticates a request's credential, applies its rate limit and records its use (written
/// off the request path).
pub async fn resolve(state: &AppState, headers: &HeaderMap) -> Result<Authenticated, AuthError> {
    let header = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let FoundKey { key, project } = match keys::authenticate(&state.service, header).await {
        Ok(found) => found,
        Err(AuthResultError::Denied(failure)) => return Err(AuthError::Unauthenticated(failure)),
        Err(AuthResultError::Store(error)) => return Err(AuthError::Internal(error.into())),
    };
    state.rate_limits.check_key(&key.id).map_err(AuthError::RateLimited)?;
    state.usage.record_key_use(&key, time::now_ms());
    let principal = if key.project_id.is_some() { Principal::ProjectKey(key) } else { Principal::OrgKey(key) };
    Ok(Authenticated { principal, project })
}
