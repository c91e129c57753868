//! Export: the inbox's current filtered list as JSON lines (each line the REST API's report JSON)
//! or CSV, streamed page by page; one report as the Markdown document agents get.

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use svc_core::model::{Project, Report, ReportFilter};

use super::error::{PageError, PageResult};
use super::inbox::InboxQuery;
use super::session::Person;
use crate::api::views::ListedReportView;
use crate::state::AppState;
use svc_service::{comments, projects, reports};

/// Reports per store page while exporting.
const EXPORT_PAGE: u32 = 500;
/// The most one export carries; the rest needs a narrower filter.
pub const EXPORT_MAX: usize = 100_000;

const CSV_HEADER: &str = "id,shortId,project,status,channel,title,reporter,url,room,issue,createdAt,updatedAt\r\n";

/// One CSV cell, as OWASP's CSV injection guidance asks: always quoted (with inner quotes doubled),
/// so a spreadsheet that splits on `;` or tab still reads it as one cell, and a leading `=`, `+`,
/// `-`, `@`, tab or carriage return gets a `'` first, so no reporter's text runs as a formula.
fn csv_cell(value: &str) -> String {
    let neutral = if value.starts_with(['=', '+', '-', '@', '\t', '\r']) { "'" } else { "" };
    format!("\"{neutral}{}\"", value.replace('"', "\"\""))
}

fn csv_line(report: &svc_core::model::Report, project: &str, issue: &str) -> String {
    let reporter = super::view::reporter(report).name;
    let cells = [
        report.id.as_str(),
        svc_core::ids::short_id(&report.id),
        project,
        report.status.as_str(),
        &report.channel_key,
        &report.title,
        &reporter,
        report.url.as_deref().unwrap_or_default(),
        report.artifact_id.as_deref().unwrap_or_default(),
        issue,
        &svc_core::time::iso(report.created_at),
        &svc_core::time::iso(report.updated_at),
    ];
    let mut line = cells.iter().map(|cell| csv_cell(cell)).collect::<Vec<_>>().join(",");
    line.push_str("\r\n");
    line
}

/// `GET /export?format=jsonl|csv&<inbox filters>`
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(query): Query<InboxQuery>,
) -> PageResult<Response> {
    let csv = match query.format.as_str() {
        "csv" => true,
        "jsonl" => false,
        _ => return Err(PageError::BadRequest("Choose an export format: jsonl or csv.".into())),
    };
    let projects = projects::reachable(&state.service, &person.principal()).await?;
    let names: Vec<(String, String)> = projects.iter().map(|p| (p.id.clone(), p.name.clone())).collect();
    let filter = query.filter(&projects, &person.signed_in.user.id, EXPORT_PAGE);
    let start = if csv { Some(CSV_HEADER.to_string()) } else { None };
    let store = state.service.clone();
    // Pages are read as the body is sent, so a large export never sits in memory whole.
    let pages = futures_util::stream::unfold(Some((filter, 0usize)), move |cursor| {
        let store = store.clone();
        let names = names.clone();
        async move {
            let (mut filter, sent): (ReportFilter, usize) = cursor?;
            if sent >= EXPORT_MAX {
                return None;
            }
            let chunk = if csv {
                let page = match reports::list_page(&*store, filter.clone()).await {
                    Ok(page) => page,
                    Err(error) => return Some((Err(std::io::Error::other(error.to_string())), None)),
                };
                let ids: Vec<String> = page.items.iter().map(|r| r.id.clone()).collect();
                let links = match svc_service::trackers::links(&store, &ids).await {
                    Ok(links) => links,
                    Err(error) => return Some((Err(std::io::Error::other(error.to_string())), None)),
                };
                let text: String = page
                    .items
                    .iter()
                    .map(|r| {
                        let project = names.iter().find(|(id, _)| *id == r.project_id).map_or("", |(_, n)| n.as_str());
                        let issue =
                            links.iter().find(|link| link.report_id == r.id).map_or("", |link| link.url.as_str());
                        csv_line(r, project, issue)
                    })
                    .collect();
                let next = page.next_cursor.map(|cursor| {
                    filter.before = Some(cursor);
                    (filter, sent + page.items.len())
                });
                return Some((Ok(text), next));
            } else {
                match reports::list_page_text(&*store, filter.clone()).await {
                    Ok(page) => {
                        let mut lines = Vec::new();
                        for report in &page.items {
                            ListedReportView::from(report).write_json(&mut lines);
                            lines.push(b'\n');
                        }
                        // Serialized strings and stored JSON text: UTF-8 throughout.
                        let text = String::from_utf8(lines).expect("JSON text is UTF-8");
                        let next = page.next_cursor.map(|cursor| {
                            filter.before = Some(cursor);
                            (filter, sent + page.items.len())
                        });
                        (text, next)
                    }
                    Err(error) => return Some((Err(std::io::Error::other(error.to_string())), None)),
                }
            };
            Some((Ok(chunk.0), chunk.1))
        }
    });
    let body = futures_util::StreamExt::chain(futures_util::stream::iter(start.map(Ok)), pages);
    let (content_type, file) =
        if csv { ("text/csv; charset=utf-8", "reports.csv") } else { ("application/x-ndjson", "reports.jsonl") };
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")).expect("a plain file name"),
            ),
        ],
        Body::from_stream(body),
    )
        .into_response())
}

