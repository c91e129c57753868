//! Fixtures shared by the backends' own unit tests (the conformance suite has its own).

use serde_json::json;
use svc_core::ids::{new_id, new_project_key};
use svc_core::model::{Organization, Project};

use crate::Store;

/// A new organization with one project and no channels.
pub(crate) async fn project(store: &dyn Store) -> Project {
    let org = Organization { id: new_id(), name: "Default".into(), created_at: 1 };
    store.create_organization(&org).await.unwrap();
    let project = Project {
        id: new_id(),
        org_id: org.id,
        name: "Default".into(),
        slug: "default".into(),
        project_key: new_project_key(),
        url_patterns: Vec::new(),
        default_channel_key: "bug".into(),
        widget_config: json!({}),
        allowed_origins: Vec::new(),
        identity_secret: None,
        created_at: 1,
    };
    store.create_project(&project, &[]).await.unwrap();
    project
}
