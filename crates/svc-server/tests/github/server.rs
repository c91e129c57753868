//! A GitHub REST API server for tests (`server.mjs` beside this file, in Node.js): every request is
//! checked against GitHub's published API description (`@octokit/openapi`) and answered with the
//! description's own example response; webhook payloads are `@octokit/webhooks-examples`' examples
//! signed with `@octokit/webhooks-methods`. The tests never talk to the real GitHub. Included with
//! `#[path = "../github/server.rs"] mod github_server;`.

#![allow(dead_code)]

#[path = "../python_server.rs"]
mod python_server;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The folder of `server.mjs`, `package.json` and (once installed) `node_modules`.
fn folder() -> PathBuf {
    python_server::script_beside(file!(), "server.mjs").parent().unwrap().to_path_buf()
}

/// `node`, if it runs and the packages are installed (`npm ci`, which `scripts/test` does).
fn node_ready() -> Result<(), &'static str> {
    let runs = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !runs {
        return Err("node is not installed");
    }
    if !folder().join("node_modules/@octokit/openapi").is_dir() {
        return Err("its npm packages are not installed");
    }
    Ok(())
}

/// A webhook delivery as GitHub would make it: `body` is the exact payload that was signed.
#[derive(Debug, Clone)]
pub struct SignedWebhook {
    pub body: String,
    /// `sha256=<hex>` of `body` with the secret (the `X-Hub-Signature-256` header).
    pub signature: String,
    /// The `X-GitHub-Event` header.
    pub event: String,
    /// The `X-GitHub-Delivery` header (a fresh UUID).
    pub delivery_id: String,
    /// Which example the payload came from (`issues/opened #1`; says so when the action had none).
    pub example: String,
    /// Where the patched payload departs from the description's schema for the event (informative:
    /// some community examples predate fields the schema now requires).
    pub schema_errors: Vec<String>,
    /// Every header GitHub sends with the delivery (lowercase names), signatures included.
    pub headers: Vec<(String, String)>,
}

/// The server on a loopback port: every API request is a JSON file in `records`. Stopped when dropped.
pub struct GithubServer {
    child: Child,
    pub port: u16,
    records: tempfile::TempDir,
}

impl GithubServer {
    /// `None` (the test then says it skipped) when node or the npm packages are missing.
    pub fn start() -> Option<Self> {
        if let Err(why) = node_ready() {
            eprintln!(
                "skipped: the GitHub API test server cannot run: {why} (scripts/test installs its packages: \
                 npm ci --prefix crates/svc-server/tests/github)"
            );
            return None;
        }
        let records = tempfile::tempdir().expect("a folder for the GitHub server's records");
        let args = ["--records".into(), records.path().as_os_str().to_owned()];
        let script = folder().join("server.mjs");
        let (child, port) = python_server::spawn(Path::new("node"), &script, &args);
        Some(GithubServer { child, port, records })
    }

    /// `http://127.0.0.1:<port>`: the API at the root, as api.github.com serves it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:<port>/api/v3`: the API as GitHub Enterprise Server serves it.
    pub fn enterprise_url(&self) -> String {
        format!("{}/api/v3", self.url())
    }

    /// Every API request so far, in arrival order: `{n, method, path, apiPath, template,
    /// operationId, query, headers, body, valid, errors, status}`.
    pub fn requests(&self) -> Vec<Value> {
        python_server::numbered_records(self.records.path())
    }

    /// The requests that do not match the description (`valid: false`, with `errors`).
    pub fn violations(&self) -> Vec<Value> {
        self.requests().into_iter().filter(|request| request["valid"] != json!(true)).collect()
    }

