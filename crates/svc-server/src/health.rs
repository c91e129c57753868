//! `/healthz` (process up), `/readyz` (database and blob store reachable and accepting writes),
//! `/metrics` (Prometheus).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;

pub fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_on_main_address))
}

/// What `SVC_METRICS_BIND` serves: `/metrics` alone (with the token, when one is set).
pub fn metrics_app(state: AppState) -> axum::Router {
    axum::Router::new().route("/metrics", get(metrics)).with_state(state)
}

async fn healthz() -> impl IntoResponse {
    Json(json!({"ok": true}))
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.readiness.check(&state.service, &state.blobs).await {
        (Ok(()), Ok(())) => (StatusCode::OK, Json(json!({"ok": true}))),
        (database, blobs) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"ok": false, "database": database.is_ok(), "blobStore": blobs.is_ok()})),
        ),
    }
}

/// `/metrics` on the main address: not there when a separate address serves it.
async fn metrics_on_main_address(state: State<AppState>, headers: HeaderMap) -> Response {
    if state.config.metrics.separate_address {
        return crate::not_found().await.into_response();
    }
    metrics(state, headers).await
}

async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(expected) = &state.config.metrics.token_hash {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(|token| svc_core::secret::hash_secret(token.trim()));
        if !presented.is_some_and(|hash| svc_core::secret::constant_time_eq(hash.as_bytes(), expected.as_bytes())) {
            let body = json!({"error": "/metrics needs the token SVC_METRICS_TOKEN names, as a bearer token", "code": "UNAUTHORIZED"});
            return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], Json(body)).into_response();
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render()).into_response()
}
