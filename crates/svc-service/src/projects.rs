//! Projects: creation with their first channels, settings changes, identity secrets.

use super::{ServiceError, ServiceResult, audit};
use crate::Service;
use crate::permissions::{self, Operation, OrgOperation};
use crate::principal::Principal;
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;
use svc_core::audit::action;
use svc_core::channel::{DEFAULT_CHANNEL_KEY, DEFAULT_CHANNELS};
use svc_core::model::Author;
use svc_core::model::{Channel, Organization, Project};
use svc_core::project::ProjectChanges;
use svc_core::{ids, project as rules, time};
use svc_store::StoreError;

pub async fn create_organization(svc: &Service, name: &str) -> ServiceResult<Organization> {
    let store = svc.store();
    rules::validate_project_name(name)?;
    let org = Organization { id: ids::new_id(), name: name.to_string(), created_at: time::now_ms() };
    store.create_organization(&org).await?;
    Ok(org)
}

/// Creates a project with the channels `bug`, `idea`, `question` (`bug` the default). The slug comes
/// from the name and is made unique within the organization.
pub async fn create_project(svc: &Service, by: &Principal, org_id: &str, name: &str) -> ServiceResult<Project> {
    permissions::check_org(by, OrgOperation::CreateProject, org_id)?;
    insert_project(svc, org_id, name, &by.author()).await
}

/// [`create_project`] done by Svc itself (the first start), recorded as `by`'s act.
pub(crate) async fn insert_project(svc: &Service, org_id: &str, name: &str, by: &Author) -> ServiceResult<Project> {
    let store = svc.store();
    rules::validate_project_name(name)?;
    let now = time::now_ms();
    let base_slug = rules::slugify(name);
    let mut project = Project {
        id: ids::new_id_at(now),
        org_id: org_id.to_string(),
        name: name.to_string(),
        slug: base_slug.clone(),
        project_key: ids::new_project_key(),
        url_patterns: vec![],
        default_channel_key: DEFAULT_CHANNEL_KEY.into(),
        widget_config: Value::Object(Default::default()),
        allowed_origins: vec![],
        identity_secret: None,
        created_at: now,
        retention_days: None,
        reporter_auth: Default::default(),
    };
    let channels: Vec<Channel> = DEFAULT_CHANNELS
        .iter()
        .enumerate()
        .map(|(i, (key, name, color, mascot))| Channel {
            id: ids::new_id(),
            project_id: project.id.clone(),
            key: key.to_string(),
            name: name.to_string(),
            color: color.to_string(),
            mascot: mascot.to_string(),
            base_weight: 0.0,
            matchers: Value::Array(vec![]),
            archived: false,
            // Distinct times keep "oldest first" in the order the defaults are listed.
            created_at: now + i as i64,
            updated_at: now + i as i64,
        })
        .collect();
    for attempt in 2..=100 {
        match store.create_project(&project, &channels).await {
            Ok(()) => {
                audit::record(svc, &project, by, action::PROJECT_CREATED, json!({"name": project.name})).await;
                return Ok(project);
            }
            Err(StoreError::Conflict(_)) => project.slug = format!("{base_slug}-{attempt}"),
            Err(other) => return Err(other.into()),
        }
    }
    Err(ServiceError::Conflict("could not find a free slug for this project name".into()))
}

