//! Webhooks: endpoints a project's events are delivered to (Standard Webhooks, or a Slack or
//! Discord message), the deliveries the event feed makes for them and each attempt at one.

use crate::Invalid;
use crate::event::EVENT_TYPES;
use crate::secret::Secret;

/// Longest endpoint URL accepted.
pub const MAX_URL_LEN: usize = 2000;
/// Longest description accepted.
pub const MAX_DESCRIPTION_LEN: usize = 200;
/// Endpoints per project.
pub const MAX_WEBHOOKS_PER_PROJECT: usize = 20;
/// The event type of "Send test event" (never written to the feed).
pub const TEST_EVENT: &str = "webhook.test";
/// How long a rotated-out secret keeps signing beside the new one.
pub const PREVIOUS_SECRET_MS: i64 = 24 * 3600 * 1000;
/// How long a delivery is retried, and how long an endpoint may fail before it is disabled.
pub const RETRY_WINDOW_MS: i64 = 24 * 3600 * 1000;

/// What a delivery's body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookFormat {
    /// `{type, timestamp, data}`, signed the Standard Webhooks way.
    Standard,
    /// A Slack incoming-webhook message (Block Kit), not signed: the URL is the secret.
    Slack,
    /// A Discord webhook message with an embed, not signed.
    Discord,
}

impl WebhookFormat {
    pub const ALL: [WebhookFormat; 3] = [WebhookFormat::Standard, WebhookFormat::Slack, WebhookFormat::Discord];

    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Standard => "standard",
            WebhookFormat::Slack => "slack",
            WebhookFormat::Discord => "discord",
        }
    }

    pub fn parse(text: &str) -> Result<Self, Invalid> {
        Self::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or_else(|| Invalid::new(format!("format must be one of standard, slack, discord, not {text:?}")))
    }

    /// Chat formats post a message for people; they are not signed.
    pub fn is_chat(self) -> bool {
        self != WebhookFormat::Standard
    }

    /// The events a chat message is sent for when the endpoint names none: what a person wants
    /// to hear about in a channel (a new report, the reporter's answer, the reporter's comment).
    pub fn default_events(self) -> Vec<String> {
        match self {
            WebhookFormat::Standard => Vec::new(),
            WebhookFormat::Slack | WebhookFormat::Discord => {
                ["report.created", "report.confirmed", "comment.published"].map(String::from).to_vec()
            }
        }
    }
}

