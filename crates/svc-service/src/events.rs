//! The event feed as a script reads it (`GET /api/v1/projects/:projectId/events?after=`): a
//! project's events oldest first, after a cursor, so a script that remembers the last id it read
//! sees every change once, in the order it was committed.

use crate::permissions::{self, Operation};
use crate::principal::Principal;
use crate::{Service, ServiceResult};
use svc_core::event::Event;
use svc_core::model::Project;

/// The project's events after the id `after`, oldest first, at most `limit`.
pub async fn page(
    svc: &Service,
    by: &Principal,
    project: &Project,
    after: i64,
    limit: u32,
) -> ServiceResult<Vec<Event>> {
    permissions::check(by, Operation::ReadReports, project)?;
    Ok(svc.store().list_events(Some(std::slice::from_ref(&project.id)), after, limit).await?)
}

/// How the feed's background readers (mail, webhook delivery, issue trackers) wait for their next
/// pass: until a change anywhere is announced and `gather` more has passed (so a burst of changes
/// makes one pass per `gather`, not one each), or `tick` when nothing is announced.
pub(crate) async fn next_pass(
    changes: &mut tokio::sync::broadcast::Receiver<String>,
    gather: std::time::Duration,
    tick: std::time::Duration,
) {
    tokio::select! {
        _ = changes.recv() => {
            tokio::time::sleep(gather).await;
            // What was announced meanwhile is read by the pass itself.
            *changes = changes.resubscribe();
        }
        _ = tokio::time::sleep(tick) => {}
    }
}
