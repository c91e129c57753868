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
pub mod state;
pub mod widget;

use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderName, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

pub use config::{MetricsAccess, ServerConfig};
pub use health::metrics_app;
pub use http_server::{ConnectionSettings, serve};
pub use state::AppState;

use crate::error::{ErrorBody, InternalErrorMarker};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

#[derive(Clone)]
struct NewRequestId;

impl MakeRequestId for NewRequestId {
    fn make_request_id<B>(&mut self, _request: &axum::http::Request<B>) -> Option<RequestId> {
        svc_core::ids::new_id().parse().ok().map(RequestId::new)
    }
}

/// The whole application.
/// Text made safe inside HTML, in an element or a quoted attribute (for the few pages and fragments
/// written without a template).
pub(crate) fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

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
        .with_state(state)
        .layer(middleware::from_fn_with_state(metrics, metrics::track));
    with_request_layers(routes)
}

/// Answers a panic with `answer` (a surface's internal-error response): each surface wraps its own
/// routes, so a panic is answered in that surface's shape.
pub fn catch_panics<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    answer: fn(&str) -> Response,
) -> axum::Router<S> {
    router.layer(CatchPanicLayer::custom(move |panic: Box<dyn std::any::Any + Send>| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        tracing::error!(panic = %message, "a request handler panicked");
        answer("-")
    }))
}

/// The layers around every route: request ids (set, logged, returned in `x-request-id` and named in
/// internal-error bodies) and, for routes of no surface, a last-resort panic answer.
fn with_request_layers(routes: axum::Router) -> axum::Router {
    catch_panics(routes, error::internal_response)
        .layer(middleware::from_fn(name_request_in_internal_errors))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            // The path only: query strings and headers (where keys travel) are never logged.
            tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
        }))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, NewRequestId))
}

pub(crate) async fn not_found() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, Json(ErrorBody { error: "no such route".into(), code: "NOT_FOUND".into() }))
}

/// Rebuilds internal-error responses for the request's id, in the shape of the surface that
/// answered, so a user can quote it and an operator can find the details in the logs.
async fn name_request_in_internal_errors(request: Request, next: Next) -> Response {
    let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-").to_string();
    let response = next.run(request).await;
    match response.extensions().get::<InternalErrorMarker>() {
        Some(InternalErrorMarker(rebuild)) => rebuild(&id),
        None => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::routing::any;
    use tower::ServiceExt;

    async fn boom() -> &'static str {
        panic!("a handler bug")
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
