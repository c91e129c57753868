//! The inbox (the home page): reports of every project the person can see, newest first, filters,
//! and the selected report beside the list (`?r=<id>`, so a selection is a link to share). Triage
//! forms post to `/reports/{id}/...` and come back to the same view.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use std::collections::HashSet;
use svc_core::model::{AssigneeFilter, Project, Report, ReportFilter};
use svc_core::status::{NewComment, STATUSES, Status};
use svc_core::time;
use svc_core::triage::{Label, LabelChange, ReportIds};

use super::assets::{self, Assets};
use super::error::{PageError, PageResult};
use super::redirect::{local_target, see_other_local};
use super::session::Person;
use super::view::{self, BlockView, ChangeView, CommentView, Fact, Reporter, Segment, When};
use super::{Submitted, render};
use crate::state::AppState;
use svc_service::permissions::{self, Operation};
use svc_service::triage::Triage;
use svc_service::{accounts, comments, projects, reports, triage};

const PAGE_SIZE: u32 = 50;
/// A view's count stops here ("99+").
const VIEW_COUNT_CAP: u32 = 100;
/// The cookie that remembers the person's last view (on this browser).
const VIEW_COOKIE: &str = "svc_view";

/// The inbox's views across its top: what needs a person, with counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// New reports nobody has looked at as a team.
    Triage,
    /// Triaged or in progress.
    Open,
    /// An agent's draft waits to be published.
    Drafts,
    /// Fixed; the reporter has not confirmed yet.
    Waiting,
    /// Assigned to the person.
    Mine,
    All,
}

impl View {
    const ALL: [View; 6] = [View::Triage, View::Open, View::Drafts, View::Waiting, View::Mine, View::All];

    pub fn key(self) -> &'static str {
        match self {
            View::Triage => "triage",
            View::Open => "open",
            View::Drafts => "drafts",
            View::Waiting => "waiting",
            View::Mine => "mine",
            View::All => "all",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            View::Triage => "Needs triage",
            View::Open => "Open",
            View::Drafts => "Drafts to review",
            View::Waiting => "Waiting on reporter",
            View::Mine => "Mine",
            View::All => "All",
        }
    }

    fn parse(text: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.key() == text)
    }

    /// Narrows `filter` to the view.
    fn apply(self, filter: &mut ReportFilter, me: &str) {
        let statuses = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        match self {
            View::Triage => filter.statuses = statuses(&["new"]),
            View::Open => filter.statuses = statuses(&["triaged", "in-progress"]),
            View::Drafts => filter.drafts_waiting = true,
            View::Waiting => filter.statuses = statuses(&["fixed"]),
            View::Mine => filter.assignee = Some(AssigneeFilter::User(me.to_string())),
            View::All => {}
        }
    }
}

/// A view's tab: where it leads, its count ("99+" past the cap) and whether it is the one shown.
struct ViewTab {
    key: &'static str,
    label: &'static str,
    href: String,
    count: String,
    current: bool,
}

#[derive(Deserialize, Default, Clone)]
pub struct InboxQuery {
    /// Export only: `jsonl` or `csv`.
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    channel: String,
    #[serde(default)]
    room: String,
    /// `me`, `none` or a user id.
    #[serde(default)]
    assignee: String,
    #[serde(default)]
    label: String,
    /// An author id (the reporter's userId).
    #[serde(default)]
    reporter: String,
    /// Full-text search.
    #[serde(default)]
    q: String,
    #[serde(default)]
    before: String,
    /// The selected report.
    #[serde(default)]
    r: String,
    /// One of the views (`triage`, `open`, `drafts`, `waiting`, `mine`, `all`).
    #[serde(default)]
    view: String,
    /// `1`: the selected report's similar reports in the page (without the script, which loads
    /// them after the report).
    #[serde(default)]
    similar: String,
}

impl InboxQuery {
    /// Whether this view narrows the inbox (a filter, a search or an older page).
    fn narrows(&self) -> bool {
        let view = View::parse(&self.view).is_some_and(|view| view != View::All);
        view || [
            &self.project,
            &self.status,
            &self.channel,
            &self.room,
            &self.assignee,
            &self.label,
            &self.reporter,
            &self.q,
        ]
        .iter()
        .chain([&&self.before])
        .any(|value| !value.trim().is_empty())
    }

