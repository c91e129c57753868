//! The dashboard's stylesheet and script, embedded in the binary and served under names that
//! carry their content hash, so browsers may cache them for a year.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

const CSS: &str = include_str!("static/app.css");
const JS: &str = include_str!("static/app.js");

/// The hashed paths of the assets, for templates.
pub struct Assets {
    pub css: String,
    pub js: String,
}

fn hashed(stem: &str, extension: &str, contents: &str) -> String {
    let digest = Sha256::digest(contents.as_bytes());
    format!("/dashboard/assets/{stem}.{}.{extension}", &hex::encode(digest)[..10])
}

pub fn get() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| Assets { css: hashed("app", "css", CSS), js: hashed("app", "js", JS) })
}

/// What the first load of a page costs: the stylesheet and the script (for the size budget).
pub fn first_load() -> [(&'static str, &'static str); 2] {
    [("app.css", CSS), ("app.js", JS)]
}

/// `GET /dashboard/assets/{file}`: only the current hashed names exist.
pub async fn serve(Path(file): Path<String>) -> Response {
    let assets = get();
    let path = format!("/dashboard/assets/{file}");
    let (contents, content_type) = if path == assets.css {
        (CSS, "text/css; charset=utf-8")
    } else if path == assets.js {
        (JS, "text/javascript; charset=utf-8")
    } else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable")),
        ],
        contents,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    /// A block left open swallows every rule after it without an error anywhere: each `{` of the
    /// stylesheet (outside comments) has its `}` and no `}` comes first.
    #[test]
    fn every_block_of_the_stylesheet_is_closed() {
        let mut depth = 0i32;
        let mut rest = super::CSS;
        while let Some(at) = rest.find(['{', '}', '/']) {
            let after = &rest[at..];
            if after.starts_with("/*") {
                let end = after.find("*/").expect("every comment of app.css is closed");
                rest = &after[end + 2..];
                continue;
            }
            match after.as_bytes()[0] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "a `}}` closes nothing near: {}", &after[..after.len().min(80)]);
            rest = &after[1..];
        }
        assert_eq!(depth, 0, "app.css leaves {depth} block(s) open");
    }
}
