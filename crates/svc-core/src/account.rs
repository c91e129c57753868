//! People who sign in to the dashboard: users, their memberships in organizations, sessions and
//! one-time links, with the rules for what they type (email, name, password).

use crate::{Invalid, ids};

/// How long a session lasts without use; each use moves the end forward (sliding).
pub const SESSION_LIFETIME_MS: i64 = 30 * 24 * 3600 * 1000;
/// A session's end is moved forward at most this often, so reading pages costs no write each time.
pub const SESSION_TOUCH_INTERVAL_MS: i64 = 10 * 60 * 1000;
/// How long a one-time link for the first owner or a password reset stays valid.
pub const LINK_LIFETIME_MS: i64 = 3600 * 1000;
/// How long an invitation link stays valid: long enough to reach someone over a weekend.
pub const INVITE_LIFETIME_MS: i64 = 7 * 24 * 3600 * 1000;

pub const MIN_PASSWORD_CHARS: usize = 10;
pub const MAX_PASSWORD_CHARS: usize = 1024;

/// A person's role in an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Everything, settings, keys and members included.
    Owner,
    /// Reads and triages reports; sees settings without changing them.
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
        }
    }

    pub fn parse(text: &str) -> Result<Self, Invalid> {
        match text {
            "owner" => Ok(Role::Owner),
            "member" => Ok(Role::Member),
            other => Err(Invalid::new(format!("unknown role {other:?} (owner or member)"))),
        }
    }

    /// The scopes a role grants on every project of its organization.
    pub fn scopes(self) -> &'static [&'static str] {
        match self {
            Role::Owner => &["*"],
            Role::Member => &["feedback:read", "feedback:write", "channel:read", "project:read"],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: String,
    /// Lower-case, as [`Email::parse`] leaves it.
    pub email: String,
    pub name: String,
    pub created_at: i64,
}

impl User {
    /// The name shown for the user: their name, or their email when they gave none.
    pub fn label(&self) -> &str {
        if self.name.is_empty() { &self.email } else { &self.name }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    pub org_id: String,
    pub user_id: String,
    pub role: Role,
    pub created_at: i64,
}

/// A dashboard session as stored: only the SHA-256 of the cookie's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id_hash: String,
    pub user_id: String,
    pub created_at: i64,
    pub last_seen_at: i64,
    pub expires_at: i64,
}

/// What a one-time link is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPurpose {
    /// The first person sets their email and password and becomes owner of the organization.
    FirstOwner,
    /// A user sets a new password.
    ResetPassword,
    /// Someone joins the link's organization with the link's role (a new account, or their own).
    Invite,
}

impl LinkPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::FirstOwner => "first-owner",
            LinkPurpose::ResetPassword => "reset-password",
            LinkPurpose::Invite => "invite",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "first-owner" => Some(LinkPurpose::FirstOwner),
            "reset-password" => Some(LinkPurpose::ResetPassword),
            "invite" => Some(LinkPurpose::Invite),
            _ => None,
        }
    }
}

/// A one-time link as stored: the SHA-256 of its token, what it is for and for whom.
#[derive(Debug, Clone, PartialEq)]
pub struct OneTimeLink {
    pub token_hash: String,
    pub purpose: LinkPurpose,
    /// The organization a first owner or an invited person joins.
    pub org_id: Option<String>,
    /// The user whose password a reset link sets.
    pub user_id: Option<String>,
    /// The role an invited person gets.
    pub role: Option<Role>,
    pub created_at: i64,
    pub expires_at: i64,
}

/// A new session cookie value: `svs_` + 43 base62 characters (256 bits).
pub fn new_session_token() -> String {
    format!("svs_{}", ids::new_random_secret(43))
}

/// A new one-time link token: `svl_` + 43 base62 characters.
pub fn new_link_token() -> String {
    format!("svl_{}", ids::new_random_secret(43))
}

/// An email address as the service keeps it: trimmed and lower-case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    /// A plausible address: one `@` with text on both sides, a dot in the domain, no spaces or
    /// control characters, at most 254 characters. Deliverability is not checked.
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let email = text.trim().to_lowercase();
        let invalid = || Invalid::new("email must be an address such as name@example.com");
        if email.is_empty() || email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid());
        }
        let (local, domain) = email.split_once('@').ok_or_else(invalid)?;
        if local.is_empty()
            || domain.contains('@')
            || !domain.contains('.')
            || domain.starts_with('.')
            || domain.ends_with('.')
        {
            return Err(invalid());
        }
        Ok(Email(email))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A display name: trimmed, at most 100 characters, may be empty (the email is shown instead).
pub fn parse_name(text: &str) -> Result<String, Invalid> {
    let name = text.trim();
    if name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(Invalid::new("name must be at most 100 characters on one line"));
    }
    Ok(name.to_string())
}

/// A password someone chose: long enough to resist guessing, short enough to hash cheaply.
pub fn check_password(password: &str) -> Result<(), Invalid> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(Invalid::new(format!("password must be at least {MIN_PASSWORD_CHARS} characters")));
    }
    if chars > MAX_PASSWORD_CHARS {
        return Err(Invalid::new(format!("password must be at most {MAX_PASSWORD_CHARS} characters")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_trimmed_and_lower_case() {
        assert_eq!(Email::parse("  Ada@Example.COM ").unwrap().as_str(), "ada@example.com");
        for bad in ["", "ada", "@example.com", "ada@", "ada@example", "a da@example.com", "a@b@c.com", "ada@.com"] {
            assert!(Email::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn passwords_have_a_minimum_length() {
        assert!(check_password("short").is_err());
        assert!(check_password("long enough!").is_ok());
        assert!(check_password(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_err());
    }

    #[test]
    fn roles_round_trip() {
        for role in [Role::Owner, Role::Member] {
            assert_eq!(Role::parse(role.as_str()).unwrap(), role);
        }
        assert!(Role::parse("admin").is_err());
        assert_eq!(Role::Owner.scopes(), &["*"]);
    }

    #[test]
    fn link_purposes_round_trip() {
        for purpose in [LinkPurpose::FirstOwner, LinkPurpose::ResetPassword, LinkPurpose::Invite] {
            assert_eq!(LinkPurpose::parse(purpose.as_str()), Some(purpose));
        }
        assert_eq!(LinkPurpose::parse("other"), None);
    }

    #[test]
    fn tokens_are_long_and_prefixed() {
        assert!(new_session_token().starts_with("svs_") && new_session_token().len() == 47);
        assert_ne!(new_link_token(), new_link_token());
    }
}
