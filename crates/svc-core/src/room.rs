//! Room rules: artifact ids, titles and `meta`, checked once for every surface.

use crate::Invalid;
use crate::model::RoomChanges;
use serde_json::{Map, Value};

pub const ARTIFACT_ID_MAX_CHARS: usize = 200;
pub const TITLE_MAX_CHARS: usize = 200;
pub const META_FIELDS: [&str; 5] = ["tool", "source", "goal", "constraints", "url"];

pub fn validate_artifact_id(artifact_id: &str) -> Result<(), Invalid> {
    let chars = artifact_id.chars().count();
    if chars == 0 || chars > ARTIFACT_ID_MAX_CHARS {
        return Err(Invalid::new(format!("artifactId must be 1 to {ARTIFACT_ID_MAX_CHARS} characters")));
    }
    Ok(())
}

pub fn validate_title(title: &str) -> Result<(), Invalid> {
    if title.trim().is_empty() || title.chars().count() > TITLE_MAX_CHARS {
        return Err(Invalid::new(format!("title must be 1 to {TITLE_MAX_CHARS} characters")));
    }
    Ok(())
}

/// `meta`: null, or an object of `tool`, `source`, `goal`, `url` (strings or null) and
/// `constraints` (a string, an array of strings, or null).
pub fn validate_meta(meta: &Value) -> Result<Option<Value>, Invalid> {
    let object = match meta {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => return Err(Invalid::new("meta must be an object or null")),
    };
    let mut clean = Map::new();
    for (field, value) in object {
        if !META_FIELDS.contains(&field.as_str()) {
            return Err(Invalid::new(format!("meta.{field} is not a known field ({})", META_FIELDS.join(", "))));
        }
        let ok = match (field.as_str(), value) {
            (_, Value::Null) => true,
            (_, Value::String(s)) => s.chars().count() <= 10_000,
            ("constraints", Value::Array(items)) => items.len() <= 100 && items.iter().all(Value::is_string),
            _ => false,
        };
        if !ok {
            return Err(Invalid::new(format!("meta.{field} must be a string or null")));
        }
        clean.insert(field.clone(), value.clone());
    }
    Ok(Some(Value::Object(clean)))
}

impl RoomChanges {
    /// Changes to a room: `title` (absent or null keeps it), `meta` (`Some(null)` clears it; an
    /// object replaces it whole), `archived`.
    pub fn parse(title: Option<String>, meta: Option<Value>, archived: Option<bool>) -> Result<Self, Invalid> {
        if let Some(title) = &title {
            validate_title(title)?;
        }
        let meta = meta.as_ref().map(validate_meta).transpose()?;
        Ok(RoomChanges { title, meta, archived })
    }
}

/// A room to create or resume: its artifact id and the fields to set.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRoom {
    pub artifact_id: String,
    pub changes: RoomChanges,
}

impl NewRoom {
    pub fn parse(artifact_id: String, changes: RoomChanges) -> Result<Self, Invalid> {
        validate_artifact_id(&artifact_id)?;
        Ok(NewRoom { artifact_id, changes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn room_changes_check_title_and_meta() {
        let changes = RoomChanges::parse(Some("T".into()), Some(Value::Null), Some(true)).unwrap();
        assert_eq!(changes.meta, Some(None));
        assert!(RoomChanges::parse(Some(" ".into()), None, None).is_err());
        assert!(RoomChanges::parse(None, Some(json!({"colour": "red"})), None).unwrap_err().0.contains("meta.colour"));
        assert!(RoomChanges::parse(None, Some(json!([1])), None).is_err());
        assert!(NewRoom::parse("a".repeat(201), RoomChanges::default()).is_err());
        assert!(NewRoom::parse("a".repeat(200), RoomChanges::default()).is_ok());
    }
}
