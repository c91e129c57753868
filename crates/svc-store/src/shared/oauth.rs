//! OAuth for the tool endpoint: registered clients, authorization codes and what each OAuth key
//! was made for. Queries written once, compiled per backend like `queries.rs`.

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{QueryBuilder, Row};
use svc_core::model::ApiKey;
use svc_core::oauth::{OAuthClient, OAuthCode, OAuthGrant};

use super::rows::{self, key_columns};
use super::{Db, DbRow, ThisStore, map_write_error};
use crate::{OAuthStore, StoreError, StoreResult};

macro_rules! client_columns {
    () => {
        "client_id, client_name, redirect_uris, created_at, last_used_at"
    };
}
macro_rules! code_columns {
    () => {
        "code_hash, client_id, redirect_uri, code_challenge, resource, user_id, org_id, project_id, scopes, \
         created_at, expires_at, used_at"
    };
}
macro_rules! grant_columns {
    () => {
        "key_id, client_id, client_name, redirect_host, user_id, org_id, project_id, created_at"
    };
}

fn json<T: serde::de::DeserializeOwned>(row: &DbRow, column: &str) -> StoreResult<T> {
    match row.try_get::<Json<T>, _>(column) {
        Ok(Json(value)) => Ok(value),
        Err(sqlx::Error::ColumnDecode { source, .. }) => Err(StoreError::Corrupt(format!("{column}: {source}"))),
        Err(error) => Err(error.into()),
    }
}

