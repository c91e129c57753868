//! Projects: creation with their first channels, settings changes, identity secrets.

use super::{ServiceError, ServiceResult};
use serde_json::Value;
use svc_core::channel::{DEFAULT_CHANNEL_KEY, DEFAULT_CHANNELS};
use svc_core::model::{Channel, Organization, Project};
use svc_core::{ids, project as rules, time};
use svc_store::{Store, StoreError};

pub async fn create_organization(store: &dyn Store, name: &str) -> ServiceResult<Organization> {
    rules::validate_project_name(name)?;
    let org = Organization { id: ids::new_id(), name: name.to_string(), created_at: time::now_ms() };
    store.create_organization(&org).await?;
    Ok(org)
}

/// Creates a project with the channels `bug`, `idea`, `question` (`bug` the default). The slug comes
/// from the name and is made unique within the organization.
pub async fn create_project(store: &dyn Store, org_id: &str, name: &str) -> ServiceResult<Project> {
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
            Ok(()) => return Ok(project),
            Err(StoreError::Conflict(_)) => project.slug = format!("{base_slug}-{attempt}"),
            Err(other) => return Err(other.into()),
        }
    }
    Err(ServiceError::Conflict("could not find a free slug for this project name".into()))
}

/// Applies a PATCH body: any of `name`, `urlPatterns`, `defaultChannelKey`, `widgetConfig` (replaced
/// whole), `allowedOrigins`. Unknown fields are refused.
pub async fn update_project(store: &dyn Store, mut project: Project, patch: &Value) -> ServiceResult<Project> {
    let fields = patch.as_object().ok_or_else(|| ServiceError::Invalid("body must be a JSON object".into()))?;
    for (field, value) in fields {
        match field.as_str() {
            "name" => {
                let name = value.as_str().ok_or_else(|| ServiceError::Invalid("name must be a string".into()))?;
                rules::validate_project_name(name)?;
                project.name = name.to_string();
            }
            "urlPatterns" => project.url_patterns = rules::validate_url_patterns(value)?,
            "allowedOrigins" => project.allowed_origins = rules::validate_allowed_origins(value)?,
            "widgetConfig" => project.widget_config = rules::validate_widget_config(value)?,
            "defaultChannelKey" => {
                let key =
                    value.as_str().ok_or_else(|| ServiceError::Invalid("defaultChannelKey must be a string".into()))?;
                match store.get_channel(&project.id, key).await? {
                    Some(channel) if !channel.archived => project.default_channel_key = key.to_string(),
                    Some(_) => {
                        return Err(ServiceError::Invalid(format!("defaultChannelKey: channel {key} is archived")));
                    }
                    None => {
                        return Err(ServiceError::Invalid(format!("defaultChannelKey: no channel {key}")));
                    }
                }
            }
            other => {
                return Err(ServiceError::Invalid(format!(
                    "unknown field {other}: a project takes name, urlPatterns, defaultChannelKey, widgetConfig, allowedOrigins"
                )));
            }
        }
    }
    store.update_project(&project).await?;
    Ok(project)
}

/// Looks a project up by the several names users give it: id, public key, slug or name.
pub async fn find_in_org(store: &dyn Store, org_id: &str, reference: &str) -> ServiceResult<Option<Project>> {
    let projects = store.list_projects(org_id).await?;
    Ok(projects
        .into_iter()
        .find(|p| p.id == reference || p.project_key == reference || p.slug == reference || p.name == reference))
}
