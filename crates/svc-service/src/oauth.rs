//! OAuth for the tool endpoint (spec Authentication §5; `docs/mcp.md`, "Connecting with OAuth"):
//! client registration, authorization requests, consent, the code exchange that mints the key
//! `OAuth: <client>`, the person's connected agents, and the clean-up of what is left unused.
//!
//! The access token is the secret of an ordinary API key (origin `oauth`) with exactly the scopes
//! consented to, bound to the chosen project or organization; there is no refresh token, so
//! revoking the key disconnects the client at its next call, and reconnecting mints a fresh key.

use crate::Service;
use std::collections::HashMap;

use svc_core::account::{Role, User};
use svc_core::model::{ApiKey, Author, KeyOrigin, Organization, Project};
use svc_core::oauth::{
    self, Access, CODE_LIFETIME_MS, GrantTarget, MAX_REDIRECT_URIS, OAuthClient, OAuthCode, OAuthGrant,
    UNUSED_CLIENT_LIFETIME_MS,
};
use svc_core::secret::{Secret, hash_secret};
use svc_core::{ids, scope, time};

use super::accounts::SignedIn;
use super::keys::{self, MintRequest};
use super::{ServiceError, ServiceResult, audit};
use crate::outbound::OutboundPolicy;
use crate::principal::Principal;

/// The URLs OAuth speaks of, built from `SVC_PUBLIC_URL`.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The issuer: the public URL without a trailing slash.
    pub issuer: String,
    /// The tool endpoint, the one resource tokens are for.
    pub mcp_url: String,
    /// Where client ID metadata documents may be read from (see `ServerConfig::client_metadata`).
    pub client_metadata: OutboundPolicy,
}

impl Endpoints {
    pub fn new(public_url: &str) -> Self {
        let issuer = public_url.trim_end_matches('/').to_string();
        Endpoints { mcp_url: format!("{issuer}/mcp"), issuer, client_metadata: OutboundPolicy::default() }
    }

    /// Client metadata documents read under `policy` (see [`Endpoints::client_metadata`]).
    pub fn with_client_metadata(self, policy: OutboundPolicy) -> Self {
        Endpoints { client_metadata: policy, ..self }
    }

    /// RFC 9728 protected-resource metadata.
    pub fn resource_metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.mcp_url,
            "authorization_servers": [self.issuer],
            "scopes_supported": oauth::SCOPES_SUPPORTED,
            "bearer_methods_supported": ["header"],
            "resource_name": "Svc",
        })
    }

    /// Where the protected-resource metadata of the tool endpoint is (the 401's `resource_metadata`).
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.issuer)
    }

    /// RFC 8414 authorization-server metadata. Clients may register with `/register`, or use the
    /// URL of their client ID metadata document as their `client_id`.
    pub fn server_metadata(&self) -> serde_json::Value {
        let issuer = &self.issuer;
        serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": oauth::SCOPES_SUPPORTED,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        })
    }
}