fn client(row: &DbRow) -> StoreResult<OAuthClient> {
    Ok(OAuthClient {
        client_id: row.try_get("client_id")?,
        client_name: row.try_get("client_name")?,
        redirect_uris: json(row, "redirect_uris")?,
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

fn code(row: &DbRow) -> StoreResult<OAuthCode> {
    Ok(OAuthCode {
        code_hash: row.try_get("code_hash")?,
        client_id: row.try_get("client_id")?,
        redirect_uri: row.try_get("redirect_uri")?,
        code_challenge: row.try_get("code_challenge")?,
        resource: row.try_get("resource")?,
        user_id: row.try_get("user_id")?,
        org_id: row.try_get("org_id")?,
        project_id: row.try_get("project_id")?,
        scopes: json(row, "scopes")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        used_at: row.try_get("used_at")?,
    })
}

fn grant(row: &DbRow) -> StoreResult<OAuthGrant> {
    Ok(OAuthGrant {
        key_id: row.try_get("key_id")?,
        client_id: row.try_get("client_id")?,
        client_name: row.try_get("client_name")?,
        redirect_host: row.try_get("redirect_host")?,
        user_id: row.try_get("user_id")?,
        org_id: row.try_get("org_id")?,
        project_id: row.try_get("project_id")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Key ids per statement when reading grants (well under both databases' parameter limits).
const IDS_PER_STATEMENT: usize = 500;

impl ThisStore {
    /// Writes a client with `statement`, whose parameters are [`client_columns`] in order.
    async fn write_client(&self, statement: &'static str, client: &OAuthClient) -> StoreResult<()> {
        sqlx::query(statement)
            .bind(&client.client_id)
            .bind(&client.client_name)
            .bind(Json(&client.redirect_uris))
            .bind(client.created_at)
            .bind(client.last_used_at)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }
}

#[async_trait]
impl OAuthStore for ThisStore {
    async fn create_oauth_client(&self, client: &OAuthClient) -> StoreResult<()> {
        self.write_client(
            concat!("INSERT INTO oauth_clients (", client_columns!(), ") VALUES ($1, $2, $3, $4, $5)"),
            client,
        )
        .await
    }

    async fn put_oauth_client(&self, client: &OAuthClient) -> StoreResult<()> {
        self.write_client(
            concat!(
                "INSERT INTO oauth_clients (",
                client_columns!(),
                ") VALUES ($1, $2, $3, $4, $5) ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, \
                 redirect_uris = excluded.redirect_uris, created_at = excluded.created_at"
            ),
            client,
        )
        .await
    }

    async fn get_oauth_client(&self, client_id: &str) -> StoreResult<Option<OAuthClient>> {
        let row = sqlx::query(concat!("SELECT ", client_columns!(), " FROM oauth_clients WHERE client_id = $1"))
            .bind(client_id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(client).transpose()
    }

    async fn create_oauth_code(&self, new: &OAuthCode) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO oauth_codes (",
            code_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ))
        .bind(&new.code_hash)
        .bind(&new.client_id)
        .bind(&new.redirect_uri)
        .bind(&new.code_challenge)
        .bind(&new.resource)
        .bind(&new.user_id)
        .bind(&new.org_id)
        .bind(&new.project_id)
        .bind(Json(&new.scopes))
        .bind(new.created_at)
        .bind(new.expires_at)
        .bind(new.used_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn take_oauth_code(&self, code_hash: &str, now: i64) -> StoreResult<Option<OAuthCode>> {
        // One statement, so two exchanges racing with the same code cannot both win.
        let row = sqlx::query(concat!(
            "UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 \
             RETURNING ",
            code_columns!()
        ))
        .bind(code_hash)
        .bind(now)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?;
        row.as_ref().map(code).transpose()
    }

    async fn create_oauth_key(&self, key: &ApiKey, grant: &OAuthGrant) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        super::queries::insert_key(&mut *tx, key).await?;
        sqlx::query(concat!(
            "INSERT INTO oauth_grants (",
            grant_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ))
        .bind(&grant.key_id)
        .bind(&grant.client_id)
        .bind(&grant.client_name)
        .bind(&grant.redirect_host)
        .bind(&grant.user_id)
        .bind(&grant.org_id)
        .bind(&grant.project_id)
        .bind(grant.created_at)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        sqlx::query("UPDATE oauth_clients SET last_used_at = $2 WHERE client_id = $1")
            .bind(&grant.client_id)
            .bind(grant.created_at)
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?;
        self.commit_write(tx).await
    }

    async fn oauth_grants_of(&self, key_ids: &[String]) -> StoreResult<Vec<OAuthGrant>> {
        let mut found = Vec::new();
        for chunk in key_ids.chunks(IDS_PER_STATEMENT) {
            let mut query =
                QueryBuilder::<Db>::new(concat!("SELECT ", grant_columns!(), " FROM oauth_grants WHERE key_id IN ("));
            let mut list = query.separated(", ");
            for id in chunk {
                list.push_bind(id.clone());
            }
            query.push(")");
            let rows = query.build().fetch_all(self.read_pool()).await?;
            found.extend(rows::all(&rows, grant)?);
        }
        Ok(found)
    }

    async fn list_user_oauth_keys(&self, user_id: &str) -> StoreResult<Vec<(ApiKey, OAuthGrant)>> {
        let grants = sqlx::query(concat!(
            "SELECT ",
            grant_columns!(),
            " FROM oauth_grants WHERE user_id = $1 ORDER BY created_at DESC, key_id DESC"
        ))
        .bind(user_id)
        .fetch_all(self.read_pool())
        .await?;
        let grants = rows::all(&grants, grant)?;
        let keys = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE id IN (SELECT key_id FROM oauth_grants WHERE user_id = $1)"
        ))
        .bind(user_id)
        .fetch_all(self.read_pool())
        .await?;
        let mut keys: std::collections::HashMap<String, ApiKey> =
            rows::all(&keys, rows::api_key)?.into_iter().map(|key| (key.id.clone(), key)).collect();
        Ok(grants.into_iter().filter_map(|grant| keys.remove(&grant.key_id).map(|key| (key, grant))).collect())
    }

    async fn revoke_user_oauth_key(&self, user_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>> {
        Ok(sqlx::query_scalar(
            "UPDATE api_keys SET revoked_at = $3 WHERE id = $2 AND revoked_at IS NULL \
             AND id IN (SELECT key_id FROM oauth_grants WHERE user_id = $1 AND key_id = $2) RETURNING revoked_at",
        )
        .bind(user_id)
        .bind(key_id)
        .bind(at)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?)
    }

    async fn delete_stale_oauth_rows(&self, now: i64, unused_before: i64) -> StoreResult<u64> {
        let mut tx = self.begin_write().await?;
        let codes = sqlx::query(
            "DELETE FROM oauth_codes WHERE expires_at <= $1 OR client_id IN \
             (SELECT client_id FROM oauth_clients WHERE last_used_at IS NULL AND created_at < $2)",
        )
        .bind(now)
        .bind(unused_before)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?
        .rows_affected();
        let clients = sqlx::query("DELETE FROM oauth_clients WHERE last_used_at IS NULL AND created_at < $1")
            .bind(unused_before)
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?
            .rows_affected();
        self.commit_write(tx).await?;
        Ok(codes + clients)
    }
}
