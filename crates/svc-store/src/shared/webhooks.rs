//! Webhooks: endpoints, their deliveries and the attempts at them. Queries written once, compiled
//! per backend like `queries.rs`.
//!
//! Several instances may deliver from one PostgreSQL database: a sender claims due deliveries with
//! one `UPDATE` whose conditions are checked again on the row it changes (as the mail outbox does),
//! so two senders never hold the same delivery, and one whose sender died is taken again once its
//! lease ends.

use async_trait::async_trait;
use sqlx::{QueryBuilder, Row};
use svc_core::secret::Secret;
use svc_core::webhook::{DeliveryState, Webhook, WebhookAttempt, WebhookDelivery, WebhookFormat};

use super::{Db, DbRow, ThisStore, map_write_error};
use crate::{AttemptOutcome, StoreError, StoreResult, WebhookStore};

macro_rules! webhook_columns {
    () => {
        "id, project_id, url, events, events_default, description, format, enabled, disabled_reason, secret, \
         previous_secret, previous_until, failing_since, paused_until, created_at, updated_at, enabled_at"
    };
}

macro_rules! delivery_columns {
    () => {
        "id, webhook_id, project_id, event_id, message_id, event_type, state, attempts, next_attempt_at, \
         last_status, last_error, last_attempt_at, last_duration_ms, created_at, delivered_at, payload_key"
    };
}

fn webhook(row: &DbRow) -> StoreResult<Webhook> {
    let events: String = row.try_get("events")?;
    let format: String = row.try_get("format")?;
    Ok(Webhook {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        url: row.try_get("url")?,
        events: serde_json::from_str(&events)
            .map_err(|error| StoreError::Corrupt(format!("webhooks.events: {error}")))?,
        events_default: row.try_get("events_default")?,
        description: row.try_get("description")?,
        format: WebhookFormat::parse(&format)
            .map_err(|error| StoreError::Corrupt(format!("webhooks.format: {error}")))?,
        enabled: row.try_get("enabled")?,
        disabled_reason: row.try_get("disabled_reason")?,
        secret: Secret::new(row.try_get::<String, _>("secret")?),
        previous_secret: row.try_get::<Option<String>, _>("previous_secret")?.map(Secret::new),
        previous_until: row.try_get("previous_until")?,
        failing_since: row.try_get("failing_since")?,
        paused_until: row.try_get("paused_until")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        enabled_at: row.try_get("enabled_at")?,
    })
}

fn delivery(row: &DbRow) -> StoreResult<WebhookDelivery> {
    let state: String = row.try_get("state")?;
    Ok(WebhookDelivery {
        id: row.try_get("id")?,
        webhook_id: row.try_get("webhook_id")?,
        project_id: row.try_get("project_id")?,
        event_id: row.try_get("event_id")?,
        message_id: row.try_get("message_id")?,
        event_type: row.try_get("event_type")?,
        // Read apart (`with_payloads`) where it is sent.
        payload: String::new(),
        shares_payload_of: row.try_get("payload_key")?,
        state: DeliveryState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("webhook_deliveries.state: {state:?}")))?,
        attempts: row.try_get("attempts")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
        last_status: row.try_get("last_status")?,
        last_error: row.try_get("last_error")?,
        last_attempt_at: row.try_get("last_attempt_at")?,
        last_duration_ms: row.try_get("last_duration_ms")?,
        created_at: row.try_get("created_at")?,
        delivered_at: row.try_get("delivered_at")?,
    })
}

fn attempt(row: &DbRow) -> StoreResult<WebhookAttempt> {
    Ok(WebhookAttempt {
        delivery_id: row.try_get("delivery_id")?,
        webhook_id: row.try_get("webhook_id")?,
        at: row.try_get("at")?,
        status: row.try_get("status")?,
        error: row.try_get("error")?,
        duration_ms: row.try_get("duration_ms")?,
    })
}

fn events_json(events: &[String]) -> String {
    serde_json::to_string(events).unwrap_or_else(|_| "[]".into())
}

