//! Identity tokens (decisions §3): a JWT signed HS256 with the project's identity secret, verified with
//! `jsonwebtoken`. Only HS256 is accepted (so no algorithm confusion, and `alg: none` is refused); `typ`
//! is not looked at; `exp` is checked here against the caller's clock so it stays testable.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Clock leeway for `exp`.
pub const LEEWAY_SECS: i64 = 60;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityError {
    InvalidSignature,
    Expired,
    Malformed,
}

impl IdentityError {
    /// The `identityError` stored on the report.
    pub fn code(&self) -> &'static str {
        match self {
            IdentityError::InvalidSignature => "invalid_signature",
            IdentityError::Expired => "expired",
            IdentityError::Malformed => "malformed",
        }
    }
}

/// A report's verified reporter (decisions §3): who a host page's identity token or Svc's own
/// reporter token says filed it. `email`, `name` and `avatarUrl` are written as `null` when unknown;
/// `method` says how a reporter who signed in from the widget proved it (absent for an identity
/// token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub user_id: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub avatar_url: Option<String>,
    pub verified: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::reporter::SignInMethod>,
    #[serde(flatten)]
    pub other: crate::block::Unknown,
}

/// Verifies a token and returns the report's `identity`: `{userId, email, name, avatarUrl, verified}`.
pub fn verify(token: &str, secret: &str, now_secs: i64) -> Result<Identity, IdentityError> {
    let token = token.trim();
    // The header alone first, so a header that is JSON but names no algorithm we know (`none`, none at
    // all) is told apart from a token that is not a JWT: the former is refused like a wrong algorithm.
    if let Err(error) = jsonwebtoken::decode_header(token) {
        return Err(match error.kind() {
            ErrorKind::Json(json) if json.is_data() => IdentityError::InvalidSignature,
            _ => IdentityError::Malformed,
        });
    }
    let mut validation = Validation::new(Algorithm::HS256);
    // `sub` and `exp` are checked below so a missing one is `malformed` and `exp` uses `now_secs`.
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = match jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(secret.as_bytes()), &validation) {
        Ok(data) => data.claims,
        Err(error) => {
            return Err(match error.kind() {
                ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => IdentityError::InvalidSignature,
                _ => IdentityError::Malformed,
            });
        }
    };
    let sub = claims.get("sub").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or(IdentityError::Malformed)?;
    let exp = claims.get("exp").and_then(Value::as_i64).ok_or(IdentityError::Malformed)?;
    if exp + LEEWAY_SECS < now_secs {
        return Err(IdentityError::Expired);
    }
    let optional = |name: &str| claims.get(name).and_then(Value::as_str).map(String::from);
    Ok(Identity {
        user_id: sub.to_string(),
        email: optional("email"),
        name: optional("name"),
        avatar_url: optional("avatarUrl"),
        verified: true,
        method: None,
        other: Default::default(),
    })
}

/// Signs claims as an HS256 JWT (tests, examples and tools that mint identity tokens).
pub fn sign(claims: &Value, secret: &str) -> String {
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(secret.as_bytes()))
        .expect("a JSON value signs with an HMAC key of any length")
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::json;

    const SECRET: &str = "a-long-identity-secret-for-tests";
    const NOW: i64 = 1_800_000_000;

    #[test]
    fn valid_token_gives_a_verified_identity() {
        let token = sign(&json!({"sub": "u1", "email": "a@b.c", "name": "Ann", "exp": NOW + 60}), SECRET);
        let identity = verify(&token, SECRET, NOW).unwrap();
        assert_eq!(identity.user_id, "u1");
        assert_eq!(identity.name.as_deref(), Some("Ann"));
        assert!(identity.verified);
    }

    #[test]
    fn wrong_secret_expired_and_garbage_are_told_apart() {
        let token = sign(&json!({"sub": "u1", "exp": NOW + 60}), SECRET);
        assert_eq!(verify(&token, "another-secret", NOW), Err(IdentityError::InvalidSignature));
        let old = sign(&json!({"sub": "u1", "exp": NOW - 61}), SECRET);
        assert_eq!(verify(&old, SECRET, NOW), Err(IdentityError::Expired));
        let within_leeway = sign(&json!({"sub": "u1", "exp": NOW - 59}), SECRET);
        assert!(verify(&within_leeway, SECRET, NOW).is_ok());
        assert_eq!(verify("not-a-token", SECRET, NOW), Err(IdentityError::Malformed));
        let no_sub = sign(&json!({"exp": NOW + 60}), SECRET);
        assert_eq!(verify(&no_sub, SECRET, NOW), Err(IdentityError::Malformed));
    }

    #[test]
    fn other_algorithms_are_refused() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        let payload = URL_SAFE_NO_PAD.encode(json!({"sub": "u1", "exp": NOW + 60}).to_string());
        assert_eq!(verify(&format!("{header}.{payload}."), SECRET, NOW), Err(IdentityError::InvalidSignature));
    }

    #[test]
    fn only_hs256_is_accepted_and_typ_is_ignored() {
        let claims = json!({"sub": "u1", "exp": NOW + 60});
        let key = EncodingKey::from_secret(SECRET.as_bytes());
        let hs384 = jsonwebtoken::encode(&Header::new(Algorithm::HS384), &claims, &key).unwrap();
        assert_eq!(verify(&hs384, SECRET, NOW), Err(IdentityError::InvalidSignature));
        for typ in [None, Some("at+jwt".to_string())] {
            let header = Header { typ, ..Header::new(Algorithm::HS256) };
            let token = jsonwebtoken::encode(&header, &claims, &key).unwrap();
            assert_eq!(verify(&token, SECRET, NOW).unwrap().user_id, "u1");
        }
    }

    #[test]
    fn tampered_payloads_and_bad_claims_are_told_apart() {
        let token = sign(&json!({"sub": "u1", "exp": NOW + 60}), SECRET);
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = URL_SAFE_NO_PAD.encode(json!({"sub": "admin", "exp": NOW + 60}).to_string());
        parts[1] = &forged;
        assert_eq!(verify(&parts.join("."), SECRET, NOW), Err(IdentityError::InvalidSignature));
        let text_exp = sign(&json!({"sub": "u1", "exp": "tomorrow"}), SECRET);
        assert_eq!(verify(&text_exp, SECRET, NOW), Err(IdentityError::Malformed));
        let empty_sub = sign(&json!({"sub": "", "exp": NOW + 60}), SECRET);
        assert_eq!(verify(&empty_sub, SECRET, NOW), Err(IdentityError::Malformed));
        let not_json = format!("{}.{}.sig", URL_SAFE_NO_PAD.encode("{"), URL_SAFE_NO_PAD.encode("{}"));
        assert_eq!(verify(&not_json, SECRET, NOW), Err(IdentityError::Malformed));
        // An audience is not ours to check: the token is still a valid identity.
        let with_aud = sign(&json!({"sub": "u1", "exp": NOW + 60, "aud": "elsewhere"}), SECRET);
        assert!(verify(&with_aud, SECRET, NOW).is_ok());
    }
}
