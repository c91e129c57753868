//! Rooms: one per artifact. A room exists once stored or once a report carries its artifact id.

use super::{ServiceError, ServiceResult};
use serde_json::{Map, Value};
use std::collections::HashMap;
use svc_core::model::{Room, RoomChanges, RoomSummary};
use svc_core::{ids, time};
use svc_store::{ArtifactActivity, RoomRows, Store};

pub const ARTIFACT_ID_MAX_CHARS: usize = 200;
const META_FIELDS: [&str; 5] = ["tool", "source", "goal", "constraints", "url"];

pub fn validate_artifact_id(artifact_id: &str) -> Result<(), ServiceError> {
    let chars = artifact_id.chars().count();
    if chars == 0 || chars > ARTIFACT_ID_MAX_CHARS {
        return Err(ServiceError::Invalid(format!("artifactId must be 1 to {ARTIFACT_ID_MAX_CHARS} characters")));
    }
    Ok(())
}

pub fn validate_title(title: &str) -> Result<(), ServiceError> {
    if title.trim().is_empty() || title.chars().count() > 200 {
        return Err(ServiceError::Invalid("title must be 1 to 200 characters".into()));
    }
    Ok(())
}

/// `meta`: null, or an object of `tool`, `source`, `goal`, `url` (strings or null) and
/// `constraints` (a string, an array of strings, or null).
pub fn validate_meta(meta: &Value) -> Result<Option<Value>, ServiceError> {
    let object = match meta {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => {
            return Err(ServiceError::Invalid("meta must be an object or null".into()));
        }
    };
    let mut clean = Map::new();
    for (field, value) in object {
        if !META_FIELDS.contains(&field.as_str()) {
            return Err(ServiceError::Invalid(format!(
                "meta.{field} is not a known field ({})",
                META_FIELDS.join(", ")
            )));
        }
        let ok = match (field.as_str(), value) {
            (_, Value::Null) => true,
            (_, Value::String(s)) => s.chars().count() <= 10_000,
            ("constraints", Value::Array(items)) => items.len() <= 100 && items.iter().all(Value::is_string),
            _ => false,
        };
        if !ok {
            return Err(ServiceError::Invalid(format!("meta.{field} must be a string or null")));
        }
        clean.insert(field.clone(), value.clone());
    }
    Ok(Some(Value::Object(clean)))
}

pub struct UpsertOutcome {
    pub room: Room,
    pub created: bool,
}

/// POST semantics: create the room, or when it exists (stored or implicit) store it and update only
/// the fields given. `created` is true only when no room existed in either way.
pub async fn upsert(
    store: &dyn Store,
    project_id: &str,
    artifact_id: &str,
    changes: RoomChanges,
) -> ServiceResult<UpsertOutcome> {
    validate_artifact_id(artifact_id)?;
    let implicit = store.get_room(project_id, artifact_id).await?.is_none()
        && store.count_room_reports(project_id, artifact_id).await? > 0;
    let now = time::now_ms();
    let fresh = Room {
        id: ids::new_id_at(now),
        project_id: project_id.to_string(),
        artifact_id: artifact_id.to_string(),
        title: changes.title.clone().unwrap_or_else(|| artifact_id.to_string()),
        meta: changes.meta.clone().flatten(),
        archived: changes.archived.unwrap_or(false),
        created_at: now,
        updated_at: now,
    };
    let (room, inserted) = store.upsert_room(&fresh, &changes).await?;
    Ok(UpsertOutcome { room, created: inserted && !implicit })
}

/// PATCH semantics: update a stored room, or store an implicit one; 404 when neither exists.
pub async fn patch(
    store: &dyn Store,
    project_id: &str,
    artifact_id: &str,
    changes: RoomChanges,
) -> ServiceResult<Room> {
    validate_artifact_id(artifact_id)?;
    let stored = store.get_room(project_id, artifact_id).await?;
    if stored.is_none() && store.count_room_reports(project_id, artifact_id).await? == 0 {
        return Err(ServiceError::NotFound(format!("no room with artifactId {artifact_id}")));
    }
    Ok(upsert(store, project_id, artifact_id, changes).await?.room)
}

/// Stored rooms merged with implicit ones (artifact ids only reports carry), most recent activity
/// first.
pub async fn list(store: &dyn Store, project_id: &str, include_archived: bool) -> ServiceResult<Vec<RoomSummary>> {
    Ok(merge_rooms(store.room_rows(project_id).await?, include_archived))
}

