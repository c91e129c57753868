//! First start: an empty database gets organization "Default", project "Default" and a setup token,
//! printed once.

use super::{ServiceResult, keys, projects};
use svc_core::model::Project;
use svc_core::secret::Secret;
use svc_store::Store;

pub struct Bootstrap {
    pub project: Project,
    pub setup_token: Secret,
    pub setup_token_expires_at: i64,
}

/// Creates the default organization and project when the database has no organization yet.
pub async fn ensure_default(store: &dyn Store) -> ServiceResult<Option<Bootstrap>> {
    if store.count_organizations().await? > 0 {
        return Ok(None);
    }
    let org = projects::create_organization(store, "Default").await?;
    let project = projects::create_project(store, &org.id, "Default").await?;
    let (key, secret) = keys::mint_setup_token(store, &org.id, &project.id, None).await?;
    Ok(Some(Bootstrap { project, setup_token: secret, setup_token_expires_at: key.expires_at.unwrap_or_default() }))
}

/// The `<script>` tag that embeds the widget for a project.
pub fn embed_snippet(public_url: &str, project_key: &str) -> String {
    format!(r#"<script src="{}/v1/svc/{project_key}.js"></script>"#, public_url.trim_end_matches('/'))
}

impl Bootstrap {
    /// The block printed once on first start (to stdout, never to the logs).
    pub fn render(&self, public_url: &str) -> String {
        format!(
            "\n=== Svc is set up ===\n\
             Project id:   {id}\n\
             Public key:   {key}\n\
             Embed:        {snippet}\n\
             Setup token:  {token}\n\
             (scope *, expires {expires}; shown once: use it for the agent self-setup flow, see README)\n\
             Demo page:    {url}/demo\n",
            id = self.project.id,
            key = self.project.project_key,
            snippet = embed_snippet(public_url, &self.project.project_key),
            token = self.setup_token.expose(),
            expires = svc_core::time::iso(self.setup_token_expires_at),
            url = public_url.trim_end_matches('/'),
        )
    }
}
