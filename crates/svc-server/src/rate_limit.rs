//! Rate limits, counted per instance (decisions §9). Keyed GCRA limiters from `governor`.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;

use crate::config::ServerConfig;

pub struct RateLimits {
    enabled: bool,
    per_key: DefaultKeyedRateLimiter<String>,
}

fn per_minute(count: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(count.max(1)).expect("count is at least 1"))
}

impl RateLimits {
    pub fn new(config: &ServerConfig) -> Self {
        RateLimits {
            enabled: config.rate_limits,
            per_key: RateLimiter::keyed(per_minute(config.key_requests_per_minute)),
        }
    }

    /// Counts one request of an API key; `Err(seconds)` tells how long to wait when over the limit.
    pub fn check_key(&self, key_id: &str) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        self.per_key
            .check_key(&key_id.to_string())
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()).as_secs_f64().ceil() as u64)
    }

    /// Drops idle keys' state so memory stays bounded.
    pub fn prune(&self) {
        self.per_key.retain_recent();
    }
}
