//! Admin commands: projects, identity secrets, setup tokens, org-wide keys and dashboard users.

use anyhow::{Context, bail};
use serde_json::json;
use std::io::{BufRead, Read};
use svc_core::account::{LINK_LIFETIME_MS, Role};
use svc_core::key::NewKey;
use svc_core::model::{KeyOrigin, Organization, Project};
use svc_core::secret::Secret;
use svc_core::{ids, time};
use svc_service::Service;
use svc_service::accounts::{self, NewUser};
use svc_service::principal::Principal;
use svc_service::{ServiceError, audit, keys, projects};
use svc_store::DynStore;

use crate::cli::{ProjectCommand, StorageArgs, TokenCommand, UserCommand};

/// The service over the configured store (the blob store only where a command needs it: `project
/// delete` opens its own).
async fn open_service(storage: &StorageArgs) -> anyhow::Result<Service> {
    let store = open_store(storage).await?;
    Ok(Service::new(store, std::sync::Arc::new(svc_blob::BlobStore::memory())))
}

/// Opens the configured store, creating the data dir for SQLite.
pub async fn open_store(storage: &StorageArgs) -> anyhow::Result<DynStore> {
    let url = storage.database_url();
    if url.starts_with("sqlite:") {
        std::fs::create_dir_all(&storage.data_dir)
            .with_context(|| format!("cannot create data dir {}", storage.data_dir.display()))?;
    }
    // The URL may carry a password: never print it.
    svc_store::connect(&url).await.map_err(|error| match error.unknown_migration() {
        Some(version) => anyhow::anyhow!(
            "this database was upgraded by a newer svc: its migration {version} is unknown to svc {}. \
             Run the newer svc again, or restore the backup taken before the upgrade (docs/operations.md, \"Upgrades\")",
            env!("CARGO_PKG_VERSION")
        ),
        None => anyhow::Error::new(error).context("cannot open the database"),
    })
}

fn service(error: ServiceError) -> anyhow::Error {
    anyhow::anyhow!("{error}")
}

/// An organization by id or name; without one, "Default" (created when missing).
async fn resolve_org(svc: &Service, reference: Option<&str>) -> anyhow::Result<Organization> {
    let wanted = reference.unwrap_or("Default");
    if let Some(org) = projects::find_organization(svc, wanted).await.map_err(service)? {
        return Ok(org);
    }
    if reference.is_none() {
        return projects::create_organization(svc, "Default").await.map_err(service);
    }
    bail!("no organization {wanted:?}")
}

/// A project by id (the CLI's `--project`).
async fn find_project(svc: &Service, id: &str) -> anyhow::Result<Project> {
    projects::get(svc, id).await.map_err(service)?.with_context(|| format!("no project {id}"))
}

