//! `GET /dashboard/events`: server-sent events telling an open inbox that reports of the person's
//! projects changed (filed, status, comments), so it fetches its list again. They come from this
//! process's tail of the event feed (`svc_service::live`) and carry the feed's event id, so a
//! browser that reconnects (sending `Last-Event-ID`) hears at once when it missed something.
//!
//! A stream lives only as long as the session that opened it: it checks the session again when
//! sessions end anywhere (sign-out, a new password, removal from an organization: announced on
//! every instance through the change feed) and every few seconds in any case (a missed
//! announcement), ends when the session is gone, and follows the person's reach when it changes.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::collections::HashSet;
use std::convert::Infallible;
use std::time::Duration;
use svc_service::live::{self, Live};
use tokio::sync::broadcast::error::RecvError;

use super::error::PageResult;
use super::session::Person;
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::{accounts, projects};

/// Events a reconnecting stream reads to tell whether it missed any (one `change` says it did).
const MISSED_READ: u32 = 100;

/// How often an open stream checks its session even when nothing was announced.
const SESSION_RECHECK: Duration = Duration::from_secs(5);

/// What a stream carries between events.
struct Watch {
    state: AppState,
    session_hash: String,
    receiver: tokio::sync::broadcast::Receiver<Live>,
    /// An event to send first: what a reconnecting browser missed.
    missed: Option<Event>,
    visible: HashSet<String>,
    recheck: tokio::time::Interval,
}

impl Watch {
    /// The projects the session still reaches; `None` once it ended.
    async fn still_signed_in(&self) -> Option<HashSet<String>> {
        let store = &self.state.service;
        let signed_in = match accounts::session_still_valid(store, &self.session_hash).await {
            Ok(Some(signed_in)) => signed_in,
            Ok(None) => return None,
            // A store that cannot answer cannot vouch for the session either.
            Err(error) => {
                tracing::warn!(error = %error, "live updates: the session could not be checked; ending the stream");
                return None;
            }
        };
        let reachable = projects::reachable(store, &Principal::User(Box::new(signed_in))).await.ok()?;
        Some(reachable.into_iter().map(|p| p.id).collect())
    }

    /// The next event for the browser; `None` ends the stream.
    async fn next(&mut self) -> Option<Event> {
        if let Some(missed) = self.missed.take() {
            return Some(missed);
        }
        loop {
            let event = tokio::select! {
                received = self.receiver.recv() => match received {
                    Ok(Live::SessionsEnded) => {
                        self.visible = self.still_signed_in().await?;
                        continue;
                    }
                    Ok(Live::Event { id, project_id }) if self.visible.contains(&project_id) => {
                        change().id(id.to_string()).data(project_id)
                    }
                    Ok(Live::Project(project_id)) if project_id.is_empty() || self.visible.contains(&project_id) => {
                        change().data(project_id)
                    }
                    Ok(_) => continue,
                    // Missed some: say that something changed.
                    Err(RecvError::Lagged(_)) => change().data(""),
                    Err(RecvError::Closed) => return None,
                },
                _ = self.recheck.tick() => {
                    self.visible = self.still_signed_in().await?;
                    continue;
                }
            };
            return Some(event);
        }
    }
}

/// A `change` event (its id and data follow).
fn change() -> Event {
    Event::default().event("change")
}

pub async fn stream(
    State(state): State<AppState>,
    person: Person,
    headers: HeaderMap,
) -> PageResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    // Subscribed before anything is read, so nothing falls between the two.
    let receiver = live::subscribe(&state.service).await;
    let visible: HashSet<String> =
        projects::reachable(&state.service, &person.principal()).await?.into_iter().map(|p| p.id).collect();
    let last_seen = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<i64>().ok());
    let missed = match last_seen {
        Some(after) => {
            let ids: Vec<String> = visible.iter().cloned().collect();
            let missed = live::events_since(&state.service, &ids, after, MISSED_READ).await?;
            missed.last().map(|event| change().id(event.id.to_string()).data(&event.project_id))
        }
        None => None,
    };
    let mut recheck = tokio::time::interval(SESSION_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: the session was just checked.
    recheck.reset();
    let session_hash = person.signed_in.session_hash.clone();
    let watch = Watch { state, session_hash, receiver, missed, visible, recheck };
    let events = futures_util::stream::unfold(watch, |mut watch| async move {
        let event = watch.next().await?;
        Some((Ok(event), watch))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
