//! Who may do what: every permission rule of Svc, in one place. Each operation names the
//! [`Operation`] it performs and asks [`check`] (a project's operations) or [`check_org`] (an
//! organization's); surfaces ask the same functions where they decide what to show (a button, a
//! tab) or refuse early (a REST route), so a rule is written once and tested once, as a table of
//! principal × operation (below).
//!
//! The principals: people signed in to the dashboard (an owner holds every scope of their
//! organizations' projects; a member reads and triages), keys bound to a project (their scopes;
//! a setup token holds `*`), organization-wide keys (their scopes, on every project of their
//! organization), keys made by OAuth (like any key, with the scopes the person chose), and
//! reporters (only their own reports' thread, in their project), and the operator on the server's
//! own machine (the command line: everything).

use svc_core::account::Role;
use svc_core::model::Project;
use svc_core::scope;

use crate::principal::{Principal, Refusal};

/// Something a principal does to a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// List and read reports, their files, comments, rooms and events.
    ReadReports,
    /// File a report (the tool endpoint; the widget files through ingest with the public key).
    FileReport,
    /// Set status, assignee and labels.
    Triage,
    /// Comment, publish, edit and discard drafts.
    Comment,
    /// Create and change rooms.
    ManageRooms,
    ReadChannels,
    /// Create and change channels, and give channel hints.
    ManageChannels,
    ReadProject,
    /// Change the project's settings: name, widget, URL patterns, origins, flags, retention,
    /// reporter sign-in, the identity secret.
    ConfigureProject,
    /// Mint and revoke the project's keys.
    ManageKeys,
    /// Delete the project and everything in it (people only: no key may).
    DeleteProject,
    /// A reporter's own thread: read their reports, reply, confirm a fix.
    OwnThread,
}

/// Something a principal does to an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrgOperation {
    /// Invite, change roles, remove members.
    ManageMembers,
    /// Mint and revoke the organization's own keys.
    ManageOrgKeys,
    CreateProject,
}

impl Operation {
    /// Every operation (for tests and documentation).
    pub const ALL: [Operation; 12] = [
        Operation::ReadReports,
        Operation::FileReport,
        Operation::Triage,
        Operation::Comment,
        Operation::ManageRooms,
        Operation::ReadChannels,
        Operation::ManageChannels,
        Operation::ReadProject,
        Operation::ConfigureProject,
        Operation::ManageKeys,
        Operation::DeleteProject,
        Operation::OwnThread,
    ];

    /// The scope a key or a role needs for it; `None` for a reporter's own thread.
    pub fn scope(self) -> Option<&'static str> {
        Some(match self {
            Operation::ReadReports => scope::FEEDBACK_READ,
            Operation::FileReport | Operation::Triage | Operation::Comment | Operation::ManageRooms => {
                scope::FEEDBACK_WRITE
            }
            Operation::ReadChannels => scope::CHANNEL_READ,
            Operation::ManageChannels => scope::CHANNEL_WRITE,
            Operation::ReadProject => scope::PROJECT_READ,
            Operation::ConfigureProject | Operation::DeleteProject => scope::PROJECT_WRITE,
            Operation::ManageKeys => scope::APIKEY_WRITE,
            Operation::OwnThread => return None,
        })
    }
}

/// Whether `principal` may do `op` to `project`. A project outside the principal's reach is
/// [`Refusal::OtherProject`]; within reach, a missing right is [`Refusal::MissingScope`].
pub fn check(principal: &Principal, op: Operation, project: &Project) -> Result<(), Refusal> {
    match (op, principal) {
        // Only the reporter of the project has a thread in it; nobody else acts through it.
        (Operation::OwnThread, Principal::Reporter { project_id, .. }) if *project_id == project.id => Ok(()),
        (Operation::OwnThread, Principal::Reporter { .. }) => Err(Refusal::OtherProject),
        (Operation::OwnThread, _) => Err(Refusal::MissingScope("a reporter's own thread")),
        (_, Principal::Operator) => Ok(()),
        // A reporter holds no scope: every other operation is refused.
        (_, Principal::Reporter { project_id, .. }) if *project_id != project.id => Err(Refusal::OtherProject),
        (_, Principal::Reporter { .. }) => Err(Refusal::MissingScope(op.scope().unwrap_or("*"))),
        // A tracker's delivery moves a report and adds to its thread, nothing else.
        (Operation::Triage | Operation::Comment | Operation::ReadReports, Principal::Tracker { .. }) => {
            principal.require(op.scope().unwrap_or("*"), Some(project))
        }
        (_, Principal::Tracker { .. }) => Err(Refusal::MissingScope(op.scope().unwrap_or("*"))),
        // Deleting a project is for people: a key (even a setup token) never may.
        (Operation::DeleteProject, Principal::ProjectKey(_) | Principal::OrgKey(_)) => {
            principal.require(scope::PROJECT_WRITE, Some(project))?;
            Err(Refusal::MissingScope("a person who owns the organization"))
        }
        (op, _) => principal.require(op.scope().unwrap_or("*"), Some(project)),
    }
}

