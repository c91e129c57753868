//! Comments on a report's thread: agents add them (drafts by default, decisions §8), a human
//! publishes drafts from the dashboard. Each operation is one change: the comment with its
//! `comment.published` event (and, for a published draft, its audit entry) in one transaction.

use super::{ServiceError, ServiceResult};
use crate::Service;
use crate::permissions::{self, Operation};
use crate::principal::Principal;
use svc_core::audit::action;
use svc_core::model::{Author, Comment, Project, Report};
use svc_core::status::NewComment;
use svc_core::{ids, time};
use svc_store::{Applied, Change, StoreError, Write};

/// A comment by `author` on `report`, made at `now`; published at once unless it is a draft.
pub(crate) fn compose(report: &Report, author: Author, new: NewComment, now: i64) -> Comment {
    let NewComment { text, kind, draft } = new;
    Comment {
        id: ids::new_id_at(now),
        report_id: report.id.clone(),
        project_id: report.project_id.clone(),
        author,
        text,
        kind,
        draft,
        created_at: now,
        published_at: if draft { None } else { Some(now) },
    }
}

/// Adds a comment by `by` to `report` of `project`; a comment that is not a draft is published at
/// once.
pub async fn add(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    new: NewComment,
) -> ServiceResult<Comment> {
    permissions::check(by, Operation::Comment, project)?;
    let now = time::now_ms();
    let comment = compose(report, by.author(), new, now);
    apply(svc, by, project, now, vec![Write::Comment(comment.clone())], "report not found in this project").await?;
    Ok(comment)
}

/// Which of these reports have an agent's draft waiting to be published (the inbox's mark).
pub async fn with_drafts(svc: &Service, report_ids: &[String]) -> ServiceResult<Vec<String>> {
    Ok(svc.store().reports_with_drafts(report_ids).await?)
}

/// The report's comments, oldest first, drafts included.
pub async fn list(svc: &Service, report: &Report) -> ServiceResult<Vec<Comment>> {
    let store = svc.store();
    Ok(store.list_comments(&report.id).await?)
}

/// Publishes a draft of `report` (a published comment stays as it is), with `text` replacing its
/// words first when given: one change, recorded in the project's log as `by`'s act. 404 when the
/// report has no such comment.
pub async fn publish(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    comment_id: &str,
    text: Option<&str>,
) -> ServiceResult<Comment> {
    permissions::check(by, Operation::Comment, project)?;
    let missing = "no comment with that id on this report";
    if !ids::is_object_id(comment_id) {
        return Err(ServiceError::NotFound(missing.into()));
    }
    let text = text.map(svc_core::status::validate_comment_text).transpose()?;
    let current = list(svc, report).await?.into_iter().find(|c| c.id == comment_id);
    let Some(current) = current else { return Err(ServiceError::NotFound(missing.into())) };
    if !current.draft {
        return Ok(current);
    }
    let (report_id, comment_id) = (report.id.clone(), comment_id.to_string());
    let mut writes = Vec::new();
    if let Some(text) = text {
        writes.push(Write::EditDraft { report_id: report_id.clone(), comment_id: comment_id.clone(), text });
    }
    writes.push(Write::PublishDraft { report_id, comment_id: comment_id.clone() });
    let detail = serde_json::json!({
        "reportId": report.id,
        "shortId": ids::short_id(&report.id),
        "commentId": comment_id,
        "author": current.author.label,
    });
    writes.push(Write::Audit(super::audit::entry(project, &by.author(), action::DRAFT_PUBLISHED, detail)));
    let applied = apply(svc, by, project, time::now_ms(), writes, missing).await?;
    comment_of(&applied).ok_or_else(|| ServiceError::Internal("publishing a draft returned no comment".into()))
}

/// Replaces the text of a draft before it is published.
pub async fn edit_draft(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    comment_id: &str,
    text: &str,
) -> ServiceResult<Comment> {
    permissions::check(by, Operation::Comment, project)?;
    let text = svc_core::status::validate_comment_text(text)?;
    let write = Write::EditDraft { report_id: report.id.clone(), comment_id: draft_id(comment_id)?, text };
    let applied = apply(svc, by, project, time::now_ms(), vec![write], NO_DRAFT).await?;
    comment_of(&applied).ok_or_else(|| ServiceError::Internal("editing a draft returned no comment".into()))
}

/// Deletes a draft that will not be published.
pub async fn discard(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    comment_id: &str,
) -> ServiceResult<()> {
    permissions::check(by, Operation::Comment, project)?;
    let write = Write::DiscardDraft { report_id: report.id.clone(), comment_id: draft_id(comment_id)? };
    apply(svc, by, project, time::now_ms(), vec![write], NO_DRAFT).await?;
    Ok(())
}

const NO_DRAFT: &str = "no draft with that id on this report";

fn draft_id(comment_id: &str) -> ServiceResult<String> {
    if ids::is_object_id(comment_id) {
        Ok(comment_id.to_string())
    } else {
        Err(ServiceError::NotFound(NO_DRAFT.into()))
    }
}

/// Applies the writes as one change in `project`, tells live views; `missing` is the 404's words.
async fn apply(
    svc: &Service,
    by: &Principal,
    project: &Project,
    at: i64,
    writes: Vec<Write>,
    missing: &str,
) -> ServiceResult<Vec<Applied>> {
    let change = Change { project_ids: Some(vec![project.id.clone()]), by: by.author(), at, writes };
    match svc.store().apply(&change).await {
        Ok(applied) => {
            svc.store().changes().announce(&project.id);
            Ok(applied)
        }
        Err(StoreError::NotFound) => Err(ServiceError::NotFound(missing.into())),
        Err(other) => Err(other.into()),
    }
}

/// The last comment a change stored.
fn comment_of(applied: &[Applied]) -> Option<Comment> {
    applied.iter().rev().find_map(|outcome| match outcome {
        Applied::Comment(comment) => Some(comment.clone()),
        _ => None,
    })
}
