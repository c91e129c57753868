//! Svc's HTTP server: the REST API, ingest, the tool endpoint and its OAuth, the dashboard, the
//! widget, health and metrics, over one shared service layer.

#![forbid(unsafe_code)]

pub mod api;
pub mod blob_response;
pub mod body;
pub mod config;
pub mod dashboard;
pub mod error;
pub mod health;
pub mod http_server;
pub mod ingest;
pub mod mcp;
pub mod metrics;
pub mod oauth;
pub mod principal;
pub mod rate_limit;
mod request;
pub mod state;
pub mod widget;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tower_http::catch_panic::CatchPanicLayer;

pub use config::{MetricsAccess, ServerConfig};
pub use health::metrics_app;
pub use http_server::{ConnectionSettings, serve};
pub use state::AppState;

use crate::error::ErrorBody;

/// Text made safe inside HTML, in an element or a quoted attribute (for the few pages and fragments
/// written without a template).
pub(crate) fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The whole application.
pub fn app(state: AppState) -> axum::Router {
    let metrics = state.metrics.clone();
    let routes = axum::Router::new()
        .merge(api::router())
        .merge(ingest::router(&state))
        .merge(mcp::router())
        .merge(oauth::router())
        .merge(health::router())
        .merge(widget::router())
        .merge(dashboard::router())
        .fallback(not_found)
        .with_state(state);
    with_request_layers(routes, Some(metrics))
}

/// Answers a panic with `answer` (a surface's internal-error response): each surface wraps its own
/// routes, so a panic is answered in that surface's shape.
pub fn catch_panics<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    answer: fn(&str) -> Response,
) -> axum::Router<S> {
    router.layer(CatchPanicLayer::custom(move |panic: Box<dyn std::any::Any + Send>| {
        request::log_panic(panic.as_ref());
        answer("-")
    }))
}

/// The layer around every route (see [`request`]): request ids (set, logged, returned in
/// `x-request-id` and named in internal-error bodies), the request's span, its metrics and, for
/// routes of no surface, a last-resort panic answer.
fn with_request_layers(routes: axum::Router, metrics: Option<Arc<metrics::Metrics>>) -> axum::Router {
    routes.layer(request::RequestLayer { on_panic: error::internal_response, metrics })
}

pub(crate) async fn not_found() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, Json(ErrorBody { error: "no such route".into(), code: "NOT_FOUND".into() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::REQUEST_ID;
    use axum::body::Body;
    use axum::routing::any;
    use tower::ServiceExt;

    async fn boom() -> &'static str {
        panic!("a handler bug")
    }

    /// Every answer carries a request id: a new one for each request, or the caller's own.
    #[tokio::test]
    async fn every_answer_names_its_request() {
        let app = with_request_layers(axum::Router::new().route("/ok", any(|| async { "ok" })), None);
        let mut ids = Vec::new();
        for _ in 0..2 {
            let response =
                app.clone().oneshot(axum::http::Request::get("/ok").body(Body::empty()).unwrap()).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            ids.push(response.headers()[&REQUEST_ID].to_str().unwrap().to_string());
        }
        assert!(ids.iter().all(|id| svc_core::ids::is_object_id(id)), "{ids:?}");
        assert_ne!(ids[0], ids[1]);
        let own = axum::http::Request::get("/nowhere").header("x-request-id", "trace-7").body(Body::empty()).unwrap();
        let response = app.clone().oneshot(own).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()[&REQUEST_ID], "trace-7");
    }

    /// Each surface answers a panic in its own shape, with the request id in the header and, where
    /// the shape has room for it, in the body.
    #[tokio::test]
    async fn a_panic_is_answered_in_the_surface_shape_with_the_request_id() {
        let surface =
            |path: &str, answer: fn(&str) -> Response| catch_panics(axum::Router::new().route(path, any(boom)), answer);
        let app = with_request_layers(
            axum::Router::new()
                .merge(surface("/api/v1/boom", error::internal_response))
                .merge(surface("/ingest/boom", ingest::error::internal_response))
                .merge(surface("/mcp", mcp::error::internal_response)),
            None,
        );
        for path in ["/api/v1/boom", "/ingest/boom", "/mcp"] {
            let request = axum::http::Request::post(path).body(Body::empty()).unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR, "{path}");
            let id = response.headers()[&REQUEST_ID].to_str().unwrap().to_string();
            let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let named = format!("internal error (request {id})");
            let expected = match path {
                "/api/v1/boom" => serde_json::json!({"error": named, "code": "INTERNAL"}),
                "/ingest/boom" => serde_json::json!({"error": "internal"}),
                _ => serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": named}}),
            };
            assert_eq!(body, expected, "{path}");
        }
    }
}
