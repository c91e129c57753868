//! Channels (decisions §5) and their hints: listing, creation, changes.

use super::{ServiceError, ServiceResult, audit};
use crate::Service;
use serde_json::json;
use std::sync::Arc;
use svc_core::audit::action;
use svc_core::channel::{ChannelChanges, NewChannel, NewHint};
use svc_core::model::{Author, Channel, HINT_TTL_MS, Hint, Project};
use svc_core::{ids, time};
use svc_store::StoreError;

/// Channels oldest first; archived ones only when asked. The active ones are the store's cached
/// list, shared rather than copied (the widget's loader and ingest read it for every page and report).
pub async fn list(svc: &Service, project_id: &str, include_archived: bool) -> ServiceResult<Arc<[Channel]>> {
    let store = svc.store();
    Ok(store.list_channels(project_id, include_archived).await?)
}

/// Adds a channel; a duplicate key is a conflict. Recorded in the audit log.
pub async fn create(svc: &Service, project: &Project, new: NewChannel, by: &Author) -> ServiceResult<Channel> {
    let store = svc.store();
    let NewChannel { key, name, color, mascot, base_weight, matchers } = new;
    let now = time::now_ms();
    let channel = Channel {
        id: ids::new_id_at(now),
        project_id: project.id.clone(),
        key,
        name,
        color,
        mascot,
        base_weight,
        matchers,
        archived: false,
        created_at: now,
        updated_at: now,
    };
    match store.create_channel(&channel).await {
        Ok(()) => {
            let detail = json!({"key": channel.key, "name": channel.name});
            audit::record(svc, project, by, action::CHANNEL_CREATED, detail).await;
            Ok(channel)
        }
        Err(StoreError::Conflict(_)) => {
            Err(ServiceError::Conflict(format!("a channel with key {} already exists", channel.key)))
        }
        Err(other) => Err(other.into()),
    }
}

/// Applies changes to the channel `key`; 404 when there is none. A change that changes something
/// is recorded in the audit log with the fields it changed.
pub async fn update(
    svc: &Service,
    project: &Project,
    key: &str,
    changes: ChannelChanges,
    by: &Author,
) -> ServiceResult<Channel> {
    let store = svc.store();
    let mut channel = store
        .get_channel(&project.id, key)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("no channel with key {key}")))?;
    let before = channel.clone();
    changes.apply(&mut channel);
    channel.updated_at = time::now_ms();
    store.update_channel(&channel).await?;
    let changed: Vec<&str> = [
        ("name", before.name != channel.name),
        ("color", before.color != channel.color),
        ("mascot", before.mascot != channel.mascot),
        ("baseWeight", before.base_weight != channel.base_weight),
        ("matchers", before.matchers != channel.matchers),
        ("archived", before.archived != channel.archived),
    ]
    .into_iter()
    .filter_map(|(field, differs)| differs.then_some(field))
    .collect();
    if !changed.is_empty() {
        let mut detail = json!({"key": channel.key, "fields": changed});
        if before.archived != channel.archived {
            detail["archived"] = json!(channel.archived);
        }
        audit::record(svc, project, by, action::CHANNEL_CHANGED, detail).await;
    }
    Ok(channel)
}

/// Adds a hint for an active channel; it lives [`HINT_TTL_MS`].
pub async fn add_hint(svc: &Service, project_id: &str, new: NewHint) -> ServiceResult<Hint> {
    let store = svc.store();
    match store.get_channel(project_id, &new.channel_key).await? {
        Some(channel) if !channel.archived => {}
        _ => return Err(ServiceError::Invalid(format!("channelKey: no active channel {}", new.channel_key))),
    }
    let now = time::now_ms();
    let hint = Hint {
        id: ids::new_id_at(now),
        project_id: project_id.to_string(),
        channel_key: new.channel_key,
        weight: new.weight,
        user_id: new.user_id,
        created_at: now,
        expires_at: now + HINT_TTL_MS,
    };
    store.create_hint(&hint).await?;
    Ok(hint)
}

/// The unexpired hints for everyone plus those for `user_id` (never other users').
pub async fn active_hints(svc: &Service, project_id: &str, user_id: Option<&str>) -> ServiceResult<Vec<Hint>> {
    let store = svc.store();
    Ok(store.list_active_hints(project_id, user_id, time::now_ms()).await?)
}

/// Every unexpired hint of the project, whoever it is for (the dashboard's list).
pub async fn live_hints(svc: &Service, project_id: &str) -> ServiceResult<Vec<Hint>> {
    let store = svc.store();
    Ok(store.list_all_active_hints(project_id, time::now_ms()).await?)
}
