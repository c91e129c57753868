//! Reporter sign-in through the project's OpenID Connect provider, in the widget's popup:
//! discovery (`<issuer>/.well-known/openid-configuration`), the authorization code flow with PKCE
//! S256, and the ID token checked against the provider's JWKS (signature, `iss`, `aud`, `exp`,
//! `nonce`). Then a reporter session starts as for email sign-in, and the popup posts the result to
//! the page, only to the origin the sign-in was started for, which the project must allow.
//!
//! Why no OpenID Connect crate: `jsonwebtoken` (already used for identity tokens) verifies the ID
//! token with the provider's JWK set, which is the part that needs care; the rest is two HTTP
//! requests over the `reqwest` already in the tree. `openidconnect` would add about 70 crates, its
//! own RSA and elliptic-curve code beside aws-lc-rs, and a second reqwest.

use crate::Service;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use svc_core::model::Project;
use svc_core::reporter::{self as rules, IdTokenError, JwkSet, OidcSettings, OidcState, Reporter, ReporterMode};
use svc_core::{ids, oauth, secret, time};

use super::reporters::{self, SignedIn};
use super::{ServiceError, mail};

/// How long a provider's discovery document and keys are reused.
const PROVIDER_CACHE: Duration = Duration::from_secs(600);
/// Every request to a provider gives up after this long.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read from a provider (discovery, keys, tokens).
const PROVIDER_ANSWER_MAX_BYTES: usize = 512 * 1024;

/// Why an OpenID Connect sign-in did not work. The popup shows the words and posts the code.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("this project does not offer sign-in with a provider")]
    NotOffered,
    /// The page the popup was opened from is not an origin the project allows.
    #[error("this page is not allowed to receive sign-ins for the project (add its origin to allowedOrigins)")]
    OriginNotAllowed,
    /// The callback came with no state we know: too late, used already, or not ours.
    #[error("this sign-in has expired or was already used; start again from the page")]
    StateInvalid,
    /// The person said no at the provider, or the provider sent an error.
    #[error("the provider did not sign you in ({0})")]
    Denied(String),
    /// The provider could not be reached or answered something unusable.
    #[error("the sign-in provider could not be used: {0}")]
    Provider(String),
    /// The ID token did not verify.
    #[error("the provider's answer could not be verified: {0}")]
    TokenRejected(String),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl OidcError {
    /// The code the popup posts to the page.
    pub fn code(&self) -> &'static str {
        match self {
            OidcError::NotOffered => "sign_in_not_offered",
            OidcError::OriginNotAllowed => "origin_not_allowed",
            OidcError::StateInvalid => "state_invalid",
            OidcError::Denied(_) => "access_denied",
            OidcError::Provider(_) => "provider_unavailable",
            OidcError::TokenRejected(_) => "id_token_invalid",
            OidcError::Service(_) => "internal",
        }
    }
}

impl From<svc_store::StoreError> for OidcError {
    fn from(error: svc_store::StoreError) -> Self {
        OidcError::Service(error.into())
    }
}

impl From<reporters::ReporterError> for OidcError {
    fn from(error: reporters::ReporterError) -> Self {
        match error {
            reporters::ReporterError::Service(error) => OidcError::Service(error),
            other => OidcError::Service(ServiceError::Internal(other.to_string())),
        }
    }
}

/// What discovery tells about a provider.
#[derive(Debug, Clone, Deserialize)]
struct Provider {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
}

struct Cached<T> {
    value: T,
    at: Instant,
}

/// Providers and their keys, per issuer, for [`PROVIDER_CACHE`].
static PROVIDERS: Mutex<Option<HashMap<String, Cached<(Provider, JwkSet)>>>> = Mutex::new(None);

fn http() -> Result<reqwest::Client, OidcError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(PROVIDER_TIMEOUT)
        .build()
        .map_err(|error| OidcError::Provider(error.to_string()))
}