/// A refusal in OAuth's words: an error code of the RFCs and a description for people.
#[derive(Debug)]
pub enum OAuthFailure {
    Refused { error: &'static str, description: String },
    Internal(ServiceError),
}

impl OAuthFailure {
    fn refused(error: &'static str, description: impl Into<String>) -> Self {
        OAuthFailure::Refused { error, description: description.into() }
    }
}

impl From<ServiceError> for OAuthFailure {
    fn from(error: ServiceError) -> Self {
        OAuthFailure::Internal(error)
    }
}

impl From<svc_store::StoreError> for OAuthFailure {
    fn from(error: svc_store::StoreError) -> Self {
        OAuthFailure::Internal(error.into())
    }
}

// ---------------------------------------------------------------------------------------------
// Clients: registered, or described by a metadata document at their client_id URL

/// The client a `client_id` names: a registered one, or (for a URL) the one its client ID metadata
/// document describes, read again once the copy kept is an hour old. Reading it: no redirects, ten
/// seconds, at most 64 KB of JSON. `Ok(None)`: no such client; a document that cannot be read or
/// is not valid is `invalid_client` with the reason.
pub async fn client(
    svc: &Service,
    endpoints: &Endpoints,
    client_id: &str,
) -> Result<Option<OAuthClient>, OAuthFailure> {
    let store = svc.store();
    let kept = store.get_oauth_client(client_id).await?;
    // Plain http from 127.0.0.1 only where private addresses are allowed (the service's own tests).
    if !oauth::is_client_metadata_url(client_id, endpoints.client_metadata.allow_private) {
        return Ok(kept);
    }
    let now = time::now_ms();
    if let Some(kept) = &kept
        && now - kept.created_at < oauth::CLIENT_METADATA_MAX_AGE_MS
    {
        return Ok(Some(kept.clone()));
    }
    let unreadable = |why: String| {
        OAuthFailure::refused("invalid_client", format!("the client metadata document at {client_id} {why}"))
    };
    // Resolved and checked first, and read from exactly the addresses checked: never from the
    // service's own network unless the operator allows it.
    let policy = &endpoints.client_metadata;
    if let Ok(url) = url::Url::parse(client_id) {
        policy.check_url(&url).map_err(|refusal| unreadable(format!("cannot be read: {refusal}")))?;
    }
    let http = policy
        .client(std::time::Duration::from_secs(10))
        .map_err(|error| unreadable(format!("could not be read ({error})")))?;
    let response =
        http.get(client_id).header(reqwest::header::ACCEPT, "application/json").send().await.map_err(|error| {
            match crate::outbound::refusal_of(&error) {
                Some(refusal) => unreadable(format!("cannot be read: {refusal}")),
                None => unreadable(format!("could not be read ({error})")),
            }
        })?;
    if !response.status().is_success() {
        return Err(unreadable(format!("answered HTTP {}", response.status().as_u16())));
    }
    if response.content_length().is_some_and(|n| n > oauth::CLIENT_METADATA_MAX_BYTES as u64) {
        return Err(unreadable("is too large".into()));
    }
    let bytes = response.bytes().await.map_err(|error| unreadable(format!("could not be read ({error})")))?;
    if bytes.len() > oauth::CLIENT_METADATA_MAX_BYTES {
        return Err(unreadable("is too large".into()));
    }
    let document: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| unreadable("is not JSON".into()))?;
    let mut read = oauth::client_from_metadata(client_id, &document, now)
        .map_err(|error| unreadable(format!("is not valid: {}", error.0)))?;
    read.last_used_at = kept.and_then(|kept| kept.last_used_at);
    store.put_oauth_client(&read).await?;
    Ok(Some(read))
}

// ---------------------------------------------------------------------------------------------
// Registration (RFC 7591)

/// Registers a public client. Unknown metadata is ignored; the auth method is always `none`.
pub async fn register(
    svc: &Service,
    client_name: Option<&str>,
    redirect_uris: &[String],
) -> Result<OAuthClient, OAuthFailure> {
    let store = svc.store();
    if redirect_uris.is_empty() {
        return Err(OAuthFailure::refused("invalid_redirect_uri", "redirect_uris must name at least one redirect URI"));
    }
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthFailure::refused(
            "invalid_redirect_uri",
            format!("redirect_uris may name at most {MAX_REDIRECT_URIS} redirect URIs"),
        ));
    }
    for uri in redirect_uris {
        oauth::check_redirect_uri(uri).map_err(|error| OAuthFailure::refused("invalid_redirect_uri", error.0))?;
    }
    let client = OAuthClient {
        client_id: oauth::new_client_id(),
        client_name: oauth::client_name(client_name),
        redirect_uris: redirect_uris.to_vec(),
        created_at: time::now_ms(),
        last_used_at: None,
    };
    store.create_oauth_client(&client).await?;
    Ok(client)
}

// ---------------------------------------------------------------------------------------------
// Authorization requests

/// The parameters of `GET /authorize`, as given.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

/// An authorization request that passed every check: what the consent page shows and a code is
/// issued for.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    pub client: OAuthClient,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: Option<String>,
    /// What the `scope` parameter hints at (preselected on the consent page).
    pub access_hint: Access,
}

