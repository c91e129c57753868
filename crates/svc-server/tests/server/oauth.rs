//! OAuth for the tool endpoint, driven as a client and a person would: discovery, registration,
//! the consent page (signed in through the form), the code exchange, and the minted key used on
//! `/mcp` within exactly the granted scopes; then every refusal a client can meet, revocation and
//! reconnection, the person's connected agents, and the clean-up of unused registrations.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use serde_json::{Value, json};
use svc_core::account::Role;
use svc_core::oauth::{OAuthCode, s256};
use svc_core::secret::{Secret, hash_secret};
use svc_server::ServerConfig;
use svc_service::accounts::{self, NewUser};

use super::common::*;
use super::mcp_support::{self, expect_error, req, tool};

const BASE: &str = "http://127.0.0.1:8080";
const REDIRECT: &str = "http://127.0.0.1:9999/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-a-verifier";

async fn register(app: &TestApp, body: Value) -> Resp {
    let request = Request::post("/register")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    app.send(request).await
}

/// Registers a client with `REDIRECT` (and a Cursor-style callback); returns its id.
async fn client(app: &TestApp, name: &str) -> String {
    let resp = register(
        app,
        json!({"client_name": name, "redirect_uris": [REDIRECT, "cursor://anysphere.cursor-mcp/oauth/callback"]}),
    )
    .await;
    resp.ok(201)["client_id"].as_str().unwrap().to_string()
}

/// `/authorize?...` for a client, with `REDIRECT`, an S256 challenge of `VERIFIER`, the resource
/// and a state; `extra` replaces or adds parameters (an empty value drops one).
fn authorize_path(client_id: &str, extra: &[(&str, &str)]) -> String {
    let challenge = s256(VERIFIER);
    let resource = format!("{BASE}/mcp");
    let mut pairs: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("state", "st-123"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("resource", &resource),
        ("scope", "feedback:read feedback:write"),
    ];
    for (name, value) in extra {
        pairs.retain(|(n, _)| n != name);
        if !value.is_empty() {
            pairs.push((name, value));
        }
    }
    format!("/authorize?{}", url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish())
}

