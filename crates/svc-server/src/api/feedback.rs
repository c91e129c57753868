//! Reports: `GET .../feedback` (paged list), `GET`/`PATCH .../feedback/:reportId`, and comments.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use svc_service::permissions::Operation;

use super::extract::{ApiCaller, ApiPath, ApiQuery, JsonBody};
use super::query::FeedbackQuery;
use super::views::{CommentList, ListedPage, ListedReportView, ReportPage, ReportPatch, ReportPatchView, ReportView};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use svc_service::{comments, duplicates, reports, triage};

/// Reports newest first. `limit` (default 20, over 100 is cut to 100), filters `channelKey`,
/// `status`, `artifactId`, `assignee`, `label`, `reporter` (any string; unknown values give an
/// empty list), `search` (full text), `before` (a report id: the cursor).
#[utoipa::path(get, path = "/projects/{projectId}/feedback", tag = "reports", security(("bearer" = [])),
    params(("projectId" = String, Path), FeedbackQuery),
    responses((status = 200, body = ReportPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_feedback(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath(project_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<FeedbackQuery>,
) -> ApiResult<Response> {
    let project = key.project(&project_id, Operation::ReadReports)?;
    let filter = query.filter(project.id)?;
    let page = reports::list_page_text(&state.service, filter).await?;
    let view = ListedPage {
        items: page.items.iter().map(ListedReportView::from).collect(),
        next_cursor: page.next_cursor.as_deref(),
    };
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], view.to_json()).into_response())
}

async fn load_report(
    state: &AppState,
    key: &ApiCaller,
    project_id: &str,
    report_id: &str,
    op: Operation,
) -> ApiResult<svc_core::model::Report> {
    let project = key.project(project_id, op)?;
    report_in(state, &project, report_id).await
}

pub(crate) async fn report_in(
    state: &AppState,
    project: &svc_core::model::Project,
    report_id: &str,
) -> ApiResult<svc_core::model::Report> {
    reports::get_in(&state.service, std::slice::from_ref(&project.id), report_id)
        .await?
        .ok_or_else(|| ApiError::not_found("report not found in this project"))
}

/// One report with its blocks, context, identity, `statusHistory` and `links` (its issues).
#[utoipa::path(get, path = "/projects/{projectId}/feedback/{reportId}", tag = "reports", security(("bearer" = [])),
    params(("projectId" = String, Path), ("reportId" = String, Path)),
    responses((status = 200, body = ReportView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_feedback(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, report_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<ReportView>> {
    let report = load_report(&state, &key, &project_id, &report_id, Operation::ReadReports).await?;
    let history = reports::history(&state.service, &report).await?;
    let links = svc_service::trackers::links(&state.service, std::slice::from_ref(&report.id)).await?;
    let mut view = ReportView::from(&report);
    view.status_history = Some(history.iter().map(Into::into).collect());
    view.links = Some(links.iter().map(Into::into).collect());
    let duplication = duplicates::of(&state.service, &report).await?;
    view.duplicate_of = Some(duplication.duplicate_of);
    view.duplicates = Some(duplication.duplicates);
    Ok(Json(view))
}

/// Sets the status (`new`, `triaged`, `in-progress`, `fixed`, `verified` or `canceled`), replaces
/// the labels, assigns the report to a member of the organization (or unassigns it with null), in
/// any combination.
#[utoipa::path(patch, path = "/projects/{projectId}/feedback/{reportId}", tag = "reports", security(("bearer" = [])),
    params(("projectId" = String, Path), ("reportId" = String, Path)),
    request_body = ReportPatch,
    responses((status = 200, body = ReportPatchView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn patch_feedback(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, report_id)): ApiPath<(String, String)>,
    body: JsonBody,
) -> ApiResult<Json<ReportPatchView>> {
    let project = key.project(&project_id, Operation::Triage)?;
    let report = report_in(&state, &project, &report_id).await?;
    // One operation: status, labels, assignee and the duplicate mark change together or not at all.
    let patch = body.parse::<ReportPatch>()?;
    let duplicate_of = patch.duplicate_of.clone();
    let changes = patch.triage()?;
    let assignee = changes.assignee.clone();
    let (triaged, duplicate_of) = match duplicate_of {
        Some(Some(original_id)) => {
            let original = report_in(&state, &project, &original_id).await?;
            let (original, triaged) =
                duplicates::mark(&state.service, &key.0, &project, &report, &original, changes).await?;
            (triaged, Some(Some(original.id)))
        }
        Some(None) => (duplicates::unmark(&state.service, &key.0, &project, &report, changes).await?, Some(None)),
        None => {
            let project = std::slice::from_ref(&project);
            (triage::triage(&state.service, &key.0, project, std::slice::from_ref(&report), changes).await?, None)
        }
    };
    let done = triaged.into_iter().next();
    let status = done.as_ref().and_then(|d| d.status_change.as_ref()).map_or(report.status, |c| c.to_status);
    let labels = done.and_then(|d| d.labels);
    Ok(Json(ReportPatchView { id: report.id, status: status.as_str().into(), labels, assignee, duplicate_of }))
}

/// The report's comments, oldest first, drafts included (`draft: true`).
#[utoipa::path(get, path = "/projects/{projectId}/feedback/{reportId}/comments", tag = "reports", security(("bearer" = [])),
    params(("projectId" = String, Path), ("reportId" = String, Path)),
    responses((status = 200, body = CommentList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_comments(
    State(state): State<AppState>,
    key: ApiCaller,
    ApiPath((project_id, report_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<CommentList>> {
    let report = load_report(&state, &key, &project_id, &report_id, Operation::ReadReports).await?;
    let comments = comments::list(&state.service, &report).await?;
    Ok(Json(CommentList { items: comments.iter().map(Into::into).collect() }))
}
