//! Triage: the labels and the assignee of one report or many at once, in the projects the acting
//! principal may write to (`feedback:write`), and a project's labels with their counts.

use super::{ServiceError, ServiceResult};
use crate::Service;
use crate::principal::Principal;
use svc_core::model::{LabelCount, Project};
use svc_core::triage::{Label, LabelChange, LabelSet, MAX_LABELS_PER_REPORT, ReportIds};
use svc_core::{scope, time};
use svc_store::StoreError;

/// A report's labels after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    pub report_id: String,
    pub labels: Vec<String>,
}

/// Replaces the labels of each report with `labels`.
pub async fn set_labels(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    labels: LabelSet,
) -> ServiceResult<Vec<Labelled>> {
    change_labels(svc, by, projects, reports, LabelChange::Replace(labels)).await
}

/// Adds `label` to each report that does not hold it yet.
pub async fn add_label(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    label: Label,
) -> ServiceResult<Vec<Labelled>> {
    change_labels(svc, by, projects, reports, LabelChange::Add(vec![label])).await
}

/// Removes `label` from each report that holds it.
pub async fn remove_label(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    label: Label,
) -> ServiceResult<Vec<Labelled>> {
    change_labels(svc, by, projects, reports, LabelChange::Remove(vec![label])).await
}

/// Every report or none: a report outside `projects` is `NotFound`, one that would hold more than
/// 20 labels `Invalid`, and nothing changes.
async fn change_labels(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    change: LabelChange,
) -> ServiceResult<Vec<Labelled>> {
    let store = svc.store();
    let project_ids = writable(by, projects)?;
    match store.change_labels(&project_ids, reports.as_slice(), &change, time::now_ms()).await {
        Ok(changed) => {
            announce(svc, &project_ids);
            Ok(changed.into_iter().map(|(report_id, labels)| Labelled { report_id, labels }).collect())
        }
        Err(StoreError::NotFound) => Err(not_found()),
        Err(StoreError::TooManyLabels(report_id)) => Err(ServiceError::Invalid(format!(
            "labels: report {report_id} would hold more than {MAX_LABELS_PER_REPORT} labels"
        ))),
        Err(other) => Err(other.into()),
    }
}

/// Sets the assignee of each report once [`assign`] has checked the user. Every report or none: a
/// report outside `projects` is `NotFound` and nothing changes.
async fn set_assignee(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    assignee: Option<&str>,
) -> ServiceResult<()> {
    let store = svc.store();
    let project_ids = writable(by, projects)?;
    match store.set_assignee(&project_ids, reports.as_slice(), assignee, time::now_ms()).await {
        Err(StoreError::NotFound) => Err(not_found()),
        other => {
            other?;
            announce(svc, &project_ids);
            Ok(())
        }
    }
}

/// Checks that `user_id` may be assigned reports of every one of `projects` (a member of each
/// project's organization).
pub async fn check_assignee(svc: &Service, projects: &[Project], user_id: &str) -> ServiceResult<()> {
    for project in projects {
        super::accounts::assignable(svc, &project.org_id, user_id).await?;
    }
    Ok(())
}

/// Assigns each report to a member of its organization (checked), or unassigns it (`None`).
pub async fn assign(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &ReportIds,
    assignee: Option<&str>,
) -> ServiceResult<()> {
    if let Some(user_id) = assignee {
        check_assignee(svc, projects, user_id).await?;
    }
    set_assignee(svc, by, projects, reports, assignee).await
}

/// The project's labels with the number of reports holding each, by label (for a filter menu).
pub async fn labels(svc: &Service, project: &Project) -> ServiceResult<Vec<LabelCount>> {
    let store = svc.store();
    Ok(store.list_labels(&project.id).await?)
}

/// The ids of `projects`, once `by` may triage in each of them.
fn writable(by: &Principal, projects: &[Project]) -> ServiceResult<Vec<String>> {
    projects
        .iter()
        .map(|project| {
            by.require(scope::FEEDBACK_WRITE, Some(project))?;
            Ok(project.id.clone())
        })
        .collect()
}

/// Tells live views that reports of these projects changed.
fn announce(svc: &Service, project_ids: &[String]) {
    let store = svc.store();
    for project_id in project_ids {
        store.changes().announce(project_id);
    }
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("report not found in this project".into())
}
