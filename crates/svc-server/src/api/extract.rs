//! Request extractors whose failures answer in the REST error shape.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;

use crate::body::{BodyError, read_limited};
use crate::error::ApiError;

/// JSON request bodies are at most 1 MB.
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;

/// A JSON object body, kept as a map so PATCH can tell an absent field from `null`.
pub struct JsonObject(pub serde_json::Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
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
        parse_object(&bytes).map(JsonObject)
    }
}

pub fn parse_object(bytes: &Bytes) -> Result<serde_json::Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request("body must be a JSON object")),
        Err(error) => Err(ApiError::bad_request(format!("body is not valid JSON: {error}"))),
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

/// Query parameters as a string map.
pub struct QueryMap(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryMap {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(map)| QueryMap(map))
            .map_err(|rejection| ApiError::bad_request(format!("invalid query: {}", rejection.body_text())))
    }
}

impl QueryMap {
    /// `?archived=true` includes archived items; anything else but `false` is refused.
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.0.get(name).map(String::as_str) {
            None | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!("{name} must be true or false, not {other:?}"))),
        }
    }
}