/// Reads a provider's JSON answer (at most [`PROVIDER_ANSWER_MAX_BYTES`]).
async fn json_answer<T: serde::de::DeserializeOwned>(response: reqwest::Response, what: &str) -> Result<T, OidcError> {
    let status = response.status();
    let bytes = response.bytes().await.map_err(|error| OidcError::Provider(format!("{what}: {error}")))?;
    if bytes.len() > PROVIDER_ANSWER_MAX_BYTES {
        return Err(OidcError::Provider(format!("{what}: the answer is too large")));
    }
    if !status.is_success() {
        return Err(OidcError::Provider(format!("{what}: HTTP {status}")));
    }
    serde_json::from_slice(&bytes).map_err(|error| OidcError::Provider(format!("{what}: {error}")))
}

/// The provider and its current keys; from the cache unless `refresh` (a token signed with a key
/// we do not know yet: the provider rotated its keys).
async fn load_provider(settings: &OidcSettings, refresh: bool) -> Result<(Provider, JwkSet), OidcError> {
    let issuer = settings.issuer.trim_end_matches('/').to_string();
    if !refresh {
        let cache = PROVIDERS.lock().expect("provider cache lock");
        if let Some(cached) = cache.as_ref().and_then(|c| c.get(&issuer)).filter(|c| c.at.elapsed() < PROVIDER_CACHE) {
            return Ok(cached.value.clone());
        }
    }
    let client = http()?;
    let discovery = format!("{issuer}/.well-known/openid-configuration");
    let response = client.get(&discovery).send().await.map_err(|error| OidcError::Provider(error.to_string()))?;
    let provider: Provider = json_answer(response, "discovery").await?;
    if provider.issuer.trim_end_matches('/') != issuer {
        return Err(OidcError::Provider(format!("discovery names the issuer {:?}, not {issuer:?}", provider.issuer)));
    }
    let response =
        client.get(&provider.jwks_uri).send().await.map_err(|error| OidcError::Provider(error.to_string()))?;
    let keys: JwkSet = json_answer(response, "keys").await?;
    let value = (provider, keys);
    let mut cache = PROVIDERS.lock().expect("provider cache lock");
    cache.get_or_insert_with(HashMap::new).insert(issuer, Cached { value: value.clone(), at: Instant::now() });
    Ok(value)
}

/// The callback URL registered at the provider for every project of this server.
pub fn callback_url(public_url: &str) -> String {
    format!("{}/auth/reporter/oidc/callback", mail::base(public_url))
}

/// Whether the popup may post a sign-in to `origin`: one of the project's allowed origins, or
/// Svc's own (its demo page).
pub fn origin_allowed(project: &Project, public_url: &str, origin: &str) -> bool {
    let own = url::Url::parse(public_url).map(|url| url.origin().ascii_serialization()).ok();
    own.as_deref() == Some(origin) || project.allowed_origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin))
}

/// Starts a sign-in for a page of `origin`: remembers it and answers the provider's authorization
/// URL for the popup to go to.
pub async fn start(svc: &Service, public_url: &str, project: &Project, origin: &str) -> Result<String, OidcError> {
    let store = svc.store();
    let settings = match (&project.reporter_auth.mode, &project.reporter_auth.oidc) {
        (ReporterMode::Oidc, Some(settings)) => settings,
        _ => return Err(OidcError::NotOffered),
    };
    if !origin_allowed(project, public_url, origin) {
        return Err(OidcError::OriginNotAllowed);
    }
    let (provider, _) = load_provider(settings, false).await?;
    let now = time::now_ms();
    let state = ids::new_random_secret(43);
    let code_verifier = ids::new_random_secret(64);
    let nonce = ids::new_random_secret(32);
    store
        .put_oidc_state(&OidcState {
            state_hash: secret::hash_secret(&state),
            project_id: project.id.clone(),
            origin: origin.to_string(),
            code_verifier: code_verifier.clone(),
            nonce: nonce.clone(),
            created_at: now,
            expires_at: now + rules::OIDC_STATE_LIFETIME_MS,
        })
        .await?;
    let mut url = url::Url::parse(&provider.authorization_endpoint)
        .map_err(|_| OidcError::Provider("the authorization endpoint is not a URL".into()))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &settings.client_id)
        .append_pair("redirect_uri", &callback_url(public_url))
        .append_pair("scope", "openid email profile")
        .append_pair("state", &state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &oauth::s256(&code_verifier))
        .append_pair("code_challenge_method", "S256");
    Ok(url.into())
}

