//! Mail: the outbox, each person's mail settings per project and the service's mail state. Queries
//! written once, compiled per backend like `queries.rs`.
//!
//! Several instances may send from one PostgreSQL database: a sender claims due messages with one
//! `UPDATE` whose conditions are checked again on the row it changes (PostgreSQL re-reads a row
//! another transaction changed meanwhile; SQLite has one writer), so two senders never hold the
//! same message, and a message whose sender died is taken again once its lease ends.

use async_trait::async_trait;
use sqlx::{QueryBuilder, Row};
use svc_core::mail::{MailKind, MailPreference, NewReports, OutboxMail, Subscriber};

use super::{Db, DbRow, ThisStore, map_write_error};
use crate::{MailStore, StoreError, StoreResult};

macro_rules! outbox_columns {
    () => {
        "id, org_id, project_id, recipient, subject, body, kind, dedupe_key, unsubscribe_url, created_at, \
         expires_at, next_attempt_at, attempts, last_error, sent_at, given_up_at"
    };
}

/// The columns of `mail_preferences p`.
macro_rules! preference_columns {
    () => {
        "p.user_id, p.project_id, p.new_reports, p.replies, p.reports_since, p.digest_through"
    };
}

fn outbox_mail(row: &DbRow) -> StoreResult<OutboxMail> {
    let kind: String = row.try_get("kind")?;
    Ok(OutboxMail {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        project_id: row.try_get("project_id")?,
        recipient: row.try_get("recipient")?,
        subject: row.try_get("subject")?,
        body: row.try_get("body")?,
        kind: MailKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("mail_outbox.kind: {kind:?}")))?,
        dedupe_key: row.try_get("dedupe_key")?,
        unsubscribe_url: row.try_get("unsubscribe_url")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
        attempts: row.try_get("attempts")?,
        last_error: row.try_get("last_error")?,
        sent_at: row.try_get("sent_at")?,
        given_up_at: row.try_get("given_up_at")?,
    })
}

fn new_reports(text: &str) -> StoreResult<NewReports> {
    NewReports::parse(text).map_err(|_| StoreError::Corrupt(format!("mail_preferences.new_reports: {text:?}")))
}

fn preference(row: &DbRow) -> StoreResult<MailPreference> {
    let mode: String = row.try_get("new_reports")?;
    Ok(MailPreference {
        user_id: row.try_get("user_id")?,
        project_id: row.try_get("project_id")?,
        new_reports: new_reports(&mode)?,
        replies: row.try_get("replies")?,
        reports_since: row.try_get("reports_since")?,
        digest_through: row.try_get("digest_through")?,
    })
}

/// A subscriber row: the person's user id, email and name, and their preference columns (absent
/// when they kept the defaults: `LEFT JOIN`).
fn subscriber(row: &DbRow, project_id: Option<&str>) -> StoreResult<Subscriber> {
    let user_id: String = row.try_get("member_id")?;
    let project_id: String = match project_id {
        Some(id) => id.to_string(),
        None => row.try_get("project_id")?,
    };
    let stored: Option<String> = row.try_get("new_reports")?;
    let preference = match stored {
        Some(_) => preference(row)?,
        None => MailPreference::default_for(&user_id, &project_id),
    };
    Ok(Subscriber { email: row.try_get("email")?, name: row.try_get("name")?, user_id, project_id, preference })
}

/// Queues one message unless its dedupe key is in the outbox already (also inside a change's
/// transaction, see `apply`); whether it was queued.
pub(super) async fn insert_mail<'e>(
    executor: impl sqlx::Executor<'e, Database = super::Db>,
    mail: &OutboxMail,
) -> StoreResult<bool> {
    let done = sqlx::query(concat!(
        "INSERT INTO mail_outbox (",
        outbox_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
         ON CONFLICT (dedupe_key) DO NOTHING"
    ))
    .bind(&mail.id)
    .bind(&mail.org_id)
    .bind(&mail.project_id)
    .bind(&mail.recipient)
    .bind(&mail.subject)
    .bind(&mail.body)
    .bind(mail.kind.as_str())
    .bind(&mail.dedupe_key)
    .bind(&mail.unsubscribe_url)
    .bind(mail.created_at)
    .bind(mail.expires_at)
    .bind(mail.next_attempt_at)
    .bind(mail.attempts)
    .bind(&mail.last_error)
    .bind(mail.sent_at)
    .bind(mail.given_up_at)
    .execute(executor)
    .await
    .map_err(map_write_error)?;
    Ok(done.rows_affected() == 1)
}

