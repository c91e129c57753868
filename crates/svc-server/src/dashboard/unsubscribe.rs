//! `/unsubscribe?token=`: the link at the end of every team notification. Opening it shows what
//! it turns off and a button (a link scanner that follows the link changes nothing); the button,
//! or a mail program's one-click `POST` (RFC 8058, `List-Unsubscribe-Post`), turns it off. No
//! sign-in: the signed token is the proof, so the `POST` needs neither a session nor an origin.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::render;
use crate::state::AppState;
use svc_service::mail::{self, Unsubscription};

#[derive(Template)]
#[template(path = "dashboard/unsubscribe.html")]
struct UnsubscribePage<'a> {
    assets: &'static Assets,
    token: &'a str,
    email: &'a str,
    project: &'a str,
    what: &'static str,
    already_off: bool,
    /// Turned off just now.
    done: bool,
}

impl<'a> UnsubscribePage<'a> {
    fn new(token: &'a str, found: &'a Unsubscription, done: bool) -> Self {
        UnsubscribePage {
            assets: assets::get(),
            token,
            email: &found.user.email,
            project: &found.project.name,
            what: found.topic.words(),
            already_off: found.already_off,
            done,
        }
    }
}

fn not_valid() -> PageError {
    PageError::NotFound(
        "This unsubscribe link is not valid (or its project is gone). Change your mail settings on your account page."
            .into(),
    )
}

#[derive(Deserialize, Default)]
pub struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// `GET /unsubscribe?token=`: what the link turns off, and the button.
pub async fn confirm(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> PageResult<Response> {
    let found = mail::check_unsubscribe(&state.service, &query.token).await?.ok_or_else(not_valid)?;
    Ok(render(StatusCode::OK, &UnsubscribePage::new(&query.token, &found, false)))
}

/// `POST /unsubscribe` (the token in the form, or in the query string of a one-click `POST`).
pub async fn apply(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
    body: Bytes,
) -> PageResult<Response> {
    let from_form = url::form_urlencoded::parse(&body).find(|(name, _)| name == "token").map(|(_, value)| value);
    let token = match from_form {
        Some(token) if !token.is_empty() => token.into_owned(),
        _ => query.token,
    };
    let found = mail::unsubscribe(&state.service, &token).await?.ok_or_else(not_valid)?;
    Ok(render(StatusCode::OK, &UnsubscribePage::new(&token, &found, true)))
}
