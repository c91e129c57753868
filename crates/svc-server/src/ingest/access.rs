//! Who may use ingest: the public project key in `x-svc-project-key`, from an allowed origin.

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::ORIGIN;
use axum::http::request::Parts;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use svc_core::model::Project;

use super::error::IngestError;
use crate::state::AppState;
use svc_service::projects;

pub const PROJECT_KEY_HEADER: &str = "x-svc-project-key";
pub const IDENTITY_HEADER: &str = "x-svc-identity";

/// The project a request's key names, after the origin check (shared with the store's cache).
pub struct IngestProject(pub Arc<Project>);

/// Resolves the key and checks `Origin` against `allowedOrigins` (requests without `Origin` pass).
pub async fn resolve(state: &AppState, parts: &Parts) -> Result<Option<Arc<Project>>, IngestError> {
    let Some(key) = parts.headers.get(PROJECT_KEY_HEADER).and_then(|v| v.to_str().ok()) else { return Ok(None) };
    let Some(project) = projects::by_public_key(&state.service, key).await? else { return Ok(None) };
    if !project.allowed_origins.is_empty() {
        if let Some(origin) = parts.headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or_default().trim_end_matches('/');
            // Scheme and host are case-insensitive; browsers send them lowercased.
            if !project.allowed_origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin)) {
                return Ok(None);
            }
        }
    }
    Ok(Some(project))
}

impl FromRequestParts<AppState> for IngestProject {
    type Rejection = IngestError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        resolve(state, parts).await?.map(IngestProject).ok_or(IngestError::INVALID_KEY_OR_ORIGIN)
    }
}

/// The client's address: the socket peer, or behind a trusted proxy the last untrusted
/// `X-Forwarded-For` entry.
pub fn client_ip(state: &AppState, parts: &Parts) -> Option<IpAddr> {
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip())?;
    if !state.config.is_trusted_proxy(peer) {
        return Some(peer);
    }
    let forwarded = parts.headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()).unwrap_or_default();
    forwarded
        .split(',')
        .rev()
        .filter_map(|entry| entry.trim().parse::<IpAddr>().ok())
        .find(|ip| !state.config.is_trusted_proxy(*ip))
        .or(Some(peer))
}

/// The page a request came from: its `Referer`, else its `Origin`.
pub fn page_from_headers(headers: &axum::http::HeaderMap) -> Option<&str> {
    [axum::http::header::REFERER, axum::http::header::ORIGIN]
        .into_iter()
        .filter_map(|name| headers.get(name).and_then(|value| value.to_str().ok()))
        .find(|value| svc_service::sightings::page_url(value).is_some())
}
