//! Issue trackers: a project's connection, the issue each report became, and the tracker's
//! deliveries already handled. Queries written once, compiled per backend like `queries.rs`.

use async_trait::async_trait;
use sqlx::{QueryBuilder, Row};
use svc_core::secret::Secret;
use svc_core::tracker::{IssueLink, TrackerConnection, TrackerKind, TrackerSettings};

use super::{Db, DbRow, ThisStore, map_write_error};
use crate::{StoreError, StoreResult, TrackerStore};

macro_rules! connection_columns {
    () => {
        "project_id, tracker, repository_key, settings, credential, webhook_secret, last_error, last_error_at, \
         created_at, updated_at"
    };
}

macro_rules! link_columns {
    () => {
        "report_id, project_id, tracker, repository, repository_key, number, url, created_at"
    };
}

fn tracker_kind(row: &DbRow) -> StoreResult<TrackerKind> {
    let tracker: String = row.try_get("tracker")?;
    TrackerKind::parse(&tracker).ok_or_else(|| StoreError::Corrupt(format!("unknown tracker {tracker:?}")))
}

fn connection(row: &DbRow) -> StoreResult<TrackerConnection> {
    let settings: String = row.try_get("settings")?;
    let settings: TrackerSettings = serde_json::from_str(&settings)
        .map_err(|error| StoreError::Corrupt(format!("tracker_connections.settings: {error}")))?;
    Ok(TrackerConnection {
        project_id: row.try_get("project_id")?,
        tracker: tracker_kind(row)?,
        settings,
        credential: Secret::new(row.try_get::<String, _>("credential")?),
        webhook_secret: Secret::new(row.try_get::<String, _>("webhook_secret")?),
        last_error: row.try_get("last_error")?,
        last_error_at: row.try_get("last_error_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn link(row: &DbRow) -> StoreResult<IssueLink> {
    Ok(IssueLink {
        report_id: row.try_get("report_id")?,
        project_id: row.try_get("project_id")?,
        tracker: tracker_kind(row)?,
        repository: row.try_get("repository")?,
        number: row.try_get("number")?,
        url: row.try_get("url")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Records a delivery of the tracker's inside a change's transaction (see `apply`): `Conflict`
/// when it was handled already, so a replay changes nothing.
pub(super) async fn insert_delivery(
    conn: &mut super::events::Connection,
    tracker: TrackerKind,
    delivery_id: &str,
    at: i64,
) -> StoreResult<()> {
    let done = sqlx::query(
        "INSERT INTO tracker_deliveries (tracker, delivery_id, received_at) VALUES ($1, $2, $3) \
         ON CONFLICT (tracker, delivery_id) DO NOTHING",
    )
    .bind(tracker.as_str())
    .bind(delivery_id)
    .bind(at)
    .execute(&mut *conn)
    .await
    .map_err(map_write_error)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!("{} delivery {delivery_id} was handled already", tracker.name())));
    }
    Ok(())
}

#[async_trait]
impl TrackerStore for ThisStore {
    async fn put_tracker_connection(&self, connection: &TrackerConnection) -> StoreResult<()> {
        let settings = serde_json::to_string(&connection.settings)
            .map_err(|error| StoreError::Corrupt(format!("tracker settings: {error}")))?;
        sqlx::query(concat!(
            "INSERT INTO tracker_connections (",
            connection_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (project_id) DO UPDATE SET tracker = excluded.tracker, \
             repository_key = excluded.repository_key, settings = excluded.settings, \
             credential = excluded.credential, webhook_secret = excluded.webhook_secret, \
             last_error = excluded.last_error, last_error_at = excluded.last_error_at, \
             updated_at = excluded.updated_at"
        ))
        .bind(&connection.project_id)
        .bind(connection.tracker.as_str())
        .bind(connection.settings.repository_key())
        .bind(settings)
        .bind(connection.credential.expose())
        .bind(connection.webhook_secret.expose())
        .bind(&connection.last_error)
        .bind(connection.last_error_at)
        .bind(connection.created_at)
        .bind(connection.updated_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        Ok(())
    }

    async fn tracker_connection(&self, project_id: &str) -> StoreResult<Option<TrackerConnection>> {
        let row =
            sqlx::query(concat!("SELECT ", connection_columns!(), " FROM tracker_connections WHERE project_id = $1"))
                .bind(project_id)
                .fetch_optional(self.read_pool())
                .await?;
        row.as_ref().map(connection).transpose()
    }

    async fn tracker_connections_for(
        &self,
        tracker: TrackerKind,
        repository_key: &str,
    ) -> StoreResult<Vec<TrackerConnection>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            connection_columns!(),
            " FROM tracker_connections WHERE tracker = $1 AND repository_key = $2 ORDER BY project_id"
        ))
        .bind(tracker.as_str())
        .bind(repository_key)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(connection).collect()
    }

    async fn all_tracker_connections(&self) -> StoreResult<Vec<TrackerConnection>> {
        let rows =
            sqlx::query(concat!("SELECT ", connection_columns!(), " FROM tracker_connections ORDER BY project_id"))
                .fetch_all(self.read_pool())
                .await?;
        rows.iter().map(connection).collect()
    }

    async fn delete_tracker_connection(&self, project_id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM tracker_connections WHERE project_id = $1")
            .bind(project_id)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn set_tracker_error(&self, project_id: &str, error: Option<&str>, at: i64) -> StoreResult<()> {
        sqlx::query("UPDATE tracker_connections SET last_error = $2, last_error_at = $3 WHERE project_id = $1")
            .bind(project_id)
            .bind(error)
            .bind(error.map(|_| at))
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(())
    }

    async fn link_issue(&self, new: &IssueLink) -> StoreResult<IssueLink> {
        sqlx::query(concat!(
            "INSERT INTO issue_links (",
            link_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (report_id) DO NOTHING"
        ))
        .bind(&new.report_id)
        .bind(&new.project_id)
        .bind(new.tracker.as_str())
        .bind(&new.repository)
        .bind(new.repository.to_ascii_lowercase())
        .bind(new.number)
        .bind(&new.url)
        .bind(new.created_at)
        .execute(self.write_pool())
        .await
        .map_err(map_write_error)?;
        let links = self.issue_links(std::slice::from_ref(&new.report_id)).await?;
        links.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn issue_links(&self, report_ids: &[String]) -> StoreResult<Vec<IssueLink>> {
        if report_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query =
            QueryBuilder::<Db>::new(concat!("SELECT ", link_columns!(), " FROM issue_links WHERE report_id IN "));
        super::queries::push_list(&mut query, report_ids);
        let rows = query.build().fetch_all(self.read_pool()).await?;
        rows.iter().map(link).collect()
    }

    async fn links_to_issue(
        &self,
        tracker: TrackerKind,
        repository_key: &str,
        number: i64,
    ) -> StoreResult<Vec<IssueLink>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            link_columns!(),
            " FROM issue_links WHERE tracker = $1 AND repository_key = $2 AND number = $3 ORDER BY report_id"
        ))
        .bind(tracker.as_str())
        .bind(repository_key)
        .bind(number)
        .fetch_all(self.read_pool())
        .await?;
        rows.iter().map(link).collect()
    }

    async fn delete_old_tracker_deliveries(&self, received_before: i64) -> StoreResult<u64> {
        let done = sqlx::query("DELETE FROM tracker_deliveries WHERE received_at < $1")
            .bind(received_before)
            .execute(self.write_pool())
            .await
            .map_err(map_write_error)?;
        Ok(done.rows_affected())
    }
}