/// The value of the hidden `request` field of a consent page.
#[track_caller]
fn request_handle(html: &str) -> String {
    let at = html.find(r#"name="request" value=""#).expect("the consent form carries its request");
    let start = at + r#"name="request" value=""#.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

/// The query parameters of a redirect location.
fn query_of(location: &str) -> Vec<(String, String)> {
    let url = url::Url::parse(location).unwrap_or_else(|_| panic!("not a URL: {location}"));
    url.query_pairs().map(|(n, v)| (n.into_owned(), v.into_owned())).collect()
}

fn param(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// The "Return to ..." link of a refused authorization page, unescaped.
#[track_caller]
fn link_back(html: &str) -> String {
    let at = html.find("class=\"button\" rel=\"noreferrer\"").expect("a link back to the application");
    let start = html[..at].rfind("href=\"").unwrap() + "href=\"".len();
    let end = start + html[start..].find('"').unwrap();
    html[start..end].replace("&#38;", "&").replace("&amp;", "&")
}

/// Opens the consent page for `path` and answers it; returns the redirect location.
async fn answer_consent(app: &TestApp, cookie: &str, path: &str, fields: &[(&str, &str)]) -> String {
    let page = app.get_page(path, Some(cookie)).await;
    assert_eq!(page.status.as_u16(), 200, "consent page: {}", page.text);
    let handle = request_handle(&page.text);
    let csrf = csrf_of(cookie);
    let mut all = vec![("_csrf", csrf.as_str()), ("request", handle.as_str())];
    all.extend_from_slice(fields);
    let resp = app.post_form("/authorize", &all, Some(cookie)).await;
    assert_eq!(resp.status.as_u16(), 303, "consent answer: {}", resp.text);
    resp.location().unwrap().to_string()
}

/// Approves `grant` with `access` for the client; returns the code.
async fn code_for(app: &TestApp, cookie: &str, client_id: &str, grant: &str, access: &str) -> String {
    let location = answer_consent(
        app,
        cookie,
        &authorize_path(client_id, &[]),
        &[("grant", grant), ("access", access), ("decision", "approve")],
    )
    .await;
    assert!(location.starts_with(&format!("{REDIRECT}?")), "{location}");
    let pairs = query_of(&location);
    assert_eq!(param(&pairs, "state").as_deref(), Some("st-123"));
    assert_eq!(param(&pairs, "iss").as_deref(), Some(BASE), "RFC 9207 iss");
    param(&pairs, "code").expect("a code")
}

async fn token(app: &TestApp, fields: &[(&str, &str)]) -> Resp {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    let request = Request::post("/token")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap();
    app.send(request).await
}

/// The token request for `code` as a well-behaved client sends it; `extra` replaces fields.
async fn exchange(app: &TestApp, client_id: &str, code: &str, extra: &[(&str, &str)]) -> Resp {
    let resource = format!("{BASE}/mcp");
    let mut fields: Vec<(&str, &str)> = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("client_id", client_id),
        ("code_verifier", VERIFIER),
        ("resource", &resource),
    ];
    for (name, value) in extra {
        fields.retain(|(n, _)| n != name);
        if !value.is_empty() {
            fields.push((name, value));
        }
    }
    token(app, &fields).await
}

#[track_caller]
fn oauth_error(resp: &Resp, error: &str) {
    assert_eq!(resp.status.as_u16(), 400, "{error}: {}", resp.text);
    assert_eq!(resp.body["error"], json!(error), "{}", resp.text);
    assert!(resp.body["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{}", resp.text);
    assert!(resp.body.get("access_token").is_none());
}

/// A whole connection: register, consent, exchange; returns (client id, access token).
async fn connect(app: &TestApp, cookie: &str, name: &str, grant: &str, access: &str) -> (String, String) {
    let client_id = client(app, name).await;
    let code = code_for(app, cookie, &client_id, grant, access).await;
    let resp = exchange(app, &client_id, &code, &[]).await;
    let body = resp.ok(200);
    (client_id, body["access_token"].as_str().unwrap().to_string())
}

async fn owner(app: &TestApp) -> String {
    app.user("olivia@example.com").await;
    app.sign_in("olivia@example.com", PASSWORD).await
}

fn project_grant(app: &TestApp) -> String {
    format!("project:{}", app.pid())
}

fn org_grant(app: &TestApp) -> String {
    format!("org:{}", app.project.org_id)
}

/// The key a token is, as the store holds it.
async fn key_of(app: &TestApp, token: &str) -> svc_core::model::ApiKey {
    app.store.find_key_by_hash(&hash_secret(token)).await.unwrap().expect("the token is a stored key").key
}

// ---------------------------------------------------------------------------------------------
// Discovery

#[tokio::test]
async fn discovery_documents_name_one_issuer_and_the_tool_endpoint() {
    let base = "https://svc.example";
    let app = TestApp::with_config(ServerConfig { public_url: format!("{base}/"), ..no_rate_limits() }).await;
    let resource = json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
        "scopes_supported": ["feedback:read", "feedback:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Svc",
    });
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let request =
            Request::get(path).header(header::ORIGIN, "https://inspector.example").body(Body::empty()).unwrap();
        let resp = app.send(request).await;
        assert_eq!(resp.ok(200), &resource, "{path}");
        assert_eq!(resp.header("access-control-allow-origin"), Some("*"), "{path}: readable from any origin");
    }
    let server = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["feedback:read", "feedback:write"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    });
    for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
        let resp = app.raw("GET", path, None, None).await;
        assert_eq!(resp.ok(200), &server, "{path}");
        // Clients compare these character for character.
        assert_eq!(resp.body["issuer"], resource["authorization_servers"][0]);
    }
    // A browser-based client's preflight for the token endpoint.
    let preflight = Request::options("/token")
        .header(header::ORIGIN, "https://inspector.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .body(Body::empty())
        .unwrap();
    let resp = app.send(preflight).await;
    assert!(resp.status.is_success(), "{}", resp.status);
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn a_401_on_the_tool_endpoint_names_the_resource_metadata_and_a_valid_key_is_never_401() {
    let app = TestApp::new().await;
    let challenge = format!(r#"Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp""#);
    let ping = serde_json::to_vec(&req(json!(1), "ping", json!({}))).unwrap();
    for key in [None, Some("pr_sk_unknownunknownunknownunknownunknownunkn")] {
        let resp = mcp_support::post_raw(&app, key, &[], ping.clone()).await;
        expect_error(&resp, 401, &Value::Null, -32001);
        assert_eq!(resp.header("www-authenticate"), Some(challenge.as_str()), "{key:?}");
    }
    let (_, key) = app.mint(&["feedback:read"]).await;
    let resp = mcp_support::post_raw(&app, Some(&key), &[], ping).await;
    assert_eq!(resp.status.as_u16(), 200, "{}", resp.text);
    assert!(resp.header("www-authenticate").is_none());
    let get = app.raw("GET", "/mcp", None, None).await;
    assert_eq!((get.status.as_u16(), get.header("allow")), (405, Some("POST")));
}

// ---------------------------------------------------------------------------------------------
// Registration

#[tokio::test]
async fn registration_accepts_https_loopback_and_private_schemes_and_refuses_the_rest() {
    let app = TestApp::new().await;
    let accepted = [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://localhost:8787/callback",
        "http://[::1]:6276/oauth/callback",
        "cursor://anysphere.cursor-mcp/oauth/callback",
    ];
    let resp = register(
        &app,
        json!({
            "redirect_uris": accepted,
            "client_name": "Cursor",
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_post",
            "application_type": "native",
            "scope": "feedback:read feedback:write",
            "unknown_field": {"ignored": true},
        }),
    )
    .await;
    let body = resp.ok(201);
    assert_eq!(body["redirect_uris"], json!(accepted), "echoed");
    assert_eq!(body["token_endpoint_auth_method"], "none", "a public client whatever it asked for");
    assert!(body.get("client_secret").is_none());
    assert_eq!(body["client_name"], "Cursor");
    assert_eq!(body["grant_types"], json!(["authorization_code"]));
    assert_eq!(body["response_types"], json!(["code"]));
    assert!(body["client_id"].as_str().is_some_and(|id| id.starts_with("mcp_")));
    assert!(body["client_id_issued_at"].as_i64().is_some_and(|at| at > 1_700_000_000));
    assert_eq!(resp.header("cache-control"), Some("no-store"));

    for refused in [
        "http://example.com/callback",
        "http://192.168.1.5:8080/callback",
        "javascript:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "https://claude.ai/cb#fragment",
        "/callback",
    ] {
        let resp = register(&app, json!({"redirect_uris": ["https://ok.example/cb", refused]})).await;
        oauth_error(&resp, "invalid_redirect_uri");
    }
    for body in [
        json!({}),
        json!({"redirect_uris": []}),
        json!({"redirect_uris": "https://a.example/cb"}),
        json!({"redirect_uris": [1]}),
    ] {
        oauth_error(&register(&app, body).await, "invalid_redirect_uri");
    }
    oauth_error(
        &register(&app, json!({"redirect_uris": [REDIRECT], "client_name": 7})).await,
        "invalid_client_metadata",
    );
    oauth_error(&register(&app, json!(["not", "an", "object"])).await, "invalid_client_metadata");

    // No name: a default; a long one: cut to 100 characters.
    let unnamed = register(&app, json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(unnamed.ok(201)["client_name"], "MCP client");
    let long = register(&app, json!({"redirect_uris": [REDIRECT], "client_name": "n".repeat(300)})).await;
    assert_eq!(long.ok(201)["client_name"].as_str().unwrap().chars().count(), 100);
}

#[tokio::test]
async fn registration_is_rate_limited_per_client_address() {
    let app = TestApp::with_config(ServerConfig { rate_limits: true, ..ServerConfig::default() }).await;
    let from = |ip: &str| {
        let mut request = Request::post("/register")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(json!({"redirect_uris": [REDIRECT]}).to_string()))
            .unwrap();
        request.extensions_mut().insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 40000)));
        request
    };
    for n in 0..20 {
        assert_eq!(app.send(from("203.0.113.7")).await.status.as_u16(), 201, "registration {n}");
    }
    let over = app.send(from("203.0.113.7")).await;
    assert_eq!(over.status.as_u16(), 429, "{}", over.text);
    assert_eq!(over.body["error"], "rate_limited");
    assert!(over.header("retry-after").is_some_and(|s| s.parse::<u64>().unwrap() >= 1));
    assert_eq!(app.send(from("198.51.100.1")).await.status.as_u16(), 201, "another address has its own budget");
}

