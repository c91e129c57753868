//! A project's Channels tab: every channel (archived ones marked) with its colour, mascot, base
//! weight and matchers; creating, editing, archiving and unarchiving one; the matcher editor; the
//! tester (a page URL, a user and attributes in; the channel the widget would choose and why out,
//! computed by `svc_core::routing`, the widget's own rules); and the live hints.
//!
//! Changes go through `service::channels::{create, update}`, the operations behind the REST API.
//! Everything works without the script: the matcher editor adds and removes rows by submitting.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use svc_core::channel::{ChannelChanges, NewChannel};
use svc_core::model::{Channel, HintWeight, Project};
use svc_core::routing::{self, RouteEnv, format_number};
use svc_core::{MASCOTS, time};
use svc_service::permissions::{self, Operation};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::{ServiceError, channels};

/// The fields a condition reads, as the editor offers them (`attr` takes a name).
const FIELD_KINDS: [(&str, &str); 6] = [
    ("url", "URL"),
    ("path", "Path"),
    ("host", "Host"),
    ("userId", "User id"),
    ("locale", "Locale"),
    ("attr", "Attribute"),
];

/// The operators, with what they mean.
const OPS: [(&str, &str); 9] = [
    ("eq", "equals"),
    ("neq", "does not equal"),
    ("contains", "contains"),
    ("prefix", "starts with"),
    ("suffix", "ends with"),
    ("glob", "matches glob"),
    ("regex", "matches regex"),
    ("exists", "is set"),
    ("in", "is one of"),
];

fn op_label(op: &str) -> &'static str {
    OPS.iter().find(|(o, _)| *o == op).map(|(_, label)| *label).unwrap_or("(unknown operator)")
}

// ---------------------------------------------------------------------------------------------
// What the page shows

struct ChannelRow {
    key: String,
    name: String,
    color: String,
    mascot: String,
    base_weight: String,
    archived: bool,
    is_default: bool,
    matchers: Vec<MatcherLine>,
}

/// One matcher as a sentence: "+10 when url contains /checkout (note)".
struct MatcherLine {
    weight: String,
    note: String,
    conditions: Vec<ConditionLine>,
}

struct ConditionLine {
    field: String,
    op: String,
    value: String,
    /// `exists` has no value.
    has_value: bool,
}

/// A stored matcher, read once for the list and the editor.
struct StoredMatcher {
    weight: f64,
    note: String,
    /// (field, op, value as text)
    conditions: Vec<(String, String, String)>,
}

/// The items of a JSON array (none when it is not one).
fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn stored_matchers(matchers: &Value) -> Vec<StoredMatcher> {
    let text = |v: &Value, name: &str| v.get(name).and_then(Value::as_str).unwrap_or("").to_string();
    items(Some(matchers))
        .iter()
        .map(|m| StoredMatcher {
            weight: m.get("weight").and_then(Value::as_f64).unwrap_or(0.0),
            note: text(m, "note"),
            conditions: items(m.get("conditions"))
                .iter()
                .map(|c| (text(c, "field"), text(c, "op"), value_text(c.get("value"))))
                .collect(),
        })
        .collect()
}

fn matcher_lines(matchers: &Value) -> Vec<MatcherLine> {
    stored_matchers(matchers)
        .into_iter()
        .map(|m| MatcherLine {
            weight: signed(m.weight),
            note: m.note,
            conditions: m
                .conditions
                .into_iter()
                .map(|(field, op, value)| ConditionLine {
                    field,
                    has_value: op != "exists",
                    op: op_label(&op).to_string(),
                    value,
                })
                .collect(),
        })
        .collect()
}

/// A condition's value as the editor shows it (`in` lists joined with ", ").
fn value_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::Array(items)) => items.iter().map(routing::js_string).collect::<Vec<_>>().join(", "),
        Some(other) => routing::js_string(other),
    }
}

/// A weight with its sign: "+10", "-2", "+0".
fn signed(n: f64) -> String {
    if n < 0.0 { format_number(n) } else { format!("+{}", format_number(n)) }
}

