//! Bearer-key authentication for the REST API: who is calling, with which scopes, on which project.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use svc_core::model::{ApiKey, Author, Project};
use svc_core::{ids, scope, time};

use crate::error::ApiError;
use crate::service::keys::{self, AuthResultError};
use crate::state::AppState;

/// An authenticated, project-bound API key (REST). Org-wide keys are refused here: they work on the
/// tool endpoint only.
pub struct RestKey(pub ApiKey);

/// Authenticates a request's bearer key, applies the per-key rate limit and records its use.
pub async fn authenticate_key(state: &AppState, parts: &Parts) -> Result<ApiKey, KeyRejection> {
    let header = parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let key = match keys::authenticate(&*state.store, header).await {
        Ok(key) => key,
        Err(AuthResultError::Denied(failure)) => {
            return Err(KeyRejection::Unauthorized(failure.message()));
        }
        Err(AuthResultError::Store(error)) => return Err(KeyRejection::Internal(error.into())),
    };
    state.rate_limits.check_key(&key.id).map_err(KeyRejection::RateLimited)?;
    // Off the request path: a slow write must not slow the answer.
    state.usage.record_key_use(&key, time::now_ms());
    Ok(key)
}

pub enum KeyRejection {
    Unauthorized(&'static str),
    RateLimited(u64),
    Internal(anyhow::Error),
}

impl From<KeyRejection> for ApiError {
    fn from(rejection: KeyRejection) -> Self {
        match rejection {
            KeyRejection::Unauthorized(message) => ApiError::Unauthorized(message.into()),
            KeyRejection::RateLimited(secs) => ApiError::RateLimited { retry_after_secs: secs },
            KeyRejection::Internal(error) => ApiError::Internal(error),
        }
    }
}

impl FromRequestParts<AppState> for RestKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = authenticate_key(state, parts).await?;
        if key.project_id.is_none() {
            return Err(ApiError::forbidden(
                "this is an org-wide key: it works on the tool endpoint (/mcp) only; the REST API needs a project key",
            ));
        }
        Ok(RestKey(key))
    }
}

impl RestKey {
    pub fn project_id(&self) -> &str {
        self.0.project_id.as_deref().unwrap_or_default()
    }

    pub fn require_scope(&self, needed: &str) -> Result<(), ApiError> {
        if scope::satisfies(&self.0.scopes, needed) {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("this key lacks the scope {needed}")))
        }
    }

    /// Checks that `path_project_id` is this key's project and the key holds `needed`, then loads
    /// the project.
    pub async fn project(&self, state: &AppState, path_project_id: &str, needed: &str) -> Result<Project, ApiError> {
        if ids::is_project_key(path_project_id) {
            return Err(ApiError::not_found(
                "this is the public project key; use the project id from GET /api/v1/me as :projectId",
            ));
        }
        if !ids::is_object_id(path_project_id) {
            return Err(ApiError::not_found("project not found"));
        }
        if path_project_id != self.project_id() {
            return Err(ApiError::forbidden("this key belongs to another project"));
        }
        self.require_scope(needed)?;
        state.store.get_project(path_project_id).await?.ok_or_else(|| ApiError::not_found("project not found"))
    }

    /// The author recorded for changes this key makes.
    pub fn author(&self) -> Author {
        key_author(&self.0)
    }
}

/// Changes made with a key are recorded as `agent:<keyId>`, labelled by `introduce` or the key name.
pub fn key_author(key: &ApiKey) -> Author {
    Author {
        kind: "agent".into(),
        id: Some(format!("agent:{}", key.id)),
        label: Some(key.agent_name.clone().unwrap_or_else(|| key.name.clone())),
    }
}
