//! Which projects' reports just changed, for live views (the dashboard's inbox).
//!
//! The service announces a change after each write that touches a report (filed, status, comment,
//! triage). SQLite serves one instance, so an announcement goes straight to this process's
//! subscribers. PostgreSQL may be shared by several instances: an announcement becomes a
//! `NOTIFY svc_changes, '<projectId>'`, and every instance (this one included) forwards what it
//! hears on `LISTEN svc_changes` to its subscribers. Notifications are sent by one task as soon as
//! it is woken and has gathered announcements for a moment, so a burst of reports for a project
//! costs a few notifications a second, not one each, and never delays the write that announced it.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, broadcast};

/// The PostgreSQL channel announcements travel on.
pub const CHANNEL: &str = "svc_changes";

/// What subscribers receive when sessions ended (sign-out, a new password, removal from an
/// organization): not a project id (those are hex), so live views check who is still signed in.
pub const SESSIONS_ENDED: &str = "!sessions";

/// How long announcements are gathered before they are sent to PostgreSQL.
const COALESCE: std::time::Duration = std::time::Duration::from_millis(50);

/// Subscribers receive project ids; a slow subscriber that falls behind sees `Lagged` and should
/// treat it as "something changed".
#[derive(Clone)]
pub struct ChangeFeed {
    local: broadcast::Sender<String>,
    /// When the latest change was announced (epoch ms): how busy writing is, for background work
    /// that should give way (see [`crate::pacing`]).
    last_change_ms: Arc<std::sync::atomic::AtomicI64>,
    /// PostgreSQL: project ids waiting to be notified, and the notifying task's wake-up.
    outgoing: Option<(Arc<Mutex<BTreeSet<String>>>, Arc<Notify>)>,
    /// PostgreSQL: dropped with the last copy of the feed, which ends the listening task (and
    /// closes its connection).
    _alive: Option<Arc<tokio::sync::watch::Sender<()>>>,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed").field("through_postgres", &self.outgoing.is_some()).finish()
    }
}

impl ChangeFeed {
    /// Announcements reach this process's subscribers directly (one instance: SQLite).
    pub fn local() -> Self {
        ChangeFeed { local: broadcast::channel(256).0, last_change_ms: Arc::default(), outgoing: None, _alive: None }
    }

    /// Announcements go through PostgreSQL, and what it delivers reaches the subscribers.
    pub fn postgres(pool: sqlx::PgPool) -> Self {
        let local = broadcast::channel(256).0;
        let pending = Arc::new(Mutex::new(BTreeSet::new()));
        let wake = Arc::new(Notify::new());
        let (alive, watching) = tokio::sync::watch::channel(());
        tokio::spawn(notify_task(pool.clone(), Arc::downgrade(&pending), wake.clone(), watching.clone()));
        tokio::spawn(listen_task(pool, local.downgrade(), watching));
        ChangeFeed {
            local,
            last_change_ms: Arc::default(),
            outgoing: Some((pending, wake)),
            _alive: Some(Arc::new(alive)),
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.local.subscribe()
    }

    /// When the latest change was announced (epoch ms), shared.
    pub fn last_change(&self) -> Arc<std::sync::atomic::AtomicI64> {
        self.last_change_ms.clone()
    }

    /// Says that a report of `project_id` changed. Never waits.
    pub fn announce(&self, project_id: &str) {
        self.last_change_ms.store(svc_core::time::now_ms(), std::sync::atomic::Ordering::Relaxed);
        self.send(project_id);
    }

    /// Says that sessions ended, on every instance ([`SESSIONS_ENDED`]). Never waits.
    pub fn announce_sessions_ended(&self) {
        self.send(SESSIONS_ENDED);
    }

    fn send(&self, project_id: &str) {
        match &self.outgoing {
            None => {
                // No subscriber is not an error.
                let _ = self.local.send(project_id.to_string());
            }
            Some((pending, wake)) => {
                pending.lock().unwrap_or_else(|p| p.into_inner()).insert(project_id.to_string());
                wake.notify_one();
            }
        }
    }
}

async fn notify_task(
    pool: sqlx::PgPool,
    pending: std::sync::Weak<Mutex<BTreeSet<String>>>,
    wake: Arc<Notify>,
    mut alive: tokio::sync::watch::Receiver<()>,
) {
    loop {
        // A permit left by an announcement made while notifying is kept, so none is missed.
        tokio::select! {
            _ = wake.notified() => {}
            // The store is gone: so is this task, and with it its handle on the pool.
            _ = alive.changed() => return,
        }
        // Gather what else is announced meanwhile: under a burst of reports a project is notified
        // at most 20 times a second, not once per report.
        tokio::time::sleep(COALESCE).await;
        let Some(pending) = pending.upgrade() else { return };
        let project_ids = std::mem::take(&mut *pending.lock().unwrap_or_else(|p| p.into_inner()));
        drop(pending);
        for project_id in project_ids {
            if let Err(error) =
                sqlx::query("SELECT pg_notify($1, $2)").bind(CHANNEL).bind(&project_id).execute(&pool).await
            {
                tracing::warn!(error = %error, "could not announce a change to other instances");
            }
        }
    }
}

async fn listen_task(
    pool: sqlx::PgPool,
    local: broadcast::WeakSender<String>,
    mut alive: tokio::sync::watch::Receiver<()>,
) {
    // A connection of its own, outside the store's pool (a listener keeps it for good), named
    // apart so tools that count the store's connections do not count it.
    let options = (*pool.connect_options()).clone();
    let name = format!("{}-listen", options.get_application_name().unwrap_or("svc"));
    let own =
        sqlx::postgres::PgPoolOptions::new().max_connections(1).connect_lazy_with(options.application_name(&name));
    drop(pool);
    let mut listener = loop {
        match sqlx::postgres::PgListener::connect_with(&own).await {
            Ok(mut listener) => match listener.listen(CHANNEL).await {
                Ok(()) => break listener,
                Err(error) => tracing::warn!(error = %error, "cannot listen for changes; retrying"),
            },
            Err(error) => tracing::warn!(error = %error, "cannot listen for changes; retrying"),
        }
        tokio::select! {
            _ = alive.changed() => return,
            _ = tokio::time::sleep(std::time::Duration::from_secs(2)) => {}
        }
    };
    loop {
        // `recv` reconnects by itself after a lost connection (notifications sent meanwhile are
        // lost; subscribers are told something changed, to be safe).
        let message = tokio::select! {
            message = listener.recv() => message,
            // The store is gone: the listener and its connection go too.
            _ = alive.changed() => return,
        };
        let Some(local) = local.upgrade() else { return };
        match message {
            Ok(notification) => {
                let _ = local.send(notification.payload().to_string());
            }
            Err(error) => {
                tracing::warn!(error = %error, "listening for changes failed; reconnecting");
                let _ = local.send(String::new());
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
    }
}
