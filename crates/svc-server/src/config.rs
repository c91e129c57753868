//! Server settings that surfaces need at request time.

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Base address used in snippets and links (`SVC_PUBLIC_URL`).
    pub public_url: String,
    /// `SVC_RATE_LIMIT=off` turns every rate limit off (benchmarks, test suites, trusted networks).
    pub rate_limits: bool,
    /// Requests per minute per key on the REST API and tool endpoint.
    pub key_requests_per_minute: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { public_url: "http://127.0.0.1:8080".into(), rate_limits: true, key_requests_per_minute: 600 }
    }
}
