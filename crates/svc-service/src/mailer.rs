//! Sending mail over SMTP (the `lettre` crate, TLS through rustls): the server's mail settings
//! (`SVC_SMTP_URL`, `SVC_MAIL_FROM`), how an outbox message becomes an email, and one delivery.
//! What to send and when is `service::mail`'s; see `docs/mail.md`.

use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, Message};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use std::time::Duration;
use svc_core::mail::OutboxMail;
use svc_core::secret::Secret;

/// How long one SMTP conversation may take before it counts as failed.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// `smtps://`: TLS from the first byte (port 465).
    Implicit,
    /// `smtp://` (or `?tls=required`): the server must upgrade with STARTTLS, else nothing is sent
    /// (port 587).
    StartTls,
    /// `smtp://...?tls=opportunistic`: STARTTLS when the server offers it, plain text otherwise.
    Opportunistic,
    /// `smtp://...?tls=none`: plain text only, for a relay on the same machine or a test server.
    None,
}

impl SmtpTls {
    fn describe(self) -> &'static str {
        match self {
            SmtpTls::Implicit => "TLS",
            SmtpTls::StartTls => "STARTTLS required",
            SmtpTls::Opportunistic => "STARTTLS when offered",
            SmtpTls::None => "no TLS",
        }
    }
}

/// The SMTP server, from `SVC_SMTP_URL`. `Debug` never shows the password.
#[derive(Debug, Clone, PartialEq)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub tls: SmtpTls,
    /// User name and password (percent-decoded from the URL).
    pub credentials: Option<(String, Secret)>,
    /// The name given in `EHLO` (the URL's path), else this machine's host name.
    pub hello_name: Option<String>,
}

impl SmtpSettings {
    /// Reads an SMTP URL: `smtps://user:pass@host[:465]`, `smtp://user:pass@host[:587]` (STARTTLS
    /// required), `smtp://host:25?tls=opportunistic`, `smtp://127.0.0.1:2525?tls=none` (plain text,
    /// only when asked). lettre's own URLs read the same except that there a bare `smtp://` means
    /// plain text; here it means STARTTLS, and plain text must be asked for. A path names the
    /// `EHLO` host (`smtp://host/mail.example.com`). The error never repeats the password.
    pub fn parse(text: &str) -> Result<Self, String> {
        let url = url::Url::parse(text.trim()).map_err(|error| format!("not a URL ({error})"))?;
        let tls_param = url.query_pairs().find(|(name, _)| name == "tls").map(|(_, value)| value.into_owned());
        if let Some((name, _)) = url.query_pairs().find(|(name, _)| name != "tls") {
            return Err(format!("unknown parameter {name:?} (only tls=required, opportunistic or none)"));
        }
        let (tls, default_port) = match (url.scheme(), tls_param.as_deref()) {
            ("smtps", None) => (SmtpTls::Implicit, 465),
            ("smtps", Some(other)) => {
                return Err(format!("smtps:// is always TLS; drop tls={other} (or use smtp:// with tls=)"));
            }
            ("smtp", None | Some("required")) => (SmtpTls::StartTls, 587),
            ("smtp", Some("opportunistic")) => (SmtpTls::Opportunistic, 587),
            ("smtp", Some("none")) => (SmtpTls::None, 587),
            ("smtp", Some(other)) => return Err(format!("tls must be required, opportunistic or none, not {other:?}")),
            (other, _) => return Err(format!("the scheme must be smtp or smtps, not {other:?}")),
        };
        let host = url.host_str().filter(|host| !host.is_empty()).ok_or("the URL names no host")?;
        // `[::1]` as lettre wants it: without brackets.
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let decode = |text: &str| {
            percent_decode(text)
                .ok_or_else(|| "the user name or password is not valid percent-encoded UTF-8".to_string())
        };
        let credentials = match url.password() {
            Some(password) => Some((decode(url.username())?, Secret::new(decode(password)?))),
            None if !url.username().is_empty() => {
                return Err("the URL has a user name but no password (smtp://user:password@host)".into());
            }
            None => None,
        };
        let path = url.path().trim_matches('/');
        let hello_name = (!path.is_empty()).then(|| path.to_string());
        Ok(SmtpSettings { host, port: url.port().unwrap_or(default_port), tls, credentials, hello_name })
    }

    /// The server for logs and pages: host, port, TLS and user, never the password.
    pub fn describe(&self) -> String {
        let user = match &self.credentials {
            Some((user, _)) => format!(", user {user}"),
            None => String::new(),
        };
        format!("{}:{} ({}{user})", self.host, self.port, self.tls.describe())
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The server's mail settings. Without `smtp`, messages stay in the outbox, where the owners of
/// their organization read them in the dashboard.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MailConfig {
    pub smtp: Option<SmtpSettings>,
    /// `SVC_MAIL_FROM` (`Name <address>` or an address); `None`: `Svc <svc@host of the public
    /// URL>`.
    pub from: Option<String>,
}

impl MailConfig {
    /// The settings from `SVC_SMTP_URL` and `SVC_MAIL_FROM` (empty means unset), checked.
    pub fn parse(smtp_url: Option<&str>, from: Option<&str>, public_url: &str) -> Result<Self, String> {
        let smtp = match smtp_url.map(str::trim).filter(|url| !url.is_empty()) {
            Some(url) => Some(SmtpSettings::parse(url).map_err(|error| format!("SVC_SMTP_URL: {error}"))?),
            None => None,
        };
        let config = MailConfig { smtp, from: from.map(str::trim).filter(|from| !from.is_empty()).map(String::from) };
        config.sender(public_url).map_err(|error| format!("SVC_MAIL_FROM: {error}"))?;
        Ok(config)
    }

