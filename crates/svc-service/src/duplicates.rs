//! Duplicates: the reports of a project most like one report (found through the full-text index),
//! and marking a report a duplicate of another. A duplicate is canceled with the mark, in the same
//! change; its reporter follows the original (`reporters::thread` and `reporters::confirm`), and
//! the original counts everyone who reported it.

use std::collections::BTreeSet;
use svc_core::model::{Project, Report, ReportFilter};
use svc_core::status::Status;
use svc_store::Write;

use crate::principal::Principal;
use crate::triage::{Triage, triage_with};
use crate::{Service, ServiceError, ServiceResult, reports};

/// How many similar reports a report view and an agent's document show.
pub const SIMILAR_SHOWN: usize = 5;
/// Words of a report that look for others (the longest, which say the most).
const QUERY_WORDS: usize = 10;
/// Candidates read from the index before ranking.
const CANDIDATES: u32 = 100;
/// Words that say nothing about a bug.
const COMMON: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our", "out",
    "has", "have", "this", "that", "with", "from", "they", "will", "would", "there", "their", "what", "when", "which",
    "into", "then", "than", "them", "been", "were", "does", "doesn", "didn", "isn", "just", "after", "before", "page",
    "also", "some", "only", "very", "here", "where", "again", "still", "should", "could",
];

/// A report like another, and why it looks like one.
pub struct Similar {
    pub report: Report,
    /// In words: "same page", "shares “coupon”, “twice”".
    pub why: String,
    score: f64,
}

/// The words of a report that say what it is about: its title and its text, lower-cased, each
/// once, without common words.
fn words_of(report: &Report) -> BTreeSet<String> {
    let mut text = report.title.clone();
    for block in &report.blocks {
        if let svc_core::block::Block::Text(block) = block {
            text.push(' ');
            text.push_str(&block.text);
        }
    }
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3 && !word.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .filter(|word| !COMMON.contains(&word.as_str()))
        .collect()
}

/// The page a report was filed on, without its query and fragment.
fn page_of(report: &Report) -> Option<String> {
    let url = report.url.as_deref().or(report.context.url.as_deref())?;
    let url = url::Url::parse(url).ok()?;
    Some(format!("{}{}", url.origin().ascii_serialization(), url.path().trim_end_matches('/')))
}

/// The reports of `report`'s project most like it (close wording, the same page), best first, at
/// most [`SIMILAR_SHOWN`], each with why. Reports already marked as its duplicates are left out
/// (the report view lists them apart), as is the report it duplicates.
pub async fn similar(svc: &Service, report: &Report) -> ServiceResult<Vec<Similar>> {
    let words = words_of(report);
    let mut longest: Vec<&String> = words.iter().collect();
    longest.sort_by_key(|word| std::cmp::Reverse(word.chars().count()));
    longest.truncate(QUERY_WORDS);
    if longest.is_empty() {
        return Ok(Vec::new());
    }
    // Every word is quoted, so nothing the reporter wrote is search syntax.
    let query = longest.iter().map(|word| format!("\"{word}\"")).collect::<Vec<_>>().join(" or ");
    let filter = ReportFilter {
        project_ids: vec![report.project_id.clone()],
        search: Some(query),
        limit: CANDIDATES,
        ..Default::default()
    };
    let candidates = reports::list_page(svc, filter).await?.items;
    let Duplication { duplicate_of, duplicates } = of(svc, report).await?;
    let related: BTreeSet<String> = duplicates.into_iter().chain(duplicate_of).collect();
    let page = page_of(report);
    let mut found: Vec<Similar> = candidates
        .into_iter()
        .filter(|other| other.id != report.id && !related.contains(&other.id))
        .filter_map(|other| {
            let theirs = words_of(&other);
            let shared: Vec<&String> = longest.iter().copied().filter(|word| theirs.contains(*word)).collect();
            let same_page = page.is_some() && page_of(&other) == page;
            if shared.len() < 2 && !(same_page && !shared.is_empty()) {
                return None;
            }
            let mut why = Vec::new();
            if same_page {
                why.push("same page".to_string());
            }
            let quoted: Vec<String> = shared.iter().take(5).map(|word| format!("“{word}”")).collect();
            why.push(format!("shares {}", quoted.join(", ")));
            let score = shared.len() as f64 / longest.len() as f64 + if same_page { 0.5 } else { 0.0 };
            Some(Similar { report: other, why: why.join("; "), score })
        })
        .collect();
    // Best first; among equals, the older report (the likelier original).
    found.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.report.id.cmp(&b.report.id)));
    found.truncate(SIMILAR_SHOWN);
    Ok(found)
}

/// What a report is to its duplicates: the report it duplicates, and those that duplicate it.
pub struct Duplication {
    pub duplicate_of: Option<String>,
    /// The reports marked as its duplicates, oldest mark first.
    pub duplicates: Vec<String>,
}

pub async fn of(svc: &Service, report: &Report) -> ServiceResult<Duplication> {
    let store = svc.store();
    Ok(Duplication {
        duplicate_of: store
            .duplicate_marks(std::slice::from_ref(&report.id))
            .await?
            .into_iter()
            .next()
            .map(|(_, original)| original),
        duplicates: store.duplicates_of(&report.id).await?,
    })
}

/// The original a duplicate follows, when it is one.
pub async fn original_of(svc: &Service, report: &Report) -> ServiceResult<Option<Report>> {
    let marks = svc.store().duplicate_marks(std::slice::from_ref(&report.id)).await?;
    match marks.into_iter().next() {
        Some((_, original)) => reports::get_in(svc, std::slice::from_ref(&report.project_id), &original).await,
        None => Ok(None),
    }
}

/// Marks `report` a duplicate of `original` (another report of the same project), in one change
/// with `with` (other triage asked for at once): the mark, and the status `canceled` unless `with`
/// sets another (in its history, the log and the event feed). A report that duplicates another
/// already is followed to the one it duplicates; reports that duplicated `report` follow along to
/// the same original. Returns the original and what triage did.
pub async fn mark(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    original: &Report,
    mut with: Triage,
) -> ServiceResult<(Report, Vec<crate::triage::Triaged>)> {
    let original = match original_of(svc, original).await? {
        Some(root) => root,
        None => original.clone(),
    };
    if original.project_id != report.project_id {
        return Err(ServiceError::Invalid("duplicateOf: the original must be a report of the same project".into()));
    }
    if original.id == report.id {
        return Err(ServiceError::Invalid("duplicateOf: a report cannot duplicate itself".into()));
    }
    let mut also = vec![Write::Duplicate { report_id: report.id.clone(), of: Some(original.id.clone()) }];
    for follower in svc.store().duplicates_of(&report.id).await? {
        also.push(Write::Duplicate { report_id: follower, of: Some(original.id.clone()) });
    }
    with.status.get_or_insert(Status::Canceled);
    let triaged = triage_with(svc, by, std::slice::from_ref(project), std::slice::from_ref(report), with, also).await?;
    Ok((original, triaged))
}

/// Takes the duplicate mark off `report`, in one change with `with` (its status stays unless
/// `with` sets one: a person decides).
pub async fn unmark(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    with: Triage,
) -> ServiceResult<Vec<crate::triage::Triaged>> {
    let also = vec![Write::Duplicate { report_id: report.id.clone(), of: None }];
    triage_with(svc, by, std::slice::from_ref(project), std::slice::from_ref(report), with, also).await
}