/// What the provider sent back to the callback.
pub struct Callback<'a> {
    pub state: Option<&'a str>,
    pub code: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// A finished sign-in and where the popup posts it.
pub struct Finished {
    pub origin: String,
    pub project_name: String,
    pub signed_in: SignedIn,
}

/// Finishes a sign-in at the callback: takes its state (once), trades the code for tokens,
/// verifies the ID token and starts the reporter's session. The error carries the origin to tell,
/// when the state was known.
pub async fn finish(
    svc: &Service,
    public_url: &str,
    callback: Callback<'_>,
) -> Result<Finished, (Option<String>, OidcError)> {
    let store = svc.store();
    let state = callback.state.filter(|s| !s.is_empty()).ok_or((None, OidcError::StateInvalid))?;
    let pending = store
        .take_oidc_state(&secret::hash_secret(state), time::now_ms())
        .await
        .map_err(|error| (None, error.into()))?
        .ok_or((None, OidcError::StateInvalid))?;
    let origin = pending.origin.clone();
    let finished = async {
        let project = store.get_project(&pending.project_id).await?.ok_or(OidcError::NotOffered)?;
        if let Some(error) = callback.error {
            return Err(OidcError::Denied(error.chars().take(100).collect()));
        }
        let code = callback.code.filter(|c| !c.is_empty()).ok_or(OidcError::Denied("no code".into()))?;
        let settings = match (&project.reporter_auth.mode, &project.reporter_auth.oidc) {
            (ReporterMode::Oidc, Some(settings)) => settings.clone(),
            _ => return Err(OidcError::NotOffered),
        };
        let reporter = exchange(public_url, &settings, code, &pending).await?;
        let signed_in = reporters::start_session(svc, &project, reporter).await?;
        Ok((project.name, signed_in))
    }
    .await;
    match finished {
        Ok((project_name, signed_in)) => Ok(Finished { origin, project_name, signed_in }),
        Err(error) => Err((Some(origin), error)),
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    id_token: Option<String>,
}

/// Trades the code for tokens at the provider and verifies the ID token.
async fn exchange(
    public_url: &str,
    settings: &OidcSettings,
    code: &str,
    pending: &OidcState,
) -> Result<Reporter, OidcError> {
    let (provider, keys) = load_provider(settings, false).await?;
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", &callback_url(public_url))
            .append_pair("client_id", &settings.client_id)
            .append_pair("code_verifier", &pending.code_verifier);
        if let Some(client_secret) = &settings.client_secret {
            form.append_pair("client_secret", client_secret);
        }
        form.finish()
    };
    let response = http()?
        .post(&provider.token_endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|error| OidcError::Provider(error.to_string()))?;
    let answer: TokenAnswer = json_answer(response, "token").await?;
    let id_token = answer.id_token.ok_or_else(|| OidcError::TokenRejected("no ID token".into()))?;
    let check = |provider: &Provider, keys: &JwkSet| {
        rules::verify_id_token(&id_token, keys, &provider.issuer, &settings.client_id, &pending.nonce)
    };
    match check(&provider, &keys) {
        Ok(reporter) => Ok(reporter),
        // A key we do not know: the provider may have rotated its keys since we read them.
        Err(IdTokenError::KeyUnknown) => {
            let (provider, keys) = load_provider(settings, true).await?;
            check(&provider, &keys).map_err(|error| OidcError::TokenRejected(error.to_string()))
        }
        Err(error) => Err(OidcError::TokenRejected(error.to_string())),
    }
}
