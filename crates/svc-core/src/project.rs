//! Project settings: widget configuration, URL patterns, allowed origins, slugs.

use crate::Invalid;
use serde_json::{Map, Value, json};

pub const SHAPES: [&str; 5] = ["frame-tab", "bubble", "tab", "pill", "blob"];
pub const ANCHORS: [&str; 8] = [
    "top-left",
    "top-center",
    "top-right",
    "middle-left",
    "middle-right",
    "bottom-left",
    "bottom-center",
    "bottom-right",
];
pub const TRIGGER_VARIANTS: [&str; 3] = ["frame-tab", "devwidget", "none"];

/// The widget configuration with every default filled in.
pub fn widget_config_defaults() -> Value {
    json!({
        "mascot": "fox",
        "shape": "bubble",
        "anchor": "middle-right",
        "offsetX": 0,
        "offsetY": 0,
        "size": 44,
        "triggerVariant": "frame-tab",
    })
}

/// Validates a `widgetConfig` given to PATCH (it replaces the stored one as a whole). Unknown
/// fields are refused so a typo does not silently do nothing.
pub fn validate_widget_config(config: &Value) -> Result<Value, Invalid> {
    let object = config.as_object().ok_or_else(|| Invalid::new("widgetConfig must be an object"))?;
    let mut out = Map::new();
    for (field, value) in object {
        let enum_of = |allowed: &[&str]| -> Result<Value, Invalid> {
            match value.as_str() {
                Some(s) if allowed.contains(&s) => Ok(value.clone()),
                _ => Err(Invalid::new(format!("widgetConfig.{field} must be one of {}", allowed.join(", ")))),
            }
        };
        let checked = match field.as_str() {
            "mascot" => enum_of(&crate::MASCOTS)?,
            "shape" => enum_of(&SHAPES)?,
            "anchor" => enum_of(&ANCHORS)?,
            "triggerVariant" => enum_of(&TRIGGER_VARIANTS)?,
            "offsetX" | "offsetY" => match value.as_f64() {
                Some(n) if n.is_finite() && n.abs() <= 10_000.0 => value.clone(),
                _ => {
                    return Err(Invalid::new(format!("widgetConfig.{field} must be a number")));
                }
            },
            "recordSteps" => match value {
                Value::Bool(_) => value.clone(),
                _ => return Err(Invalid::new("widgetConfig.recordSteps must be true or false")),
            },
            "size" => match value.as_f64() {
                // The widget clamps to 32..64; store what was asked, clamped the same way.
                Some(n) if n.is_finite() => {
                    let clamped = n.clamp(32.0, 64.0);
                    if clamped.fract() == 0.0 { json!(clamped as i64) } else { json!(clamped) }
                }
                _ => return Err(Invalid::new("widgetConfig.size must be a number")),
            },
            _ => {
                return Err(Invalid::new(format!(
                    "widgetConfig.{field} is not a known field (mascot, shape, anchor, offsetX, offsetY, size, triggerVariant, recordSteps)"
                )));
            }
        };
        out.insert(field.clone(), checked);
    }
    Ok(Value::Object(out))
}

/// The stored configuration over the defaults.
pub fn widget_config_with_defaults(stored: &Value) -> Value {
    let mut config = widget_config_defaults();
    if let (Some(target), Some(source)) = (config.as_object_mut(), stored.as_object()) {
        for (k, v) in source {
            target.insert(k.clone(), v.clone());
        }
    }
    config
}

pub fn validate_url_patterns(patterns: &Value) -> Result<Vec<String>, Invalid> {
    let err = || Invalid::new("urlPatterns must be an array of at most 100 non-empty strings");
    let list = patterns.as_array().ok_or_else(err)?;
    if list.len() > 100 {
        return Err(err());
    }
    list.iter()
        .map(|item| match item.as_str() {
            Some(s) if !s.trim().is_empty() && s.chars().count() <= 2000 => Ok(s.to_string()),
            _ => Err(err()),
        })
        .collect()
}

/// Origins such as `https://app.example.com` (scheme, host, optional port; no path).
pub fn validate_allowed_origins(origins: &Value) -> Result<Vec<String>, Invalid> {
    let list = origins.as_array().ok_or_else(|| Invalid::new("allowedOrigins must be an array of origins"))?;
    if list.len() > 100 {
        return Err(Invalid::new("allowedOrigins holds at most 100 origins"));
    }
    list.iter()
        .map(|item| {
            let text = item.as_str().ok_or_else(|| Invalid::new("allowedOrigins must be an array of strings"))?;
            let origin = text.trim_end_matches('/');
            if is_origin(origin) {
                Ok(origin.to_string())
            } else {
                Err(Invalid::new(format!("allowedOrigins: {text:?} is not an origin like https://app.example.com")))
            }
        })
        .collect()
}

fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https") || rest.is_empty() {
        return false;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok =
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'));
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

pub fn validate_project_name(name: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() || name.chars().count() > 100 {
        return Err(Invalid::new("name must be 1 to 100 characters"));
    }
    Ok(())
}

/// Deleting a project takes its name typed out exactly (surrounding white space aside): a check
/// that the right project is going, and that the person means it.
pub fn confirm_deletion(name: &str, typed: &str) -> Result<(), Invalid> {
    if typed.trim() == name.trim() {
        Ok(())
    } else {
        Err(Invalid::new(format!(
            "To delete this project, type its name exactly as it is written: {name}. Nothing was deleted."
        )))
    }
}

