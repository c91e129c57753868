//! The service layer: every operation a person, an agent, a script or a reporter can do, written
//! once for every surface (REST, ingest, the tool endpoint, the dashboard, the CLI), over the store
//! and the blob store. Nothing here speaks HTTP: surfaces resolve who is acting (a
//! [`principal::Principal`]), translate a request into a call, and translate the result and
//! [`ServiceError`] back into their wire format.

#![deny(unsafe_code)]

pub mod accounts;
pub mod audit;
pub mod blobs;
pub mod bootstrap;
pub mod channels;
pub mod comments;
pub mod duplicates;
pub mod events;
pub mod flags;
pub mod housekeeping;
pub mod keys;
pub mod live;
pub use svc_store::load;
pub mod mail;
pub mod mailer;
pub mod oauth;
pub mod outbound;
pub mod permissions;
pub mod principal;
pub mod projects;
pub mod readiness;
pub mod reporter_oidc;
pub mod reporters;
pub mod reports;
pub mod retention;
pub mod rooms;
pub mod sightings;
pub mod trackers;
pub mod triage;
pub mod usage;
pub mod webhooks;

use std::sync::Arc;
use svc_blob::BlobStore;
use svc_store::{DynStore, Store, StoreError};

use crate::principal::Refusal;

/// What every operation works with: the store and the blob store. Surfaces hold one (in their
/// state) and reach the store only through the operations: the store is private to this crate.
pub struct Service {
    store: DynStore,
    blobs: Arc<BlobStore>,
    /// Names this process where instances take turns (the leases of the event feed's consumers).
    instance_id: String,
    /// This process's tail of the event feed for live views, started by the first ([`live`]).
    live: live::LiveSender,
}

impl Service {
    pub fn new(store: DynStore, blobs: Arc<BlobStore>) -> Self {
        Service { store, blobs, instance_id: svc_core::ids::new_id(), live: Default::default() }
    }

    /// This process's name among the instances sharing the database.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    pub(crate) fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The store itself, for work handed to another runtime (see `webhooks::Webhooks::on_server`).
    pub(crate) fn shared_store(&self) -> DynStore {
        self.store.clone()
    }

    /// How busy the server is filing reports (the store's count: its search indexers wait out
    /// bursts too).
    pub fn load(&self) -> &load::Load {
        self.store.load()
    }

    /// The blob store (surfaces stream uploads and downloads through it).
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The caller's input is wrong; the message names the field.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The principal may not do this (a service function that checks the principal itself).
    #[error("{0}")]
    Refused(Refusal),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something other than the store failed on the server's side (a worker task, for example);
    /// the message is for logs only.
    #[error("{0}")]
    Internal(String),
}

impl From<Refusal> for ServiceError {
    fn from(refusal: Refusal) -> Self {
        ServiceError::Refused(refusal)
    }
}

impl From<svc_core::Invalid> for ServiceError {
    fn from(error: svc_core::Invalid) -> Self {
        ServiceError::Invalid(error.0)
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
