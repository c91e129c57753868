//! Channels: creation and changes with the rules of decisions §5.

use super::{ServiceError, ServiceResult};
use serde_json::{Map, Value};
use svc_core::channel as rules;
use svc_core::model::Channel;
use svc_core::{ids, time};
use svc_store::{Store, StoreError};

fn string_field<'a>(body: &'a Map<String, Value>, field: &str) -> ServiceResult<Option<&'a str>> {
    match body.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ServiceError::Invalid(format!("{field} must be a string"))),
    }
}

fn required<'a>(body: &'a Map<String, Value>, field: &str) -> ServiceResult<&'a str> {
    string_field(body, field)?.ok_or_else(|| ServiceError::Invalid(format!("{field} is required")))
}

fn number_field(body: &Map<String, Value>, field: &str) -> ServiceResult<Option<f64>> {
    match body.get(field) {
        None => Ok(None),
        Some(value) => match value.as_f64() {
            Some(n) if n.is_finite() => Ok(Some(n)),
            _ => Err(ServiceError::Invalid(format!("{field} must be a number"))),
        },
    }
}

/// `{key, name, color, mascot, baseWeight?, matchers?}`; a duplicate key is a conflict.
pub async fn create(store: &dyn Store, project_id: &str, body: &Value) -> ServiceResult<Channel> {
    let body = body.as_object().ok_or_else(|| ServiceError::Invalid("body must be a JSON object".into()))?;
    const FIELDS: [&str; 6] = ["key", "name", "color", "mascot", "baseWeight", "matchers"];
    if let Some(unknown) = body.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(ServiceError::Invalid(format!("unknown field {unknown}: a channel takes {}", FIELDS.join(", "))));
    }
    let key = required(body, "key")?;
    rules::validate_key(key)?;
    let name = required(body, "name")?;
    rules::validate_name(name)?;
    let color = required(body, "color")?;
    rules::validate_color(color)?;
    let mascot = required(body, "mascot")?;
    rules::validate_mascot(mascot)?;
    let base_weight = number_field(body, "baseWeight")?.unwrap_or(0.0);
    let matchers = match body.get("matchers") {
        Some(m) => rules::validate_matchers(m)?,
        None => Value::Array(vec![]),
    };
    let now = time::now_ms();
    let channel = Channel {
        id: ids::new_id_at(now),
        project_id: project_id.to_string(),
        key: key.to_string(),
        name: name.to_string(),
        color: color.to_string(),
        mascot: mascot.to_string(),
        base_weight,
        matchers,
        archived: false,
        created_at: now,
        updated_at: now,
    };
    match store.create_channel(&channel).await {
        Ok(()) => Ok(channel),
        Err(StoreError::Conflict(_)) => Err(ServiceError::Conflict(format!("a channel with key {key} already exists"))),
        Err(other) => Err(other.into()),
    }
}

/// Any of `name, color, mascot, baseWeight, matchers, archived`; `key` cannot change.
pub async fn update(store: &dyn Store, project_id: &str, key: &str, body: &Value) -> ServiceResult<Channel> {
    let body = body.as_object().ok_or_else(|| ServiceError::Invalid("body must be a JSON object".into()))?;
    let mut channel = store
        .get_channel(project_id, key)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("no channel with key {key}")))?;
    for (field, value) in body {
        match field.as_str() {
            "name" => {
                let name = required(body, "name")?;
                rules::validate_name(name)?;
                channel.name = name.to_string();
            }
            "color" => {
                let color = required(body, "color")?;
                rules::validate_color(color)?;
                channel.color = color.to_string();
            }
            "mascot" => {
                let mascot = required(body, "mascot")?;
                rules::validate_mascot(mascot)?;
                channel.mascot = mascot.to_string();
            }
            "baseWeight" => channel.base_weight = number_field(body, "baseWeight")?.unwrap_or(0.0),
            "matchers" => channel.matchers = rules::validate_matchers(value)?,
            "archived" => {
                channel.archived =
                    value.as_bool().ok_or_else(|| ServiceError::Invalid("archived must be a boolean".into()))?
            }
            "key" if value.as_str() == Some(key) => {}
            "key" => return Err(ServiceError::Invalid("key cannot change".into())),
            other => {
                return Err(ServiceError::Invalid(format!(
                    "unknown field {other}: a channel update takes name, color, mascot, baseWeight, matchers, archived"
                )));
            }
        }
    }
    channel.updated_at = time::now_ms();
    store.update_channel(&channel).await?;
    Ok(channel)
}