/// The new-channel form, as submitted (kept when it is refused).
#[derive(Default)]
struct CreateView {
    key: String,
    name: String,
    color: String,
    mascot: String,
    base_weight: String,
    error: Option<String>,
}

/// The edit form of one channel, its matcher editor and its JSON form.
struct EditView {
    key: String,
    name: String,
    color: String,
    mascot: String,
    base_weight: String,
    archived: bool,
    error: Option<String>,
    matchers: Vec<MatcherForm>,
    /// The editor holds changes not saved yet (rows added or removed).
    unsaved: bool,
    matchers_error: Option<String>,
    json: String,
    json_error: Option<String>,
}

#[derive(Clone)]
struct MatcherForm {
    weight: String,
    note: String,
    conditions: Vec<ConditionForm>,
}

#[derive(Clone)]
struct ConditionForm {
    /// One of [`FIELD_KINDS`].
    kind: String,
    /// The attribute's name when `kind` is `attr`.
    attr: String,
    op: String,
    value: String,
}

impl ConditionForm {
    fn blank() -> Self {
        ConditionForm { kind: "url".into(), attr: String::new(), op: "contains".into(), value: String::new() }
    }
}

fn matcher_forms(matchers: &Value) -> Vec<MatcherForm> {
    stored_matchers(matchers)
        .into_iter()
        .map(|m| MatcherForm {
            weight: format_number(m.weight),
            note: m.note,
            conditions: m
                .conditions
                .into_iter()
                .map(|(field, op, value)| {
                    let (kind, attr) = match field.strip_prefix("attr.") {
                        Some(name) => ("attr".to_string(), name.to_string()),
                        None => (field.clone(), String::new()),
                    };
                    ConditionForm { kind, attr, op, value }
                })
                .collect(),
        })
        .collect()
}

/// The editor's rows as matchers (`{conditions, weight, note}`), to be checked by svc-core.
fn matchers_value(forms: &[MatcherForm]) -> Result<Value, String> {
    let mut list = Vec::with_capacity(forms.len());
    for (i, form) in forms.iter().enumerate() {
        let weight: f64 = form
            .weight
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite())
            .ok_or_else(|| format!("Matcher {}: the weight must be a number.", i + 1))?;
        let mut conditions = Vec::with_capacity(form.conditions.len());
        for (j, c) in form.conditions.iter().enumerate() {
            let field = if c.kind == "attr" {
                let name = c.attr.trim();
                if name.is_empty() {
                    return Err(format!("Matcher {}, condition {}: name the attribute.", i + 1, j + 1));
                }
                format!("attr.{name}")
            } else {
                c.kind.clone()
            };
            let mut condition = json!({"field": field, "op": c.op});
            match c.op.as_str() {
                "exists" => {}
                "in" => {
                    let items: Vec<&str> = c.value.split(',').map(str::trim).filter(|item| !item.is_empty()).collect();
                    condition["value"] = json!(items);
                }
                _ => condition["value"] = json!(c.value),
            }
            conditions.push(condition);
        }
        list.push(json!({"conditions": conditions, "weight": weight, "note": form.note}));
    }
    Ok(Value::Array(list))
}

/// svc-core names the place of a mistake as `matchers[0]: conditions[1]: ...`; people count from 1.
fn readable_matcher_error(message: &str) -> String {
    let mut text = message.to_string();
    for (word, label) in [("matchers[", "Matcher "), ("conditions[", "condition ")] {
        while let Some(at) = text.find(word) {
            let start = at + word.len();
            let Some(len) = text[start..].find(']') else { break };
            let Ok(index) = text[start..start + len].parse::<usize>() else { break };
            text.replace_range(at..start + len + 1, &format!("{label}{}", index + 1));
        }
    }
    text.replace(": condition ", ", condition ")
}

struct TesterView {
    url: String,
    user_id: String,
    locale: String,
    attributes: String,
    no_hints: bool,
    /// Set when the form was submitted.
    result: Option<Result<TestOutcome, String>>,
}

