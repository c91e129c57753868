//! Redirects to a place named by the request (`next` after signing in, `back` after a form): the
//! one way the dashboard, the reporter pages and the OAuth consent page turn user input into a
//! `Location`. A target is read as a URL relative to the service and kept only when it stays on the
//! service's own origin and holds no control characters; anything else becomes `/`. Prefix checks
//! on the text are not enough: browsers drop tabs and line breaks from URLs and read `\` as `/`, so
//! `/\t/evil.example` leads off-site although it starts with one slash.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A base that stands for the service's own origin while a target is resolved.
const OWN_ORIGIN: &str = "http://svc.invalid/";

/// The local path (with its query and fragment) that `target` names, or `/` when it names
/// anything else: another origin, a scheme, a protocol-relative `//host`, a control character.
pub fn local_target(target: Option<&str>) -> String {
    let Some(target) = target else { return "/".into() };
    if !target.starts_with('/') || target.chars().any(char::is_control) {
        return "/".into();
    }
    let base = url::Url::parse(OWN_ORIGIN).expect("a valid base URL");
    let Ok(resolved) = base.join(target) else { return "/".into() };
    if resolved.origin() != base.origin() || !resolved.username().is_empty() || resolved.password().is_some() {
        return "/".into();
    }
    // `/.//evil.example` resolves to the path `//evil.example`, which a browser would read as
    // another host: a path must not begin with two slashes.
    let path = resolved.path();
    if path.starts_with("//") {
        return "/".into();
    }
    let mut local = path.to_string();
    if let Some(query) = resolved.query() {
        local.push('?');
        local.push_str(query);
    }
    if let Some(fragment) = resolved.fragment() {
        local.push('#');
        local.push_str(fragment);
    }
    local
}

/// `303 See Other` to [`local_target`] of `target`.
pub fn see_other_local(target: Option<&str>) -> Response {
    // `local_target` leaves only characters a header may hold; `/` covers the impossible rest.
    let location = HeaderValue::from_str(&local_target(target)).unwrap_or(HeaderValue::from_static("/"));
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_are_kept() {
        for path in
            ["/", "/?status=new&q=a+b", "/reports/abc", "/projects/p1/keys?revoked=k#top", "/authorize?x=%2F%2F"]
        {
            assert_eq!(local_target(Some(path)), path, "{path}");
        }
        assert_eq!(local_target(Some("/a/../b")), "/b");
    }

    #[test]
    fn everything_that_could_leave_the_service_becomes_the_inbox() {
        for target in [
            "//evil.example/x",
            "/\\evil.example/x",
            "/\t/evil.example/x",
            "/\n/evil.example",
            "/\r\nSet-Cookie: x=1",
            "/.//evil.example/x",
            "/%2e//evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            "evil.example",
            "",
            "/\u{7f}x",
            "/\u{85}x",
        ] {
            let local = local_target(Some(target));
            assert!(!local.starts_with("//") && !local.contains("evil.example"), "{target:?} -> {local:?}");
            assert_eq!(local, "/", "{target:?}");
        }
        assert_eq!(local_target(None), "/");
    }

    #[test]
    fn the_redirect_never_fails_on_a_hostile_target() {
        let response = see_other_local(Some("/\nx"));
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[header::LOCATION], "/");
    }
}
