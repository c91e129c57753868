//! Channel rules (decisions §5): keys, names, colours, mascots, weights and matchers.

use crate::Invalid;
use serde_json::Value;

pub const MATCHER_FIELDS: [&str; 5] = ["url", "path", "host", "userId", "locale"];
pub const MATCHER_OPS: [&str; 9] = ["eq", "neq", "contains", "prefix", "suffix", "glob", "regex", "exists", "in"];
const MAX_MATCHERS: usize = 50;
const MAX_CONDITIONS: usize = 20;

/// `^[a-z0-9][a-z0-9_-]{0,39}$`
pub fn validate_key(key: &str) -> Result<(), Invalid> {
    let bytes = key.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= 40
        && matches!(bytes[0], b'a'..=b'z' | b'0'..=b'9')
        && bytes.iter().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Invalid::new("key must be 1 to 40 characters of a-z, 0-9, _ and -, starting with a letter or digit"))
    }
}

pub fn validate_name(name: &str) -> Result<(), Invalid> {
    let chars = name.chars().count();
    if name.trim().is_empty() || chars > 80 {
        return Err(Invalid::new("name must be 1 to 80 characters"));
    }
    Ok(())
}

/// `#rrggbb`
pub fn validate_color(color: &str) -> Result<(), Invalid> {
    let bytes = color.as_bytes();
    if bytes.len() == 7 && bytes[0] == b'#' && bytes[1..].iter().all(u8::is_ascii_hexdigit) {
        Ok(())
    } else {
        Err(Invalid::new("color must be a hex colour like #e5484d"))
    }
}

pub fn validate_mascot(mascot: &str) -> Result<(), Invalid> {
    if crate::MASCOTS.contains(&mascot) {
        Ok(())
    } else {
        Err(Invalid::new(format!("mascot must be one of {}", crate::MASCOTS.join(", "))))
    }
}

pub fn validate_base_weight(weight: f64) -> Result<(), Invalid> {
    if weight.is_finite() { Ok(()) } else { Err(Invalid::new("baseWeight must be a finite number")) }
}

/// Validates a matcher list: `[{conditions: [{field, op, value}], weight: number, note: string}]`.
/// Returns the normalized list (missing `note` becomes "").
pub fn validate_matchers(matchers: &Value) -> Result<Value, Invalid> {
    let list = matchers.as_array().ok_or_else(|| Invalid::new("matchers must be an array"))?;
    if list.len() > MAX_MATCHERS {
        return Err(Invalid::new(format!("at most {MAX_MATCHERS} matchers")));
    }
    let mut normalized = Vec::with_capacity(list.len());
    for (i, matcher) in list.iter().enumerate() {
        let at = |what: &str| Invalid::new(format!("matchers[{i}]: {what}"));
        let object = matcher.as_object().ok_or_else(|| at("must be an object"))?;
        let conditions =
            object.get("conditions").and_then(Value::as_array).ok_or_else(|| at("conditions must be an array"))?;
        if conditions.len() > MAX_CONDITIONS {
            return Err(at(&format!("at most {MAX_CONDITIONS} conditions")));
        }
        for (j, condition) in conditions.iter().enumerate() {
            validate_condition(condition).map_err(|e| at(&format!("conditions[{j}]: {}", e.0)))?;
        }
        let weight = object
            .get("weight")
            .and_then(Value::as_f64)
            .filter(|w| w.is_finite())
            .ok_or_else(|| at("weight must be a number"))?;
        let note = match object.get("note") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) if s.chars().count() <= 500 => s.clone(),
            Some(_) => return Err(at("note must be a string of at most 500 characters")),
        };
        normalized.push(serde_json::json!({"conditions": conditions, "weight": weight, "note": note}));
    }
    Ok(Value::Array(normalized))
}

fn validate_condition(condition: &Value) -> Result<(), Invalid> {
    let object = condition.as_object().ok_or_else(|| Invalid::new("must be an object"))?;
    let field = object.get("field").and_then(Value::as_str).ok_or_else(|| Invalid::new("field must be a string"))?;
    let field_ok = MATCHER_FIELDS.contains(&field)
        || field.strip_prefix("attr.").is_some_and(|name| !name.is_empty() && name.chars().count() <= 100);
    if !field_ok {
        return Err(Invalid::new(format!("field must be one of {} or attr.<name>", MATCHER_FIELDS.join(", "))));
    }
    let op = object.get("op").and_then(Value::as_str).ok_or_else(|| Invalid::new("op must be a string"))?;
    if !MATCHER_OPS.contains(&op) {
        return Err(Invalid::new(format!("op must be one of {}", MATCHER_OPS.join(", "))));
    }
    let value = object.get("value");
    match op {
        "exists" => {}
        "in" => {
            let ok = value.and_then(Value::as_array).is_some_and(|items| items.iter().all(Value::is_string));
            if !ok {
                return Err(Invalid::new("value must be an array of strings for op in"));
            }
        }
        _ => {
            let text = value.and_then(Value::as_str).ok_or_else(|| Invalid::new("value must be a string"))?;
            if text.chars().count() > 2000 {
                return Err(Invalid::new("value must be at most 2000 characters"));
            }
        }
    }
    Ok(())
}