/// A stored room's activity is its own last change or its newest report, whichever is later; an
/// archived room hides its implicit counterpart even when it is not listed; what only reports name
/// is an implicit room, titled by its artifact id. Ties go by artifact id.
fn merge_rooms(rows: RoomRows, include_archived: bool) -> Vec<RoomSummary> {
    let mut activity: HashMap<String, ArtifactActivity> =
        rows.activity.into_iter().map(|a| (a.artifact_id.clone(), a)).collect();
    let mut summaries = Vec::with_capacity(rows.stored.len() + activity.len());
    for room in rows.stored {
        let reports = activity.remove(&room.artifact_id);
        if room.archived && !include_archived {
            continue;
        }
        let (count, last_report_at) = reports.map_or((0, i64::MIN), |a| (a.report_count, a.last_report_at));
        summaries.push(RoomSummary {
            id: Some(room.id),
            artifact_id: room.artifact_id,
            title: room.title,
            meta: room.meta,
            archived: room.archived,
            last_activity: room.updated_at.max(last_report_at),
            count,
        });
    }
    summaries.extend(activity.into_values().map(|reports| RoomSummary {
        id: None,
        title: reports.artifact_id.clone(),
        artifact_id: reports.artifact_id,
        meta: None,
        archived: false,
        last_activity: reports.last_report_at,
        count: reports.report_count,
    }));
    summaries.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then_with(|| a.artifact_id.cmp(&b.artifact_id)));
    summaries
}

/// Reads `title`, `meta`, `archived` from a request body into changes.
pub fn changes_from_body(body: &Map<String, Value>) -> ServiceResult<RoomChanges> {
    let mut changes = RoomChanges::default();
    if let Some(title) = body.get("title") {
        match title {
            Value::String(t) => {
                validate_title(t)?;
                changes.title = Some(t.clone());
            }
            Value::Null => {}
            _ => return Err(ServiceError::Invalid("title must be a string".into())),
        }
    }
    if let Some(meta) = body.get("meta") {
        changes.meta = Some(validate_meta(meta)?);
    }
    if let Some(archived) = body.get("archived") {
        changes.archived =
            Some(archived.as_bool().ok_or_else(|| ServiceError::Invalid("archived must be a boolean".into()))?);
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(artifact_id: &str, updated_at: i64, archived: bool) -> Room {
        Room {
            id: format!("room-{artifact_id}"),
            project_id: "p".into(),
            artifact_id: artifact_id.into(),
            title: format!("Room {artifact_id}"),
            meta: Some(json!({"tool": "figma"})),
            archived,
            created_at: updated_at,
            updated_at,
        }
    }

    fn activity(artifact_id: &str, report_count: i64, last_report_at: i64) -> ArtifactActivity {
        ArtifactActivity { artifact_id: artifact_id.into(), report_count, last_report_at }
    }

    fn summary(room: &Room, count: i64, last_activity: i64) -> RoomSummary {
        RoomSummary {
            id: Some(room.id.clone()),
            artifact_id: room.artifact_id.clone(),
            title: room.title.clone(),
            meta: room.meta.clone(),
            archived: room.archived,
            last_activity,
            count,
        }
    }

    #[test]
    fn stored_and_implicit_rooms_are_merged_by_last_activity() {
        let with_report = stored("stored", 5, false);
        let empty = stored("empty", 40, false);
        let archived = stored("archived", 2, true);
        let rows = RoomRows {
            stored: vec![with_report.clone(), empty.clone(), archived.clone()],
            activity: vec![activity("implicit", 2, 50), activity("stored", 1, 30), activity("archived", 1, 90)],
        };
        let implicit = RoomSummary {
            id: None,
            artifact_id: "implicit".into(),
            title: "implicit".into(),
            meta: None,
            archived: false,
            last_activity: 50,
            count: 2,
        };

        // The archived room is left out, and its reports make no implicit room either.
        assert_eq!(
            merge_rooms(rows.clone(), false),
            vec![implicit.clone(), summary(&empty, 0, 40), summary(&with_report, 1, 30)]
        );
        assert_eq!(
            merge_rooms(rows, true),
            vec![summary(&archived, 1, 90), implicit, summary(&empty, 0, 40), summary(&with_report, 1, 30)]
        );
    }

    #[test]
    fn a_room_changed_after_its_last_report_is_as_recent_as_the_change_and_ties_go_by_artifact_id() {
        let changed = stored("b", 70, false);
        let rows =
            RoomRows { stored: vec![changed.clone()], activity: vec![activity("b", 3, 60), activity("a", 1, 70)] };
        let implicit = RoomSummary {
            id: None,
            artifact_id: "a".into(),
            title: "a".into(),
            meta: None,
            archived: false,
            last_activity: 70,
            count: 1,
        };
        assert_eq!(merge_rooms(rows, false), vec![implicit, summary(&changed, 3, 70)]);
        assert!(merge_rooms(RoomRows::default(), true).is_empty());
    }
}
