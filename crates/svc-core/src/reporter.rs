//! Reporters who sign in from the widget (docs/widget.md, "Reporter sign-in"): each project's
//! sign-in settings, the six-digit codes mailed in `email` mode, who a signed-in reporter is, and
//! the reporter token the widget sends in `x-svc-identity`.
//!
//! A reporter token is a JWT like an identity token (decisions §3), but Svc signs it itself, with
//! a key derived per project from a key of the service's own: its header names `kid: svc-reporter`,
//! so ingest knows which key checks it, and a token of one project never verifies for another.

use jsonwebtoken::errors::ErrorKind;
pub use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::identity::{Identity, IdentityError, LEEWAY_SECS};
use crate::{Invalid, account::Email};

/// The `kid` of every reporter token's header.
pub const TOKEN_KEY_ID: &str = "svc-reporter";
/// How long a reporter token is good for; the widget renews it through its session before then.
pub const TOKEN_LIFETIME_SECS: i64 = 3600;
/// How long a reporter session lasts without use; each renewal moves the end forward.
pub const SESSION_LIFETIME_MS: i64 = 90 * 24 * 3600 * 1000;
/// How long a mailed code works.
pub const CODE_LIFETIME_MS: i64 = 10 * 60 * 1000;
/// Wrong codes allowed before a code is burned.
pub const CODE_MAX_TRIES: i64 = 5;
/// Codes one address may be sent per project in [`CODE_WINDOW_MS`].
pub const CODES_PER_ADDRESS: i64 = 5;
pub const CODE_WINDOW_MS: i64 = 3600 * 1000;
/// How long the widget's popup may take between starting an OpenID Connect sign-in and coming back.
pub const OIDC_STATE_LIFETIME_MS: i64 = 10 * 60 * 1000;

/// How a project's reporters identify themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReporterMode {
    /// No sign-in: reports carry only what the page passes (`userId`, an identity token).
    #[default]
    Off,
    /// A code mailed to the address the reporter types.
    Email,
    /// The project's OpenID Connect provider, in a popup.
    Oidc,
}

impl ReporterMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReporterMode::Off => "off",
            ReporterMode::Email => "email",
            ReporterMode::Oidc => "oidc",
        }
    }

    pub fn parse(text: &str) -> Result<Self, Invalid> {
        match text {
            "off" => Ok(ReporterMode::Off),
            "email" => Ok(ReporterMode::Email),
            "oidc" => Ok(ReporterMode::Oidc),
            other => Err(Invalid::new(format!("reporterAuth.mode must be off, email or oidc, not {other:?}"))),
        }
    }
}

/// The project's OpenID Connect client: where its provider is and how Svc is registered there.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OidcSettings {
    /// The issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// Kept to authenticate to the provider's token endpoint; never returned by any API. `None`: a
    /// public client (PKCE alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .finish()
    }
}

/// A project's reporter sign-in settings, stored as one JSON value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReporterAuth {
    #[serde(default)]
    pub mode: ReporterMode,
    /// The widget sends nothing until the reporter has signed in (else signing in is offered and
    /// may be skipped).
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSettings>,
}

/// The longest client id and secret Svc keeps.
const CLIENT_ID_MAX_CHARS: usize = 255;
const CLIENT_SECRET_MAX_CHARS: usize = 500;

impl ReporterAuth {
    /// Checks settings as a whole: `oidc` mode needs a provider.
    pub fn parse(self) -> Result<Self, Invalid> {
        if let Some(oidc) = &self.oidc {
            validate_issuer(&oidc.issuer)?;
            let id_chars = oidc.client_id.chars().count();
            if id_chars == 0 || id_chars > CLIENT_ID_MAX_CHARS || oidc.client_id.chars().any(char::is_control) {
                return Err(Invalid::new(format!(
                    "reporterAuth.oidc.clientId must be 1 to {CLIENT_ID_MAX_CHARS} characters"
                )));
            }
            if let Some(secret) = &oidc.client_secret {
                validate_client_secret(secret)?;
            }
        }
        if self.mode == ReporterMode::Oidc && self.oidc.is_none() {
            return Err(Invalid::new("reporterAuth.mode oidc needs reporterAuth.oidc (issuer and clientId)"));
        }
        Ok(self)
    }