    /// The store filter of this view over the person's projects.
    pub fn filter(&self, projects: &[Project], me: &str, limit: u32) -> ReportFilter {
        let project_ids: Vec<String> = match projects.iter().find(|p| p.id == self.project) {
            Some(project) => vec![project.id.clone()],
            None => projects.iter().map(|p| p.id.clone()).collect(),
        };
        let mut filter = ReportFilter {
            project_ids,
            status: non_empty(&self.status),
            statuses: Vec::new(),
            drafts_waiting: false,
            channel_key: non_empty(&self.channel),
            artifact_id: non_empty(&self.room),
            assignee: non_empty(&self.assignee).map(|who| match who.as_str() {
                "me" => AssigneeFilter::User(me.to_string()),
                other => AssigneeFilter::parse(other),
            }),
            label: non_empty(&self.label),
            reporter: non_empty(&self.reporter),
            verified_only: false,
            // Over-long searches are cut rather than refused: the page shows what it searched.
            search: non_empty(&self.q).map(|q| q.chars().take(svc_core::search::MAX_QUERY_CHARS).collect()),
            before: non_empty(&self.before),
            limit,
        };
        if let Some(view) = View::parse(&self.view) {
            view.apply(&mut filter, me);
        }
        filter
    }

    /// The view's tabs with their counts, within the projects the list shows.
    async fn view_tabs(
        &self,
        store: &svc_service::Service,
        projects: &[Project],
        me: &str,
    ) -> PageResult<Vec<ViewTab>> {
        let current = View::parse(&self.view).unwrap_or(View::All);
        let scope = ReportFilter { project_ids: self.filter(projects, me, 1).project_ids, ..Default::default() };
        let filters: Vec<ReportFilter> = View::ALL
            .iter()
            .map(|view| {
                let mut filter = scope.clone();
                view.apply(&mut filter, me);
                filter
            })
            .collect();
        let counts = reports::count_up_to(store, &filters, VIEW_COUNT_CAP).await?;
        let mut tabs = Vec::with_capacity(View::ALL.len());
        for (view, count) in View::ALL.into_iter().zip(counts) {
            let mut pairs = url::form_urlencoded::Serializer::new(String::new());
            pairs.append_pair("view", view.key());
            if !self.project.is_empty() {
                pairs.append_pair("project", &self.project);
            }
            tabs.push(ViewTab {
                key: view.key(),
                label: view.label(),
                href: format!("/?{}", pairs.finish()),
                count: if count >= i64::from(VIEW_COUNT_CAP) {
                    format!("{}+", VIEW_COUNT_CAP - 1)
                } else {
                    count.to_string()
                },
                current: view == current,
            });
        }
        Ok(tabs)
    }

