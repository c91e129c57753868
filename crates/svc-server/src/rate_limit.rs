//! Rate limits, counted per instance (decisions §9). Keyed GCRA limiters from `governor`.
//!
//! Ingest is limited per client address and per project. An address is an IPv4 address or an IPv6
//! /64 (one subscriber usually holds a whole /64, so per-address IPv6 limits would be per device).
//! The project ceiling protects the instance, but it must not let a handful of addresses lock a
//! project's widget for everyone: each address keeps a small guaranteed share per project that it
//! may still use while the ceiling is exhausted (see docs/ingest.md#rate-limits).

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;

use crate::config::ServerConfig;

pub struct RateLimits {
    enabled: bool,
    per_key: DefaultKeyedRateLimiter<String>,
    reports_per_address: DefaultKeyedRateLimiter<IpAddr>,
    blobs_per_address: DefaultKeyedRateLimiter<IpAddr>,
    reports_per_project: DefaultKeyedRateLimiter<String>,
    /// Reports an address may file for a project while the project's ceiling is exhausted.
    guaranteed_per_address: DefaultKeyedRateLimiter<(String, IpAddr)>,
    /// Dashboard sign-in attempts per account (email) and per address: slows password guessing
    /// without locking out the account's owner for long.
    sign_ins_per_account: DefaultKeyedRateLimiter<String>,
    sign_ins_per_address: DefaultKeyedRateLimiter<IpAddr>,
    /// OAuth client registrations per address (`/register` needs no credential).
    registrations_per_address: DefaultKeyedRateLimiter<IpAddr>,
    /// Reporter sign-in requests (codes asked for, codes typed, popups started) per address.
    reporter_sign_ins_per_address: DefaultKeyedRateLimiter<IpAddr>,
    /// Content Security Policy reports per address (the endpoint needs no credential).
    csp_reports_per_address: DefaultKeyedRateLimiter<IpAddr>,
}

/// CSP reports allowed at once per address, then one more every 3 s: a page that breaks the
/// policy sends a few; an address sending thousands is not a browser reporting.
pub const CSP_REPORTS_PER_ADDRESS: u32 = 20;

/// Reporter sign-in requests allowed at once per address, then one more every 30 s (30 per 15
/// minutes): a reporter needs two or three; an address that asks codes for many others is slowed.
pub const REPORTER_SIGN_INS_PER_ADDRESS: u32 = 20;

/// OAuth registrations allowed at once per address, then one more every 3 minutes (20 an hour).
pub const REGISTRATIONS_PER_ADDRESS: u32 = 20;

/// Sign-in attempts allowed at once per account, then one more every 90 s (10 per 15 minutes).
pub const SIGN_INS_PER_ACCOUNT: u32 = 10;
/// Sign-in attempts allowed at once per address, then one more every 30 s (30 per 15 minutes).
pub const SIGN_INS_PER_ADDRESS: u32 = 30;

fn burst_then_one_every<K: Hash + Eq + Clone>(burst: u32, every: std::time::Duration) -> DefaultKeyedRateLimiter<K> {
    let quota = Quota::with_period(every)
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::new(burst.max(1)).expect("burst is at least 1"));
    RateLimiter::keyed(quota)
}

fn per_minute<K: Hash + Eq + Clone>(count: u32) -> DefaultKeyedRateLimiter<K> {
    RateLimiter::keyed(Quota::per_minute(NonZeroU32::new(count.max(1)).expect("count is at least 1")))
}

/// Seconds until the limiter would allow the next request.
fn check<K: Hash + Eq + Clone>(limiter: &DefaultKeyedRateLimiter<K>, key: &K) -> Result<(), u64> {
    limiter.check_key(key).map_err(|not_until| seconds(not_until.wait_time_from(DefaultClock::default().now())))
}

fn seconds(wait: std::time::Duration) -> u64 {
    wait.as_secs_f64().ceil() as u64
}

/// The unit a client address is counted in: an IPv4 address, or the /64 an IPv6 address is in
/// (IPv4-mapped IPv6 addresses count as their IPv4 address).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u64::MAX as u128))),
        },
    }
}

impl RateLimits {
    pub fn new(config: &ServerConfig) -> Self {
        RateLimits {
            enabled: config.rate_limits,
            per_key: per_minute(config.key_requests_per_minute),
            reports_per_address: per_minute(config.ip_reports_per_minute),
            blobs_per_address: per_minute(config.ip_blobs_per_minute),
            reports_per_project: per_minute(config.project_reports_per_minute),
            guaranteed_per_address: per_minute(config.guaranteed_reports_per_address),
            sign_ins_per_account: burst_then_one_every(SIGN_INS_PER_ACCOUNT, std::time::Duration::from_secs(90)),
            sign_ins_per_address: burst_then_one_every(SIGN_INS_PER_ADDRESS, std::time::Duration::from_secs(30)),
            registrations_per_address: burst_then_one_every(
                REGISTRATIONS_PER_ADDRESS,
                std::time::Duration::from_secs(180),
            ),
            reporter_sign_ins_per_address: burst_then_one_every(
                REPORTER_SIGN_INS_PER_ADDRESS,
                std::time::Duration::from_secs(30),
            ),
            csp_reports_per_address: burst_then_one_every(CSP_REPORTS_PER_ADDRESS, std::time::Duration::from_secs(3)),
        }
    }

