//! Admin commands: projects, identity secrets, setup tokens and org-wide keys.

use anyhow::{Context, bail};
use serde_json::json;
use std::io::Read;
use svc_core::model::{KeyOrigin, Organization};
use svc_core::{ids, time};
use svc_server::service::{ServiceError, keys, projects};
use svc_store::{DynStore, Store};

use crate::cli::{ProjectCommand, StorageArgs, TokenCommand};

/// Opens the configured store, creating the data dir for SQLite.
pub async fn open_store(storage: &StorageArgs) -> anyhow::Result<DynStore> {
    let url = storage.database_url();
    if url.starts_with("sqlite:") {
        std::fs::create_dir_all(&storage.data_dir)
            .with_context(|| format!("cannot create data dir {}", storage.data_dir.display()))?;
    }
    // The URL may carry a password: never print it.
    svc_store::connect(&url).await.context("cannot open the database")
}

fn service(error: ServiceError) -> anyhow::Error {
    anyhow::anyhow!("{error}")
}

/// An organization by id or name; without one, "Default" (created when missing).
async fn resolve_org(store: &dyn Store, reference: Option<&str>) -> anyhow::Result<Organization> {
    let wanted = reference.unwrap_or("Default");
    if ids::is_object_id(wanted) {
        if let Some(org) = store.get_organization(wanted).await? {
            return Ok(org);
        }
    }
    if let Some(org) = store.find_organization_by_name(wanted).await? {
        return Ok(org);
    }
    if reference.is_none() {
        return projects::create_organization(store, "Default").await.map_err(service);
    }
    bail!("no organization {wanted:?}")
}

pub async fn project(storage: &StorageArgs, command: ProjectCommand) -> anyhow::Result<()> {
    let store = open_store(storage).await?;
    match command {
        ProjectCommand::Create { name, org, json } => {
            let org = resolve_org(store.as_ref(), org.as_deref()).await?;
            let project = projects::create_project(store.as_ref(), &org.id, &name).await.map_err(service)?;
            let (_, token) =
                keys::mint_setup_token(store.as_ref(), &org.id, &project.id, None).await.map_err(service)?;
            if json {
                println!(
                    "{}",
                    json!({"projectId": project.id, "projectKey": project.project_key, "setupToken": token.expose()})
                );
            } else {
                println!(
                    "Project id:  {}\nPublic key:  {}\nSetup token: {} (scope *, 1 hour, shown once)",
                    project.id,
                    project.project_key,
                    token.expose()
                );
            }
        }
        ProjectCommand::IdentitySecret { project, rotate, clear } => {
            let found = store.get_project(&project).await?.with_context(|| format!("no project {project}"))?;
            if clear {
                store.set_identity_secret(&found.id, None).await?;
                println!("Identity secret cleared: identity tokens are now ignored.");
            } else if rotate {
                let secret = ids::new_random_secret(48);
                store.set_identity_secret(&found.id, Some(&secret)).await?;
                println!("{secret}");
            } else {
                let mut secret = String::new();
                std::io::stdin().read_to_string(&mut secret).context("cannot read the secret from stdin")?;
                let secret = secret.trim();
                if secret.len() < 16 {
                    bail!("the identity secret must be at least 16 characters (read from stdin)");
                }
                store.set_identity_secret(&found.id, Some(secret)).await?;
                println!("Identity secret set.");
            }
        }
    }
    Ok(())
}

pub async fn token(storage: &StorageArgs, command: TokenCommand) -> anyhow::Result<()> {
    let store = open_store(storage).await?;
    let (key, secret, json) = match command {
        TokenCommand::Setup { project, ttl, json } => {
            let found = store.get_project(&project).await?.with_context(|| format!("no project {project}"))?;
            let (key, secret) =
                keys::mint_setup_token(store.as_ref(), &found.org_id, &found.id, Some(ttl)).await.map_err(service)?;
            (key, secret, json)
        }
        TokenCommand::Org { org, scopes, name, ttl, json } => {
            let org = resolve_org(store.as_ref(), Some(&org)).await?;
            svc_core::scope::validate_mintable(&scopes).map_err(|e| anyhow::anyhow!("{e}"))?;
            let request = keys::MintRequest {
                org_id: org.id,
                project_id: None,
                name,
                scopes,
                ttl_secs: ttl,
                origin: KeyOrigin::Cli,
            };
            let (key, secret) = keys::mint(store.as_ref(), request).await.map_err(service)?;
            (key, secret, json)
        }
    };
    if json {
        println!("{}", json!({"id": key.id, "key": secret.expose(), "expiresAt": time::iso_opt(key.expires_at)}));
    } else {
        let expiry = time::iso_opt(key.expires_at).unwrap_or_else(|| "never".into());
        println!(
            "Key id:  {}\nKey:     {} (shown once)\nScopes:  {}\nExpires: {expiry}",
            key.id,
            secret.expose(),
            key.scopes.join(",")
        );
    }
    Ok(())
}
