//! The ceiling: a minimal axum server that does what ingest must do with a report body (read it,
//! parse it into types and validate it with Svc's own `parse_submission`, mint an id, answer) and nothing else:
//! no middleware, no database, no durability. Svc's ingest is reported as a fraction of it.

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use svc_core::ingest::{Limits, parse_submission};

async fn report(headers: HeaderMap, body: Bytes) -> Response {
    let key_ok =
        headers.get("x-svc-project-key").and_then(|v| v.to_str().ok()).is_some_and(svc_core::ids::is_project_key);
    if !key_ok {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_key_or_origin"}))).into_response();
    }
    match parse_submission(&body, &Limits::default()) {
        Ok(_) => Json(json!({"reportId": svc_core::ids::new_id()})).into_response(),
        Err(rejection) => (StatusCode::BAD_REQUEST, Json(json!({"error": rejection.code()}))).into_response(),
    }
}

/// Serves on `bind` until killed; prints `listening <address>` once bound.
pub async fn serve(bind: &str) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(bind).await?;
    println!("listening {}", listener.local_addr()?);
    let app = axum::Router::new().route("/ingest/report", post(report));
    axum::serve(listener, app).await?;
    Ok(())
}