impl AuthorizationRequest {
    /// Where the redirect URI leads, as the consent page names it.
    pub fn redirect_host(&self) -> String {
        oauth::redirect_host(&self.redirect_uri)
    }
}

/// Why an authorization request is refused.
#[derive(Debug)]
pub enum AuthorizeProblem {
    /// The client or its redirect URI cannot be trusted: nothing may be sent there, the person is
    /// told on a page.
    NoRedirect(String),
    /// The client and its redirect URI are valid, the rest of the request is not: the person may
    /// take the error back to the client's redirect URI as `error=...&state=...&iss=...`.
    Redirect {
        client: OAuthClient,
        redirect_uri: String,
        state: Option<String>,
        error: &'static str,
        description: String,
    },
    Internal(ServiceError),
}

impl From<svc_store::StoreError> for AuthorizeProblem {
    fn from(error: svc_store::StoreError) -> Self {
        AuthorizeProblem::Internal(error.into())
    }
}

/// Checks an authorization request: the client and its redirect URI first (refused on a page),
/// then what can be answered at the redirect URI: `response_type=code`, an S256 PKCE challenge and
/// a `resource` that is absent or the tool endpoint.
pub async fn check_request(
    svc: &Service,
    endpoints: &Endpoints,
    params: &AuthorizeParams,
) -> Result<AuthorizationRequest, AuthorizeProblem> {
    let client_id = params.client_id.as_deref().filter(|id| !id.is_empty());
    let Some(client_id) = client_id else {
        return Err(AuthorizeProblem::NoRedirect("The request names no client (client_id is missing).".into()));
    };
    let client = match client(svc, endpoints, client_id).await {
        Ok(Some(client)) => client,
        Err(OAuthFailure::Refused { description, .. }) => {
            return Err(AuthorizeProblem::NoRedirect(format!(
                "This application could not be identified: {description}."
            )));
        }
        Err(OAuthFailure::Internal(error)) => return Err(AuthorizeProblem::Internal(error)),
        Ok(None) => {
            return Err(AuthorizeProblem::NoRedirect(
                "This application is not registered here (unknown client_id). Start connecting again from the application.".into(),
            ));
        }
    };
    let Some(redirect_uri) = params.redirect_uri.clone().filter(|uri| !uri.is_empty()) else {
        return Err(AuthorizeProblem::NoRedirect("The request names no redirect_uri.".into()));
    };
    if !client.redirect_uris.iter().any(|registered| oauth::redirect_matches(registered, &redirect_uri)) {
        return Err(AuthorizeProblem::NoRedirect(
            "The address this request would send you back to is not one the application registered, so nothing is sent there.".into(),
        ));
    }
    let refuse = |error: &'static str, description: &str| AuthorizeProblem::Redirect {
        client: client.clone(),
        redirect_uri: redirect_uri.clone(),
        state: params.state.clone(),
        error,
        description: description.into(),
    };
    if params.response_type.as_deref() != Some("code") {
        return Err(refuse("unsupported_response_type", "response_type must be code"));
    }
    let Some(code_challenge) = params.code_challenge.clone() else {
        return Err(refuse("invalid_request", "code_challenge is required (PKCE with S256)"));
    };
    if params.code_challenge_method.as_deref() != Some("S256") {
        return Err(refuse("invalid_request", "code_challenge_method must be S256"));
    }
    if !oauth::is_s256_challenge(&code_challenge) {
        return Err(refuse("invalid_request", "code_challenge must be 43 base64url characters (S256)"));
    }
    let resource = params.resource.clone().filter(|r| !r.is_empty());
    if let Some(resource) = &resource
        && !oauth::resource_matches(resource, &endpoints.mcp_url)
    {
        return Err(refuse("invalid_target", &format!("resource must be {}", endpoints.mcp_url)));
    }
    if params.state.as_ref().is_some_and(|state| state.len() > 2000) {
        return Err(refuse("invalid_request", "state is longer than 2000 characters"));
    }
    Ok(AuthorizationRequest {
        client,
        redirect_uri,
        state: params.state.clone(),
        code_challenge,
        resource,
        access_hint: Access::hinted_by(params.scope.as_deref()),
    })
}

