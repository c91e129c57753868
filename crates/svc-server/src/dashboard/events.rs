//! `GET /dashboard/events`: server-sent events telling an open inbox that reports of the person's
//! projects changed (filed, status, comments), so it fetches its list again.
//!
//! A stream lives only as long as the session that opened it: it checks the session again when
//! sessions end anywhere (sign-out, a new password, removal from an organization: announced on
//! every instance through the change feed) and every few seconds in any case (a missed
//! announcement), ends when the session is gone, and follows the person's reach when it changes.

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::collections::HashSet;
use std::convert::Infallible;
use std::time::Duration;
use svc_store::changes::SESSIONS_ENDED;
use tokio::sync::broadcast::error::RecvError;

use super::error::PageResult;
use super::session::Person;
use crate::principal::Principal;
use crate::state::AppState;
use svc_service::{accounts, projects, reports};

/// How often an open stream checks its session even when nothing was announced.
const SESSION_RECHECK: Duration = Duration::from_secs(5);

/// What a stream carries between events.
struct Watch {
    state: AppState,
    session_hash: String,
    receiver: tokio::sync::broadcast::Receiver<String>,
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
        loop {
            let project_id = tokio::select! {
                received = self.receiver.recv() => match received {
                    Ok(id) if id == SESSIONS_ENDED => {
                        self.visible = self.still_signed_in().await?;
                        continue;
                    }
                    Ok(id) if self.visible.contains(&id) => id,
                    Ok(_) => continue,
                    // Missed some: say that something changed.
                    Err(RecvError::Lagged(_)) => String::new(),
                    Err(RecvError::Closed) => return None,
                },
                _ = self.recheck.tick() => {
                    self.visible = self.still_signed_in().await?;
                    continue;
                }
            };
            return Some(Event::default().event("change").data(project_id));
        }
    }
}

pub async fn stream(
    State(state): State<AppState>,
    person: Person,
) -> PageResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let visible: HashSet<String> =
        projects::reachable(&state.service, &person.principal()).await?.into_iter().map(|p| p.id).collect();
    let receiver = reports::subscribe_changes(&state.service);
    let mut recheck = tokio::time::interval(SESSION_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: the session was just checked.
    recheck.reset();
    let watch = Watch { state, session_hash: person.signed_in.session_hash.clone(), receiver, visible, recheck };
    let events = futures_util::stream::unfold(watch, |mut watch| async move {
        let event = watch.next().await?;
        Some((Ok(event), watch))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