    /// The filters of this view by their query names (the cursor and selection apart).
    fn filters(&self) -> [(&'static str, &String); 9] {
        [
            ("view", &self.view),
            ("project", &self.project),
            ("status", &self.status),
            ("channel", &self.channel),
            ("room", &self.room),
            ("assignee", &self.assignee),
            ("label", &self.label),
            ("reporter", &self.reporter),
            ("q", &self.q),
        ]
    }

    /// The export link of this view (every page of it, not only the one shown).
    fn export(&self, format: &str) -> String {
        let mut pairs = url::form_urlencoded::Serializer::new(String::new());
        pairs.append_pair("format", format);
        for (name, value) in self.filters() {
            if !value.is_empty() {
                pairs.append_pair(name, value);
            }
        }
        format!("/export?{}", pairs.finish())
    }

    /// The query string of this view, with the selection set to `report` (for links and redirects).
    fn with_selection(&self, report: Option<&str>) -> String {
        let mut pairs = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in self.filters().into_iter().chain([("before", &self.before)]) {
            if !value.is_empty() {
                pairs.append_pair(name, value);
            }
        }
        if let Some(report) = report {
            pairs.append_pair("r", report);
        }
        let query = pairs.finish();
        if query.is_empty() { "/".into() } else { format!("/?{query}") }
    }
}

struct Item {
    id: String,
    href: String,
    title: Vec<Segment>,
    /// The reporter's first line whole, for the row's tooltip.
    full_title: String,
    /// The words around a search's hits (only while searching: the title says the rest).
    snippet: Vec<Segment>,
    /// What the report holds or waits for, as marks: (icon id, what it says).
    marks: Vec<(&'static str, String)>,
    who: String,
    when: When,
    /// The project's name, when the list shows several projects.
    project: Option<String>,
    status: String,
    channel: String,
    assignee: Option<String>,
    labels: Vec<String>,
    /// The linked issue (`owner/name#123`), when there is one.
    issue: Option<String>,
    unread: bool,
    selected: bool,
}

struct Detail {
    report: Report,
    project: String,
    short_id: String,
    blocks: Vec<BlockView>,
    facts: Vec<Fact>,
    artifact: Vec<Fact>,
    console: Vec<String>,
    failed: Vec<view::FailedRequest>,
    /// What the reporter did before the report, oldest first.
    steps: Vec<view::StepView>,
    /// The report can be replayed (it has a page address): "Download reproduction".
    reproducible: bool,
    /// The first line of the reporter's words, whole.
    heading: String,
    reporter: Reporter,
    author: Option<String>,
    comments: Vec<CommentView>,
    history: Vec<ChangeView>,
    viewers: Vec<(String, When)>,
    markdown: String,
    created: When,
    can_write: bool,
    /// The assignee's user id and name.
    assignee: Option<(String, String)>,
    /// People the report may be assigned to (its organization's members).
    assignable: Vec<(String, String)>,
    /// Labels in use in its project (suggestions when adding one).
    project_labels: Vec<String>,
    /// The reporter's author id, for "their other reports".
    reporter_id: Option<String>,
    /// The linked issue: its reference (`owner/name#123`) and page.
    issue: Option<(String, String)>,
    /// The project has a connected repository, and the person may triage: "Create GitHub issue".
    can_push: bool,
    /// The report this one duplicates.
    duplicate_of: Option<Related>,
    /// The reports marked as duplicates of this one.
    duplicates: Vec<Related>,
    /// The reports most like this one, with why: searched when asked for (a full-text search
    /// costs more than the rest of the view), else loaded by the page's script after the report.
    similar: Option<Vec<Related>>,
    /// This view with the similar reports in it (the script's fragment, the link without it).
    similar_href: String,
}

/// Another report beside this one (its original, a duplicate, a similar one).
struct Related {
    id: String,
    short_id: String,
    href: String,
    title: String,
    status: String,
    /// Why it is shown (similar reports only).
    why: String,
}

impl Related {
    fn of(report: &Report, why: String) -> Self {
        Related {
            id: report.id.clone(),
            short_id: svc_core::ids::short_id(&report.id).to_string(),
            href: format!("/reports/{}", report.id),
            title: view::cut_at_word(&report.title, 90),
            status: report.status.as_str().into(),
            why,
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/inbox.html")]
struct InboxPage<'a> {
    /// The views across the top, with their counts.
    views: Vec<ViewTab>,
    assets: &'static Assets,
    section: &'static str,
    csrf: &'a str,
    me: &'a str,
    query: &'a InboxQuery,
    projects: &'a [Project],
    statuses: &'a [&'static str],
    /// Channel keys of the visible projects, for the filter.
    channels: Vec<String>,
    /// People of the visible projects' organizations (id, name), for the assignee filter.
    members: Vec<(String, String)>,
    /// Labels in use in the visible projects, for the filter.
    labels: Vec<String>,
    items: Vec<Item>,
    next_page: Option<String>,
    detail: Option<Detail>,
    /// The list without a selection (the narrow screen's way back).
    back: String,
    /// This view, selection included: where triage forms return to.
    here: String,
    export_jsonl: String,
    export_csv: String,
    /// Nothing filed yet anywhere the person looks: where to start (the Install tab of this
    /// project, when they may open it, and the demo page).
    getting_started: Option<GettingStarted>,
}

struct GettingStarted {
    install: Option<String>,
}

/// The view a browser last chose (its cookie), if it names one.
fn remembered_view(headers: &axum::http::HeaderMap) -> Option<View> {
    super::session::cookie(headers, VIEW_COOKIE).and_then(View::parse)
}

/// `GET /`: the inbox. A bare `/` opens the view last chosen on this browser; choosing one
/// remembers it.
pub async fn page(
    State(state): State<AppState>,
    person: Person,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    Query(mut query): Query<InboxQuery>,
) -> PageResult<Response> {
    let chosen = View::parse(&query.view);
    if chosen.is_none()
        && uri.query().is_none_or(str::is_empty)
        && let Some(view) = remembered_view(&headers)
    {
        query.view = view.key().to_string();
    }
    let principal = person.principal();
    let store = &state.service;
    let projects = projects::reachable(store, &principal).await?;
    let now = time::now_ms();
    match headers.get(FRAGMENT_HEADER).and_then(|value| value.to_str().ok()) {
        Some("report") => return report_pane(&state, &person, &query, &projects, now).await,
        Some("similar") => return similar_fragment(&state, &person, &query, &projects).await,
        _ => {}
    }
    let filter = query.filter(&projects, &person.signed_in.user.id, PAGE_SIZE);
    let page = reports::list_page(store, filter).await?;
    let viewer = principal.viewer();
    let ids: Vec<String> = page.items.iter().map(|r| r.id.clone()).collect();
    let seen: HashSet<String> = accounts::viewed_among(store, &viewer, &ids).await?.into_iter().collect();
    let issues = svc_service::trackers::links(store, &ids).await?;
    let drafts: HashSet<String> = comments::with_drafts(store, &ids).await?.into_iter().collect();
    let several_projects = projects.len() > 1 && query.project.is_empty();
    let project_name = |id: &str| projects.iter().find(|p| p.id == id).map(|p| p.name.clone()).unwrap_or_default();
    let members = people(store, &projects).await?;

    let detail = selected_detail(&state, &person, &query, &projects, now).await?;
    let selected = detail.as_ref().map(|d| d.report.id.clone());
    let items = page
        .items
        .iter()
        .map(|report| Item {
            id: report.id.clone(),
            href: query.with_selection(Some(&report.id)),
            title: view::highlight(&view::cut_at_word(&report.title, 90), &query.q),
            full_title: view::heading(report),
            snippet: if query.q.trim().is_empty() {
                Vec::new()
            } else {
                view::highlight(&view::snippet(report), &query.q)
            },
            marks: view::marks(report, drafts.contains(&report.id)),
            assignee: report.assignee.as_ref().map(|id| member_name(&members, id)),
            labels: report.labels.clone(),
            issue: issues.iter().find(|link| link.report_id == report.id).map(|link| link.reference()),
            who: view::reporter(report).name,
            when: When::at(report.created_at, now),
            project: several_projects.then(|| project_name(&report.project_id)),
            status: report.status.as_str().into(),
            channel: report.channel_key.clone(),
            unread: !seen.contains(&report.id) && selected.as_deref() != Some(report.id.as_str()),
            selected: selected.as_deref() == Some(report.id.as_str()),
        })
        .collect();
    let next_page = page.next_cursor.map(|cursor| {
        let mut next = query.clone();
        next.before = cursor;
        next.with_selection(None)
    });
    let mut channels = std::collections::BTreeSet::new();
    let mut labels = std::collections::BTreeSet::new();
    for project in projects.iter().filter(|p| query.project.is_empty() || p.id == query.project) {
        channels.extend(svc_service::channels::list(store, &project.id, false).await?.iter().map(|c| c.key.clone()));
        labels.extend(triage::labels(store, project).await?.into_iter().map(|l| l.label));
    }
    let getting_started = (page.items.is_empty() && !query.narrows()).then(|| GettingStarted {
        install: projects
            .iter()
            .find(|p| permissions::check(&principal, Operation::ReadProject, p).is_ok())
            .map(|p| format!("/projects/{}/install", p.id)),
    });
    let views = query.view_tabs(store, &projects, &person.signed_in.user.id).await?;
    let inbox = InboxPage {
        views,
        assets: assets::get(),
        section: "inbox",
        csrf: &person.csrf,
        me: person.signed_in.user.label(),
        query: &query,
        projects: &projects,
        statuses: &STATUSES,
        channels: channels.into_iter().collect(),
        members: members.clone(),
        labels: labels.into_iter().collect(),
        items,
        next_page,
        detail,
        back: query.with_selection(None),
        here: query.with_selection(selected.as_deref()),
        export_jsonl: query.export("jsonl"),
        export_csv: query.export("csv"),
        getting_started,
    };
    let mut response = render(StatusCode::OK, &inbox);
    varies_by_fragment(&mut response);
    if let Some(view) = chosen
        && let Ok(cookie) = axum::http::HeaderValue::from_str(&format!(
            "{VIEW_COOKIE}={}; Path=/; SameSite=Lax; Max-Age=31536000",
            view.key()
        ))
    {
        response.headers_mut().append(axum::http::header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// The report a view selects (`?r=`), as the pane beside the list; opening it marks it viewed.
async fn selected_detail(
    state: &AppState,
    person: &Person,
    query: &InboxQuery,
    projects: &[Project],
    now: i64,
) -> PageResult<Option<Detail>> {
    let Some(id) = non_empty(&query.r) else { return Ok(None) };
    let principal = person.principal();
    let all_ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let report = reports::get_in(&state.service, &all_ids, &id)
        .await?
        .ok_or_else(|| PageError::NotFound("No such report in your projects.".into()))?;
    state.usage.record_views([report.id.clone()], &principal.viewer(), now);
    let project = projects.iter().find(|p| p.id == report.project_id);
    let similar_href = format!("{}&similar=1", query.with_selection(Some(&report.id)));
    let with_similar = query.similar == "1";
    Ok(Some(detail(state, &principal, report, project, now, with_similar, similar_href).await?))
}

/// The selected report's similar reports alone (`Svc-Fragment: similar`), for the panel the
/// script fills after the report shows.
#[derive(Template)]
#[template(path = "dashboard/similar_fragment.html")]
struct SimilarFragment<'a> {
    similar: Vec<Related>,
    report_id: String,
    /// The person may mark the report a duplicate, and it is not one yet.
    can_mark: bool,
    csrf: &'a str,
    here: String,
}

async fn similar_fragment(
    state: &AppState,
    person: &Person,
    query: &InboxQuery,
    projects: &[Project],
) -> PageResult<Response> {
    let all_ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let report = reports::get_in(&state.service, &all_ids, query.r.trim())
        .await?
        .ok_or_else(|| PageError::NotFound("No such report in your projects.".into()))?;
    let principal = person.principal();
    let can_write = projects
        .iter()
        .find(|p| p.id == report.project_id)
        .is_some_and(|p| permissions::check(&principal, Operation::Triage, p).is_ok());
    let duplicate = svc_service::duplicates::of(&state.service, &report).await?.duplicate_of.is_some();
    let fragment = SimilarFragment {
        similar: similar_to(&state.service, &report).await?,
        can_mark: can_write && !duplicate,
        report_id: report.id.clone(),
        csrf: &person.csrf,
        here: query.with_selection(Some(&report.id)),
    };
    let mut response = render(StatusCode::OK, &fragment);
    varies_by_fragment(&mut response);
    Ok(response)
}

/// The request header with which the page's script asks for a part of the page alone: `report`
/// (moving through the list renders one report, not the list and its counts again) or `similar`.
const FRAGMENT_HEADER: &str = "svc-fragment";

/// The inbox's answers differ by [`FRAGMENT_HEADER`]; caches must keep them apart.
fn varies_by_fragment(response: &mut Response) {
    response.headers_mut().insert(axum::http::header::VARY, axum::http::HeaderValue::from_static(FRAGMENT_HEADER));
}

/// The selected report's pane alone, as the inbox page would show it beside the list.
#[derive(Template)]
#[template(path = "dashboard/report_pane.html")]
struct ReportPane<'a> {
    detail: Option<Detail>,
    csrf: &'a str,
    statuses: &'a [&'static str],
    back: String,
    here: String,
}

async fn report_pane(
    state: &AppState,
    person: &Person,
    query: &InboxQuery,
    projects: &[Project],
    now: i64,
) -> PageResult<Response> {
    let detail = selected_detail(state, person, query, projects, now).await?;
    let selected = detail.as_ref().map(|d| d.report.id.clone());
    let pane = ReportPane {
        detail,
        csrf: &person.csrf,
        statuses: &STATUSES,
        back: query.with_selection(None),
        here: query.with_selection(selected.as_deref()),
    };
    let mut response = render(StatusCode::OK, &pane);
    varies_by_fragment(&mut response);
    Ok(response)
}

/// The people of the projects' organizations: (user id, name), by name, each once.
async fn people(store: &svc_service::Service, projects: &[Project]) -> PageResult<Vec<(String, String)>> {
    let orgs: std::collections::BTreeSet<&str> = projects.iter().map(|p| p.org_id.as_str()).collect();
    let mut people = std::collections::BTreeMap::new();
    for org in orgs {
        for (user, _) in accounts::members(store, org).await? {
            people.insert(user.id.clone(), user.label().to_string());
        }
    }
    let mut people: Vec<(String, String)> = people.into_iter().collect();
    people.sort_by(|a, b| a.1.to_lowercase().cmp(&b.1.to_lowercase()));
    Ok(people)
}

/// A user's name among `members`, else their id (someone who has left the organization).
fn member_name(members: &[(String, String)], user_id: &str) -> String {
    members.iter().find(|(id, _)| id == user_id).map(|(_, name)| name.clone()).unwrap_or_else(|| user_id.to_string())
}

fn non_empty(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// The reports most like `report`, for its panel.
async fn similar_to(store: &svc_service::Service, report: &Report) -> PageResult<Vec<Related>> {
    let found = svc_service::duplicates::similar(store, report).await?;
    Ok(found.into_iter().map(|found| Related::of(&found.report, found.why)).collect())
}

async fn detail(
    state: &AppState,
    principal: &crate::principal::Principal,
    report: Report,
    project: Option<&Project>,
    now: i64,
    with_similar: bool,
    similar_href: String,
) -> PageResult<Detail> {
    let store = &state.service;
    let comments = comments::list(store, &report).await?;
    let history = reports::history(store, &report).await?;
    let viewers = svc_service::usage::viewers(store, &report).await?;
    let markdown = markdown_of(state, &report, project, &comments, &history).await;
    let can_write = project.is_some_and(|p| permissions::check(principal, Operation::Triage, p).is_ok());
    let assignable = match project {
        Some(project) => people(store, std::slice::from_ref(project)).await?,
        None => Vec::new(),
    };
    let project_labels = match project {
        Some(project) => triage::labels(store, project).await?.into_iter().map(|l| l.label).collect(),
        None => Vec::new(),
    };
    let assignee = report.assignee.as_ref().map(|id| (id.clone(), member_name(&assignable, id)));
    let reporter_id =
        (report.author.kind == svc_core::model::AuthorKind::Reporter).then(|| report.author.id.clone()).flatten();
    let issue = svc_service::trackers::links(store, std::slice::from_ref(&report.id))
        .await?
        .into_iter()
        .next()
        .map(|link| (link.reference(), link.url));
    let can_push = can_write
        && issue.is_none()
        && match project {
            Some(project) => svc_service::trackers::connected(store, &project.id).await?,
            None => false,
        };
    let ids_here = std::slice::from_ref(&report.project_id);
    let duplication = svc_service::duplicates::of(store, &report).await?;
    let duplicate_of = match &duplication.duplicate_of {
        Some(id) => reports::get_in(store, ids_here, id).await?.map(|original| Related::of(&original, String::new())),
        None => None,
    };
    let mut duplicates = Vec::with_capacity(duplication.duplicates.len());
    for id in &duplication.duplicates {
        if let Some(duplicate) = reports::get_in(store, ids_here, id).await? {
            duplicates.push(Related::of(&duplicate, String::new()));
        }
    }
    let similar = match with_similar {
        true => Some(similar_to(store, &report).await?),
        false => None,
    };
    Ok(Detail {
        duplicate_of,
        duplicates,
        similar,
        similar_href,
        issue,
        can_push,
        assignee,
        assignable,
        project_labels,
        reporter_id,
        project: project.map(|p| p.name.clone()).unwrap_or_default(),
        short_id: svc_core::ids::short_id(&report.id).to_string(),
        blocks: view::blocks(&report),
        facts: view::context_facts(&report),
        artifact: view::artifact_facts(&report),
        console: view::console_errors(&report),
        failed: view::failed_requests(&report),
        steps: view::steps(&report),
        reproducible: svc_core::reproduction::playwright_spec(&report).is_some(),
        heading: view::heading(&report),
        reporter: view::reporter(&report),
        author: (report.author.kind == svc_core::model::AuthorKind::Agent)
            .then(|| report.author.label.clone().unwrap_or_default()),
        comments: view::comments(&comments, now),
        history: view::history(&history, now),
        viewers: viewers.into_iter().map(|(who, at)| (who, When::at(at, now))).collect(),
        markdown,
        created: When::at(report.created_at, now),
        can_write,
        report,
    })
}

/// The report as the Markdown document an agent gets from `get_report` (its text part; the
/// screenshots named by their resource URIs).
pub async fn markdown_of(
    state: &AppState,
    report: &Report,
    project: Option<&Project>,
    comments: &[svc_core::model::Comment],
    history: &[svc_core::model::StatusChange],
) -> String {
    let parts = crate::mcp::markdown::Parts { project, comments, history, images: false, similar: false };
    crate::mcp::markdown::render(state, report, parts)
        .await
        .first()
        .and_then(|item| item.get("text"))
        .and_then(|text| text.as_str())
        .unwrap_or_default()
        .to_string()
}

/// `GET /reports/{id}`: the report in the inbox.
pub async fn report_link(Path(id): Path<String>) -> Response {
    let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("r", &id).finish();
    see_other_local(Some(&format!("/?{query}")))
}

/// The report a triage form acts on, with the person's right to change it checked.
pub(super) async fn writable_report_in(state: &AppState, person: &Person, id: &str) -> PageResult<(Report, Project)> {
    let principal = person.principal();
    let projects = projects::reachable(&state.service, &principal).await?;
    let ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let report = reports::get_in(&state.service, &ids, id)
        .await?
        .ok_or_else(|| PageError::NotFound("No such report in your projects.".into()))?;
    let project = projects
        .into_iter()
        .find(|p| p.id == report.project_id)
        .ok_or_else(|| PageError::NotFound("No such report in your projects.".into()))?;
    permissions::check(&principal, Operation::Triage, &project)?;
    Ok((report, project))
}

/// Where a form returns to: the inbox view it came from, else the report.
pub(super) fn back_to(back: &str, report_id: &str) -> Response {
    let back = local_target(Some(back));
    if back == "/" || back.starts_with("/?") {
        see_other_local(Some(&back))
    } else {
        see_other_local(Some(&format!("/reports/{report_id}")))
    }
}

#[derive(Deserialize)]
pub struct StatusForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    status: String,
    #[serde(default)]
    back: String,
}

/// `POST /reports/{id}/status`: the same operation as the tool endpoint's `set_status`.
pub async fn set_status(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Submitted(person, form): Submitted<StatusForm>,
) -> PageResult<Response> {
    let status: Status = form.status.parse().map_err(|e: svc_core::Invalid| PageError::BadRequest(e.0))?;
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    triage::set_status(&state.service, &person.principal(), &project, &report, status).await?;
    Ok(back_to(&form.back, &report.id))
}

#[derive(Deserialize)]
pub struct AssigneeForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    /// A member's user id; empty unassigns.
    #[serde(default)]
    assignee: String,
    #[serde(default)]
    back: String,
}

/// `POST /reports/{id}/assignee`: the same operation as the REST PATCH's `assignee`.
pub async fn set_assignee(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Submitted(person, form): Submitted<AssigneeForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    let assignee = non_empty(&form.assignee);
    let ids = ReportIds::one(&report.id);
    triage::apply_to(&state.service, &person.principal(), &[project], &ids, Triage::assignee(assignee)).await?;
    Ok(back_to(&form.back, &report.id))
}

#[derive(Deserialize)]
pub struct LabelForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    #[serde(default)]
    add: String,
    #[serde(default)]
    remove: String,
    #[serde(default)]
    back: String,
}

/// `POST /reports/{id}/labels`: adds or removes one label.
pub async fn change_label(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Submitted(person, form): Submitted<LabelForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    let ids = ReportIds::one(&report.id);
    let principal = person.principal();
    let invalid = |e: svc_core::Invalid| PageError::BadRequest(e.0);
    if !form.add.trim().is_empty() {
        let label = Label::parse(&form.add).map_err(invalid)?;
        let change = Triage::labels(LabelChange::Add(vec![label]));
        triage::apply_to(&state.service, &principal, &[project], &ids, change).await?;
    } else if !form.remove.trim().is_empty() {
        let label = Label::parse(&form.remove).map_err(invalid)?;
        let change = Triage::labels(LabelChange::Remove(vec![label]));
        triage::apply_to(&state.service, &principal, &[project], &ids, change).await?;
    } else {
        return Err(PageError::BadRequest("Type a label to add.".into()));
    }
    Ok(back_to(&form.back, &report.id))
}

#[derive(Deserialize)]
pub struct CommentForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    back: String,
}

