//! Who is acting: a [`Principal`], resolved by a surface from its credential (an API key, a
//! dashboard session, a reporter token) and handed to every operation. [`Principal::require`] is
//! the one place a scope is checked. Surfaces map [`Refusal`] to their own wire format (REST
//! `{error, code}`, JSON-RPC errors on `/mcp`, a dashboard page).

use svc_core::account::{Membership, Role, User};
use svc_core::model::{ApiKey, Author, Project};
use svc_core::scope;

/// A person with a live session, and the organizations they belong to.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub user: User,
    pub memberships: Vec<Membership>,
    /// The SHA-256 of the session cookie (to end this session).
    pub session_hash: String,
}

impl SignedIn {
    /// The person's role in an organization, if they belong to it.
    pub fn role_in(&self, org_id: &str) -> Option<Role> {
        self.memberships.iter().find(|m| m.org_id == org_id).map(|m| m.role)
    }
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub enum Principal {
    /// A key bound to one project, with its scopes.
    ProjectKey(ApiKey),
    /// An organization-wide key: every project of its organization, on the tool endpoint only.
    OrgKey(ApiKey),
    /// A person signed in to the dashboard: every project of the organizations they belong to,
    /// with the scopes of their role there.
    User(Box<SignedIn>),
    /// A reporter who signed in from the widget (or whose page passed an identity token): holds
    /// no scope; acts only on their own reports of one project, through `service::reporters`.
    Reporter { project_id: String, reporter: svc_core::reporter::Reporter },
    /// An issue tracker's signed delivery (a GitHub issue closed, a comment on it): triages and
    /// comments in its one project, recorded as the tracker's person (`github:<login>`).
    Tracker { project_id: String, author: Author },
    /// Whoever runs `svc` on the server's own machine (the command line, the first start): they
    /// hold the database already, so every right on every project and organization.
    Operator,
}

/// Why a principal may not do something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The credential lacks this scope.
    MissingScope(&'static str),
    /// The project is outside the principal's reach.
    OtherProject,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::MissingScope(needed) => write!(f, "the credential lacks the scope {needed}"),
            Refusal::OtherProject => f.write_str("the project is out of the credential's reach"),
        }
    }
}

impl Principal {
    /// The key behind the principal, when it is a key.
    pub fn key(&self) -> Option<&ApiKey> {
        match self {
            Principal::ProjectKey(key) | Principal::OrgKey(key) => Some(key),
            Principal::User(_) | Principal::Reporter { .. } | Principal::Tracker { .. } | Principal::Operator => None,
        }
    }

    /// The one project a project-bound principal acts on.
    pub fn bound_project(&self) -> Option<&str> {
        match self {
            Principal::ProjectKey(key) => key.project_id.as_deref(),
            Principal::Reporter { project_id, .. } | Principal::Tracker { project_id, .. } => Some(project_id),
            Principal::OrgKey(_) | Principal::User(_) | Principal::Operator => None,
        }
    }

    pub fn org_wide(&self) -> bool {
        matches!(self, Principal::OrgKey(_))
    }

    /// Checks that the principal holds `needed` and, when a project is named, reaches it (the
    /// scope part of `crate::permissions`, which everything else asks).
    pub(crate) fn require(&self, needed: &'static str, project: Option<&Project>) -> Result<(), Refusal> {
        let reaches = |project: &Project| match self {
            Principal::ProjectKey(key) => key.project_id.as_deref() == Some(project.id.as_str()),
            Principal::OrgKey(key) => key.org_id == project.org_id,
            Principal::User(person) => person.role_in(&project.org_id).is_some(),
            Principal::Reporter { project_id, .. } | Principal::Tracker { project_id, .. } => *project_id == project.id,
            Principal::Operator => true,
        };
        if project.is_some_and(|project| !reaches(project)) {
            return Err(Refusal::OtherProject);
        }
        let holds = match self {
            Principal::ProjectKey(key) | Principal::OrgKey(key) => scope::satisfies(&key.scopes, needed),
            // Without a project, the least role among the person's organizations decides.
            Principal::User(person) => {
                let roles: Vec<_> = match project {
                    Some(project) => person.role_in(&project.org_id).into_iter().collect(),
                    None => person.memberships.iter().map(|m| m.role).collect(),
                };
                !roles.is_empty() && roles.iter().all(|role| role.scopes().iter().any(|s| scope::grants(s, needed)))
            }
            Principal::Reporter { .. } => false,
            // Only what a closed issue or a comment on it does.
            Principal::Tracker { .. } => needed == scope::FEEDBACK_WRITE || needed == scope::FEEDBACK_READ,
            Principal::Operator => true,
        };
        if !holds {
            return Err(Refusal::MissingScope(needed));
        }
        Ok(())
    }

    /// The author recorded for changes the principal makes: `agent:<keyId>`, labelled by
    /// `introduce` or the key's name.
    pub fn author(&self) -> Author {
        match self {
            Principal::ProjectKey(key) | Principal::OrgKey(key) => Author {
                kind: svc_core::model::AuthorKind::Agent,
                id: Some(self.viewer()),
                label: Some(key.agent_name.clone().unwrap_or_else(|| key.name.clone())),
            },
            Principal::User(person) => Author {
                kind: svc_core::model::AuthorKind::User,
                id: Some(self.viewer()),
                label: Some(person.user.label().to_string()),
            },
            Principal::Reporter { reporter, .. } => Author {
                kind: svc_core::model::AuthorKind::Reporter,
                id: Some(reporter.id.clone()),
                label: Some(reporter.label().to_string()),
            },
            Principal::Tracker { author, .. } => author.clone(),
            Principal::Operator => crate::audit::command_line(),
        }
    }

    /// The name viewed marks are recorded under: `agent:<keyId>`, `user:<userId>` or
    /// `reporter:<reporterId>`.
    pub fn viewer(&self) -> String {
        match self {
            Principal::ProjectKey(key) | Principal::OrgKey(key) => format!("agent:{}", key.id),
            Principal::User(person) => format!("user:{}", person.user.id),
            Principal::Reporter { reporter, .. } => format!("reporter:{}", reporter.id),
            Principal::Tracker { author, .. } => author.id.clone().unwrap_or_default(),
            Principal::Operator => "operator".to_string(),
        }
    }
}
