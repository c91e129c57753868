//! What just changed, for live views (the dashboard's open pages): this process's tail of the event
//! feed. Changes announce themselves on the store's change feed once committed (on PostgreSQL
//! every instance hears every announcement); the tail then reads the events written since it last
//! read and passes each on, so a live view learns of every change of the feed, whichever instance
//! made it. A change that writes no event (a draft edited, a project deleted) is passed on as its
//! project, and the end of sessions as such.

use svc_core::event::Event;
use svc_store::DynStore;
use svc_store::changes::SESSIONS_ENDED;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::{Service, ServiceResult};

/// One thing a live view hears.
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    /// An event of the feed (its id lets a view that reconnects ask what it missed).
    Event { id: i64, project_id: String },
    /// Something of this project changed that the feed does not record; an empty id: something
    /// changed, the tail could not tell what (it fell behind).
    Project(String),
    /// Sessions ended somewhere: views check who is still signed in.
    SessionsEnded,
}

/// Events read per query while catching up.
const BATCH: u32 = 500;

/// Everything that changes from now on. The tail starts with the first subscriber, which waits
/// until the tail knows where the feed stands: a change made after this returns reaches the
/// subscriber as its event (with its id), never as an unnamed change of its project.
pub async fn subscribe(svc: &Service) -> broadcast::Receiver<Live> {
    svc.live
        .get_or_init(|| async {
            // Announcements are heard from before the position is read, so none falls between.
            let changes = svc.store.changes().subscribe();
            let position = match svc.store.last_event_id().await {
                Ok(position) => position,
                Err(error) => {
                    tracing::warn!(%error, "live updates: the event feed could not be read");
                    0
                }
            };
            let (sender, _) = broadcast::channel(1024);
            tokio::spawn(tail(svc.store.clone(), changes, position, sender.downgrade()));
            sender
        })
        .await
        .subscribe()
}

/// The feed's events after `after` in these projects, oldest first, at most `limit` (a view that
/// reconnects asks what it missed).
pub async fn events_since(svc: &Service, project_ids: &[String], after: i64, limit: u32) -> ServiceResult<Vec<Event>> {
    Ok(svc.store().list_events(Some(project_ids), after, limit).await?)
}

async fn tail(
    store: DynStore,
    mut changes: broadcast::Receiver<String>,
    mut position: i64,
    sender: broadcast::WeakSender<Live>,
) {
    loop {
        let heard = changes.recv().await;
        // Every live view is gone with the service: so is the tail.
        let Some(sender) = sender.upgrade() else { return };
        let announced = match heard {
            Ok(id) if id == SESSIONS_ENDED => {
                let _ = sender.send(Live::SessionsEnded);
                continue;
            }
            Ok(project_id) => project_id,
            Err(RecvError::Lagged(_)) => String::new(),
            Err(RecvError::Closed) => return,
        };
        let mut recorded = false;
        loop {
            let events = match store.list_events(None, position, BATCH).await {
                Ok(events) => events,
                Err(error) => {
                    tracing::warn!(%error, "live updates: the event feed could not be read");
                    break;
                }
            };
            for event in &events {
                recorded |= event.project_id == announced;
                position = event.id;
                let _ = sender.send(Live::Event { id: event.id, project_id: event.project_id.clone() });
            }
            if events.len() < BATCH as usize {
                break;
            }
        }
        if !recorded {
            let _ = sender.send(Live::Project(announced));
        }
    }
}

/// The tail's sender, made with the first subscriber.
pub(crate) type LiveSender = tokio::sync::OnceCell<broadcast::Sender<Live>>;