/// Whether `principal` may do `op` in some project, before one is chosen (the tool endpoint's
/// tools, whose arguments name the project later): the scope it needs, wherever it reaches.
pub fn check_anywhere(principal: &Principal, op: Operation) -> Result<(), Refusal> {
    match op.scope() {
        Some(needed) => principal.require(needed, None),
        None if matches!(principal, Principal::Reporter { .. }) => Ok(()),
        None => Err(Refusal::MissingScope("a reporter's own thread")),
    }
}

/// Whether `principal` may do `op` to the organization `org_id`: its owners only (and the
/// operator).
pub fn check_org(principal: &Principal, op: OrgOperation, org_id: &str) -> Result<(), Refusal> {
    let _ = op;
    match principal {
        Principal::Operator => Ok(()),
        Principal::User(person) if person.role_in(org_id) == Some(Role::Owner) => Ok(()),
        Principal::User(person) if person.role_in(org_id).is_some() => Err(Refusal::MissingScope("owner")),
        Principal::User(_) => Err(Refusal::OtherProject),
        _ => Err(Refusal::MissingScope("owner")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::SignedIn;
    use Operation::*;
    use svc_core::account::{Membership, User};
    use svc_core::model::{ApiKey, KeyOrigin};
    use svc_core::reporter::Reporter;

    fn project(id: &str, org_id: &str) -> Project {
        Project {
            id: id.into(),
            org_id: org_id.into(),
            name: id.into(),
            slug: id.into(),
            project_key: String::new(),
            url_patterns: vec![],
            default_channel_key: "bug".into(),
            widget_config: serde_json::json!({}),
            allowed_origins: vec![],
            identity_secret: None,
            created_at: 0,
            retention_days: None,
            reporter_auth: Default::default(),
        }
    }

    fn key(project_id: Option<&str>, scopes: &[&str], origin: KeyOrigin) -> ApiKey {
        ApiKey {
            id: "k".into(),
            project_id: project_id.map(String::from),
            org_id: "org".into(),
            name: "n".into(),
            key_hash: String::new(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            origin,
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
            agent_name: None,
            agent_owner: None,
            created_at: 0,
        }
    }

    fn person(role: Role) -> Principal {
        Principal::User(Box::new(SignedIn {
            user: User { id: "u".into(), email: "u@example.com".into(), name: String::new(), created_at: 0 },
            memberships: vec![Membership { org_id: "org".into(), user_id: "u".into(), role, created_at: 0 }],
            session_hash: String::new(),
        }))
    }

    fn reporter(project_id: &str) -> Principal {
        let reporter = Reporter::by_identity_token("site-user", None, None);
        Principal::Reporter { project_id: project_id.into(), reporter }
    }

    /// Whether `op` is allowed, as `Y`/`n`, for each operation of [`Operation::ALL`] in order.
    fn row(principal: &Principal, project: &Project) -> String {
        Operation::ALL.iter().map(|op| if check(principal, *op, project).is_ok() { 'Y' } else { 'n' }).collect()
    }

    #[test]
    fn every_principal_against_every_operation() {
        let p = project("p", "org");
        let scoped = |scopes: &[&str]| Principal::ProjectKey(key(Some("p"), scopes, KeyOrigin::Api));
        // Columns: ReadReports FileReport Triage Comment ManageRooms ReadChannels ManageChannels
        //          ReadProject ConfigureProject ManageKeys DeleteProject OwnThread
        let table: Vec<(&str, Principal, &str)> = vec![
            ("owner", person(Role::Owner), "YYYYYYYYYYYn"),
            ("member", person(Role::Member), "YYYYYYnYnnnn"),
            ("setup token (*)", scoped(&["*"]), "YYYYYYYYYYnn"),
            ("key feedback:read", scoped(&[scope::FEEDBACK_READ]), "Ynnnnnnnnnnn"),
            ("key feedback:write", scoped(&[scope::FEEDBACK_WRITE]), "nYYYYnnnnnnn"),
            ("key channel:read", scoped(&[scope::CHANNEL_READ]), "nnnnnYnnnnnn"),
            ("key channel:write", scoped(&[scope::CHANNEL_WRITE]), "nnnnnnYnnnnn"),
            ("key project:read", scoped(&[scope::PROJECT_READ]), "nnnnnnnYnnnn"),
            ("key project:write", scoped(&[scope::PROJECT_WRITE]), "nnnnnnnnYnnn"),
            ("key apikey:write", scoped(&[scope::APIKEY_WRITE]), "nnnnnnnnnYnn"),
            (
                "org-wide key (read, write)",
                Principal::OrgKey(key(None, &[scope::FEEDBACK_READ, scope::FEEDBACK_WRITE], KeyOrigin::Cli)),
                "YYYYYnnnnnnn",
            ),
            (
                "OAuth key (read only)",
                Principal::ProjectKey(key(Some("p"), &[scope::FEEDBACK_READ], KeyOrigin::Oauth)),
                "Ynnnnnnnnnnn",
            ),
            ("reporter of the project", reporter("p"), "nnnnnnnnnnnY"),
            ("operator (command line)", Principal::Operator, "YYYYYYYYYYYn"),
        ];
        for (who, principal, expected) in &table {
            assert_eq!(row(principal, &p), *expected, "{who}");
        }
        // Nobody but the operator reaches another organization's project, nor a project another
        // key is bound to.
        let elsewhere = project("q", "other-org");
        for (who, principal, _) in table.iter().filter(|(_, p, _)| !matches!(p, Principal::Operator)) {
            for op in Operation::ALL {
                assert!(check(principal, op, &elsewhere).is_err(), "{who} {op:?} on another organization's project");
            }
        }
        assert_eq!(check(&scoped(&["*"]), ReadReports, &project("q", "org")), Err(Refusal::OtherProject));
        assert_eq!(check(&reporter("q"), OwnThread, &p), Err(Refusal::OtherProject));
    }

    #[test]
    fn before_a_project_is_chosen_the_scope_decides() {
        let reader = Principal::ProjectKey(key(Some("p"), &[scope::FEEDBACK_READ], KeyOrigin::Oauth));
        assert_eq!(check_anywhere(&reader, ReadReports), Ok(()));
        assert_eq!(check_anywhere(&reader, Triage), Err(Refusal::MissingScope(scope::FEEDBACK_WRITE)));
        assert_eq!(check_anywhere(&person(Role::Member), ManageKeys), Err(Refusal::MissingScope(scope::APIKEY_WRITE)));
        assert_eq!(check_anywhere(&reporter("p"), OwnThread), Ok(()));
        assert!(check_anywhere(&reporter("p"), ReadReports).is_err());
        assert!(check_anywhere(&person(Role::Owner), OwnThread).is_err());
    }

    #[test]
    fn organizations_are_their_owners_to_run() {
        let ops = [OrgOperation::ManageMembers, OrgOperation::ManageOrgKeys, OrgOperation::CreateProject];
        for op in ops {
            assert_eq!(check_org(&person(Role::Owner), op, "org"), Ok(()));
            assert_eq!(check_org(&person(Role::Member), op, "org"), Err(Refusal::MissingScope("owner")));
            assert_eq!(check_org(&person(Role::Owner), op, "other-org"), Err(Refusal::OtherProject));
            let org_key = Principal::OrgKey(key(None, &["*"], KeyOrigin::Cli));
            assert!(check_org(&org_key, op, "org").is_err(), "a key never runs an organization");
            assert!(check_org(&reporter("p"), op, "org").is_err());
            assert_eq!(check_org(&Principal::Operator, op, "any-org"), Ok(()));
        }
    }
}
