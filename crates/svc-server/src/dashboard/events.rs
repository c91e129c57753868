//! `GET /dashboard/events`: server-sent events telling an open inbox that reports of the person's
//! projects changed (filed, status, comments), so it fetches its list again.

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::collections::HashSet;
use std::convert::Infallible;
use tokio::sync::broadcast::error::RecvError;

use super::error::PageResult;
use super::session::Person;
use crate::service::{projects, reports};
use crate::state::AppState;

pub async fn stream(
    State(state): State<AppState>,
    person: Person,
) -> PageResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let visible: HashSet<String> =
        projects::reachable(&*state.store, &person.principal()).await?.into_iter().map(|p| p.id).collect();
    let receiver = reports::subscribe_changes(&*state.store);
    let events = futures_util::stream::unfold((receiver, visible), |(mut receiver, visible)| async move {
        loop {
            let project_id = match receiver.recv().await {
                Ok(project_id) if project_id.is_empty() || visible.contains(&project_id) => project_id,
                Ok(_) => continue,
                // Missed some: say that something changed.
                Err(RecvError::Lagged(_)) => String::new(),
                Err(RecvError::Closed) => return None,
            };
            let event = Event::default().event("change").data(project_id);
            return Some((Ok(event), (receiver, visible)));
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