#[async_trait]
impl MailStore for ThisStore {
    async fn queue_mail(&self, mail: &OutboxMail) -> StoreResult<bool> {
        insert_mail(self.write_pool(), mail).await
    }

    async fn claim_due_mail(&self, now: i64, lease_until: i64, limit: u32) -> StoreResult<Vec<OutboxMail>> {
        // The outer conditions repeat the inner ones: PostgreSQL checks them again on a row another
        // sender changed meanwhile, so a message already claimed (its time moved on) is skipped.
        let rows = sqlx::query(concat!(
            "UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = $2 \
             WHERE id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND given_up_at IS NULL \
             AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $3) \
             AND sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= $1 \
             RETURNING ",
            outbox_columns!()
        ))
        .bind(now)
        .bind(lease_until)
        .bind(i64::from(limit))
        .fetch_all(self.write_pool())
        .await?;
        let mut claimed = rows.iter().map(outbox_mail).collect::<StoreResult<Vec<_>>>()?;
        claimed.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
        Ok(claimed)
    }

    async fn mail_due(&self, now: i64) -> StoreResult<bool> {
        let row = sqlx::query(
            "SELECT id FROM mail_outbox WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= $1 LIMIT 1",
        )
        .bind(now)
        .fetch_optional(self.read_pool())
        .await?;
        Ok(row.is_some())
    }

    async fn mail_sent(&self, id: &str, at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE mail_outbox SET sent_at = $2, last_error = NULL WHERE id = $1")
            .bind(id)
            .bind(at)
            .execute(self.write_pool())
            .await?;
        Ok(())
    }

    async fn mail_failed(&self, id: &str, error: &str, retry_at: Option<i64>, at: i64) -> StoreResult<()> {
        sqlx::query(
            "UPDATE mail_outbox SET last_error = $2, next_attempt_at = COALESCE($3, next_attempt_at), \
             given_up_at = CASE WHEN $3 IS NULL THEN $4 ELSE NULL END WHERE id = $1 AND sent_at IS NULL",
        )
        .bind(id)
        .bind(error)
        .bind(retry_at)
        .bind(at)
        .execute(self.write_pool())
        .await?;
        Ok(())
    }

    async fn list_outbox(&self, org_ids: &[String], before: Option<&str>, limit: u32) -> StoreResult<Vec<OutboxMail>> {
        if org_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query =
            QueryBuilder::<Db>::new(concat!("SELECT ", outbox_columns!(), " FROM mail_outbox WHERE org_id IN ("));
        let mut list = query.separated(", ");
        for org_id in org_ids {
            list.push_bind(org_id);
        }
        query.push(")");
        if let Some(before) = before {
            query.push(" AND id < ").push_bind(before);
        }
        query.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(outbox_mail).collect()
    }