/// `redirect_uri` with the response parameters added (`iss` last, RFC 9207).
pub fn redirect_with(redirect_uri: &str, pairs: &[(&str, &str)], issuer: &str) -> String {
    let Ok(mut url) = url::Url::parse(redirect_uri) else { return redirect_uri.to_string() };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
        query.append_pair("iss", issuer);
    }
    url.to_string()
}

/// What a person may grant on the consent page: each project they reach (with its
/// organization's name) and each organization they belong to.
pub struct Choices {
    pub projects: Vec<(Project, String)>,
    pub orgs: Vec<Organization>,
}

/// The projects and organizations `person` may grant. Both roles may grant either access: a
/// member holds `feedback:read` and `feedback:write` on every project of their organizations.
pub async fn choices(svc: &Service, person: &SignedIn) -> ServiceResult<Choices> {
    let store = svc.store();
    let mut orgs = Vec::new();
    let mut projects = Vec::new();
    for membership in &person.memberships {
        let Some(org) = store.get_organization(&membership.org_id).await? else { continue };
        for project in super::projects::list_in_org(svc, &org.id).await? {
            projects.push((project, org.name.clone()));
        }
        orgs.push(org);
    }
    Ok(Choices { projects, orgs })
}

/// Whether someone with `role` may grant `scopes`.
fn role_allows(role: Role, scopes: &[String]) -> bool {
    scopes.iter().all(|needed| role.scopes().iter().any(|held| scope::grants(held, needed)))
}

/// The organization a grant target lives in, if `memberships` reach it and the role there allows
/// `scopes`.
async fn permitted_org(
    svc: &Service,
    user_roles: &[(String, Role)],
    target: &GrantTarget,
    scopes: &[String],
) -> ServiceResult<Option<String>> {
    let store = svc.store();
    let org_id = match target {
        GrantTarget::Org(org_id) => org_id.clone(),
        GrantTarget::Project(project_id) => match store.get_project(project_id).await? {
            Some(project) => project.org_id,
            None => return Ok(None),
        },
    };
    let allowed = user_roles.iter().any(|(org, role)| *org == org_id && role_allows(*role, scopes));
    Ok(allowed.then_some(org_id))
}

/// The person approves: a code for the grant they chose, bound to the client, the redirect URI,
/// the PKCE challenge, the resource and themselves. Only the code's SHA-256 is stored.
pub async fn approve(
    svc: &Service,
    person: &SignedIn,
    request: &AuthorizationRequest,
    target: &GrantTarget,
    access: Access,
) -> ServiceResult<Secret> {
    let store = svc.store();
    let scopes = access.scopes();
    let roles: Vec<(String, Role)> = person.memberships.iter().map(|m| (m.org_id.clone(), m.role)).collect();
    let Some(org_id) = permitted_org(svc, &roles, target, &scopes).await? else {
        return Err(ServiceError::NotFound("You cannot grant access to that project or organization.".into()));
    };
    let code = oauth::new_code();
    let now = time::now_ms();
    let record = OAuthCode {
        code_hash: hash_secret(&code),
        client_id: request.client.client_id.clone(),
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
        resource: request.resource.clone(),
        user_id: person.user.id.clone(),
        org_id,
        project_id: match target {
            GrantTarget::Project(id) => Some(id.clone()),
            GrantTarget::Org(_) => None,
        },
        scopes,
        created_at: now,
        expires_at: now + CODE_LIFETIME_MS,
        used_at: None,
    };
    store.create_oauth_code(&record).await?;
    Ok(Secret::new(code))
}

// ---------------------------------------------------------------------------------------------
// The code exchange

/// A `POST /token` request with `grant_type=authorization_code`.
pub struct CodeExchange<'a> {
    pub client_id: &'a str,
    pub code: &'a str,
    pub redirect_uri: &'a str,
    pub code_verifier: &'a str,
    pub resource: Option<&'a str>,
}