struct TestOutcome {
    url: String,
    path: String,
    host: String,
    winner: Option<WinnerView>,
    source: &'static str,
    reason: String,
    scores: Vec<ScoreRow>,
    weights: Vec<WeightRow>,
    archived_left_out: Vec<String>,
}

struct WinnerView {
    key: String,
    name: String,
    color: String,
}

struct ScoreRow {
    key: String,
    name: String,
    color: String,
    base_weight: String,
    hint_weight: Option<String>,
    score: String,
    positive: bool,
    winner: bool,
    matchers: Vec<MatcherCheckView>,
}

struct MatcherCheckView {
    weight: String,
    note: String,
    applies: bool,
    conditions: Vec<ConditionCheckView>,
}

struct ConditionCheckView {
    field: String,
    op: String,
    value: String,
    has_value: bool,
    actual: Option<String>,
    holds: bool,
    problem: Option<String>,
}

struct WeightRow {
    channel_key: String,
    weight: String,
    user: String,
    source: &'static str,
    ignored: Option<&'static str>,
}

struct HintRow {
    channel_key: String,
    weight: String,
    user: String,
    expires: String,
    expires_iso: String,
}

fn weight_text(weight: &HintWeight) -> String {
    match weight {
        HintWeight::Max => "max".into(),
        HintWeight::Suggest => "suggest".into(),
        HintWeight::Number(n) => signed(*n),
    }
}

fn expires_in(at: i64, now: i64) -> String {
    let seconds = ((at - now).max(0) + 999) / 1000;
    if seconds < 60 { format!("in {seconds} s") } else { format!("in {} min", (seconds + 59) / 60) }
}

#[derive(Template)]
#[template(path = "dashboard/project_channels.html")]
struct ChannelsPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    can_write: bool,
    notice: Option<String>,
    channels: Vec<ChannelRow>,
    create: CreateView,
    edit: Option<EditView>,
    tester: TesterView,
    hints: Vec<HintRow>,
    mascots: &'static [&'static str],
    field_kinds: &'static [(&'static str, &'static str)],
    ops: &'static [(&'static str, &'static str)],
}

// ---------------------------------------------------------------------------------------------
// GET

#[derive(Deserialize, Default)]
pub struct ChannelsQuery {
    /// The channel whose edit form is open.
    #[serde(default)]
    edit: String,
    /// What was just done (a notice): `created`, `saved`, `matchers`, `archived`, `unarchived`.
    #[serde(default)]
    done: String,
    #[serde(default)]
    key: String,
    // The tester.
    #[serde(default)]
    url: Option<String>,
    #[serde(default, rename = "userId")]
    user_id: String,
    #[serde(default)]
    locale: String,
    /// The tester's attributes (not `attributes`: a form control of that name hides the form's
    /// own `attributes` property from scripts).
    #[serde(default)]
    attrs: String,
    #[serde(default)]
    nohints: String,
}

/// What a POST that was refused puts back on the page.
#[derive(Default)]
struct Refused {
    create: Option<CreateView>,
    edit: Option<EditView>,
}

/// `GET /projects/{id}/channels`
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    Path(project_id): Path<String>,
    Query(query): Query<ChannelsQuery>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadChannels, "channels").await?;
    respond(&state, &person, opened, &query, Refused::default(), StatusCode::OK).await
}

