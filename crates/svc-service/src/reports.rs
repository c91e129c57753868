//! Reports: listing pages, reading with history, status changes.

use super::ServiceResult;
use crate::Service;
use svc_core::block::BlobFacts;
use svc_core::model::{Author, Report, ReportFilter, StatusChange};
use svc_core::status::Status;
use svc_core::{ids, time};
use svc_store::{ListedReport, StoreError};

pub struct Page {
    pub items: Vec<Report>,
    /// The id to pass as `before` for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// One page, newest first. Fetches one extra row so the last page says so exactly.
pub async fn list_page(svc: &Service, mut filter: ReportFilter) -> ServiceResult<Page> {
    let store = svc.store();
    if !filter.sanitize() {
        return Ok(Page { items: vec![], next_cursor: None });
    }
    let limit = filter.limit.max(1);
    filter.limit = limit + 1;
    let mut items = store.list_reports(&filter).await?;
    let next_cursor = cut_page(&mut items, limit, |r| &r.id);
    Ok(Page { items, next_cursor })
}

/// [`Page`] with each report's JSON fields as JSON text (see [`ListedReport`]).
pub struct TextPage {
    pub items: Vec<ListedReport>,
    pub next_cursor: Option<String>,
}

/// [`list_page`] for a surface that writes the reports out as JSON as they are (the REST list):
/// the same page, without parsing the stored JSON fields.
pub async fn list_page_text(svc: &Service, mut filter: ReportFilter) -> ServiceResult<TextPage> {
    let store = svc.store();
    if !filter.sanitize() {
        return Ok(TextPage { items: vec![], next_cursor: None });
    }
    let limit = filter.limit.max(1);
    filter.limit = limit + 1;
    let mut items = store.list_reports_text(&filter).await?;
    let next_cursor = cut_page(&mut items, limit, |r| &r.id);
    Ok(TextPage { items, next_cursor })
}

/// Cuts the extra row off; the cursor is the last kept id when there was one.
fn cut_page<T>(items: &mut Vec<T>, limit: u32, id: impl Fn(&T) -> &String) -> Option<String> {
    if items.len() > limit as usize {
        items.truncate(limit as usize);
        items.last().map(|item| id(item).clone())
    } else {
        None
    }
}

/// A report of one of `project_ids` by full id; `None` for a malformed, unknown or foreign id.
/// How many reports each filter keeps, counted up to `cap` (an inbox's view counts), at once.
pub async fn count_up_to(svc: &Service, filters: &[ReportFilter], cap: u32) -> ServiceResult<Vec<i64>> {
    Ok(svc.store().count_reports_up_to(filters, cap).await?)
}

pub async fn get_in(svc: &Service, project_ids: &[String], id: &str) -> ServiceResult<Option<Report>> {
    let store = svc.store();
    if !ids::is_object_id(id) {
        return Ok(None);
    }
    Ok(store.get_report(id).await?.filter(|r| project_ids.contains(&r.project_id)))
}

/// Reports of `project_ids` whose id ends in `short_id`, at most `limit`.
pub async fn find_by_short_id(
    svc: &Service,
    project_ids: &[String],
    short_id: &str,
    limit: u32,
) -> ServiceResult<Vec<Report>> {
    let store = svc.store();
    Ok(store.find_reports_by_short_id(project_ids, short_id, limit).await?)
}

/// Every status change of a report, oldest first.
pub async fn history(svc: &Service, report: &Report) -> ServiceResult<Vec<StatusChange>> {
    let store = svc.store();
    Ok(store.status_history(&report.id).await?)
}

/// A report to file, from any surface (ingest, tool endpoint).
pub struct Filing<'a> {
    pub project: &'a svc_core::model::Project,
    pub submission: svc_core::ingest::Submission,
    pub author: Author,
    pub identity: Option<svc_core::identity::Identity>,
    pub identity_error: Option<String>,
    pub idempotency_key: Option<String>,
}

