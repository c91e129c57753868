//! Comments on a report's thread: agents add them (drafts by default, decisions §8), a human
//! publishes drafts from the dashboard.

use super::{ServiceError, ServiceResult};
use crate::Service;
use crate::principal::Principal;
use svc_core::model::{Author, Comment, Report};
use svc_core::status::NewComment;
use svc_core::{ids, time};

/// Adds a comment to `report` by `by`; a comment that is not a draft is published at once.
pub async fn add(svc: &Service, report: &Report, by: &Principal, new: NewComment) -> ServiceResult<Comment> {
    let store = svc.store();
    let NewComment { text, kind, draft } = new;
    let now = time::now_ms();
    let comment = Comment {
        id: ids::new_id_at(now),
        report_id: report.id.clone(),
        project_id: report.project_id.clone(),
        author: by.author(),
        text,
        kind,
        draft,
        created_at: now,
        published_at: if draft { None } else { Some(now) },
    };
    store.create_comment(&comment).await?;
    store.changes().announce(&report.project_id);
    Ok(comment)
}

/// The report's comments, oldest first, drafts included.
pub async fn list(svc: &Service, report: &Report) -> ServiceResult<Vec<Comment>> {
    let store = svc.store();
    Ok(store.list_comments(&report.id).await?)
}

/// Publishes a draft of `report`; 404 when the report has no such comment.
pub async fn publish(svc: &Service, report: &Report, comment_id: &str, by: &Author) -> ServiceResult<Comment> {
    let store = svc.store();
    let not_found = || ServiceError::NotFound("no comment with that id on this report".into());
    if !ids::is_object_id(comment_id) {
        return Err(not_found());
    }
    let comments = store.list_comments(&report.id).await?;
    let comment = comments.into_iter().find(|c| c.id == comment_id).ok_or_else(not_found)?;
    if !comment.draft {
        return Ok(comment);
    }
    let published = store.publish_comment(&comment.id, time::now_ms()).await?.ok_or_else(not_found)?;
    store.changes().announce(&report.project_id);
    let detail = serde_json::json!({
        "reportId": report.id,
        "shortId": ids::short_id(&report.id),
        "commentId": published.id,
        "author": published.author.label,
    });
    super::audit::record_for_report(svc, &report.project_id, by, svc_core::audit::action::DRAFT_PUBLISHED, detail)
        .await;
    Ok(published)
}

/// A draft of `report` by id; a published comment is no draft and cannot change.
async fn draft_of(svc: &Service, report: &Report, comment_id: &str) -> ServiceResult<Comment> {
    let store = svc.store();
    let not_found = || ServiceError::NotFound("no draft with that id on this report".into());
    if !ids::is_object_id(comment_id) {
        return Err(not_found());
    }
    let comments = store.list_comments(&report.id).await?;
    comments.into_iter().find(|c| c.id == comment_id && c.draft).ok_or_else(not_found)
}

/// Replaces the text of a draft before it is published.
pub async fn edit_draft(svc: &Service, report: &Report, comment_id: &str, text: &str) -> ServiceResult<Comment> {
    let store = svc.store();
    let text = svc_core::status::validate_comment_text(text)?;
    let draft = draft_of(svc, report, comment_id).await?;
    let edited = store
        .edit_draft_comment(&draft.id, &text)
        .await?
        .ok_or_else(|| ServiceError::NotFound("no draft with that id on this report".into()))?;
    store.changes().announce(&report.project_id);
    Ok(edited)
}

/// Deletes a draft that will not be published.
pub async fn discard(svc: &Service, report: &Report, comment_id: &str) -> ServiceResult<()> {
    let store = svc.store();
    let draft = draft_of(svc, report, comment_id).await?;
    if store.discard_draft_comment(&draft.id).await? {
        store.changes().announce(&report.project_id);
        Ok(())
    } else {
        Err(ServiceError::NotFound("no draft with that id on this report".into()))
    }
}