async fn respond(
    state: &AppState,
    person: &Person,
    opened: OpenedProject,
    query: &ChannelsQuery,
    refused: Refused,
    status: StatusCode,
) -> PageResult<Response> {
    let OpenedProject { principal, project, frame } = opened;
    let can_write = permissions::check(&principal, Operation::ManageChannels, &project).is_ok();
    let store = &state.service;
    let all = channels::list(store, &project.id, true).await?;
    let now = time::now_ms();

    // A notice names a channel only when there is one (a link cannot make the page say anything).
    let notice = all.iter().any(|c| c.key == query.key).then(|| notice(&query.done, &query.key)).flatten();
    let rows = all
        .iter()
        .map(|c| ChannelRow {
            key: c.key.clone(),
            name: c.name.clone(),
            color: c.color.clone(),
            mascot: c.mascot.clone(),
            base_weight: format_number(c.base_weight),
            archived: c.archived,
            is_default: c.key == project.default_channel_key,
            matchers: matcher_lines(&c.matchers),
        })
        .collect();

    let edit = match refused.edit {
        Some(edit) => Some(edit),
        None if can_write && !query.edit.is_empty() => all.iter().find(|c| c.key == query.edit).map(edit_view),
        None => None,
    };

    let hints = channels::live_hints(store, &project.id).await?;
    let hint_rows = hints
        .iter()
        .map(|h| HintRow {
            channel_key: h.channel_key.clone(),
            weight: weight_text(&h.weight),
            user: h.user_id.clone().unwrap_or_default(),
            expires: expires_in(h.expires_at, now),
            expires_iso: time::iso(h.expires_at),
        })
        .collect();

    let tester = tester(store, &project, &all, query).await?;
    let page = ChannelsPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame,
        can_write,
        notice,
        channels: rows,
        create: refused.create.unwrap_or_else(|| CreateView {
            color: "#3e63dd".into(),
            mascot: "fox".into(),
            base_weight: "0".into(),
            ..CreateView::default()
        }),
        edit,
        tester,
        hints: hint_rows,
        mascots: &MASCOTS,
        field_kinds: &FIELD_KINDS,
        ops: &OPS,
    };
    Ok(render(status, &page))
}

fn notice(done: &str, key: &str) -> Option<String> {
    match done {
        "created" => Some(format!("Created the channel {key}. Add matchers below to route reports to it.")),
        "saved" => Some(format!("Saved the channel {key}.")),
        "matchers" => Some(format!("Saved the matchers of {key}.")),
        "archived" => Some(format!("Archived the channel {key}: the widget no longer offers it.")),
        "unarchived" => Some(format!("Unarchived the channel {key}.")),
        _ => None,
    }
}

fn edit_view(channel: &Channel) -> EditView {
    EditView {
        key: channel.key.clone(),
        name: channel.name.clone(),
        color: channel.color.clone(),
        mascot: channel.mascot.clone(),
        base_weight: format_number(channel.base_weight),
        archived: channel.archived,
        error: None,
        matchers: matcher_forms(&channel.matchers),
        unsaved: false,
        matchers_error: None,
        json: serde_json::to_string_pretty(&channel.matchers).unwrap_or_else(|_| "[]".into()),
        json_error: None,
    }
}

