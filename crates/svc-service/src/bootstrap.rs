//! First start: an empty database gets organization "Default", project "Default" and a setup token,
//! printed once. While nobody has a dashboard account, each start also makes a one-time link with
//! which the first person creates theirs and becomes owner of "Default".

use super::{ServiceResult, accounts, keys, projects};
use crate::Service;
use svc_core::account::LINK_LIFETIME_MS;
use svc_core::model::Project;
use svc_core::secret::Secret;

/// The organization an empty database gets, and the one the first owner joins.
pub const DEFAULT_ORGANIZATION: &str = "Default";

pub struct Bootstrap {
    pub project: Project,
    pub setup_token: Secret,
    pub setup_token_expires_at: i64,
}

/// Creates the default organization and project when the database has no organization yet, or
/// only the "Default" organization without a project (as `svc user create` leaves it when it runs
/// before the first start).
pub async fn ensure_default(svc: &Service) -> ServiceResult<Option<Bootstrap>> {
    let store = svc.store();
    let org = match store.count_organizations().await? {
        0 => projects::create_organization(svc, DEFAULT_ORGANIZATION).await?,
        1 => match projects::find_organization(svc, DEFAULT_ORGANIZATION).await? {
            Some(org) if store.list_projects(&org.id).await?.is_empty() => org,
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let by = super::audit::housekeeping();
    let project = projects::insert_project(svc, &org.id, "Default", &by).await?;
    let (key, secret) = keys::mint_setup_token(svc, &org.id, &project.id, None, &by).await?;
    Ok(Some(Bootstrap { project, setup_token: secret, setup_token_expires_at: key.expires_at.unwrap_or_default() }))
}

/// The `<script>` tag that embeds the widget for a project.
pub fn embed_snippet(public_url: &str, project_key: &str) -> String {
    format!(r#"<script src="{}/v1/svc/{project_key}.js"></script>"#, public_url.trim_end_matches('/'))
}

impl Bootstrap {
    /// The block printed once on first start (to stdout, never to the logs), with the first-owner
    /// link when there is one.
    pub fn render(&self, public_url: &str, first_owner: Option<&FirstOwnerLink>) -> String {
        let first_owner = first_owner.map(|link| link.lines(public_url)).unwrap_or_default();
        format!(
            "\n=== Svc is set up ===\n\
             Project id:   {id}\n\
             Public key:   {key}\n\
             Embed:        {snippet}\n\
             Setup token:  {token}\n\
             (scope *, expires {expires}; shown once: use it for the agent self-setup flow, see README)\n\
             Demo page:    {url}/demo\n\
             {first_owner}",
            id = self.project.id,
            key = self.project.project_key,
            snippet = embed_snippet(public_url, &self.project.project_key),
            token = self.setup_token.expose(),
            expires = svc_core::time::iso(self.setup_token_expires_at),
            url = public_url.trim_end_matches('/'),
        )
    }
}

/// A one-time link (valid one hour) with which the first person sets their email and password and
/// becomes owner of the "Default" organization.
pub struct FirstOwnerLink {
    pub token: Secret,
    /// When the link stops working (at the latest: it is stored a moment after this is taken).
    pub expires_at: i64,
}

/// While nobody has an account: a new first-owner link for the "Default" organization. `None` once
/// anyone has an account (and, with a warning in the log, when there is no organization "Default":
/// then `svc user create --org ... --role owner` makes the first owner).
pub async fn first_owner_link(svc: &Service) -> ServiceResult<Option<FirstOwnerLink>> {
    if !accounts::no_users_yet(svc).await? {
        return Ok(None);
    }
    let Some(org) = projects::find_organization(svc, DEFAULT_ORGANIZATION).await? else {
        tracing::warn!(
            "nobody has a dashboard account yet and there is no organization \"{DEFAULT_ORGANIZATION}\" for a \
             first-owner link; create the first owner with `svc user create --email E --password-stdin --org ORG \
             --role owner`"
        );
        return Ok(None);
    };
    let expires_at = svc_core::time::now_ms() + LINK_LIFETIME_MS;
    let token = accounts::first_owner_link(svc, &org.id).await?;
    Ok(Some(FirstOwnerLink { token, expires_at }))
}

impl FirstOwnerLink {
    /// `<public URL>/setup?token=...`
    pub fn url(&self, public_url: &str) -> String {
        format!("{}/setup?token={}", public_url.trim_end_matches('/'), self.token.expose())
    }

    fn lines(&self, public_url: &str) -> String {
        format!(
            "First account: {url}\n\
             (one-time link, valid until {expires}: whoever opens it first chooses an email and a password\n \
             and becomes owner of \"{DEFAULT_ORGANIZATION}\"; until someone does, each start prints a new link)\n",
            url = self.url(public_url),
            expires = svc_core::time::iso(self.expires_at),
        )
    }

    /// The block printed at a start while nobody has an account (to stdout, never to the logs).
    pub fn render(&self, public_url: &str) -> String {
        format!("\n=== Svc has no dashboard account yet ===\n{}", self.lines(public_url))
    }
}
