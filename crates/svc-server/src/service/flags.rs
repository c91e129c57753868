//! Feature flags the widget's `Svc.alpha(key)` asks about.

use super::ServiceResult;
use svc_core::model::Flag;
use svc_core::{channel::validate_flag_key, time};
use svc_store::Store;

pub async fn list(store: &dyn Store, project_id: &str) -> ServiceResult<Vec<Flag>> {
    Ok(store.list_flags(project_id).await?)
}

/// Turns a flag on or off, creating it.
pub async fn set(store: &dyn Store, project_id: &str, key: &str, enabled: bool) -> ServiceResult<Flag> {
    validate_flag_key(key)?;
    let flag = Flag { project_id: project_id.to_string(), key: key.to_string(), enabled, updated_at: time::now_ms() };
    store.set_flag(&flag).await?;
    Ok(flag)
}

/// Whether a flag is on; an unknown flag is off.
pub async fn is_enabled(store: &dyn Store, project_id: &str, key: &str) -> ServiceResult<bool> {
    Ok(store.get_flag(project_id, key).await?.is_some_and(|f| f.enabled))
}
