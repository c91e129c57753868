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

/// Cheap to clone: the router clones the state for every request (each handler and each layer
/// that takes it), so it is one shared pointer, not a dozen reference counts and two strings.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What every handler reaches through [`AppState`].
pub struct Shared {
    /// Every operation: the surfaces reach the store only through it.
    pub service: Arc<Service>,
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

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// Must be called inside a Tokio runtime (the usage and sightings writers start here).
    pub fn new(store: DynStore, config: ServerConfig, blobs: BlobStore) -> Self {
        let rate_limits = Arc::new(RateLimits::new(&config));
        let blobs = Arc::new(blobs);
        let webhooks = Webhooks::new(
            config.webhook_policy.clone(),
            config.webhook_timeout,
            &config.public_url,
            Arc::new(crate::api::views::RestForms),
        )
        .expect("the webhook HTTP client builds");
        let trackers = Trackers::new(&config.webhook_policy, config.webhook_timeout, &config.public_url)
            .expect("the issue tracker HTTP client builds");
        AppState(Arc::new(Shared {
            trackers,
            webhooks,
            usage: Usage::start(store.clone()),
            sightings: Sightings::start(store.clone()),
            service: Arc::new(Service::new(store, blobs.clone())),
            blobs,
            config: Arc::new(config),
            metrics: Arc::new(Metrics::default()),
            rate_limits,
            readiness: Arc::default(),
        }))
    }
}
