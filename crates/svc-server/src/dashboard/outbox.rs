//! The outbox (`/outbox`): every mail Svc queued for the organizations the person owns, newest
//! first, with where it stands (queued, sent, failed and why). Without an SMTP server this is where
//! mail is read (a reporter's sign-in code on a local setup, say); with one it is the delivery log,
//! and sign-in codes are no longer shown. Bodies are text, never markup.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use svc_core::account::Role;
use svc_core::mail::MailState;
use svc_core::{ids, time};

use super::assets::{self, Assets};
use super::error::PageResult;
use super::render;
use super::session::Person;
use super::view::When;
use crate::state::AppState;
use svc_service::{mail, projects};

/// Messages per page.
const PAGE: u32 = 50;

struct MailRow {
    id: String,
    org: String,
    recipient: String,
    subject: String,
    kind: &'static str,
    /// `queued`, `sent` or `failed`.
    state: &'static str,
    created: When,
    sent: Option<When>,
    attempts: i64,
    last_error: Option<String>,
    /// The text; `None` when it is a secret the SMTP server delivers (a sign-in code).
    body: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/outbox.html")]
struct OutboxPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    /// The SMTP server, when mail leaves the server (host, port, TLS; never the password).
    smtp: Option<String>,
    owner_anywhere: bool,
    /// Several organizations: each message names its own.
    several_orgs: bool,
    mails: Vec<MailRow>,
    older_href: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct OutboxQuery {
    #[serde(default)]
    before: String,
}

/// `GET /outbox`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<OutboxQuery>,
) -> PageResult<Response> {
    let store = &state.service;
    let now = time::now_ms();
    let owned: Vec<&str> =
        person.signed_in.memberships.iter().filter(|m| m.role == Role::Owner).map(|m| m.org_id.as_str()).collect();
    let mut org_names = Vec::new();
    for org_id in &owned {
        let name = projects::find_organization(store, org_id).await?.map(|org| org.name).unwrap_or_default();
        org_names.push((org_id.to_string(), name));
    }
    let before = ids::is_object_id(&query.before).then_some(query.before.as_str());
    let delivers = state.config.mail.delivers();
    let listed = mail::outbox(store, &person.signed_in, before, PAGE).await?;
    let older_href = (listed.len() == PAGE as usize).then(|| format!("/outbox?before={}", listed[listed.len() - 1].id));
    let mails = listed
        .into_iter()
        .map(|m| MailRow {
            org: org_names.iter().find(|(id, _)| *id == m.org_id).map(|(_, name)| name.clone()).unwrap_or_default(),
            state: match m.state() {
                MailState::Queued => "queued",
                MailState::Sent => "sent",
                MailState::Failed => "failed",
            },
            kind: m.kind.label(),
            created: When::at(m.created_at, now),
            sent: m.sent_at.map(|at| When::at(at, now)),
            body: (!(delivers && m.kind.is_secret())).then_some(m.body),
            id: m.id,
            recipient: m.recipient,
            subject: m.subject,
            attempts: m.attempts,
            last_error: m.last_error,
        })
        .collect();
    let view = OutboxPage {
        assets: assets::get(),
        section: "outbox",
        csrf: person.csrf.clone(),
        me: person.signed_in.user.label().to_string(),
        smtp: state.config.mail.smtp.as_ref().map(|smtp| smtp.describe()),
        owner_anywhere: !owned.is_empty(),
        several_orgs: owned.len() > 1,
        mails,
        older_href,
    };
    Ok(render(StatusCode::OK, &view))
}