    /// The settings as the APIs show them: the client secret only as `clientSecretSet`.
    pub fn to_public_json(&self) -> Value {
        json!({
            "mode": self.mode.as_str(),
            "required": self.required,
            "oidc": self.oidc.as_ref().map(|oidc| json!({
                "issuer": oidc.issuer,
                "clientId": oidc.client_id,
                "clientSecretSet": oidc.client_secret.is_some(),
            })),
        })
    }

    /// What the widget needs to draw its sign-in step: mode and whether it is required.
    pub fn to_widget_json(&self) -> Value {
        json!({"mode": self.mode.as_str(), "required": self.required && self.mode != ReporterMode::Off})
    }
}

pub fn validate_client_secret(secret: &str) -> Result<(), Invalid> {
    let chars = secret.chars().count();
    if chars == 0 || chars > CLIENT_SECRET_MAX_CHARS || secret.chars().any(char::is_control) {
        return Err(Invalid::new(format!(
            "reporterAuth.oidc.clientSecret must be 1 to {CLIENT_SECRET_MAX_CHARS} characters"
        )));
    }
    Ok(())
}

/// What a change of the sign-in settings does with the stored OpenID Connect client secret, which
/// is never shown and so cannot be sent back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SecretChange {
    /// Keep the stored secret (the change gave none).
    #[default]
    Keep,
    Set(String),
    Clear,
}

/// New sign-in settings, replacing the stored ones whole except the client secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReporterAuthChange {
    /// Validated ([`ReporterAuth::parse`]); its `oidc.client_secret` is ignored.
    pub auth: ReporterAuth,
    pub client_secret: SecretChange,
}

impl ReporterAuthChange {
    /// The settings to store in place of `stored`.
    pub fn apply(self, stored: &ReporterAuth) -> ReporterAuth {
        let mut auth = self.auth;
        if let Some(oidc) = auth.oidc.as_mut() {
            oidc.client_secret = match self.client_secret {
                SecretChange::Keep => stored.oidc.as_ref().and_then(|o| o.client_secret.clone()),
                SecretChange::Set(secret) => Some(secret),
                SecretChange::Clear => None,
            };
        }
        auth
    }
}

/// An issuer is an https URL (http only on a loopback host, for a provider on the same machine)
/// without a query or fragment.
pub fn validate_issuer(issuer: &str) -> Result<(), Invalid> {
    let invalid = || Invalid::new("reporterAuth.oidc.issuer must be an https URL without query or fragment");
    let url = url::Url::parse(issuer).map_err(|_| invalid())?;
    let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    if !scheme_ok || url.host_str().is_none() || url.query().is_some() || url.fragment().is_some() {
        return Err(invalid());
    }
    if issuer.len() > 2000 {
        return Err(invalid());
    }
    Ok(())
}

/// How a reporter proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignInMethod {
    /// A code mailed to their address.
    Email,
    /// The project's OpenID Connect provider.
    Oidc,
    /// An identity token signed by the host page with the project's identity secret.
    Token,
}

impl SignInMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            SignInMethod::Email => "email",
            SignInMethod::Oidc => "oidc",
            SignInMethod::Token => "token",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [SignInMethod::Email, SignInMethod::Oidc, SignInMethod::Token].into_iter().find(|m| m.as_str() == text)
    }
}

/// A reporter who proved who they are: the report's verified identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reporter {
    /// Says how they were verified, so no value a site or a provider chooses can name a reporter
    /// of another kind: `email:<address>` for a mailed code, `oidc:<issuer>#<subject>` for the
    /// project's provider (an issuer holds no `#`), `token:<sub>` for a host page's identity token.
    /// The report's author id and what the reporter's thread is found by.
    pub id: String,
    pub email: Option<String>,
    pub name: Option<String>,
    pub method: SignInMethod,
}

/// The prefix of a reporter id vouched for by an identity token.
const TOKEN_PREFIX: &str = "token:";

impl Reporter {
    pub fn by_email(email: &Email) -> Self {
        Reporter {
            id: format!("email:{}", email.as_str()),
            email: Some(email.as_str().to_string()),
            name: None,
            method: SignInMethod::Email,
        }
    }

    /// The reporter a host page vouches for with an identity token whose `sub` is `user_id`.
    pub fn by_identity_token(user_id: &str, email: Option<String>, name: Option<String>) -> Self {
        Reporter { id: format!("{TOKEN_PREFIX}{user_id}"), email, name, method: SignInMethod::Token }
    }

    /// The reporter a provider's ID token names: its subject within its issuer.
    pub fn by_provider(issuer: &str, subject: &str, email: Option<String>, name: Option<String>) -> Self {
        Reporter { id: format!("oidc:{issuer}#{subject}"), email, name, method: SignInMethod::Oidc }
    }

