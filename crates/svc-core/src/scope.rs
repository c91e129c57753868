//! API key scopes (spec, Authentication 2).

pub const FEEDBACK_READ: &str = "feedback:read";
pub const FEEDBACK_WRITE: &str = "feedback:write";
pub const CHANNEL_READ: &str = "channel:read";
pub const CHANNEL_WRITE: &str = "channel:write";
pub const PROJECT_READ: &str = "project:read";
pub const PROJECT_WRITE: &str = "project:write";
pub const APIKEY_WRITE: &str = "apikey:write";
pub const ALL: &str = "*";

/// The seven named scopes of a project.
pub const PROJECT_SCOPES: [&str; 7] =
    [FEEDBACK_READ, FEEDBACK_WRITE, CHANNEL_READ, CHANNEL_WRITE, PROJECT_READ, PROJECT_WRITE, APIKEY_WRITE];

/// Whether a key holding `held` may act where `needed` is required (`*` satisfies every scope).
pub fn satisfies(held: &[String], needed: &str) -> bool {
    held.iter().any(|scope| grants(scope, needed))
}

/// Whether one held scope grants `needed`.
pub fn grants(held: &str, needed: &str) -> bool {
    held == ALL || held == needed
}

/// Checks a scope list for minting through the API: a non-empty subset of the project's scopes,
/// never `*` or `apikey:write`.
pub fn validate_mintable(scopes: &[String]) -> Result<(), crate::Invalid> {
    if scopes.is_empty() {
        return Err(crate::Invalid::new("scopes must name at least one scope"));
    }
    for scope in scopes {
        if scope == ALL || scope == APIKEY_WRITE {
            return Err(crate::Invalid::new(format!("scope {scope} cannot be minted through the API")));
        }
        if !PROJECT_SCOPES.contains(&scope.as_str()) {
            return Err(crate::Invalid::new(format!("unknown scope: {scope}")));
        }
    }
    Ok(())
}

/// Checks scopes for a key minted by an administrator (CLI): known scopes or `*`.
pub fn validate_known(scopes: &[String]) -> Result<(), crate::Invalid> {
    if scopes.is_empty() {
        return Err(crate::Invalid::new("scopes must name at least one scope"));
    }
    match scopes.iter().find(|s| *s != ALL && !PROJECT_SCOPES.contains(&s.as_str())) {
        Some(unknown) => Err(crate::Invalid::new(format!("unknown scope: {unknown}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn star_satisfies_everything() {
        assert!(satisfies(&v(&["*"]), APIKEY_WRITE));
        assert!(satisfies(&v(&[FEEDBACK_READ]), FEEDBACK_READ));
        assert!(!satisfies(&v(&[FEEDBACK_READ]), FEEDBACK_WRITE));
    }

    #[test]
    fn minting_refuses_star_apikey_write_and_unknown() {
        assert!(validate_mintable(&v(&[FEEDBACK_READ, FEEDBACK_WRITE])).is_ok());
        assert!(validate_mintable(&v(&["*"])).is_err());
        assert!(validate_mintable(&v(&[APIKEY_WRITE])).is_err());
        assert!(validate_mintable(&v(&["feedback:delete"])).is_err());
        assert!(validate_mintable(&[]).is_err());
    }
}
