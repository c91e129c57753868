//! Reporters who sign in from the widget, their thread and their confirmation of a fix
//! (docs/widget.md, "Reporter sign-in" and "The reporter's thread").
//!
//! Signing in (by a mailed code, or through the project's OpenID Connect provider, see
//! [`super::reporter_oidc`]) starts a session; the widget keeps the session's secret and trades it
//! for short-lived reporter tokens at `GET /auth/reporter-token`. A reporter token travels in
//! `x-svc-identity` like an identity token; reports filed with it carry the reporter as their
//! verified identity, and the reporter's own routes accept it (or an identity token) as who they
//! are.
//!
//! Keys: one random key of the service's own, made once and kept in the database (every instance
//! uses the same), from which each project's token key and the codes' hashes are derived with
//! HMAC-SHA256; a token of one project never verifies for another.

use crate::Service;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use svc_core::account::Email;
use svc_core::identity::IdentityError;
use svc_core::mail::MailKind;
use svc_core::model::{Comment, Project, Report, ReportFilter, StatusChange};
use svc_core::reporter::{
    self as rules, Reporter, ReporterMode, ReporterSession, SignInCode, SignInMethod, VerifiedToken,
};
use svc_core::status::{NewComment, Status};
use svc_core::{ids, secret, time};

use super::mail::{self, Mail};
use super::{ServiceError, ServiceResult, comments, reports};
use crate::principal::Principal;
use svc_core::event::{EventKind, NewEvent};
use svc_store::{Applied, Change, StoreError, Write};

/// The name the service's reporter key is kept under (in the small key-value table the mail
/// service keeps its own key in).
const SERVICE_KEY_NAME: &str = "reporter_key";
/// Reports a reporter's thread shows (the widget's History shows as many, decisions §10).
pub const THREAD_REPORTS: usize = 20;

/// The service's reporter key: made once, kept in the database (every instance uses the same).
async fn service_key(svc: &Service) -> ServiceResult<Vec<u8>> {
    let store = svc.store();
    let key = match store.mail_state(SERVICE_KEY_NAME).await? {
        Some(key) => key,
        None => store.init_mail_state(SERVICE_KEY_NAME, &ids::new_random_secret(43)).await?,
    };
    Ok(key.into_bytes())
}

/// HMAC-SHA256 of a purpose and its parts under the service key.
async fn derive(svc: &Service, purpose: &str, parts: &[&str]) -> ServiceResult<Vec<u8>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&service_key(svc).await?).expect("HMAC takes keys of any length");
    mac.update(purpose.as_bytes());
    for part in parts {
        mac.update(b"\n");
        mac.update(part.as_bytes());
    }
    Ok(mac.finalize().into_bytes().to_vec())
}

/// The key that signs and checks the project's reporter tokens.
pub async fn token_key(svc: &Service, project_id: &str) -> ServiceResult<Vec<u8>> {
    derive(svc, "svc-reporter-token", &[project_id]).await
}

/// What is stored of a code: a keyed hash, so six digits cannot be read back from a copy of the
/// database by trying all million.
async fn code_hash(svc: &Service, project_id: &str, email: &str, code: &str) -> ServiceResult<String> {
    Ok(hex::encode(derive(svc, "svc-reporter-code", &[project_id, email, code]).await?))
}

/// The signature of a "does it work now?" link for a report and its reporter.
async fn confirm_mac(svc: &Service, report_id: &str, reporter_id: &str) -> ServiceResult<Vec<u8>> {
    derive(svc, "svc-reporter-confirm", &[report_id, reporter_id]).await
}

