//! Accounts (users, memberships, sessions, one-time links): queries and row mapping written once,
//! compiled per backend like `queries.rs` (the SQL is the dialect both databases speak).

use async_trait::async_trait;
use sqlx::Row;
use svc_core::account::{LinkPurpose, Membership, OneTimeLink, Role, Session, User};

use super::{DbRow, ThisStore, map_write_error};
use crate::{AccountStore, StoreError, StoreResult};

macro_rules! user_columns {
    () => {
        "id, email, name, created_at"
    };
}
macro_rules! link_columns {
    () => {
        "token_hash, purpose, org_id, user_id, created_at, expires_at, role"
    };
}

fn user(row: &DbRow) -> StoreResult<User> {
    Ok(User {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
    })
}

fn membership(row: &DbRow) -> StoreResult<Membership> {
    let role: String = row.try_get("role")?;
    Ok(Membership {
        org_id: row.try_get("org_id")?,
        user_id: row.try_get("user_id")?,
        role: Role::parse(&role).map_err(|error| StoreError::Corrupt(format!("memberships.role: {error}")))?,
        created_at: row.try_get("created_at")?,
    })
}

fn session(row: &DbRow) -> StoreResult<Session> {
    Ok(Session {
        id_hash: row.try_get("id_hash")?,
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        last_seen_at: row.try_get("last_seen_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

/// A `one_time_links` row (also read by `members.rs`).
pub(super) fn link(row: &DbRow) -> StoreResult<OneTimeLink> {
    let purpose: String = row.try_get("purpose")?;
    let role: Option<String> = row.try_get("role")?;
    Ok(OneTimeLink {
        token_hash: row.try_get("token_hash")?,
        purpose: LinkPurpose::parse(&purpose)
            .ok_or_else(|| StoreError::Corrupt(format!("one_time_links.purpose: {purpose:?}")))?,
        org_id: row.try_get("org_id")?,
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        role: role
            .map(|role| Role::parse(&role))
            .transpose()
            .map_err(|error| StoreError::Corrupt(format!("one_time_links.role: {error}")))?,
    })
}

#[async_trait]
impl AccountStore for ThisStore {
    async fn create_user(
        &self,
        user: &User,
        password_hash: &str,
        membership: Option<&Membership>,
        first_owner_link: Option<&str>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        // Spending every first-owner link also orders two creations racing on PostgreSQL: the
        // second waits for the first's row locks and then finds the links used.
        let spent = sqlx::query(
            "UPDATE one_time_links SET used_at = $1 WHERE purpose = 'first-owner' AND used_at IS NULL \
             RETURNING token_hash, expires_at",
        )
        .bind(user.created_at)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_write_error)?;
        if let Some(token_hash) = first_owner_link {
            let link_valid = spent.iter().any(|row| {
                row.try_get::<String, _>("token_hash").is_ok_and(|hash| hash == token_hash)
                    && row.try_get::<i64, _>("expires_at").is_ok_and(|at| at > user.created_at)
            });
            let users: i64 = sqlx::query("SELECT COUNT(*) AS n FROM users").fetch_one(&mut *tx).await?.try_get("n")?;
            if !link_valid || users > 0 {
                return Err(StoreError::NotFound);
            }
        }
        sqlx::query(
            "INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
        )
        .bind(&user.id)
        .bind(&user.email)
        .bind(&user.name)
        .bind(password_hash)
        .bind(user.created_at)
        .execute(&mut *tx)
        .await
        .map_err(map_write_error)?;
        if let Some(membership) = membership {
            sqlx::query("INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
                .bind(&membership.org_id)
                .bind(&membership.user_id)
                .bind(membership.role.as_str())
                .bind(membership.created_at)
                .execute(&mut *tx)
                .await
                .map_err(map_write_error)?;
        }
        self.commit_write(tx).await
    }

    async fn get_user(&self, id: &str) -> StoreResult<Option<User>> {
        let row = sqlx::query(concat!("SELECT ", user_columns!(), " FROM users WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(user).transpose()
    }

    async fn find_user_by_email(&self, email: &str) -> StoreResult<Option<(User, String)>> {
        let row = sqlx::query(concat!("SELECT ", user_columns!(), ", password_hash FROM users WHERE email = $1"))
            .bind(email)
            .fetch_optional(self.read_pool())
            .await?;
        match row {
            Some(row) => Ok(Some((user(&row)?, row.try_get("password_hash")?))),
            None => Ok(None),
        }
    }

    async fn set_password_hash(&self, user_id: &str, password_hash: &str, at: i64) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3")
            .bind(password_hash)
            .bind(at)
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        // Whoever knew the old password is signed out with it.
        sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_write_error)?;
        self.commit_write(tx).await
    }

    async fn count_users(&self) -> StoreResult<i64> {
        Ok(sqlx::query("SELECT COUNT(*) AS n FROM users").fetch_one(self.read_pool()).await?.try_get("n")?)
    }

    async fn put_membership(&self, membership: &Membership) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
        )
        .bind(&membership.org_id)
        .bind(&membership.user_id)
        .bind(membership.role.as_str())
        .bind(membership.created_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn list_memberships(&self, user_id: &str) -> StoreResult<Vec<Membership>> {
        let rows = sqlx::query(
            "SELECT org_id, user_id, role, created_at FROM memberships WHERE user_id = $1 ORDER BY created_at, org_id",
        )
        .bind(user_id)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(membership).collect()
    }

    async fn list_members(&self, org_id: &str) -> StoreResult<Vec<(User, Membership)>> {
        let rows = sqlx::query(
            "SELECT u.id, u.email, u.name, u.created_at, m.org_id, m.user_id, m.role, m.created_at AS joined_at \
             FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY u.name, u.email",
        )
        .bind(org_id)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter()
            .map(|row| {
                let role: String = row.try_get("role")?;
                let membership = Membership {
                    org_id: row.try_get("org_id")?,
                    user_id: row.try_get("user_id")?,
                    role: Role::parse(&role)
                        .map_err(|error| StoreError::Corrupt(format!("memberships.role: {error}")))?,
                    created_at: row.try_get("joined_at")?,
                };
                Ok((user(row)?, membership))
            })
            .collect()
    }

    async fn create_session(&self, session: &Session) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&session.id_hash)
        .bind(&session.user_id)
        .bind(session.created_at)
        .bind(session.last_seen_at)
        .bind(session.expires_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn get_session(&self, id_hash: &str, now: i64) -> StoreResult<Option<Session>> {
        let row = sqlx::query(
            "SELECT id_hash, user_id, created_at, last_seen_at, expires_at FROM sessions \
             WHERE id_hash = $1 AND expires_at > $2",
        )
        .bind(id_hash)
        .bind(now)
        .fetch_optional(self.read_pool())
        .await?;
        row.as_ref().map(session).transpose()
    }

    async fn touch_session(&self, id_hash: &str, last_seen_at: i64, expires_at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE sessions SET last_seen_at = $1, expires_at = $2 WHERE id_hash = $3")
            .bind(last_seen_at)
            .bind(expires_at)
            .bind(id_hash)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn delete_session(&self, id_hash: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn delete_user_sessions(&self, user_id: &str) -> StoreResult<u64> {
        let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(done.rows_affected())
    }

    async fn create_link(&self, link: &OneTimeLink) -> StoreResult<()> {
        sqlx::query(concat!("INSERT INTO one_time_links (", link_columns!(), ") VALUES ($1, $2, $3, $4, $5, $6, $7)"))
            .bind(&link.token_hash)
            .bind(link.purpose.as_str())
            .bind(&link.org_id)
            .bind(&link.user_id)
            .bind(link.created_at)
            .bind(link.expires_at)
            .bind(link.role.map(Role::as_str))
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn peek_link(&self, token_hash: &str, now: i64) -> StoreResult<Option<OneTimeLink>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            link_columns!(),
            " FROM one_time_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2"
        ))
        .bind(token_hash)
        .bind(now)
        .fetch_optional(self.read_pool())
        .await?;
        row.as_ref().map(link).transpose()
    }

    async fn take_link(&self, token_hash: &str, now: i64) -> StoreResult<Option<OneTimeLink>> {
        // One statement, so two requests racing with the same link cannot both win.
        let row = sqlx::query(concat!(
            "UPDATE one_time_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 \
             RETURNING ",
            link_columns!()
        ))
        .bind(token_hash)
        .bind(now)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?;
        row.as_ref().map(link).transpose()
    }

    async fn viewed_among(&self, viewer: &str, report_ids: &[String]) -> StoreResult<Vec<String>> {
        if report_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = sqlx::QueryBuilder::<super::Db>::new("SELECT report_id FROM viewed_marks WHERE viewer = ");
        query.push_bind(viewer.to_string()).push(" AND report_id IN (");
        let mut ids = query.separated(", ");
        for id in report_ids {
            ids.push_bind(id.clone());
        }
        query.push(")");
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(|row| Ok(row.try_get("report_id")?)).collect()
    }

    async fn delete_expired_accounts_rows(&self, now: i64) -> StoreResult<u64> {
        let sessions = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        let links = sqlx::query("DELETE FROM one_time_links WHERE expires_at <= $1")
            .bind(now)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(sessions.rows_affected() + links.rows_affected())
    }
}