/// `GET /reports/{id}/markdown`: the report as the Markdown document an agent reads.
pub async fn markdown(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> PageResult<Response> {
    let (report, projects) = readable_report(&state, &person, &id).await?;
    let thread = comments::list(&state.service, &report).await?;
    let history = reports::history(&state.service, &report).await?;
    let project = projects.iter().find(|p| p.id == report.project_id);
    let document = super::inbox::markdown_of(&state, &report, project, &thread, &history).await;
    let file = format!("attachment; filename=\"report-{}.md\"", svc_core::ids::short_id(&report.id));
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/markdown; charset=utf-8")),
            (header::CONTENT_DISPOSITION, HeaderValue::from_str(&file).expect("a plain file name")),
        ],
        document,
    )
        .into_response())
}

/// A report of the person's projects, with those projects.
async fn readable_report(state: &AppState, person: &Person, id: &str) -> PageResult<(Report, Vec<Project>)> {
    let projects = projects::reachable(&state.service, &person.principal()).await?;
    let ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let report = reports::get_in(&state.service, &ids, id)
        .await?
        .ok_or_else(|| PageError::NotFound("No such report in your projects.".into()))?;
    Ok((report, projects))
}

/// `GET /reports/{id}/reproduction.spec.ts`: the report's reproduction, a Playwright test (the
/// same file as the tool endpoint's `svc://reports/<id>/reproduction.spec.ts`).
pub async fn reproduction(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let (report, _) = readable_report(&state, &person, &id).await?;
    let spec = svc_core::reproduction::playwright_spec(&report).ok_or_else(|| {
        PageError::NotFound("This report has no page address to replay from, so there is no reproduction.".into())
    })?;
    let file = format!("attachment; filename=\"report-{}.spec.ts\"", svc_core::ids::short_id(&report.id));
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8")),
            (header::CONTENT_DISPOSITION, HeaderValue::from_str(&file).expect("a plain file name")),
        ],
        spec,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_quoted_and_never_formulas() {
        assert_eq!(csv_cell("plain"), "\"plain\"");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_cell("-1"), "\"'-1\"");
        assert_eq!(csv_cell("\t=1+1"), "\"'\t=1+1\"");
        // A spreadsheet that splits on `;` reads one quoted cell, not a formula in a second one.
        assert_eq!(csv_cell("Checkout broken;=1+1;"), "\"Checkout broken;=1+1;\"");
    }
}
