//! The audit log: every operation that changes a project's settings, keys, members or reports'
//! status records who did it here. Recording never fails the act it records (the act is already
//! done); a failure to record is logged.

use crate::Service;
use serde_json::Value;
use svc_core::audit::AuditEvent;
use svc_core::model::{Author, Project};
use svc_core::{ids, time};

use super::ServiceResult;

/// The author of acts done on the command line (`svc project ...`, `svc token ...`).
pub fn command_line() -> Author {
    Author { kind: svc_core::model::AuthorKind::Cli, id: None, label: Some("command line".into()) }
}

/// The author of acts the service does on its own (retention).
pub fn housekeeping() -> Author {
    Author { kind: svc_core::model::AuthorKind::System, id: None, label: Some("housekeeping".into()) }
}

/// Records an act on a project.
pub async fn record(svc: &Service, project: &Project, by: &Author, action: &str, detail: Value) {
    write(svc, &project.org_id, Some(&project.id), by, action, detail).await;
}

/// Records an act on an organization itself (members, projects created or deleted).
pub async fn record_for_org(svc: &Service, org_id: &str, by: &Author, action: &str, detail: Value) {
    write(svc, org_id, None, by, action, detail).await;
}

/// Records an act on a report (status changes, drafts published) in its project's log.
pub async fn record_for_report(svc: &Service, project_id: &str, by: &Author, action: &str, detail: Value) {
    let store = svc.store();
    match store.get_project(project_id).await {
        Ok(Some(project)) => record(svc, &project, by, action, detail).await,
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, action, "could not record an audit event"),
    }
}

/// An entry of a project's log, to write with the change it records (a [`svc_store::Write::Audit`]).
pub fn entry(project: &Project, by: &Author, action: &str, detail: Value) -> AuditEvent {
    let at = time::now_ms();
    AuditEvent {
        id: ids::new_id_at(at),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        at,
        actor: by.clone(),
        action: action.to_string(),
        detail,
    }
}

async fn write(svc: &Service, org_id: &str, project_id: Option<&str>, by: &Author, action: &str, detail: Value) {
    let store = svc.store();
    let at = time::now_ms();
    let event = AuditEvent {
        id: ids::new_id_at(at),
        org_id: org_id.to_string(),
        project_id: project_id.map(str::to_string),
        at,
        actor: by.clone(),
        action: action.to_string(),
        detail,
    };
    if let Err(error) = store.record_audit(&event).await {
        tracing::warn!(%error, action, "could not record an audit event");
    }
}

/// A project's log, newest first; `before` (an event id) pages. It holds the project's own events
/// and those of its organization that change who reaches the project: members added, removed,
/// invited or given another role, and organization-wide keys minted or revoked.
pub async fn list(
    svc: &Service,
    project: &Project,
    before: Option<&str>,
    limit: u32,
) -> ServiceResult<Vec<AuditEvent>> {
    let store = svc.store();
    let limit = limit.clamp(1, 200);
    let mut events = store.list_audit(&project.id, before, limit).await?;
    let reach = |event: &AuditEvent| event.action.starts_with("member.") || event.action.starts_with("key.");
    events.extend(store.list_org_audit(&project.org_id, before, limit).await?.into_iter().filter(reach));
    // Ids are time-ordered: merged by id, the page is still newest first and `before` still pages.
    events.sort_by(|a, b| b.id.cmp(&a.id));
    events.truncate(limit as usize);
    Ok(events)
}

/// An organization's own log (members, projects created or deleted), newest first.
pub async fn list_for_org(
    svc: &Service,
    org_id: &str,
    before: Option<&str>,
    limit: u32,
) -> ServiceResult<Vec<AuditEvent>> {
    let store = svc.store();
    Ok(store.list_org_audit(org_id, before, limit.clamp(1, 200)).await?)
}
