//! Secrets: only their SHA-256 is stored, comparisons are constant-time, and `Debug` never prints them.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A secret value (API key plaintext, identity secret) that cannot be printed by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The plaintext, for the single place that must hand it out or use it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Hex SHA-256 of a secret: what the database keeps.
pub fn hash_secret(plaintext: &str) -> String {
    hex::encode(Sha256::digest(plaintext.as_bytes()))
}

/// Constant-time equality of two byte strings.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value() {
        assert_eq!(format!("{:?}", Secret::new("pr_sk_abc")), "Secret(***)");
    }

    #[test]
    fn hash_is_stable_hex() {
        assert_eq!(hash_secret("a").len(), 64);
        assert_eq!(hash_secret("a"), hash_secret("a"));
        assert!(constant_time_eq(hash_secret("a").as_bytes(), hash_secret("a").as_bytes()));
        assert!(!constant_time_eq(b"a", b"b"));
    }
}
