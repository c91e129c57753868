//! Rate limits, counted per instance (decisions §9). Keyed GCRA limiters from `governor`.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;

use crate::config::ServerConfig;

pub struct RateLimits {
    enabled: bool,
    per_key: DefaultKeyedRateLimiter<String>,
    reports_per_ip: DefaultKeyedRateLimiter<IpAddr>,
    blobs_per_ip: DefaultKeyedRateLimiter<IpAddr>,
    reports_per_project: DefaultKeyedRateLimiter<String>,
}

fn per_minute<K: Hash + Eq + Clone>(count: u32) -> DefaultKeyedRateLimiter<K> {
    RateLimiter::keyed(Quota::per_minute(NonZeroU32::new(count.max(1)).expect("count is at least 1")))
}

/// Seconds until the limiter would allow the next request.
fn check<K: Hash + Eq + Clone>(limiter: &DefaultKeyedRateLimiter<K>, key: &K) -> Result<(), u64> {
    limiter
        .check_key(key)
        .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()).as_secs_f64().ceil() as u64)
}

impl RateLimits {
    pub fn new(config: &ServerConfig) -> Self {
        RateLimits {
            enabled: config.rate_limits,
            per_key: per_minute(config.key_requests_per_minute),
            reports_per_ip: per_minute(config.ip_reports_per_minute),
            blobs_per_ip: per_minute(config.ip_blobs_per_minute),
            reports_per_project: per_minute(config.project_reports_per_minute),
        }
    }

    /// Counts one request of an API key; `Err(seconds)` tells how long to wait when over the limit.
    pub fn check_key(&self, key_id: &str) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        check(&self.per_key, &key_id.to_string())
    }

    /// Counts one ingest report from `ip` for `project_id`.
    pub fn check_report(&self, ip: Option<IpAddr>, project_id: &str) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        if let Some(ip) = ip {
            check(&self.reports_per_ip, &ip)?;
        }
        check(&self.reports_per_project, &project_id.to_string())
    }

    /// Counts one blob upload from `ip`.
    pub fn check_blob(&self, ip: Option<IpAddr>) -> Result<(), u64> {
        match ip {
            Some(ip) if self.enabled => check(&self.blobs_per_ip, &ip),
            _ => Ok(()),
        }
    }

    /// Drops idle keys' state so memory stays bounded.
    pub fn prune(&self) {
        self.per_key.retain_recent();
        self.reports_per_ip.retain_recent();
        self.blobs_per_ip.retain_recent();
        self.reports_per_project.retain_recent();
    }
}
