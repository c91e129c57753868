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