    /// Counts one request of an API key; `Err(seconds)` tells how long to wait when over the limit.
    pub fn check_key(&self, key_id: &str) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        check(&self.per_key, &key_id.to_string())
    }

    /// Counts one ingest report from `ip` for `project_id`: the address's own limit first, then the
    /// project's ceiling, and when that is exhausted the address's guaranteed share of the project.
    pub fn check_report(&self, ip: Option<IpAddr>, project_id: &str) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        let address = ip.map(address_key);
        if let Some(address) = address {
            check(&self.reports_per_address, &address)?;
        }
        let over_ceiling = match check(&self.reports_per_project, &project_id.to_string()) {
            Ok(()) => return Ok(()),
            Err(wait) => wait,
        };
        let Some(address) = address else { return Err(over_ceiling) };
        match check(&self.guaranteed_per_address, &(project_id.to_string(), address)) {
            Ok(()) => Ok(()),
            // Either budget coming back lets the next report through.
            Err(wait) => Err(wait.min(over_ceiling)),
        }
    }

    /// Counts one blob upload from `ip`.
    pub fn check_blob(&self, ip: Option<IpAddr>) -> Result<(), u64> {
        match ip {
            Some(ip) if self.enabled => check(&self.blobs_per_address, &address_key(ip)),
            _ => Ok(()),
        }
    }

    /// Counts one sign-in attempt for an account (its email as typed, lower-cased) from `ip`.
    pub fn check_sign_in(&self, account: &str, ip: Option<IpAddr>) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        if let Some(ip) = ip {
            check(&self.sign_ins_per_address, &address_key(ip))?;
        }
        check(&self.sign_ins_per_account, &account.trim().to_lowercase())
    }

    /// Counts one reporter sign-in request (a code asked for or typed, a popup started) from `ip`.
    pub fn check_reporter_sign_in(&self, ip: Option<IpAddr>) -> Result<(), u64> {
        match ip {
            Some(ip) if self.enabled => check(&self.reporter_sign_ins_per_address, &address_key(ip)),
            _ => Ok(()),
        }
    }

    /// Counts one Content Security Policy report from `ip`.
    pub fn check_csp_report(&self, ip: Option<IpAddr>) -> Result<(), u64> {
        match ip {
            Some(ip) if self.enabled => check(&self.csp_reports_per_address, &address_key(ip)),
            _ => Ok(()),
        }
    }

    /// Counts one OAuth client registration from `ip`.
    pub fn check_registration(&self, ip: IpAddr) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        check(&self.registrations_per_address, &address_key(ip))
    }

    /// Drops idle keys' state so memory stays bounded.
    pub fn prune(&self) {
        self.per_key.retain_recent();
        self.reports_per_address.retain_recent();
        self.blobs_per_address.retain_recent();
        self.reports_per_project.retain_recent();
        self.guaranteed_per_address.retain_recent();
        self.sign_ins_per_account.retain_recent();
        self.sign_ins_per_address.retain_recent();
        self.registrations_per_address.retain_recent();
        self.reporter_sign_ins_per_address.retain_recent();
        self.csp_reports_per_address.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(config: ServerConfig) -> RateLimits {
        RateLimits::new(&ServerConfig { rate_limits: true, ..config })
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn ipv6_addresses_are_counted_per_64() {
        assert_eq!(address_key("2001:db8:1:2:aaaa::1".parse().unwrap()), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        assert_eq!(address_key("::ffff:192.0.2.7".parse().unwrap()), "192.0.2.7".parse::<IpAddr>().unwrap());
        let limits = limits(ServerConfig { ip_reports_per_minute: 2, ..ServerConfig::default() });
        assert!(limits.check_report(ip("2001:db8:1:2::1"), "p").is_ok());
        assert!(limits.check_report(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"), "p").is_ok());
        // A third address of the same /64 shares its budget; the next /64 has its own.
        assert!(limits.check_report(ip("2001:db8:1:2::99"), "p").is_err());
        assert!(limits.check_report(ip("2001:db8:1:3::1"), "p").is_ok());
    }

    #[test]
    fn a_few_busy_addresses_cannot_lock_a_project_out() {
        let config = ServerConfig {
            ip_reports_per_minute: 30,
            project_reports_per_minute: 100,
            guaranteed_reports_per_address: 3,
            ..ServerConfig::default()
        };
        let limits = limits(config);
        // Ten addresses flood the project until it is over its ceiling.
        let mut refused = 0;
        for _ in 0..30 {
            for n in 0..10 {
                if limits.check_report(ip(&format!("198.51.100.{n}")), "busy").is_err() {
                    refused += 1;
                }
            }
        }
        assert!(refused > 0, "the flood went over the project ceiling");
        // A quiet reporter still gets its guaranteed share, then waits like everyone else.
        for _ in 0..3 {
            assert!(limits.check_report(ip("203.0.113.9"), "busy").is_ok());
        }
        let wait = limits.check_report(ip("203.0.113.9"), "busy").unwrap_err();
        assert!((1..=60).contains(&wait), "{wait}");
        // Without a known address only the ceiling counts; another project is unaffected.
        assert!(limits.check_report(None, "busy").is_err());
        assert!(limits.check_report(ip("192.0.2.1"), "quiet").is_ok());
    }
}