/// Why a report could not be filed.
#[derive(Debug)]
pub enum FilingError {
    /// No requested or default channel resolves.
    ChannelInvalid,
    BlobNotFound,
    BlobProjectMismatch,
    /// The blob's kind is not the referencing block's.
    BlobMimeMismatch,
    BlobAlreadyUsed,
    Store(StoreError),
}

impl From<StoreError> for FilingError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::BlobAlreadyUsed(_) => FilingError::BlobAlreadyUsed,
            StoreError::NotFound => FilingError::BlobNotFound,
            other => FilingError::Store(other),
        }
    }
}

/// What filing did: the report, or on an idempotent repeat the first report's id.
pub enum Filed {
    Created(Report),
    Repeat(String),
}

impl Filed {
    pub fn id(&self) -> &str {
        match self {
            Filed::Created(report) => &report.id,
            Filed::Repeat(id) => id,
        }
    }
}

/// Channel resolution (ingest rule 2): the requested non-archived channel, else the project's
/// default, else `ChannelInvalid`. Channels are never created here.
pub async fn resolve_channel(
    svc: &Service,
    project: &svc_core::model::Project,
    requested: Option<&str>,
) -> Result<String, FilingError> {
    let store = svc.store();
    let channels = store.list_channels(&project.id, false).await?;
    let active = |key: &str| channels.iter().any(|c| c.key == key);
    match requested {
        Some(key) if active(key) => Ok(key.to_string()),
        _ if active(&project.default_channel_key) => Ok(project.default_channel_key.clone()),
        _ => Err(FilingError::ChannelInvalid),
    }
}

/// Files a validated submission: resolves the channel, checks each referenced blob and copies its
/// stored facts over the block's (ingest rule 1), derives the title, and stores the report with its
/// blob bindings in one durable transaction (rule 3: a blob binds to one report).
pub async fn file(svc: &Service, filing: Filing<'_>) -> Result<Filed, FilingError> {
    let _counted = svc.load().filing();
    let store = svc.store();
    let Filing { project, mut submission, author, identity, identity_error, idempotency_key } = filing;
    let channel_key = resolve_channel(svc, project, submission.channel_key.as_deref()).await?;
    let refs = submission.blob_refs();
    let mut blob_ids = Vec::with_capacity(refs.len());
    for blob_ref in refs {
        let blob = store.get_blob(&blob_ref.blob_id).await?.ok_or(FilingError::BlobNotFound)?;
        if blob.project_id != project.id {
            return Err(FilingError::BlobProjectMismatch);
        }
        if blob.kind != blob_ref.kind.as_str() {
            return Err(FilingError::BlobMimeMismatch);
        }
        submission.blocks[blob_ref.block_index].apply_blob_facts(&BlobFacts {
            mime: blob.mime.clone(),
            bytes: blob.bytes.max(0) as u64,
            width: blob.width.map(|n| n.max(0) as u64),
            height: blob.height.map(|n| n.max(0) as u64),
            duration_ms: blob.duration_ms.map(|n| n.max(0) as u64),
        });
        if !blob_ids.contains(&blob.id) {
            blob_ids.push(blob.id);
        }
    }
    let now = time::now_ms();
    let context = &submission.context;
    let report = Report {
        id: ids::new_id_at(now),
        project_id: project.id.clone(),
        channel_key,
        status: Status::New,
        title: svc_core::report::derive_title(&submission.blocks),
        artifact_id: context.artifact_id.clone(),
        url: context.url.as_deref().and_then(svc_core::report::link_url).map(String::from),
        blocks: submission.blocks,
        context: submission.context,
        identity,
        identity_error,
        author,
        created_at: now,
        updated_at: now,
        assignee: None,
        labels: Vec::new(),
    };
    let new = svc_core::model::NewReport { report, blob_ids, idempotency_key };
    match store.create_report(new).await? {
        svc_store::CreatedReport::Created(report) => {
            store.changes().announce(&report.project_id);
            Ok(Filed::Created(report))
        }
        svc_store::CreatedReport::Repeat(id) => Ok(Filed::Repeat(id)),
    }
}