    async fn get_outbox_mail(&self, id: &str) -> StoreResult<Option<OutboxMail>> {
        let row = sqlx::query(concat!("SELECT ", outbox_columns!(), " FROM mail_outbox WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read_pool())
            .await?;
        row.as_ref().map(outbox_mail).transpose()
    }

    async fn delete_old_mail(&self, created_before: i64) -> StoreResult<u64> {
        let done = sqlx::query(
            "DELETE FROM mail_outbox WHERE created_at < $1 AND (sent_at IS NOT NULL OR given_up_at IS NOT NULL)",
        )
        .bind(created_before)
        .execute(self.write_pool())
        .await?;
        Ok(done.rows_affected())
    }

    async fn mail_preferences(&self, user_id: &str) -> StoreResult<Vec<MailPreference>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            preference_columns!(),
            " FROM mail_preferences p WHERE p.user_id = $1 ORDER BY p.project_id"
        ))
        .bind(user_id)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(preference).collect()
    }

    async fn put_mail_preference(&self, preference: &MailPreference) -> StoreResult<()> {
        // `reports_since` and `digest_through` start again only when the new-reports choice
        // changes: turning replies on or off moves neither.
        sqlx::query(
            "INSERT INTO mail_preferences (user_id, project_id, new_reports, replies, reports_since, digest_through) \
             VALUES ($1, $2, $3, $4, $5, NULL) \
             ON CONFLICT (user_id, project_id) DO UPDATE SET new_reports = excluded.new_reports, \
             replies = excluded.replies, \
             reports_since = CASE WHEN mail_preferences.new_reports = excluded.new_reports \
               THEN mail_preferences.reports_since ELSE excluded.reports_since END, \
             digest_through = CASE WHEN mail_preferences.new_reports = excluded.new_reports \
               THEN mail_preferences.digest_through ELSE NULL END",
        )
        .bind(&preference.user_id)
        .bind(&preference.project_id)
        .bind(preference.new_reports.as_str())
        .bind(preference.replies)
        .bind(preference.reports_since)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn set_digest_through(&self, user_id: &str, project_id: &str, through: i64) -> StoreResult<()> {
        sqlx::query(
            "UPDATE mail_preferences SET digest_through = $3 WHERE user_id = $1 AND project_id = $2 \
             AND (digest_through IS NULL OR digest_through < $3)",
        )
        .bind(user_id)
        .bind(project_id)
        .bind(through)
        .execute(self.write_pool())
        .await?;
        Ok(())
    }

    async fn report_subscribers(&self, mode: NewReports) -> StoreResult<Vec<Subscriber>> {
        let rows = sqlx::query(concat!(
            "SELECT p.user_id AS member_id, u.email, u.name, ",
            preference_columns!(),
            " FROM mail_preferences p \
             JOIN projects pr ON pr.id = p.project_id \
             JOIN memberships m ON m.org_id = pr.org_id AND m.user_id = p.user_id \
             JOIN users u ON u.id = p.user_id \
             WHERE p.new_reports = $1 ORDER BY p.project_id, p.user_id"
        ))
        .bind(mode.as_str())
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(|row| subscriber(row, None)).collect()
    }

    async fn reply_subscribers(&self, project_id: &str) -> StoreResult<Vec<Subscriber>> {
        let rows = sqlx::query(concat!(
            "SELECT m.user_id AS member_id, u.email, u.name, ",
            preference_columns!(),
            " FROM projects pr \
             JOIN memberships m ON m.org_id = pr.org_id \
             JOIN users u ON u.id = m.user_id \
             LEFT JOIN mail_preferences p ON p.user_id = m.user_id AND p.project_id = pr.id \
             WHERE pr.id = $1 AND (p.replies IS NULL OR p.replies) ORDER BY m.user_id"
        ))
        .bind(project_id)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(|row| subscriber(row, Some(project_id))).collect()
    }

    async fn count_reports_between(&self, project_id: &str, from_id: &str, until_id: &str) -> StoreResult<i64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM reports WHERE project_id = $1 AND id >= $2 AND id < $3")
            .bind(project_id)
            .bind(from_id)
            .bind(until_id)
            .fetch_one(self.read_pool())
            .await?;
        Ok(row.try_get("n")?)
    }

    async fn mail_state(&self, name: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT value FROM mail_state WHERE name = $1")
            .bind(name)
            .fetch_optional(self.read_pool())
            .await?;
        Ok(row.map(|row| row.try_get("value")).transpose()?)
    }

    async fn init_mail_state(&self, name: &str, value: &str) -> StoreResult<String> {
        sqlx::query("INSERT INTO mail_state (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .bind(value)
            .execute(self.write_pool())
            .await?;
        // Read from the writer: whichever instance stored it first, this is the value.
        let row =
            sqlx::query("SELECT value FROM mail_state WHERE name = $1").bind(name).fetch_one(self.write_pool()).await?;
        Ok(row.try_get("value")?)
    }
}
