//! Issue trackers (docs/integrations.md): a project's connection to one (GitHub now), the issue a
//! report became, and the rules both ways: which Svc status a closed or reopened issue means,
//! which of Svc's changes go to the issue, and the issue's body, written for people.
//!
//! A second tracker (GitLab, Linear, Jira) is one more value of [`TrackerKind`] with its own client
//! in the service layer; everything here that is not GitHub's own (settings, links, the body) is
//! shared.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::Invalid;
use crate::block::Block;
use crate::markdown::{LONG_LINE_MAX_CHARS, ONE_LINE_MAX_CHARS, code_span, fenced, one_line};
use crate::model::Report;
use crate::secret::Secret;
use crate::status::Status;

/// The API GitHub.com answers at; GitHub Enterprise Server answers at `https://<host>/api/v3`.
pub const GITHUB_API_URL: &str = "https://api.github.com";
/// Channel rules per project.
pub const MAX_RULES: usize = 20;
/// Labels a rule adds.
pub const MAX_RULE_LABELS: usize = 10;
/// GitHub's own limit on a label's name.
pub const MAX_LABEL_CHARS: usize = 50;
/// GitHub's limit on an issue title.
pub const MAX_TITLE_CHARS: usize = 256;
/// GitHub's limit on an issue or comment body (65,536 characters); Svc keeps well under it.
pub const MAX_BODY_CHARS: usize = 60_000;
/// The hidden mark Svc ends every comment it writes on an issue with, so the comment's own
/// `issue_comment` delivery is not mirrored back into the thread it came from.
pub const COMMENT_MARK: &str = "<!-- svc:comment ";

/// The trackers Svc can connect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrackerKind {
    Github,
}

impl TrackerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TrackerKind::Github => "github",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        (text == "github").then_some(TrackerKind::Github)
    }

    /// The tracker's name for people.
    pub fn name(self) -> &'static str {
        match self {
            TrackerKind::Github => "GitHub",
        }
    }
}

/// How Svc signs in to GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthKind {
    /// A fine-grained personal access token (Issues: read and write on the repository).
    Token,
    /// A GitHub App installed on the repository: Svc signs the app's JWT and trades it for
    /// installation tokens.
    App,
}

impl AuthKind {
    /// `token` or `app`, as forms and the API write it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::Token => "token",
            AuthKind::App => "app",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [AuthKind::Token, AuthKind::App].into_iter().find(|kind| kind.as_str() == text)
    }
}

/// A rule: every new report in the channel becomes an issue, with these labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelRule {
    pub channel_key: String,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// Everything about a connection that may be shown (its secrets are apart, in
/// [`TrackerConnection`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackerSettings {
    /// The API's base URL, without a trailing slash.
    pub api_url: String,
    /// `owner/name`, as written.
    pub repository: String,
    pub auth: AuthKind,
    /// The GitHub App's id (or client id), for [`AuthKind::App`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installation_id: Option<i64>,
    /// The status a report takes when its issue is closed as completed.
    pub on_closed_completed: Status,
    /// ... closed as not planned (or as a duplicate).
    pub on_closed_not_planned: Status,
    /// ... reopened.
    pub on_reopened: Status,
    /// Svc's status changes close and reopen the issue.
    pub send_status: bool,
    /// Comments published on the report are posted on the issue.
    pub send_comments: bool,
    /// Comments on the issue are mirrored into the report's thread.
    pub mirror_comments: bool,
    /// The reporter's email is written in the issue (never, unless the project says so).
    pub include_reporter_email: bool,
    pub rules: Vec<ChannelRule>,
}

impl TrackerSettings {
    /// A new connection's settings: the usual mapping, both directions on, no rule.
    pub fn new(repository: String, auth: AuthKind) -> Self {
        TrackerSettings {
            api_url: GITHUB_API_URL.into(),
            repository,
            auth,
            app_id: None,
            installation_id: None,
            on_closed_completed: Status::Fixed,
            on_closed_not_planned: Status::Canceled,
            on_reopened: Status::Triaged,
            send_status: true,
            send_comments: true,
            mirror_comments: true,
            include_reporter_email: false,
            rules: Vec::new(),
        }
    }

