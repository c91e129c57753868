//! The dashboard's errors: an HTML page in the dashboard's style (or a redirect to sign in).
//! Internal failures are logged with their detail and shown with the request id only.

use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::InternalErrorMarker;
use svc_service::ServiceError;
use svc_store::StoreError;

#[derive(Debug)]
pub enum PageError {
    /// Not signed in: go to the sign-in page, then back to `next`.
    SignIn {
        next: String,
    },
    BadRequest(String),
    Forbidden(String),
    NotFound(String),
    Conflict(String),
    TooManyAttempts {
        retry_after_secs: u64,
    },
    Internal(anyhow::Error),
}

pub type PageResult<T> = Result<T, PageError>;

#[derive(Template)]
#[template(path = "dashboard/error.html")]
struct ErrorPage<'a> {
    assets: &'static super::assets::Assets,
    status: u16,
    heading: &'a str,
    message: &'a str,
}

fn page(status: StatusCode, heading: &str, message: &str) -> Response {
    let html = ErrorPage { assets: super::assets::get(), status: status.as_u16(), heading, message }
        .render()
        .unwrap_or_else(|_| format!("{heading}: {message}"));
    (status, [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))], axum::response::Html(html))
        .into_response()
}

/// The dashboard's internal failure page, naming the request.
pub fn internal_page(request_id: &str) -> Response {
    let message = format!("Something went wrong on our side (request {request_id}). Try again in a moment.");
    let mut response = page(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong", &message);
    response.extensions_mut().insert(InternalErrorMarker(internal_page));
    response
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match self {
            PageError::SignIn { next } => {
                let target = if next == "/" || next.is_empty() {
                    "/sign-in".to_string()
                } else {
                    format!(
                        "/sign-in?next={}",
                        url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
                    )
                };
                (StatusCode::SEE_OTHER, [(header::LOCATION, target)]).into_response()
            }
            PageError::BadRequest(message) => page(StatusCode::BAD_REQUEST, "That did not work", &message),
            PageError::Forbidden(message) => page(StatusCode::FORBIDDEN, "Not allowed", &message),
            PageError::NotFound(message) => page(StatusCode::NOT_FOUND, "Not found", &message),
            PageError::Conflict(message) => page(StatusCode::CONFLICT, "That did not work", &message),
            PageError::TooManyAttempts { retry_after_secs } => {
                let minutes = retry_after_secs.div_ceil(60).max(1);
                let message =
                    format!("Too many attempts. Try again in {minutes} minute{}.", if minutes == 1 { "" } else { "s" });
                let mut response = page(StatusCode::TOO_MANY_REQUESTS, "Slow down", &message);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs.max(1)));
                response
            }
            PageError::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "dashboard internal error");
                internal_page("-")
            }
        }
    }
}

impl From<ServiceError> for PageError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::Invalid(message) => PageError::BadRequest(message),
            ServiceError::NotFound(message) => PageError::NotFound(message),
            ServiceError::Conflict(message) => PageError::Conflict(message),
            ServiceError::Store(error) => error.into(),
            ServiceError::Internal(message) => PageError::Internal(anyhow::anyhow!(message)),
            ServiceError::Refused(refusal) => refusal.into(),
        }
    }
}

impl From<StoreError> for PageError {
    fn from(error: StoreError) -> Self {
        PageError::Internal(error.into())
    }
}

impl From<crate::principal::Refusal> for PageError {
    fn from(refusal: crate::principal::Refusal) -> Self {
        match refusal {
            crate::principal::Refusal::MissingScope(_) => {
                PageError::Forbidden("Your role in this organization does not allow this.".into())
            }
            crate::principal::Refusal::OtherProject => PageError::NotFound("No such project.".into()),
        }
    }
}
