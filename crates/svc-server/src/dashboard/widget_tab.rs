//! A project's widget tab: every `widgetConfig` field with a live preview of the real widget,
//! `urlPatterns` with a "does this URL match?" tester, `allowedOrigins` and the default channel,
//! saved through the same operation (and validation) as the REST PATCH.
//!
//! The preview is the shared bundle (`/v1/svc.js`) started by the dashboard's script with the
//! form's values. Its ingest address is [`preview_router`]'s, which answers the widget's settings
//! requests and refuses reports, so nothing sent from the preview reaches the project (and the
//! preview is never counted as a sighting of the widget).

use askama::Template;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use svc_core::MASCOTS;
use svc_core::project::ProjectChanges;
use svc_core::project::{ANCHORS, SHAPES, TRIGGER_VARIANTS, glob_match, widget_config_with_defaults};
use svc_service::permissions::Operation;

use super::assets::{self, Assets};
use super::error::PageResult;
use super::projects::{self, OpenedProject, ProjectFrame};
use super::redirect::see_other_local;
use super::session::Person;
use super::{Submitted, render};
use crate::ingest::access::PROJECT_KEY_HEADER;
use crate::ingest::widget_config::channel_json;
use crate::state::AppState;
use svc_service::{ServiceError, channels, projects as project_service};

/// Where the preview's ingest requests go (its `apiUrl`).
pub const PREVIEW_API_PATH: &str = "/dashboard/widget-preview";

/// The form's values, as entered (or as stored, on a fresh page).
pub struct WidgetValues {
    pub mascot: String,
    pub shape: String,
    pub anchor: String,
    pub trigger_variant: String,
    pub size: String,
    pub offset_x: String,
    pub offset_y: String,
    pub url_patterns: String,
    pub allowed_origins: String,
    pub default_channel: String,
    pub record_steps: bool,
    pub test_url: String,
}

/// The answer of the URL tester.
pub struct UrlTest {
    pub url: String,
    /// Whether the launcher shows on that URL.
    pub shown: bool,
    /// No patterns: every page.
    pub every_page: bool,
    /// The patterns that match it.
    pub matching: Vec<String>,
}

pub struct ChannelChoice {
    pub key: String,
    pub name: String,
}

#[derive(Template)]
#[template(path = "dashboard/widget.html")]
struct WidgetPage<'a> {
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    frame: ProjectFrame,
    project_key: String,
    values: WidgetValues,
    mascots: &'static [&'static str],
    shapes: &'static [&'static str],
    anchors: &'static [&'static str],
    triggers: &'static [&'static str],
    channels: Vec<ChannelChoice>,
    preview_api: &'static str,
    error: Option<String>,
    saved: bool,
    test: Option<UrlTest>,
}

fn number_text(value: Option<&Value>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn stored_values(project: &svc_core::model::Project) -> WidgetValues {
    let config = widget_config_with_defaults(&project.widget_config);
    let text = |field: &str| config.get(field).and_then(Value::as_str).unwrap_or_default().to_string();
    WidgetValues {
        mascot: text("mascot"),
        shape: text("shape"),
        anchor: text("anchor"),
        trigger_variant: text("triggerVariant"),
        size: number_text(config.get("size")),
        offset_x: number_text(config.get("offsetX")),
        offset_y: number_text(config.get("offsetY")),
        url_patterns: project.url_patterns.join("\n"),
        allowed_origins: project.allowed_origins.join("\n"),
        default_channel: project.default_channel_key.clone(),
        record_steps: config.get("recordSteps") != Some(&Value::Bool(false)),
        test_url: String::new(),
    }
}

/// One entry per non-empty line, trimmed.
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|line| !line.is_empty()).map(String::from).collect()
}

/// Whether the widget shows its launcher on `url` under `patterns`: the widget's own rule
/// (`widget/src/glob.ts`, decisions §5): no patterns means every page, else any glob matches.
pub fn test_url(patterns: &[String], url: &str) -> UrlTest {
    let matching: Vec<String> = patterns.iter().filter(|pattern| glob_match(pattern, url)).cloned().collect();
    UrlTest {
        url: url.to_string(),
        shown: patterns.is_empty() || !matching.is_empty(),
        every_page: patterns.is_empty(),
        matching,
    }
}

