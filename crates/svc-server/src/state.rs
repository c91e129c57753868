//! Shared application state handed to every handler.

use std::sync::Arc;
use svc_store::DynStore;

use crate::config::ServerConfig;
use crate::metrics::Metrics;
use crate::rate_limit::RateLimits;

#[derive(Clone)]
pub struct AppState {
    pub store: DynStore,
    pub config: Arc<ServerConfig>,
    pub metrics: Arc<Metrics>,
    pub rate_limits: Arc<RateLimits>,
}

impl AppState {
    pub fn new(store: DynStore, config: ServerConfig) -> Self {
        let rate_limits = Arc::new(RateLimits::new(&config));
        AppState { store, config: Arc::new(config), metrics: Arc::new(Metrics::default()), rate_limits }
    }
}
