//! Mail: the messages Svc sends (kept in an outbox until delivered), what each person wants to get
//! about each project, and the rules for both. Nothing here sends anything; see `svc-server`'s
//! `service::mail` and `docs/mail.md`.

use crate::Invalid;

/// How long a subject may be (characters); longer ones are cut.
pub const SUBJECT_MAX_CHARS: usize = 200;
/// How long a body may be (bytes of UTF-8); longer ones are refused.
pub const BODY_MAX_BYTES: usize = 100_000;
/// The hour (UTC) at which the daily digest covers the day before.
pub const DIGEST_HOUR_UTC: i64 = 8;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// What a message is: decides how the outbox shows it and whether it carries an unsubscribe link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    /// A sign-in code for a reporter: shown in the outbox only while no SMTP server is set.
    SignInCode,
    /// One new report, to a member who wants them at once.
    NewReport,
    /// The reports of a day, to a member who wants a digest.
    Digest,
    /// A reporter answered on a report.
    ReporterReply,
    /// News about a report, to its reporter (for example: it is fixed).
    ReportUpdate,
    /// An invitation link to join an organization, mailed by an owner.
    Invitation,
    /// A webhook failed for a day and was disabled, to the project's owners.
    WebhookDisabled,
}

impl MailKind {
    pub const ALL: [MailKind; 7] = [
        MailKind::SignInCode,
        MailKind::NewReport,
        MailKind::Digest,
        MailKind::ReporterReply,
        MailKind::ReportUpdate,
        MailKind::Invitation,
        MailKind::WebhookDisabled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::SignInCode => "sign_in_code",
            MailKind::NewReport => "new_report",
            MailKind::Digest => "digest",
            MailKind::ReporterReply => "reporter_reply",
            MailKind::ReportUpdate => "report_update",
            MailKind::Invitation => "invitation",
            MailKind::WebhookDisabled => "webhook_disabled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// Words for people ("New report").
    pub fn label(self) -> &'static str {
        match self {
            MailKind::SignInCode => "Sign-in code",
            MailKind::NewReport => "New report",
            MailKind::Digest => "Digest",
            MailKind::ReporterReply => "Reporter's reply",
            MailKind::ReportUpdate => "Report update",
            MailKind::Invitation => "Invitation",
            MailKind::WebhookDisabled => "Webhook disabled",
        }
    }

    /// Whether the body is a secret (a code): the outbox hides it once a server delivers mail.
    pub fn is_secret(self) -> bool {
        // An invitation link lets whoever holds it join the organization.
        matches!(self, MailKind::SignInCode | MailKind::Invitation)
    }
}

/// A message as the outbox keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxMail {
    pub id: String,
    /// The organization whose owners may read it in the dashboard's outbox.
    pub org_id: String,
    pub project_id: Option<String>,
    /// The recipient's address (lower-case, as [`crate::account::Email`] leaves it).
    pub recipient: String,
    pub subject: String,
    /// Plain text.
    pub body: String,
    pub kind: MailKind,
    /// Queuing the same key twice stores it once (one mail per report and person, for example).
    pub dedupe_key: Option<String>,
    /// Where a click turns this kind of mail off (also sent as `List-Unsubscribe`).
    pub unsubscribe_url: Option<String>,
    pub created_at: i64,
    /// Not delivered after this time: dropped (a sign-in code that has expired).
    pub expires_at: Option<i64>,
    /// When the sender may (next) try; while a sender holds it, the end of its lease.
    pub next_attempt_at: i64,
    pub attempts: i64,
    /// The last delivery failure (the SMTP server's answer), never a secret.
    pub last_error: Option<String>,
    pub sent_at: Option<i64>,
    /// When the sender stopped trying (too many failures, or expired).
    pub given_up_at: Option<i64>,
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailState {
    /// Waiting for delivery (or for an SMTP server to be set).
    Queued,
    Sent,
    /// The sender stopped trying.
    Failed,
}

impl OutboxMail {
    pub fn state(&self) -> MailState {
        if self.sent_at.is_some() {
            MailState::Sent
        } else if self.given_up_at.is_some() {
            MailState::Failed
        } else {
            MailState::Queued
        }
    }
}

/// A subject on one line: control characters (line breaks included) become spaces, runs of
/// white space one space, and it is cut to [`SUBJECT_MAX_CHARS`].
pub fn clean_subject(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(SUBJECT_MAX_CHARS * 4));
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    if out.chars().count() > SUBJECT_MAX_CHARS {
        out = out.chars().take(SUBJECT_MAX_CHARS - 1).collect::<String>() + "…";
    }
    out
}

