//! Each tool's arguments as one type: `tools/list` shows the JSON Schema generated from it
//! (schemars) and `tools/call` reads the arguments into it (serde), so a limit, an allowed value or
//! a required argument is written once, in the type. The types' own checks say what was wrong in
//! words an agent can act on ("argument title is longer than 200 characters").

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use svc_core::status::{COMMENT_KINDS, STATUSES, Status};

/// Reports `list_reports` gives unless `limit` says otherwise, and at most.
pub const LIST_DEFAULT_LIMIT: u32 = 50;
pub const LIST_MAX_LIMIT: u32 = 200;

/// A string of at most `MAX` characters (absent when the argument is).
#[derive(Debug, Clone, PartialEq)]
pub struct Text<const MAX: usize>(pub String);

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Some(text) = Option::<String>::deserialize(d).map_err(|_| serde::de::Error::custom("must be a string"))?
        else {
            return Err(serde::de::Error::custom("must be a string"));
        };
        if text.chars().count() > MAX {
            return Err(serde::de::Error::custom(format!("is longer than {MAX} characters")));
        }
        Ok(Text(text))
    }
}

impl<const MAX: usize> JsonSchema for Text<MAX> {
    fn schema_name() -> Cow<'static, str> {
        format!("Text{MAX}").into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "maxLength": MAX})
    }
}

/// A required string: something other than white space, at most `MAX` characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Words<const MAX: usize>(pub String);

impl<'de, const MAX: usize> Deserialize<'de> for Words<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Option::<String>::deserialize(d).map_err(|_| serde::de::Error::custom("must be a string"))?;
        match text {
            Some(text) if text.chars().count() > MAX => {
                Err(serde::de::Error::custom(format!("is longer than {MAX} characters")))
            }
            Some(text) if !text.trim().is_empty() => Ok(Words(text)),
            _ => Err(serde::de::Error::custom("is required")),
        }
    }
}

impl<const MAX: usize> JsonSchema for Words<MAX> {
    fn schema_name() -> Cow<'static, str> {
        format!("Words{MAX}").into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1, "maxLength": MAX})
    }
}

/// A report's status, one of [`STATUSES`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusArg(pub Status);

impl<'de> Deserialize<'de> for StatusArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Text(text) = Text::<100>::deserialize(d)?;
        let refused = || serde::de::Error::custom(format!("must be one of {}, not {text:?}", STATUSES.join(", ")));
        text.parse().map(StatusArg).map_err(|_: svc_core::Invalid| refused())
    }
}

impl JsonSchema for StatusArg {
    fn schema_name() -> Cow<'static, str> {
        "Status".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": STATUSES})
    }
}

/// A comment's kind, one of [`COMMENT_KINDS`].
#[derive(Debug, Clone, PartialEq)]
pub struct CommentKind(pub String);

impl<'de> Deserialize<'de> for CommentKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Text(text) = Text::<50>::deserialize(d)?;
        if !COMMENT_KINDS.contains(&text.as_str()) {
            return Err(serde::de::Error::custom(format!("must be one of {}, not {text:?}", COMMENT_KINDS.join(", "))));
        }
        Ok(CommentKind(text))
    }
}

impl JsonSchema for CommentKind {
    fn schema_name() -> Cow<'static, str> {
        "CommentKind".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": COMMENT_KINDS})
    }
}

/// How many reports `list_reports` gives: a whole number of at least 1; more than
/// [`LIST_MAX_LIMIT`] is cut to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListLimit(pub u32);

impl Default for ListLimit {
    fn default() -> Self {
        ListLimit(LIST_DEFAULT_LIMIT)
    }
}

impl<'de> Deserialize<'de> for ListLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let refused = || serde::de::Error::custom(format!("must be a whole number from 1 to {LIST_MAX_LIMIT}"));
        match Option::<serde_json::Number>::deserialize(d).map_err(|_| refused())? {
            None => Ok(ListLimit::default()),
            Some(number) => match number.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 => {
                    Ok(ListLimit((n as u64).min(u64::from(LIST_MAX_LIMIT)) as u32))
                }
                _ => Err(refused()),
            },
        }
    }
}

impl JsonSchema for ListLimit {
    fn schema_name() -> Cow<'static, str> {
        "ListLimit".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": LIST_MAX_LIMIT, "default": LIST_DEFAULT_LIMIT})
    }
}

/// `true` or `false`.
fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Option::<bool>::deserialize(d).map_err(|_| serde::de::Error::custom("must be true or false"))
}

