//! Rooms: one per artifact. A room exists once stored or once a report carries its artifact id.

use super::{ServiceError, ServiceResult};
use svc_core::model::{Room, RoomChanges, RoomSummary};
use svc_core::room::NewRoom;
use svc_core::{ids, time};
use svc_store::Store;

pub struct UpsertOutcome {
    pub room: Room,
    pub created: bool,
}

/// POST semantics: create the room, or when it exists (stored or implicit) store it and update only
/// the fields given. `created` is true only when no room existed in either way.
pub async fn upsert(store: &dyn Store, project_id: &str, room: NewRoom) -> ServiceResult<UpsertOutcome> {
    let NewRoom { artifact_id, changes } = room;
    let artifact_id = artifact_id.as_str();
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
    let room = NewRoom::parse(artifact_id.to_string(), changes)?;
    let stored = store.get_room(project_id, artifact_id).await?;
    if stored.is_none() && store.count_room_reports(project_id, artifact_id).await? == 0 {
        return Err(ServiceError::NotFound(format!("no room with artifactId {artifact_id}")));
    }
    Ok(upsert(store, project_id, room).await?.room)
}

pub async fn list(store: &dyn Store, project_id: &str, include_archived: bool) -> ServiceResult<Vec<RoomSummary>> {
    Ok(store.list_rooms(project_id, include_archived).await?)
}

/// The stored room of an artifact, if any.
pub async fn get(store: &dyn Store, project_id: &str, artifact_id: &str) -> ServiceResult<Option<Room>> {
    Ok(store.get_room(project_id, artifact_id).await?)
}