/// Why signing in, renewing or a reporter's request was refused. Each surface words it.
#[derive(Debug, thiserror::Error)]
pub enum ReporterError {
    /// The project does not offer this way of signing in.
    #[error("this project does not offer that sign-in")]
    NotOffered,
    /// Too many codes for this address; try again later.
    #[error("too many codes for this address")]
    TooManyCodes { retry_after_secs: u64 },
    /// Wrong code, or none was sent (the answer does not tell which).
    #[error("wrong code")]
    CodeInvalid { tries_left: i64 },
    /// What was typed is not six digits (no try is counted).
    #[error("the code is six digits")]
    CodeMalformed,
    #[error("the code has expired")]
    CodeExpired,
    /// The code took its last try: a new one must be asked for.
    #[error("too many tries")]
    TooManyTries,
    /// No live session has this secret.
    #[error("not signed in")]
    SessionInvalid,
    /// The reporter token is missing, forged, expired or of another project.
    #[error("the reporter token is not valid")]
    TokenInvalid,
    /// The report is not one of the reporter's.
    #[error("no such report of yours")]
    NotYours,
    /// The report is not waiting for the reporter's confirmation (it is not `fixed`).
    #[error("the report is not marked fixed")]
    NotFixed,
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<svc_store::StoreError> for ReporterError {
    fn from(error: svc_store::StoreError) -> Self {
        ReporterError::Service(error.into())
    }
}

impl From<svc_core::Invalid> for ReporterError {
    fn from(error: svc_core::Invalid) -> Self {
        ReporterError::Service(error.into())
    }
}

pub type ReporterResult<T> = Result<T, ReporterError>;

/// A started or renewed sign-in: the token for `x-svc-identity` and, when a session was just
/// started, its secret (shown this once; the widget keeps it to renew the token).
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: String,
    /// Seconds since the epoch.
    pub expires_at: i64,
    pub session_secret: Option<String>,
    pub reporter: Reporter,
}

// ---------------------------------------------------------------------------------------------
// Email codes.

/// Mails a six-digit code to `email` for the project. The answer is the same whether or not the
/// address ever reported (nothing can be learned from it); a sixth code within the hour is refused.
pub async fn send_code(svc: &Service, project: &Project, email: &Email) -> ReporterResult<()> {
    let store = svc.store();
    if project.reporter_auth.mode != ReporterMode::Email {
        return Err(ReporterError::NotOffered);
    }
    let now = time::now_ms();
    let sent = store.count_sign_in_codes(&project.id, email.as_str(), now - rules::CODE_WINDOW_MS).await?;
    if sent >= rules::CODES_PER_ADDRESS {
        let retry_after_secs = (rules::CODE_WINDOW_MS / rules::CODES_PER_ADDRESS / 1000) as u64;
        return Err(ReporterError::TooManyCodes { retry_after_secs });
    }
    let code = rules::new_code();
    let stored = SignInCode {
        id: ids::new_id_at(now),
        project_id: project.id.clone(),
        email: email.as_str().to_string(),
        code_hash: code_hash(svc, &project.id, email.as_str(), &code).await?,
        created_at: now,
        expires_at: now + rules::CODE_LIFETIME_MS,
        attempts: 0,
        consumed_at: None,
    };
    store.create_sign_in_code(&stored).await?;
    let text = format!(
        "Your sign-in code for {project} is\n\n    {first} {second}\n\nType it where you asked for it. It works for \
         10 minutes, once.\n\nIf you did not ask for a code, ignore this mail: nobody can sign in without it.\n",
        project = project.name,
        first = &code[..3],
        second = &code[3..],
    );
    let mut message = Mail::new(
        &project.org_id,
        email.clone(),
        MailKind::SignInCode,
        format!("Your sign-in code for {}", project.name),
        text,
    );
    message.project_id = Some(project.id.clone());
    message.expires_at = Some(stored.expires_at);
    mail::queue(svc, message).await?;
    Ok(())
}

