//! GitHub's side of an issue tracker (docs/integrations.md): its REST API (issues, comments, the
//! repository, installation tokens) and its deliveries (`issues`, `issue_comment`, `ping`).
//!
//! Every request carries `Accept: application/vnd.github+json`, `X-GitHub-Api-Version` and a
//! `User-Agent`, as GitHub asks. A rate-limit answer (403 or 429 with `retry-after`, or
//! `x-ratelimit-remaining: 0` with its reset time) is waited out when the wait is short and
//! retried; a longer one is an error that says until when. A GitHub App's installation token is
//! kept until five minutes before it expires.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::{Method, StatusCode, header::HeaderMap};
use serde_json::{Value, json};
use svc_core::secret::Secret;
use svc_core::time;
use svc_core::tracker::{self, AuthKind, IssueState, TrackerConnection};

use super::{Check, CreatedIssue, IssueTracker, NewIssue, TrackerError};
use crate::outbound::refusal_of;

/// The REST API version Svc was written against.
pub const API_VERSION: &str = "2022-11-28";
/// Tries per request (the first and two more after a rate limit, a network failure or a 5xx).
const TRIES: u32 = 3;
/// The longest Svc waits out a rate limit within one request.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// An installation token is renewed this long before it expires.
const RENEW_BEFORE_MS: i64 = 5 * 60 * 1000;

/// Installation tokens, per app installation and key.
#[derive(Default)]
pub struct Tokens {
    held: Mutex<HashMap<String, (Secret, i64)>>,
}

impl Tokens {
    fn key(connection: &TrackerConnection) -> String {
        let settings = &connection.settings;
        svc_core::secret::hash_secret(&format!(
            "{}\n{}\n{:?}\n{:?}\n{}",
            connection.project_id,
            settings.api_url,
            settings.app_id,
            settings.installation_id,
            connection.credential.expose()
        ))
    }

    fn get(&self, key: &str, now: i64) -> Option<Secret> {
        let held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        held.get(key).filter(|(_, expires_at)| expires_at - now > RENEW_BEFORE_MS).map(|(token, _)| token.clone())
    }

    fn put(&self, key: String, token: Secret, expires_at: i64) {
        let mut held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        held.insert(key, (token, expires_at));
    }
}

/// A connection's GitHub client.
pub struct Github<'a> {
    pub http: &'a reqwest::Client,
    pub tokens: &'a Tokens,
    pub connection: &'a TrackerConnection,
}

/// An answer GitHub gave (2xx or not).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn message(&self) -> String {
        self.body.get("message").and_then(Value::as_str).unwrap_or("no message").to_string()
    }
}

/// How long a rate-limit answer asks Svc to wait, when it is one.
fn rate_limit_wait(status: StatusCode, headers: &HeaderMap, now_ms: i64) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    if let Some(seconds) = header("retry-after").and_then(|s| s.parse::<u64>().ok()) {
        return Some(Duration::from_secs(seconds));
    }
    if header("x-ratelimit-remaining") == Some("0") {
        let reset_s = header("x-ratelimit-reset").and_then(|s| s.parse::<i64>().ok()).unwrap_or(now_ms / 1000 + 60);
        return Some(Duration::from_millis((reset_s * 1000 - now_ms).max(1000) as u64));
    }
    // A secondary limit without a hint: a minute, as GitHub's documentation advises.
    (status == StatusCode::TOO_MANY_REQUESTS).then_some(Duration::from_secs(60))
}

