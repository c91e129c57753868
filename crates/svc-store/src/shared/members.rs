//! Members of an organization and their invitations: queries written once, compiled per backend
//! like `queries.rs`. Role changes and removals run in one transaction that first holds the
//! organization's row (`for_update!`: `FOR UPDATE` on PostgreSQL; SQLite's write transaction holds
//! the whole database), so the check "another owner remains" and the change cannot be split by a
//! concurrent change.

use async_trait::async_trait;
use sqlx::Row;
use svc_core::account::{LinkPurpose, Membership, OneTimeLink, Role};
use svc_core::model::ApiKey;

use super::rows::{self, key_columns};
use super::{ThisStore, map_write_error};
use crate::{MemberChange, MemberStore, StoreError, StoreResult};

/// Locks the organization's row for the rest of the transaction; `false` when there is none.
macro_rules! lock_organization {
    ($tx:expr, $org_id:expr) => {
        sqlx::query(concat!("SELECT id FROM organizations WHERE id = $1", for_update!()))
            .bind($org_id)
            .fetch_optional(&mut *$tx)
            .await?
            .is_some()
    };
}

/// The member's current role, and how many owners the organization has (inside the transaction).
macro_rules! role_and_owners {
    ($tx:expr, $org_id:expr, $user_id:expr) => {{
        let role: Option<String> = sqlx::query("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2")
            .bind($org_id)
            .bind($user_id)
            .fetch_optional(&mut *$tx)
            .await?
            .map(|row| row.try_get("role"))
            .transpose()?;
        let role = role
            .map(|role| Role::parse(&role))
            .transpose()
            .map_err(|error| StoreError::Corrupt(format!("memberships.role: {error}")))?;
        let owners: i64 = sqlx::query("SELECT COUNT(*) AS n FROM memberships WHERE org_id = $1 AND role = 'owner'")
            .bind($org_id)
            .fetch_one(&mut *$tx)
            .await?
            .try_get("n")?;
        (role, owners)
    }};
}

#[async_trait]
impl MemberStore for ThisStore {
    async fn add_member(&self, membership: &Membership) -> StoreResult<bool> {
        let done = sqlx::query(
            "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (org_id, user_id) DO NOTHING",
        )
        .bind(&membership.org_id)
        .bind(&membership.user_id)
        .bind(membership.role.as_str())
        .bind(membership.created_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn change_member_role(&self, org_id: &str, user_id: &str, role: Role) -> StoreResult<MemberChange> {
        let mut tx = self.begin_write().await?;
        if !lock_organization!(tx, org_id) {
            return Ok(MemberChange::NotMember);
        }
        let (current, owners) = role_and_owners!(tx, org_id, user_id);
        let Some(previous) = current else { return Ok(MemberChange::NotMember) };
        if previous == Role::Owner && role != Role::Owner && owners <= 1 {
            return Ok(MemberChange::LastOwner);
        }
        sqlx::query("UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2")
            .bind(org_id)
            .bind(user_id)
            .bind(role.as_str())
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?;
        self.commit_write(tx).await?;
        Ok(MemberChange::Done { previous })
    }

    async fn remove_member(&self, org_id: &str, user_id: &str) -> StoreResult<MemberChange> {
        let mut tx = self.begin_write().await?;
        if !lock_organization!(tx, org_id) {
            return Ok(MemberChange::NotMember);
        }
        let (current, owners) = role_and_owners!(tx, org_id, user_id);
        let Some(previous) = current else { return Ok(MemberChange::NotMember) };
        if previous == Role::Owner && owners <= 1 {
            return Ok(MemberChange::LastOwner);
        }
        sqlx::query("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2")
            .bind(org_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?;
        // Someone who belongs nowhere any more has nothing to be signed in for.
        sqlx::query(
            "DELETE FROM sessions WHERE user_id = $1 AND NOT EXISTS (SELECT 1 FROM memberships WHERE user_id = $1)",
        )
        .bind(user_id)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        self.commit_write(tx).await?;
        Ok(MemberChange::Done { previous })
    }

    async fn list_org_links(&self, org_id: &str, purpose: LinkPurpose, now: i64) -> StoreResult<Vec<OneTimeLink>> {
        let rows = sqlx::query(
            "SELECT token_hash, purpose, org_id, user_id, created_at, expires_at, role FROM one_time_links \
             WHERE org_id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3 \
             ORDER BY created_at DESC, token_hash",
        )
        .bind(org_id)
        .bind(purpose.as_str())
        .bind(now)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(super::accounts::link).collect()
    }

    async fn delete_org_link(&self, org_id: &str, token_hash: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM one_time_links WHERE org_id = $1 AND token_hash = $2 AND used_at IS NULL")
            .bind(org_id)
            .bind(token_hash)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn list_org_keys(&self, org_id: &str) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE org_id = $1 AND project_id IS NULL ORDER BY created_at, id"
        ))
        .bind(org_id)
        .fetch_all(self.read_pool())
        .await?;
        rows::all(&rows, rows::api_key)
    }

    async fn revoke_org_key(&self, org_id: &str, key_id: &str, at: i64) -> StoreResult<Option<i64>> {
        Ok(sqlx::query_scalar(
            "UPDATE api_keys SET revoked_at = $3 WHERE org_id = $1 AND id = $2 AND project_id IS NULL \
             AND revoked_at IS NULL RETURNING revoked_at",
        )
        .bind(org_id)
        .bind(key_id)
        .bind(at)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?)
    }
}