/// Runs the tester when its form was submitted (`url` given).
async fn tester(
    store: &svc_service::Service,
    project: &Project,
    all: &[Channel],
    query: &ChannelsQuery,
) -> PageResult<TesterView> {
    let mut view = TesterView {
        url: query.url.clone().unwrap_or_default(),
        user_id: query.user_id.clone(),
        locale: query.locale.clone(),
        attributes: query.attrs.clone(),
        no_hints: !query.nohints.is_empty(),
        result: None,
    };
    let Some(url) = query.url.as_deref() else { return Ok(view) };
    let outcome = (|| {
        let mut env = RouteEnv::for_url(url).map_err(|e| format!("The URL: {e}"))?;
        let user_id = query.user_id.trim();
        env.user_id = (!user_id.is_empty()).then(|| user_id.to_string());
        let locale = query.locale.trim();
        env.locale = (!locale.is_empty()).then(|| locale.to_string());
        env.attributes = parse_attributes(&query.attrs)?;
        Ok::<_, String>(env)
    })();
    let env = match outcome {
        Ok(env) => env,
        Err(message) => {
            view.result = Some(Err(message));
            return Ok(view);
        }
    };
    // The widget knows the non-archived channels (oldest first) and the hints for everyone plus
    // the user's own; the others' hints are listed too, shown as left out (they change nothing).
    let active: Vec<Channel> = all.iter().filter(|c| !c.archived).cloned().collect();
    let hints = if view.no_hints { vec![] } else { channels::live_hints(store, &project.id).await? };
    let explained = routing::explain(&active, &env, &hints, None, Some(&project.default_channel_key));
    let find = |key: &str| active.iter().find(|c| c.key == key);
    let winner = explained.route.key.as_deref().and_then(find).map(|c| WinnerView {
        key: c.key.clone(),
        name: c.name.clone(),
        color: c.color.clone(),
    });
    let scores = explained
        .scores
        .iter()
        .map(|s| {
            let channel = find(&s.key);
            ScoreRow {
                key: s.key.clone(),
                name: channel.map(|c| c.name.clone()).unwrap_or_default(),
                color: channel.map(|c| c.color.clone()).unwrap_or_default(),
                base_weight: format_number(s.base_weight),
                hint_weight: (s.hint_weight != 0.0).then(|| signed(s.hint_weight)),
                score: format_number(s.score),
                positive: s.score > 0.0,
                winner: explained.route.key.as_deref() == Some(s.key.as_str()),
                matchers: s
                    .matchers
                    .iter()
                    .map(|m| MatcherCheckView {
                        weight: signed(m.weight),
                        note: m.note.clone(),
                        applies: m.applies,
                        conditions: m
                            .conditions
                            .iter()
                            .map(|c| ConditionCheckView {
                                field: c.field.clone(),
                                op: op_label(&c.op).to_string(),
                                value: c.value.clone(),
                                has_value: c.op != "exists",
                                actual: c.actual.clone(),
                                holds: c.holds,
                                problem: c.problem.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    let weights = explained
        .weights
        .iter()
        .map(|w| WeightRow {
            channel_key: w.channel_key.clone(),
            weight: weight_text(&w.weight),
            user: w.user_id.clone().unwrap_or_default(),
            source: w.source.as_str(),
            ignored: w.ignored,
        })
        .collect();
    view.result = Some(Ok(TestOutcome {
        url: env.url.clone(),
        path: env.path.clone(),
        host: env.host.clone(),
        winner,
        source: match explained.route.source {
            routing::Source::Rules => "its matchers and base weight",
            routing::Source::Hint => "a hint",
            routing::Source::SetChannel => "setChannel",
            routing::Source::Default => "the default channel",
        },
        reason: explained.reason,
        scores,
        weights,
        archived_left_out: all.iter().filter(|c| c.archived).map(|c| c.key.clone()).collect(),
    }));
    Ok(view)
}

/// The tester's attributes: `name=value` lines (values as text, as `setAttribute(name, "value")`
/// gives them), or a JSON object for other types.
fn parse_attributes(text: &str) -> Result<Map<String, Value>, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err("The attributes: a JSON object such as {\"plan\": \"pro\", \"seats\": 5}.".into()),
        };
    }
    let mut map = Map::new();
    for line in trimmed.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("The attributes: one name=value per line; this line is not: {line}"))?;
        map.insert(name.trim().to_string(), Value::String(value.trim().to_string()));
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------------
// POST: create, edit, archive, matchers

#[derive(Deserialize)]
pub struct NewChannelForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    key: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    color: String,
    #[serde(default)]
    mascot: String,
    #[serde(default)]
    base_weight: String,
}

#[derive(Deserialize)]
pub struct ChannelForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    /// `save`, `archive` or `unarchive`.
    #[serde(default)]
    action: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    color: String,
    #[serde(default)]
    mascot: String,
    #[serde(default)]
    base_weight: String,
}

#[derive(Deserialize)]
pub struct MatchersForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    /// `save`, `save-json`, `add-matcher`, `add-condition-<m>`, `remove-matcher-<m>`,
    /// `remove-condition-<m>-<c>`.
    #[serde(default)]
    action: String,
    #[serde(default)]
    m_weight: Vec<String>,
    #[serde(default)]
    m_note: Vec<String>,
    /// For each condition row, the index of its matcher.
    #[serde(default)]
    c_of: Vec<String>,
    #[serde(default)]
    c_field: Vec<String>,
    #[serde(default)]
    c_attr: Vec<String>,
    #[serde(default)]
    c_op: Vec<String>,
    #[serde(default)]
    c_value: Vec<String>,
    #[serde(default)]
    json: String,
}
super::csrf_forms!(NewChannelForm, ChannelForm, MatchersForm);

/// An empty field is "not given" (0 for a new channel's base weight).
fn parse_weight(text: &str) -> Result<Option<f64>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<f64>().ok().filter(|w| w.is_finite()).map(Some).ok_or_else(|| "baseWeight must be a number".into())
}

