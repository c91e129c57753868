//! The tool endpoint: `POST /mcp`, JSON-RPC 2.0 over plain HTTP, stateless (any instance answers
//! any request), answering `application/json`. A small hand-written module: the protocol surface
//! is tiny and exact (decisions §7).

pub mod arguments;
pub mod definitions;
pub mod error;
pub mod inputs;
pub mod jsonrpc;
pub mod markdown;
pub mod resources;
pub mod tools;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value, json};
use svc_service::permissions::{self, Operation};

use crate::body::{BodyError, read_limited};
use crate::state::AppState;
use error::McpError;
use jsonrpc::{Call, error, result};
use svc_service::projects;
use tools::Caller;

pub const PROTOCOL_VERSION: &str = "2024-11-05";
/// Tool calls carry small JSON; 1 MB is generous.
const BODY_LIMIT: usize = 1024 * 1024;

pub fn router() -> axum::Router<AppState> {
    crate::catch_panics(
        axum::Router::new().route("/mcp", post(handle).fallback(method_not_allowed)),
        error::internal_response,
    )
}

async fn method_not_allowed() -> Response {
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

fn reply(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

/// The key is checked from the headers before the body is read: without a valid key nothing of the
/// body is read, whatever its size.
async fn handle(State(state): State<AppState>, parts: Parts, body: Body) -> Response {
    match answer(&state, parts, body).await {
        Ok(response) => response,
        Err(error) => {
            let resource_metadata =
                svc_service::oauth::Endpoints::new(&state.config.public_url).resource_metadata_url();
            error.respond(&resource_metadata)
        }
    }
}

async fn answer(state: &AppState, parts: Parts, body: Body) -> Result<Response, McpError> {
    let crate::principal::Authenticated { principal, project } =
        crate::principal::resolve(state, &parts.headers).await?;
    // After the key (a missing key is always 401, so OAuth discovery starts): a browser page of
    // another origin is refused, whatever key it carries.
    if let Some(origin) = parts.headers.get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|origin| state.config.mcp_origin_allowed(origin))
    {
        return Err(McpError::ForeignOrigin);
    }
    let body = read_limited(&parts.headers, body, BODY_LIMIT).await.map_err(|error| match error {
        BodyError::TooLarge => McpError::TooLarge,
        BodyError::Unreadable => McpError::Parse("parse error: the body could not be read"),
    })?;
    let message: Value = serde_json::from_slice(&body).map_err(|_| McpError::Parse("parse error: body is not JSON"))?;
    let projects = projects::reachable_with_key_project(&state.service, &principal, project)
        .await
        .map_err(|e| McpError::Internal(e.into()))?;
    let caller = Caller { principal, projects };
    Ok(respond(state, &caller, message).await)
}

async fn respond(state: &AppState, caller: &Caller, message: Value) -> Response {
    match message {
        Value::Array(batch) if batch.is_empty() => {
            reply(StatusCode::OK, error(Value::Null, jsonrpc::INVALID_REQUEST, "invalid request: empty batch"))
        }
        Value::Array(batch) => {
            let mut answers = Vec::new();
            for item in &batch {
                if let Some((_, answer)) = dispatch(state, caller, item).await {
                    answers.push(answer);
                }
            }
            if answers.is_empty() {
                StatusCode::ACCEPTED.into_response()
            } else {
                reply(StatusCode::OK, Value::Array(answers))
            }
        }
        single => match dispatch(state, caller, &single).await {
            Some((status, answer)) => reply(status, answer),
            None => StatusCode::ACCEPTED.into_response(),
        },
    }
}

/// Answers one message; `None` for a notification. HTTP 403 only for a missing scope.
async fn dispatch(state: &AppState, caller: &Caller, message: &Value) -> Option<(StatusCode, Value)> {
    let call = match jsonrpc::parse_call(message) {
        Ok(call) => call,
        Err(answer) => return Some((StatusCode::OK, answer)),
    };
    let Call { id, method, params } = call;
    let id = id?;
    let params = params.unwrap_or_else(|| json!({}));
    let answer = match method.as_str() {
        "initialize" => result(
            id,
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": false}, "resources": {"subscribe": false, "listChanged": false}},
                "serverInfo": {"name": "svc", "version": env!("CARGO_PKG_VERSION")},
                "instructions": "Svc holds feedback reports filed by users of a web app. list_reports to see what is new, get_report to read one (the reporter's message, the elements they pointed at with their text and selectors to grep for, failed requests, console errors, screenshots), set_status and add_comment to triage. Files and voice notes a report names as svc://blobs/... are read with resources/read.",
            }),
        ),
        "ping" => result(id, json!({})),
        "tools/list" => result(id, json!({"tools": definitions::list()})),
        "resources/list" | "resources/read" => {
            // Reading reports and their files needs what get_report needs.
            if let Err(refusal) = permissions::check_anywhere(&caller.principal, Operation::ReadReports) {
                return Some(McpError::refused(id, refusal).answer());
            }
            if method == "resources/list" {
                resources::list(state, caller, id, &params).await
            } else {
                resources::read(state, caller, id, &params).await
            }
        }
        "resources/templates/list" => result(id, json!({"resourceTemplates": resources::templates()})),
        "prompts/list" => result(id, json!({"prompts": []})),
        "tools/call" => return Some(call_tool(state, caller, id, &params).await),
        _ => error(id, jsonrpc::METHOD_NOT_FOUND, &format!("method not found: {method}")),
    };
    Some((StatusCode::OK, answer))
}

async fn call_tool(state: &AppState, caller: &Caller, id: Value, params: &Value) -> (StatusCode, Value) {
    // -32602 is kept for params or arguments that are not objects (decisions §7): a missing or
    // non-string name names no known tool, so it is -32601 like any unknown tool.
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return (
            StatusCode::OK,
            error(id, jsonrpc::METHOD_NOT_FOUND, "unknown tool: params.name must name one of the tools in tools/list"),
        );
    };
    if !definitions::TOOL_NAMES.contains(&name) {
        return (StatusCode::OK, error(id, jsonrpc::METHOD_NOT_FOUND, &format!("unknown tool: {name}")));
    }
    let empty = Map::new();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(arguments)) => arguments,
        Some(_) => {
            return (StatusCode::OK, error(id, jsonrpc::INVALID_PARAMS, "invalid params: arguments must be an object"));
        }
    };
    if let Some(op) = definitions::operation(name)
        && let Err(refusal) = permissions::check_anywhere(&caller.principal, op)
    {
        return McpError::refused(id, refusal).answer();
    }
    let outcome = tools::call(state, caller, name, arguments).await;
    (StatusCode::OK, result(id, outcome.to_json()))
}
