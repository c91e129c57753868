//! Helpers for the tool endpoint (`POST /mcp`) tests: JSON-RPC requests and tool calls against a
//! [`TestApp`], noisy PNG files and screenshot uploads through the ingest API.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};

use super::common::ingest::Part;
use super::common::{Resp, TestApp};

/// The seven tools, in the order `tools/list` gives them.
pub const TOOL_NAMES: [&str; 7] =
    ["introduce", "list_reports", "get_report", "create_report", "create_room", "set_status", "add_comment"];
pub const WRITE_TOOLS: [&str; 4] = ["create_report", "create_room", "set_status", "add_comment"];
pub const STATUSES: [&str; 6] = ["new", "triaged", "in-progress", "fixed", "verified", "canceled"];
pub const COMMENT_KINDS: [&str; 5] = ["fix", "question", "options", "deferral", "techdebt"];

/// `POST /mcp` with a bearer key, extra headers and a raw body.
pub async fn post_raw(app: &TestApp, key: Option<&str>, headers: &[(&str, &str)], body: Vec<u8>) -> Resp {
    let mut builder = Request::builder().method("POST").uri("/mcp").header(header::CONTENT_TYPE, "application/json");
    if let Some(key) = key {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {key}"));
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    app.send(builder.body(Body::from(body)).unwrap()).await
}

/// `POST /mcp` with a bearer key and a JSON body (a message or a batch).
pub async fn post(app: &TestApp, key: &str, body: Value) -> Resp {
    post_raw(app, Some(key), &[], serde_json::to_vec(&body).unwrap()).await
}

/// A JSON-RPC request object.
pub fn req(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends one request; asserts HTTP 200, a JSON body that echoes the id and carries `result`;
/// returns the result.
#[track_caller]
pub fn expect_result(resp: &Resp, id: &Value) -> Value {
    assert_eq!(resp.status.as_u16(), 200, "HTTP status; body: {}", resp.text);
    assert_json_content_type(resp);
    assert_eq!(resp.body["jsonrpc"], json!("2.0"), "jsonrpc member: {}", resp.text);
    assert_eq!(&resp.body["id"], id, "the response echoes the id: {}", resp.text);
    assert!(resp.body.get("error").is_none(), "unexpected error: {}", resp.text);
    resp.body.get("result").cloned().unwrap_or_else(|| panic!("no result: {}", resp.text))
}

/// Asserts a JSON-RPC error with this HTTP status, id and code; returns the message.
#[track_caller]
pub fn expect_error(resp: &Resp, http: u16, id: &Value, code: i64) -> String {
    assert_eq!(resp.status.as_u16(), http, "HTTP status; body: {}", resp.text);
    assert_json_content_type(resp);
    expect_error_value(&resp.body, id, code)
}

/// Asserts that one response object is a JSON-RPC error with this id and code; returns the message.
#[track_caller]
pub fn expect_error_value(answer: &Value, id: &Value, code: i64) -> String {
    assert_eq!(answer["jsonrpc"], json!("2.0"), "jsonrpc member: {answer}");
    assert_eq!(&answer["id"], id, "error id: {answer}");
    assert!(answer.get("result").is_none(), "an error carries no result: {answer}");
    assert_eq!(answer["error"]["code"], json!(code), "error code: {answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_else(|| panic!("error message: {answer}"));
    assert!(!message.is_empty());
    message.to_string()
}

#[track_caller]
pub fn assert_json_content_type(resp: &Resp) {
    let content_type = resp.header(header::CONTENT_TYPE.as_str()).unwrap_or_default();
    assert!(content_type.starts_with("application/json"), "Content-Type {content_type:?}; body: {}", resp.text);
}

/// A method call that must succeed; returns its result.
pub async fn rpc(app: &TestApp, key: &str, method: &str, params: Value) -> Value {
    let id = json!(7);
    let resp = post(app, key, req(id.clone(), method, params)).await;
    expect_result(&resp, &id)
}

/// What a tool call answered.
#[derive(Debug)]
pub struct ToolOut {
    pub is_error: bool,
    pub content: Vec<Value>,
    /// The first content item's text.
    pub text: String,
}

impl ToolOut {
    /// Asserts success and parses the text as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        assert!(!self.is_error, "the tool failed: {}", self.text);
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("the text is not JSON ({e}): {}", self.text))
    }

    /// Asserts an `isError` result whose text mentions every one of `words`; returns the text.
    #[track_caller]
    pub fn error_naming(&self, words: &[&str]) -> &str {
        assert!(self.is_error, "expected isError, got: {}", self.text);
        for word in words {
            assert!(self.text.contains(word), "the error text should name {word:?}: {}", self.text);
        }
        &self.text
    }

    pub fn images(&self) -> Vec<&Value> {
        self.content.iter().filter(|item| item["type"] == "image").collect()
    }
}

/// `tools/call` that must answer a tool result (HTTP 200, no protocol error).
pub async fn tool(app: &TestApp, key: &str, name: &str, arguments: Value) -> ToolOut {
    let id = json!(format!("call-{name}"));
    let resp = post(app, key, req(id.clone(), "tools/call", json!({"name": name, "arguments": arguments}))).await;
    let result = expect_result(&resp, &id);
    tool_out(&result)
}

#[track_caller]
pub fn tool_out(result: &Value) -> ToolOut {
    let is_error = result["isError"].as_bool().unwrap_or_else(|| panic!("isError must be a boolean: {result}"));
    let content = result["content"].as_array().unwrap_or_else(|| panic!("content must be a list: {result}")).clone();
    assert!(!content.is_empty(), "a tool result has at least one item: {result}");
    assert_eq!(content[0]["type"], json!("text"), "the first item is text: {result}");
    let text = content[0]["text"].as_str().unwrap_or_else(|| panic!("text item without text: {result}")).to_string();
    ToolOut { is_error, content, text }
}

/// A successful tool call's JSON answer.
pub async fn tool_json(app: &TestApp, key: &str, name: &str, arguments: Value) -> Value {
    tool(app, key, name, arguments).await.json()
}

/// The `(viewer, at)` marks of a report, once every mark recorded so far is written (they are
/// written off the request path).
pub async fn viewers(app: &TestApp, report_id: &str) -> Vec<(String, i64)> {
    app.state.usage.flush().await;
    app.store.list_viewers(report_id).await.expect("list viewers")
}

// ---------------------------------------------------------------------------------------------
// Real PNG files and uploads through the ingest API

/// A valid RGB PNG of `width`×`height` with noisy pixels (stored, uncompressed deflate), so its size
/// is about `height × (1 + 3 × width)` bytes and it is different for every `seed`.
pub fn png(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    let mut noise = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u8
    };
    let rgb: Vec<u8> = (0..width * height * 3).map(|_| noise()).collect();
    crate::common::rgb_png(width, height, &rgb)
}

/// `POST /ingest/blob` with a multipart body (`kind=screenshot`, `file=<png>`); returns the blob id.
pub async fn upload_screenshot(app: &TestApp, png: &[u8]) -> String {
    let answer = upload_blob(app, "screenshot", "shot.png", "image/png", png).await;
    assert_eq!(answer["mime"], json!("image/png"), "{answer}");
    answer["blobId"].as_str().expect("blobId").to_string()
}

/// `POST /ingest/blob` with a multipart body (`kind`, then `file` with this file name and
/// Content-Type); asserts 200 and the stored size, returns the answer.
pub async fn upload_blob(app: &TestApp, kind: &str, file_name: &str, content_type: &str, data: &[u8]) -> Value {
    let resp = app.upload(&[Part::text("kind", kind), Part::file(file_name, content_type, data)]).await;
    let answer = resp.ok(200).clone();
    assert_eq!(answer["bytes"], json!(data.len()), "{}", resp.text);
    answer
}