/// Checks a body: not empty, at most [`BODY_MAX_BYTES`].
pub fn check_body(text: &str) -> Result<(), Invalid> {
    if text.trim().is_empty() {
        return Err(Invalid::new("a mail needs a body"));
    }
    if text.len() > BODY_MAX_BYTES {
        return Err(Invalid::new(format!("a mail body is at most {BODY_MAX_BYTES} bytes")));
    }
    Ok(())
}

/// What a person gets about the new reports of a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewReports {
    /// Nothing (the default).
    #[default]
    Off,
    /// One mail per report, within seconds.
    Instant,
    /// One mail a day (at [`DIGEST_HOUR_UTC`]) listing the reports of the day before.
    Digest,
}

impl NewReports {
    pub const ALL: [NewReports; 3] = [NewReports::Off, NewReports::Instant, NewReports::Digest];

    pub fn as_str(self) -> &'static str {
        match self {
            NewReports::Off => "off",
            NewReports::Instant => "instant",
            NewReports::Digest => "digest",
        }
    }

    pub fn parse(text: &str) -> Result<Self, Invalid> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or_else(|| Invalid::new(format!("new reports must be off, instant or digest, not {text:?}")))
    }
}

/// One person's mail settings for one project. Without a stored row: [`MailPreference::default_for`].
#[derive(Debug, Clone, PartialEq)]
pub struct MailPreference {
    pub user_id: String,
    pub project_id: String,
    pub new_reports: NewReports,
    /// Mail when a reporter replies on one of the project's reports (on by default: replies are
    /// rare and someone should read them).
    pub replies: bool,
    /// When `new_reports` last changed: reports filed before that are never mailed at once, and
    /// the first digest starts there.
    pub reports_since: i64,
    /// The end of the period the last digest covered.
    pub digest_through: Option<i64>,
}

impl MailPreference {
    pub fn default_for(user_id: &str, project_id: &str) -> Self {
        MailPreference {
            user_id: user_id.into(),
            project_id: project_id.into(),
            new_reports: NewReports::Off,
            replies: true,
            reports_since: 0,
            digest_through: None,
        }
    }
}

/// Someone a notification goes to: a member of the project's organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscriber {
    pub user_id: String,
    pub email: String,
    pub name: String,
    pub project_id: String,
    /// Their settings for the project.
    pub preference: MailPreference,
}

/// The most recent digest time at or before `now`: [`DIGEST_HOUR_UTC`]:00 UTC today, or yesterday
/// when that is still ahead.
pub fn digest_boundary(now: i64) -> i64 {
    let today = now.div_euclid(DAY_MS) * DAY_MS + DIGEST_HOUR_UTC * 3600 * 1000;
    if today <= now { today } else { today - DAY_MS }
}

/// The smallest object id made at `ms` or later (ids start with their creation time, see
/// [`crate::ids`]): `id >= id_floor(a) AND id < id_floor(b)` are the ids made in `[a, b)`.
pub fn id_floor(ms: i64) -> String {
    format!("{:012x}000000000000", ms.max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for kind in MailKind::ALL {
            assert_eq!(MailKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(MailKind::parse("spam"), None);
        assert!(MailKind::SignInCode.is_secret());
        assert!(!MailKind::NewReport.is_secret());
        assert!(MailKind::Invitation.is_secret());
    }

    #[test]
    fn subjects_are_one_line_and_short() {
        assert_eq!(clean_subject("  New\r\nBcc: x@y.z\treport "), "New Bcc: x@y.z report");
        let long = "a".repeat(500);
        assert_eq!(clean_subject(&long).chars().count(), SUBJECT_MAX_CHARS);
    }

    #[test]
    fn bodies_are_checked() {
        assert!(check_body("hello").is_ok());
        assert!(check_body("  \n").is_err());
        assert!(check_body(&"a".repeat(BODY_MAX_BYTES + 1)).is_err());
    }

    #[test]
    fn modes_parse() {
        assert_eq!(NewReports::parse("digest").unwrap(), NewReports::Digest);
        assert!(NewReports::parse("hourly").is_err());
    }

    #[test]
    fn digest_boundaries() {
        let day = 24 * 3600 * 1000;
        let eight = DIGEST_HOUR_UTC * 3600 * 1000;
        // 2026-01-02 07:59 UTC: the boundary is 2026-01-01 08:00.
        let jan2 = 20_455 * day;
        assert_eq!(digest_boundary(jan2 + eight - 60_000), jan2 - day + eight);
        assert_eq!(digest_boundary(jan2 + eight), jan2 + eight);
        assert_eq!(digest_boundary(jan2 + eight + 1), jan2 + eight);
    }

    #[test]
    fn id_floors_order_with_ids() {
        // An id made at that millisecond (`new_id_at` would not go back before ids this test
        // process made already).
        let id = format!("{:012x}{}", 1_700_000_000_000i64, "ffffffffffff");
        assert!(id_floor(1_700_000_000_000) <= id);
        assert!(id < id_floor(1_700_000_000_001));
    }
}