    /// Panics listing every request that did not match the description.
    pub fn assert_no_violations(&self) {
        let violations = self.violations();
        assert!(
            violations.is_empty(),
            "requests that do not match GitHub's REST API description:\n{}",
            violations
                .iter()
                .map(|v| format!("  {} {} → {}: {}", v["method"], v["path"], v["status"], v["errors"]))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    /// The next `count` API requests are refused as GitHub refuses over its rate limit: 403 with
    /// `x-ratelimit-remaining: 0` and `x-ratelimit-reset` (now + `retry_after_secs`, default 1), or
    /// 429 (the secondary limit) with `retry-after`.
    pub fn rate_limit(&self, count: u32, status: u16, retry_after_secs: Option<u64>) {
        let mut body = json!({"count": count, "status": status});
        if let Some(seconds) = retry_after_secs {
            body["retryAfter"] = json!(seconds);
        }
        self.control("POST", "/_control/rate-limit", Some(&body));
    }

    /// The next `count` requests to `operation_id` (such as `issues/create`) are answered with
    /// `status`, and `body` or else the description's example for that status or a GitHub-like
    /// `{"message": ...}` ("Bad credentials" for 401, "Not Found" for 404...). A 2xx `status` with a
    /// `body` replaces the example answer (say, a token that expires in the future).
    pub fn respond(&self, operation_id: &str, status: u16, body: Option<Value>, count: u32) {
        let mut request = json!({"operationId": operation_id, "status": status, "count": count});
        if let Some(body) = body {
            request["body"] = body;
        }
        self.control("POST", "/_control/respond", Some(&request));
    }

    /// Like [`GithubServer::respond`] with the example for `status` (or the operation's success
    /// example) and `patch` merged into it: objects recursively, anything else replaced.
    pub fn respond_patched(&self, operation_id: &str, status: u16, patch: Value, count: u32) {
        let request = json!({"operationId": operation_id, "status": status, "patch": patch, "count": count});
        self.control("POST", "/_control/respond", Some(&request));
    }

    /// The first example payload for `event` (and `action`) with `patch` merged in (objects
    /// recursively, anything else replaced, `null` sets null), signed with `secret`.
    pub fn webhook(&self, event: &str, action: Option<&str>, secret: &str, patch: Value) -> SignedWebhook {
        let request = json!({"event": event, "action": action, "secret": secret, "patch": patch});
        let answer = self.control("POST", "/_control/webhook", Some(&request));
        let text =
            |name: &str| answer[name].as_str().unwrap_or_else(|| panic!("webhook answer has {name}")).to_string();
        SignedWebhook {
            body: text("body"),
            signature: text("signature"),
            event: text("event"),
            delivery_id: text("deliveryId"),
            example: text("example"),
            schema_errors: answer["schemaErrors"]
                .as_array()
                .map(|errors| errors.iter().filter_map(|e| e.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            headers: answer["headers"]
                .as_object()
                .map(|headers| {
                    headers
                        .iter()
                        .map(|(name, value)| (name.clone(), value.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The actions of `event` that have example payloads.
    pub fn webhook_actions(&self, event: &str) -> Vec<String> {
        let answer = self.control("GET", &format!("/_control/webhook-actions?event={event}"), None);
        answer.as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_string)).collect()
    }

    /// Forgets rate limits and answers set with `respond` (the records stay).
    pub fn reset(&self) {
        self.control("POST", "/_control/reset", None);
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A control request (plain HTTP/1.1 over a socket, `Connection: close`): the JSON answer;
    /// panics with the server's message unless it is 200.
    fn control(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let body = body.map(|body| body.to_string()).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the GitHub server");
        stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Content-Length: {length}\r\nConnection: close\r\n\r\n{body}",
            port = self.port,
            length = body.len()
        );
        stream.write_all(request.as_bytes()).expect("send a control request");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("read the control answer");
        let answer = String::from_utf8_lossy(&answer);
        let (head, content) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head.split(' ').nth(1).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
        let value: Value = serde_json::from_str(content).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{method} {path} answered {status}: {}", value["message"].as_str().unwrap_or(content));
        value
    }
}

impl Drop for GithubServer {
    fn drop(&mut self) {
        self.stop();
    }
}