    /// The repository as the tracker compares it (GitHub's names ignore case).
    pub fn repository_key(&self) -> String {
        self.repository.to_ascii_lowercase()
    }

    /// The labels of the rule for `channel_key`, when there is one.
    pub fn rule_for(&self, channel_key: &str) -> Option<&ChannelRule> {
        self.rules.iter().find(|rule| rule.channel_key == channel_key)
    }

    /// The status an issue's new state means for the report.
    pub fn status_for(&self, state: IssueState) -> Status {
        match state {
            IssueState::Completed => self.on_closed_completed,
            IssueState::NotPlanned => self.on_closed_not_planned,
            IssueState::Open => self.on_reopened,
        }
    }
}

/// A project's connection to a tracker.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackerConnection {
    pub project_id: String,
    pub tracker: TrackerKind,
    pub settings: TrackerSettings,
    /// The token, or the app's private key (PEM): used as it is, so kept as it is; never shown.
    pub credential: Secret,
    /// Checks the signatures of the tracker's deliveries.
    pub webhook_secret: Secret,
    /// The last change Svc could not send, and when (shown on the Integrations tab).
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A report's issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueLink {
    pub report_id: String,
    pub project_id: String,
    pub tracker: TrackerKind,
    /// `owner/name`, as the connection wrote it.
    pub repository: String,
    pub number: i64,
    /// The issue's page.
    pub url: String,
    pub created_at: i64,
}

impl IssueLink {
    /// `owner/name#123`.
    pub fn reference(&self) -> String {
        format!("{}#{}", self.repository, self.number)
    }
}

/// Where an issue stands, as far as a report cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueState {
    Open,
    /// Closed as completed.
    Completed,
    /// Closed as not planned, or as a duplicate.
    NotPlanned,
}

impl IssueState {
    /// The state that stands for a report's status: fixed and verified are done, canceled is not
    /// planned, the rest are open.
    pub fn of(status: Status) -> Self {
        match status {
            Status::Fixed | Status::Verified => IssueState::Completed,
            Status::Canceled => IssueState::NotPlanned,
            Status::New | Status::Triaged | Status::InProgress => IssueState::Open,
        }
    }
}

/// Checks `owner/name`: GitHub's characters and lengths.
pub fn parse_repository(text: &str) -> Result<String, Invalid> {
    let text = text.trim();
    let problem = || Invalid::new("repository must be written owner/name (for example octocat/hello-world)");
    let (owner, name) = text.split_once('/').ok_or_else(problem)?;
    let owner_ok = (1..=39).contains(&owner.len())
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !owner.starts_with('-');
    let name_ok = (1..=100).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && name != "."
        && name != "..";
    if owner_ok && name_ok { Ok(text.to_string()) } else { Err(problem()) }
}