impl Github<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.connection.settings.api_url)
    }

    fn repo_path(&self) -> String {
        format!("/repos/{}", self.connection.settings.repository)
    }

    /// One request with its retries; `bearer` is the credential it carries.
    async fn send_with(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        bearer: &str,
    ) -> Result<Answer, TrackerError> {
        let mut tries = 0;
        loop {
            tries += 1;
            let mut request = self
                .http
                .request(method.clone(), self.url(path))
                .header("accept", "application/vnd.github+json")
                .header("x-github-api-version", API_VERSION)
                .header("user-agent", concat!("Svc/", env!("CARGO_PKG_VERSION")))
                .bearer_auth(bearer);
            if let Some(body) = body {
                request = request.json(body);
            }
            let outcome = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    let bytes = response.bytes().await.unwrap_or_default();
                    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    Ok(Answer { status, headers, body })
                }
                Err(error) => Err(error),
            };
            match outcome {
                Ok(answer) if answer.status.is_success() => return Ok(answer),
                Ok(answer) => {
                    if let Some(wait) = rate_limit_wait(answer.status, &answer.headers, time::now_ms()) {
                        if tries < TRIES && wait <= MAX_WAIT {
                            tracing::info!(
                                wait_s = wait.as_secs_f64(),
                                "GitHub rate limit: waiting before trying again"
                            );
                            tokio::time::sleep(wait).await;
                            continue;
                        }
                        return Err(TrackerError::RateLimited(format!(
                            "GitHub's rate limit: try again after {}",
                            time::iso(time::now_ms() + wait.as_millis() as i64)
                        )));
                    }
                    if answer.status.is_server_error() && tries < TRIES {
                        tokio::time::sleep(Duration::from_secs(tries as u64)).await;
                        continue;
                    }
                    return Ok(answer);
                }
                Err(error) => {
                    if let Some(refusal) = refusal_of(&error) {
                        return Err(TrackerError::Refused(format!(
                            "{refusal} (set SVC_WEBHOOK_ALLOW_PRIVATE=true for a GitHub Enterprise Server on your own network)"
                        )));
                    }
                    if tries < TRIES {
                        tokio::time::sleep(Duration::from_secs(tries as u64)).await;
                        continue;
                    }
                    let what = if error.is_timeout() { "did not answer in time" } else { "could not be reached" };
                    return Err(TrackerError::Unavailable(format!(
                        "GitHub ({}) {what}",
                        self.connection.settings.api_url
                    )));
                }
            }
        }
    }

    /// The bearer credential: the token, or an installation token (traded for the app's JWT when
    /// `fresh`, when none is held, or when it expires within five minutes); with the
    /// installation's permissions when one was just made.
    async fn bearer(&self, fresh: bool) -> Result<(Secret, Option<Value>), TrackerError> {
        let connection = self.connection;
        let settings = &connection.settings;
        if settings.auth == AuthKind::Token {
            return Ok((connection.credential.clone(), None));
        }
        let now = time::now_ms();
        let key = Tokens::key(connection);
        if !fresh && let Some(token) = self.tokens.get(&key, now) {
            return Ok((token, None));
        }
        let (Some(app_id), Some(installation)) = (settings.app_id.as_deref(), settings.installation_id) else {
            return Err(TrackerError::Refused("the GitHub App needs its app id and installation id".into()));
        };
        let jwt = tracker::app_jwt(app_id, &connection.credential, now / 1000)
            .map_err(|invalid| TrackerError::Refused(invalid.0))?;
        let path = format!("/app/installations/{installation}/access_tokens");
        let answer = self.send_with(Method::POST, &path, None, &jwt).await?;
        match answer.status.as_u16() {
            200..=299 => {}
            401 => {
                return Err(TrackerError::Refused(format!(
                    "GitHub refused the app's signed token ({}): check the app id {app_id} and that the private \
                     key is one of this app's keys",
                    answer.message()
                )));
            }
            404 => {
                return Err(TrackerError::Refused(format!(
                    "GitHub knows no installation {installation} of app {app_id}: check the installation id (the \
                     number at the end of the installation's settings address) and that the app is installed"
                )));
            }
            status => {
                return Err(TrackerError::Refused(format!(
                    "GitHub did not make an installation token ({status}: {})",
                    answer.message()
                )));
            }
        }
        let token = answer.body.get("token").and_then(Value::as_str).unwrap_or_default();
        if token.is_empty() {
            return Err(TrackerError::Unavailable("GitHub's installation token answer had no token".into()));
        }
        let expires_at = answer
            .body
            .get("expires_at")
            .and_then(Value::as_str)
            .and_then(|text| chrono::DateTime::parse_from_rfc3339(text).ok())
            .map(|at| at.timestamp_millis())
            .unwrap_or(now);
        let token = Secret::new(token);
        self.tokens.put(key, token.clone(), expires_at);
        Ok((token, answer.body.get("permissions").cloned()))
    }

    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, TrackerError> {
        let (bearer, _) = self.bearer(false).await?;
        self.send_with(method, path, body, bearer.expose()).await
    }

    /// What an answer that is not 2xx means, in words a person can act on.
    fn refusal(&self, answer: &Answer, doing: &str) -> TrackerError {
        let repository = &self.connection.settings.repository;
        let who = match self.connection.settings.auth {
            AuthKind::Token => "the token",
            AuthKind::App => "the app's installation",
        };
        let message = answer.message();
        TrackerError::Refused(match answer.status.as_u16() {
            401 => format!(
                "GitHub refused the credentials while {doing} ({message}): the token is wrong, expired or revoked"
            ),
            403 => format!("GitHub refused {doing} ({message}): {who} needs Issues: read and write on {repository}"),
            404 => format!(
                "GitHub shows no {repository} to {who} while {doing}: check the name, and that {who} was given \
                 access to it"
            ),
            410 => format!("Issues are turned off for {repository} (Settings → General → Features → Issues)"),
            422 => format!("GitHub did not accept {doing}: {message}"),
            status => format!("GitHub answered {status} while {doing}: {message}"),
        })
    }
}