    /// Whether mail leaves the server (else it waits in the outbox).
    pub fn delivers(&self) -> bool {
        self.smtp.is_some()
    }

    /// The `From` of every message.
    pub fn sender(&self, public_url: &str) -> Result<Mailbox, String> {
        match &self.from {
            Some(from) => from.parse::<Mailbox>().map_err(|error| format!("{from:?} is not an address ({error})")),
            None => Ok(Mailbox::new(Some("Svc".into()), default_address(public_url))),
        }
    }
}

/// `svc@<host of the public URL>`; `svc@localhost` when that host is an address or has no dot.
fn default_address(public_url: &str) -> Address {
    let host = url::Url::parse(public_url).ok().and_then(|url| url.domain().map(str::to_string));
    let domain = host.filter(|host| host.contains('.')).unwrap_or_else(|| "localhost".into());
    Address::new("svc", &domain).unwrap_or_else(|_| Address::new("svc", "localhost").expect("a valid address"))
}

/// Why a delivery failed: the server's answer or the connection's error (never a secret).
#[derive(Debug, Clone, PartialEq)]
pub struct SendError {
    pub message: String,
    /// Trying again cannot help (the address is refused for good, the message cannot be made).
    pub permanent: bool,
}

/// Delivers outbox messages to the SMTP server; built once from [`MailConfig`] (its connections
/// are pooled).
pub struct Mailer {
    transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
    /// What an error message must never show (the SMTP password).
    hidden: Option<Secret>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("delivers", &self.transport.is_some()).field("from", &self.from).finish()
    }
}

impl Mailer {
    pub fn new(config: &MailConfig, public_url: &str) -> Result<Self, String> {
        let from = config.sender(public_url)?;
        let Some(smtp) = &config.smtp else { return Ok(Mailer { transport: None, from, hidden: None }) };
        let tls_parameters =
            || TlsParameters::new(smtp.host.clone()).map_err(|error| format!("TLS for {}: {error}", smtp.host));
        let tls = match smtp.tls {
            SmtpTls::Implicit => Tls::Wrapper(tls_parameters()?),
            SmtpTls::StartTls => Tls::Required(tls_parameters()?),
            SmtpTls::Opportunistic => Tls::Opportunistic(tls_parameters()?),
            SmtpTls::None => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(smtp.host.clone())
            .port(smtp.port)
            .tls(tls)
            .timeout(Some(SMTP_TIMEOUT));
        if let Some(name) = &smtp.hello_name {
            builder = builder.hello_name(ClientId::Domain(name.clone()));
        }
        if let Some((user, password)) = &smtp.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.expose().to_string()));
        }
        Ok(Mailer {
            transport: Some(builder.build()),
            from,
            hidden: smtp.credentials.as_ref().map(|(_, password)| password.clone()),
        })
    }

    /// Whether this mailer sends (an SMTP server is set).
    pub fn delivers(&self) -> bool {
        self.transport.is_some()
    }

    /// The message as it goes out: plain text, `From` the configured sender, a `Message-ID` made
    /// from the outbox id (the same on every attempt, so a receiver can tell a repeat), and for
    /// notifications `Auto-Submitted` and one-click `List-Unsubscribe` (RFC 8058).
    pub fn message(&self, mail: &OutboxMail) -> Result<Message, SendError> {
        let permanent = |message: String| SendError { message, permanent: true };
        let to: Mailbox = mail
            .recipient
            .parse()
            .map_err(|error| permanent(format!("the recipient {:?} is not an address ({error})", mail.recipient)))?;
        let domain = self.from.email.domain().to_string();
        let mut message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .message_id(Some(format!("<{}.svc@{domain}>", mail.id)))
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.clone())
            .map_err(|error| permanent(format!("the message cannot be made: {error}")))?;
        let headers = message.headers_mut();
        let raw = |name: &'static str, value: String| HeaderValue::new(HeaderName::new_from_ascii_str(name), value);
        headers.insert_raw(raw("Auto-Submitted", "auto-generated".into()));
        if let Some(url) = &mail.unsubscribe_url {
            headers.insert_raw(raw("List-Unsubscribe", format!("<{url}>")));
            headers.insert_raw(raw("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".into()));
        }
        Ok(message)
    }

    /// Sends one message. Without an SMTP server this is an error (callers check [`Mailer::delivers`]).
    pub async fn send(&self, mail: &OutboxMail) -> Result<(), SendError> {
        let Some(transport) = &self.transport else {
            return Err(SendError { message: "no SMTP server is set (SVC_SMTP_URL)".into(), permanent: false });
        };
        let message = self.message(mail)?;
        transport.send(message).await.map(|_| ()).map_err(|error| SendError {
            message: self.scrub(&error_text(&error)),
            permanent: refuses_recipient(&error),
        })
    }

    /// An error text without the password, at most 500 characters.
    fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        if let Some(secret) = &self.hidden
            && !secret.expose().is_empty()
        {
            text = text.replace(secret.expose(), "***");
        }
        if text.chars().count() > 500 {
            text = text.chars().take(499).collect::<String>() + "…";
        }
        text
    }
}

