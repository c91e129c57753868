//! A whole change in one transaction ([`ChangeStore::apply`]): the writes of one operation, in
//! order, with the events they cause and the audit and mail they come with. Either all of it is
//! committed or none of it. Compiled per backend like `queries.rs`.

use async_trait::async_trait;
use sqlx::Row;
use std::collections::HashMap;
use svc_core::event::{EventKind, NewEvent};
use svc_core::model::*;
use svc_core::status::Status;
use svc_core::triage::{LabelChange, MAX_LABELS_PER_REPORT, key};
use svc_core::webhook::WebhookDelivery;

use super::events::{Tx, advance_consumer, insert_events};
use super::queries::{insert_comment, labels_json, push_list};
use super::rows::{self, comment_columns, status_change_columns};
use super::{Db, ThisStore, map_write_error};
use crate::{Applied, Change, ChangeStore, StoreError, StoreResult, Write};

#[async_trait]
impl ChangeStore for ThisStore {
    async fn apply(&self, change: &Change) -> StoreResult<Vec<Applied>> {
        // Webhook deliveries, with the consumer that made them, go to their own writer where the
        // backend has one (SQLite: a file of their own, off ingest's writer).
        let deliveries_only = change.writes.iter().all(|write| match write {
            Write::WebhookDelivery(_) => true,
            Write::AdvanceConsumer { name, .. } => super::keeps_apart(name),
            _ => false,
        });
        let mut tx = if deliveries_only && !change.writes.is_empty() {
            self.begin_delivery_write().await?
        } else {
            self.begin_write().await?
        };
        let mut events: Vec<NewEvent> = Vec::new();
        let mut applied = Vec::with_capacity(change.writes.len());
        let mut next = 0;
        while let Some(write) = change.writes.get(next) {
            // A run of webhook deliveries (a webhook round makes hundreds) goes in together.
            let deliveries: Vec<&WebhookDelivery> = change.writes[next..]
                .iter()
                .map_while(|write| match write {
                    Write::WebhookDelivery(delivery) => Some(delivery),
                    _ => None,
                })
                .collect();
            if deliveries.is_empty() {
                applied.push(apply_one(&mut tx, change, write, &mut events).await?);
                next += 1;
                continue;
            }
            let made = super::webhooks::insert_deliveries(&mut tx, &deliveries).await?;
            applied.extend(made.into_iter().map(|made| if made { Applied::Done } else { Applied::Skipped }));
            next += deliveries.len();
        }
        insert_events(&mut *tx, &events).await?;
        self.commit_write(tx).await?;
        Ok(applied)
    }
}

