//! The seven tools. Each answers a tool result; a bad argument or an unreachable report is an
//! `isError` result naming the problem, never a protocol error.

use serde_json::{Map, Value, json};
use svc_core::key::AgentLabel;
use svc_core::markdown::{ONE_LINE_MAX_CHARS, one_line};
use svc_core::model::{Comment, Project, Report, ReportFilter, RoomChanges};
use svc_core::room::NewRoom;
use svc_core::status::NewComment;
use svc_core::{ids, time};

use super::arguments::Args;
use super::inputs;
use super::markdown::{self, Parts};
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::reports::{self, Filed, Filing, FilingError};
use svc_service::{comments, keys, rooms, triage};

/// Who is calling and what they can reach: one project, or every project of an organization.
pub struct Caller {
    pub principal: Principal,
    pub projects: Vec<Project>,
}

impl Caller {
    pub fn org_wide(&self) -> bool {
        self.principal.org_wide()
    }
    pub fn project_ids(&self) -> Vec<String> {
        self.projects.iter().map(|p| p.id.clone()).collect()
    }
    pub fn project(&self, id: &str) -> Option<&Project> {
        self.projects.iter().find(|p| p.id == id)
    }
    fn viewer(&self) -> String {
        self.principal.viewer()
    }
}

/// A tool's answer.
pub struct ToolResult {
    pub content: Vec<Value>,
    pub is_error: bool,
}

impl ToolResult {
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult { content: vec![json!({"type": "text", "text": text.into()})], is_error: false }
    }
    pub fn json(value: &Value) -> Self {
        Self::text(serde_json::to_string_pretty(value).unwrap_or_default())
    }
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult { content: vec![json!({"type": "text", "text": text.into()})], is_error: true }
    }
    pub fn to_json(&self) -> Value {
        json!({"content": self.content, "isError": self.is_error})
    }
}

type Outcome = Result<ToolResult, ToolResult>;

