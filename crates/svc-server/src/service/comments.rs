//! Comments on a report's thread: agents add them (drafts by default, decisions §8), a human
//! publishes drafts from the dashboard.

use super::{ServiceError, ServiceResult};
use crate::principal::Principal;
use svc_core::model::{Comment, Report};
use svc_core::status::NewComment;
use svc_core::{ids, time};
use svc_store::Store;

/// Adds a comment to `report` by `by`; a comment that is not a draft is published at once.
pub async fn add(store: &dyn Store, report: &Report, by: &Principal, new: NewComment) -> ServiceResult<Comment> {
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
    Ok(comment)
}

/// The report's comments, oldest first, drafts included.
pub async fn list(store: &dyn Store, report: &Report) -> ServiceResult<Vec<Comment>> {
    Ok(store.list_comments(&report.id).await?)
}

/// Publishes a draft of `report`; 404 when the report has no such comment.
pub async fn publish(store: &dyn Store, report: &Report, comment_id: &str) -> ServiceResult<Comment> {
    let not_found = || ServiceError::NotFound("no comment with that id on this report".into());
    if !ids::is_object_id(comment_id) {
        return Err(not_found());
    }
    let comments = store.list_comments(&report.id).await?;
    let comment = comments.into_iter().find(|c| c.id == comment_id).ok_or_else(not_found)?;
    if !comment.draft {
        return Ok(comment);
    }
    store.publish_comment(&comment.id, time::now_ms()).await?.ok_or_else(not_found)
}