/// `POST /reports/{id}/comments`: a person's comment, published at once.
pub async fn add_comment(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Submitted(person, form): Submitted<CommentForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    let new = NewComment::parse(&form.text, None, Some(false)).map_err(|e| PageError::BadRequest(e.0))?;
    comments::add(&state.service, &person.principal(), &project, &report, new).await?;
    Ok(back_to(&form.back, &report.id))
}

/// `POST /reports/{id}/comments/{comment}/publish`: publishes an agent's draft (decisions §8: it
/// keeps its author and gains `publishedAt`). With a text, the draft is edited first.
pub async fn publish_comment(
    State(state): State<AppState>,
    Path((id, comment_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<CommentForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    let text = Some(form.text.as_str()).filter(|text| !text.trim().is_empty());
    comments::publish(&state.service, &person.principal(), &project, &report, &comment_id, text).await?;
    Ok(back_to(&form.back, &report.id))
}

/// `POST /reports/{id}/comments/{comment}/discard`: deletes a draft.
pub async fn discard_comment(
    State(state): State<AppState>,
    Path((id, comment_id)): Path<(String, String)>,
    Submitted(person, form): Submitted<CommentForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    comments::discard(&state.service, &person.principal(), &project, &report, &comment_id).await?;
    Ok(back_to(&form.back, &report.id))
}

#[derive(Deserialize)]
pub struct DuplicateForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    /// The original: a report id or short id of the same project; empty takes the mark away.
    #[serde(default)]
    of: String,
    #[serde(default)]
    back: String,
}

/// `POST /reports/{id}/duplicate`: marks the report a duplicate of another (canceled, its
/// reporter following the original), or with `of` empty, no longer one. The same operation as
/// the REST PATCH's `duplicateOf`.
pub async fn mark_duplicate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Submitted(person, form): Submitted<DuplicateForm>,
) -> PageResult<Response> {
    let (report, project) = writable_report_in(&state, &person, &id).await?;
    let principal = person.principal();
    let of = form.of.trim();
    if of.is_empty() {
        svc_service::duplicates::unmark(&state.service, &principal, &project, &report, Triage::default()).await?;
        return Ok(back_to(&form.back, &report.id));
    }
    let project_ids = std::slice::from_ref(&project.id);
    let original = match reports::get_in(&state.service, project_ids, of).await? {
        Some(original) => original,
        None => {
            let short = of.trim_start_matches('#');
            let mut found = reports::find_by_short_id(&state.service, project_ids, short, 2).await?;
            match found.len() {
                1 => found.remove(0),
                0 => return Err(PageError::BadRequest(format!("No report {of} in {}.", project.name))),
                _ => return Err(PageError::BadRequest(format!("{of} names several reports: give more of its id."))),
            }
        }
    };
    svc_service::duplicates::mark(&state.service, &principal, &project, &report, &original, Triage::default()).await?;
    Ok(back_to(&form.back, &report.id))
}