/// Checks a typed code against the newest one sent to the address: every try counts (five per
/// code), an expired or used code never works, and the right one starts a session.
pub async fn verify_code(svc: &Service, project: &Project, email: &Email, typed: &str) -> ReporterResult<SignedIn> {
    let store = svc.store();
    if project.reporter_auth.mode != ReporterMode::Email {
        return Err(ReporterError::NotOffered);
    }
    let Some(code) = rules::parse_code(typed) else { return Err(ReporterError::CodeMalformed) };
    let now = time::now_ms();
    let wrong = |tries_left| ReporterError::CodeInvalid { tries_left };
    let Some(sent) = store.latest_sign_in_code(&project.id, email.as_str()).await? else {
        return Err(wrong(0));
    };
    if sent.consumed_at.is_some() {
        return Err(wrong(0));
    }
    if sent.attempts >= rules::CODE_MAX_TRIES {
        return Err(ReporterError::TooManyTries);
    }
    if sent.expires_at <= now {
        return Err(ReporterError::CodeExpired);
    }
    // Counted before comparing, in one statement: tries sent at once cannot pass the limit.
    let Some(tries) = store.count_sign_in_code_try(&sent.id).await? else { return Err(wrong(0)) };
    if tries > rules::CODE_MAX_TRIES {
        return Err(ReporterError::TooManyTries);
    }
    let hash = code_hash(svc, &project.id, email.as_str(), &code).await?;
    if !secret::constant_time_eq(hash.as_bytes(), sent.code_hash.as_bytes()) {
        return Err(if tries >= rules::CODE_MAX_TRIES {
            ReporterError::TooManyTries
        } else {
            wrong(rules::CODE_MAX_TRIES - tries)
        });
    }
    if !store.consume_sign_in_code(&sent.id, now).await? {
        return Err(wrong(0));
    }
    start_session(svc, project, Reporter::by_email(email)).await
}

// ---------------------------------------------------------------------------------------------
// Sessions and tokens.

/// Starts a session for a reporter who just proved who they are; returns its secret and a token.
pub async fn start_session(svc: &Service, project: &Project, reporter: Reporter) -> ReporterResult<SignedIn> {
    let store = svc.store();
    let now = time::now_ms();
    let session_secret = format!("rs_{}", ids::new_random_secret(40));
    let session = ReporterSession {
        id: ids::new_id_at(now),
        project_id: project.id.clone(),
        secret_hash: secret::hash_secret(&session_secret),
        reporter,
        created_at: now,
        last_used_at: now,
        expires_at: now + rules::SESSION_LIFETIME_MS,
    };
    store.create_reporter_session(&session).await?;
    let mut signed_in = token_for(svc, project, &session).await?;
    signed_in.session_secret = Some(session_secret);
    Ok(signed_in)
}

async fn token_for(svc: &Service, project: &Project, session: &ReporterSession) -> ServiceResult<SignedIn> {
    let key = token_key(svc, &project.id).await?;
    let (token, expires_at) = rules::sign_token(&session.reporter, &session.id, &key, time::now_ms() / 1000);
    Ok(SignedIn { token, expires_at, session_secret: None, reporter: session.reporter.clone() })
}

/// The live session of the project whose secret this is.
async fn session_of(svc: &Service, project: &Project, session_secret: &str) -> ReporterResult<ReporterSession> {
    let store = svc.store();
    let session = store.reporter_session(&secret::hash_secret(session_secret.trim())).await?;
    session.filter(|s| s.project_id == project.id && s.expires_at > time::now_ms()).ok_or(ReporterError::SessionInvalid)
}

/// A fresh token for a live session (the widget renews before the old one expires); the session
/// lasts [`rules::SESSION_LIFETIME_MS`] from now.
pub async fn renew(svc: &Service, project: &Project, session_secret: &str) -> ReporterResult<SignedIn> {
    let store = svc.store();
    let mut session = session_of(svc, project, session_secret).await?;
    let now = time::now_ms();
    // Moved at most once a minute: renewals cost no write each time.
    if now - session.last_used_at > 60_000 {
        session.last_used_at = now;
        session.expires_at = now + rules::SESSION_LIFETIME_MS;
        store.touch_reporter_session(&session.id, now, session.expires_at).await?;
    }
    Ok(token_for(svc, project, &session).await?)
}

/// Ends the session (sign out): its token is not renewed again.
pub async fn sign_out(svc: &Service, project: &Project, session_secret: &str) -> ReporterResult<()> {
    let store = svc.store();
    let session = session_of(svc, project, session_secret).await?;
    store.delete_reporter_session(&session.id).await?;
    Ok(())
}

