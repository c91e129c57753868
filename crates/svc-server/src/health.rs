//! `/healthz` (process up), `/readyz` (database and blob store reachable and accepting writes),
//! `/metrics` (Prometheus).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;

pub fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz)).route("/metrics", get(metrics))
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

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}