/// A project's endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub id: String,
    pub project_id: String,
    pub url: String,
    /// Event type names; a chat endpoint with `events_default` sends its format's defaults.
    pub events: Vec<String>,
    /// The events were not chosen (a chat format's defaults: reporters' comments only).
    pub events_default: bool,
    pub description: Option<String>,
    pub format: WebhookFormat,
    pub enabled: bool,
    /// Why Svc disabled it (it failed for a day); `None` when a person did, or it is enabled.
    pub disabled_reason: Option<String>,
    /// The signing secret (`whsec_` and base64 of its bytes). Stored as it is: Svc must sign with
    /// it, so a hash would not do.
    pub secret: Secret,
    /// The secret before the last rotation, signing beside the new one until `previous_until`.
    pub previous_secret: Option<Secret>,
    pub previous_until: Option<i64>,
    /// When the current run of failed attempts began (`None` after a success).
    pub failing_since: Option<i64>,
    /// After a failed attempt, nothing more is sent to the endpoint until then (the failed
    /// delivery's retry): one failing endpoint costs one attempt per retry, not one per delivery.
    pub paused_until: Option<i64>,
    /// When it was last turned on (made, or enabled again): events from before are not sent to it,
    /// however far behind the feed's consumer is.
    pub enabled_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Webhook {
    /// Whether an event of this type, by this author kind, is sent to the endpoint.
    pub fn wants(&self, event_type: &str, by_reporter: bool) -> bool {
        if !self.events.iter().any(|wanted| wanted == event_type) {
            return false;
        }
        // A chat channel on the defaults hears the reporter's words, not the team's own replies.
        !(self.events_default && event_type == "comment.published" && !by_reporter)
    }

    /// The secrets that sign a delivery at `now`: the current one, and the previous one while it
    /// is still valid.
    pub fn signing_secrets(&self, now: i64) -> Vec<&Secret> {
        let mut secrets = vec![&self.secret];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_until)
            && now < until
        {
            secrets.push(previous);
        }
        secrets
    }
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes (what the Standard Webhooks
/// libraries take).
pub fn new_secret() -> Secret {
    use base64::Engine;
    use rand::RngExt;
    let bytes: [u8; 32] = rand::rng().random();
    Secret::new(format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// The key bytes of a `whsec_` secret.
pub fn secret_key(secret: &Secret) -> Vec<u8> {
    use base64::Engine;
    let text = secret.expose();
    let encoded = text.strip_prefix("whsec_").unwrap_or(text);
    base64::engine::general_purpose::STANDARD.decode(encoded).unwrap_or_else(|_| text.as_bytes().to_vec())
}

/// Checks an endpoint URL: `http` or `https`, a host, no credentials, not too long.
pub fn parse_url(text: &str) -> Result<String, Invalid> {
    let text = text.trim();
    if text.len() > MAX_URL_LEN {
        return Err(Invalid::new(format!("url is longer than {MAX_URL_LEN} characters")));
    }
    let url = url::Url::parse(text).map_err(|error| Invalid::new(format!("url is not a URL: {error}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Invalid::new("url must start with https:// (or http://)"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Invalid::new("url must name a host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Invalid::new("url must not carry a user name or password"));
    }
    Ok(url.to_string())
}

/// Checks the events an endpoint subscribes to: known types, each once. An empty list is refused
/// for the standard format; a chat format then takes its defaults (`(events, events_default)`).
pub fn parse_events(events: Option<Vec<String>>, format: WebhookFormat) -> Result<(Vec<String>, bool), Invalid> {
    let events = events.unwrap_or_default();
    if events.is_empty() {
        return match format {
            WebhookFormat::Standard => Err(Invalid::new(format!(
                "events must name at least one of {}",
                EVENT_TYPES.iter().filter(|t| **t != "report.deleted").copied().collect::<Vec<_>>().join(", ")
            ))),
            chat => Ok((chat.default_events(), true)),
        };
    }
    let mut chosen: Vec<String> = Vec::new();
    for event in events {
        if !EVENT_TYPES.contains(&event.as_str()) {
            return Err(Invalid::new(format!("events: unknown event type {event:?}")));
        }
        if !chosen.contains(&event) {
            chosen.push(event);
        }
    }
    Ok((chosen, false))
}

/// Checks a description: trimmed, at most [`MAX_DESCRIPTION_LEN`] characters; empty is none.
pub fn parse_description(text: Option<String>) -> Result<Option<String>, Invalid> {
    let Some(text) = text.map(|text| text.trim().to_string()).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_DESCRIPTION_LEN {
        return Err(Invalid::new(format!("description is longer than {MAX_DESCRIPTION_LEN} characters")));
    }
    Ok(Some(text))
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Waiting for its first attempt or its next retry.
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// Retries ran out (24 hours), or the endpoint was disabled or deleted.
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// One event for one endpoint, with its body fixed when it was made (every attempt sends the same
/// bytes under the same `webhook-id`).
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookDelivery {
    pub id: String,
    pub webhook_id: String,
    pub project_id: String,
    /// The feed's event id (`None` for a test event).
    pub event_id: Option<i64>,
    /// The `webhook-id` header: the same on every attempt.
    pub message_id: String,
    pub event_type: String,
    /// The body (read only where it is sent: empty in the delivery log).
    pub payload: String,
    /// The delivery whose stored body this one sends too (`None`: its own). Endpoints of one
    /// format get the same bytes for an event, and a body is most of what a delivery writes:
    /// three endpoints wrote it three times.
    pub shares_payload_of: Option<String>,
    pub state: DeliveryState,
    pub attempts: i64,
    /// When it may be tried next; while a sender holds it, the end of that sender's lease.
    pub next_attempt_at: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub last_attempt_at: Option<i64>,
    pub last_duration_ms: Option<i64>,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
}

impl WebhookDelivery {
    /// A delivery not yet attempted, made at `now` and held by its maker until `held_until`.
    pub fn new_pending(
        id: String,
        endpoint: &Webhook,
        event: Option<(i64, &str)>,
        message_id: String,
        payload: String,
        now: i64,
        held_until: i64,
    ) -> Self {
        WebhookDelivery {
            id,
            webhook_id: endpoint.id.clone(),
            project_id: endpoint.project_id.clone(),
            event_id: event.map(|(id, _)| id),
            message_id,
            event_type: event.map_or(TEST_EVENT, |(_, kind)| kind).to_string(),
            payload,
            shares_payload_of: None,
            state: DeliveryState::Pending,
            attempts: 0,
            next_attempt_at: held_until,
            last_status: None,
            last_error: None,
            last_attempt_at: None,
            last_duration_ms: None,
            created_at: now,
            delivered_at: None,
        }
    }

    /// The delivery's attempts given the ones stored: a delivery delivered at its first attempt
    /// keeps that attempt in its own row (the last-attempt fields), not as a stored attempt.
    pub fn attempts_with(&self, mut stored: Vec<WebhookAttempt>) -> Vec<WebhookAttempt> {
        if stored.is_empty()
            && let Some(at) = self.last_attempt_at
        {
            stored.push(WebhookAttempt {
                delivery_id: self.id.clone(),
                webhook_id: self.webhook_id.clone(),
                at,
                status: self.last_status,
                error: self.last_error.clone(),
                duration_ms: self.last_duration_ms.unwrap_or_default(),
            });
        }
        stored
    }
}

/// One attempt at a delivery, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookAttempt {
    pub delivery_id: String,
    pub webhook_id: String,
    pub at: i64,
    /// The endpoint's HTTP status (`None`: no answer: refused, timed out, unreachable).
    pub status: Option<i64>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// The wait before retry number `retry` (1 = after the first failed attempt): 5 s, 5 min, 30 min,
/// 2 h, 5 h, 10 h, then 14 h; without jitter.
pub fn retry_delay_ms(retry: i64) -> i64 {
    const SECOND: i64 = 1000;
    const MINUTE: i64 = 60 * SECOND;
    const HOUR: i64 = 60 * MINUTE;
    match retry {
        ..=1 => 5 * SECOND,
        2 => 5 * MINUTE,
        3 => 30 * MINUTE,
        4 => 2 * HOUR,
        5 => 5 * HOUR,
        6 => 10 * HOUR,
        _ => 14 * HOUR,
    }
}

/// When a delivery made at `created_at` that failed its `attempts`-th attempt at `now` is tried
/// again, with `jitter` (0.0..1.0) spreading retries by up to a tenth of the wait; `None` once the
/// retry window has passed. The last retry falls at the window's end rather than beyond it.
pub fn next_retry(created_at: i64, attempts: i64, now: i64, jitter: f64) -> Option<i64> {
    let deadline = created_at + RETRY_WINDOW_MS;
    if now >= deadline {
        return None;
    }
    let delay = retry_delay_ms(attempts);
    let spread = (delay as f64 * 0.1 * jitter.clamp(0.0, 1.0)) as i64;
    Some((now + delay + spread).min(deadline))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert_eq!(parse_url(" https://hooks.example.com/svc ").unwrap(), "https://hooks.example.com/svc");
        assert!(parse_url("ftp://example.com/").is_err());
        assert!(parse_url("https://user:pw@example.com/").is_err());
        assert!(parse_url("not a url").is_err());
        assert!(parse_url(&format!("https://example.com/{}", "a".repeat(MAX_URL_LEN))).is_err());
    }

    #[test]
    fn events_are_known_types_and_chat_formats_have_defaults() {
        assert!(parse_events(None, WebhookFormat::Standard).is_err());
        assert!(parse_events(Some(vec!["report.exploded".into()]), WebhookFormat::Standard).is_err());
        let (events, default) =
            parse_events(Some(vec!["report.created".into(), "report.created".into()]), WebhookFormat::Standard)
                .unwrap();
        assert_eq!((events, default), (vec!["report.created".to_string()], false));
        let (events, default) = parse_events(Some(vec![]), WebhookFormat::Slack).unwrap();
        assert!(default);
        assert_eq!(events, ["report.created", "report.confirmed", "comment.published"]);
    }

    #[test]
    fn chat_defaults_hear_only_the_reporters_comments() {
        let (events, events_default) = parse_events(None, WebhookFormat::Discord).unwrap();
        let mut hook = Webhook {
            id: "w".into(),
            project_id: "p".into(),
            url: "https://discord.example/api/webhooks/1/x".into(),
            events,
            events_default,
            description: None,
            format: WebhookFormat::Discord,
            enabled: true,
            disabled_reason: None,
            secret: new_secret(),
            previous_secret: None,
            previous_until: None,
            failing_since: None,
            paused_until: None,
            enabled_at: 0,
            created_at: 0,
            updated_at: 0,
        };
        assert!(hook.wants("comment.published", true));
        assert!(!hook.wants("comment.published", false));
        assert!(!hook.wants("report.assigned", false));
        hook.events_default = false;
        assert!(hook.wants("comment.published", false));
    }

    #[test]
    fn secrets_decode_to_32_bytes_and_the_previous_one_signs_for_a_day() {
        let secret = new_secret();
        assert!(secret.expose().starts_with("whsec_"));
        assert_eq!(secret_key(&secret).len(), 32);
        assert_ne!(new_secret(), secret);
    }

    #[test]
    fn retries_follow_the_schedule_within_a_day() {
        assert_eq!(next_retry(0, 1, 1000, 0.0), Some(6000));
        assert_eq!(next_retry(0, 2, 10_000, 0.0), Some(310_000));
        // Jitter adds at most a tenth.
        assert_eq!(next_retry(0, 1, 1000, 1.0), Some(6500));
        // The last retry lands on the window's end; after it, none.
        let late = RETRY_WINDOW_MS - 3600 * 1000;
        assert_eq!(next_retry(0, 7, late, 0.0), Some(RETRY_WINDOW_MS));
        assert_eq!(next_retry(0, 8, RETRY_WINDOW_MS, 0.0), None);
    }
}
