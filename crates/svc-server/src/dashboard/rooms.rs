//! Rooms (one per artifact under review): the list with report counts and last activity, a room's
//! reports (the inbox filtered by it), rename, meta, archive and unarchive.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value};
use svc_core::model::RoomChanges;
use svc_core::time;
use svc_service::permissions::{self, Operation};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::redirect::see_other_local;
use super::session::Person;
use super::view::When;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::{projects, rooms};

struct RoomRow {
    title: String,
    artifact_id: String,
    project_id: String,
    project: String,
    count: i64,
    last_activity: When,
    archived: bool,
    stored: bool,
    /// `meta` as `key: value` lines, for its editor.
    meta_lines: String,
    reports_href: String,
    can_write: bool,
}

#[derive(Template)]
#[template(path = "dashboard/rooms.html")]
struct RoomsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    rooms: Vec<RoomRow>,
    show_archived: bool,
}

#[derive(Deserialize, Default)]
pub struct RoomsQuery {
    #[serde(default)]
    archived: String,
}

fn meta_lines(meta: Option<&Value>) -> String {
    meta.and_then(Value::as_object)
        .map(|object| {
            object
                .iter()
                .map(|(key, value)| {
                    format!("{key}: {}", value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string()))
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// `key: value` lines back into a meta object (blank lines skipped); empty clears it.
fn parse_meta_lines(text: &str) -> Result<Option<Value>, PageError> {
    let mut object = Map::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| PageError::BadRequest(format!("Each meta line is `key: value`; this one is not: {line}")))?;
        object.insert(key.trim().to_string(), Value::String(value.trim().to_string()));
    }
    Ok((!object.is_empty()).then_some(Value::Object(object)))
}

/// `GET /rooms`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<RoomsQuery>,
) -> PageResult<Response> {
    let principal = person.principal();
    let show_archived = query.archived == "1";
    let now = time::now_ms();
    let mut rows = Vec::new();
    for project in projects::reachable(&state.service, &principal).await? {
        let can_write = permissions::check(&principal, Operation::ManageRooms, &project).is_ok();
        for room in rooms::list(&state.service, &project.id, show_archived).await? {
            let reports_href = format!(
                "/?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("project", &project.id)
                    .append_pair("room", &room.artifact_id)
                    .finish()
            );
            rows.push(RoomRow {
                meta_lines: meta_lines(room.meta.as_ref()),
                stored: room.id.is_some(),
                title: room.title,
                project_id: project.id.clone(),
                project: project.name.clone(),
                count: room.count,
                last_activity: When::at(room.last_activity, now),
                archived: room.archived,
                reports_href,
                artifact_id: room.artifact_id,
                can_write,
            });
        }
    }
    rows.sort_by(|a, b| b.last_activity.iso.cmp(&a.last_activity.iso));
    let page = RoomsPage {
        assets: assets::get(),
        section: "rooms",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        rooms: rows,
        show_archived,
    };
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct RoomForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    /// `save` (title and meta), `archive` or `unarchive`.
    action: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    meta: String,
}

/// `POST /rooms/{projectId}/{artifactId}`: the same operation as the REST PATCH.
pub async fn update(
    State(state): State<AppState>,
    Path((project_id, artifact_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<RoomForm>,
) -> PageResult<Response> {
    let principal = person.principal();
    let project = super::projects::reachable(&state, &principal, &project_id).await?;
    let changes = match form.action.as_str() {
        "archive" => RoomChanges::parse(None, None, Some(true)),
        "unarchive" => RoomChanges::parse(None, None, Some(false)),
        "save" => {
            let meta = parse_meta_lines(&form.meta)?.unwrap_or(Value::Null);
            RoomChanges::parse(Some(form.title.trim().to_string()), Some(meta), None)
        }
        other => return Err(PageError::BadRequest(format!("Unknown room action {other}."))),
    }
    .map_err(|error| PageError::BadRequest(error.0))?;
    rooms::patch(&state.service, &principal, &project, &artifact_id, changes).await?;
    Ok(see_other_local(Some("/rooms")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_lines_round_trip() {
        let meta = serde_json::json!({"branch": "main", "build": "1234"});
        let lines = meta_lines(Some(&meta));
        assert_eq!(parse_meta_lines(&lines).unwrap(), Some(meta));
        assert_eq!(parse_meta_lines("  \n").unwrap(), None);
        assert!(parse_meta_lines("no colon here").is_err());
    }
}

super::csrf_forms!(RoomForm);