/// Trades a code for a new key: the code is used up whatever happens next, then it must match
/// the client, the redirect URI, the verifier and the resource, and its person must still hold
/// what they granted. Mints `OAuth: <client name>` with exactly the granted scopes, recording the
/// grant (client, redirect host, person) with it.
pub async fn exchange(
    svc: &Service,
    endpoints: &Endpoints,
    request: CodeExchange<'_>,
) -> Result<(ApiKey, Secret), OAuthFailure> {
    let store = svc.store();
    let Some(client) = client(svc, endpoints, request.client_id).await? else {
        return Err(OAuthFailure::refused("invalid_client", "unknown client_id: register again"));
    };
    let invalid_grant = |why: &str| OAuthFailure::refused("invalid_grant", why);
    let now = time::now_ms();
    let Some(code) = store.take_oauth_code(&hash_secret(request.code), now).await? else {
        return Err(invalid_grant("the code is unknown, used or expired"));
    };
    if code.client_id != client.client_id {
        return Err(invalid_grant("the code was issued to another client"));
    }
    if code.redirect_uri != request.redirect_uri {
        return Err(invalid_grant("redirect_uri differs from the authorization request's"));
    }
    if !oauth::verifier_matches(request.code_verifier, &code.code_challenge) {
        return Err(invalid_grant("code_verifier does not match the code_challenge"));
    }
    if let Some(resource) = request.resource.filter(|r| !r.is_empty())
        && !oauth::resource_matches(resource, &endpoints.mcp_url)
    {
        // RFC 8707: a resource the server does not serve is `invalid_target`.
        return Err(OAuthFailure::refused("invalid_target", &format!("resource must be {}", endpoints.mcp_url)));
    }
    // The person may have lost the access they granted since they consented.
    let Some(user) = store.get_user(&code.user_id).await? else {
        return Err(invalid_grant("the person who consented no longer has an account"));
    };
    let roles: Vec<(String, Role)> =
        store.list_memberships(&user.id).await?.into_iter().map(|m| (m.org_id, m.role)).collect();
    if permitted_org(svc, &roles, &code.target(), &code.scopes).await?.as_deref() != Some(code.org_id.as_str()) {
        return Err(invalid_grant("the person who consented no longer holds this access"));
    }
    let by = Author {
        kind: svc_core::model::AuthorKind::User,
        id: Some(format!("user:{}", user.id)),
        label: Some(user.label().into()),
    };
    let (key, secret, by) = keys::prepare(MintRequest {
        org_id: code.org_id.clone(),
        project_id: code.project_id.clone(),
        name: oauth::key_name(&client.client_name),
        scopes: code.scopes.clone(),
        ttl_secs: None,
        origin: KeyOrigin::Oauth,
        by,
    })?;
    let grant = OAuthGrant {
        key_id: key.id.clone(),
        client_id: client.client_id.clone(),
        client_name: client.client_name.clone(),
        redirect_host: oauth::redirect_host(&code.redirect_uri),
        user_id: user.id.clone(),
        org_id: key.org_id.clone(),
        project_id: key.project_id.clone(),
        created_at: key.created_at,
    };
    store.create_oauth_key(&key, &grant).await?;
    keys::announce_minted(svc, &key, &by).await;
    Ok((key, secret))
}

// ---------------------------------------------------------------------------------------------
// Listing and disconnecting

/// What an OAuth key was made for, as the key lists show it.
#[derive(Debug, Clone)]
pub struct GrantFacts {
    pub client_name: String,
    pub redirect_host: String,
    /// Who connected it (name or email), if their account still exists.
    pub connected_by: Option<String>,
    pub connected_at: i64,
}