/// Checks an API base URL (`https://api.github.com`, or `https://<host>/api/v3` for GitHub
/// Enterprise Server): http(s), no query or fragment; the trailing slash dropped.
pub fn parse_api_url(text: &str) -> Result<String, Invalid> {
    let problem = |why: &str| Invalid::new(format!("apiUrl {why}"));
    let url = url::Url::parse(text.trim()).map_err(|_| problem("must be an absolute http(s) URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(problem("must be an absolute http(s) URL"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(problem("must not carry a query, a fragment or credentials"));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// Checks a personal access token: one line of printable characters.
pub fn parse_token(text: &str) -> Result<Secret, Invalid> {
    let text = text.trim();
    if text.is_empty() || text.len() > 255 || !text.chars().all(|c| c.is_ascii_graphic()) {
        return Err(Invalid::new("token must be a GitHub personal access token (one line, at most 255 characters)"));
    }
    Ok(Secret::new(text))
}

/// Checks a GitHub App's id (a number) or client id (`Iv1.…`).
pub fn parse_app_id(text: &str) -> Result<String, Invalid> {
    let text = text.trim();
    if text.is_empty() || text.len() > 64 || !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        return Err(Invalid::new("appId must be the GitHub App's id (a number) or its client id"));
    }
    Ok(text.to_string())
}

/// Checks an app's private key: an RSA key in PEM, as GitHub hands it out.
pub fn parse_private_key(text: &str) -> Result<Secret, Invalid> {
    let text = text.trim();
    if text.len() > 16 * 1024 || jsonwebtoken::EncodingKey::from_rsa_pem(text.as_bytes()).is_err() {
        return Err(Invalid::new(
            "privateKey must be the GitHub App's private key as GitHub gave it (a .pem file: -----BEGIN RSA PRIVATE KEY-----)",
        ));
    }
    Ok(Secret::new(text))
}

/// Checks the secret GitHub signs its deliveries with: 16 to 255 printable characters.
pub fn parse_webhook_secret(text: &str) -> Result<Secret, Invalid> {
    if !(16..=255).contains(&text.len()) || !text.chars().all(|c| c.is_ascii_graphic()) {
        return Err(Invalid::new("webhookSecret must be 16 to 255 printable characters without spaces"));
    }
    Ok(Secret::new(text))
}

/// A new webhook secret, for a connection whose owner did not choose one (shown once).
pub fn new_webhook_secret() -> Secret {
    use rand::RngExt;
    let bytes: [u8; 24] = rand::rng().random();
    Secret::new(hex::encode(bytes))
}

/// Checks channel rules: at most [`MAX_RULES`], one per channel, labels GitHub accepts.
pub fn check_rules(rules: &[ChannelRule]) -> Result<(), Invalid> {
    if rules.len() > MAX_RULES {
        return Err(Invalid::new(format!("rules: at most {MAX_RULES}")));
    }
    for (i, rule) in rules.iter().enumerate() {
        if rules[..i].iter().any(|other| other.channel_key == rule.channel_key) {
            return Err(Invalid::new(format!("rules: channel {} has two rules", rule.channel_key)));
        }
        if rule.labels.len() > MAX_RULE_LABELS {
            return Err(Invalid::new(format!("rules: at most {MAX_RULE_LABELS} labels per rule")));
        }
        for label in &rule.labels {
            let chars = label.trim().chars().count();
            if chars == 0 || chars > MAX_LABEL_CHARS || label.chars().any(char::is_control) {
                return Err(Invalid::new(format!("rules: a label is 1 to {MAX_LABEL_CHARS} characters on one line")));
            }
        }
    }
    Ok(())
}

/// The statuses an issue state may map to: a closed issue to any status, a reopened one to an
/// open status (new, triaged or in progress).
pub fn check_mapping(settings: &TrackerSettings) -> Result<(), Invalid> {
    if IssueState::of(settings.on_reopened) != IssueState::Open {
        return Err(Invalid::new("onReopened must be an open status: new, triaged or in-progress"));
    }
    Ok(())
}

/// The app's JWT (RS256, `iss` the app id, issued a minute ago for clock drift, valid nine
/// minutes: GitHub accepts ten at most), traded for installation tokens.
pub fn app_jwt(app_id: &str, private_key: &Secret, now_s: i64) -> Result<String, Invalid> {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_key.expose().as_bytes())
        .map_err(|_| Invalid::new("the GitHub App's private key is not an RSA key in PEM"))?;
    let claims = serde_json::json!({ "iat": now_s - 60, "exp": now_s + 9 * 60, "iss": app_id });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256), &claims, &key)
        .map_err(|error| Invalid::new(format!("signing the GitHub App's token: {error}")))
}

/// Checks GitHub's `X-Hub-Signature-256` (`sha256=` and the hex HMAC-SHA256 of the raw body) in
/// constant time.
pub fn signature_matches(secret: &Secret, body: &[u8], header: &str) -> bool {
    use hmac::{Hmac, KeyInit, Mac};
    let Some(given) = header.trim().strip_prefix("sha256=").and_then(|hex_text| hex::decode(hex_text).ok()) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.expose().as_bytes()) else { return false };
    mac.update(body);
    mac.verify_slice(&given).is_ok()
}