/// Applies validated changes (all or nothing): `default_channel_key` must name an active channel.
pub async fn update_project(
    svc: &Service,
    mut project: Project,
    changes: ProjectChanges,
    by: &Author,
) -> ServiceResult<Project> {
    let store = svc.store();
    let ProjectChanges {
        name,
        url_patterns,
        default_channel_key,
        widget_config,
        allowed_origins,
        retention_days,
        reporter_auth,
    } = changes;
    let before = project.clone();
    if let Some(key) = default_channel_key {
        match store.get_channel(&project.id, &key).await? {
            Some(channel) if !channel.archived => project.default_channel_key = key,
            Some(_) => return Err(ServiceError::Invalid(format!("defaultChannelKey: channel {key} is archived"))),
            None => return Err(ServiceError::Invalid(format!("defaultChannelKey: no channel {key}"))),
        }
    }
    project.name = name.unwrap_or(project.name);
    project.url_patterns = url_patterns.unwrap_or(project.url_patterns);
    project.widget_config = widget_config.unwrap_or(project.widget_config);
    project.allowed_origins = allowed_origins.unwrap_or(project.allowed_origins);
    project.retention_days = retention_days.unwrap_or(project.retention_days);
    if let Some(change) = reporter_auth {
        project.reporter_auth = change.apply(&project.reporter_auth);
    }
    store.update_project(&project).await?;
    if before.name != project.name {
        let detail = json!({"from": before.name, "to": project.name});
        audit::record(svc, &project, by, action::PROJECT_RENAMED, detail).await;
    }
    let changed: Vec<&str> = [
        ("urlPatterns", before.url_patterns != project.url_patterns),
        ("defaultChannelKey", before.default_channel_key != project.default_channel_key),
        ("widgetConfig", before.widget_config != project.widget_config),
        ("allowedOrigins", before.allowed_origins != project.allowed_origins),
        ("reporterAuth", before.reporter_auth != project.reporter_auth),
    ]
    .into_iter()
    .filter_map(|(field, differs)| differs.then_some(field))
    .collect();
    if !changed.is_empty() {
        audit::record(svc, &project, by, action::SETTINGS_CHANGED, json!({"fields": changed})).await;
    }
    if before.retention_days != project.retention_days {
        let detail = json!({"days": project.retention_days});
        audit::record(svc, &project, by, action::RETENTION_CHANGED, detail).await;
    }
    Ok(project)
}

/// Looks a project up by the several names users give it: id, public key, slug or name.
pub async fn find_in_org(svc: &Service, org_id: &str, reference: &str) -> ServiceResult<Option<Project>> {
    let store = svc.store();
    let projects = store.list_projects(org_id).await?;
    Ok(projects
        .into_iter()
        .find(|p| p.id == reference || p.project_key == reference || p.slug == reference || p.name == reference))
}

/// A project by id.
pub async fn get(svc: &Service, project_id: &str) -> ServiceResult<Option<Project>> {
    let store = svc.store();
    Ok(store.get_project(project_id).await?)
}

/// A project by its public key (ingest, the widget script), shared with the store's cache.
pub async fn by_public_key(svc: &Service, project_key: &str) -> ServiceResult<Option<Arc<Project>>> {
    let store = svc.store();
    if !ids::is_project_key(project_key) || project_key.len() > 100 {
        return Ok(None);
    }
    Ok(store.get_project_by_key(project_key).await?)
}

/// The projects a principal reaches: a project key's own, an org-wide key's organization's, a
/// person's organizations' (by organization, then creation), every project for the operator.
pub async fn reachable(svc: &Service, principal: &Principal) -> ServiceResult<Vec<Project>> {
    match principal {
        Principal::Operator => {
            Ok(list_by_organization(svc, None).await?.into_iter().flat_map(|(_, projects)| projects).collect())
        }
        Principal::ProjectKey(key) | Principal::OrgKey(key) => match &key.project_id {
            Some(id) => Ok(get(svc, id).await?.into_iter().collect()),
            None => list_in_org(svc, &key.org_id).await,
        },
        Principal::Reporter { project_id, .. } | Principal::Tracker { project_id, .. } => {
            Ok(get(svc, project_id).await?.into_iter().collect())
        }
        Principal::User(person) => {
            let mut projects = Vec::new();
            for membership in &person.memberships {
                projects.extend(list_in_org(svc, &membership.org_id).await?);
            }
            Ok(projects)
        }
    }
}

/// [`reachable`], given the project read with the principal's key (`keys::authenticate`): a
/// project-bound key's own project is not read again.
pub async fn reachable_with_key_project(
    svc: &Service,
    principal: &Principal,
    key_project: Option<Project>,
) -> ServiceResult<Vec<Project>> {
    match (principal, key_project) {
        (Principal::ProjectKey(key) | Principal::OrgKey(key), Some(project))
            if key.project_id.as_deref() == Some(project.id.as_str()) =>
        {
            Ok(vec![project])
        }
        _ => reachable(svc, principal).await,
    }
}