#[async_trait]
impl IssueTracker for Github<'_> {
    async fn check(&self) -> Result<Check, TrackerError> {
        let repository = self.connection.settings.repository.clone();
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        // A fresh installation token: its answer says what the installation may do now.
        let (bearer, permissions) = match self.bearer(true).await {
            Ok(found) => found,
            Err(TrackerError::Refused(problem)) => return Ok(Check { problems: vec![problem], notes }),
            Err(other) => return Err(other),
        };
        if let Some(permissions) = permissions {
            match permissions.get("issues").and_then(Value::as_str) {
                Some("write") => notes.push("The app's installation may read and write issues.".to_string()),
                Some(other) => problems.push(format!(
                    "The app's installation has Issues: {other}; it needs Issues: read and write (the app's \
                     settings → Permissions, then accept the change on the installation)"
                )),
                None => problems.push(
                    "The app's installation has no Issues permission; give the app Issues: read and write".into(),
                ),
            }
        }
        let answer = self.send_with(Method::GET, &self.repo_path(), None, bearer.expose()).await?;
        if !answer.status.is_success() {
            problems.push(match self.refusal(&answer, "reading the repository") {
                TrackerError::Refused(text) => text,
                other => other.to_string(),
            });
            return Ok(Check { problems, notes });
        }
        let full_name = answer.body.get("full_name").and_then(Value::as_str).unwrap_or(&repository).to_string();
        notes.push(format!("Svc can read the repository {full_name}."));
        if answer.body.get("has_issues").and_then(Value::as_bool) == Some(false) {
            problems.push(format!("Issues are turned off for {full_name} (Settings → General → Features → Issues)"));
        }
        // A classic token says its scopes; a fine-grained one does not.
        if let Some(scopes) = answer.headers.get("x-oauth-scopes").and_then(|v| v.to_str().ok()) {
            let scopes: Vec<&str> = scopes.split(',').map(str::trim).collect();
            if !scopes.contains(&"repo") && !scopes.contains(&"public_repo") {
                problems.push(
                    "The classic token lacks the repo scope; use a fine-grained token with Issues: read and write"
                        .into(),
                );
            }
        }
        let issues = format!("{}/issues?per_page=1", self.repo_path());
        let answer = self.send_with(Method::GET, &issues, None, bearer.expose()).await?;
        if answer.status.is_success() {
            notes.push("Svc can read its issues.".into());
        } else {
            problems.push(match self.refusal(&answer, "reading issues") {
                TrackerError::Refused(text) => text,
                other => other.to_string(),
            });
        }
        Ok(Check { problems, notes })
    }

    async fn create_issue(&self, issue: &NewIssue) -> Result<CreatedIssue, TrackerError> {
        let mut body = json!({ "title": issue.title, "body": issue.body });
        if !issue.labels.is_empty() {
            body["labels"] = json!(issue.labels);
        }
        let path = format!("{}/issues", self.repo_path());
        let answer = self.send(Method::POST, &path, Some(&body)).await?;
        if !answer.status.is_success() {
            return Err(self.refusal(&answer, "creating the issue"));
        }
        let number = answer.body.get("number").and_then(Value::as_i64);
        let url = answer.body.get("html_url").and_then(Value::as_str);
        match (number, url) {
            (Some(number), Some(url)) => Ok(CreatedIssue { number, url: url.to_string() }),
            _ => Err(TrackerError::Unavailable("GitHub's answer to creating the issue had no number or URL".into())),
        }
    }

    async fn set_state(&self, number: i64, state: IssueState) -> Result<(), TrackerError> {
        let body = match state {
            IssueState::Open => json!({ "state": "open" }),
            IssueState::Completed => json!({ "state": "closed", "state_reason": "completed" }),
            IssueState::NotPlanned => json!({ "state": "closed", "state_reason": "not_planned" }),
        };
        let path = format!("{}/issues/{number}", self.repo_path());
        let answer = self.send(Method::PATCH, &path, Some(&body)).await?;
        if !answer.status.is_success() {
            return Err(self.refusal(&answer, &format!("changing issue #{number}")));
        }
        Ok(())
    }

    async fn comment(&self, number: i64, text: &str) -> Result<(), TrackerError> {
        let path = format!("{}/issues/{number}/comments", self.repo_path());
        let answer = self.send(Method::POST, &path, Some(&json!({ "body": text }))).await?;
        if !answer.status.is_success() {
            return Err(self.refusal(&answer, &format!("commenting on issue #{number}")));
        }
        Ok(())
    }
}