/// Binds every column of `hook` as `$1`..`$17`, in the order of `webhook_columns!`.
fn bind_webhook<'q>(
    query: sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments>,
    hook: &'q Webhook,
) -> sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments> {
    query
        .bind(&hook.id)
        .bind(&hook.project_id)
        .bind(&hook.url)
        .bind(events_json(&hook.events))
        .bind(hook.events_default)
        .bind(&hook.description)
        .bind(hook.format.as_str())
        .bind(hook.enabled)
        .bind(&hook.disabled_reason)
        .bind(hook.secret.expose())
        .bind(hook.previous_secret.as_ref().map(Secret::expose))
        .bind(hook.previous_until)
        .bind(hook.failing_since)
        .bind(hook.paused_until)
        .bind(hook.created_at)
        .bind(hook.updated_at)
        .bind(hook.enabled_at)
}

/// Delivery rows per INSERT statement (16 parameters each, well under either backend's limit).
const DELIVERY_ROWS_PER_STATEMENT: usize = 500;

/// Makes each delivery unless its endpoint has one for that event already (also inside a change's
/// transaction, see `apply`); whether each was made, in order. A webhook round makes hundreds at
/// once: one statement for their rows and one for their bodies per 500, instead of two each, keeps
/// the transaction short on SQLite's single writer, which ingest shares (bench/README.md).
///
/// A body is stored once for the deliveries that share it (`shares_payload_of`), under the id of
/// the delivery they name: kept while any of them is (a trigger deletes it with the last), even
/// when that delivery itself was not made because its endpoint had one for the event already.
pub(super) async fn insert_deliveries(
    conn: &mut super::events::Connection,
    deliveries: &[&WebhookDelivery],
) -> StoreResult<Vec<bool>> {
    let mut made: std::collections::HashSet<&str> = std::collections::HashSet::with_capacity(deliveries.len());
    for chunk in deliveries.chunks(DELIVERY_ROWS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Db>::new(concat!("INSERT INTO webhook_deliveries (", delivery_columns!(), ") "));
        query.push_values(chunk, |mut row, delivery| {
            row.push_bind(delivery.id.clone())
                .push_bind(delivery.webhook_id.clone())
                .push_bind(delivery.project_id.clone())
                .push_bind(delivery.event_id)
                .push_bind(delivery.message_id.clone())
                .push_bind(delivery.event_type.clone())
                .push_bind(delivery.state.as_str())
                .push_bind(delivery.attempts)
                .push_bind(delivery.next_attempt_at)
                .push_bind(delivery.last_status)
                .push_bind(delivery.last_error.clone())
                .push_bind(delivery.last_attempt_at)
                .push_bind(delivery.last_duration_ms)
                .push_bind(delivery.created_at)
                .push_bind(delivery.delivered_at)
                .push_bind(delivery.shares_payload_of.clone());
        });
        query.push(" ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id");
        let inserted: Vec<String> = query.build_query_scalar().fetch_all(&mut *conn).await.map_err(map_write_error)?;
        let inserted: std::collections::HashSet<String> = inserted.into_iter().collect();
        made.extend(chunk.iter().filter(|delivery| inserted.contains(&delivery.id)).map(|d| d.id.as_str()));
    }
    // The bodies the deliveries made send, each once, under the id its sharers name (every
    // sharer carries the body too: the one it names need not be among these).
    let mut bodies: Vec<(&str, &str)> = Vec::new();
    let mut keys: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for delivery in deliveries.iter().filter(|delivery| made.contains(delivery.id.as_str())) {
        let key = delivery.shares_payload_of.as_deref().unwrap_or(&delivery.id);
        if keys.insert(key) {
            bodies.push((key, &delivery.payload));
        }
    }
    for chunk in bodies.chunks(DELIVERY_ROWS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Db>::new("INSERT INTO webhook_payloads (delivery_id, payload) ");
        query.push_values(chunk, |mut row, (key, payload)| {
            row.push_bind(key.to_string()).push_bind(payload.to_string());
        });
        // Kept already for another sharer (made in an earlier change): the same body.
        query.push(" ON CONFLICT (delivery_id) DO NOTHING");
        query.build().execute(&mut *conn).await.map_err(map_write_error)?;
    }
    Ok(deliveries.iter().map(|delivery| made.contains(delivery.id.as_str())).collect())
}

