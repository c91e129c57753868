//! Reading a request body into memory within a limit, after the caller has been authenticated.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use bytes::BytesMut;
use futures_util::StreamExt;

/// Memory set aside up front for a body, whatever length it declares.
const INITIAL_CAPACITY: usize = 64 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// Over the limit: declared so in `Content-Length`, or found so while reading.
    TooLarge,
    /// The body could not be read to its end (the client went away, or sent a broken encoding).
    Unreadable,
}

/// The `Content-Length` a request declares, when it declares a valid one.
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// Whether the request declares a body longer than `limit` (such a body is refused unread).
pub fn declared_over(headers: &HeaderMap, limit: usize) -> bool {
    declared_length(headers).is_some_and(|length| length > limit as u64)
}

/// Reads the whole body, refusing one that declares or turns out to be over `limit` bytes without
/// reading past the limit.
pub async fn read_limited(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, BodyError> {
    if declared_over(headers, limit) || axum::body::HttpBody::size_hint(&body).lower() > limit as u64 {
        return Err(BodyError::TooLarge);
    }
    let capacity = declared_length(headers).map_or(INITIAL_CAPACITY, |length| length as usize).min(INITIAL_CAPACITY);
    let mut buffer = BytesMut::with_capacity(capacity);
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| BodyError::Unreadable)?;
        if buffer.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        buffer.extend_from_slice(&chunk);
    }
    Ok(buffer.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(length: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_str(length).unwrap());
        headers
    }

    #[tokio::test]
    async fn a_body_is_read_up_to_its_limit() {
        let body = Body::from_stream(futures_util::stream::iter(
            ["ab", "cd", "e"].map(|part| Ok::<_, std::io::Error>(Bytes::from(part))),
        ));
        assert_eq!(read_limited(&HeaderMap::new(), body, 5).await.unwrap(), Bytes::from("abcde"));
        let body = Body::from_stream(futures_util::stream::iter(
            ["ab", "cd", "ef"].map(|part| Ok::<_, std::io::Error>(Bytes::from(part))),
        ));
        assert_eq!(read_limited(&HeaderMap::new(), body, 5).await, Err(BodyError::TooLarge));
        let broken = Body::from_stream(futures_util::stream::iter([
            Ok(Bytes::from("ab")),
            Err(std::io::Error::other("connection reset")),
        ]));
        assert_eq!(read_limited(&HeaderMap::new(), broken, 5).await, Err(BodyError::Unreadable));
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_refused_unread() {
        // A body that never ends: reading it would never return.
        let endless = Body::from_stream(futures_util::stream::pending::<Result<Bytes, std::io::Error>>());
        assert_eq!(read_limited(&headers("104857600"), endless, 1024).await, Err(BodyError::TooLarge));
        assert!(!declared_over(&headers("1024"), 1024));
        assert!(!declared_over(&headers("not a number"), 1024));
        assert_eq!(read_limited(&headers("2"), Body::from("ok"), 1024).await.unwrap(), Bytes::from("ok"));
    }
}
