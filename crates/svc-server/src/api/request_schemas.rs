//! OpenAPI schemas for the values inside request bodies, built from the lists and limits svc-core
//! checks (mascots, shapes, anchors, matcher fields and operators, scopes), so the document refuses
//! what the server refuses. Used through `#[schema(schema_with = ...)]` in [`super::views`].

use svc_core::channel::{MATCHER_FIELDS, MATCHER_OPS};
use svc_core::project::{ANCHORS, SHAPES, TRIGGER_VARIANTS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, Object, ObjectBuilder, OneOfBuilder, Schema, Type};

/// A string holding something other than white space (names are trimmed before their check).
pub const NOT_BLANK: &str = r"\S";

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn number() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Number)
}

fn one_of_strings(values: &[&str]) -> ObjectBuilder {
    string().enum_values(Some(values.iter().copied()))
}

fn nullable(schema: impl Into<RefOr<Schema>>) -> Schema {
    OneOfBuilder::new().item(schema).item(ObjectBuilder::new().schema_type(Type::Null)).build().into()
}

fn closed_object() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Object).additional_properties(Some(AdditionalProperties::FreeForm(false)))
}

/// `report.created`, `report.status_changed`, ...
pub fn event_type() -> Object {
    one_of_strings(&svc_core::event::EVENT_TYPES).build()
}

pub fn mascot() -> Object {
    one_of_strings(&svc_core::MASCOTS).build()
}

/// `#rrggbb`
pub fn color() -> Object {
    string().pattern(Some("^#[0-9A-Fa-f]{6}$")).build()
}

/// `^[a-z0-9][a-z0-9_-]{0,39}$`
pub fn channel_key() -> Object {
    string().pattern(Some("^[a-z0-9][a-z0-9_-]{0,39}$")).build()
}

/// The widget's look: every field optional, nothing else allowed; `size` is clamped to 32..64.
pub fn widget_config() -> Object {
    let offset = || number().minimum(Some(-10_000)).maximum(Some(10_000));
    closed_object()
        .property("mascot", mascot())
        .property("shape", one_of_strings(&SHAPES))
        .property("anchor", one_of_strings(&ANCHORS))
        .property("triggerVariant", one_of_strings(&TRIGGER_VARIANTS))
        .property("offsetX", offset())
        .property("offsetY", offset())
        .property("size", number().description(Some("pixels; clamped to 32 to 64")))
        .build()
}

/// Full page URLs as globs: at most 100 non-blank patterns of at most 2,000 characters.
pub fn url_patterns() -> ArrayBuilder {
    ArrayBuilder::new().items(string().pattern(Some(NOT_BLANK)).max_length(Some(2_000))).max_items(Some(100))
}

/// Origins such as `https://app.example.com` or `http://localhost:3000`.
/// A reporter sign-in mode.
pub fn reporter_mode() -> Object {
    one_of_strings(&["off", "email", "oidc"]).build()
}

pub fn allowed_origins() -> ArrayBuilder {
    ArrayBuilder::new().items(string().pattern(Some("^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$"))).max_items(Some(100))
}

/// `[{conditions: [{field, op, value}], weight, note?}]`, decisions §5: `value` is a string, an array
/// of strings for `in`, and ignored for `exists`.
pub fn matchers() -> ArrayBuilder {
    let field_pattern = format!(r"^({}|attr\.[\s\S]{{1,100}})$", MATCHER_FIELDS.join("|"));
    let field = || string().pattern(Some(field_pattern.clone()));
    let text_ops: Vec<&str> = MATCHER_OPS.iter().copied().filter(|op| !matches!(*op, "in" | "exists")).collect();
    let condition = |op: ObjectBuilder, value: Option<Schema>| {
        let mut builder = ObjectBuilder::new().schema_type(Type::Object).property("field", field()).property("op", op);
        builder = builder.required("field").required("op");
        if let Some(value) = value {
            builder = builder.property("value", value).required("value");
        }
        builder.build()
    };
    let conditions = OneOfBuilder::new()
        .item(condition(one_of_strings(&text_ops), Some(string().max_length(Some(2_000)).build().into())))
        .item(condition(one_of_strings(&["in"]), Some(ArrayBuilder::new().items(string()).build().into())))
        .item(condition(one_of_strings(&["exists"]), None));
    let matcher = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("conditions", ArrayBuilder::new().items(conditions).max_items(Some(20)))
        .property("weight", number())
        .property("note", nullable(string().max_length(Some(500))))
        .required("conditions")
        .required("weight");
    ArrayBuilder::new().items(matcher).max_items(Some(50))
}

/// A room's `meta`: `tool`, `source`, `goal`, `url` (strings or null), `constraints` (a string, a
/// list of strings, or null); nothing else. The whole of it may be null.
pub fn room_meta() -> Schema {
    let text = || nullable(string().max_length(Some(10_000)));
    let constraints = OneOfBuilder::new()
        .item(string().max_length(Some(10_000)))
        .item(ArrayBuilder::new().items(string()).max_items(Some(100)))
        .item(ObjectBuilder::new().schema_type(Type::Null));
    nullable(
        closed_object()
            .property("tool", text())
            .property("source", text())
            .property("goal", text())
            .property("url", text())
            .property("constraints", constraints),
    )
}

/// The scopes a key may be minted with through the API (never `*` or `apikey:write`).
pub fn mintable_scopes() -> ArrayBuilder {
    let mintable: Vec<&str> =
        svc_core::scope::PROJECT_SCOPES.iter().copied().filter(|s| *s != svc_core::scope::APIKEY_WRITE).collect();
    ArrayBuilder::new().items(one_of_strings(&mintable)).min_items(Some(1))
}

/// A hint's weight: `suggest`, `max` or a number.
pub fn hint_weight() -> Schema {
    OneOfBuilder::new().item(one_of_strings(&["suggest", "max"])).item(number()).build().into()
}

/// A report status (decisions §3).
pub fn status() -> Object {
    one_of_strings(&svc_core::status::STATUSES).build()
}

/// A report's labels: each 1 to 50 characters once trimmed, at most 20 (compared
/// case-insensitively: a label given twice counts once).
pub fn labels() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(string().pattern(Some(NOT_BLANK)).description(Some("1 to 50 characters once trimmed")))
        .description(Some("at most 20 labels; a label given twice in any case counts once"))
}

/// A list of event types.
pub fn event_types() -> utoipa::openapi::schema::Array {
    ArrayBuilder::new().items(event_type()).build()
}

/// `standard`, `slack` or `discord`.
pub fn webhook_format() -> Object {
    one_of_strings(&["standard", "slack", "discord"]).build()
}

/// `pending`, `delivered` or `failed`.
pub fn delivery_status() -> Object {
    one_of_strings(&["pending", "delivered", "failed"]).build()
}
