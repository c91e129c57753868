//! Server settings that surfaces need at request time.

use std::net::IpAddr;
use svc_core::ingest::Limits;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Base address used in snippets and links (`SVC_PUBLIC_URL`).
    pub public_url: String,
    /// `SVC_RATE_LIMIT=off` turns every rate limit off (benchmarks, test suites, trusted networks).
    pub rate_limits: bool,
    /// Requests per minute per key on the REST API and tool endpoint.
    pub key_requests_per_minute: u32,
    /// Ingest: reports per minute per client address.
    pub ip_reports_per_minute: u32,
    /// Ingest: blobs per minute per client address.
    pub ip_blobs_per_minute: u32,
    /// Ingest: reports per minute per project.
    pub project_reports_per_minute: u32,
    /// Ingest: reports per minute an address may still file for a project whose ceiling is used up.
    pub guaranteed_reports_per_address: u32,
    /// Proxies whose `X-Forwarded-For` is believed (`SVC_TRUSTED_PROXIES`).
    pub trusted_proxies: Vec<Cidr>,
    /// Blob sizes and report limits.
    pub limits: Limits,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            public_url: "http://127.0.0.1:8080".into(),
            rate_limits: true,
            key_requests_per_minute: 600,
            ip_reports_per_minute: 30,
            ip_blobs_per_minute: 60,
            project_reports_per_minute: 1_000,
            guaranteed_reports_per_address: 5,
            trusted_proxies: vec![],
            limits: Limits::default(),
        }
    }
}

impl ServerConfig {
    pub fn is_trusted_proxy(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|cidr| cidr.contains(ip))
    }
}

/// An address range such as `10.0.0.0/8` or `::1/128` (a bare address is a /32 or /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Self, String> {
        let (address, prefix) = match text.trim().split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text.trim(), None),
        };
        let network: IpAddr = address.parse().map_err(|_| format!("{text:?} is not an address range"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(|| format!("{text:?}: bad prefix"))?,
            None => max,
        };
        Ok(Cidr { network, prefix })
    }

    /// Parses a comma-separated list.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        text.split(',').filter(|s| !s.trim().is_empty()).map(Cidr::parse).collect()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - self.prefix as u32).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - self.prefix as u32).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_ranges() {
        let net = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(net.contains("10.1.2.3".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(Cidr::parse("::1").unwrap().contains("::1".parse().unwrap()));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains("8.8.8.8".parse().unwrap()));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert_eq!(Cidr::parse_list("10.0.0.0/8, 127.0.0.1").unwrap().len(), 2);
    }
}