/// `GET /dashboard/blobs/{id}`: a screenshot, voice note or file of a report the person can see.
pub async fn blob(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> PageResult<Response> {
    let not_found = || PageError::NotFound("No such file.".into());
    let projects = projects::reachable(&state.service, &person.principal()).await?;
    let ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let blob = svc_service::blobs::get_in_projects(&state.service, &ids, &id).await?.ok_or_else(not_found)?;
    let (size, stream) =
        state.blobs.get(&blob.id).await.map_err(|e| PageError::Internal(e.into()))?.ok_or_else(not_found)?;
    Ok(crate::blob_response::download(&blob, size, stream))
}

#[derive(Deserialize)]
pub struct BulkForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    #[serde(default)]
    ids: Vec<String>,
    #[serde(default)]
    status: String,
    /// `none`, a member's user id, or empty (unchanged).
    #[serde(default)]
    assignee: String,
    /// A label to add, or empty.
    #[serde(default)]
    label: String,
    /// "Create GitHub issues": one issue each (reports that have one keep it).
    #[serde(default)]
    github: Option<String>,
    #[serde(default)]
    back: String,
}

/// At most this many reports change in one bulk action (a page and then some).
const BULK_MAX: usize = 200;

/// `POST /reports/bulk`: the same change to every selected report, as one triage operation (each
/// report's history records it; if any part fails, nothing changes).
pub async fn bulk(State(state): State<AppState>, Submitted(person, form): Submitted<BulkForm>) -> PageResult<Response> {
    if form.ids.is_empty() {
        return Err(PageError::BadRequest("Select at least one report.".into()));
    }
    if form.ids.len() > BULK_MAX {
        return Err(PageError::BadRequest(format!("Select at most {BULK_MAX} reports at once.")));
    }
    let invalid = |e: svc_core::Invalid| PageError::BadRequest(e.0);
    let status: Option<Status> = match form.status.trim() {
        "" => None,
        text => Some(text.parse().map_err(invalid)?),
    };
    let assignee: Option<Option<String>> = match form.assignee.trim() {
        "" => None,
        "none" => Some(None),
        id => Some(Some(id.to_string())),
    };
    let label = non_empty(&form.label).map(|text| Label::parse(&text)).transpose().map_err(invalid)?;
    let issues = form.github.is_some();
    if status.is_none() && assignee.is_none() && label.is_none() && !issues {
        return Err(PageError::BadRequest("Choose what to change for the selected reports.".into()));
    }
    let principal = person.principal();
    // Every report is checked (reach and right to change) before any changes.
    let mut selected = Vec::with_capacity(form.ids.len());
    for id in &form.ids {
        selected.push(writable_report_in(&state, &person, id).await?);
    }
    let mut touched: Vec<Project> = Vec::new();
    let mut reports = Vec::with_capacity(selected.len());
    for (report, project) in selected {
        if !touched.iter().any(|p| p.id == project.id) {
            touched.push(project);
        }
        if !reports.iter().any(|r: &Report| r.id == report.id) {
            reports.push(report);
        }
    }
    let labels = label.map(|label| LabelChange::Add(vec![label]));
    let change = Triage { status, assignee, labels };
    if !change.is_empty() {
        triage::triage(&state.service, &principal, &touched, &reports, change).await?;
    }
    if issues {
        super::integrations::push_each(&state, &principal, &touched, &reports).await?;
    }
    let back = local_target(Some(&form.back));
    Ok(see_other_local(Some(if back.starts_with("/?") { &back } else { "/" })))
}

super::csrf_forms!(StatusForm, AssigneeForm, LabelForm, CommentForm, BulkForm, DuplicateForm);