/// A refusal a person can fix in the form: shown next to it, with what they typed.
fn fixable(error: &ServiceError) -> Option<String> {
    match error {
        ServiceError::Invalid(message) | ServiceError::Conflict(message) => Some(message.clone()),
        _ => None,
    }
}

fn refused_status(error: &ServiceError) -> StatusCode {
    match error {
        ServiceError::Conflict(_) => StatusCode::CONFLICT,
        _ => StatusCode::BAD_REQUEST,
    }
}

fn back_to(project_id: &str, query: &str) -> Response {
    see_other_local(Some(&format!("/projects/{project_id}/channels?{query}")))
}

fn query_value(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// `POST /projects/{id}/channels`: creates a channel, then opens its editor.
pub async fn create(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<NewChannelForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageChannels, "channels").await?;
    let by = opened.principal.author();
    let key = form.key.trim().to_string();
    let attempt = match parse_weight(&form.base_weight) {
        Ok(weight) => NewChannel::parse(
            key.clone(),
            form.name.trim().to_string(),
            form.color.trim().to_lowercase(),
            form.mascot.clone(),
            weight,
            None,
        )
        .map_err(ServiceError::from),
        Err(message) => Err(ServiceError::Invalid(message)),
    };
    let result = match attempt {
        Ok(new) => channels::create(&state.service, &opened.project, new, &by).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(channel) => {
            let key = query_value(&channel.key);
            Ok(back_to(&opened.project.id, &format!("edit={key}&done=created&key={key}#edit")))
        }
        Err(error) => {
            let Some(message) = fixable(&error) else { return Err(error.into()) };
            let status = refused_status(&error);
            let create = CreateView {
                key,
                name: form.name,
                color: form.color,
                mascot: form.mascot,
                base_weight: form.base_weight,
                error: Some(message),
            };
            let refused = Refused { create: Some(create), edit: None };
            respond(&state, &person, opened, &ChannelsQuery::default(), refused, status).await
        }
    }
}

/// `POST /projects/{id}/channels/{key}`: saves the name, colour, mascot and base weight, or
/// archives or unarchives the channel.
pub async fn update(
    State(state): State<AppState>,
    Path((project_id, key)): Path<(String, String)>,
    Submitted(person, form): Submitted<ChannelForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageChannels, "channels").await?;
    let by = opened.principal.author();
    let (changes, done) = match form.action.as_str() {
        "archive" => (Ok(ChannelChanges { archived: Some(true), ..Default::default() }), "archived"),
        "unarchive" => (Ok(ChannelChanges { archived: Some(false), ..Default::default() }), "unarchived"),
        "save" => {
            let changes = parse_weight(&form.base_weight).map_err(ServiceError::Invalid).and_then(|weight| {
                ChannelChanges::parse(ChannelChanges {
                    name: Some(form.name.trim().to_string()),
                    color: Some(form.color.trim().to_lowercase()),
                    mascot: Some(form.mascot.clone()),
                    base_weight: Some(weight.unwrap_or(0.0)),
                    ..Default::default()
                })
                .map_err(ServiceError::from)
            });
            (changes, "saved")
        }
        other => return Err(PageError::BadRequest(format!("Unknown action {other:?}."))),
    };
    let result = match changes {
        Ok(changes) => channels::update(&state.service, &opened.project, &key, changes, &by).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(channel) => {
            let key = query_value(&channel.key);
            let query = if done == "saved" {
                format!("edit={key}&done=saved&key={key}#edit")
            } else {
                format!("done={done}&key={key}#channel-{key}")
            };
            Ok(back_to(&opened.project.id, &query))
        }
        Err(error) => {
            let Some(message) = fixable(&error) else { return Err(error.into()) };
            let status = refused_status(&error);
            let stored = channels::list(&state.service, &opened.project.id, true).await?;
            let channel = stored
                .iter()
                .find(|c| c.key == key)
                .ok_or_else(|| PageError::NotFound(format!("No channel with key {key}.")))?;
            let mut edit = edit_view(channel);
            edit.name = form.name;
            edit.color = form.color;
            edit.mascot = form.mascot;
            edit.base_weight = form.base_weight;
            edit.error = Some(message);
            let refused = Refused { create: None, edit: Some(edit) };
            respond(&state, &person, opened, &ChannelsQuery::default(), refused, status).await
        }
    }
}