pub async fn project(storage: &StorageArgs, command: ProjectCommand) -> anyhow::Result<()> {
    let svc = open_service(storage).await?;
    match command {
        ProjectCommand::Create { name, org, json } => {
            let org = resolve_org(&svc, org.as_deref()).await?;
            let project =
                projects::create_project(&svc, &Principal::Operator, &org.id, &name).await.map_err(service)?;
            let (_, token) = keys::mint_setup_token(&svc, &org.id, &project.id, None, &audit::command_line())
                .await
                .map_err(service)?;
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
        ProjectCommand::List { org, json } => {
            let listed = projects::list_by_organization(&svc, org.as_deref()).await.map_err(service)?;
            if json {
                let items: Vec<_> = listed
                    .iter()
                    .flat_map(|(org, projects)| {
                        projects.iter().map(move |p| {
                            json!({"projectId": p.id, "name": p.name, "slug": p.slug, "projectKey": p.project_key,
                                   "orgId": org.id, "orgName": org.name, "createdAt": svc_core::time::iso(p.created_at)})
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(items));
            } else {
                for (org, projects) in &listed {
                    println!("Organization {} ({})", org.name, org.id);
                    if projects.is_empty() {
                        println!("  (no projects)");
                    }
                    for p in projects {
                        println!("  {}  {}  {}  {}", p.id, p.project_key, p.slug, p.name);
                    }
                }
            }
        }
        ProjectCommand::Delete { project, confirm, blob_store, s3_endpoint } => {
            let found = find_project(&svc, &project).await?;
            svc_core::project::confirm_deletion(&found.name, &confirm)
                .map_err(|refused| anyhow::anyhow!("{refused}"))?;
            let blobs =
                svc_blob::BlobStore::from_settings(blob_store.as_deref(), &storage.data_dir, s3_endpoint.as_deref())
                    .context("cannot open the blob store")?;
            // The project's files go from the blob store named here.
            let svc = Service::new(open_store(storage).await?, std::sync::Arc::new(blobs));
            let deleted = projects::delete_project(&svc, &Principal::Operator, &found).await.map_err(service)?;
            println!(
                "Deleted project {} ({}): {} reports, {} blobs.",
                found.name, found.id, deleted.reports, deleted.blobs
            );
        }
        ProjectCommand::IdentitySecret { project, rotate, clear } => {
            let found = find_project(&svc, &project).await?;
            if clear {
                projects::set_identity_secret(&svc, &found, None, &audit::command_line()).await.map_err(service)?;
                println!("Identity secret cleared: identity tokens are now ignored.");
            } else if rotate {
                let secret = ids::new_random_secret(48);
                projects::set_identity_secret(&svc, &found, Some(&secret), &audit::command_line())
                    .await
                    .map_err(service)?;
                println!("{secret}");
            } else {
                let mut secret = String::new();
                std::io::stdin().read_to_string(&mut secret).context("cannot read the secret from stdin")?;
                projects::set_identity_secret(&svc, &found, Some(secret.trim()), &audit::command_line())
                    .await
                    .map_err(|error| anyhow::anyhow!("{error} (read from stdin)"))?;
                println!("Identity secret set.");
            }
        }
    }
    Ok(())
}

pub async fn token(storage: &StorageArgs, command: TokenCommand) -> anyhow::Result<()> {
    let svc = open_service(storage).await?;
    let (key, secret, json) = match command {
        TokenCommand::Setup { project, ttl, json } => {
            let found = find_project(&svc, &project).await?;
            let (key, secret) =
                keys::mint_setup_token(&svc, &found.org_id, &found.id, Some(ttl), &audit::command_line())
                    .await
                    .map_err(service)?;
            (key, secret, json)
        }
        TokenCommand::Org { org, scopes, name, ttl, json } => {
            let org = resolve_org(&svc, Some(&org)).await?;
            // Organization-wide keys get the API's scopes: never `*` or `apikey:write`.
            let NewKey { name, scopes, ttl_secs } =
                NewKey::mintable(name, scopes, ttl).map_err(|e| anyhow::anyhow!("{e}"))?;
            let request = keys::MintRequest {
                org_id: org.id,
                project_id: None,
                name,
                scopes,
                ttl_secs,
                origin: KeyOrigin::Cli,
                by: audit::command_line(),
            };
            let (key, secret) = keys::mint(&svc, request).await.map_err(service)?;
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

/// A password from stdin: its first line, without the line break (nothing else is trimmed: spaces
/// may be part of a password).
fn password_from_stdin() -> anyhow::Result<Secret> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).context("cannot read the password from stdin")?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    if password.is_empty() {
        bail!("no password on stdin (give it as one line, for example: printf '%s\\n' \"$PASSWORD\" | svc user ...)");
    }
    Ok(Secret::new(password))
}

pub async fn user(storage: &StorageArgs, command: UserCommand) -> anyhow::Result<()> {
    let svc = open_service(storage).await?;
    match command {
        UserCommand::Create { email, password_stdin: _, name, org, role, json } => {
            // Read before touching the database, so a missing password changes nothing.
            let password = password_from_stdin()?;
            let role = Role::parse(&role).map_err(|e| anyhow::anyhow!("{e}"))?;
            let new = NewUser::parse(&email, &name, password).map_err(service)?;
            let org = resolve_org(&svc, org.as_deref()).await?;
            let user = accounts::create_user(&svc, new, Some((&org.id, role))).await.map_err(service)?;
            if json {
                println!("{}", json!({"userId": user.id, "email": user.email, "orgId": org.id, "role": role.as_str()}));
            } else {
                println!(
                    "User created: {}\nEmail:        {}\nOrganization: {} ({})\nRole:         {}",
                    user.id,
                    user.email,
                    org.name,
                    org.id,
                    role.as_str()
                );
            }
        }
        UserCommand::ResetPassword { email, password_stdin, links, json } => {
            let password = if password_stdin { Some(password_from_stdin()?) } else { None };
            let user = accounts::find_user(&svc, &email)
                .await
                .map_err(service)?
                .with_context(|| format!("no user with the email {}", email.trim()))?;
            match password {
                Some(password) => {
                    accounts::set_password(&svc, &user.id, password).await.map_err(service)?;
                    if json {
                        println!("{}", json!({"userId": user.id, "email": user.email, "passwordSet": true}));
                    } else {
                        println!("Password set for {}; every device they were signed in on is signed out.", user.email);
                    }
                }
                None => {
                    let expires_at = time::now_ms() + LINK_LIFETIME_MS;
                    let token = accounts::password_reset_link(&svc, &user.email).await.map_err(service)?;
                    let link = format!("{}/reset-password?token={}", links.public_url(), token.expose());
                    if json {
                        println!(
                            "{}",
                            json!({"userId": user.id, "email": user.email, "link": link, "expiresAt": time::iso(expires_at)})
                        );
                    } else {
                        println!(
                            "Password reset link for {} (one-time, valid until {}):\n{link}",
                            user.email,
                            time::iso(expires_at)
                        );
                    }
                }
            }
        }
    }
    Ok(())
}