// ---------------------------------------------------------------------------------------------
// Authorization

#[tokio::test]
async fn authorization_requests_that_cannot_be_trusted_are_refused_on_a_page_without_a_redirect() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let client_id = client(&app, "Agent").await;
    for path in [
        authorize_path("mcp_unknown", &[]),
        authorize_path(&client_id, &[("redirect_uri", "https://evil.example/callback")]),
        authorize_path(&client_id, &[("redirect_uri", "http://127.0.0.1:9999/elsewhere")]),
        authorize_path(&client_id, &[("redirect_uri", "")]),
        authorize_path("", &[]),
    ] {
        for cookie in [None, Some(cookie.as_str())] {
            let resp = app.get_page(&path, cookie).await;
            assert_eq!(resp.status.as_u16(), 400, "{path}: {}", resp.text);
            assert!(resp.location().is_none(), "{path}: nothing is sent to an untrusted address");
            assert!(resp.text.contains("<h1>"), "an error page");
        }
    }
}

#[tokio::test]
async fn other_bad_authorization_requests_are_shown_on_a_page_that_offers_the_way_back() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    // A client anyone may register, whose redirect URI is any https address: with a redirect on
    // error, `/authorize` would send a browser there with no session and no click.
    let open = register(&app, json!({"client_name": "Redirector", "redirect_uris": ["https://evil.example/land"]}))
        .await
        .ok(201)["client_id"]
        .as_str()
        .unwrap()
        .to_string();
    let client_id = client(&app, "Agent").await;
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[("resource", "https://elsewhere.example/mcp")], "invalid_target"),
        (&[("resource", "http://127.0.0.1:8080/api/v1")], "invalid_target"),
        (&[("code_challenge_method", "plain")], "invalid_request"),
        (&[("code_challenge_method", "")], "invalid_request"),
        (&[("code_challenge", "")], "invalid_request"),
        (&[("response_type", "token")], "unsupported_response_type"),
    ];
    for (extra, error) in cases {
        for signed_in in [None, Some(cookie.as_str())] {
            let resp = app.get_page(&authorize_path(&client_id, extra), signed_in).await;
            assert_eq!(resp.status.as_u16(), 400, "{extra:?}: {}", resp.text);
            assert!(resp.location().is_none(), "{extra:?}: never redirected automatically");
            // The page names the problem and offers the way back to the application, with the
            // OAuth error it needs (RFC 6749 §4.1.2.1).
            let back = link_back(&resp.text);
            assert!(back.starts_with(&format!("{REDIRECT}?")), "{back}");
            let pairs = query_of(&back);
            assert_eq!(param(&pairs, "error").as_deref(), Some(error), "{extra:?}");
            assert_eq!(param(&pairs, "state").as_deref(), Some("st-123"));
            assert_eq!(param(&pairs, "iss").as_deref(), Some(BASE));
            assert_eq!(param(&pairs, "code"), None);
        }
    }
    let path = format!(
        "/authorize?response_type=token&client_id={open}&redirect_uri={}&state=x",
        url::form_urlencoded::byte_serialize(b"https://evil.example/land").collect::<String>()
    );
    let resp = app.get_page(&path, None).await;
    assert_eq!(resp.status.as_u16(), 400);
    assert!(resp.location().is_none(), "no redirector: {:?}", resp.location());
    assert!(resp.text.contains("Return to evil.example"), "{}", resp.text);
    // Tolerated: a trailing slash on the resource, no resource, another loopback port.
    for extra in [
        &[("resource", "http://127.0.0.1:8080/mcp/")][..],
        &[("resource", "")][..],
        &[("redirect_uri", "http://127.0.0.1:51234/callback")][..],
    ] {
        let resp = app.get_page(&authorize_path(&client_id, extra), None).await;
        assert!(resp.location().is_some_and(|l| l.starts_with("/sign-in?next=")), "{extra:?}: {:?}", resp.location());
    }
}

