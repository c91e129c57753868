//! The public ingest API under `/ingest`, used by the browser widget: project key in a header, open
//! CORS, no cookies, `{error: <code>}` errors.

pub mod access;
pub mod blob;
pub mod error;
pub mod report;
pub mod reporter;
pub mod widget_config;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, Method, header};
use axum::routing::{get, post};
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::state::AppState;

pub fn router(state: &AppState) -> axum::Router<AppState> {
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::any())
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            HeaderName::from_static(access::PROJECT_KEY_HEADER),
            HeaderName::from_static(access::IDENTITY_HEADER),
            header::CONTENT_TYPE,
            // The reporter's session secret, on `/auth/reporter-token` only.
            header::AUTHORIZATION,
            HeaderName::from_static("idempotency-key"),
        ])
        // A page must be able to read when to retry after a 429, and the request id of a 500.
        .expose_headers([header::RETRY_AFTER, HeaderName::from_static("x-request-id")])
        .max_age(Duration::from_secs(600));
    // Uploads are cut off at their kind's limit while streaming; this only bounds the request.
    let upload_limit = blob::request_limit(&state.config.limits);
    let routes = axum::Router::new()
        .route("/ingest/config", get(widget_config::config))
        .route("/ingest/channels", get(widget_config::channels))
        .route("/ingest/flags/{key}", get(widget_config::flag))
        .route("/ingest/blob", post(blob::upload).layer(DefaultBodyLimit::max(upload_limit)))
        .route("/ingest/report", post(report::submit))
        .route("/auth/reporter/email", post(reporter::send_code))
        .route("/auth/reporter/email/verify", post(reporter::verify_code))
        .route("/auth/reporter-token", get(reporter::renew_token).delete(reporter::sign_out))
        .route("/ingest/reporter/reports", get(reporter::thread))
        .route("/ingest/reporter/reports/{id}/comments", post(reporter::reply))
        .route("/ingest/reporter/reports/{id}/confirmation", post(reporter::confirm));
    // Inside CORS, so a page can read the answer to a request that panicked.
    crate::catch_panics(routes, error::internal_response).layer(cors)
}