    /// The identity's `userId`: the host page's own user id for an identity token (decisions §3),
    /// else the reporter id.
    pub fn user_id(&self) -> &str {
        match self.method {
            SignInMethod::Token => self.id.strip_prefix(TOKEN_PREFIX).unwrap_or(&self.id),
            SignInMethod::Email | SignInMethod::Oidc => &self.id,
        }
    }

    /// The name shown for the reporter: their name, else their email, else their id.
    pub fn label(&self) -> &str {
        self.name.as_deref().filter(|n| !n.is_empty()).or(self.email.as_deref()).unwrap_or(self.user_id())
    }

    /// The report's `identity` for this reporter (decisions §3, plus how they signed in).
    pub fn identity(&self) -> Identity {
        Identity {
            user_id: self.user_id().to_string(),
            email: self.email.clone(),
            name: self.name.clone(),
            avatar_url: None,
            verified: true,
            method: Some(self.method),
            other: Default::default(),
        }
    }

    /// The reporter a verified identity names (an identity token's or a reporter token's);
    /// `None` when the identity is not verified. An identity without a method came from an
    /// identity token.
    pub fn from_identity(identity: &Identity) -> Option<Self> {
        if !identity.verified {
            return None;
        }
        let method = identity.method.unwrap_or(SignInMethod::Token);
        let id = match method {
            SignInMethod::Token => format!("{TOKEN_PREFIX}{}", identity.user_id),
            SignInMethod::Email | SignInMethod::Oidc => identity.user_id.clone(),
        };
        Some(Reporter { id, email: identity.email.clone(), name: identity.name.clone(), method })
    }

    /// The reporter as the widget shows them.
    pub fn to_json(&self) -> Value {
        json!({"id": self.id, "email": self.email, "name": self.name, "method": self.method.as_str()})
    }
}

/// A code mailed to an address, as stored: only its keyed hash.
#[derive(Debug, Clone, PartialEq)]
pub struct SignInCode {
    pub id: String,
    pub project_id: String,
    /// Lower-case, as [`Email::parse`] leaves it.
    pub email: String,
    pub code_hash: String,
    pub created_at: i64,
    pub expires_at: i64,
    /// Tries made with it, right or wrong.
    pub attempts: i64,
    pub consumed_at: Option<i64>,
}

/// A signed-in widget's session, as stored: only the SHA-256 of its secret. The widget renews its
/// reporter token with the secret.
#[derive(Debug, Clone, PartialEq)]
pub struct ReporterSession {
    pub id: String,
    pub project_id: String,
    pub secret_hash: String,
    pub reporter: Reporter,
    pub created_at: i64,
    pub last_used_at: i64,
    pub expires_at: i64,
}

/// An OpenID Connect sign-in under way in a popup: what the callback needs to finish it.
#[derive(Clone, PartialEq)]
pub struct OidcState {
    /// SHA-256 of the `state` parameter.
    pub state_hash: String,
    pub project_id: String,
    /// The page origin the popup posts its result to.
    pub origin: String,
    pub code_verifier: String,
    pub nonce: String,
    pub created_at: i64,
    pub expires_at: i64,
}

impl std::fmt::Debug for OidcState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcState").field("project_id", &self.project_id).field("origin", &self.origin).finish()
    }
}

/// A new six-digit code.
pub fn new_code() -> String {
    use rand::RngExt;
    format!("{:06}", rand::rng().random_range(0..1_000_000u32))
}

/// What the reporter typed, as a code: six digits once spaces and dashes are dropped.
pub fn parse_code(typed: &str) -> Option<String> {
    let digits: String = typed.chars().filter(|c| !matches!(c, ' ' | '-' | '\u{a0}')).collect();
    (digits.len() == 6 && digits.chars().all(|c| c.is_ascii_digit())).then_some(digits)
}

/// The claims of a reporter token.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    method: SignInMethod,
    /// The session that can renew the token.
    sid: String,
    iat: i64,
    exp: i64,
}

/// Whether a token names Svc's reporter key (so ingest checks it with that key, not with the
/// project's identity secret). Anything unreadable is not.
pub fn is_reporter_token(token: &str) -> bool {
    jsonwebtoken::decode_header(token.trim()).is_ok_and(|header| header.kid.as_deref() == Some(TOKEN_KEY_ID))
}