/// Where the issue's links point: the report in the dashboard and each file there (they need a
/// sign-in).
pub trait DashboardLinks {
    fn report(&self, report_id: &str) -> String;
    fn blob(&self, blob_id: &str) -> String;
}

/// The issue's title: the report's, on one line.
pub fn issue_title(report: &Report) -> String {
    let title = one_line(&report.title, MAX_TITLE_CHARS);
    if title.is_empty() { "Report from Svc".into() } else { title }
}

/// The issue's body, for the people who read it on GitHub: the reporter's words first, then the
/// page, browser and viewport, the console errors and failed requests, the pinpointed elements,
/// links to the files in the dashboard, and a link to the report. Everything the reporter sent is
/// in code spans or fenced blocks (no mention, issue reference or HTML of theirs comes alive); the
/// reporter's email only when `include_email`.
pub fn issue_body(report: &Report, links: &dyn DashboardLinks, include_email: bool) -> String {
    let mut body = String::new();
    let texts: Vec<&str> = report
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::Text(text) if !text.text.trim().is_empty() => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    if texts.is_empty() {
        body.push_str("_The reporter wrote nothing; see the evidence below._\n\n");
    } else {
        body.push_str("**The reporter wrote:**\n\n");
        for text in texts {
            body.push_str(&fenced(text, "text"));
            body.push('\n');
        }
    }

    let context = &report.context;
    let mut facts: Vec<(&str, String)> = Vec::new();
    if let Some(url) = context.url.as_deref().filter(|u| !u.is_empty()) {
        facts.push(("Page", code_span(url, LONG_LINE_MAX_CHARS)));
    }
    if let Some(agent) = context.user_agent.as_deref().filter(|u| !u.is_empty()) {
        facts.push(("Browser", code_span(&crate::context::browser_and_os(agent), ONE_LINE_MAX_CHARS)));
    }
    if let Some(viewport) = &context.viewport
        && let (Some(w), Some(h)) = (&viewport.width, &viewport.height)
    {
        let (w, h) = (crate::block::number(w), crate::block::number(h));
        facts.push(("Viewport", format!("{w:.0} × {h:.0}")));
    }
    if let Some(identity) = &report.identity {
        let name = identity.name.as_deref().filter(|n| !n.is_empty());
        let email = identity.email.as_deref().filter(|e| !e.is_empty() && include_email);
        let shown = match (name, email) {
            (Some(name), Some(email)) => Some(format!("{} ({})", code_span(name, 100), code_span(email, 200))),
            (Some(name), None) => Some(code_span(name, 100)),
            (None, Some(email)) => Some(code_span(email, 200)),
            (None, None) => None,
        };
        if let Some(shown) = shown {
            let verified = if identity.verified { ", signed in" } else { "" };
            facts.push(("Reporter", format!("{shown}{verified}")));
        }
    }
    if !facts.is_empty() {
        body.push_str("| | |\n|---|---|\n");
        for (label, value) in facts {
            // A table cell ends at a `|`: code spans keep theirs as `\|`.
            let _ = writeln!(body, "| {label} | {} |", value.replace('|', "\\|"));
        }
        body.push('\n');
    }

    let errors = context.console_errors();
    if !errors.is_empty() {
        body.push_str("**Console errors**\n\n");
        let joined = errors.iter().take(20).map(String::as_str).collect::<Vec<_>>().join("\n");
        body.push_str(&fenced(&joined, "text"));
        body.push('\n');
    }
    let failed = context.network();
    if !failed.is_empty() {
        body.push_str("**Failed requests**\n\n");
        for entry in failed.iter().take(20) {
            let status = if entry.status == 0 { "no answer".to_string() } else { entry.status.to_string() };
            let _ = writeln!(
                body,
                "- {} {} → {status}",
                code_span(&entry.method, 16),
                code_span(&entry.url, LONG_LINE_MAX_CHARS)
            );
        }
        body.push('\n');
    }

    let mut evidence = Vec::new();
    for block in &report.blocks {
        match block {
            Block::Pinpoint(pin) => {
                let mut line = format!("- Pinned element: {}", code_span(&pin.selector, LONG_LINE_MAX_CHARS));
                if let Some(text) = pin.target.text.as_deref().filter(|t| !t.trim().is_empty()) {
                    let _ = write!(line, " showing {}", code_span(text, 120));
                }
                if let Some(comment) = pin.comment.as_deref().filter(|c| !c.trim().is_empty()) {
                    let _ = write!(line, ", comment {}", code_span(comment, ONE_LINE_MAX_CHARS));
                }
                evidence.push(line);
            }
            Block::Quote(quote) => evidence.push(format!(
                "- Quoted {} on {}, comment {}",
                code_span(&quote.text, ONE_LINE_MAX_CHARS),
                code_span(&quote.selector, LONG_LINE_MAX_CHARS),
                code_span(&quote.comment, ONE_LINE_MAX_CHARS)
            )),
            Block::Selection(selection) => {
                evidence.push(format!("- Selected text {}", code_span(&selection.text, ONE_LINE_MAX_CHARS)))
            }
            Block::Screenshot(shot) => evidence.push(format!("- [Screenshot]({})", links.blob(&shot.blob_id))),
            Block::Audio(audio) => evidence.push(format!("- [Voice note]({})", links.blob(&audio.blob_id))),
            Block::File(file) => evidence.push(format!(
                "- [File {}]({})",
                one_line(&file.name, 100).replace(['[', ']', '(', ')', '`', '<', '>', '@', '#'], "_"),
                links.blob(&file.blob_id)
            )),
            Block::Text(_) => {}
        }
    }
    if !evidence.is_empty() {
        body.push_str("**Evidence** (files open in Svc's dashboard, after signing in)\n\n");
        for line in evidence {
            body.push_str(&line);
            body.push('\n');
        }
        body.push('\n');
    }
    let _ = writeln!(body, "---\nReport `{}` in Svc: {}", crate::ids::short_id(&report.id), links.report(&report.id));
    if body.chars().count() > MAX_BODY_CHARS {
        let cut: String = body.chars().take(MAX_BODY_CHARS).collect();
        body = format!("{cut}\n\n_(cut: the whole report is in Svc: {})_\n", links.report(&report.id));
    }
    body
}