/// Whether the server refused the recipient for good (550, 551, 553): trying again cannot help.
/// Other permanent answers (a wrong password: 535) are retried, so mail queued while the settings
/// were wrong goes out once they are fixed.
fn refuses_recipient(error: &lettre::transport::smtp::Error) -> bool {
    error.is_permanent()
        && error.status().is_some_and(|code| matches!(code.to_string().as_str(), "550" | "551" | "553"))
}

/// The error and its causes on one line ("Connection error: Connection refused (os error 111)").
fn error_text(error: &lettre::transport::smtp::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_urls() {
        let s = SmtpSettings::parse("smtp://ann%40example.com:p%3Ass@mail.example.com").unwrap();
        assert_eq!((s.host.as_str(), s.port, s.tls), ("mail.example.com", 587, SmtpTls::StartTls));
        let (user, password) = s.credentials.clone().unwrap();
        assert_eq!((user.as_str(), password.expose()), ("ann@example.com", "p:ss"));
        assert!(!format!("{s:?}").contains("p:ss"), "Debug hides the password");
        assert!(!s.describe().contains("p:ss"));

        let s = SmtpSettings::parse("smtps://u:p@mail.example.com").unwrap();
        assert_eq!((s.port, s.tls), (465, SmtpTls::Implicit));
        let s = SmtpSettings::parse("smtp://127.0.0.1:2525?tls=none").unwrap();
        assert_eq!((s.host.as_str(), s.port, s.tls, s.credentials), ("127.0.0.1", 2525, SmtpTls::None, None));
        let s = SmtpSettings::parse("smtp://relay:25/mail.example.com?tls=opportunistic").unwrap();
        assert_eq!((s.tls, s.hello_name.as_deref()), (SmtpTls::Opportunistic, Some("mail.example.com")));
        assert_eq!(SmtpSettings::parse("smtp://[::1]:25?tls=required").unwrap().host, "::1");

        for bad in [
            "mail.example.com",
            "http://mail.example.com",
            "smtp://mail.example.com?tls=maybe",
            "smtps://mail.example.com?tls=none",
            "smtp://user@mail.example.com",
            "smtp://mail.example.com?port=25",
        ] {
            assert!(SmtpSettings::parse(bad).is_err(), "{bad} is refused");
        }
        let error = SmtpSettings::parse("ftp://u:hunter2@host").unwrap_err();
        assert!(!error.contains("hunter2"));
    }

    #[test]
    fn senders() {
        let config = MailConfig::default();
        assert_eq!(
            config.sender("https://feedback.example.com").unwrap().to_string(),
            "Svc <svc@feedback.example.com>"
        );
        assert_eq!(config.sender("http://127.0.0.1:8080").unwrap().to_string(), "Svc <svc@localhost>");
        let config = MailConfig::parse(None, Some("Feedback <fb@example.com>"), "http://x").unwrap();
        assert_eq!(config.sender("http://x").unwrap().email.to_string(), "fb@example.com");
        assert!(MailConfig::parse(None, Some("not an address"), "http://x").is_err());
        assert!(MailConfig::parse(Some("smtp://u:secret@"), None, "http://x").is_err());
        assert!(!MailConfig::parse(Some(""), None, "http://x").unwrap().delivers());
    }

    #[test]
    fn messages_carry_unsubscribe_headers_and_a_stable_id() {
        let mailer = Mailer::new(&MailConfig::default(), "https://svc.example.com").unwrap();
        let mail = OutboxMail {
            id: "0123456789abcdef01234567".into(),
            org_id: "o".into(),
            project_id: None,
            recipient: "ann@example.com".into(),
            subject: "Ünïcode subject".into(),
            body: "Hello\n".into(),
            kind: svc_core::mail::MailKind::NewReport,
            dedupe_key: None,
            unsubscribe_url: Some("https://svc.example.com/unsubscribe?token=abc".into()),
            created_at: 0,
            expires_at: None,
            next_attempt_at: 0,
            attempts: 0,
            last_error: None,
            sent_at: None,
            given_up_at: None,
        };
        let text = String::from_utf8(mailer.message(&mail).unwrap().formatted()).unwrap();
        assert!(text.contains("List-Unsubscribe: <https://svc.example.com/unsubscribe?token=abc>"), "{text}");
        assert!(text.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));
        assert!(text.contains("Message-ID: <0123456789abcdef01234567.svc@svc.example.com>"));
        assert!(text.contains("From: Svc <svc@svc.example.com>"));
        let bad = OutboxMail { recipient: "not an address".into(), ..mail };
        assert!(mailer.message(&bad).unwrap_err().permanent);
    }
}
