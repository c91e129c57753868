//! `/healthz` (process up), `/readyz` (database and blob store reachable and accepting writes),
//! `/metrics` (Prometheus).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;
use std::fmt::Display;
use std::sync::Mutex;

use crate::state::AppState;

pub fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz)).route("/metrics", get(metrics))
}

async fn healthz() -> impl IntoResponse {
    Json(json!({"ok": true}))
}

/// What the last `/readyz` found, so that only changes are logged (a probe every few seconds
/// would otherwise repeat the same line).
#[derive(Debug)]
pub struct Readiness {
    /// (database ready, blob store ready); both at first, so a healthy start logs nothing.
    last: Mutex<(bool, bool)>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness { last: Mutex::new((true, true)) }
    }
}

impl Readiness {
    /// Logs a change of readiness, with the reasons when not ready.
    fn observe<D: Display, B: Display>(&self, database: &Result<(), D>, blobs: &Result<(), B>) {
        let now = (database.is_ok(), blobs.is_ok());
        let before = std::mem::replace(&mut *self.last.lock().unwrap_or_else(|e| e.into_inner()), now);
        if now == before {
            return;
        }
        if now == (true, true) {
            tracing::info!("ready again: the database and the blob store accept writes; /readyz answers 200");
        } else {
            tracing::warn!(
                database = %reason(database),
                blob_store = %reason(blobs),
                "not ready: /readyz answers 503 until the database and the blob store accept writes again"
            );
        }
    }
}

fn reason<E: Display>(outcome: &Result<(), E>) -> String {
    match outcome {
        Ok(()) => "ok".to_string(),
        Err(error) => error.to_string(),
    }
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let (database, blobs) = crate::service::readiness::check(&*state.store, &state.blobs).await;
    state.readiness.observe(&database, &blobs);
    match (database, blobs) {
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