/// Checks a token from `x-svc-identity` for the project and gives the report's `identity`: a
/// reporter token with the project's token key; an identity token with the project's identity
/// secret. `None` when the token is not checked (an identity token, and no secret is set).
pub async fn check_identity(
    svc: &Service,
    project: &Project,
    token: &str,
) -> ServiceResult<Option<Result<svc_core::identity::Identity, IdentityError>>> {
    let now_secs = time::now_ms() / 1000;
    if rules::is_reporter_token(token) {
        let key = token_key(svc, &project.id).await?;
        let verified = rules::verify_token(token, &key, now_secs);
        return Ok(Some(verified.map(|VerifiedToken { reporter, .. }| reporter.identity())));
    }
    let Some(identity_secret) = project.identity_secret.as_deref() else { return Ok(None) };
    Ok(Some(svc_core::identity::verify(token, identity_secret, now_secs)))
}

/// The reporter a request's token names, as a principal of the project.
pub async fn principal(svc: &Service, project: &Project, token: Option<&str>) -> ReporterResult<Principal> {
    let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or(ReporterError::TokenInvalid)?;
    let identity = check_identity(svc, project, token).await?.and_then(Result::ok);
    let reporter = identity.as_ref().and_then(Reporter::from_identity).ok_or(ReporterError::TokenInvalid)?;
    Ok(Principal::Reporter { project_id: project.id.clone(), reporter })
}

// ---------------------------------------------------------------------------------------------
// The reporter's thread.

/// One of the reporter's reports as their thread shows it: its published comments (never drafts)
/// and its status history.
#[derive(Debug, Clone)]
pub struct ThreadReport {
    pub report: Report,
    pub comments: Vec<Comment>,
    pub history: Vec<StatusChange>,
}

impl ThreadReport {
    /// When anything the reporter can see last happened: filed, a published comment, a status
    /// change. The widget marks a report with news when this is after its last look.
    pub fn last_activity(&self) -> i64 {
        let comments = self.comments.iter().filter_map(|c| c.published_at);
        let changes = self.history.iter().map(|c| c.at);
        comments.chain(changes).fold(self.report.created_at, i64::max)
    }
}

/// Whether the report was filed by this reporter, verified (an unverified report naming the same
/// user id is not theirs: anyone can type a user id).
fn is_theirs(report: &Report, reporter: &Reporter) -> bool {
    report.identity.as_ref().and_then(Reporter::from_identity).is_some_and(|by| by.id == reporter.id)
}

fn reporter_of(principal: &Principal) -> &Reporter {
    match principal {
        Principal::Reporter { reporter, .. } => reporter,
        _ => unreachable!("reporter routes resolve a reporter"),
    }
}

/// The reporter's newest reports of the project, each with its thread. `known` are report ids the
/// widget sent from this browser: they are read directly, so a report filed a moment ago shows
/// before the search index (which finds a reporter's other reports) has caught up.
pub async fn thread(
    svc: &Service,
    project: &Project,
    principal: &Principal,
    known: &[String],
) -> ServiceResult<Vec<ThreadReport>> {
    let store = svc.store();
    let reporter = reporter_of(principal);
    let filter = ReportFilter {
        project_ids: vec![project.id.clone()],
        reporter: Some(reporter.id.clone()),
        verified_only: true,
        limit: THREAD_REPORTS as u32,
        ..Default::default()
    };
    let mut found: Vec<Report> = store.list_reports(&filter).await?;
    for id in known.iter().take(THREAD_REPORTS) {
        if found.iter().any(|r| &r.id == id) {
            continue;
        }
        if let Some(report) = reports::get_in(svc, std::slice::from_ref(&project.id), id).await? {
            found.push(report);
        }
    }
    found.retain(|report| is_theirs(report, reporter));
    found.sort_by(|a, b| b.id.cmp(&a.id));
    found.truncate(THREAD_REPORTS);
    let mut thread = Vec::with_capacity(found.len());
    for mut report in found {
        let mut comments: Vec<Comment> = comments::list(svc, &report).await?.into_iter().filter(|c| !c.draft).collect();
        // A duplicate's reporter follows the original as if it were their own: its status, its
        // history and the team's answers there (not its other reporters' words).
        let history = match super::duplicates::original_of(svc, &report).await? {
            Some(original) => {
                let team = comments::list(svc, &original).await?.into_iter();
                comments.extend(team.filter(|c| !c.draft && c.author.kind != svc_core::model::AuthorKind::Reporter));
                comments.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
                report.status = original.status;
                reports::history(svc, &original).await?
            }
            None => reports::history(svc, &report).await?,
        };
        thread.push(ThreadReport { report, comments, history });
    }
    Ok(thread)
}

