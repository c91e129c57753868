//! JSON-RPC 2.0 framing for the tool endpoint.

use serde_json::{Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Server-defined: the key lacks the scope a tool needs (sent with HTTP 403).
pub const FORBIDDEN: i64 = -32003;
/// Server-defined: the key is missing, invalid, expired or revoked (sent with HTTP 401).
pub const UNAUTHORIZED: i64 = -32001;

/// A request or notification that passed framing checks.
pub struct Call {
    /// `None` for a notification.
    pub id: Option<Value>,
    pub method: String,
    pub params: Option<Value>,
}

/// Checks one message's framing. `Err` carries the error response (with the id when one was readable).
pub fn parse_call(message: &Value) -> Result<Call, Value> {
    let Some(object) = message.as_object() else {
        return Err(error(Value::Null, INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object"));
    };
    let id = object.get("id").cloned();
    let id_ok = id.as_ref().is_none_or(|id| id.is_string() || id.is_number() || id.is_null());
    let reply_id = id.clone().filter(|_| id_ok).unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !id_ok {
        return Err(error(
            reply_id,
            INVALID_REQUEST,
            "invalid request: jsonrpc must be \"2.0\" and id a string or number",
        ));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Err(error(reply_id, INVALID_REQUEST, "invalid request: method must be a string"));
    };
    let params = object.get("params").cloned();
    if params.as_ref().is_some_and(|p| !p.is_object()) {
        return Err(error(reply_id, INVALID_PARAMS, "invalid params: params must be an object"));
    }
    Ok(Call { id, method: method.to_string(), params })
}

pub fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