pub async fn call(state: &AppState, caller: &Caller, tool: &str, arguments: &Map<String, Value>) -> ToolResult {
    let args = match Args::parse(tool, arguments) {
        Ok(args) => args,
        Err(error) => return error,
    };
    let outcome = match tool {
        "introduce" => match args.typed() {
            Ok(args) => introduce(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "list_reports" => match args.typed() {
            Ok(args) => list_reports(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "get_report" => match args.typed() {
            Ok(args) => get_report(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "create_report" => match args.typed() {
            Ok(args) => create_report(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "create_room" => match args.typed() {
            Ok(args) => create_room(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "set_status" => match args.typed() {
            Ok(args) => set_status(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        "add_comment" => match args.typed() {
            Ok(args) => add_comment(state, caller, args).await,
            Err(refused) => Err(refused),
        },
        other => Err(ToolResult::error(format!("unknown tool {other}"))),
    };
    outcome.unwrap_or_else(|error| error)
}

/// A command svc-core refused: its message names the argument.
fn invalid(error: svc_core::Invalid) -> ToolResult {
    ToolResult::error(format!("argument {error}"))
}

fn internal(error: impl std::fmt::Display) -> ToolResult {
    tracing::error!(%error, "tool endpoint internal error");
    ToolResult::error("internal error: the report store could not answer; try again")
}

async fn introduce(state: &AppState, caller: &Caller, args: inputs::Introduce) -> Outcome {
    let owner = args.owner.as_ref().map(|owner| owner.0.as_str());
    let label = AgentLabel::parse(&args.agent_name.0, owner).map_err(invalid)?;
    keys::introduce(&state.service, &caller.principal, &label).await.map_err(internal)?;
    let owner_note = label.owner.as_ref().map(|o| format!(" (run by {o})")).unwrap_or_default();
    Ok(ToolResult::text(format!(
        "Hello, {}{owner_note}. Reports you file and reports you view are now shown under this name.",
        label.name
    )))
}

/// The compact form of a report (plus `project`/`projectId` for organization-wide callers).
fn compact(report: &Report, caller: &Caller) -> Value {
    let mut item = json!({
        "id": report.id,
        "shortId": ids::short_id(&report.id),
        "title": report.title,
        "status": report.status,
        "channelKey": report.channel_key,
        "url": report.url,
        "artifactId": report.artifact_id,
        "createdAt": time::iso(report.created_at),
    });
    if caller.org_wide() {
        item["project"] = caller.project(&report.project_id).map(|p| p.name.clone()).into();
        item["projectId"] = report.project_id.clone().into();
    }
    item
}

/// Records that the caller saw these reports (written off the request path).
fn mark_viewed(state: &AppState, caller: &Caller, report_ids: Vec<String>) {
    state.usage.record_views(report_ids, &caller.viewer(), time::now_ms());
}

async fn list_reports(state: &AppState, caller: &Caller, args: inputs::ListReports) -> Outcome {
    let filter = ReportFilter {
        project_ids: caller.project_ids(),
        status: args.status.map(|status| status.0),
        channel_key: args.channel_key.map(|key| key.0),
        artifact_id: args.artifact_id.map(|id| id.0),
        before: None,
        limit: args.limit.0,
        ..ReportFilter::default()
    };
    let page = reports::list_page(&state.service, filter).await.map_err(internal)?;
    let items: Vec<Value> = page.items.iter().map(|r| compact(r, caller)).collect();
    mark_viewed(state, caller, page.items.into_iter().map(|r| r.id).collect());
    Ok(ToolResult::text(serde_json::to_string(&items).unwrap_or_default()))
}

/// A report in the caller's reach by full id or unique shortId.
async fn find_report(state: &AppState, caller: &Caller, argument: &str, reference: &str) -> Result<Report, ToolResult> {
    let reference = reference.trim().to_ascii_lowercase();
    let not_found = || {
        ToolResult::error(format!(
            "no report {reference} in your reach ({argument}): it does not exist or belongs to a project this key cannot see"
        ))
    };
    if ids::is_object_id(&reference) {
        return reports::get_in(&state.service, &caller.project_ids(), &reference)
            .await
            .map_err(internal)?
            .ok_or_else(not_found);
    }
    if !ids::is_short_id(&reference) {
        return Err(ToolResult::error(format!(
            "argument {argument} must be a report id (24 hex characters) or its 6-character shortId, not {reference:?}"
        )));
    }
    let mut found =
        reports::find_by_short_id(&state.service, &caller.project_ids(), &reference, 10).await.map_err(internal)?;
    match found.len() {
        0 => Err(not_found()),
        1 => Ok(found.remove(0)),
        _ => Err(ToolResult::error(format!(
            "shortId {reference} is ambiguous; use the full id of one of: {}",
            // Titles are the reporters' words: one line each, so they cannot add lines to the answer.
            found
                .iter()
                .map(|r| format!("{} ({})", r.id, one_line(&r.title, ONE_LINE_MAX_CHARS)))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

async fn get_report(state: &AppState, caller: &Caller, args: inputs::GetReport) -> Outcome {
    let report = find_report(state, caller, "id", &args.id.0).await?;
    let content = report_document(state, caller, &report, true).await.map_err(internal)?;
    Ok(ToolResult { content, is_error: false })
}

/// A report as `get_report` shows it (with its screenshots as images when `images`), marked
/// viewed by the caller.
pub async fn report_document(
    state: &AppState,
    caller: &Caller,
    report: &Report,
    images: bool,
) -> svc_service::ServiceResult<Vec<Value>> {
    let comments = comments::list(&state.service, report).await?;
    let history = reports::history(&state.service, report).await?;
    // The project is news only to a key that reaches several.
    let project = caller.project(&report.project_id).filter(|_| caller.org_wide());
    let parts = Parts { project, comments: &comments, history: &history, images, similar: true };
    let content = markdown::render(state, report, parts).await;
    mark_viewed(state, caller, vec![report.id.clone()]);
    Ok(content)
}

/// The project a write goes to: the key's own, or for organization-wide keys the `project` argument.
fn target_project<'a>(caller: &'a Caller, reference: Option<&str>) -> Result<&'a Project, ToolResult> {
    if !caller.org_wide() {
        return caller.projects.first().ok_or_else(|| ToolResult::error("the key's project no longer exists"));
    }
    let reference = reference.ok_or_else(|| {
        ToolResult::error(format!(
            "argument project is required with an organization-wide key: one of {}",
            caller.projects.iter().map(|p| p.slug.as_str()).collect::<Vec<_>>().join(", ")
        ))
    })?;
    caller
        .projects
        .iter()
        .find(|p| p.id == reference || p.project_key == reference || p.slug == reference)
        .or_else(|| caller.projects.iter().find(|p| p.name == reference))
        .ok_or_else(|| ToolResult::error(format!("argument project: no project {reference:?} in your organization")))
}

async fn create_report(state: &AppState, caller: &Caller, args: inputs::CreateReport) -> Outcome {
    let message = args.message.0.as_str();
    let channel_key = args.channel_key.as_ref().map(|key| key.0.as_str());
    let url = args.url.as_ref().map(|url| url.0.as_str());
    let note = args.author.as_ref().map(|note| note.0.as_str());
    let project = target_project(caller, args.project.as_ref().map(|p| p.0.as_str()))?;
    let mut extra = Map::new();
    extra.insert("via".into(), "mcp".into());
    if let Some(note) = note {
        extra.insert("author".into(), note.into());
    }
    let context = svc_core::context::Context { url: url.map(String::from), extra: Some(extra), ..Default::default() };
    let submission = svc_core::ingest::Submission {
        blocks: vec![svc_core::block::Block::text(message)],
        channel_key: channel_key.map(String::from),
        context,
    };
    // The same checks as a report from the widget.
    svc_core::ingest::check_submission(&submission, &state.config.limits).map_err(|rejection| {
        let argument =
            if matches!(rejection, svc_core::ingest::Rejection::Context(_)) { "url or author" } else { "message" };
        ToolResult::error(format!("argument {argument}: {}", rejection.message()))
    })?;
    let filing = Filing {
        project,
        submission,
        author: caller.principal.author(),
        identity: None,
        identity_error: None,
        idempotency_key: None,
    };
    match reports::file(&state.service, filing).await {
        Ok(Filed::Created(report)) => {
            state.metrics.report_created();
            Ok(ToolResult::json(&compact(&report, caller)))
        }
        Ok(Filed::Repeat(id)) => Err(internal(format!("unexpected idempotent repeat {id}"))),
        Err(FilingError::ChannelInvalid) => Err(ToolResult::error(format!(
            "argument channelKey: no channel {:?} and the project's default channel is archived",
            channel_key.unwrap_or_default()
        ))),
        Err(FilingError::Store(error)) => Err(internal(error)),
        Err(other) => Err(internal(format!("{other:?}"))),
    }
}

async fn create_room(state: &AppState, caller: &Caller, args: inputs::CreateRoom) -> Outcome {
    let artifact_id = args.artifact_id.0.as_str();
    let goal = args.goal.map(|goal| goal.0);
    // The same rules as REST: a title of 1 to 200 characters, an artifact id of 1 to 200.
    let changes = RoomChanges::parse(args.title.map(|title| title.0), None, None).map_err(invalid)?;
    let mut room = NewRoom::parse(artifact_id.to_string(), changes)
        .map_err(|e| ToolResult::error(format!("argument artifact_id: {e}")))?;
    let project = target_project(caller, args.project.as_ref().map(|p| p.0.as_str()))?;
    if let Some(goal) = goal {
        // Keep what the room's meta already says; the goal is added or replaced.
        let existing = rooms::get(&state.service, &project.id, artifact_id).await.map_err(internal)?;
        let mut meta = existing.and_then(|r| r.meta).unwrap_or_else(|| json!({}));
        meta["goal"] = goal.into();
        room.changes.meta = Some(Some(meta));
    }
    let outcome = rooms::upsert(&state.service, &caller.principal, project, room).await.map_err(internal)?;
    let room = &outcome.room;
    let mut answer = json!({"id": room.id, "artifactId": room.artifact_id, "title": room.title, "meta": room.meta,
        "archived": room.archived, "created": outcome.created});
    if caller.org_wide() {
        answer["project"] = project.name.clone().into();
        answer["projectId"] = project.id.clone().into();
    }
    Ok(ToolResult::json(&answer))
}

async fn set_status(state: &AppState, caller: &Caller, args: inputs::SetStatus) -> Outcome {
    let new_status = args.status.0;
    let report = find_report(state, caller, "id", &args.id.0).await?;
    let project = caller.project(&report.project_id).ok_or_else(|| internal("the report's project is out of reach"))?;
    triage::set_status(&state.service, &caller.principal, project, &report, new_status).await.map_err(internal)?;
    Ok(ToolResult::json(&json!({"id": report.id, "status": new_status})))
}

async fn add_comment(state: &AppState, caller: &Caller, args: inputs::AddComment) -> Outcome {
    let kind = args.kind.as_ref().map(|kind| kind.0.as_str());
    let new = NewComment::parse(&args.text.0, kind, args.draft).map_err(invalid)?;
    let report = find_report(state, caller, "report_id", &args.report_id.0).await?;
    let project = caller.project(&report.project_id).ok_or_else(|| internal("the report's project is out of reach"))?;
    let comment = comments::add(&state.service, &caller.principal, project, &report, new).await.map_err(internal)?;
    Ok(ToolResult::json(&comment_json(&comment)))
}

pub fn comment_json(c: &Comment) -> Value {
    json!({
        "id": c.id, "reportId": c.report_id, "author": c.author.id, "authorLabel": c.author.label,
        "text": c.text, "kind": c.kind, "draft": c.draft, "createdAt": time::iso(c.created_at),
        "publishedAt": time::iso_opt(c.published_at),
    })
}
