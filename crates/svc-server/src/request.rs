//! The layer around every route, in one piece: the request's id (the caller's `x-request-id`,
//! else a new one), returned in the `x-request-id` header and named in internal-error bodies; the
//! `request` span every log line inside it carries; a last-resort answer to a panic; the request's
//! start, end and server failures at the levels tower-http's trace layer logged them; and its count
//! and time in the metrics, under its route's template.
//!
//! One layer instead of six (set the id, propagate it, trace, name it in internal errors, catch
//! panics, metrics): each of those wrapped the request's future in one of its own (bench/README.md,
//! "The request's layers in one").

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};
use tracing::Instrument;

use crate::error::InternalErrorMarker;
use crate::metrics::{Metrics, Route};

pub(crate) const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Wraps a service in [`RequestService`].
#[derive(Clone)]
pub(crate) struct RequestLayer {
    /// The answer to a panic no surface caught (a surface's internal-error response).
    pub on_panic: fn(&str) -> Response,
    /// Where requests are counted and timed.
    pub metrics: Option<Arc<Metrics>>,
}

impl<S> Layer<S> for RequestLayer {
    type Service = RequestService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestService { inner, on_panic: self.on_panic, metrics: self.metrics.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct RequestService<S> {
    inner: S,
    on_panic: fn(&str) -> Response,
    metrics: Option<Arc<Metrics>>,
}

impl<S> Service<Request> for RequestService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let id = match request.headers().get(&REQUEST_ID) {
            Some(id) => id.clone(),
            None => {
                let id = HeaderValue::from_str(&svc_core::ids::new_id()).expect("an id is a header value");
                request.headers_mut().insert(REQUEST_ID, id.clone());
                id
            }
        };
        let logged_id = id.to_str().unwrap_or("-");
        // The path only: query strings and headers (where keys travel) are never logged.
        let span = tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %logged_id);
        let started = Instant::now();
        let on_panic = self.on_panic;
        // The router has matched the route already (this layer wraps each route).
        let counted = self.metrics.clone().map(|metrics| {
            let route = request.extensions().get::<MatchedPath>().cloned();
            (metrics, request.method().clone(), route.map_or(Route::Named("unmatched"), Route::Matched))
        });
        let called = span.in_scope(|| {
            tracing::debug!("started processing request");
            std::panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(request)))
        });
        async move {
            let answered = match called {
                Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            let id_text = id.to_str().unwrap_or("-");
            let mut response = match answered {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(panic) => {
                    log_panic(panic.as_ref());
                    on_panic(id_text)
                }
            };
            // Rebuilt for the request's id, in the shape of the surface that answered, so a user
            // can quote it and an operator can find the details in the logs.
            if let Some(InternalErrorMarker(rebuild)) = response.extensions().get::<InternalErrorMarker>().copied() {
                response = rebuild(id_text);
            }
            let status = response.status();
            let latency = started.elapsed();
            if let Some((metrics, method, route)) = counted {
                metrics.record_request(&method, route, status.as_u16(), latency.as_secs_f64());
            }
            if status.is_server_error() {
                tracing::error!(status = status.as_u16(), ?latency, "response failed");
            } else {
                tracing::debug!(status = status.as_u16(), ?latency, "finished processing request");
            }
            response.headers_mut().entry(REQUEST_ID).or_insert(id);
            Ok(response)
        }
        .instrument(span)
        .boxed()
    }
}

/// Logs a request handler's panic with its message (a panic's payload is a `String` or a `&str`).
pub(crate) fn log_panic(panic: &(dyn std::any::Any + Send)) {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    tracing::error!(panic = %message, "a request handler panicked");
}