/// Every organization with its projects (oldest first), or only `org` (an id or name) when given.
pub async fn list_by_organization(
    svc: &Service,
    org: Option<&str>,
) -> ServiceResult<Vec<(Organization, Vec<Project>)>> {
    let store = svc.store();
    let organizations = match org {
        Some(reference) => vec![
            find_organization(svc, reference)
                .await?
                .ok_or_else(|| ServiceError::NotFound(format!("no organization {reference}")))?,
        ],
        None => store.list_organizations().await?,
    };
    let mut listed = Vec::with_capacity(organizations.len());
    for organization in organizations {
        let projects = list_in_org(svc, &organization.id).await?;
        listed.push((organization, projects));
    }
    Ok(listed)
}

pub async fn list_in_org(svc: &Service, org_id: &str) -> ServiceResult<Vec<Project>> {
    let store = svc.store();
    Ok(store.list_projects(org_id).await?)
}

/// The first project of the organization "Default" (the demo page's project), if there is one.
pub async fn default_project(svc: &Service) -> ServiceResult<Option<Project>> {
    let store = svc.store();
    let Some(org) = store.find_organization_by_name("Default").await? else { return Ok(None) };
    Ok(store.list_projects(&org.id).await?.into_iter().next())
}

/// An organization by id or, failing that, by name.
pub async fn find_organization(svc: &Service, reference: &str) -> ServiceResult<Option<Organization>> {
    let store = svc.store();
    if ids::is_object_id(reference)
        && let Some(org) = store.get_organization(reference).await?
    {
        return Ok(Some(org));
    }
    Ok(store.find_organization_by_name(reference).await?)
}

/// Sets (or with `None` clears) the secret identity tokens are verified with.
pub async fn set_identity_secret(
    svc: &Service,
    project: &Project,
    secret: Option<&str>,
    by: &Author,
) -> ServiceResult<()> {
    let store = svc.store();
    if let Some(secret) = secret {
        svc_core::key::validate_identity_secret(secret)?;
    }
    store.set_identity_secret(&project.id, secret).await?;
    let act = if secret.is_some() { action::IDENTITY_SECRET_SET } else { action::IDENTITY_SECRET_CLEARED };
    audit::record(svc, project, by, act, json!({})).await;
    Ok(())
}

/// What deleting a project removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletedProject {
    pub reports: u64,
    pub blobs: u64,
}

/// Reports deleted per transaction before the project itself goes, so deleting a large project
/// never holds the database's writer (SQLite) for long.
const DELETE_REPORTS_PER_BATCH: u32 = 1_000;

/// Deletes the project and everything in it: its reports with their status history, comments,
/// labels, viewed marks and search entries, its rooms, channels, keys (they stop working at once),
/// hints, flags, blobs (rows and stored objects) and its own audit log; then records
/// `project.deleted` in the organization's log. The reports go first, a batch per transaction;
/// the rest goes in one transaction. Blob objects the blob store fails to delete stay queued and
/// housekeeping tries again (see [`super::blobs::delete_queued`]). People who own the
/// organization (and the operator) may; no key may.
pub async fn delete_project(svc: &Service, by: &Principal, project: &Project) -> ServiceResult<DeletedProject> {
    permissions::check(by, Operation::DeleteProject, project)?;
    let store = svc.store();
    let blobs = svc.blobs();
    let by = &by.author();
    let mut deleted = DeletedProject::default();
    loop {
        let batch = store.delete_reports(&project.id, None, DELETE_REPORTS_PER_BATCH).await?;
        deleted.reports += batch.reports;
        deleted.blobs += batch.blob_ids.len() as u64;
        super::blobs::delete_objects(svc, blobs, &batch.blob_ids).await;
        if batch.reports < u64::from(DELETE_REPORTS_PER_BATCH) {
            break;
        }
    }
    let rest = match store.delete_project(&project.id).await {
        Ok(rest) => rest,
        Err(StoreError::NotFound) => return Err(ServiceError::NotFound("no such project".into())),
        Err(error) => return Err(error.into()),
    };
    deleted.reports += rest.reports;
    deleted.blobs += rest.blob_ids.len() as u64;
    super::blobs::delete_objects(svc, blobs, &rest.blob_ids).await;
    let detail = json!({"name": project.name, "projectId": project.id, "reports": deleted.reports});
    audit::record_for_org(svc, &project.org_id, by, action::PROJECT_DELETED, detail).await;
    // Open inboxes showing the project reload (and find it gone).
    store.changes().announce(&project.id);
    Ok(deleted)
}
