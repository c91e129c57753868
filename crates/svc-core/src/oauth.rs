//! OAuth for the tool endpoint (spec Authentication §5): the rules of dynamic client registration
//! (redirect URIs, client names), of authorization requests (PKCE S256, the resource), the choices
//! of the consent page, and the records the store keeps. No I/O.
//!
//! Svc is its own authorization server, on the same origin as the tool endpoint. A client is given
//! the endpoint URL only; it registers itself (RFC 7591), sends the person to `/authorize`, and
//! trades the code for an access token at `/token`. The access token is the secret of an API key
//! minted for the grant (`OAuth: <client name>`), so revoking the key disconnects the client.

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::{Invalid, ids, scope};

/// An authorization code lives ten minutes.
pub const CODE_LIFETIME_MS: i64 = 10 * 60 * 1000;
/// A registration that never completed a token exchange is deleted after a day.
pub const UNUSED_CLIENT_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;
/// Client names are cut to this many characters.
pub const CLIENT_NAME_MAX_CHARS: usize = 100;
/// The name of a client that gave none.
pub const DEFAULT_CLIENT_NAME: &str = "MCP client";
/// Redirect URIs one registration may hold.
pub const MAX_REDIRECT_URIS: usize = 10;
/// The longest redirect URI accepted.
pub const REDIRECT_URI_MAX_LEN: usize = 2000;
/// The scopes a grant can hold (the tool endpoint's two).
pub const SCOPES_SUPPORTED: [&str; 2] = [scope::FEEDBACK_READ, scope::FEEDBACK_WRITE];
/// What OAuth keys are named: this prefix and the client's name.
pub const KEY_NAME_PREFIX: &str = "OAuth: ";

/// A registered client (public: no secret; `token_endpoint_auth_method` `none`).
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthClient {
    pub client_id: String,
    /// As registered (cleaned by [`client_name`]); hostile text, shown only as text.
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub created_at: i64,
    /// The last completed token exchange; `None`: never (such registrations are cleaned up).
    pub last_used_at: Option<i64>,
}

/// An authorization code as stored: only its SHA-256, and everything it was issued for.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthCode {
    pub code_hash: String,
    pub client_id: String,
    pub redirect_uri: String,
    /// The S256 challenge (base64url of the SHA-256 of the verifier).
    pub code_challenge: String,
    /// The `resource` the authorization request named, if any.
    pub resource: Option<String>,
    /// Who consented.
    pub user_id: String,
    /// The organization of the grant (for a project grant, the project's organization).
    pub org_id: String,
    /// `None`: the whole organization.
    pub project_id: Option<String>,
    pub scopes: Vec<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub used_at: Option<i64>,
}

impl OAuthCode {
    pub fn target(&self) -> GrantTarget {
        match &self.project_id {
            Some(project_id) => GrantTarget::Project(project_id.clone()),
            None => GrantTarget::Org(self.org_id.clone()),
        }
    }
}

/// What an OAuth key was made for: the client, where it redirects, who connected it and when.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthGrant {
    /// The key minted for the grant.
    pub key_id: String,
    pub client_id: String,
    /// The client's name when the key was minted.
    pub client_name: String,
    /// The host of the redirect URI consented to (see [`redirect_host`]).
    pub redirect_host: String,
    /// Who connected it.
    pub user_id: String,
    pub org_id: String,
    /// `None` for a grant on the whole organization.
    pub project_id: Option<String>,
    pub created_at: i64,
}

/// A new client id: `mcp_` and 32 random base62 characters.
pub fn new_client_id() -> String {
    format!("mcp_{}", ids::new_random_secret(32))
}

/// A new authorization code: 43 random base62 characters (about 256 bits).
pub fn new_code() -> String {
    ids::new_random_secret(43)
}