async fn page<'a>(
    state: &AppState,
    person: &'a Person,
    opened: OpenedProject,
    values: WidgetValues,
    error: Option<String>,
    saved: bool,
    test: Option<UrlTest>,
) -> PageResult<WidgetPage<'a>> {
    let mut channels: Vec<ChannelChoice> = channels::list(&state.service, &opened.project.id, false)
        .await?
        .iter()
        .map(|channel| ChannelChoice { key: channel.key.clone(), name: channel.name.clone() })
        .collect();
    // A default channel that was archived since stays selectable as what is stored.
    if !values.default_channel.is_empty() && !channels.iter().any(|c| c.key == values.default_channel) {
        channels.push(ChannelChoice {
            key: values.default_channel.clone(),
            name: format!("{} (archived or missing)", values.default_channel),
        });
    }
    Ok(WidgetPage {
        assets: assets::get(),
        section: "projects",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        frame: opened.frame,
        project_key: opened.project.project_key,
        values,
        mascots: &MASCOTS,
        shapes: &SHAPES,
        anchors: &ANCHORS,
        triggers: &TRIGGER_VARIANTS,
        channels,
        preview_api: PREVIEW_API_PATH,
        error,
        saved,
        test,
    })
}

#[derive(Deserialize, Default)]
pub struct WidgetQuery {
    #[serde(default)]
    saved: String,
}

/// `GET /projects/{id}/widget`
pub async fn show(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Query(query): Query<WidgetQuery>,
    person: Person,
) -> PageResult<Response> {
    let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "widget").await?;
    let values = stored_values(&opened.project);
    let page = page(&state, &person, opened, values, None, query.saved == "1", None).await?;
    Ok(render(StatusCode::OK, &page))
}

#[derive(Deserialize)]
pub struct WidgetForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    /// `save`, or `test` (the URL tester: nothing is saved).
    #[serde(default)]
    action: String,
    #[serde(default)]
    mascot: String,
    #[serde(default)]
    shape: String,
    #[serde(default)]
    anchor: String,
    #[serde(default, rename = "triggerVariant")]
    trigger_variant: String,
    #[serde(default)]
    size: String,
    #[serde(default, rename = "offsetX")]
    offset_x: String,
    #[serde(default, rename = "offsetY")]
    offset_y: String,
    #[serde(default, rename = "urlPatterns")]
    url_patterns: String,
    #[serde(default, rename = "allowedOrigins")]
    allowed_origins: String,
    #[serde(default, rename = "defaultChannelKey")]
    default_channel: String,
    #[serde(default, rename = "recordSteps")]
    record_steps: String,
    #[serde(default, rename = "testUrl")]
    test_url: String,
}
super::csrf_forms!(WidgetForm);

impl WidgetForm {
    fn values(self) -> WidgetValues {
        WidgetValues {
            mascot: self.mascot,
            shape: self.shape,
            anchor: self.anchor,
            trigger_variant: self.trigger_variant,
            size: self.size,
            offset_x: self.offset_x,
            offset_y: self.offset_y,
            url_patterns: self.url_patterns,
            allowed_origins: self.allowed_origins,
            default_channel: self.default_channel,
            record_steps: !self.record_steps.is_empty(),
            test_url: self.test_url,
        }
    }
}

/// The form as the changes a REST PATCH would carry (the whole `widgetConfig`, the lists, the
/// default channel), checked by the same rules.
fn changes(values: &WidgetValues) -> Result<ProjectChanges, String> {
    let mut config = Map::new();
    for (field, text) in [
        ("mascot", &values.mascot),
        ("shape", &values.shape),
        ("anchor", &values.anchor),
        ("triggerVariant", &values.trigger_variant),
    ] {
        if !text.is_empty() {
            config.insert(field.into(), json!(text));
        }
    }
    for (field, text) in [("size", &values.size), ("offsetX", &values.offset_x), ("offsetY", &values.offset_y)] {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let number = text
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| format!("widgetConfig.{field} must be a number"))?;
        let value = if number.fract() == 0.0 && number.abs() < 1e15 { json!(number as i64) } else { json!(number) };
        config.insert(field.into(), value);
    }
    // On is the default, so only off is stored.
    if !values.record_steps {
        config.insert("recordSteps".into(), json!(false));
    }
    let changes = ProjectChanges {
        url_patterns: Some(lines(&values.url_patterns)),
        allowed_origins: Some(lines(&values.allowed_origins)),
        default_channel_key: Some(values.default_channel.trim().to_string()).filter(|key| !key.is_empty()),
        widget_config: Some(Value::Object(config)),
        ..ProjectChanges::default()
    };
    ProjectChanges::parse(changes).map_err(|invalid| invalid.0)
}