/// One of the reporter's own reports by id.
async fn own_report(svc: &Service, project: &Project, principal: &Principal, id: &str) -> ReporterResult<Report> {
    let report = reports::get_in(svc, std::slice::from_ref(&project.id), id).await?;
    report.filter(|r| is_theirs(r, reporter_of(principal))).ok_or(ReporterError::NotYours)
}

/// The reporter answers on their report: a published comment by them (its `comment.published`
/// event tells the team members who get replies, by mail).
pub async fn reply(
    svc: &Service,
    project: &Project,
    principal: &Principal,
    report_id: &str,
    text: &str,
) -> ReporterResult<Comment> {
    let report = own_report(svc, project, principal, report_id).await?;
    let now = time::now_ms();
    let comment = comments::compose(&report, principal.author(), NewComment::parse(text, None, Some(false))?, now);
    apply(svc, project, principal, now, vec![Write::Comment(comment.clone())]).await?;
    Ok(comment)
}

/// The reporter's answer to "does it work now?" on a report marked `fixed`: "Works now" sets
/// `verified`, "Still broken" sets `triaged`; a note becomes their comment. One change: the note,
/// the status (in the report's history and the project's log), and `report.confirmed`, all as the
/// reporter's acts.
pub async fn confirm(
    svc: &Service,
    project: &Project,
    principal: &Principal,
    report_id: &str,
    works: bool,
    note: Option<&str>,
) -> ReporterResult<(StatusChange, Option<Comment>)> {
    let report = own_report(svc, project, principal, report_id).await?;
    // On a duplicate, the answer is about the original's fix.
    let report = super::duplicates::original_of(svc, &report).await?.unwrap_or(report);
    if report.status != Status::Fixed {
        return Err(ReporterError::NotFixed);
    }
    let now = time::now_ms();
    let author = principal.author();
    let note = note.map(str::trim).filter(|n| !n.is_empty());
    let comment = match note {
        Some(text) => {
            Some(comments::compose(&report, author.clone(), NewComment::parse(text, None, Some(false))?, now))
        }
        None => None,
    };
    let status = if works { Status::Verified } else { Status::Triaged };
    // The note first: whoever reads the new status finds the reason beside it.
    let mut writes: Vec<Write> = comment.iter().cloned().map(Write::Comment).collect();
    writes.push(Write::Status { report_id: report.id.clone(), to: status });
    writes.push(Write::Event(NewEvent {
        project_id: project.id.clone(),
        report_id: Some(report.id.clone()),
        kind: EventKind::Confirmed { works },
        by: author.clone(),
        at: now,
    }));
    let detail = serde_json::json!({
        "reportId": report.id,
        "shortId": ids::short_id(&report.id),
        "from": report.status,
        "to": status,
    });
    writes.push(Write::Audit(super::audit::entry(project, &author, svc_core::audit::action::STATUS_CHANGED, detail)));
    let applied = apply(svc, project, principal, now, writes).await?;
    let change = applied.into_iter().find_map(|outcome| match outcome {
        Applied::Status(change) => change,
        _ => None,
    });
    // Someone changed the status between the read and the write: the answer came too late.
    let Some(change) = change else { return Err(ReporterError::NotFixed) };
    Ok((change, comment))
}