/// Signs a reporter token for `session_id` with the project's reporter key; returns it and its
/// expiry (seconds).
pub fn sign_token(reporter: &Reporter, session_id: &str, project_key: &[u8], now_secs: i64) -> (String, i64) {
    let exp = now_secs + TOKEN_LIFETIME_SECS;
    let claims = Claims {
        sub: reporter.id.clone(),
        email: reporter.email.clone(),
        name: reporter.name.clone(),
        method: reporter.method,
        sid: session_id.to_string(),
        iat: now_secs,
        exp,
    };
    let header = Header { kid: Some(TOKEN_KEY_ID.to_string()), ..Header::new(Algorithm::HS256) };
    let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(project_key))
        .expect("claims serialize and an HMAC key of any length signs");
    (token, exp)
}

/// A verified reporter token: who, and the session behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub reporter: Reporter,
    pub session_id: String,
}

/// Verifies a reporter token with the project's reporter key: a token of another project fails
/// its signature. The errors are the identity token's (decisions §3).
pub fn verify_token(token: &str, project_key: &[u8], now_secs: i64) -> Result<VerifiedToken, IdentityError> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = match jsonwebtoken::decode::<Claims>(token.trim(), &DecodingKey::from_secret(project_key), &validation)
    {
        Ok(data) => data.claims,
        Err(error) => {
            return Err(match error.kind() {
                ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => IdentityError::InvalidSignature,
                _ => IdentityError::Malformed,
            });
        }
    };
    if claims.exp + LEEWAY_SECS < now_secs {
        return Err(IdentityError::Expired);
    }
    if claims.sub.is_empty() {
        return Err(IdentityError::Malformed);
    }
    Ok(VerifiedToken {
        reporter: Reporter { id: claims.sub, email: claims.email, name: claims.name, method: claims.method },
        session_id: claims.sid,
    })
}

/// Why an OpenID Connect ID token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdTokenError {
    /// It names a key the provider's set does not hold (the set may be out of date).
    #[error("signed with a key the provider does not publish")]
    KeyUnknown,
    #[error("{0}")]
    Rejected(String),
}

/// The algorithms an ID token may be signed with: the provider's own keys, never a shared secret.
const ID_TOKEN_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

#[derive(Deserialize)]
struct IdClaims {
    sub: String,
    nonce: Option<String>,
    email: Option<String>,
    email_verified: Option<bool>,
    name: Option<String>,
    preferred_username: Option<String>,
}