/// A client's name as stored: control characters dropped, white space runs made one space, cut
/// to [`CLIENT_NAME_MAX_CHARS`]; [`DEFAULT_CLIENT_NAME`] when nothing is left.
pub fn client_name(raw: Option<&str>) -> String {
    let cleaned: String = raw
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !c.is_control() && !is_invisible_format(*c))
        .collect();
    let words: Vec<&str> = cleaned.split(' ').filter(|w| !w.is_empty()).collect();
    let joined = words.join(" ");
    let cut: String = joined.chars().take(CLIENT_NAME_MAX_CHARS).collect();
    let cut = cut.trim_end().to_string();
    if cut.is_empty() { DEFAULT_CLIENT_NAME.to_string() } else { cut }
}

/// Bidirectional overrides and zero-width characters: a name could otherwise show as something
/// it is not.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// The name of the key minted for a client: `OAuth: <client name>`, cut to the key-name limit.
pub fn key_name(client_name: &str) -> String {
    format!("{KEY_NAME_PREFIX}{client_name}").chars().take(100).collect::<String>().trim_end().to_string()
}

/// Schemes that are never a redirect target: they run code, read local files or are no place to
/// send a code to.
const REFUSED_SCHEMES: [&str; 14] = [
    "javascript",
    "data",
    "file",
    "vbscript",
    "about",
    "blob",
    "filesystem",
    "view-source",
    "ws",
    "wss",
    "ftp",
    "mailto",
    "tel",
    "sms",
];

const LOOPBACK_HOSTS: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Whether a parsed URL is plain http to this machine (RFC 8252 §7.3: any port).
fn is_loopback_http(url: &url::Url) -> bool {
    url.scheme() == "http" && url.host_str().is_some_and(|host| LOOPBACK_HOSTS.contains(&host))
}

/// Checks a redirect URI a client registers: https anywhere; plain http only to the loopback
/// interface (`127.0.0.1`, `localhost`, `[::1]`, any port); or a private-use scheme of a native app
/// (`cursor://...`, `com.example.app:/callback`). No fragment, no user name or password.
pub fn check_redirect_uri(uri: &str) -> Result<(), Invalid> {
    let refuse = |why: &str| Err(Invalid::new(format!("redirect_uris: {uri:?} {why}")));
    if uri.len() > REDIRECT_URI_MAX_LEN {
        return Err(Invalid::new(format!(
            "redirect_uris: a redirect URI is longer than {REDIRECT_URI_MAX_LEN} characters"
        )));
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return refuse("contains white space");
    }
    let Ok(url) = url::Url::parse(uri) else { return refuse("is not an absolute URI") };
    if uri.contains('#') {
        return refuse("has a fragment");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("carries a user name or password");
    }
    match url.scheme() {
        "https" => {
            if url.host_str().is_none_or(str::is_empty) {
                return refuse("names no host");
            }
            Ok(())
        }
        "http" if is_loopback_http(&url) => Ok(()),
        "http" => refuse("is plain http to another machine: use https, or http://127.0.0.1, localhost or [::1]"),
        scheme if REFUSED_SCHEMES.contains(&scheme) => refuse("uses a scheme that cannot be a redirect target"),
        // A private-use scheme (RFC 8252 §7.1): the url crate has already checked its syntax.
        _ => Ok(()),
    }
}

/// How long a client ID metadata document is trusted before it is read again.
pub const CLIENT_METADATA_MAX_AGE_MS: i64 = 3600 * 1000;
/// The largest client ID metadata document read.
pub const CLIENT_METADATA_MAX_BYTES: usize = 64 * 1024;

