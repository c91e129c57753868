//! Triage: the status, assignee and labels of one report or many at once, as one operation (all of
//! it or none, with its events and audit entries in the same transaction), in the projects where
//! the acting principal may triage; and a project's labels with their counts.

use super::{ServiceError, ServiceResult};
use crate::Service;
use crate::permissions::{self, Operation};
use crate::principal::Principal;
use svc_core::audit::action;
use svc_core::model::{LabelCount, Project, Report, StatusChange};
use svc_core::status::Status;
use svc_core::triage::{LabelChange, MAX_LABELS_PER_REPORT, ReportIds};
use svc_core::{ids, time};
use svc_store::{Applied, Change, StoreError, Write};

/// What one triage operation changes on each of its reports; what is `None` stays as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Triage {
    pub status: Option<Status>,
    /// `Some(None)` unassigns.
    pub assignee: Option<Option<String>>,
    pub labels: Option<LabelChange>,
}

impl Triage {
    /// Only a status.
    pub fn status(status: Status) -> Self {
        Triage { status: Some(status), ..Default::default() }
    }

    /// Only an assignee (`None` unassigns).
    pub fn assignee(assignee: Option<String>) -> Self {
        Triage { assignee: Some(assignee), ..Default::default() }
    }

    /// Only labels.
    pub fn labels(change: LabelChange) -> Self {
        Triage { labels: Some(change), ..Default::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.status.is_none() && self.assignee.is_none() && self.labels.is_none()
    }
}

/// What triage did to one report.
#[derive(Debug, Clone, PartialEq)]
pub struct Triaged {
    pub report_id: String,
    /// The status change recorded (`None`: unchanged, or not asked for).
    pub status_change: Option<StatusChange>,
    /// The labels afterwards, when the operation changed labels.
    pub labels: Option<Vec<String>>,
}

/// Applies `triage` to every report of `reports` as one change: a report outside `projects` is
/// `NotFound`, a project where `by` may not triage is refused, an assignee who is not a member of a
/// report's organization is `Invalid`, a report that would hold more than 20 labels is `Invalid`,
/// and in every such case nothing changes. `reports` are the reports as read (their status before,
/// for the audit log).
pub async fn triage(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &[Report],
    triage: Triage,
) -> ServiceResult<Vec<Triaged>> {
    triage_with(svc, by, projects, reports, triage, Vec::new()).await
}

/// [`triage`], with `also` written in the same transaction (an issue tracker's delivery, marked
/// handled with the change it makes).
pub(crate) async fn triage_with(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    reports: &[Report],
    triage: Triage,
    also: Vec<Write>,
) -> ServiceResult<Vec<Triaged>> {
    let project_ids = triagable(by, projects)?;
    if let Some(Some(user_id)) = &triage.assignee {
        for project in projects {
            super::accounts::assignable(svc, &project.org_id, user_id).await?;
        }
    }
    let author = by.author();
    let mut writes = Vec::new();
    for report in reports {
        if !project_ids.contains(&report.project_id) {
            return Err(not_found());
        }
        if let Some(status) = triage.status.filter(|status| *status != report.status) {
            writes.push(Write::Status { report_id: report.id.clone(), to: status });
            let project = projects.iter().find(|p| p.id == report.project_id).ok_or_else(not_found)?;
            let detail = serde_json::json!({
                "reportId": report.id,
                "shortId": ids::short_id(&report.id),
                "from": report.status,
                "to": status,
            });
            writes.push(Write::Audit(super::audit::entry(project, &author, action::STATUS_CHANGED, detail)));
        }
        if let Some(assignee) = &triage.assignee {
            writes.push(Write::Assignee { report_id: report.id.clone(), to: assignee.clone() });
        }
        if let Some(labels) = &triage.labels {
            writes.push(Write::Labels { report_id: report.id.clone(), change: labels.clone() });
        }
    }
    writes.extend(also);
    let change = Change { project_ids: Some(project_ids.clone()), by: author, at: time::now_ms(), writes };
    let applied = match svc.store().apply(&change).await {
        Ok(applied) => applied,
        Err(StoreError::NotFound) => return Err(not_found()),
        Err(StoreError::TooManyLabels(report_id)) => {
            return Err(ServiceError::Invalid(format!(
                "labels: report {report_id} would hold more than {MAX_LABELS_PER_REPORT} labels"
            )));
        }
        Err(other) => return Err(other.into()),
    };
    announce(svc, &project_ids);
    let mut triaged: Vec<Triaged> = reports
        .iter()
        .map(|report| Triaged { report_id: report.id.clone(), status_change: None, labels: None })
        .collect();
    for (write, outcome) in change.writes.iter().zip(applied) {
        let report_id = match write {
            Write::Status { report_id, .. } | Write::Labels { report_id, .. } => report_id,
            _ => continue,
        };
        let Some(entry) = triaged.iter_mut().find(|t| &t.report_id == report_id) else { continue };
        match outcome {
            Applied::Status(change) => entry.status_change = change,
            Applied::Labels(labels) => entry.labels = Some(labels),
            _ => {}
        }
    }
    Ok(triaged)
}

/// The reports of `ids` in `projects`, read for a triage: every one or `NotFound`.
pub async fn reports_of(svc: &Service, projects: &[Project], ids: &ReportIds) -> ServiceResult<Vec<Report>> {
    let project_ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
    let mut reports = Vec::with_capacity(ids.as_slice().len());
    for id in ids.as_slice() {
        let report = super::reports::get_in(svc, &project_ids, id).await?.ok_or_else(not_found)?;
        reports.push(report);
    }
    Ok(reports)
}

/// Applies `triage` to the reports of `ids` in `projects` (read first: every one or `NotFound`).
pub async fn apply_to(
    svc: &Service,
    by: &Principal,
    projects: &[Project],
    ids: &ReportIds,
    triage: Triage,
) -> ServiceResult<Vec<Triaged>> {
    let reports = reports_of(svc, projects, ids).await?;
    self::triage(svc, by, projects, &reports, triage).await
}

/// Sets one report's status (any of the six values), recorded as `by`'s act; `None` when it had
/// that status already.
pub async fn set_status(
    svc: &Service,
    by: &Principal,
    project: &Project,
    report: &Report,
    status: Status,
) -> ServiceResult<Option<StatusChange>> {
    let projects = std::slice::from_ref(project);
    let mut triaged = triage(svc, by, projects, std::slice::from_ref(report), Triage::status(status)).await?;
    Ok(triaged.pop().and_then(|t| t.status_change))
}

/// The project's labels with the number of reports holding each, by label (for a filter menu).
pub async fn labels(svc: &Service, project: &Project) -> ServiceResult<Vec<LabelCount>> {
    let store = svc.store();
    Ok(store.list_labels(&project.id).await?)
}

/// The ids of `projects`, once `by` may triage in each of them.
fn triagable(by: &Principal, projects: &[Project]) -> ServiceResult<Vec<String>> {
    projects
        .iter()
        .map(|project| {
            permissions::check(by, Operation::Triage, project)?;
            Ok(project.id.clone())
        })
        .collect()
}

/// Tells live views that reports of these projects changed.
pub(crate) fn announce(svc: &Service, project_ids: &[String]) {
    for project_id in project_ids {
        svc.store().changes().announce(project_id);
    }
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("report not found in this project".into())
}
