//! Where a project's widget was last seen: queries written once, compiled per backend like
//! `queries.rs`.

use async_trait::async_trait;
use sqlx::Row;

use super::ThisStore;
use crate::{SightingStore, StoreResult, WidgetSighting};

#[async_trait]
impl SightingStore for ThisStore {
    async fn record_sighting(&self, sighting: &WidgetSighting) -> StoreResult<()> {
        // One row per project; an older sighting (from a slower instance) never replaces a newer one.
        sqlx::query(
            "INSERT INTO widget_sightings (project_id, url, source, seen_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (project_id) DO UPDATE SET url = excluded.url, source = excluded.source, \
             seen_at = excluded.seen_at WHERE widget_sightings.seen_at <= excluded.seen_at",
        )
        .bind(&sighting.project_id)
        .bind(&sighting.url)
        .bind(&sighting.source)
        .bind(sighting.seen_at)
        .execute(self.write_pool())
        .await?;
        Ok(())
    }

    async fn get_sighting(&self, project_id: &str) -> StoreResult<Option<WidgetSighting>> {
        let row = sqlx::query("SELECT project_id, url, source, seen_at FROM widget_sightings WHERE project_id = $1")
            .bind(project_id)
            .fetch_optional(self.read_pool())
            .await?;
        row.map(|row| {
            Ok(WidgetSighting {
                project_id: row.try_get("project_id")?,
                url: row.try_get("url")?,
                source: row.try_get("source")?,
                seen_at: row.try_get("seen_at")?,
            })
        })
        .transpose()
    }
}
