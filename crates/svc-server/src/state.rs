//! Shared application state handed to every handler.

use std::sync::Arc;
use svc_blob::BlobStore;
use svc_store::DynStore;

use crate::config::ServerConfig;
use crate::metrics::Metrics;
use crate::rate_limit::RateLimits;
use svc_service::Service;
use svc_service::readiness::Readiness;
use svc_service::sightings::Sightings;
use svc_service::trackers::Trackers;
use svc_service::usage::Usage;
use svc_service::webhooks::Webhooks;

#[derive(Clone)]
pub struct AppState {
    /// Every operation: the surfaces reach the store only through it.
    pub service: Arc<Service>,
    /// Kept to rebuild the service around another blob store ([`AppState::with_blob_store`]).
    store: DynStore,
    pub blobs: Arc<BlobStore>,
    pub config: Arc<ServerConfig>,
    pub metrics: Arc<Metrics>,
    pub rate_limits: Arc<RateLimits>,
    /// Viewed marks and key uses waiting for their write.
    pub usage: Arc<Usage>,
    /// Where each project's widget was last seen, waiting for its write.
    pub sightings: Arc<Sightings>,
    /// What `/readyz` last found (its changes are logged).
    pub readiness: Arc<Readiness>,
    /// Webhook delivery: the outbound client, links and payload forms.
    pub webhooks: Webhooks,
    /// Issue trackers: the outbound client (the webhooks' policy), links, GitHub's tokens.
    pub trackers: Trackers,
}

impl AppState {
    /// State over an in-memory blob store (tests); `serve` adds its configured one with
    /// [`AppState::with_blob_store`]. Must be called inside a Tokio runtime.
    pub fn new(store: DynStore, config: ServerConfig) -> Self {
        let rate_limits = Arc::new(RateLimits::new(&config));
        let blobs = Arc::new(BlobStore::memory());
        let webhooks = Webhooks::new(
            config.webhook_policy.clone(),
            config.webhook_timeout,
            &config.public_url,
            Arc::new(crate::api::views::RestForms),
        )
        .expect("the webhook HTTP client builds");
        let trackers = Trackers::new(&config.webhook_policy, config.webhook_timeout, &config.public_url)
            .expect("the issue tracker HTTP client builds");
        AppState {
            trackers,
            webhooks,
            usage: Usage::start(store.clone()),
            sightings: Sightings::start(store.clone()),
            service: Arc::new(Service::new(store.clone(), blobs.clone())),
            store,
            blobs,
            config: Arc::new(config),
            metrics: Arc::new(Metrics::default()),
            rate_limits,
            readiness: Arc::default(),
        }
    }

    pub fn with_blob_store(mut self, blobs: BlobStore) -> Self {
        self.blobs = Arc::new(blobs);
        self.service = Arc::new(Service::new(self.store.clone(), self.blobs.clone()));
        self
    }
}
