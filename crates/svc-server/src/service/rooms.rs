//! Rooms: one per artifact. A room exists once stored or once a report carries its artifact id.

use super::{ServiceError, ServiceResult};
use serde_json::{Map, Value};
use svc_core::model::{Room, RoomChanges, RoomSummary};
use svc_core::{ids, time};
use svc_store::Store;

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

pub async fn list(store: &dyn Store, project_id: &str, include_archived: bool) -> ServiceResult<Vec<RoomSummary>> {
    Ok(store.list_rooms(project_id, include_archived).await?)
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
