//! Feature flags the widget's `Svc.alpha(key)` asks about.

use super::{ServiceResult, audit};
use crate::Service;
use serde_json::json;
use svc_core::audit::action;
use svc_core::model::{Author, Flag, Project};
use svc_core::{channel::validate_flag_key, time};

pub async fn list(svc: &Service, project_id: &str) -> ServiceResult<Vec<Flag>> {
    let store = svc.store();
    Ok(store.list_flags(project_id).await?)
}

/// Turns a flag on or off, creating it. Creating it or changing it is recorded in the audit log
/// (setting a flag to what it already is changes nothing and records nothing).
pub async fn set(svc: &Service, project: &Project, key: &str, enabled: bool, by: &Author) -> ServiceResult<Flag> {
    let store = svc.store();
    validate_flag_key(key)?;
    let before = store.get_flag(&project.id, key).await?;
    let flag = Flag { project_id: project.id.clone(), key: key.to_string(), enabled, updated_at: time::now_ms() };
    store.set_flag(&flag).await?;
    if before.is_none_or(|b| b.enabled != enabled) {
        audit::record(svc, project, by, action::FLAG_SET, json!({"key": key, "enabled": enabled})).await;
    }
    Ok(flag)
}

/// Whether a flag is on; an unknown flag is off.
pub async fn is_enabled(svc: &Service, project_id: &str, key: &str) -> ServiceResult<bool> {
    let store = svc.store();
    Ok(store.get_flag(project_id, key).await?.is_some_and(|f| f.enabled))
}
