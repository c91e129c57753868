//! Rooms: one per artifact. A room exists once stored or once a report carries its artifact id.

use super::{ServiceError, ServiceResult};
use crate::Service;
use crate::permissions::{self, Operation};
use crate::principal::Principal;
use std::collections::HashMap;
use svc_core::model::{Project, Room, RoomChanges, RoomSummary};
use svc_core::room::NewRoom;
use svc_core::{ids, time};
use svc_store::{ArtifactActivity, RoomRows};

pub struct UpsertOutcome {
    pub room: Room,
    pub created: bool,
}

/// POST semantics: create the room, or when it exists (stored or implicit) store it and update only
/// the fields given. `created` is true only when no room existed in either way (and then the room
/// is a `room.created` event by `by`).
pub async fn upsert(svc: &Service, by: &Principal, project: &Project, room: NewRoom) -> ServiceResult<UpsertOutcome> {
    permissions::check(by, Operation::ManageRooms, project)?;
    let store = svc.store();
    let project_id = project.id.as_str();
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
    let author = by.author();
    let (room, inserted) = store.upsert_room(&fresh, &changes, (!implicit).then_some(&author)).await?;
    store.changes().announce(project_id);
    Ok(UpsertOutcome { room, created: inserted && !implicit })
}

/// PATCH semantics: update a stored room, or store an implicit one; 404 when neither exists.
pub async fn patch(
    svc: &Service,
    by: &Principal,
    project: &Project,
    artifact_id: &str,
    changes: RoomChanges,
) -> ServiceResult<Room> {
    permissions::check(by, Operation::ManageRooms, project)?;
    let store = svc.store();
    let project_id = project.id.as_str();
    let room = NewRoom::parse(artifact_id.to_string(), changes)?;
    let stored = store.get_room(project_id, artifact_id).await?;
    if stored.is_none() && store.count_room_reports(project_id, artifact_id).await? == 0 {
        return Err(ServiceError::NotFound(format!("no room with artifactId {artifact_id}")));
    }
    Ok(upsert(svc, by, project, room).await?.room)
}

/// Stored rooms merged with implicit ones (artifact ids only reports carry), most recent activity
/// first.
pub async fn list(svc: &Service, project_id: &str, include_archived: bool) -> ServiceResult<Vec<RoomSummary>> {
    let store = svc.store();
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

/// The stored room of an artifact, if any.
pub async fn get(svc: &Service, project_id: &str, artifact_id: &str) -> ServiceResult<Option<Room>> {
    let store = svc.store();
    Ok(store.get_room(project_id, artifact_id).await?)
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