/// The project of a report the change may touch; `NotFound` when there is none, or it is outside
/// the change's projects. Locked where the backend locks rows, so concurrent changes of one report
/// queue up and each sees the other's result.
async fn reach(tx: &mut Tx, change: &Change, report_id: &str) -> StoreResult<String> {
    let project_id: String = sqlx::query_scalar(concat!("SELECT project_id FROM reports WHERE id = $1", for_update!()))
        .bind(report_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    match &change.project_ids {
        Some(allowed) if !allowed.contains(&project_id) => Err(StoreError::NotFound),
        _ => Ok(project_id),
    }
}

fn event(project_id: &str, report_id: Option<&str>, kind: EventKind, change: &Change) -> NewEvent {
    NewEvent {
        project_id: project_id.to_string(),
        report_id: report_id.map(str::to_string),
        kind,
        by: change.by.clone(),
        at: change.at,
    }
}

async fn apply_one(tx: &mut Tx, change: &Change, write: &Write, events: &mut Vec<NewEvent>) -> StoreResult<Applied> {
    match write {
        Write::Status { report_id, to } => {
            let project_id = reach(tx, change, report_id).await?;
            let recorded = restatus(tx, report_id, *to, &change.by, change.at).await?;
            if let Some(recorded) = &recorded {
                let kind = EventKind::StatusChanged { from: recorded.from_status, to: recorded.to_status };
                events.push(event(&project_id, Some(report_id), kind, change));
            }
            Ok(Applied::Status(recorded))
        }
        Write::Assignee { report_id, to } => {
            let project_id = reach(tx, change, report_id).await?;
            let from = reassign(tx, report_id, to.as_deref(), change.at).await?;
            if from != *to {
                let kind = EventKind::Assigned { from: from.clone(), to: to.clone() };
                events.push(event(&project_id, Some(report_id), kind, change));
            }
            Ok(Applied::Assignee { from, to: to.clone() })
        }
        Write::Labels { report_id, change: labels } => {
            let project_id = reach(tx, change, report_id).await?;
            let (before, after) = relabel(tx, &project_id, report_id, labels, change.at).await?;
            if before != after {
                let keys = |labels: &[String]| labels.iter().map(|l| key(l)).collect::<Vec<_>>();
                let (before_keys, after_keys) = (keys(&before), keys(&after));
                let added = after.iter().zip(&after_keys).filter(|(_, k)| !before_keys.contains(k)).map(|(l, _)| l);
                let removed = before.iter().zip(&before_keys).filter(|(_, k)| !after_keys.contains(k)).map(|(l, _)| l);
                let kind = EventKind::LabelsChanged {
                    added: added.cloned().collect(),
                    removed: removed.cloned().collect(),
                    labels: after.clone(),
                };
                events.push(event(&project_id, Some(report_id), kind, change));
            }
            Ok(Applied::Labels(after))
        }
        Write::Comment(comment) => {
            reach(tx, change, &comment.report_id).await?;
            insert_comment(&mut **tx, comment).await?;
            if !comment.draft {
                let kind = EventKind::CommentPublished { comment_id: comment.id.clone(), was_draft: false };
                events.push(event(&comment.project_id, Some(&comment.report_id), kind, change));
            }
            Ok(Applied::Comment(comment.clone()))
        }
        Write::PublishDraft { report_id, comment_id } => {
            let project_id = reach(tx, change, report_id).await?;
            // Publishing twice keeps the first publication time; only the first is an event.
            let was_draft: Option<bool> = sqlx::query_scalar(concat!(
                "SELECT draft FROM comments WHERE id = $1 AND report_id = $2",
                for_update!()
            ))
            .bind(comment_id)
            .bind(report_id)
            .fetch_optional(&mut **tx)
            .await?;
            let Some(was_draft) = was_draft else { return Err(StoreError::NotFound) };
            let row = sqlx::query(concat!(
                "UPDATE comments SET draft = FALSE, published_at = COALESCE(published_at, $2) WHERE id = $1 RETURNING ",
                comment_columns!()
            ))
            .bind(comment_id)
            .bind(change.at)
            .fetch_one(&mut **tx)
            .await
            .map_err(map_write_error)?;
            let comment = rows::comment(&row)?;
            if was_draft {
                let kind = EventKind::CommentPublished { comment_id: comment_id.clone(), was_draft: true };
                events.push(event(&project_id, Some(report_id), kind, change));
            }
            Ok(Applied::Comment(comment))
        }
        Write::EditDraft { report_id, comment_id, text } => {
            reach(tx, change, report_id).await?;
            let row = sqlx::query(concat!(
                "UPDATE comments SET text = $3 WHERE id = $1 AND report_id = $2 AND draft = TRUE RETURNING ",
                comment_columns!()
            ))
            .bind(comment_id)
            .bind(report_id)
            .bind(text)
            .fetch_optional(&mut **tx)
            .await
            .map_err(map_write_error)?;
            let row = row.ok_or(StoreError::NotFound)?;
            Ok(Applied::Comment(rows::comment(&row)?))
        }
        Write::DiscardDraft { report_id, comment_id } => {
            reach(tx, change, report_id).await?;
            let done = sqlx::query("DELETE FROM comments WHERE id = $1 AND report_id = $2 AND draft = TRUE")
                .bind(comment_id)
                .bind(report_id)
                .execute(&mut **tx)
                .await
                .map_err(map_write_error)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(Applied::Done)
        }
        Write::Event(new) => {
            if let Some(report_id) = &new.report_id {
                reach(tx, change, report_id).await?;
            }
            events.push(new.clone());
            Ok(Applied::Done)
        }
        Write::Audit(audit) => {
            super::audit::insert_audit(&mut **tx, audit).await?;
            Ok(Applied::Done)
        }
        Write::Mail(mail) => {
            let queued = super::mail::insert_mail(&mut **tx, mail).await?;
            Ok(if queued { Applied::Done } else { Applied::Skipped })
        }
        Write::WebhookDelivery(delivery) => {
            let made = super::webhooks::insert_deliveries(tx, &[delivery]).await?;
            Ok(if made[0] { Applied::Done } else { Applied::Skipped })
        }
        Write::Duplicate { report_id, of } => {
            let project_id = reach(tx, change, report_id).await?;
            sqlx::query("DELETE FROM report_duplicates WHERE report_id = $1")
                .bind(report_id)
                .execute(&mut **tx)
                .await
                .map_err(map_write_error)?;
            if let Some(original_id) = of {
                if original_id == report_id || reach(tx, change, original_id).await? != project_id {
                    return Err(StoreError::NotFound);
                }
                sqlx::query("INSERT INTO report_duplicates (report_id, original_id, marked_at) VALUES ($1, $2, $3)")
                    .bind(report_id)
                    .bind(original_id)
                    .bind(change.at)
                    .execute(&mut **tx)
                    .await
                    .map_err(map_write_error)?;
            }
            Ok(Applied::Done)
        }
        Write::TrackerDelivery { tracker, delivery_id } => {
            super::trackers::insert_delivery(tx, *tracker, delivery_id, change.at).await?;
            Ok(Applied::Done)
        }
        Write::AdvanceConsumer { name, owner, to } => {
            advance_consumer(tx, name, owner, *to).await?;
            Ok(Applied::Done)
        }
    }
}

/// Sets a report's status and records the change; `None` when it has that status already.
pub(super) async fn restatus(
    tx: &mut Tx,
    report_id: &str,
    status: Status,
    by: &Author,
    at: i64,
) -> StoreResult<Option<StatusChange>> {
    let from_status: String = sqlx::query_scalar(concat!("SELECT status FROM reports WHERE id = $1", for_update!()))
        .bind(report_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    let from_status: Status =
        from_status.parse().map_err(|_| StoreError::Corrupt(format!("reports.status: {from_status:?}")))?;
    if from_status == status {
        return Ok(None);
    }
    sqlx::query("UPDATE reports SET status = $2, updated_at = $3 WHERE id = $1")
        .bind(report_id)
        .bind(status.as_str())
        .bind(at)
        .execute(&mut **tx)
        .await
        .map_err(map_write_error)?;
    let change = StatusChange { report_id: report_id.to_string(), from_status, to_status: status, by: by.clone(), at };
    sqlx::query(concat!(
        "INSERT INTO status_changes (",
        status_change_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&change.report_id)
    .bind(change.from_status.as_str())
    .bind(change.to_status.as_str())
    .bind(change.by.kind.as_str())
    .bind(&change.by.id)
    .bind(&change.by.label)
    .bind(change.at)
    .execute(&mut **tx)
    .await
    .map_err(map_write_error)?;
    Ok(Some(change))
}

/// Sets a report's assignee; returns the one before. `updated_at` moves only when it changes.
async fn reassign(tx: &mut Tx, report_id: &str, assignee: Option<&str>, at: i64) -> StoreResult<Option<String>> {
    let row = sqlx::query(concat!("SELECT assignee_id FROM reports WHERE id = $1", for_update!()))
        .bind(report_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    let before: Option<String> = row.try_get("assignee_id")?;
    if before.as_deref() != assignee {
        sqlx::query("UPDATE reports SET assignee_id = $2, updated_at = $3 WHERE id = $1")
            .bind(report_id)
            .bind(assignee)
            .bind(at)
            .execute(&mut **tx)
            .await
            .map_err(map_write_error)?;
    }
    Ok(before)
}

/// Applies a label change to one report (see `svc_core::triage::LabelChange::apply`: a label new to
/// the report takes its project's spelling when the project uses it already); its labels before
/// and after. `TooManyLabels` past [`MAX_LABELS_PER_REPORT`].
pub(super) async fn relabel(
    tx: &mut Tx,
    project_id: &str,
    report_id: &str,
    change: &LabelChange,
    at: i64,
) -> StoreResult<(Vec<String>, Vec<String>)> {
    let row = sqlx::query(concat!("SELECT labels FROM reports WHERE id = $1", for_update!()))
        .bind(report_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    let before = rows::labels(&row)?;
    let mut spellings: HashMap<String, String> = HashMap::new();
    let keys: Vec<String> = change.written().iter().map(|label| label.key()).collect();
    if !keys.is_empty() {
        let mut query =
            sqlx::QueryBuilder::<Db>::new("SELECT label_key, min(label) FROM report_labels WHERE project_id = ");
        query.push_bind(project_id.to_string()).push(" AND label_key IN ");
        push_list(&mut query, &keys);
        query.push(" GROUP BY label_key");
        let found: Vec<(String, String)> = query.build_query_as().fetch_all(&mut **tx).await?;
        spellings.extend(found);
    }
    let after = change.apply(&before, |key| spellings.get(key).cloned());
    if after.len() > MAX_LABELS_PER_REPORT {
        return Err(StoreError::TooManyLabels(report_id.to_string()));
    }
    if after == before {
        return Ok((before, after));
    }
    let before_keys: Vec<String> = before.iter().map(|label| key(label)).collect();
    let after_keys: Vec<String> = after.iter().map(|label| key(label)).collect();
    let removed: Vec<String> = before_keys.iter().filter(|k| !after_keys.contains(k)).cloned().collect();
    if !removed.is_empty() {
        let mut query = sqlx::QueryBuilder::<Db>::new("DELETE FROM report_labels WHERE report_id = ");
        query.push_bind(report_id.to_string()).push(" AND label_key IN ");
        push_list(&mut query, &removed);
        query.build().execute(&mut **tx).await.map_err(map_write_error)?;
    }
    let added: Vec<(&String, &String)> =
        after.iter().zip(&after_keys).filter(|(_, k)| !before_keys.contains(k)).collect();
    if !added.is_empty() {
        let mut query =
            sqlx::QueryBuilder::<Db>::new("INSERT INTO report_labels (label_key, report_id, project_id, label) ");
        query.push_values(added, |mut row, (label, key)| {
            row.push_bind(key.clone())
                .push_bind(report_id.to_string())
                .push_bind(project_id.to_string())
                .push_bind(label.clone());
        });
        query.build().execute(&mut **tx).await.map_err(map_write_error)?;
    }
    sqlx::query("UPDATE reports SET labels = $2, updated_at = $3 WHERE id = $1")
        .bind(report_id)
        .bind(labels_json(&after))
        .bind(at)
        .execute(&mut **tx)
        .await
        .map_err(map_write_error)?;
    Ok((before, after))
}