/// Applies a reporter's change in their project and tells live views.
async fn apply(
    svc: &Service,
    project: &Project,
    principal: &Principal,
    at: i64,
    writes: Vec<Write>,
) -> ReporterResult<Vec<Applied>> {
    let change = Change { project_ids: Some(vec![project.id.clone()]), by: principal.author(), at, writes };
    let applied = match svc.store().apply(&change).await {
        Ok(applied) => applied,
        Err(StoreError::NotFound) => return Err(ReporterError::NotYours),
        Err(other) => return Err(other.into()),
    };
    svc.store().changes().announce(&project.id);
    Ok(applied)
}

// ---------------------------------------------------------------------------------------------
// Telling the reporter that their report is fixed.

/// The mail to the reporter of a report just marked `fixed`, when they signed in by email: "does
/// it work now?" with a link to answer. One per status change (its dedupe key); `None` for a
/// reporter Svc has no verified address of. The mail consumer builds it from the
/// `report.status_changed` event.
pub(crate) async fn fixed_mail(
    svc: &Service,
    public_url: &str,
    project: &Project,
    report: &Report,
    changed_at: i64,
) -> ServiceResult<Option<Mail>> {
    let Some(reporter) = report.identity.as_ref().and_then(Reporter::from_identity) else { return Ok(None) };
    if reporter.method != SignInMethod::Email {
        return Ok(None);
    }
    let Some(email) = reporter.email.as_deref().and_then(|e| Email::parse(e).ok()) else { return Ok(None) };
    let link = confirm_link(svc, public_url, report, &reporter).await?;
    let text = format!(
        "Good news: your report to {project} is marked fixed.\n\n{title}\n\nDoes it work now? Tell the team with one \
         click, or say what is still wrong:\n\n{link}\n\nYou can also answer in the feedback panel on the page where \
         you reported it (History).\n",
        project = project.name,
        title = mail::quote(&report.title, mail::EXCERPT_CHARS),
    );
    let mut message = Mail::new(
        &project.org_id,
        email,
        MailKind::ReportUpdate,
        format!("[{}] Fixed: {}", project.name, report.title),
        text,
    );
    message.project_id = Some(project.id.clone());
    message.dedupe_key = Some(format!("fixed:{}:{changed_at}", report.id));
    Ok(Some(message))
}

/// `<public URL>/reporter/confirm?token=<report>.<mac>`: the link in a "fixed" mail.
async fn confirm_link(svc: &Service, public_url: &str, report: &Report, reporter: &Reporter) -> ServiceResult<String> {
    use base64::Engine;
    let mac = confirm_mac(svc, &report.id, &reporter.id).await?;
    let mac = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac);
    Ok(format!("{}/reporter/confirm?token={}.{mac}", mail::base(public_url), report.id))
}

/// What a "does it work now?" link is for: the report and its reporter, as a principal.
#[derive(Debug, Clone)]
pub struct ConfirmLink {
    pub project: Project,
    pub report: Report,
    pub principal: Principal,
}

/// Reads a "does it work now?" link's token; `None` when it is forged, malformed, or names a
/// report that is gone.
pub async fn check_confirm_link(svc: &Service, token: &str) -> ServiceResult<Option<ConfirmLink>> {
    let store = svc.store();
    use base64::Engine;
    let Some((report_id, mac)) = token.trim().split_once('.') else { return Ok(None) };
    if !ids::is_object_id(report_id) {
        return Ok(None);
    }
    let Ok(mac) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(mac) else { return Ok(None) };
    let Some(report) = store.get_report(report_id).await? else { return Ok(None) };
    let Some(reporter) = report.identity.as_ref().and_then(Reporter::from_identity) else { return Ok(None) };
    let expected = confirm_mac(svc, report_id, &reporter.id).await?;
    if !secret::constant_time_eq(&mac, &expected) {
        return Ok(None);
    }
    let Some(project) = store.get_project(&report.project_id).await? else { return Ok(None) };
    let principal = Principal::Reporter { project_id: project.id.clone(), reporter };
    Ok(Some(ConfirmLink { project, report, principal }))
}