/// Whether a `client_id` is the URL of a client ID metadata document (MCP 2025-11-25): https with
/// a host that is a name (an IP address, `localhost` and hosts without a dot are refused, so the
/// server is not sent to its own network), a path, no fragment, query or user name. With
/// `allow_loopback_http` (tests and local development only), `http://127.0.0.1:<port>/...` too.
pub fn is_client_metadata_url(client_id: &str, allow_loopback_http: bool) -> bool {
    let Ok(url) = url::Url::parse(client_id) else { return false };
    if client_id.len() > REDIRECT_URI_MAX_LEN
        || url.path().len() < 2
        || url.fragment().is_some()
        || url.query().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return false;
    }
    match (url.scheme(), url.host()) {
        ("https", Some(url::Host::Domain(host))) => host.contains('.') && !host.ends_with(".localhost"),
        ("http", Some(url::Host::Ipv4(ip))) => allow_loopback_http && ip.is_loopback(),
        _ => false,
    }
}

/// The client a client ID metadata document describes: its `client_id` must be the URL it was read
/// from, its `redirect_uris` are checked as a registration's, and it must be a public client.
pub fn client_from_metadata(url: &str, document: &serde_json::Value, now: i64) -> Result<OAuthClient, Invalid> {
    if document.get("client_id").and_then(serde_json::Value::as_str) != Some(url) {
        return Err(Invalid::new("the client metadata document's client_id is not the URL it was read from"));
    }
    let method = document.get("token_endpoint_auth_method").and_then(serde_json::Value::as_str);
    if method.is_some_and(|m| m != "none") {
        return Err(Invalid::new("the client must be public (token_endpoint_auth_method none)"));
    }
    let redirect_uris: Vec<String> = document
        .get("redirect_uris")
        .and_then(serde_json::Value::as_array)
        .map(|uris| uris.iter().filter_map(|u| u.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(Invalid::new(format!("redirect_uris must name 1 to {MAX_REDIRECT_URIS} redirect URIs")));
    }
    for uri in &redirect_uris {
        check_redirect_uri(uri)?;
    }
    Ok(OAuthClient {
        client_id: url.to_string(),
        client_name: client_name(document.get("client_name").and_then(serde_json::Value::as_str)),
        redirect_uris,
        created_at: now,
        last_used_at: None,
    })
}

/// Whether a redirect URI in an authorization request is one the client registered: the same
/// string, except that a loopback http URI may name any port (RFC 8252 §7.3).
pub fn redirect_matches(registered: &str, requested: &str) -> bool {
    if registered == requested {
        return true;
    }
    let (Ok(registered), Ok(requested)) = (url::Url::parse(registered), url::Url::parse(requested)) else {
        return false;
    };
    is_loopback_http(&registered)
        && is_loopback_http(&requested)
        && registered.host_str() == requested.host_str()
        && registered.path() == requested.path()
        && registered.query() == requested.query()
        && registered.fragment().is_none()
        && requested.fragment().is_none()
        && requested.username().is_empty()
        && requested.password().is_none()
}

/// Where a redirect URI leads, as the consent page and the key list name it: the host (with a
/// port that is not the scheme's default) for http and https, `scheme://host` or `scheme:` for a
/// private-use scheme.
pub fn redirect_host(uri: &str) -> String {
    let Ok(url) = url::Url::parse(uri) else { return uri.chars().take(100).collect() };
    let host = url.host_str().unwrap_or_default();
    match url.scheme() {
        "http" | "https" => match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        },
        scheme if host.is_empty() => format!("{scheme}:"),
        scheme => format!("{scheme}://{host}"),
    }
}

