//! Identity tokens (decisions §3): a JWT signed HS256 with the project's identity secret. A small
//! verifier of exactly this profile: no other algorithm is accepted, so no algorithm confusion.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

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

/// Verifies a token and returns the report's `identity`: `{userId, email, name, avatarUrl, verified}`.
pub fn verify(token: &str, secret: &str, now_secs: i64) -> Result<Value, IdentityError> {
    let token = token.trim();
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(IdentityError::Malformed);
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).map_err(|_| IdentityError::Malformed);
    let header: Value = serde_json::from_slice(&decode(header)?).map_err(|_| IdentityError::Malformed)?;
    if header.get("alg").and_then(Value::as_str) != Some("HS256") {
        return Err(IdentityError::InvalidSignature);
    }
    let signature = decode(signature)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).map_err(|_| IdentityError::InvalidSignature)?;
    // What is signed: `<header>.<payload>`, everything before the last dot.
    let signed = &token[..token.rfind('.').unwrap_or(0)];
    mac.update(signed.as_bytes());
    // `verify_slice` compares in constant time.
    mac.verify_slice(&signature).map_err(|_| IdentityError::InvalidSignature)?;
    let claims: Value = serde_json::from_slice(&decode(payload)?).map_err(|_| IdentityError::Malformed)?;
    let sub = claims.get("sub").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or(IdentityError::Malformed)?;
    let exp = claims.get("exp").and_then(Value::as_i64).ok_or(IdentityError::Malformed)?;
    if exp + LEEWAY_SECS < now_secs {
        return Err(IdentityError::Expired);
    }
    let optional = |name: &str| claims.get(name).and_then(Value::as_str).map(String::from);
    Ok(json!({
        "userId": sub,
        "email": optional("email"),
        "name": optional("name"),
        "avatarUrl": optional("avatarUrl"),
        "verified": true,
    }))
}

/// Signs claims as an HS256 JWT (tests, examples and tools that mint identity tokens).
pub fn sign(claims: &Value, secret: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signing_input = format!("{header}.{payload}");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "a-long-identity-secret-for-tests";
    const NOW: i64 = 1_800_000_000;

    #[test]
    fn valid_token_gives_a_verified_identity() {
        let token = sign(&json!({"sub": "u1", "email": "a@b.c", "name": "Ann", "exp": NOW + 60}), SECRET);
        let identity = verify(&token, SECRET, NOW).unwrap();
        assert_eq!(identity["userId"], "u1");
        assert_eq!(identity["name"], "Ann");
        assert_eq!(identity["verified"], true);
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
}
