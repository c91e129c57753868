//! Requests Svc sends to addresses someone else chose (a client ID metadata document's URL; later
//! webhook receivers): never into the service's own network unless the operator allows it.
//!
//! A host name is resolved first, every address it has is checked (loopback, private, link-local,
//! unique-local, carrier-grade NAT, multicast, documentation and other special-purpose ranges are
//! refused), and the connection is made to exactly the addresses that were checked: the checking
//! resolver is the client's resolver, so no second lookup can answer differently (DNS rebinding).
//! An address written in the URL is checked the same way. No proxy is used (it would resolve the
//! name itself) and no redirect is followed.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Where outbound requests may go.
#[derive(Debug, Clone, Default)]
pub struct OutboundPolicy {
    /// Private and loopback addresses are allowed too (tests, and services on a private network).
    pub allow_private: bool,
    /// Fixed answers for host names, used instead of DNS (tests name hosts that DNS does not know).
    pub resolve_overrides: Arc<HashMap<String, Vec<IpAddr>>>,
}

/// Why an address may not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{host} resolves to {address}, a private or special-purpose address Svc does not send requests to")]
pub struct PrivateAddress {
    pub host: String,
    pub address: IpAddr,
}

/// Whether an address belongs to the public internet (not the service's own machine or network,
/// nor a range set aside for special purposes).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        // Carrier-grade NAT (100.64.0.0/10).
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments (192.0.0.0/24) and benchmarking (198.18.0.0/15).
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        // Reserved (240.0.0.0/4).
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Unique local (fc00::/7) and link-local (fe80::/10).
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        // Documentation (2001:db8::/32).
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // NAT64 (64:ff9b::/96) can lead to any IPv4 address, private ones included.
        || (first == 0x0064 && ip.segments()[1] == 0xff9b))
}

impl OutboundPolicy {
    /// Checks an address written in a URL (a host name is checked when it is resolved).
    pub fn check_url(&self, url: &url::Url) -> Result<(), PrivateAddress> {
        let address = match url.host() {
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
            _ => return Ok(()),
        };
        self.check(url.host_str().unwrap_or_default(), address)
    }

    fn check(&self, host: &str, address: IpAddr) -> Result<(), PrivateAddress> {
        if self.allow_private || is_public(address) {
            Ok(())
        } else {
            Err(PrivateAddress { host: host.to_string(), address })
        }
    }

    /// An HTTP client bound by this policy: the checking resolver, no proxy, no redirects.
    pub fn client(&self, timeout: Duration) -> reqwest::Result<reqwest::Client> {
        reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckingResolver { policy: self.clone() }))
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .build()
    }
}

/// Resolves a host name and refuses it when any of its addresses may not be reached; the client
/// connects to the addresses it returns.
struct CheckingResolver {
    policy: OutboundPolicy,
}

impl reqwest::dns::Resolve for CheckingResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses: Vec<IpAddr> = match policy.resolve_overrides.get(&host) {
                Some(fixed) => fixed.clone(),
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.map(|found| found.ip()).collect(),
            };
            // One address that may not be reached refuses the name: otherwise a name could answer
            // with one public and one private address and hope for the second.
            for address in &addresses {
                policy.check(&host, *address)?;
            }
            let addresses: reqwest::dns::Addrs =
                Box::new(addresses.into_iter().map(|address| SocketAddr::new(address, 0)));
            Ok(addresses)
        })
    }
}

/// The [`PrivateAddress`] refusal behind a failed request, if that is why it failed.
pub fn refusal_of(error: &reqwest::Error) -> Option<&PrivateAddress> {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<PrivateAddress>() {
            return Some(refusal);
        }
        source = cause.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_services_own_network_is_not_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn addresses_in_urls_are_checked_unless_allowed() {
        let strict = OutboundPolicy::default();
        let refused = strict.check_url(&url::Url::parse("http://127.0.0.1:9/x").unwrap()).unwrap_err();
        assert_eq!(refused.address, "127.0.0.1".parse::<IpAddr>().unwrap());
        assert!(strict.check_url(&url::Url::parse("http://[::1]/x").unwrap()).is_err());
        assert!(strict.check_url(&url::Url::parse("https://example.com/x").unwrap()).is_ok());
        let open = OutboundPolicy { allow_private: true, ..Default::default() };
        assert!(open.check_url(&url::Url::parse("http://127.0.0.1:9/x").unwrap()).is_ok());
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_a_private_address_is_refused_before_any_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let overrides = HashMap::from([("docs.example.test".to_string(), vec!["127.0.0.1".parse().unwrap()])]);
        let strict = OutboundPolicy { allow_private: false, resolve_overrides: Arc::new(overrides) };
        let error = strict
            .client(Duration::from_secs(5))
            .unwrap()
            .get(format!("http://docs.example.test:{port}/client.json"))
            .send()
            .await
            .unwrap_err();
        let refusal = refusal_of(&error).expect("refused for its address");
        assert_eq!(refusal.host, "docs.example.test");
        // Nothing reached the listener.
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(accepted.is_err(), "a connection was made");
    }
}
