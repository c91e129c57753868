//! Request extractors whose failures answer in the REST error shape.

use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::Value;
use svc_service::permissions::{self, Operation};

use crate::body::{BodyError, read_limited};
use crate::error::ApiError;
use crate::principal::Principal;
use crate::state::AppState;
use svc_core::ids;
use svc_core::model::Project;

/// JSON request bodies are at most 1 MB.
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;

/// A JSON object body, read within the limit. Handlers turn it into their typed body with
/// [`JsonBody::parse`] once the key and the project have been checked, so a caller without access
/// learns nothing about what the body should hold.
pub struct JsonBody(serde_json::Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    /// Runs after the handler's other extractors, the key among them: a caller without a valid key
    /// is answered before any of the body is read.
    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = request.into_parts();
        let bytes = read_limited(&parts.headers, body, JSON_BODY_LIMIT).await.map_err(|error| match error {
            BodyError::TooLarge => {
                ApiError::PayloadTooLarge(format!("JSON bodies are limited to {JSON_BODY_LIMIT} bytes"))
            }
            BodyError::Unreadable => ApiError::bad_request("the request body could not be read"),
        })?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(JsonBody(map)),
            Ok(_) => Err(ApiError::bad_request("body must be a JSON object")),
            Err(error) => Err(ApiError::bad_request(format!("body is not valid JSON: {error}"))),
        }
    }
}

impl JsonBody {
    /// The body as the route's request type (the type its OpenAPI description shows); a mistake is
    /// a 400 naming the field.
    pub fn parse<T: DeserializeOwned>(self) -> Result<T, ApiError> {
        serde_path_to_error::deserialize(Value::Object(self.0)).map_err(naming_the_field)
    }
}

/// A 400 whose message names the field or parameter that was wrong.
fn naming_the_field<E: std::fmt::Display>(error: serde_path_to_error::Error<E>) -> ApiError {
    let path = error.path().to_string();
    let message = error.into_inner().to_string();
    // svc-core's messages already name their field ("status must be one of ...").
    if path == "." || message.starts_with(path.as_str()) {
        ApiError::BadRequest(message)
    } else {
        ApiError::BadRequest(format!("{path}: {message}"))
    }
}

/// The query string as the route's typed parameters (the struct its OpenAPI parameters are made
/// from, see `super::query`), so the document and the parser cannot disagree; a mistake is a 400
/// naming the parameter. Unknown parameters are ignored.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let parameters = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(parameters).map(ApiQuery).map_err(naming_the_field)
    }
}

/// `deserialize_with` helpers for request fields.
pub mod field {
    use serde::{Deserialize, Deserializer};

    /// An optional field that may not be `null`: absent is `None`, `null` is refused.
    pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }

    /// A PATCH field where absent (`None`) and `null` (`Some(None)`) mean different things. Used
    /// with `#[serde(default)]`, which gives `None` when the field is absent.
    pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }

    /// A PATCH whole number where absent (`None`) and `null` (`Some(None)`) mean different things
    /// (see [`nullable`] and [`whole_number`]).
    pub fn nullable_whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        whole_number(d).map(Some)
    }

    /// An optional whole number, given as `60` or `60.0` (both integers to JSON Schema).
    pub fn whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        let Some(number) = Option::<serde_json::Number>::deserialize(d)? else { return Ok(None) };
        number
            .as_i64()
            .or_else(|| number.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 1e15).map(|n| n as i64))
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("expected a whole number, not {number}")))
    }
}

/// The caller of a REST route: a project-bound principal, and its key's project (read with the
/// key). Org-wide keys and keys made by OAuth work on the tool endpoint only.
pub struct ApiCaller(pub Principal, Option<Project>);

impl FromRequestParts<AppState> for ApiCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let crate::principal::Authenticated { principal, project } =
            crate::principal::resolve(state, &parts.headers).await?;
        if principal.bound_project().is_none() {
            return Err(ApiError::forbidden(
                "this is an org-wide key: it works on the tool endpoint (/mcp) only; the REST API needs a project key",
            ));
        }
        // OAuth tokens are for the tool endpoint (the resource they were issued for), not the REST API.
        if principal.key().is_some_and(|key| key.origin == svc_core::model::KeyOrigin::Oauth) {
            return Err(ApiError::forbidden(
                "this key was made by an OAuth connection: it works on the tool endpoint (/mcp) only; the REST API needs a key minted in the dashboard or with the API",
            ));
        }
        Ok(ApiCaller(principal, project))
    }
}

impl ApiCaller {
    /// The project of the path, once the caller may act on it with `needed`.
    pub fn project(&self, path_project_id: &str, op: Operation) -> Result<Project, ApiError> {
        if ids::is_project_key(path_project_id) {
            return Err(ApiError::not_found(
                "this is the public project key; use the project id from GET /api/v1/me as :projectId",
            ));
        }
        if !ids::is_object_id(path_project_id) {
            return Err(ApiError::not_found("project not found"));
        }
        // The caller's own project is known from its key: any other id is refused before a lookup,
        // so an id says nothing about whether such a project exists.
        if self.0.bound_project() != Some(path_project_id) {
            return Err(ApiError::forbidden("this key belongs to another project"));
        }
        let project = self.own_project().ok_or_else(|| ApiError::not_found("project not found"))?;
        permissions::check(&self.0, op, project)?;
        Ok(project.clone())
    }

    /// The key's project as it was read with the key; `None` once the project is deleted.
    pub fn own_project(&self) -> Option<&Project> {
        self.1.as_ref()
    }
}

/// Path parameters, percent-decoded.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| ApiPath(value))
            .map_err(|rejection| ApiError::not_found(format!("invalid path: {}", rejection.body_text())))
    }
}
