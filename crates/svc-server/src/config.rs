//! Server settings that surfaces need at request time.

// Re-exported: `ServerConfig::trusted_proxies` holds these.
pub use ipnet::IpNet;
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
    pub trusted_proxies: Vec<IpNet>,
    /// Blob sizes and report limits.
    pub limits: Limits,
    /// Origins of browser pages allowed to call the tool endpoint besides the service's own and
    /// loopback pages (`SVC_MCP_ALLOWED_ORIGINS`, comma-separated; `*` allows every origin).
    pub mcp_allowed_origins: Vec<String>,
    /// SMTP and the sender address (`SVC_SMTP_URL`, `SVC_MAIL_FROM`); without SMTP, mail waits in
    /// the outbox.
    pub mail: svc_service::mailer::MailConfig,
    /// Where OAuth client ID metadata documents may be read from: public addresses only, unless
    /// `SVC_OAUTH_METADATA_ALLOW_PRIVATE` allows the private network too (a service whose agents'
    /// documents are served inside it). Allowing it also lets `http://127.0.0.1:<port>/...` be a
    /// client id (the service's own tests, and development against a local client).
    pub client_metadata: svc_service::outbound::OutboundPolicy,
    /// Where webhooks may deliver: public addresses only, unless `SVC_WEBHOOK_ALLOW_PRIVATE`
    /// allows the private network too (receivers inside it, and tests).
    pub webhook_policy: svc_service::outbound::OutboundPolicy,
    /// How long a webhook endpoint may take to answer (10 s).
    pub webhook_timeout: std::time::Duration,
    /// Who may read `/metrics` (`SVC_METRICS_TOKEN`, `SVC_METRICS_BIND`).
    pub metrics: MetricsAccess,
}

/// Who may read `/metrics`: anyone who reaches it (the default), only a request with the bearer
/// token, and on the main address or only on a separate one.
#[derive(Clone, Default)]
pub struct MetricsAccess {
    /// SHA-256 of `SVC_METRICS_TOKEN` (hex, as every secret's hash): the token itself is not kept.
    pub token_hash: Option<String>,
    /// `SVC_METRICS_BIND` is set: the main address answers `/metrics` with 404.
    pub separate_address: bool,
}

impl std::fmt::Debug for MetricsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsAccess")
            .field("token", &self.token_hash.as_ref().map(|_| "***"))
            .field("separate_address", &self.separate_address)
            .finish()
    }
}

impl MetricsAccess {
    pub fn new(token: Option<&str>, separate_address: bool) -> Self {
        let token_hash = token.filter(|token| !token.is_empty()).map(svc_core::secret::hash_secret);
        MetricsAccess { token_hash, separate_address }
    }
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
            mcp_allowed_origins: vec![],
            mail: svc_service::mailer::MailConfig::default(),
            client_metadata: svc_service::outbound::OutboundPolicy::default(),
            webhook_policy: svc_service::outbound::OutboundPolicy::default(),
            webhook_timeout: std::time::Duration::from_secs(10),
            metrics: MetricsAccess::default(),
        }
    }
}

impl ServerConfig {
    /// The URLs OAuth speaks of, and where client metadata documents may be read from.
    pub fn oauth_endpoints(&self) -> svc_service::oauth::Endpoints {
        svc_service::oauth::Endpoints::new(&self.public_url).with_client_metadata(self.client_metadata.clone())
    }

    /// Whether a browser page of `origin` may call the tool endpoint: the service's own origin,
    /// a loopback page (a local tool; a DNS-rebinding page has its own, non-loopback origin), or
    /// one listed in `SVC_MCP_ALLOWED_ORIGINS`. Requests without `Origin` (every CLI and server-side
    /// client) never get here.
    pub fn mcp_origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/');
        let own = url::Url::parse(&self.public_url).map(|url| url.origin().ascii_serialization()).ok();
        if own.as_deref() == Some(origin) {
            return true;
        }
        if self.mcp_allowed_origins.iter().any(|allowed| allowed == "*" || allowed.trim_end_matches('/') == origin) {
            return true;
        }
        match url::Url::parse(origin) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => match url.host() {
                Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                None => false,
            },
            _ => false,
        }
    }

    pub fn is_trusted_proxy(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }
}

/// Parses one address range such as `10.0.0.0/8` or `::1/128`; a bare address is a /32 or /128.
pub fn parse_cidr(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    if text.contains('/') {
        text.parse::<IpNet>().map_err(|_| format!("{text:?} is not an address range (such as 10.0.0.0/8)"))
    } else {
        text.parse::<IpAddr>().map(IpNet::from).map_err(|_| format!("{text:?} is not an address or address range"))
    }
}

/// Parses a comma-separated list of address ranges (`SVC_TRUSTED_PROXIES`).
pub fn parse_cidr_list(text: &str) -> Result<Vec<IpNet>, String> {
    text.split(',').filter(|s| !s.trim().is_empty()).map(parse_cidr).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_ranges() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let net = parse_cidr("10.0.0.0/8").unwrap();
        assert!(net.contains(&ip("10.1.2.3")));
        assert!(!net.contains(&ip("11.0.0.1")));
        assert!(parse_cidr("::1").unwrap().contains(&ip("::1")));
        assert!(!parse_cidr("::1").unwrap().contains(&ip("::2")));
        assert!(parse_cidr("0.0.0.0/0").unwrap().contains(&ip("8.8.8.8")));
        assert!(!parse_cidr("127.0.0.1").unwrap().contains(&ip("127.0.0.2")));
        assert!(parse_cidr("10.0.0.0/33").is_err());
        assert!(parse_cidr("10.0.0/8").is_err());
        assert_eq!(parse_cidr_list("10.0.0.0/8, 127.0.0.1").unwrap().len(), 2);
        assert!(parse_cidr_list("").unwrap().is_empty());
    }

    #[test]
    fn trusted_proxies_match_by_range() {
        let config = ServerConfig { trusted_proxies: parse_cidr_list("10.0.0.0/8,::1").unwrap(), ..Default::default() };
        assert!(config.is_trusted_proxy("10.9.9.9".parse().unwrap()));
        assert!(config.is_trusted_proxy("::1".parse().unwrap()));
        assert!(!config.is_trusted_proxy("192.168.0.1".parse().unwrap()));
    }
}
