//! The audit log: queries and row mapping written once, compiled per backend like `queries.rs`.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::Row;
use sqlx::types::Json;
use svc_core::audit::AuditEvent;
use svc_core::model::Author;

use super::{DbRow, ThisStore};
use crate::{AuditStore, StoreResult};

macro_rules! audit_columns {
    () => {
        "id, org_id, project_id, at, actor_kind, actor_id, actor_label, action, detail"
    };
}

fn event(row: &DbRow) -> StoreResult<AuditEvent> {
    let Json(detail): Json<Value> = row.try_get("detail")?;
    Ok(AuditEvent {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        project_id: row.try_get("project_id")?,
        at: row.try_get("at")?,
        actor: Author {
            kind: super::rows::author_kind(row, "actor_kind")?,
            id: row.try_get("actor_id")?,
            label: row.try_get("actor_label")?,
        },
        action: row.try_get("action")?,
        detail,
    })
}

/// One audit event (also written inside a change's transaction, see `apply`).
pub(super) async fn insert_audit<'e>(
    executor: impl sqlx::Executor<'e, Database = super::Db>,
    event: &AuditEvent,
) -> StoreResult<()> {
    sqlx::query(concat!(
        "INSERT INTO audit_events (",
        audit_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ))
    .bind(&event.id)
    .bind(&event.org_id)
    .bind(&event.project_id)
    .bind(event.at)
    .bind(event.actor.kind.as_str())
    .bind(&event.actor.id)
    .bind(&event.actor.label)
    .bind(&event.action)
    .bind(Json(&event.detail))
    .execute(executor)
    .await?;
    Ok(())
}

#[async_trait]
impl AuditStore for ThisStore {
    async fn record_audit(&self, event: &AuditEvent) -> StoreResult<()> {
        insert_audit(self.write_pool(), event).await
    }

    async fn list_audit(&self, project_id: &str, before: Option<&str>, limit: u32) -> StoreResult<Vec<AuditEvent>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            audit_columns!(),
            " FROM audit_events WHERE project_id = $1 AND (CAST($2 AS TEXT) IS NULL OR id < $2) ORDER BY id DESC LIMIT $3"
        ))
        .bind(project_id)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(event).collect()
    }

    async fn list_org_audit(&self, org_id: &str, before: Option<&str>, limit: u32) -> StoreResult<Vec<AuditEvent>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            audit_columns!(),
            " FROM audit_events WHERE org_id = $1 AND project_id IS NULL AND (CAST($2 AS TEXT) IS NULL OR id < $2) \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(org_id)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(event).collect()
    }
}