/// What Svc reads of a delivery's body.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub action: String,
    pub repository: String,
    pub installation_id: Option<i64>,
    pub sender: String,
    pub issue_number: Option<i64>,
    /// `completed`, `not_planned`, `duplicate`, `reopened` or none.
    pub state_reason: Option<String>,
    pub comment_id: Option<i64>,
    pub comment_body: Option<String>,
}

/// Reads a delivery's body: `None` when it is not JSON or names no repository.
pub fn read_payload(body: &[u8]) -> Option<Payload> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str).map(str::to_string);
    Some(Payload {
        action: text("/action").unwrap_or_default(),
        repository: text("/repository/full_name")?,
        installation_id: value.pointer("/installation/id").and_then(Value::as_i64),
        sender: text("/sender/login").unwrap_or_else(|| "someone".into()),
        issue_number: value.pointer("/issue/number").and_then(Value::as_i64),
        state_reason: text("/issue/state_reason"),
        comment_id: value.pointer("/comment/id").and_then(Value::as_i64),
        comment_body: text("/comment/body"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn rate_limit_answers_say_how_long_to_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(rate_limit_wait(StatusCode::TOO_MANY_REQUESTS, &headers, 0), Some(Duration::from_secs(3)));
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        headers.insert("x-ratelimit-reset", HeaderValue::from_static("110"));
        assert_eq!(rate_limit_wait(StatusCode::FORBIDDEN, &headers, 100_000), Some(Duration::from_secs(10)));
        // A 403 that is not a rate limit: a missing permission.
        assert_eq!(rate_limit_wait(StatusCode::FORBIDDEN, &HeaderMap::new(), 0), None);
        assert_eq!(rate_limit_wait(StatusCode::NOT_FOUND, &headers, 0), None);
    }

    #[test]
    fn payloads_name_the_repository_issue_and_reason() {
        let body = br#"{"action":"closed","issue":{"number":7,"state_reason":"not_planned"},
            "repository":{"full_name":"Octo/Repo"},"sender":{"login":"ada"},"installation":{"id":42}}"#;
        let payload = read_payload(body).unwrap();
        assert_eq!(payload.repository, "Octo/Repo");
        assert_eq!(payload.issue_number, Some(7));
        assert_eq!(payload.state_reason.as_deref(), Some("not_planned"));
        assert_eq!(payload.installation_id, Some(42));
        assert!(read_payload(b"{}").is_none());
        assert!(read_payload(b"not json").is_none());
    }
}