/// Whether a `code_challenge` has the shape of an S256 challenge: 43 base64url characters.
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether a `code_verifier` has the shape RFC 7636 §4.1 gives it: 43 to 128 unreserved characters.
pub fn is_code_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier: base64url (no padding) of its SHA-256.
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` proves `challenge` (compared in constant time).
pub fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    is_code_verifier(verifier) && crate::secret::constant_time_eq(s256(verifier).as_bytes(), challenge.as_bytes())
}

/// Whether a `resource` parameter names the tool endpoint `mcp_url` (a trailing slash tolerated).
pub fn resource_matches(resource: &str, mcp_url: &str) -> bool {
    resource.trim_end_matches('/') == mcp_url.trim_end_matches('/')
}

/// The access a person grants on the consent page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `feedback:read`.
    Read,
    /// `feedback:read` and `feedback:write`.
    Triage,
}

impl Access {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        match text {
            "read" => Ok(Access::Read),
            "triage" => Ok(Access::Triage),
            _ => Err(Invalid::new("access must be read or triage")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Triage => "triage",
        }
    }

    pub fn scopes(self) -> Vec<String> {
        match self {
            Access::Read => vec![scope::FEEDBACK_READ.into()],
            Access::Triage => vec![scope::FEEDBACK_READ.into(), scope::FEEDBACK_WRITE.into()],
        }
    }

    /// The access a `scope` parameter hints at: triage when it asks for `feedback:write`.
    pub fn hinted_by(scope_param: Option<&str>) -> Self {
        match scope_param {
            Some(scopes) if scopes.split(' ').any(|s| s == scope::FEEDBACK_WRITE) => Access::Triage,
            _ => Access::Read,
        }
    }
}

/// What a grant reaches: one project, or every project of an organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantTarget {
    Project(String),
    Org(String),
}

impl GrantTarget {
    /// `project:<id>` or `org:<id>`, as the consent form sends it.
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let invalid = || Invalid::new("grant must be project:<id> or org:<id>");
        let (kind, id) = text.split_once(':').ok_or_else(invalid)?;
        if !ids::is_object_id(id) {
            return Err(invalid());
        }
        match kind {
            "project" => Ok(GrantTarget::Project(id.to_string())),
            "org" => Ok(GrantTarget::Org(id.to_string())),
            _ => Err(invalid()),
        }
    }

    pub fn form_value(&self) -> String {
        match self {
            GrantTarget::Project(id) => format!("project:{id}"),
            GrantTarget::Org(id) => format!("org:{id}"),
        }
    }
}

#[cfg(test)]
mod metadata_document_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_urls_are_https_names_with_a_path() {
        for good in ["https://claude.ai/oauth/client.json", "https://app.example.com/mcp/client-metadata"] {
            assert!(is_client_metadata_url(good, false), "{good}");
        }
        for bad in [
            "https://example.com",
            "https://example.com/",
            "http://example.com/client.json",
            "https://10.0.0.1/client.json",
            "https://[::1]/client.json",
            "https://localhost/client.json",
            "https://intranet/client.json",
            "https://a.localhost/client.json",
            "https://user@example.com/client.json",
            "https://example.com/client.json?x=1",
            "https://example.com/client.json#x",
            "ab3f0c4e2d1a4b5c6d7e8f90",
        ] {
            assert!(!is_client_metadata_url(bad, false), "{bad}");
        }
        assert!(!is_client_metadata_url("http://127.0.0.1:9000/client.json", false));
        assert!(is_client_metadata_url("http://127.0.0.1:9000/client.json", true));
        assert!(!is_client_metadata_url("http://10.1.2.3:9000/client.json", true));
    }

    #[test]
    fn a_document_names_itself_and_a_public_client() {
        let url = "https://app.example.com/client.json";
        let doc =
            json!({"client_id": url, "client_name": "Claude", "redirect_uris": ["http://localhost:7777/callback"]});
        let client = client_from_metadata(url, &doc, 5).unwrap();
        assert_eq!((client.client_name.as_str(), client.created_at), ("Claude", 5));
        assert!(client_from_metadata("https://other.example.com/client.json", &doc, 5).is_err());
        let secret = json!({"client_id": url, "redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_basic"});
        assert!(client_from_metadata(url, &secret, 5).is_err());
        assert!(client_from_metadata(url, &json!({"client_id": url, "redirect_uris": []}), 5).is_err());
        assert!(
            client_from_metadata(url, &json!({"client_id": url, "redirect_uris": ["javascript:alert(1)"]}), 5).is_err()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_accepted_and_refused() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:9999/callback",
            "http://localhost:8787/callback",
            "http://[::1]:33418/cb",
            "http://127.0.0.1/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "com.example.app:/oauth2redirect",
            "https://www.cursor.com/agents/mcp/oauth/callback?x=1",
        ] {
            assert!(check_redirect_uri(good).is_ok(), "{good}");
        }
        for bad in [
            "http://example.com/callback",
            "http://127.0.0.2/callback",
            "http://localhost.evil.example/cb",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "https://claude.ai/cb#frag",
            "http://127.0.0.1:9999/cb#",
            "/relative/callback",
            "https://user:pw@example.com/cb",
            "not a uri",
            "",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
        assert!(check_redirect_uri(&format!("https://a.example/{}", "x".repeat(REDIRECT_URI_MAX_LEN))).is_err());
    }

    #[test]
    fn loopback_redirects_match_on_any_port_others_exactly() {
        assert!(redirect_matches("http://127.0.0.1:9999/callback", "http://127.0.0.1:41234/callback"));
        assert!(redirect_matches("http://localhost/callback", "http://localhost:5000/callback"));
        assert!(redirect_matches("http://[::1]:1/cb", "http://[::1]:2/cb"));
        assert!(!redirect_matches("http://127.0.0.1:9999/callback", "http://localhost:9999/callback"));
        assert!(!redirect_matches("http://127.0.0.1:9999/callback", "http://127.0.0.1:9999/other"));
        assert!(!redirect_matches("https://claude.ai/cb", "https://claude.ai:444/cb"));
        assert!(!redirect_matches("https://claude.ai/cb", "https://claude.ai/cb/"));
        assert!(redirect_matches(
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback"
        ));
    }

    #[test]
    fn redirect_hosts_name_where_a_code_goes() {
        assert_eq!(redirect_host("https://claude.ai/api/mcp/auth_callback"), "claude.ai");
        assert_eq!(redirect_host("http://127.0.0.1:9999/callback"), "127.0.0.1:9999");
        assert_eq!(redirect_host("cursor://anysphere.cursor-mcp/oauth/callback"), "cursor://anysphere.cursor-mcp");
        assert_eq!(redirect_host("com.example.app:/cb"), "com.example.app:");
    }

    #[test]
    fn client_names_are_one_clean_line() {
        assert_eq!(client_name(None), DEFAULT_CLIENT_NAME);
        assert_eq!(client_name(Some("  \n\t ")), DEFAULT_CLIENT_NAME);
        assert_eq!(client_name(Some(" Claude\n Code\u{202E} ")), "Claude Code");
        assert_eq!(client_name(Some(&"é".repeat(150))).chars().count(), CLIENT_NAME_MAX_CHARS);
        assert_eq!(key_name(&"x".repeat(100)).chars().count(), 100);
        assert_eq!(key_name("Cursor"), "OAuth: Cursor");
    }

    #[test]
    fn pkce_s256_as_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(s256(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(verifier_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!verifier_matches("short", &s256("short")));
        assert!(is_s256_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!is_s256_challenge(verifier.trim_end_matches('k')));
    }

    #[test]
    fn grants_and_access_from_the_form() {
        let id = "0123456789abcdef01234567";
        assert_eq!(GrantTarget::parse(&format!("project:{id}")), Ok(GrantTarget::Project(id.into())));
        assert_eq!(GrantTarget::parse(&format!("org:{id}")).unwrap().form_value(), format!("org:{id}"));
        assert!(GrantTarget::parse("org:nope").is_err() && GrantTarget::parse(id).is_err());
        assert_eq!(Access::parse("triage").unwrap().scopes(), ["feedback:read", "feedback:write"]);
        assert!(Access::parse("admin").is_err());
        assert_eq!(Access::hinted_by(Some("feedback:read feedback:write")), Access::Triage);
        assert_eq!(Access::hinted_by(None), Access::Read);
        assert!(resource_matches("https://h.example/mcp/", "https://h.example/mcp"));
        assert!(!resource_matches("https://h.example/api", "https://h.example/mcp"));
    }
}