impl ThisStore {
    /// Fills in the bodies of `deliveries` (read apart from their rows).
    async fn with_payloads(&self, mut deliveries: Vec<WebhookDelivery>) -> StoreResult<Vec<WebhookDelivery>> {
        if deliveries.is_empty() {
            return Ok(deliveries);
        }
        let key =
            |delivery: &WebhookDelivery| delivery.shares_payload_of.clone().unwrap_or_else(|| delivery.id.clone());
        let mut keys: Vec<String> = deliveries.iter().map(key).collect();
        keys.sort();
        keys.dedup();
        let mut query =
            QueryBuilder::<Db>::new("SELECT delivery_id, payload FROM webhook_payloads WHERE delivery_id IN ");
        super::queries::push_list(&mut query, &keys);
        let rows = query.build().fetch_all(self.read_pool()).await?;
        let mut payloads: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        for row in rows {
            payloads.insert(row.try_get("delivery_id")?, row.try_get("payload")?);
        }
        for delivery in &mut deliveries {
            delivery.payload = payloads.get(&key(delivery)).cloned().unwrap_or_default();
        }
        Ok(deliveries)
    }
}

#[async_trait]
impl WebhookStore for ThisStore {
    async fn create_webhook(&self, hook: &Webhook) -> StoreResult<()> {
        let query = sqlx::query(concat!(
            "INSERT INTO webhooks (",
            webhook_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
        ));
        bind_webhook(query, hook).execute(self.write_pool()).await.map_err(map_write_error)?;
        Ok(())
    }

    async fn list_webhooks(&self, project_id: &str) -> StoreResult<Vec<Webhook>> {
        let rows =
            sqlx::query(concat!("SELECT ", webhook_columns!(), " FROM webhooks WHERE project_id = $1 ORDER BY id"))
                .bind(project_id)
                .fetch_all(self.read_pool())
                .await?;
        rows.iter().map(webhook).collect()
    }

    async fn any_enabled_webhook(&self) -> StoreResult<bool> {
        let found = sqlx::query("SELECT id FROM webhooks WHERE enabled = TRUE LIMIT 1")
            .fetch_optional(self.read_pool())
            .await?;
        Ok(found.is_some())
    }

    async fn enabled_webhooks(&self, project_ids: &[String]) -> StoreResult<Vec<Webhook>> {
        if project_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = QueryBuilder::<Db>::new(concat!(
            "SELECT ",
            webhook_columns!(),
            " FROM webhooks WHERE enabled = TRUE AND project_id IN "
        ));
        super::queries::push_list(&mut query, project_ids);
        query.push(" ORDER BY id");
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(webhook).collect()
    }

    async fn get_webhook(&self, project_id: &str, id: &str) -> StoreResult<Option<Webhook>> {
        let row =
            sqlx::query(concat!("SELECT ", webhook_columns!(), " FROM webhooks WHERE id = $1 AND project_id = $2"))
                .bind(id)
                .bind(project_id)
                .fetch_optional(self.read_pool())
                .await?;
        row.as_ref().map(webhook).transpose()
    }