#[tokio::test]
async fn someone_not_signed_in_signs_in_and_comes_back_to_the_consent_page() {
    let app = TestApp::new().await;
    app.user("olivia@example.com").await;
    let client_id = client(&app, "Claude Code").await;
    let path = authorize_path(&client_id, &[]);
    let resp = app.get_page(&path, None).await;
    assert_eq!(resp.status.as_u16(), 303);
    let location = resp.location().unwrap().to_string();
    let next = location.strip_prefix("/sign-in?next=").expect("sent to sign in");
    let next: String = url::form_urlencoded::parse(format!("next={next}").as_bytes()).next().unwrap().1.into_owned();
    assert_eq!(next, path, "the whole request comes along");

    let form = app.get_page(&location, None).await;
    assert!(form.text.contains(r#"name="next" value="/authorize?"#), "the sign-in form carries it on");
    let signed_in = app
        .post_form("/sign-in", &[("email", "olivia@example.com"), ("password", PASSWORD), ("next", &next)], None)
        .await;
    assert_eq!(signed_in.status.as_u16(), 303);
    assert_eq!(signed_in.location(), Some(path.as_str()), "back to the consent page");
    let page = app.get_page(&path, Some(&signed_in.cookie())).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    assert!(page.text.contains("<h1>Connect Claude Code</h1>"), "{}", page.text);
    assert!(page.text.contains("127.0.0.1:9999"), "names the redirect host");
}

#[tokio::test]
async fn the_consent_page_names_the_client_as_text_and_offers_projects_organizations_and_access() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let (other, _) = app.other_project().await;
    let hostile = r#"<img src=x onerror=alert(1)>"Evil" & co"#;
    let client_id = client(&app, hostile).await;
    let page = app.get_page(&authorize_path(&client_id, &[]), Some(&cookie)).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    assert!(!page.text.contains("<img src=x"), "the client's name is never markup");
    assert!(page.text.contains("Connect &#60;img src=x onerror=alert(1)&#62;&#34;Evil&#34; &#38; co"), "{}", page.text);
    for value in [project_grant(&app), format!("project:{}", other.id), org_grant(&app)] {
        assert!(page.text.contains(&format!(r#"name="grant" value="{value}""#)), "offers {value}");
    }
    for value in ["read", "triage"] {
        assert!(page.text.contains(&format!(r#"name="access" value="{value}""#)));
    }
    assert!(page.text.contains(r#"name="decision" value="approve" class="primary">Allow</button>"#));
    assert!(page.text.contains(r#"name="decision" value="deny" formnovalidate>Deny</button>"#));
    assert!(page.text.contains(r#"<form method="post" action="/authorize""#));
    // The scope hint (feedback:write asked for) preselects triage.
    assert!(page.text.contains(r#"value="triage" checked"#));
    // The form may lead on to the redirect URI, and nowhere else.
    let policy = page.header("content-security-policy").unwrap();
    assert!(policy.contains("form-action 'self' http://127.0.0.1:9999;"), "{policy}");
    assert!(policy.contains("script-src 'self';"), "{policy}");
}

#[tokio::test]
async fn deny_sends_access_denied_with_the_state_and_issuer() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let client_id = client(&app, "Agent").await;
    let location = answer_consent(&app, &cookie, &authorize_path(&client_id, &[]), &[("decision", "deny")]).await;
    let pairs = query_of(&location);
    assert!(location.starts_with(REDIRECT));
    assert_eq!(param(&pairs, "error").as_deref(), Some("access_denied"));
    assert_eq!(param(&pairs, "state").as_deref(), Some("st-123"));
    assert_eq!(param(&pairs, "iss").as_deref(), Some(BASE));
    assert_eq!(param(&pairs, "code"), None);
}

#[tokio::test]
async fn the_consent_form_needs_the_session_token_and_a_grant_the_person_holds() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let client_id = client(&app, "Agent").await;
    let page = app.get_page(&authorize_path(&client_id, &[]), Some(&cookie)).await;
    let handle = request_handle(&page.text);
    let grant = project_grant(&app);
    let fields = [("request", handle.as_str()), ("grant", grant.as_str()), ("access", "read"), ("decision", "approve")];
    let forged = app.post_form("/authorize", &fields, Some(&cookie)).await;
    assert_eq!(forged.status.as_u16(), 403, "no CSRF token");
    let csrf = csrf_of(&cookie);
    let mut with_csrf = vec![("_csrf", csrf.as_str())];
    with_csrf.extend_from_slice(&fields);
    let cross_site =
        app.post_form_with("/authorize", &with_csrf, Some(&cookie), &[("origin", "https://evil.example")]).await;
    assert_eq!(cross_site.status.as_u16(), 403, "another site's form");

    // An organization the person does not belong to, or no choice at all: the page again, no code.
    let foreign = format!("org:{}", svc_core::ids::new_id());
    for (grant, access) in [(foreign.as_str(), "read"), ("", "read"), (grant.as_str(), "admin")] {
        let fields = [
            ("_csrf", csrf.as_str()),
            ("request", handle.as_str()),
            ("grant", grant),
            ("access", access),
            ("decision", "approve"),
        ];
        let resp = app.post_form("/authorize", &fields, Some(&cookie)).await;
        assert_eq!(resp.status.as_u16(), 400, "{grant} {access}: {}", resp.text);
        assert!(resp.location().is_none());
        assert!(resp.text.contains("<h1>Connect Agent</h1>") && resp.text.contains(r#"role="alert""#));
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens and the minted key

#[tokio::test]
async fn a_project_read_grant_mints_a_read_only_key_for_that_project_on_the_tool_endpoint_only() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let report = app.seed(Seed::text("The checkout button does nothing")).await;
    let client_id = client(&app, "Claude Code").await;
    let code = code_for(&app, &cookie, &client_id, &project_grant(&app), "read").await;
    let resp = exchange(&app, &client_id, &code, &[]).await;
    let body = resp.ok(200).clone();
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let token = body["access_token"].as_str().unwrap();
    assert!(token.starts_with("pr_sk_"));
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "feedback:read");
    assert!(body.get("refresh_token").is_none(), "no refresh token: revoking the key disconnects");

    let key = key_of(&app, token).await;
    assert_eq!(key.name, "OAuth: Claude Code");
    assert_eq!(key.scopes, ["feedback:read"]);
    assert_eq!(key.project_id.as_deref(), Some(app.pid()));
    assert_eq!(key.origin, svc_core::model::KeyOrigin::Oauth);
    assert_eq!(key.expires_at, None);

    let listed = tool(&app, token, "list_reports", json!({})).await.json();
    assert_eq!(listed[0]["id"], json!(report.id));
    let refused = mcp_support::post(
        &app,
        token,
        req(json!(9), "tools/call", json!({"name": "set_status", "arguments": {"id": report.id, "status": "fixed"}})),
    )
    .await;
    assert_eq!(expect_error(&refused, 403, &json!(9), -32003), "forbidden: this key lacks feedback:write");

    let rest = app.get("/api/v1/me", token).await;
    assert!(rest.error(403, "FORBIDDEN").contains("OAuth"), "OAuth keys are for the tool endpoint");
    assert_eq!(app.get(&app.p("/feedback"), token).await.status.as_u16(), 403);

    // The Keys tab tells what it is: the client, where it redirects, who connected it.
    let keys = app.get_page(&format!("/projects/{}/keys", app.pid()), Some(&cookie)).await;
    let row_at = keys.text.find(&format!(r#"id="key-{}""#, key.id)).expect("listed");
    let row = &keys.text[row_at..row_at + keys.text[row_at..].find("</tr>").unwrap()];
    assert!(row.contains("OAuth: Claude Code") && row.contains("127.0.0.1:9999"), "{row}");
    assert!(row.contains("connected by olivia@example.com"), "{row}");
}

#[tokio::test]
async fn an_organization_triage_grant_mints_an_org_wide_key_that_triages_every_project() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let (other, _) = app.other_project().await;
    let here = app.seed(Seed::text("A report here")).await;
    let there = seed_report(&app.store, &other.id, Seed::text("A report there")).await;
    let (_, token) = connect(&app, &cookie, "Claude Desktop", &org_grant(&app), "triage").await;
    let key = key_of(&app, &token).await;
    assert_eq!((key.project_id.clone(), key.org_id.as_str()), (None, app.project.org_id.as_str()));
    assert_eq!(key.scopes, ["feedback:read", "feedback:write"]);
    assert_eq!(key.name, "OAuth: Claude Desktop");

    let listed = tool(&app, &token, "list_reports", json!({})).await.json();
    let ids: Vec<&str> = listed.as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&here.id.as_str()) && ids.contains(&there.id.as_str()), "{ids:?}");
    let set = tool(&app, &token, "set_status", json!({"id": there.id, "status": "triaged"})).await.json();
    assert_eq!(set["status"], "triaged");
    app.get("/api/v1/me", &token).await.error(403, "FORBIDDEN");

    let members = app.get_page("/members", Some(&cookie)).await;
    let row_at = members.text.find(&format!(r#"id="key-{}""#, key.id)).expect("listed with the organization's keys");
    let row = &members.text[row_at..row_at + members.text[row_at..].find("</tr>").unwrap()];
    assert!(
        row.contains("Claude Desktop") && row.contains("127.0.0.1:9999") && row.contains("olivia@example.com"),
        "{row}"
    );
}

#[tokio::test]
async fn a_member_may_grant_read_or_triage_on_their_organization() {
    let app = TestApp::new().await;
    let new = NewUser::parse("mia@example.com", "Mia", Secret::new(PASSWORD)).unwrap();
    accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Member))).await.unwrap();
    let cookie = app.sign_in("mia@example.com", PASSWORD).await;
    let (_, token) = connect(&app, &cookie, "Codex", &org_grant(&app), "triage").await;
    assert_eq!(key_of(&app, &token).await.scopes, ["feedback:read", "feedback:write"]);
}

#[tokio::test]
async fn the_code_exchange_refuses_every_mismatch_with_the_right_error() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let client_id = client(&app, "Agent").await;
    let other_client = client(&app, "Other").await;
    let grant = project_grant(&app);
    let new_code = || code_for(&app, &cookie, &client_id, &grant, "read");

    let wrong_verifier = "x".repeat(50);
    let code = new_code().await;
    oauth_error(&exchange(&app, &client_id, &code, &[("code_verifier", &wrong_verifier)]).await, "invalid_grant");
    oauth_error(&exchange(&app, &client_id, &code, &[]).await, "invalid_grant"); // the failed try used it up

    let code = new_code().await;
    exchange(&app, &client_id, &code, &[]).await.ok(200);
    oauth_error(&exchange(&app, &client_id, &code, &[]).await, "invalid_grant"); // reused

    let code = new_code().await;
    oauth_error(&exchange(&app, &other_client, &code, &[]).await, "invalid_grant");

    let code = new_code().await;
    oauth_error(
        &exchange(&app, &client_id, &code, &[("redirect_uri", "http://127.0.0.1:9999/other")]).await,
        "invalid_grant",
    );

    let code = new_code().await;
    oauth_error(
        &exchange(&app, &client_id, &code, &[("resource", "https://elsewhere.example/mcp")]).await,
        "invalid_target",
    );

    // Expired: a code issued eleven minutes ago.
    let now = svc_core::time::now_ms();
    let old = OAuthCode {
        code_hash: hash_secret("an-old-code"),
        client_id: client_id.clone(),
        redirect_uri: REDIRECT.into(),
        code_challenge: s256(VERIFIER),
        resource: Some(format!("{BASE}/mcp")),
        user_id: app.store.find_user_by_email("olivia@example.com").await.unwrap().unwrap().0.id,
        org_id: app.project.org_id.clone(),
        project_id: Some(app.pid().into()),
        scopes: vec!["feedback:read".into()],
        created_at: now - 11 * 60 * 1000,
        expires_at: now - 60 * 1000,
        used_at: None,
    };
    app.store.create_oauth_code(&old).await.unwrap();
    oauth_error(&exchange(&app, &client_id, "an-old-code", &[]).await, "invalid_grant");
    oauth_error(&exchange(&app, &client_id, "never-issued", &[]).await, "invalid_grant");

    let code = new_code().await;
    oauth_error(&exchange(&app, "mcp_unknown", &code, &[]).await, "invalid_client");
    oauth_error(&exchange(&app, &client_id, &code, &[("grant_type", "refresh_token")]).await, "unsupported_grant_type");
    oauth_error(&exchange(&app, &client_id, &code, &[("code_verifier", "")]).await, "invalid_request");
    oauth_error(&exchange(&app, &client_id, "", &[]).await, "invalid_request");
    let twice = token(&app, &[("grant_type", "authorization_code"), ("code", &code), ("code", &code)]).await;
    oauth_error(&twice, "invalid_request");
    // None of that used the last code up; without a resource it still works.
    exchange(&app, &client_id, &code, &[("resource", "")]).await.ok(200);
}

#[tokio::test]
async fn a_code_is_refused_once_its_person_lost_the_access() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let new = NewUser::parse("mia@example.com", "", Secret::new(PASSWORD)).unwrap();
    let mia = accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Member))).await.unwrap();
    let mia_cookie = app.sign_in("mia@example.com", PASSWORD).await;
    let client_id = client(&app, "Agent").await;
    let code = code_for(&app, &mia_cookie, &client_id, &project_grant(&app), "read").await;
    let path = format!("/members/{}/{}/remove", app.project.org_id, mia.id);
    let removed = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(removed.status.as_u16(), 303, "{}", removed.text);
    oauth_error(&exchange(&app, &client_id, &code, &[]).await, "invalid_grant");
}

// ---------------------------------------------------------------------------------------------
// Revoking, reconnecting, connected agents

#[tokio::test]
async fn revoking_the_key_disconnects_and_reconnecting_mints_a_fresh_key() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let (client_id, first) = connect(&app, &cookie, "Claude Code", &project_grant(&app), "triage").await;
    let first_key = key_of(&app, &first).await;
    mcp_support::rpc(&app, &first, "tools/list", json!({})).await;

    // Revoked with the REST API: the next call is a 401 that tells the client where to reconnect.
    let revoked = app.rest("DELETE", &app.p(&format!("/keys/{}", first_key.id)), None).await;
    assert!(revoked.status.is_success(), "{}", revoked.text);
    let resp = mcp_support::post(&app, &first, req(json!(1), "tools/list", json!({}))).await;
    expect_error(&resp, 401, &Value::Null, -32001);
    assert!(resp.header("www-authenticate").unwrap().contains("resource_metadata="));

    // The same client goes through consent again: a new key, the old one stays revoked.
    let code = code_for(&app, &cookie, &client_id, &project_grant(&app), "triage").await;
    let second = exchange(&app, &client_id, &code, &[]).await.ok(200)["access_token"].as_str().unwrap().to_string();
    let second_key = key_of(&app, &second).await;
    assert_ne!(second_key.id, first_key.id);
    assert_eq!(second_key.name, "OAuth: Claude Code");
    mcp_support::rpc(&app, &second, "tools/list", json!({})).await;
    assert_eq!(mcp_support::post(&app, &first, req(json!(1), "ping", json!({}))).await.status.as_u16(), 401);
}

#[tokio::test]
async fn connected_agents_lists_a_persons_own_oauth_keys_and_only_they_disconnect_them() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let (_, token) = connect(&app, &cookie, "Cursor", &org_grant(&app), "read").await;
    let key = key_of(&app, &token).await;
    let (_, dashboard_key) = app.mint(&["feedback:read"]).await;

    let home = app.get_page("/", Some(&cookie)).await;
    assert!(
        home.text.contains(r#"<a href="/account" class="me-link""#),
        "the top bar's name links to the account page"
    );
    let page = app.get_page("/account", Some(&cookie)).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    assert!(page.text.contains("Connected agents"));
    let row_at = page.text.find(&format!(r#"id="agent-{}""#, key.id)).expect("listed");
    let row = &page.text[row_at..row_at + page.text[row_at..].find("</tr>").unwrap()];
    assert!(
        row.contains("Cursor") && row.contains("127.0.0.1:9999") && row.contains("every project of Default"),
        "{row}"
    );
    assert!(row.contains("Disconnect Cursor"), "{row}");
    assert_eq!(page.text.matches("<tr id=\"agent-").count(), 1, "only OAuth keys the person connected");

    // Someone else (an owner too) cannot disconnect it from their account page.
    app.user("oscar@example.com").await;
    let oscar = app.sign_in("oscar@example.com", PASSWORD).await;
    let path = format!("/account/agents/{}/disconnect", key.id);
    let resp = app.post_form(&path, &[("_csrf", &csrf_of(&oscar))], Some(&oscar)).await;
    assert_eq!(resp.status.as_u16(), 404, "{}", resp.text);
    assert!(!app.get_page("/account", Some(&oscar)).await.text.contains(&key.id));
    mcp_support::rpc(&app, &token, "ping", json!({})).await;

    let resp = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(resp.status.as_u16(), 303);
    let back = app.get_page(resp.location().unwrap(), Some(&cookie)).await;
    assert!(back.text.contains("Disconnected Cursor"), "{}", back.text);
    assert_eq!(mcp_support::post(&app, &token, req(json!(1), "ping", json!({}))).await.status.as_u16(), 401);
    assert_eq!(app.get("/api/v1/me", &dashboard_key).await.status.as_u16(), 200, "other keys are untouched");
}

#[tokio::test]
async fn housekeeping_deletes_registrations_never_used_within_a_day() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let unused = client(&app, "Abandoned").await;
    let (used, _) = connect(&app, &cookie, "Kept", &project_grant(&app), "read").await;
    let now = svc_core::time::now_ms();

    svc_service::housekeeping::run_once(app.service(), &app.state.blobs, now).await;
    assert_eq!(app.get_page(&authorize_path(&unused, &[]), None).await.status.as_u16(), 303, "a fresh one stays");

    svc_service::housekeeping::run_once(app.service(), &app.state.blobs, now + 25 * 3600 * 1000).await;
    let gone = app.get_page(&authorize_path(&unused, &[]), Some(&cookie)).await;
    assert_eq!(gone.status.as_u16(), 400, "the abandoned registration is gone");
    assert!(app.get_page(&authorize_path(&used, &[]), Some(&cookie)).await.status.is_success(), "a used one stays");
}

#[tokio::test]
async fn a_whole_connection_on_postgresql() {
    let Some(app) = TestApp::postgres().await else { return };
    let cookie = owner(&app).await;
    let (client_id, token) = connect(&app, &cookie, "Claude Code", &org_grant(&app), "read").await;
    let key = key_of(&app, &token).await;
    assert_eq!((key.project_id.clone(), key.scopes.clone()), (None, vec!["feedback:read".to_string()]));
    mcp_support::rpc(&app, &token, "tools/list", json!({})).await;
    let code = code_for(&app, &cookie, &client_id, &project_grant(&app), "read").await;
    exchange(&app, &client_id, &code, &[]).await.ok(200);
    oauth_error(&exchange(&app, &client_id, &code, &[]).await, "invalid_grant");
    let path = format!("/account/agents/{}/disconnect", key.id);
    assert_eq!(app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await.status.as_u16(), 303);
    assert_eq!(mcp_support::post(&app, &token, req(json!(1), "ping", json!({}))).await.status.as_u16(), 401);
}

#[tokio::test]
async fn removing_a_member_disconnects_the_agents_they_connected_there() {
    let app = TestApp::new().await;
    let cookie = owner(&app).await;
    let new = NewUser::parse("mia@example.com", "", Secret::new(PASSWORD)).unwrap();
    let mia = accounts::create_user(app.service(), new, Some((&app.project.org_id, Role::Member))).await.unwrap();
    let mia_cookie = app.sign_in("mia@example.com", PASSWORD).await;
    let (_, mia_org) = connect(&app, &mia_cookie, "Mia's agent", &org_grant(&app), "triage").await;
    let (_, mia_project) = connect(&app, &mia_cookie, "Mia's other agent", &project_grant(&app), "read").await;
    let (_, olivia) = connect(&app, &cookie, "Olivia's agent", &org_grant(&app), "read").await;

    let path = format!("/members/{}/{}/remove", app.project.org_id, mia.id);
    let removed = app.post_form(&path, &[("_csrf", &csrf_of(&cookie))], Some(&cookie)).await;
    assert_eq!(removed.status.as_u16(), 303, "{}", removed.text);
    for token in [&mia_org, &mia_project] {
        assert_eq!(mcp_support::post(&app, token, req(json!(1), "ping", json!({}))).await.status.as_u16(), 401);
    }
    mcp_support::rpc(&app, &olivia, "ping", json!({})).await;
    let log = app.get_page(&format!("/projects/{}/audit", app.pid()), Some(&cookie)).await;
    assert!(log.text.contains("revoked the key OAuth: Mia&#39;s other agent"), "recorded like any revocation");
}

/// Serves client ID metadata documents on a loopback port: `/good.json` names itself, `/liar.json`
/// names another URL; returns the base URL and how many times a document was read.
async fn metadata_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let reads = std::sync::Arc::new(AtomicUsize::new(0));
    let (counter, own) = (reads.clone(), base.clone());
    let router = axum::Router::new()
        .route(
            "/good.json",
            axum::routing::get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let own = own.clone();
                async move {
                    axum::Json(json!({"client_id": format!("{own}/good.json"), "client_name": "Doc <b>Agent</b>",
                                      "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}))
                }
            }),
        )
        .route(
            "/liar.json",
            axum::routing::get(|| async {
                axum::Json(json!({"client_id": "https://evil.example/x.json", "redirect_uris": [REDIRECT]}))
            }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, reads)
}

#[tokio::test]
async fn a_client_id_metadata_document_stands_for_a_registration() {
    let config = ServerConfig {
        client_metadata: svc_service::outbound::OutboundPolicy { allow_private: true, ..Default::default() },
        ..no_rate_limits()
    };
    let app = TestApp::with_config(config).await;
    let cookie = owner(&app).await;
    let (docs, reads) = metadata_server().await;
    let client_id = format!("{docs}/good.json");

    let page = app.get_page(&authorize_path(&client_id, &[]), Some(&cookie)).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    assert!(page.text.contains("Doc &#60;b&#62;Agent&#60;/b&#62;"), "the document's name, as text: {}", page.text);
    let code = code_for(&app, &cookie, &client_id, &project_grant(&app), "read").await;
    let resp = exchange(&app, &client_id, &code, &[]).await;
    let access = resp.ok(200)["access_token"].as_str().unwrap().to_string();
    assert!(!tool(&app, &access, "list_reports", json!({})).await.is_error);
    let keys = app.store.list_keys(app.pid()).await.unwrap();
    assert!(keys.iter().any(|k| k.name == "OAuth: Doc <b>Agent</b>"), "{keys:?}");
    assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1, "read once, kept for an hour");

    // A document that names another client_id is no client.
    let liar = format!("{docs}/liar.json");
    let page = app.get_page(&authorize_path(&liar, &[]), Some(&cookie)).await;
    assert_eq!(page.status.as_u16(), 400, "{}", page.text);
    assert!(page.text.contains("is not the URL it was read from"), "{}", page.text);
    oauth_error(&exchange(&app, &liar, "any-code", &[]).await, "invalid_client");
    // Nothing there at all.
    let missing = format!("{docs}/missing.json");
    let page = app.get_page(&authorize_path(&missing, &[]), Some(&cookie)).await;
    assert!(page.text.contains("answered HTTP 404"), "{}", page.text);
    // Without the development switch, a loopback http URL is only an unknown client_id: the server
    // never reads from its own network.
    let strict = TestApp::with_config(no_rate_limits()).await;
    let cookie = owner(&strict).await;
    let page = strict.get_page(&authorize_path(&client_id, &[]), Some(&cookie)).await;
    assert!(page.text.contains("unknown client_id"), "{}", page.text);
    assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_metadata_document_on_a_name_that_resolves_to_a_private_address_is_never_read() {
    use std::sync::atomic::Ordering;
    let (docs, reads) = metadata_server().await;
    let port = docs.rsplit(':').next().unwrap().to_string();
    // A public-looking name whose DNS answer is the service's own machine.
    let overrides = std::collections::HashMap::from([(
        "client.example.test".to_string(),
        vec!["127.0.0.1".parse::<std::net::IpAddr>().unwrap()],
    )]);
    let policy = svc_service::outbound::OutboundPolicy {
        allow_private: false,
        resolve_overrides: std::sync::Arc::new(overrides),
    };
    let app = TestApp::with_config(ServerConfig { client_metadata: policy, ..no_rate_limits() }).await;
    let cookie = owner(&app).await;
    let client_id = format!("https://client.example.test:{port}/good.json");
    let page = app.get_page(&authorize_path(&client_id, &[]), Some(&cookie)).await;
    assert_eq!(page.status.as_u16(), 400, "{}", page.text);
    assert!(page.text.contains("a private or special-purpose address"), "{}", page.text);
    oauth_error(&exchange(&app, &client_id, "any-code", &[]).await, "invalid_client");
    assert_eq!(reads.load(Ordering::SeqCst), 0, "nothing was read from the private address");
}
