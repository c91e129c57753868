//! Where each project's widget was last seen, for the dashboard's install page: the page and the
//! time the per-project loader was served or ingest heard from the widget (its configuration
//! request, a report).
//!
//! Recording is on the path of every loader and ingest request, so it only looks at memory: a
//! sighting is kept when the project's last kept one (on this instance) is a minute old, or when it
//! knows the page better (a report's `context.url` over a `Referer` that cross-origin requests cut
//! to the origin, either over nothing), so at most a few rows are written per project, minute and
//! instance. A task writes what was kept every [`FLUSH_INTERVAL`] (and on shutdown), like
//! [`super::usage`]; tests call [`Sightings::flush`] instead of waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use svc_store::{DynStore, WidgetSighting};

use super::ServiceResult;

const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

/// A project's sightings are kept at most this often (unless one knows the page better).
pub const RESOLUTION_MS: i64 = 60_000;

/// Longest page URL kept.
const URL_MAX_CHARS: usize = 2000;

/// What heard from the widget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The per-project loader was served (`Referer`).
    Loader,
    /// The widget asked ingest for its configuration (`Referer`, else `Origin`).
    Config,
    /// Ingest received a report (`context.url`, else `Referer` or `Origin`).
    Report,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Loader => "loader",
            Source::Config => "config",
            Source::Report => "report",
        }
    }
}

/// Where a sighting's page came from, from least to best known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PageKnown {
    /// No page (a request without `Referer` or `Origin`).
    Not,
    /// The request's `Referer` or `Origin` (cross-origin requests send only the origin).
    FromHeaders,
    /// The page's own address, as the widget read it (`context.url`).
    FromPage,
}

#[derive(Default)]
struct Inner {
    /// Project id → time and quality of the last sighting kept.
    kept: HashMap<String, (i64, PageKnown)>,
    /// Sightings waiting for their write, one per project.
    pending: HashMap<String, WidgetSighting>,
}

pub struct Sightings {
    store: DynStore,
    inner: Mutex<Inner>,
}

impl Sightings {
    /// The recorder, with its writer task (which ends when the recorder is dropped). Must be
    /// called inside a Tokio runtime.
    pub fn start(store: DynStore) -> Arc<Self> {
        let sightings = Arc::new(Sightings { store, inner: Mutex::new(Inner::default()) });
        tokio::spawn(write_periodically(Arc::downgrade(&sightings)));
        sightings
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that `source` heard from the project's widget at `at` (ms), on page `page` (any
    /// text: only an http(s) URL is kept) known as well as `known` says.
    pub fn record(&self, project_id: &str, source: Source, page: Option<&str>, known: PageKnown, at: i64) {
        let known = if page.is_some() { known } else { PageKnown::Not };
        let mut inner = self.inner();
        if let Some((last_at, last_known)) = inner.kept.get(project_id)
            && at - last_at < RESOLUTION_MS
            && known <= *last_known
        {
            return;
        }
        inner.kept.insert(project_id.to_string(), (at, known));
        let url = page.and_then(page_url);
        let sighting = WidgetSighting {
            project_id: project_id.to_string(),
            url,
            source: source.as_str().to_string(),
            seen_at: at,
        };
        inner.pending.insert(project_id.to_string(), sighting);
    }

    /// Writes the sightings kept so far.
    pub async fn flush(&self) {
        let pending = {
            let mut inner = self.inner();
            let now = svc_core::time::now_ms();
            inner.kept.retain(|_, (at, _)| now - *at < RESOLUTION_MS);
            std::mem::take(&mut inner.pending)
        };
        for sighting in pending.into_values() {
            if let Err(error) = self.store.record_sighting(&sighting).await {
                tracing::warn!(%error, "could not record where a widget was seen");
            }
        }
    }

    /// The project's last sighting: the stored one, or this instance's newer one still waiting.
    pub async fn last(&self, project_id: &str) -> ServiceResult<Option<WidgetSighting>> {
        let stored = self.store.get_sighting(project_id).await?;
        let waiting = self.inner().pending.get(project_id).cloned();
        Ok(match (stored, waiting) {
            (Some(stored), Some(waiting)) => Some(if waiting.seen_at >= stored.seen_at { waiting } else { stored }),
            (stored, waiting) => stored.or(waiting),
        })
    }
}

async fn write_periodically(sightings: Weak<Sightings>) {
    loop {
        tokio::time::sleep(FLUSH_INTERVAL).await;
        let Some(sightings) = sightings.upgrade() else { return };
        sightings.flush().await;
    }
}

/// An http(s) URL as it is kept (at most 2,000 characters), or `None`.
pub fn page_url(text: &str) -> Option<String> {
    let url = url::Url::parse(text.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    Some(url.as_str().chars().take(URL_MAX_CHARS).collect())
}
