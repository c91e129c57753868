//! API keys to mint: names, scopes and lifetimes, checked once for the REST API and the CLI.

use crate::{Invalid, scope};

pub const MIN_TTL_SECS: i64 = 60;
pub const MAX_TTL_SECS: i64 = 31_536_000;

/// A key to mint (for a project, or organization-wide when the service is told so).
#[derive(Debug, Clone, PartialEq)]
pub struct NewKey {
    pub name: String,
    pub scopes: Vec<String>,
    pub ttl_secs: Option<i64>,
}

impl NewKey {
    /// A key minted through the API: a subset of the project's scopes, never `*` or `apikey:write`.
    pub fn mintable(name: String, scopes: Vec<String>, ttl_secs: Option<i64>) -> Result<Self, Invalid> {
        scope::validate_mintable(&scopes)?;
        Self::checked(name, scopes, ttl_secs)
    }

    /// A key minted by an administrator (CLI): any known scope, `*` included.
    pub fn by_admin(name: String, scopes: Vec<String>, ttl_secs: Option<i64>) -> Result<Self, Invalid> {
        scope::validate_known(&scopes)?;
        Self::checked(name, scopes, ttl_secs)
    }

    /// A key minted by an owner in the dashboard: any of the seven named scopes, `apikey:write`
    /// included (an owner holds every scope already), never `*` (setup tokens are minted on their
    /// own, with a lifetime).
    pub fn by_owner(name: String, scopes: Vec<String>, ttl_secs: Option<i64>) -> Result<Self, Invalid> {
        if scopes.iter().any(|s| s == scope::ALL) {
            return Err(Invalid::new("scope * is only for setup tokens"));
        }
        scope::validate_known(&scopes)?;
        Self::checked(name.trim().to_string(), scopes, ttl_secs)
    }

    fn checked(name: String, scopes: Vec<String>, ttl_secs: Option<i64>) -> Result<Self, Invalid> {
        validate_key_name(&name)?;
        if let Some(ttl) = ttl_secs {
            validate_ttl(ttl)?;
        }
        Ok(NewKey { name, scopes, ttl_secs })
    }
}

pub fn validate_key_name(name: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() || name.chars().count() > 100 {
        return Err(Invalid::new("name must be 1 to 100 characters"));
    }
    Ok(())
}

pub fn validate_ttl(ttl_secs: i64) -> Result<(), Invalid> {
    if !(MIN_TTL_SECS..=MAX_TTL_SECS).contains(&ttl_secs) {
        return Err(Invalid::new(format!("expiresInSeconds must be between {MIN_TTL_SECS} and {MAX_TTL_SECS}")));
    }
    Ok(())
}

/// An agent's self-introduction (`introduce`): the label shown for what its key does.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentLabel {
    pub name: String,
    pub owner: Option<String>,
}

impl AgentLabel {
    pub fn parse(name: &str, owner: Option<&str>) -> Result<Self, Invalid> {
        let name = name.trim();
        if name.is_empty() {
            return Err(Invalid::new("agentName is required"));
        }
        if name.chars().count() > 100 {
            return Err(Invalid::new("agentName is longer than 100 characters"));
        }
        let owner = owner.map(str::trim).filter(|o| !o.is_empty()).map(String::from);
        if owner.as_ref().is_some_and(|o| o.chars().count() > 200) {
            return Err(Invalid::new("owner is longer than 200 characters"));
        }
        Ok(AgentLabel { name: name.to_string(), owner })
    }
}

/// Identity secrets (HS256 keys for the widget's identity tokens) are at least this long.
pub const IDENTITY_SECRET_MIN_CHARS: usize = 16;

pub fn validate_identity_secret(secret: &str) -> Result<(), Invalid> {
    if secret.len() < IDENTITY_SECRET_MIN_CHARS {
        return Err(Invalid::new(format!(
            "the identity secret must be at least {IDENTITY_SECRET_MIN_CHARS} characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn owners_may_mint_apikey_write_but_not_star() {
        let key = NewKey::by_owner(" Deploy ".into(), scopes(&["feedback:read", "apikey:write"]), Some(3600)).unwrap();
        assert_eq!(key.name, "Deploy");
        assert!(NewKey::by_owner("x".into(), scopes(&["*"]), Some(3600)).is_err());
        assert!(NewKey::by_owner("x".into(), scopes(&["feedback:delete"]), None).is_err());
        assert!(NewKey::by_owner("x".into(), Vec::new(), None).is_err());
        assert!(NewKey::by_owner("x".into(), scopes(&["feedback:read"]), Some(59)).is_err());
        assert!(NewKey::mintable("x".into(), scopes(&["apikey:write"]), None).is_err());
    }
}