/// The grants behind those of `keys` made by OAuth, by key id, with who connected each.
pub async fn grants_of(svc: &Service, keys: &[ApiKey]) -> ServiceResult<HashMap<String, GrantFacts>> {
    let store = svc.store();
    let ids: Vec<String> = keys.iter().filter(|k| k.origin == KeyOrigin::Oauth).map(|k| k.id.clone()).collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let grants = store.oauth_grants_of(&ids).await?;
    let mut people: HashMap<String, Option<User>> = HashMap::new();
    let mut facts = HashMap::new();
    for grant in grants {
        if !people.contains_key(&grant.user_id) {
            let user = store.get_user(&grant.user_id).await?;
            people.insert(grant.user_id.clone(), user);
        }
        let connected_by = people.get(&grant.user_id).cloned().flatten().map(|user| user.label().to_string());
        facts.insert(
            grant.key_id.clone(),
            GrantFacts {
                client_name: grant.client_name,
                redirect_host: grant.redirect_host,
                connected_by,
                connected_at: grant.created_at,
            },
        );
    }
    Ok(facts)
}

/// An agent a person connected: its key, its grant and the name of what it reaches.
pub struct ConnectedAgent {
    pub key: ApiKey,
    pub grant: OAuthGrant,
    /// The project's name, or the organization's for an org-wide grant (`None` when it is gone).
    pub reaches: Option<String>,
}

/// The keys `person` connected through OAuth (revoked and expired ones too), newest first.
pub async fn connected_agents(svc: &Service, person: &SignedIn) -> ServiceResult<Vec<ConnectedAgent>> {
    let store = svc.store();
    let mut agents = Vec::new();
    for (key, grant) in store.list_user_oauth_keys(&person.user.id).await? {
        let reaches = match &key.project_id {
            Some(project_id) => store.get_project(project_id).await?.map(|p| p.name),
            None => store.get_organization(&key.org_id).await?.map(|o| o.name),
        };
        agents.push(ConnectedAgent { key, grant, reaches });
    }
    Ok(agents)
}

/// Revokes a key the person connected (only their own): the client's next call gets 401.
pub async fn disconnect(svc: &Service, person: &SignedIn, key_id: &str) -> ServiceResult<ApiKey> {
    let store = svc.store();
    let not_found = || ServiceError::NotFound("You have no connected agent with that key.".into());
    if !ids::is_object_id(key_id) {
        return Err(not_found());
    }
    let now = time::now_ms();
    store.revoke_user_oauth_key(&person.user.id, key_id, now).await?.ok_or_else(not_found)?;
    let key = store.get_key(key_id).await?.ok_or_else(not_found)?;
    record_revoked(svc, &key, &Principal::User(Box::new(person.clone())).author()).await;
    Ok(key)
}

/// Revokes the keys a removed member connected through OAuth in the organization (an agent keeps
/// no more than its person may grant), each recorded like any revocation; how many.
pub async fn revoke_for_removed_member(
    svc: &Service,
    org_id: &str,
    user_id: &str,
    by: &Author,
) -> ServiceResult<usize> {
    let store = svc.store();
    let now = time::now_ms();
    let mut revoked = 0;
    for (key, _) in store.list_user_oauth_keys(user_id).await? {
        if key.org_id != org_id || !key.is_active(now) {
            continue;
        }
        if store.revoke_user_oauth_key(user_id, &key.id, now).await?.is_some() {
            record_revoked(svc, &key, by).await;
            revoked += 1;
        }
    }
    Ok(revoked)
}

/// Records a revoked OAuth key in its project's log, or its organization's.
async fn record_revoked(svc: &Service, key: &ApiKey, by: &Author) {
    let detail = serde_json::json!({"keyId": key.id, "name": key.name});
    match &key.project_id {
        Some(project_id) => {
            audit::record_for_report(svc, project_id, by, svc_core::audit::action::KEY_REVOKED, detail).await
        }
        None => audit::record_for_org(svc, &key.org_id, by, svc_core::audit::action::KEY_REVOKED, detail).await,
    }
}

/// Housekeeping: deletes expired codes and registrations that never completed a token exchange
/// within a day; how many rows went.
pub async fn clean_up(svc: &Service, now: i64) -> ServiceResult<u64> {
    let store = svc.store();
    Ok(store.delete_stale_oauth_rows(now, now - UNUSED_CLIENT_LIFETIME_MS).await?)
}