    async fn update_webhook(&self, hook: &Webhook) -> StoreResult<bool> {
        // The parameters of `bind_webhook`; the id, project, format and creation time stay.
        let query = sqlx::query(
            "UPDATE webhooks SET url = $3, events = $4, events_default = $5, description = $6, enabled = $8, \
             disabled_reason = $9, secret = $10, previous_secret = $11, previous_until = $12, failing_since = $13, \
             paused_until = $14, updated_at = $16, enabled_at = $17 WHERE id = $1 AND project_id = $2 AND format = $7 AND created_at = $15",
        );
        let done = bind_webhook(query, hook).execute(self.write_pool()).await.map_err(map_write_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_webhook(&self, project_id: &str, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM webhooks WHERE id = $1 AND project_id = $2")
            .bind(id)
            .bind(project_id)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        let deleted = done.rows_affected() == 1;
        if deleted {
            self.forget_deliveries(Some(&[id.to_string()])).await?;
        }
        Ok(deleted)
    }

    async fn queue_delivery(&self, delivery: &WebhookDelivery) -> StoreResult<bool> {
        let mut tx = self.begin_delivery_write().await?;
        let made = insert_deliveries(&mut tx, &[delivery]).await?;
        self.commit_write(tx).await?;
        Ok(made[0])
    }

    async fn deliveries_due(&self, now: i64) -> StoreResult<bool> {
        let row =
            sqlx::query("SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 LIMIT 1")
                .bind(now)
                .fetch_optional(self.read_pool())
                .await?;
        Ok(row.is_some())
    }

    async fn claim_due_deliveries(
        &self,
        now: i64,
        lease_until: i64,
        limit: u32,
        only: Option<&str>,
    ) -> StoreResult<Vec<WebhookDelivery>> {
        // The outer conditions repeat the inner ones: PostgreSQL checks them again on a row another
        // sender changed meanwhile, so a delivery already claimed (its time moved on) is skipped.
        // Only enabled endpoints' deliveries: a disabled one's wait until it is enabled again.
        let mut query = QueryBuilder::<Db>::new("UPDATE webhook_deliveries SET next_attempt_at = ");
        query.push_bind(lease_until);
        query.push(
            " WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
             WHERE d.state = 'pending' AND w.enabled = TRUE AND d.next_attempt_at <= ",
        );
        query.push_bind(now);
        match only {
            // "Resend" is asked for by a person: it goes even to an endpoint paused after a failure.
            Some(id) => {
                query.push(" AND d.id = ").push_bind(id.to_string());
            }
            None => {
                query.push(" AND (w.paused_until IS NULL OR w.paused_until <= ").push_bind(now).push(")");
            }
        }
        query.push(" ORDER BY d.next_attempt_at, d.id LIMIT ").push_bind(i64::from(limit));
        query.push(") AND state = 'pending' AND next_attempt_at <= ").push_bind(now);
        query.push(concat!(" RETURNING ", delivery_columns!()));
        let rows = query.build().fetch_all(self.delivery_pool()).await?;
        let mut claimed = rows.iter().map(delivery).collect::<StoreResult<Vec<_>>>()?;
        claimed.sort_by(|a, b| a.id.cmp(&b.id));
        self.with_payloads(claimed).await
    }

    async fn reschedule_deliveries(&self, ids: &[String], at: i64) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut query = QueryBuilder::<Db>::new("UPDATE webhook_deliveries SET next_attempt_at = ");
        query.push_bind(at).push(" WHERE state = 'pending' AND id IN ");
        super::queries::push_list(&mut query, ids);
        query.build().execute(self.delivery_pool()).await.map_err(map_write_error)?;
        Ok(())
    }

    async fn record_attempts(
        &self,
        webhook_id: &str,
        attempts: &[(WebhookAttempt, AttemptOutcome)],
        held: &[String],
    ) -> StoreResult<bool> {
        if attempts.is_empty() && held.is_empty() {
            return Ok(false);
        }
        let mut tx = self.begin_delivery_write().await?;
        // One statement per 500 attempts for their deliveries' state (a round sends up to 100 to
        // an endpoint), and one for the attempts logged apart (see `insert_deliveries`).
        let mut recorded: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for chunk in attempts.chunks(DELIVERY_ROWS_PER_STATEMENT) {
            // A VALUES list's columns are column1, column2, ... on both backends.
            let mut query = QueryBuilder::<Db>::new(
                "UPDATE webhook_deliveries SET state = v.column2, attempts = attempts + 1, \
                 next_attempt_at = COALESCE(v.column3, next_attempt_at), last_status = v.column4, \
                 last_error = v.column5, last_attempt_at = v.column6, last_duration_ms = v.column7, \
                 delivered_at = COALESCE(v.column8, delivered_at) FROM (",
            );
            query.push_values(chunk, |mut row, (attempt, outcome)| {
                let (state, next_attempt_at, delivered_at) = match outcome {
                    AttemptOutcome::Delivered => (DeliveryState::Delivered, None, Some(attempt.at)),
                    AttemptOutcome::Retry { at } => (DeliveryState::Pending, Some(*at), None),
                    AttemptOutcome::GiveUp => (DeliveryState::Failed, None, None),
                };
                row.push_bind(attempt.delivery_id.clone())
                    .push_bind(state.as_str())
                    .push_bind(next_attempt_at)
                    .push_bind(attempt.status)
                    .push_bind(attempt.error.clone())
                    .push_bind(attempt.at)
                    .push_bind(attempt.duration_ms)
                    .push_bind(delivered_at);
            });
            query.push(
                ") AS v WHERE webhook_deliveries.id = v.column1 \
                 RETURNING webhook_deliveries.id, webhook_deliveries.attempts",
            );
            let rows: Vec<(String, i64)> = query.build_query_as().fetch_all(&mut *tx).await.map_err(map_write_error)?;
            recorded.extend(rows);
        }
        // A delivery deleted meanwhile (its endpoint went) keeps no attempts; one delivered at its
        // first attempt has that attempt in its own row.
        let logged: Vec<&WebhookAttempt> = attempts
            .iter()
            .filter(|(attempt, outcome)| match recorded.get(&attempt.delivery_id) {
                None => false,
                Some(1) => !matches!(outcome, AttemptOutcome::Delivered),
                Some(_) => true,
            })
            .map(|(attempt, _)| attempt)
            .collect();
        for chunk in logged.chunks(DELIVERY_ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Db>::new(
                "INSERT INTO webhook_attempts (delivery_id, webhook_id, at, status, error, duration_ms) ",
            );
            query.push_values(chunk, |mut row, attempt| {
                row.push_bind(attempt.delivery_id.clone())
                    .push_bind(attempt.webhook_id.clone())
                    .push_bind(attempt.at)
                    .push_bind(attempt.status)
                    .push_bind(attempt.error.clone())
                    .push_bind(attempt.duration_ms);
            });
            query.build().execute(&mut *tx).await.map_err(map_write_error)?;
        }
        // The endpoint's health, from its last attempt: a success ends a run of failures and any
        // pause; a failure starts a run (or, when the run has lasted the whole retry window,
        // disables the endpoint) and pauses it until the failed delivery's retry, and the
        // deliveries held back behind it wait as long. The endpoint is written after the attempts
        // are committed (on SQLite they are in another file, see `sqlite::deliveries`), and only
        // when it changes: a healthy endpoint's rounds write nothing beside their deliveries.
        let failed = match attempts.last() {
            Some((attempt, outcome)) if !matches!(outcome, AttemptOutcome::Delivered) => {
                let resume_at = match outcome {
                    AttemptOutcome::Retry { at } => *at,
                    _ => attempt.at + svc_core::webhook::retry_delay_ms(1),
                };
                if !held.is_empty() {
                    let mut query = QueryBuilder::<Db>::new("UPDATE webhook_deliveries SET next_attempt_at = ");
                    query.push_bind(resume_at).push(" WHERE state = 'pending' AND id IN ");
                    super::queries::push_list(&mut query, held);
                    query.build().execute(&mut *tx).await.map_err(map_write_error)?;
                }
                Some((attempt, resume_at))
            }
            _ => None,
        };
        self.commit_write(tx).await?;
        let mut disabled = false;
        match failed {
            None if attempts.is_empty() => {}
            None => {
                let unwell: Option<bool> = sqlx::query_scalar(
                    "SELECT failing_since IS NOT NULL OR paused_until IS NOT NULL FROM webhooks WHERE id = $1",
                )
                .bind(webhook_id)
                .fetch_optional(self.read_pool())
                .await?;
                if unwell == Some(true) {
                    sqlx::query("UPDATE webhooks SET failing_since = NULL, paused_until = NULL WHERE id = $1")
                        .bind(webhook_id)
                        .execute(self.write_pool())
                        .await
                        .map_err(map_write_error)?;
                }
            }
            Some((attempt, resume_at)) => {
                // A success earlier in this round ended the previous run of failures.
                let new_run = attempts.iter().any(|(_, outcome)| matches!(outcome, AttemptOutcome::Delivered));
                let mut tx = self.begin_write().await?;
                sqlx::query(
                    "UPDATE webhooks SET paused_until = $3, \
                     failing_since = CASE WHEN $4 OR failing_since IS NULL THEN $2 ELSE failing_since END \
                     WHERE id = $1",
                )
                .bind(webhook_id)
                .bind(attempt.at)
                .bind(resume_at)
                .bind(new_run)
                .execute(&mut *tx)
                .await
                .map_err(map_write_error)?;
                let done = sqlx::query(
                    "UPDATE webhooks SET enabled = FALSE, disabled_reason = $3, updated_at = $2 \
                     WHERE id = $1 AND enabled = TRUE AND failing_since <= $2 - $4",
                )
                .bind(webhook_id)
                .bind(attempt.at)
                .bind("every delivery failed for 24 hours")
                .bind(svc_core::webhook::RETRY_WINDOW_MS)
                .execute(&mut *tx)
                .await
                .map_err(map_write_error)?;
                disabled = done.rows_affected() == 1;
                self.commit_write(tx).await?;
            }
        }
        Ok(disabled)
    }

    async fn list_deliveries(
        &self,
        webhook_id: &str,
        before: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<WebhookDelivery>> {
        let mut query = QueryBuilder::<Db>::new(concat!(
            "SELECT ",
            delivery_columns!(),
            " FROM webhook_deliveries WHERE webhook_id = "
        ));
        query.push_bind(webhook_id.to_string());
        if let Some(before) = before {
            query.push(" AND id < ").push_bind(before.to_string());
        }
        query.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(delivery).collect()
    }

    async fn get_delivery(&self, webhook_id: &str, id: &str) -> StoreResult<Option<WebhookDelivery>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            delivery_columns!(),
            " FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2"
        ))
        .bind(id)
        .bind(webhook_id)
        .fetch_optional(self.read_pool())
        .await?;
        row.as_ref().map(delivery).transpose()
    }

    async fn list_attempts(&self, delivery_ids: &[String]) -> StoreResult<Vec<WebhookAttempt>> {
        if delivery_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = QueryBuilder::<Db>::new(
            "SELECT delivery_id, webhook_id, at, status, error, duration_ms FROM webhook_attempts WHERE delivery_id IN ",
        );
        super::queries::push_list(&mut query, delivery_ids);
        query.push(" ORDER BY id");
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(attempt).collect()
    }

    async fn redeliver(&self, webhook_id: &str, id: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $3, created_at = $3 \
             WHERE id = $1 AND webhook_id = $2 AND (state <> 'pending' OR next_attempt_at > $3)",
        )
        .bind(id)
        .bind(webhook_id)
        .bind(now)
        .execute(self.delivery_pool())
        .await
        .map_err(map_write_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_old_deliveries(&self, created_before: i64) -> StoreResult<u64> {
        // Ids begin with their creation time (12 hex digits of milliseconds): the primary key finds them.
        let before_id = format!("{:012x}", created_before.max(0));
        let done = sqlx::query("DELETE FROM webhook_deliveries WHERE id < $1 AND state <> 'pending'")
            .bind(before_id)
            .execute(self.delivery_pool())
            .await
            .map_err(map_write_error)?;
        // And any whose endpoint went while its deliveries were not deleted with it (a crash in
        // between, where they are kept apart).
        let orphans = self.forget_deliveries(None).await?;
        Ok(done.rows_affected() + orphans)
    }
}