/// A comment of Svc's for the issue: who wrote it, their words in a block, and the hidden mark
/// that keeps it from coming back.
pub fn issue_comment(author_label: &str, text: &str, comment_id: &str) -> String {
    format!(
        "**{}** commented in Svc:\n\n{}\n{COMMENT_MARK}{} -->\n",
        one_line(author_label, 100).replace(['*', '_', '`', '<', '>', '@', '#', '[', ']'], ""),
        fenced(text, "text"),
        comment_id.chars().filter(char::is_ascii_alphanumeric).collect::<String>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::TextBlock;
    use crate::context::Context;
    use crate::model::{Author, AuthorKind};

    struct Links;
    impl DashboardLinks for Links {
        fn report(&self, id: &str) -> String {
            format!("https://svc.example/dashboard/reports/{id}")
        }
        fn blob(&self, id: &str) -> String {
            format!("https://svc.example/dashboard/blobs/{id}")
        }
    }

    fn report(text: &str) -> Report {
        Report {
            id: "01JABCDEFGHJKMNPQRSTVWXYZ0".into(),
            project_id: "p".into(),
            channel_key: "bug".into(),
            status: Status::New,
            title: "Checkout fails".into(),
            blocks: vec![Block::Text(TextBlock { text: text.into(), other: Default::default() })],
            context: Context {
                url: Some("https://shop.example/checkout".into()),
                console_errors: Some(vec!["TypeError: x is undefined".into()]),
                ..Default::default()
            },
            identity: serde_json::from_value(serde_json::json!({
                "userId": "u1", "email": "ada@example.com", "name": "Ada", "verified": true
            }))
            .ok(),
            identity_error: None,
            author: Author { kind: AuthorKind::Reporter, id: None, label: None },
            artifact_id: None,
            url: None,
            created_at: 0,
            updated_at: 0,
            assignee: None,
            labels: vec![],
        }
    }

    #[test]
    fn the_body_puts_the_reporters_words_first_and_keeps_them_inert() {
        let body = issue_body(&report("Pay button does nothing @octocat see #12 <img src=x>"), &Links, false);
        let words = body.find("Pay button").unwrap();
        assert!(words < body.find("Page").unwrap());
        // Inside a fenced block: the mention, the reference and the tag stay text.
        let fence = body[..words].rfind("```").unwrap();
        assert!(body[..fence].contains("The reporter wrote"));
        assert!(body.contains("TypeError: x is undefined"));
        assert!(body.contains("https://svc.example/dashboard/reports/01JABCDEFGHJKMNPQRSTVWXYZ0"));
        assert!(body.contains("`Ada`, signed in"));
        assert!(!body.contains("ada@example.com"), "no email unless the project says so");
        assert!(issue_body(&report("x"), &Links, true).contains("ada@example.com"));
    }

    #[test]
    fn repositories_api_urls_and_secrets_are_checked() {
        assert_eq!(parse_repository(" octocat/Hello-World ").unwrap(), "octocat/Hello-World");
        for bad in ["octocat", "octo cat/x", "/x", "o/", "o/..", "-o/x"] {
            assert!(parse_repository(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_api_url("https://ghe.example/api/v3/").unwrap(), "https://ghe.example/api/v3");
        assert!(parse_api_url("ftp://x").is_err());
        assert!(parse_api_url("https://x/?a=1").is_err());
        assert!(parse_webhook_secret("short").is_err());
        assert!(parse_webhook_secret("a-long-enough-secret").is_ok());
        assert!(parse_private_key("not a key").is_err());
        assert!(parse_token("ghp_abc def").is_err());
    }

    #[test]
    fn signatures_are_checked_against_the_raw_body() {
        use hmac::{Hmac, KeyInit, Mac};
        let secret = Secret::new("It's a Secret to Everybody");
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.expose().as_bytes()).unwrap();
        mac.update(b"Hello, World!");
        let header = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
        // GitHub's documented example.
        assert_eq!(header, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
        assert!(signature_matches(&secret, b"Hello, World!", &header));
        assert!(!signature_matches(&secret, b"Hello, World?", &header));
        assert!(!signature_matches(&Secret::new("other"), b"Hello, World!", &header));
        assert!(!signature_matches(&secret, b"Hello, World!", "sha1=abc"));
    }

    #[test]
    fn statuses_map_to_issue_states_and_back() {
        let settings = TrackerSettings::new("o/r".into(), AuthKind::Token);
        assert_eq!(settings.status_for(IssueState::Completed), Status::Fixed);
        assert_eq!(settings.status_for(IssueState::NotPlanned), Status::Canceled);
        assert_eq!(settings.status_for(IssueState::Open), Status::Triaged);
        assert_eq!(IssueState::of(Status::Verified), IssueState::Completed);
        assert_eq!(IssueState::of(Status::InProgress), IssueState::Open);
        let mut wrong = settings.clone();
        wrong.on_reopened = Status::Fixed;
        assert!(check_mapping(&wrong).is_err());
    }

    #[test]
    fn comments_carry_the_mark_that_keeps_them_from_coming_back() {
        let comment = issue_comment("Ada @team", "Fixed in 1.2 ``` @octocat", "01J-abc");
        assert!(comment.contains(COMMENT_MARK));
        assert!(comment.starts_with("**Ada team** commented in Svc"));
        assert!(comment.ends_with("01Jabc -->\n"));
    }
}