/// `POST /projects/{id}/widget`: saves (owners), or tests a URL against the entered patterns.
/// A refused change shows the page again with the message and everything as entered.
pub async fn update(
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Submitted(person, form): Submitted<WidgetForm>,
) -> PageResult<Response> {
    if form.action == "test" {
        let opened = projects::open(&state, &person, &project_id, Operation::ReadProject, "widget").await?;
        let values = form.values();
        let test = test_url(&lines(&values.url_patterns), values.test_url.trim());
        let page = page(&state, &person, opened, values, None, false, Some(test)).await?;
        return Ok(render(StatusCode::OK, &page));
    }
    let opened = projects::open(&state, &person, &project_id, Operation::ConfigureProject, "widget").await?;
    let values = form.values();
    let outcome = match changes(&values) {
        Ok(changes) => {
            let by = opened.principal.author();
            project_service::update_project(&state.service, opened.project.clone(), changes, &by).await.map(|_| ())
        }
        Err(message) => Err(ServiceError::Invalid(message)),
    };
    match outcome {
        Ok(()) => Ok(see_other_local(Some(&format!("/projects/{}/widget?saved=1", opened.project.id)))),
        Err(ServiceError::Invalid(message)) => {
            let page = page(&state, &person, opened, values, Some(message), false, None).await?;
            Ok(render(StatusCode::BAD_REQUEST, &page))
        }
        Err(other) => Err(other.into()),
    }
}

/// The preview's ingest: the project's channels and default settings for the widget to draw,
/// and a refusal for anything it would send, so the preview can never file a report.
pub fn preview_router() -> axum::Router<AppState> {
    axum::Router::new()
        .route(&format!("{PREVIEW_API_PATH}/ingest/config"), get(preview_config))
        .route(&format!("{PREVIEW_API_PATH}/ingest/channels"), get(preview_channels))
        .route(&format!("{PREVIEW_API_PATH}/ingest/flags/{{key}}"), get(preview_flag))
        .route(&format!("{PREVIEW_API_PATH}/ingest/report"), post(preview_refused))
        .route(&format!("{PREVIEW_API_PATH}/ingest/blob"), post(preview_refused))
}

async fn preview_project(state: &AppState, headers: &HeaderMap) -> Option<std::sync::Arc<svc_core::model::Project>> {
    let key = headers.get(PROJECT_KEY_HEADER)?.to_str().ok()?;
    project_service::by_public_key(&state.service, key).await.ok().flatten()
}

/// Settings for the preview: no URL patterns (it shows on the dashboard's page), no hints, and
/// the appearance left to the form's values.
async fn preview_config(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    let default_channel = preview_project(&state, &headers).await.map(|p| p.default_channel_key.clone());
    Json(json!({
        "widgetConfig": {},
        "hints": [],
        "limits": state.config.limits.to_json(),
        "urlPatterns": [],
        "defaultChannelKey": default_channel,
    }))
}

async fn preview_channels(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    let Some(project) = preview_project(&state, &headers).await else {
        return Json(json!({"defaultChannelKey": null, "channels": []}));
    };
    let listed = channels::list(&state.service, &project.id, false).await.unwrap_or_default();
    Json(json!({
        "defaultChannelKey": project.default_channel_key,
        "channels": listed.iter().map(channel_json).collect::<Vec<_>>(),
    }))
}

async fn preview_flag() -> Json<Value> {
    Json(json!({"enabled": false}))
}

/// What the preview would send is refused: the panel says "Could not send the report
/// (preview_only)".
async fn preview_refused() -> Response {
    (StatusCode::FORBIDDEN, Json(json!({"error": "preview_only"}))).into_response()
}