/// Verifies an ID token from the provider (its signature with the provider's published keys,
/// `iss`, `aud` = our client id, `exp`, and the `nonce` the sign-in started with) and gives the
/// reporter it names: `oidc:<sub>`, with the email only when the provider does not say it is
/// unverified.
pub fn verify_id_token(
    id_token: &str,
    keys: &JwkSet,
    issuer: &str,
    client_id: &str,
    nonce: &str,
) -> Result<Reporter, IdTokenError> {
    let rejected = |why: String| IdTokenError::Rejected(why);
    let header = jsonwebtoken::decode_header(id_token).map_err(|error| rejected(error.to_string()))?;
    if !ID_TOKEN_ALGORITHMS.contains(&header.alg) {
        return Err(rejected(format!("the algorithm {:?} is not accepted", header.alg)));
    }
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid),
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => return Err(rejected("the token names no key and the provider has several".into())),
    };
    let jwk = jwk.ok_or(IdTokenError::KeyUnknown)?;
    let key = DecodingKey::from_jwk(jwk).map_err(|error| rejected(error.to_string()))?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[client_id]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.leeway = LEEWAY_SECS as u64;
    let claims = jsonwebtoken::decode::<IdClaims>(id_token, &key, &validation)
        .map_err(|error| rejected(error.to_string()))?
        .claims;
    if claims.sub.is_empty() {
        return Err(rejected("no subject".into()));
    }
    let nonce_matches =
        claims.nonce.as_deref().is_some_and(|n| crate::secret::constant_time_eq(n.as_bytes(), nonce.as_bytes()));
    if !nonce_matches {
        return Err(rejected("the nonce does not match".into()));
    }
    Ok(Reporter::by_provider(
        issuer,
        &claims.sub,
        claims.email.filter(|_| claims.email_verified != Some(false)).map(|e| e.to_lowercase()),
        claims.name.or(claims.preferred_username).filter(|n| !n.trim().is_empty()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    fn ann() -> Reporter {
        Reporter::by_email(&Email::parse("Ann@Example.com").unwrap())
    }

    #[test]
    fn a_token_verifies_with_its_projects_key_only() {
        let (token, exp) = sign_token(&ann(), "s1", b"key-of-project-a", NOW);
        assert_eq!(exp, NOW + TOKEN_LIFETIME_SECS);
        assert!(is_reporter_token(&token));
        let verified = verify_token(&token, b"key-of-project-a", NOW).unwrap();
        assert_eq!(verified.reporter.id, "email:ann@example.com");
        assert_eq!(verified.session_id, "s1");
        assert_eq!(verify_token(&token, b"key-of-project-b", NOW), Err(IdentityError::InvalidSignature));
        assert_eq!(verify_token(&token, b"key-of-project-a", exp + LEEWAY_SECS + 1), Err(IdentityError::Expired));
        assert_eq!(verify_token("garbage", b"key-of-project-a", NOW), Err(IdentityError::Malformed));
    }

    #[test]
    fn a_forged_payload_fails_its_signature() {
        let (token, _) = sign_token(&ann(), "s1", b"k", NOW);
        let parts: Vec<&str> = token.split('.').collect();
        use base64::Engine;
        let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            json!({"sub": "email:boss@example.com", "method": "email", "sid": "s1", "iat": NOW, "exp": NOW + 60})
                .to_string(),
        );
        let forged = format!("{}.{}.{}", parts[0], forged, parts[2]);
        assert_eq!(verify_token(&forged, b"k", NOW), Err(IdentityError::InvalidSignature));
    }

    #[test]
    fn identity_tokens_are_not_reporter_tokens() {
        let identity = crate::identity::sign(&json!({"sub": "u1", "exp": NOW + 60}), "secret");
        assert!(!is_reporter_token(&identity));
        assert!(!is_reporter_token("not a token"));
    }

    #[test]
    fn identities_round_trip_and_unverified_ones_name_nobody() {
        let reporter = ann();
        assert_eq!(Reporter::from_identity(&reporter.identity()), Some(reporter));
        assert_eq!(
            Reporter::from_identity(&serde_json::from_value(json!({"userId": "u1", "verified": false})).unwrap()),
            None
        );
        let from_token =
            Reporter::from_identity(&serde_json::from_value(json!({"userId": "u1", "verified": true})).unwrap())
                .unwrap();
        assert_eq!(from_token.method, SignInMethod::Token);
        assert_eq!(from_token.id, "token:u1");
        assert_eq!(from_token.identity().user_id, "u1", "the site's own user id stays its userId");
    }

    #[test]
    fn no_value_a_site_or_provider_chooses_names_a_reporter_of_another_kind() {
        let ana = Reporter::by_email(&Email::parse("ana@x.test").unwrap());
        // A host page's identity token whose sub imitates an email reporter's id.
        let site = Reporter::from_identity(
            &serde_json::from_value(json!({"userId": "email:ana@x.test", "verified": true})).unwrap(),
        )
        .unwrap();
        assert_ne!(site.id, ana.id);
        // A provider's subject that imitates one.
        let provider = Reporter::by_provider("https://id.example.com", "email:ana@x.test", None, None);
        assert_ne!(provider.id, ana.id);
        // Two providers' subjects stay apart too.
        let other = Reporter::by_provider("https://other.example.com", "email:ana@x.test", None, None);
        assert_ne!(provider.id, other.id);
        assert_ne!(site.id, provider.id);
        for reporter in [ana, site, provider, other] {
            assert_eq!(Reporter::from_identity(&reporter.identity()).as_ref(), Some(&reporter));
        }
    }

    /// A throwaway Ed25519 key of a test provider, and its public half as a JWK set.
    /// (PKCS #8, base64 of its DER).
    const PROVIDER_KEY: &str = "MC4CAQAwBQYDK2VwBCIEIGLBqSI+owEf0HBzvY1N6u+j9ikixdMvxrC5TYxJcVvC";

    fn provider_keys() -> JwkSet {
        serde_json::from_value(json!({"keys": [{
            "kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig",
            "x": "USbg7_3Exp5rHpm5u7vwMpOO3Q6_QshJk4BXAN8o7Vs",
        }]}))
        .unwrap()
    }

    fn id_token(kid: Option<&str>, claims: Value) -> String {
        let header = Header { kid: kid.map(String::from), ..Header::new(Algorithm::EdDSA) };
        use base64::Engine;
        let der = base64::engine::general_purpose::STANDARD.decode(PROVIDER_KEY).unwrap();
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
    }

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    fn claims() -> Value {
        json!({"iss": "https://id.example.com", "aud": "svc", "sub": "u-7", "exp": now() + 300, "iat": now(),
               "nonce": "n-1", "email": "Ann@Example.com", "name": "Ann"})
    }

    #[test]
    fn an_id_token_from_the_provider_names_its_reporter() {
        let token = id_token(Some("k1"), claims());
        let reporter = verify_id_token(&token, &provider_keys(), "https://id.example.com", "svc", "n-1").unwrap();
        assert_eq!(reporter.id, "oidc:https://id.example.com#u-7");
        assert_eq!(reporter.email.as_deref(), Some("ann@example.com"));
        assert_eq!(reporter.name.as_deref(), Some("Ann"));
        assert_eq!(reporter.method, SignInMethod::Oidc);
        let mut unverified = claims();
        unverified["email_verified"] = json!(false);
        let token = id_token(Some("k1"), unverified);
        let reporter = verify_id_token(&token, &provider_keys(), "https://id.example.com", "svc", "n-1").unwrap();
        assert_eq!(reporter.email, None, "an address the provider calls unverified is not taken");
    }

    #[test]
    fn id_tokens_are_refused_for_another_client_issuer_nonce_or_key() {
        let keys = provider_keys();
        let check = |token: &str| verify_id_token(token, &keys, "https://id.example.com", "svc", "n-1");
        let with = |field: &str, value: Value| {
            let mut claims = claims();
            claims[field] = value;
            id_token(Some("k1"), claims)
        };
        for (field, value) in [
            ("aud", json!("another-client")),
            ("iss", json!("https://evil.example.com")),
            ("nonce", json!("n-2")),
            ("exp", json!(now() - 3600)),
            ("sub", json!("")),
        ] {
            assert!(matches!(check(&with(field, value)), Err(IdTokenError::Rejected(_))), "{field}");
        }
        assert_eq!(check(&id_token(Some("k2"), claims())), Err(IdTokenError::KeyUnknown));
        // No kid: the provider's only key is tried.
        assert!(check(&id_token(None, claims())).is_ok());
        // A token signed with a shared secret (HS256) is never accepted, whatever its key.
        let hs =
            jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims(), &EncodingKey::from_secret(b"x")).unwrap();
        assert!(matches!(check(&hs), Err(IdTokenError::Rejected(_))));
        // A forged payload fails the signature.
        let token = id_token(Some("k1"), claims());
        let parts: Vec<&str> = token.split('.').collect();
        use base64::Engine;
        let mut forged_claims = claims();
        forged_claims["sub"] = json!("admin");
        let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(forged_claims.to_string());
        assert!(matches!(check(&format!("{}.{forged}.{}", parts[0], parts[2])), Err(IdTokenError::Rejected(_))));
    }

    #[test]
    fn codes_are_six_digits() {
        for _ in 0..100 {
            let code = new_code();
            assert_eq!(parse_code(&code), Some(code.clone()));
        }
        assert_eq!(parse_code(" 123 456 "), Some("123456".into()));
        assert_eq!(parse_code("123-456"), Some("123456".into()));
        assert_eq!(parse_code("12345"), None);
        assert_eq!(parse_code("12345a"), None);
        assert_eq!(parse_code("１２３４５６"), None);
    }

    #[test]
    fn settings_need_a_provider_for_oidc_and_hide_the_secret() {
        assert!(ReporterAuth { mode: ReporterMode::Oidc, ..Default::default() }.parse().is_err());
        let oidc = OidcSettings {
            issuer: "https://id.example.com/realms/app".into(),
            client_id: "svc".into(),
            client_secret: Some("s3cret".into()),
        };
        let auth = ReporterAuth { mode: ReporterMode::Oidc, required: true, oidc: Some(oidc.clone()) }.parse().unwrap();
        let shown = auth.to_public_json();
        assert_eq!(shown["oidc"]["clientSecretSet"], true);
        assert!(!shown.to_string().contains("s3cret"));
        assert!(!format!("{auth:?}").contains("s3cret"));
        for issuer in ["http://id.example.com", "https://id.example.com/?a=1", "id.example.com", "ftp://x.example"] {
            let bad = OidcSettings { issuer: issuer.into(), ..oidc.clone() };
            assert!(validate_issuer(&bad.issuer).is_err(), "{issuer}");
        }
        assert!(validate_issuer("http://127.0.0.1:9000").is_ok());
        assert!(validate_issuer("http://localhost:9000/oidc").is_ok());
    }
}