/// The channels every new project starts with: (key, name, color, mascot).
pub const DEFAULT_CHANNELS: [(&str, &str, &str, &str); 3] = [
    ("bug", "Bugs", "#e5484d", "fox"),
    ("idea", "Ideas", "#f5a524", "owl"),
    ("question", "Questions", "#3e63dd", "cat"),
];
pub const DEFAULT_CHANNEL_KEY: &str = "bug";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys() {
        assert!(validate_key("bug").is_ok());
        assert!(validate_key("a_b-9").is_ok());
        assert!(validate_key("-bug").is_err());
        assert!(validate_key("Bug").is_err());
        assert!(validate_key("").is_err());
        assert!(validate_key(&"a".repeat(41)).is_err());
    }

    #[test]
    fn colors_and_mascots() {
        assert!(validate_color("#a0B1c2").is_ok());
        assert!(validate_color("red").is_err());
        assert!(validate_mascot("owl").is_ok());
        assert!(validate_mascot("dragon").is_err());
    }

    #[test]
    fn matchers_are_checked_and_normalized() {
        let ok = json!([{"conditions": [{"field": "path", "op": "prefix", "value": "/checkout"},
                                        {"field": "attr.plan", "op": "in", "value": ["pro"]},
                                        {"field": "userId", "op": "exists"}], "weight": 5}]);
        let normalized = validate_matchers(&ok).unwrap();
        assert_eq!(normalized[0]["note"], "");
        assert!(
            validate_matchers(&json!([{"conditions": [{"field": "cookie", "op": "eq", "value": "x"}], "weight": 1}]))
                .is_err()
        );
        assert!(
            validate_matchers(&json!([{"conditions": [{"field": "url", "op": "like", "value": "x"}], "weight": 1}]))
                .is_err()
        );
        assert!(validate_matchers(&json!([{"conditions": [], "weight": "high"}])).is_err());
        assert!(validate_matchers(&json!({})).is_err());
    }
}

/// A channel to create, every field checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChannel {
    pub key: String,
    pub name: String,
    pub color: String,
    pub mascot: String,
    pub base_weight: f64,
    /// Normalized by [`validate_matchers`].
    pub matchers: Value,
}

impl NewChannel {
    pub fn parse(
        key: String,
        name: String,
        color: String,
        mascot: String,
        base_weight: Option<f64>,
        matchers: Option<Value>,
    ) -> Result<Self, Invalid> {
        validate_key(&key)?;
        validate_name(&name)?;
        validate_color(&color)?;
        validate_mascot(&mascot)?;
        let base_weight = base_weight.unwrap_or(0.0);
        validate_base_weight(base_weight)?;
        let matchers = match matchers {
            Some(matchers) => validate_matchers(&matchers)?,
            None => Value::Array(vec![]),
        };
        Ok(NewChannel { key, name, color, mascot, base_weight, matchers })
    }
}

/// Changes to a channel; `None` keeps a field. The key never changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelChanges {
    pub name: Option<String>,
    pub color: Option<String>,
    pub mascot: Option<String>,
    pub base_weight: Option<f64>,
    pub matchers: Option<Value>,
    pub archived: Option<bool>,
}

impl ChannelChanges {
    pub fn parse(mut changes: ChannelChanges) -> Result<Self, Invalid> {
        if let Some(name) = &changes.name {
            validate_name(name)?;
        }
        if let Some(color) = &changes.color {
            validate_color(color)?;
        }
        if let Some(mascot) = &changes.mascot {
            validate_mascot(mascot)?;
        }
        if let Some(weight) = changes.base_weight {
            validate_base_weight(weight)?;
        }
        if let Some(matchers) = &changes.matchers {
            changes.matchers = Some(validate_matchers(matchers)?);
        }
        Ok(changes)
    }

    pub fn apply(self, channel: &mut crate::model::Channel) {
        let ChannelChanges { name, color, mascot, base_weight, matchers, archived } = self;
        channel.name = name.unwrap_or(std::mem::take(&mut channel.name));
        channel.color = color.unwrap_or(std::mem::take(&mut channel.color));
        channel.mascot = mascot.unwrap_or(std::mem::take(&mut channel.mascot));
        channel.base_weight = base_weight.unwrap_or(channel.base_weight);
        if let Some(matchers) = matchers {
            channel.matchers = matchers;
        }
        channel.archived = archived.unwrap_or(channel.archived);
    }
}

/// A channel hint to add (the channel's existence is the service's to check).
#[derive(Debug, Clone, PartialEq)]
pub struct NewHint {
    pub channel_key: String,
    pub weight: crate::model::HintWeight,
    pub user_id: Option<String>,
}

impl NewHint {
    pub fn parse(channel_key: String, weight: &Value, user_id: Option<String>) -> Result<Self, Invalid> {
        let weight = crate::model::HintWeight::from_json(weight)
            .ok_or_else(|| Invalid::new("weight is required: \"suggest\", \"max\" or a number"))?;
        if user_id.as_ref().is_some_and(|u| u.is_empty() || u.chars().count() > 200) {
            return Err(Invalid::new("userId must be a string of 1 to 200 characters"));
        }
        Ok(NewHint { channel_key, weight, user_id })
    }
}

/// Flag keys: 1 to 64 of letters, digits, `_`, `-`, `.`; starting with a letter or digit.
pub fn validate_flag_key(key: &str) -> Result<(), Invalid> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok { Ok(()) } else { Err(Invalid::new("flag key must be 1 to 64 characters of letters, digits, _, - and .")) }
}