/// A slug from a name: lowercase, runs of other characters as `-`, trimmed of `-`.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() { "project".to_string() } else { slug.chars().take(60).collect() }
}

/// Whether a URL matches a glob where `*` is any run of characters.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Changes to a project's settings; `None` keeps a field. Whether `default_channel_key` names an
/// active channel is the service's to check (it needs the store).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectChanges {
    pub name: Option<String>,
    pub url_patterns: Option<Vec<String>>,
    pub default_channel_key: Option<String>,
    /// Replaces the stored configuration whole.
    pub widget_config: Option<Value>,
    pub allowed_origins: Option<Vec<String>>,
    /// `Some(None)` turns retention off; `Some(Some(days))` keeps reports that many days.
    pub retention_days: Option<Option<i64>>,
    /// Replaces the reporter sign-in settings (see [`crate::reporter::ReporterAuthChange`]).
    pub reporter_auth: Option<crate::reporter::ReporterAuthChange>,
}

/// The longest retention period, in days (about ten years).
pub const RETENTION_DAYS_MAX: i64 = 3650;

/// A retention period: 1 to [`RETENTION_DAYS_MAX`] days.
pub fn validate_retention_days(days: i64) -> Result<i64, Invalid> {
    if (1..=RETENTION_DAYS_MAX).contains(&days) {
        Ok(days)
    } else {
        Err(Invalid::new(format!("retentionDays must be 1 to {RETENTION_DAYS_MAX} days, or null for no limit")))
    }
}

impl ProjectChanges {
    pub fn parse(mut changes: ProjectChanges) -> Result<Self, Invalid> {
        let strings = |items: &[String]| Value::Array(items.iter().cloned().map(Value::String).collect());
        if let Some(name) = &changes.name {
            validate_project_name(name)?;
        }
        if let Some(patterns) = &changes.url_patterns {
            changes.url_patterns = Some(validate_url_patterns(&strings(patterns))?);
        }
        if let Some(config) = &changes.widget_config {
            changes.widget_config = Some(validate_widget_config(config)?);
        }
        if let Some(origins) = &changes.allowed_origins {
            changes.allowed_origins = Some(validate_allowed_origins(&strings(origins))?);
        }
        if let Some(Some(days)) = changes.retention_days {
            validate_retention_days(days)?;
        }
        if let Some(change) = changes.reporter_auth.as_mut() {
            change.auth = std::mem::take(&mut change.auth).parse()?;
            if let crate::reporter::SecretChange::Set(secret) = &change.client_secret {
                crate::reporter::validate_client_secret(secret)?;
            }
        }
        Ok(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widget_config_checks_enums_and_numbers() {
        assert!(validate_widget_config(&json!({"mascot": "owl", "size": 50, "offsetX": -3})).is_ok());
        assert!(validate_widget_config(&json!({"mascot": "dragon"})).is_err());
        assert!(validate_widget_config(&json!({"anchor": "center"})).is_err());
        assert!(validate_widget_config(&json!({"size": "big"})).is_err());
        assert!(validate_widget_config(&json!({"colour": "red"})).is_err());
        assert_eq!(validate_widget_config(&json!({"recordSteps": false})).unwrap(), json!({"recordSteps": false}));
        let refused = validate_widget_config(&json!({"recordSteps": "no"})).unwrap_err();
        assert_eq!(refused.0, "widgetConfig.recordSteps must be true or false");
        assert_eq!(validate_widget_config(&json!({"size": 100})).unwrap()["size"], json!(64));
        let filled = widget_config_with_defaults(&json!({"mascot": "owl"}));
        assert_eq!(filled["mascot"], "owl");
        assert_eq!(filled["shape"], "bubble");
    }

    #[test]
    fn origins() {
        assert_eq!(
            validate_allowed_origins(&json!(["https://app.example.com/", "http://localhost:3000"])).unwrap(),
            vec!["https://app.example.com", "http://localhost:3000"]
        );
        assert!(validate_allowed_origins(&json!(["app.example.com"])).is_err());
        assert!(validate_allowed_origins(&json!(["https://a.com/path"])).is_err());
    }

    #[test]
    fn retention_is_one_day_to_ten_years() {
        assert_eq!(validate_retention_days(1), Ok(1));
        assert_eq!(validate_retention_days(3650), Ok(3650));
        assert!(validate_retention_days(0).is_err());
        assert!(validate_retention_days(3651).is_err());
        let changes = ProjectChanges { retention_days: Some(Some(-5)), ..Default::default() };
        assert!(ProjectChanges::parse(changes).is_err());
        let off = ProjectChanges { retention_days: Some(None), ..Default::default() };
        assert_eq!(ProjectChanges::parse(off.clone()), Ok(off));
    }

    #[test]
    fn deletion_takes_the_exact_name() {
        assert!(confirm_deletion("Web App", "Web App").is_ok());
        assert!(confirm_deletion("Web App", " Web App\n").is_ok());
        assert!(confirm_deletion("Web App", "web app").is_err());
        assert!(confirm_deletion("Web App", "").is_err());
        assert!(confirm_deletion("Web App", "Web").is_err());
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("My Great  App!"), "my-great-app");
        assert_eq!(slugify("***"), "project");
    }

    #[test]
    fn globs() {
        assert!(glob_match("https://*.example.com/*", "https://app.example.com/a/b"));
        assert!(glob_match("*", "anything"));
        assert!(!glob_match("https://example.com/", "https://example.com/x"));
    }
}
