//! Reporter sign-in: mailed codes, widget sessions and pending OpenID Connect popups. Queries
//! written once, compiled per backend like `queries.rs`.
//!
//! Every try of a code counts before it is compared (one `UPDATE ... RETURNING`), so tries sent
//! in parallel cannot get past the limit; a code is used once (`consumed_at` is set only where it
//! is still NULL), and a popup's state is taken once (`DELETE ... RETURNING`).

use async_trait::async_trait;
use sqlx::Row;
use svc_core::reporter::{OidcState, Reporter, ReporterSession, SignInCode, SignInMethod};

use super::{DbRow, ThisStore, map_write_error};
use crate::{ReporterStore, StoreError, StoreResult};

macro_rules! code_columns {
    () => {
        "id, project_id, email, code_hash, created_at, expires_at, attempts, consumed_at"
    };
}

macro_rules! session_columns {
    () => {
        "id, project_id, secret_hash, reporter_id, email, name, method, created_at, last_used_at, expires_at"
    };
}

macro_rules! oidc_state_columns {
    () => {
        "state_hash, project_id, origin, code_verifier, nonce, created_at, expires_at"
    };
}

fn sign_in_code(row: &DbRow) -> StoreResult<SignInCode> {
    Ok(SignInCode {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        email: row.try_get("email")?,
        code_hash: row.try_get("code_hash")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        attempts: row.try_get("attempts")?,
        consumed_at: row.try_get("consumed_at")?,
    })
}

fn session(row: &DbRow) -> StoreResult<ReporterSession> {
    let method: String = row.try_get("method")?;
    Ok(ReporterSession {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        secret_hash: row.try_get("secret_hash")?,
        reporter: Reporter {
            id: row.try_get("reporter_id")?,
            email: row.try_get("email")?,
            name: row.try_get("name")?,
            method: SignInMethod::parse(&method)
                .ok_or_else(|| StoreError::Corrupt(format!("reporter_sessions.method: {method:?}")))?,
        },
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

fn oidc_state(row: &DbRow) -> StoreResult<OidcState> {
    Ok(OidcState {
        state_hash: row.try_get("state_hash")?,
        project_id: row.try_get("project_id")?,
        origin: row.try_get("origin")?,
        code_verifier: row.try_get("code_verifier")?,
        nonce: row.try_get("nonce")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

#[async_trait]
impl ReporterStore for ThisStore {
    async fn create_sign_in_code(&self, code: &SignInCode) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO reporter_codes (",
            code_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ))
        .bind(&code.id)
        .bind(&code.project_id)
        .bind(&code.email)
        .bind(&code.code_hash)
        .bind(code.created_at)
        .bind(code.expires_at)
        .bind(code.attempts)
        .bind(code.consumed_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn count_sign_in_codes(&self, project_id: &str, email: &str, since: i64) -> StoreResult<i64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM reporter_codes WHERE project_id = $1 AND email = $2 AND created_at >= $3",
        )
        .bind(project_id)
        .bind(email)
        .bind(since)
        .fetch_one(self.read_pool())
        .await?;
        Ok(row.try_get("n")?)
    }

    async fn latest_sign_in_code(&self, project_id: &str, email: &str) -> StoreResult<Option<SignInCode>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            code_columns!(),
            " FROM reporter_codes WHERE project_id = $1 AND email = $2 ORDER BY created_at DESC, id DESC LIMIT 1"
        ))
        .bind(project_id)
        .bind(email)
        // From the writer: a code stored a moment ago must be found.
        .fetch_optional(self.write_pool())
        .await?;
        row.as_ref().map(sign_in_code).transpose()
    }

    async fn count_sign_in_code_try(&self, id: &str) -> StoreResult<Option<i64>> {
        let row = sqlx::query(
            "UPDATE reporter_codes SET attempts = attempts + 1 WHERE id = $1 AND consumed_at IS NULL RETURNING attempts",
        )
        .bind(id)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?;
        row.map(|row| Ok(row.try_get("attempts")?)).transpose()
    }

    async fn consume_sign_in_code(&self, id: &str, at: i64) -> StoreResult<bool> {
        let result = sqlx::query("UPDATE reporter_codes SET consumed_at = $2 WHERE id = $1 AND consumed_at IS NULL")
            .bind(id)
            .bind(at)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(result.rows_affected() == 1)
    }

    async fn create_reporter_session(&self, session: &ReporterSession) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO reporter_sessions (",
            session_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(&session.id)
        .bind(&session.project_id)
        .bind(&session.secret_hash)
        .bind(&session.reporter.id)
        .bind(&session.reporter.email)
        .bind(&session.reporter.name)
        .bind(session.reporter.method.as_str())
        .bind(session.created_at)
        .bind(session.last_used_at)
        .bind(session.expires_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn reporter_session(&self, secret_hash: &str) -> StoreResult<Option<ReporterSession>> {
        let row = sqlx::query(concat!("SELECT ", session_columns!(), " FROM reporter_sessions WHERE secret_hash = $1"))
            .bind(secret_hash)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(session).transpose()
    }

    async fn touch_reporter_session(&self, id: &str, last_used_at: i64, expires_at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE reporter_sessions SET last_used_at = $2, expires_at = $3 WHERE id = $1")
            .bind(id)
            .bind(last_used_at)
            .bind(expires_at)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn delete_reporter_session(&self, id: &str) -> StoreResult<bool> {
        let result = sqlx::query("DELETE FROM reporter_sessions WHERE id = $1")
            .bind(id)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(result.rows_affected() == 1)
    }

    async fn put_oidc_state(&self, state: &OidcState) -> StoreResult<()> {
        sqlx::query(concat!(
            "INSERT INTO reporter_oidc_states (",
            oidc_state_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7)"
        ))
        .bind(&state.state_hash)
        .bind(&state.project_id)
        .bind(&state.origin)
        .bind(&state.code_verifier)
        .bind(&state.nonce)
        .bind(state.created_at)
        .bind(state.expires_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn take_oidc_state(&self, state_hash: &str, now: i64) -> StoreResult<Option<OidcState>> {
        let row = sqlx::query(concat!(
            "DELETE FROM reporter_oidc_states WHERE state_hash = $1 RETURNING ",
            oidc_state_columns!()
        ))
        .bind(state_hash)
        .fetch_optional(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(row.as_ref().map(oidc_state).transpose()?.filter(|state| state.expires_at > now))
    }

    async fn delete_stale_reporter_rows(&self, now: i64, codes_before: i64) -> StoreResult<u64> {
        let mut deleted = 0;
        for (statement, bound) in [
            // Codes are kept past their expiry for the per-address count.
            ("DELETE FROM reporter_codes WHERE created_at < $1", codes_before),
            ("DELETE FROM reporter_sessions WHERE expires_at <= $1", now),
            ("DELETE FROM reporter_oidc_states WHERE expires_at <= $1", now),
        ] {
            deleted += sqlx::query(statement)
                .bind(bound)
                .execute(self.write_pool())
                .await
                .map_err(map_write_error)?
                .rows_affected();
        }
        Ok(deleted)
    }
}
