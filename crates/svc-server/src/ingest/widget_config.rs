//! `GET /ingest/config`, `GET /ingest/channels`, `GET /ingest/flags/:key`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use serde::Deserialize;
use serde_json::{Value, json};
use svc_core::time::iso;

use super::access::{self, IngestProject};
use super::error::IngestResult;
use crate::state::AppState;
use svc_service::sightings::{PageKnown, Source};
use svc_service::{channels, flags};

#[derive(Deserialize)]
pub struct ConfigQuery {
    #[serde(rename = "userId")]
    user_id: Option<String>,
}

/// Widget configuration with defaults, the unexpired channel hints for everyone plus those for
/// `?userId=` (never other users'), and the upload limits.
pub async fn config(
    State(state): State<AppState>,
    IngestProject(project): IngestProject,
    Query(query): Query<ConfigQuery>,
    headers: HeaderMap,
) -> IngestResult<Json<Value>> {
    let page = crate::ingest::access::page_from_headers(&headers);
    state.sightings.record(&project.id, Source::Config, page, PageKnown::FromHeaders, svc_core::time::now_ms());
    let user_id = query.user_id.filter(|u| !u.is_empty());
    let hints = channels::active_hints(&state.service, &project.id, user_id.as_deref()).await?;
    let hints: Vec<Value> = hints
        .iter()
        .map(|h| json!({"channelKey": h.channel_key, "weight": h.weight.to_json(), "userId": h.user_id}))
        .collect();
    Ok(Json(json!({
        "widgetConfig": svc_core::project::widget_config_with_defaults(&project.widget_config),
        "hints": hints,
        "limits": state.config.limits.to_json(),
        "urlPatterns": project.url_patterns,
        "defaultChannelKey": project.default_channel_key,
        "reporterAuth": project.reporter_auth.to_widget_json(),
    })))
}

/// The channel in its ingest form.
pub fn channel_json(c: &svc_core::model::Channel) -> Value {
    json!({
        "id": c.id, "key": c.key, "name": c.name, "color": c.color, "mascot": c.mascot,
        "baseWeight": c.base_weight, "archived": c.archived, "projectId": c.project_id,
        "createdAt": iso(c.created_at), "updatedAt": iso(c.updated_at), "matchers": c.matchers,
    })
}

/// Non-archived channels, oldest first, with the project's default channel key.
pub async fn channels(
    State(state): State<AppState>,
    IngestProject(project): IngestProject,
) -> IngestResult<Json<Value>> {
    let channels = channels::list(&state.service, &project.id, false).await?;
    Ok(Json(json!({
        "defaultChannelKey": project.default_channel_key,
        "channels": channels.iter().map(channel_json).collect::<Vec<_>>(),
    })))
}

/// `{enabled}`; false for unknown flags and for unknown keys (never 401 here).
pub async fn flag(State(state): State<AppState>, Path(key): Path<String>, parts: Parts) -> IngestResult<Json<Value>> {
    let enabled = match access::resolve(&state, &parts).await? {
        Some(project) => flags::is_enabled(&state.service, &project.id, &key).await?,
        None => false,
    };
    Ok(Json(json!({"enabled": enabled})))
}