// The tools' arguments. Doc comments are the descriptions agents read (one line each: a line
// break would reach the agent as is).

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Introduce {
    /// Your name as people should see it, e.g. "Claude Code (repo shop-web)".
    #[serde(rename = "agentName")]
    pub agent_name: Words<100>,
    /// Who runs you (a person or team), optional.
    #[serde(default)]
    pub owner: Option<Text<200>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListReports {
    /// Only reports with this status: new, triaged, in-progress, fixed, verified or canceled.
    #[serde(default)]
    pub status: Option<Text<100>>,
    /// Only reports in this channel, e.g. bug, idea, question.
    #[serde(default)]
    pub channel_key: Option<Text<100>>,
    /// Only reports about this artifact (room).
    #[serde(default)]
    pub artifact_id: Option<Text<200>>,
    /// How many (default 50, at most 200).
    #[serde(default)]
    pub limit: ListLimit,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetReport {
    /// Report id (24 hex characters) or its shortId (last 6); also accepted as report_id or reportId.
    pub id: Words<100>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateReport {
    /// The report: plain text or Markdown. The first line becomes its title.
    pub message: Words<10000>,
    /// Channel, e.g. bug or idea (default: the project's default channel).
    #[serde(default)]
    pub channel_key: Option<Text<100>>,
    /// The page or resource the report is about.
    #[serde(default)]
    pub url: Option<Text<8192>>,
    /// A free note on whose words these are (stored with the report).
    #[serde(default)]
    pub author: Option<Text<200>>,
    /// Project id, public key, slug or name. Required with an organization-wide key; ignored otherwise.
    #[serde(default)]
    pub project: Option<Text<200>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRoom {
    /// Stable id of the artifact, e.g. a preview URL or build id.
    pub artifact_id: Words<200>,
    /// Human-readable title (default: the artifact id).
    #[serde(default)]
    pub title: Option<Text<200>>,
    /// What the artifact is meant to achieve; reviewers see it.
    #[serde(default)]
    pub goal: Option<Text<10000>>,
    /// Project id, public key, slug or name. Required with an organization-wide key; ignored otherwise.
    #[serde(default)]
    pub project: Option<Text<200>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetStatus {
    /// Report id or shortId (also accepted as report_id or reportId).
    pub id: Words<100>,
    /// The new status.
    pub status: StatusArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddComment {
    /// Report id or shortId (also accepted as id or reportId).
    pub report_id: Words<100>,
    /// The comment (Markdown).
    pub text: Words<20000>,
    /// true (default): visible only in the dashboard until a human publishes it.
    #[serde(default, deserialize_with = "boolean")]
    #[schemars(with = "bool", extend("default" = true))]
    pub draft: Option<bool>,
    /// fix, question, options, deferral or techdebt.
    #[serde(default)]
    pub kind: Option<CommentKind>,
}

/// The input schema of `T` as `tools/list` shows it: a plain object schema, an optional argument
/// simply not required (no `null` in its type, no meta-schema, no title).
pub fn schema_of<T: JsonSchema>() -> serde_json::Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|settings| {
        settings.meta_schema = None;
        settings.inline_subschemas = true;
    });
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    let mut value = schema.to_value();
    if let Some(properties) = value.get_mut("properties").and_then(serde_json::Value::as_object_mut) {
        for property in properties.values_mut() {
            without_null(property);
        }
    }
    value
}

/// `{"type": ["string", "null"], "enum": [..., null]}` → `{"type": "string", "enum": [...]}`.
fn without_null(schema: &mut serde_json::Value) {
    if let Some(values) = schema.get_mut("enum").and_then(serde_json::Value::as_array_mut) {
        values.retain(|value| !value.is_null());
    }
    let Some(types) = schema.get_mut("type").and_then(serde_json::Value::as_array_mut) else { return };
    types.retain(|t| t != "null");
    if types.len() == 1 {
        let only = types.remove(0);
        schema["type"] = only;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T: for<'de> Deserialize<'de>>(value: serde_json::Value) -> Result<T, String> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            format!("{path} {}", e.into_inner())
        })
    }

    #[test]
    fn the_schema_states_the_limits_the_reader_applies() {
        let schema = schema_of::<CreateRoom>();
        assert_eq!(
            schema["properties"]["title"],
            json!({"type": "string", "maxLength": 200, "description": "Human-readable title (default: the artifact id)."})
        );
        assert_eq!(schema["required"], json!(["artifact_id"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        let too_long = read::<CreateRoom>(json!({"artifact_id": "a", "title": "x".repeat(201)})).unwrap_err();
        assert_eq!(too_long, "title is longer than 200 characters");
        assert!(read::<CreateRoom>(json!({"artifact_id": "a", "title": "x".repeat(200)})).is_ok());
        assert_eq!(read::<CreateRoom>(json!({"artifact_id": "  "})).unwrap_err(), "artifact_id is required");
        assert_eq!(read::<CreateRoom>(json!({"artifact_id": 7})).unwrap_err(), "artifact_id must be a string");
    }

    #[test]
    fn values_are_checked_against_the_lists_the_schema_shows() {
        let schema = schema_of::<AddComment>();
        assert_eq!(schema["properties"]["kind"]["enum"], json!(COMMENT_KINDS));
        assert_eq!(schema["properties"]["draft"]["type"], json!("boolean"));
        assert_eq!(schema["properties"]["draft"]["default"], json!(true));
        let wrong = read::<AddComment>(json!({"report_id": "abc123", "text": "t", "kind": "rant"})).unwrap_err();
        assert!(wrong.starts_with("kind must be one of fix, question"), "{wrong}");
        let draft = read::<AddComment>(json!({"report_id": "abc123", "text": "t", "draft": "yes"})).unwrap_err();
        assert_eq!(draft, "draft must be true or false");
        let status = read::<SetStatus>(json!({"id": "abc123", "status": "done"})).unwrap_err();
        assert!(status.starts_with("status must be one of new, triaged"), "{status}");
        assert_eq!(schema_of::<SetStatus>()["properties"]["status"]["enum"], json!(STATUSES));
    }

    #[test]
    fn a_limit_is_a_whole_number_cut_to_the_maximum() {
        assert_eq!(read::<ListReports>(json!({})).unwrap().limit, ListLimit(50));
        assert_eq!(read::<ListReports>(json!({"limit": 500})).unwrap().limit, ListLimit(200));
        assert_eq!(read::<ListReports>(json!({"limit": 3.0})).unwrap().limit, ListLimit(3));
        assert_eq!(read::<ListReports>(json!({"limit": 0})).unwrap_err(), "limit must be a whole number from 1 to 200");
        let schema = schema_of::<ListReports>();
        assert_eq!(schema["properties"]["limit"]["maximum"], json!(200));
        assert!(schema.get("required").is_none_or(|r| r.as_array().is_some_and(Vec::is_empty)));
    }
}