/// The matcher editor's rows from the submitted form (rows are in page order).
fn submitted_matchers(form: &MatchersForm) -> Vec<MatcherForm> {
    let mut matchers: Vec<MatcherForm> = form
        .m_weight
        .iter()
        .enumerate()
        .map(|(i, weight)| MatcherForm {
            weight: weight.clone(),
            note: form.m_note.get(i).cloned().unwrap_or_default(),
            conditions: vec![],
        })
        .collect();
    for (j, of) in form.c_of.iter().enumerate() {
        let Some(matcher) = of.parse::<usize>().ok().and_then(|m| matchers.get_mut(m)) else { continue };
        let at = |list: &Vec<String>| list.get(j).cloned().unwrap_or_default();
        matcher.conditions.push(ConditionForm {
            kind: at(&form.c_field),
            attr: at(&form.c_attr),
            op: at(&form.c_op),
            value: at(&form.c_value),
        });
    }
    matchers
}

/// `POST /projects/{id}/channels/{key}/matchers`: the matcher editor. Adding or removing a row
/// shows the editor again with the change (not saved yet); `save` saves the rows, `save-json`
/// the JSON form.
pub async fn matchers(
    State(state): State<AppState>,
    Path((project_id, key)): Path<(String, String)>,
    Submitted(person, form): Submitted<MatchersForm>,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ManageChannels, "channels").await?;
    let by = opened.principal.author();
    let stored = channels::list(&state.service, &opened.project.id, true).await?;
    let channel = stored
        .iter()
        .find(|c| c.key == key)
        .ok_or_else(|| PageError::NotFound(format!("No channel with key {key}.")))?;
    let mut edit = edit_view(channel);
    let mut rows = submitted_matchers(&form);
    let action = form.action.as_str();

    let to_save = match action {
        "save" => matchers_value(&rows).map_err(|message| (message, false)),
        "save-json" => match serde_json::from_str::<Value>(&form.json) {
            Ok(value) => Ok(value),
            Err(error) => Err((format!("This is not JSON: {error}."), true)),
        },
        _ => {
            let index = |prefix: &str| action.strip_prefix(prefix).and_then(|rest| rest.parse::<usize>().ok());
            if action == "add-matcher" {
                rows.push(MatcherForm {
                    weight: "1".into(),
                    note: String::new(),
                    conditions: vec![ConditionForm::blank()],
                });
            } else if let Some(m) = index("add-condition-") {
                if let Some(matcher) = rows.get_mut(m) {
                    matcher.conditions.push(ConditionForm::blank());
                }
            } else if let Some(m) = index("remove-matcher-") {
                if m < rows.len() {
                    rows.remove(m);
                }
            } else if let Some((m, c)) = action
                .strip_prefix("remove-condition-")
                .and_then(|rest| rest.split_once('-'))
                .and_then(|(m, c)| Some((m.parse::<usize>().ok()?, c.parse::<usize>().ok()?)))
            {
                if let Some(matcher) = rows.get_mut(m)
                    && c < matcher.conditions.len()
                {
                    matcher.conditions.remove(c);
                }
            } else {
                return Err(PageError::BadRequest(format!("Unknown action {action:?}.")));
            }
            edit.matchers = rows;
            edit.unsaved = true;
            let refused = Refused { create: None, edit: Some(edit) };
            return respond(&state, &person, opened, &ChannelsQuery::default(), refused, StatusCode::OK).await;
        }
    };
    let result = match to_save {
        Ok(matchers) => {
            match ChannelChanges::parse(ChannelChanges { matchers: Some(matchers), ..Default::default() }) {
                Ok(changes) => {
                    channels::update(&state.service, &opened.project, &key, changes, &by).await.map_err(|error| {
                        match fixable(&error) {
                            Some(message) => Ok((readable_matcher_error(&message), action == "save-json")),
                            None => Err(error),
                        }
                    })
                }
                Err(invalid) => Err(Ok((readable_matcher_error(&invalid.0), action == "save-json"))),
            }
        }
        Err(refusal) => Err(Ok(refusal)),
    };
    match result {
        Ok(channel) => {
            let key = query_value(&channel.key);
            Ok(back_to(&opened.project.id, &format!("edit={key}&done=matchers&key={key}#matchers")))
        }
        Err(Err(error)) => Err(error.into()),
        Err(Ok((message, from_json))) => {
            if from_json {
                edit.json = form.json.clone();
                edit.json_error = Some(message);
            } else {
                edit.matchers = rows;
                edit.unsaved = true;
                edit.matchers_error = Some(message);
            }
            let refused = Refused { create: None, edit: Some(edit) };
            respond(&state, &person, opened, &ChannelsQuery::default(), refused, StatusCode::BAD_REQUEST).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_errors_count_from_one() {
        assert_eq!(
            readable_matcher_error("matchers[0]: conditions[2]: op must be one of eq"),
            "Matcher 1, condition 3: op must be one of eq"
        );
        assert_eq!(
            readable_matcher_error("matchers[4]: weight must be a number"),
            "Matcher 5: weight must be a number"
        );
        assert_eq!(readable_matcher_error("at most 50 matchers"), "at most 50 matchers");
    }

    #[test]
    fn rows_become_matchers_and_back() {
        let rows = vec![MatcherForm {
            weight: "10".into(),
            note: "checkout".into(),
            conditions: vec![
                ConditionForm {
                    kind: "url".into(),
                    attr: String::new(),
                    op: "contains".into(),
                    value: "/checkout".into(),
                },
                ConditionForm { kind: "attr".into(), attr: "plan".into(), op: "in".into(), value: "pro, team".into() },
                ConditionForm { kind: "userId".into(), attr: String::new(), op: "exists".into(), value: "x".into() },
            ],
        }];
        let value = matchers_value(&rows).unwrap();
        assert_eq!(
            value,
            json!([{"conditions": [{"field": "url", "op": "contains", "value": "/checkout"},
                                   {"field": "attr.plan", "op": "in", "value": ["pro", "team"]},
                                   {"field": "userId", "op": "exists"}], "weight": 10.0, "note": "checkout"}])
        );
        let back = matcher_forms(&value);
        assert_eq!(back[0].conditions[1].kind, "attr");
        assert_eq!(back[0].conditions[1].value, "pro, team");
        assert!(matchers_value(&[MatcherForm { weight: "lots".into(), ..rows[0].clone() }]).is_err());
    }

    #[test]
    fn attributes_are_lines_or_json() {
        let lines = parse_attributes("plan = pro\n\nseats=5").unwrap();
        assert_eq!(lines["plan"], "pro");
        assert_eq!(lines["seats"], "5");
        assert_eq!(parse_attributes("{\"seats\": 5}").unwrap()["seats"], 5);
        assert!(parse_attributes("plan").is_err());
    }
}
