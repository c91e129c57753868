//! The person's own page (`/account`). Its "Notifications" section lists every project of their
//! organizations with two choices: new reports (off, at once, daily digest) and replies from
//! reporters (on, off); one form saves them all.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use std::collections::BTreeMap;
use svc_core::mail::{DIGEST_HOUR_UTC, NewReports};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::session::Person;
use super::{Submitted, render};
use crate::service::ServiceError;
use crate::service::mail::{self, Choice};
use crate::state::AppState;

struct ProjectRow {
    id: String,
    name: String,
    new_reports: &'static str,
    replies: bool,
}

struct OrgRows {
    name: String,
    projects: Vec<ProjectRow>,
}

#[derive(Template)]
#[template(path = "dashboard/account.html")]
struct AccountPage {
    assets: &'static Assets,
    section: &'static str,
    csrf: String,
    me: String,
    email: String,
    orgs: Vec<OrgRows>,
    delivers: bool,
    digest_hour: i64,
    notice: Option<&'static str>,
}

#[derive(Deserialize, Default)]
pub struct AccountQuery {
    #[serde(default)]
    done: String,
}

/// `GET /account`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<AccountQuery>,
) -> PageResult<Response> {
    let orgs = mail::settings(&*state.store, &person.signed_in)
        .await?
        .into_iter()
        .map(|org| OrgRows {
            name: org.org.name,
            projects: org
                .projects
                .into_iter()
                .map(|(project, preference)| ProjectRow {
                    id: project.id,
                    name: project.name,
                    new_reports: preference.new_reports.as_str(),
                    replies: preference.replies,
                })
                .collect(),
        })
        .collect();
    let view = AccountPage {
        assets: assets::get(),
        section: "account",
        csrf: person.csrf.clone(),
        me: person.signed_in.user.label().to_string(),
        email: person.signed_in.user.email.clone(),
        orgs,
        delivers: state.config.mail.delivers(),
        digest_hour: DIGEST_HOUR_UTC,
        notice: (query.done == "notifications").then_some("Your notification settings are saved."),
    };
    Ok(render(StatusCode::OK, &view))
}

/// The notifications form: `reports.<projectId>` (off, instant, digest) and `replies.<projectId>`
/// (on, off) for each project shown.
#[derive(Deserialize)]
pub struct NotificationsForm {
    /// Missing is the same as wrong: 403, not a form error.
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(flatten)]
    fields: BTreeMap<String, String>,
}

super::csrf_forms!(NotificationsForm);

/// The choices a form holds, one per project named by a `reports.` field.
fn choices(form: &NotificationsForm) -> PageResult<Vec<Choice>> {
    let mut choices = Vec::new();
    for (name, value) in &form.fields {
        let Some(project_id) = name.strip_prefix("reports.") else { continue };
        let new_reports = NewReports::parse(value)
            .map_err(|_| PageError::BadRequest("Choose off, at once or daily digest.".into()))?;
        let replies = match form.fields.get(&format!("replies.{project_id}")).map(String::as_str) {
            Some("on") => true,
            Some("off") => false,
            _ => return Err(PageError::BadRequest("Choose whether replies from reporters are mailed.".into())),
        };
        choices.push(Choice { project_id: project_id.to_string(), new_reports, replies });
    }
    Ok(choices)
}

/// `POST /account/notifications`
pub async fn save_notifications(
    State(state): State<AppState>,
    Submitted(person, form): Submitted<NotificationsForm>,
) -> PageResult<Response> {
    let choices = choices(&form)?;
    mail::set_choices(&*state.store, &person.signed_in, &choices).await.map_err(|error| match error {
        ServiceError::Refused(_) => PageError::Forbidden("One of these projects is not in your organizations.".into()),
        other => other.into(),
    })?;
    Ok(Redirect::to("/account?done=notifications").into_response())
}
