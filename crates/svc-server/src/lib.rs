//! Svc's HTTP server: the REST API, health and metrics (and, as they land, ingest, the tool endpoint
//! and the widget), over one shared service layer.

#![forbid(unsafe_code)]

pub mod api;
pub mod auth;
pub mod body;
pub mod config;
pub mod error;
pub mod health;
pub mod http_server;
pub mod ingest;
pub mod mcp;
pub mod metrics;
pub mod rate_limit;
pub mod service;
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

pub use config::ServerConfig;
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
pub fn app(state: AppState) -> axum::Router {
    let metrics = state.metrics.clone();
    axum::Router::new()
        .merge(api::router())
        .merge(ingest::router(&state))
        .merge(mcp::router())
        .merge(health::router())
        .merge(widget::router())
        .fallback(not_found)
        .with_state(state)
        .layer(middleware::from_fn_with_state(metrics, metrics::track))
        .layer(middleware::from_fn(name_request_in_internal_errors))
        .layer(CatchPanicLayer::custom(|_| {
            let mut response = (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(ErrorBody { error: "internal error".into(), code: "INTERNAL".into() }),
            )
                .into_response();
            response.extensions_mut().insert(InternalErrorMarker);
            response
        }))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            // The path only: query strings and headers (where keys travel) are never logged.
            tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
        }))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, NewRequestId))
}

async fn not_found() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, Json(ErrorBody { error: "no such route".into(), code: "NOT_FOUND".into() }))
}

/// Rewrites internal-error bodies to name the request, so a user can quote it and an operator can
/// find the details in the logs.
async fn name_request_in_internal_errors(request: Request, next: Next) -> Response {
    let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-").to_string();
    let response = next.run(request).await;
    if response.extensions().get::<InternalErrorMarker>().is_some() {
        let body = ErrorBody { error: format!("internal error (request {id})"), code: "INTERNAL".into() };
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response();
    }
    response
}
