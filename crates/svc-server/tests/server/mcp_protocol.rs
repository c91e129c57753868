//! The tool endpoint's protocol surface (decisions §7): JSON-RPC framing and every error code,
//! notifications, batches, HTTP methods, authentication (401), scopes (403) and rate limits (429).

use crate::common::*;
use crate::mcp_support::*;
use axum::http::header;
use serde_json::{Value, json};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Handshake and the plain methods

#[tokio::test]
async fn initialize_answers_the_protocol_version_tool_capability_and_server_info() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    // Whatever version the client asks for, the server answers the one it speaks.
    for asked in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let result = rpc(
            &app,
            &key,
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        )
        .await;
        assert_eq!(result["protocolVersion"], json!("2024-11-05"));
        assert_eq!(
            result["capabilities"],
            json!({"tools": {"listChanged": false}, "resources": {"subscribe": false, "listChanged": false}})
        );
        assert_eq!(result["serverInfo"]["name"], json!("svc"));
        assert!(result["serverInfo"]["version"].as_str().is_some_and(|v| !v.is_empty()), "{result}");
    }
    // initialize without params works too.
    let result = rpc(&app, &key, "initialize", json!({})).await;
    assert_eq!(result["protocolVersion"], json!("2024-11-05"));
}

#[tokio::test]
async fn ping_answers_an_empty_object_and_the_id_is_echoed_as_given() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    for id in [json!(1), json!("abc"), json!(-3), json!(2.5), Value::Null] {
        let resp = post(&app, &key, req(id.clone(), "ping", json!({}))).await;
        assert_eq!(expect_result(&resp, &id), json!({}));
    }
    // params may be left out.
    let resp = post(&app, &key, json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})).await;
    assert_eq!(expect_result(&resp, &json!(9)), json!({}));
}

#[tokio::test]
async fn prompts_are_an_empty_list_and_resources_start_empty_with_three_templates() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    assert_eq!(rpc(&app, &key, "resources/list", json!({})).await, json!({"resources": []}));
    assert_eq!(rpc(&app, &key, "prompts/list", json!({})).await, json!({"prompts": []}));
    let templates = rpc(&app, &key, "resources/templates/list", json!({})).await;
    let uris: Vec<&str> =
        templates["resourceTemplates"].as_array().unwrap().iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        ["svc://reports/{reportId}", "svc://reports/{reportId}/reproduction.spec.ts", "svc://blobs/{blobId}"]
    );
}

#[tokio::test]
async fn tools_list_gives_the_seven_tools_in_a_stable_order_with_schemas_and_annotations() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read", "feedback:write"]).await;
    let result = rpc(&app, &key, "tools/list", json!({})).await;
    let tools = result["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, TOOL_NAMES);

    let required = |name: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        let mut r: Vec<String> = tool["inputSchema"]["required"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        r.sort();
        r
    };
    assert_eq!(required("introduce"), ["agentName"]);
    assert_eq!(required("list_reports"), Vec::<String>::new());
    assert_eq!(required("get_report"), ["id"]);
    assert_eq!(required("create_report"), ["message"]);
    assert_eq!(required("create_room"), ["artifact_id"]);
    assert_eq!(required("set_status"), ["id", "status"]);
    assert_eq!(required("add_comment"), ["report_id", "text"]);

    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20), "{name} has a description");
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], json!("object"), "{name}");
        let properties = schema["properties"].as_object().unwrap_or_else(|| panic!("{name} has properties"));
        for required in schema["required"].as_array().into_iter().flatten() {
            assert!(properties.contains_key(required.as_str().unwrap()), "{name}: required {required} is a property");
        }
        let read_only = tool["annotations"]["readOnlyHint"].as_bool();
        if name == "list_reports" || name == "get_report" {
            assert_eq!(read_only, Some(true), "{name} is read-only");
        } else {
            assert_eq!(read_only, Some(false), "{name} is not read-only");
        }
    }
    let schema = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    assert_eq!(schema("set_status")["properties"]["status"]["enum"], json!(STATUSES));
    assert_eq!(schema("add_comment")["properties"]["kind"]["enum"], json!(COMMENT_KINDS));
    assert_eq!(schema("add_comment")["properties"]["draft"]["type"], json!("boolean"));
    // A filter takes any string (an unknown status matches nothing), so the schema lists no enum.
    assert_eq!(schema("list_reports")["properties"]["status"]["type"], json!("string"));
    assert_eq!(schema("list_reports")["properties"]["limit"]["maximum"], json!(200));
    for name in ["create_report", "create_room"] {
        assert_eq!(schema(name)["properties"]["project"]["type"], json!("string"), "{name} takes project");
    }

    // Stable: the same answer every time, and whatever the key's scopes.
    assert_eq!(rpc(&app, &key, "tools/list", json!({})).await, result);
    let (_, narrow) = app.mint(&["channel:read"]).await;
    assert_eq!(rpc(&app, &narrow, "tools/list", json!({})).await, result);
}

// ---------------------------------------------------------------------------------------------
// Notifications and batches

#[tokio::test]
async fn a_notification_gets_202_and_an_empty_body() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    for method in ["notifications/initialized", "notifications/cancelled", "no/such/notification", "ping"] {
        let resp = post(&app, &key, json!({"jsonrpc": "2.0", "method": method, "params": {}})).await;
        assert_eq!(resp.status.as_u16(), 202, "{method}: {}", resp.text);
        assert!(resp.bytes.is_empty(), "{method}: a 202 has no body: {}", resp.text);
    }
    // Even a tool call sent as a notification is answered with 202 and nothing else.
    let resp = post(
        &app,
        &key,
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "list_reports", "arguments": {}}}),
    )
    .await;
    assert_eq!(resp.status.as_u16(), 202);
    assert!(resp.bytes.is_empty());
}

#[tokio::test]
async fn a_batch_is_answered_item_by_item_in_order_without_the_notifications() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let batch = json!([
        req(json!(1), "ping", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        req(json!("two"), "tools/list", json!({})),
        req(json!(3), "no/such/method", json!({})),
        42,
        {"jsonrpc": "1.0", "id": 5, "method": "ping"},
        req(json!(6), "tools/call", json!({"name": "list_reports", "arguments": {}})),
        req(json!(7), "tools/call", json!({"name": "set_status", "arguments": {"id": "abcdef", "status": "fixed"}})),
    ]);
    let resp = post(&app, &key, batch).await;
    assert_eq!(resp.status.as_u16(), 200, "{}", resp.text);
    assert_json_content_type(&resp);
    let answers = resp.body.as_array().unwrap_or_else(|| panic!("a batch is answered with an array: {}", resp.text));
    assert_eq!(answers.len(), 7, "one answer per request, none for the notification: {}", resp.text);
    assert_eq!(answers[0]["id"], json!(1));
    assert_eq!(answers[0]["result"], json!({}));
    assert_eq!(answers[1]["id"], json!("two"));
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 7);
    expect_error_value(&answers[2], &json!(3), -32601);
    expect_error_value(&answers[3], &Value::Null, -32600);
    expect_error_value(&answers[4], &json!(5), -32600);
    assert_eq!(answers[5]["id"], json!(6));
    assert_eq!(answers[5]["result"]["isError"], json!(false));
    // Inside a batch a missing scope is an error item; the batch itself is HTTP 200.
    let message = expect_error_value(&answers[6], &json!(7), -32003);
    assert_eq!(message, "forbidden: this key lacks feedback:write");
}

#[tokio::test]
async fn a_batch_of_notifications_gets_202_and_an_empty_batch_is_invalid() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let resp = post(
        &app,
        &key,
        json!([
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        ]),
    )
    .await;
    assert_eq!(resp.status.as_u16(), 202, "{}", resp.text);
    assert!(resp.bytes.is_empty());

    let resp = post(&app, &key, json!([])).await;
    expect_error(&resp, 200, &Value::Null, -32600);
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC error codes

#[tokio::test]
async fn a_body_that_is_not_json_is_a_parse_error_with_http_400() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    for body in [&b"not json"[..], b"{\"jsonrpc\": \"2.0\", \"id\": 1,", b"", b"\xff\xfe"] {
        let resp = post_raw(&app, Some(&key), &[], body.to_vec()).await;
        let message = expect_error(&resp, 400, &Value::Null, -32700);
        assert!(message.contains("parse"), "{message}");
    }
}

#[tokio::test]
async fn a_malformed_message_is_an_invalid_request_with_http_200() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let cases = [
        (json!({"id": 1, "method": "ping"}), json!(1)),
        (json!({"jsonrpc": "1.0", "id": 2, "method": "ping"}), json!(2)),
        (json!({"jsonrpc": 2.0, "id": 3, "method": "ping"}), json!(3)),
        (json!({"jsonrpc": "2.0", "id": 4}), json!(4)),
        (json!({"jsonrpc": "2.0", "id": 5, "method": 12}), json!(5)),
        (json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": true, "method": "ping"}), Value::Null),
        (json!(42), Value::Null),
        (json!("ping"), Value::Null),
        (Value::Null, Value::Null),
    ];
    for (body, id) in cases {
        let resp = post(&app, &key, body.clone()).await;
        let message = expect_error(&resp, 200, &id, -32600);
        assert!(message.contains("invalid request"), "{body}: {message}");
    }
}

#[tokio::test]
async fn an_unknown_method_or_tool_is_method_not_found() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    for method in ["server/discover", "no/such/method", "resources/subscribe", "prompts/get", "tools/run", "Initialize"]
    {
        let resp = post(&app, &key, req(json!(1), method, json!({}))).await;
        let message = expect_error(&resp, 200, &json!(1), -32601);
        assert!(message.contains(method), "the message names the method: {message}");
    }
    for name in ["no_such_tool", "List_Reports", ""] {
        let resp = post(&app, &key, req(json!(2), "tools/call", json!({"name": name, "arguments": {}}))).await;
        let message = expect_error(&resp, 200, &json!(2), -32601);
        assert!(message.contains("unknown tool"), "{message}");
    }
    // A tool call without a tool name names no known tool either.
    for params in [json!({}), json!({"arguments": {}}), json!({"name": 5, "arguments": {}})] {
        let resp = post(&app, &key, req(json!(3), "tools/call", params.clone())).await;
        expect_error(&resp, 200, &json!(3), -32601);
    }
    // An unknown tool is -32601 even for a key that could not call any write tool.
    let (_, narrow) = app.mint(&["channel:read"]).await;
    let resp = post(&app, &narrow, req(json!(4), "tools/call", json!({"name": "drop_tables", "arguments": {}}))).await;
    expect_error(&resp, 200, &json!(4), -32601);
}

#[tokio::test]
async fn invalid_params_only_when_params_or_arguments_is_not_an_object() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read", "feedback:write"]).await;
    for params in [json!([1, 2]), json!("x"), json!(3), json!(true)] {
        let resp = post(&app, &key, req(json!(1), "tools/list", params.clone())).await;
        let message = expect_error(&resp, 200, &json!(1), -32602);
        assert!(message.contains("params"), "{params}: {message}");
        let resp = post(&app, &key, req(json!(2), "ping", params.clone())).await;
        expect_error(&resp, 200, &json!(2), -32602);
    }
    for arguments in [json!([]), json!("status=new"), json!(1), json!(false)] {
        let resp =
            post(&app, &key, req(json!(3), "tools/call", json!({"name": "list_reports", "arguments": arguments})))
                .await;
        let message = expect_error(&resp, 200, &json!(3), -32602);
        assert!(message.contains("arguments"), "{message}");
    }
    // Missing or null arguments are an empty object.
    for params in [json!({"name": "list_reports"}), json!({"name": "list_reports", "arguments": null})] {
        let resp = post(&app, &key, req(json!(4), "tools/call", params)).await;
        let out = tool_out(&expect_result(&resp, &json!(4)));
        assert_eq!(out.json(), json!([]));
    }
}

#[tokio::test]
async fn a_bad_argument_value_is_an_is_error_result_naming_the_argument() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read", "feedback:write"]).await;
    let report = app.seed(Seed::text("a report")).await;
    let cases = [
        ("introduce", json!({}), "agentName"),
        ("introduce", json!({"agentName": 7}), "agentName"),
        ("introduce", json!({"agentName": "x".repeat(101)}), "agentName"),
        ("list_reports", json!({"limit": "ten"}), "limit"),
        ("list_reports", json!({"limit": 0}), "limit"),
        ("list_reports", json!({"limit": -5}), "limit"),
        ("list_reports", json!({"limit": 2.5}), "limit"),
        ("list_reports", json!({"status": 3}), "status"),
        ("list_reports", json!({"channelKey": ["bug"]}), "channelKey"),
        ("list_reports", json!({"artifactId": "a".repeat(201)}), "artifactId"),
        ("get_report", json!({}), "id"),
        ("get_report", json!({"id": 12}), "id"),
        ("get_report", json!({"id": "not an id"}), "id"),
        ("create_report", json!({}), "message"),
        ("create_report", json!({"message": "  "}), "message"),
        ("create_report", json!({"message": "x".repeat(10_001)}), "message"),
        ("create_report", json!({"message": "hi", "channelKey": 1}), "channelKey"),
        ("create_report", json!({"message": "hi", "url": {}}), "url"),
        ("create_report", json!({"message": "hi", "author": false}), "author"),
        ("create_room", json!({}), "artifact_id"),
        ("create_room", json!({"artifact_id": "a".repeat(201)}), "artifact_id"),
        ("create_room", json!({"artifact_id": "ok", "title": 5}), "title"),
        ("create_room", json!({"artifact_id": "ok", "title": " "}), "title"),
        ("create_room", json!({"artifact_id": "ok", "title": "t".repeat(201)}), "title"),
        ("create_room", json!({"artifact_id": "ok", "goal": []}), "goal"),
        ("set_status", json!({"id": report.id, "status": "done"}), "status"),
        ("set_status", json!({"id": report.id, "status": "Fixed"}), "status"),
        ("set_status", json!({"id": report.id}), "status"),
        ("set_status", json!({"status": "fixed"}), "id"),
        ("add_comment", json!({"report_id": report.id}), "text"),
        ("add_comment", json!({"text": "hi"}), "report_id"),
        ("add_comment", json!({"report_id": report.id, "text": "hi", "draft": "yes"}), "draft"),
        ("add_comment", json!({"report_id": report.id, "text": "hi", "kind": "praise"}), "kind"),
        ("add_comment", json!({"report_id": report.id, "text": "x".repeat(20_001)}), "text"),
    ];
    for (name, arguments, argument) in cases {
        let out = tool(&app, &key, name, arguments.clone()).await;
        assert!(out.is_error, "{name} {arguments}: expected isError, got {}", out.text);
        assert!(out.text.contains(argument), "{name} {arguments}: the error names {argument}: {}", out.text);
    }
    // The invalid status error lists the six values.
    let out = tool(&app, &key, "set_status", json!({"id": report.id, "status": "done"})).await;
    out.error_naming(&STATUSES);
    // Nothing changed.
    assert_eq!(app.store.get_report(&report.id).await.unwrap().unwrap().status, "new");
    assert!(app.store.list_comments(&report.id).await.unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// HTTP surface

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    for method in ["GET", "DELETE", "PUT", "PATCH"] {
        for authorization in [None, Some(format!("Bearer {key}"))] {
            let resp = app.raw(method, "/mcp", authorization.as_deref(), None).await;
            assert_eq!(resp.status.as_u16(), 405, "{method} /mcp: {}", resp.text);
            assert_eq!(resp.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()), Some("POST"), "{method}");
        }
    }
}

#[tokio::test]
async fn the_endpoint_never_redirects() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let base = serve(&app).await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let ping = serde_json::to_vec(&req(json!(1), "ping", json!({}))).unwrap();
    for path in ["/mcp", "/mcp/", "/MCP", "/mcp?x=1", "//mcp"] {
        for method in [reqwest::Method::POST, reqwest::Method::GET] {
            let resp = client
                .request(method.clone(), format!("{base}{path}"))
                .bearer_auth(&key)
                .header("content-type", "application/json")
                .body(ping.clone())
                .send()
                .await
                .unwrap();
            assert!(!resp.status().is_redirection(), "{method} {path} answered {}", resp.status());
            assert!(resp.headers().get("location").is_none(), "{method} {path} has no Location");
        }
    }
    // Over the socket the endpoint answers like in process, with no session id.
    let resp = client.post(format!("{base}/mcp")).bearer_auth(&key).body(ping).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none(), "stateless: no session id");
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
}

#[tokio::test]
async fn stateless_any_request_works_without_initialize_and_protocol_version_header_is_ignored() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    app.seed(Seed::text("hello")).await;
    let body =
        serde_json::to_vec(&req(json!(1), "tools/call", json!({"name": "list_reports", "arguments": {}}))).unwrap();
    let mut answers = Vec::new();
    for headers in [
        vec![],
        vec![("mcp-protocol-version", "2024-11-05")],
        vec![("mcp-protocol-version", "2025-06-18")],
        vec![("mcp-protocol-version", "1999-01-01"), ("mcp-session-id", "made-up")],
        vec![("accept", "application/json, text/event-stream")],
    ] {
        let resp = post_raw(&app, Some(&key), &headers, body.clone()).await;
        let out = tool_out(&expect_result(&resp, &json!(1)));
        answers.push(out.json());
    }
    assert!(answers.iter().all(|a| a == &answers[0] && a.as_array().unwrap().len() == 1), "{answers:?}");
}

#[tokio::test]
async fn a_request_body_over_one_megabyte_is_refused() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let message = "x".repeat(1_100_000);
    let body = serde_json::to_vec(&req(json!(1), "ping", json!({"pad": message}))).unwrap();
    let resp = post_raw(&app, Some(&key), &[], body).await;
    expect_error(&resp, 413, &Value::Null, -32600);
}

/// Sends the head of a `POST /mcp` declaring a 100 MB body and only its first 4 KB, then reads the
/// answer: it must come while the client has sent almost nothing.
async fn post_100_mb_head(app: &TestApp, authorization: Option<&str>) -> RawResponse {
    use tokio::io::AsyncWriteExt;
    let server = Running::start(app, svc_server::ConnectionSettings::default()).await;
    let mut stream = server.connect().await;
    let authorization = authorization.map(|value| format!("Authorization: {value}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: svc\r\n{authorization}Content-Type: application/json\r\nContent-Length: 104857600\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&[b' '; 4096]).await.unwrap();
    let response = read_response(&mut stream).await;
    // The server does not wait for (or drain) the other 99.99 MB: it closes the connection.
    wait_closed(&mut stream, Duration::from_secs(10)).await;
    response
}

#[tokio::test]
async fn a_100_mb_body_without_a_valid_key_is_401_before_the_body_is_read() {
    let app = TestApp::new().await;
    let unknown = format!("Bearer pr_sk_{}", "A".repeat(40));
    for authorization in [None, Some(unknown.as_str())] {
        let response = post_100_mb_head(&app, authorization).await;
        assert_eq!(response.status, 401, "{authorization:?}: {:?}", String::from_utf8_lossy(&response.body));
        assert_eq!(
            response.header("www-authenticate"),
            Some(r#"Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp""#),
            "the 401 names where OAuth clients discover how to connect"
        );
        assert!(response.header("content-type").is_some_and(|t| t.starts_with("application/json")));
        let body = response.json();
        expect_error_value(&body, &Value::Null, -32001);
    }
}

#[tokio::test]
async fn a_body_over_the_limit_with_a_valid_key_is_a_json_rpc_413_declared_or_streamed() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    // Declared: refused from the Content-Length, unread.
    let response = post_100_mb_head(&app, Some(&format!("Bearer {key}"))).await;
    assert_eq!(response.status, 413);
    assert!(response.header("content-type").is_some_and(|t| t.starts_with("application/json")));
    expect_error_value(&response.json(), &Value::Null, -32600);

    // Streamed without a length (chunked): refused once the limit is passed, in the same format.
    let chunks = (0..40).map(|_| Ok::<_, std::io::Error>(axum::body::Bytes::from(vec![b' '; 64 * 1024])));
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(axum::body::Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap();
    let resp = app.send(request).await;
    expect_error(&resp, 413, &Value::Null, -32600);
}

// ---------------------------------------------------------------------------------------------
// 401, 403, 429

#[track_caller]
fn assert_unauthorized(resp: &Resp, what: &str) {
    assert_eq!(resp.status.as_u16(), 401, "{what}: {}", resp.text);
    let challenge = resp.headers.get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(challenge.starts_with("Bearer"), "{what}: WWW-Authenticate {challenge:?}");
    assert_eq!(resp.body["jsonrpc"], json!("2.0"), "{what}: {}", resp.text);
    assert!(resp.body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {}", resp.text);
}

#[tokio::test]
async fn a_missing_invalid_expired_or_revoked_key_is_401_with_a_bearer_challenge() {
    let app = TestApp::new().await;
    let ping = serde_json::to_vec(&req(json!(1), "ping", json!({}))).unwrap();
    let (_, expired) = app.expired_key().await;
    let (revoked_id, revoked) = app.mint(&["feedback:read"]).await;
    app.call("DELETE", &app.p(&format!("/keys/{revoked_id}")), &app.token, None).await.ok(200);
    let unknown = format!("pr_sk_{}", "A".repeat(40));

    let resp = post_raw(&app, None, &[], ping.clone()).await;
    assert_unauthorized(&resp, "no Authorization header");
    for (what, authorization) in [
        ("empty bearer", "Bearer ".to_string()),
        ("not a secret key", "Bearer hello".to_string()),
        ("public project key", format!("Bearer {}", app.project.project_key)),
        ("basic auth", "Basic dXNlcjpwYXNz".to_string()),
        ("unknown key", format!("Bearer {unknown}")),
        ("expired key", format!("Bearer {expired}")),
        ("revoked key", format!("Bearer {revoked}")),
    ] {
        let resp = post_raw(&app, None, &[("authorization", authorization.as_str())], ping.clone()).await;
        assert_unauthorized(&resp, what);
    }
    // Every method is behind the key, initialize and notifications included.
    for body in [
        req(json!(1), "initialize", json!({})),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        req(json!(1), "tools/list", json!({})),
    ] {
        let resp = post_raw(&app, Some(&revoked), &[], serde_json::to_vec(&body).unwrap()).await;
        assert_unauthorized(&resp, "revoked key");
    }
    // Even a body that is not JSON.
    let resp = post_raw(&app, None, &[], b"garbage".to_vec()).await;
    assert_unauthorized(&resp, "no key, garbage body");
}

#[tokio::test]
async fn a_read_only_key_gets_403_with_the_exact_error_body_on_every_write_tool() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("a report")).await;
    let (_, reader) = app.mint(&["feedback:read"]).await;
    let arguments = [
        ("create_report", json!({"message": "hi"})),
        ("create_room", json!({"artifact_id": "room"})),
        ("set_status", json!({"id": report.id, "status": "fixed"})),
        ("add_comment", json!({"report_id": report.id, "text": "hi"})),
    ];
    for (i, (name, args)) in arguments.iter().enumerate() {
        for id in [json!(i), json!(format!("req-{i}"))] {
            let resp =
                post(&app, &reader, req(id.clone(), "tools/call", json!({"name": name, "arguments": args}))).await;
            assert_eq!(resp.status.as_u16(), 403, "{name}: {}", resp.text);
            assert_json_content_type(&resp);
            assert_eq!(
                resp.body,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32003, "message": "forbidden: this key lacks feedback:write"}}),
                "{name}"
            );
            assert!(resp.headers.get(header::WWW_AUTHENTICATE).is_none(), "no step-up challenge on 403");
        }
    }
    // Even with invalid arguments, the scope is checked first.
    let resp = post(&app, &reader, req(json!(9), "tools/call", json!({"name": "set_status", "arguments": {}}))).await;
    expect_error(&resp, 403, &json!(9), -32003);
    // Nothing was written.
    assert_eq!(app.store.get_report(&report.id).await.unwrap().unwrap().status, "new");
    assert!(app.store.list_comments(&report.id).await.unwrap().is_empty());
    assert!(app.store.get_room(app.pid(), "room").await.unwrap().is_none());
    // The read tools and introduce work for this key.
    assert!(!tool(&app, &reader, "list_reports", json!({})).await.is_error);
    assert!(!tool(&app, &reader, "get_report", json!({"id": report.id})).await.is_error);
    assert!(!tool(&app, &reader, "introduce", json!({"agentName": "Reader"})).await.is_error);
}

#[tokio::test]
async fn a_key_without_feedback_read_gets_403_on_the_read_tools_and_introduce_needs_no_scope() {
    let app = TestApp::new().await;
    let report = app.seed(Seed::text("a report")).await;
    let (_, writer) = app.mint(&["feedback:write"]).await;
    for (name, args) in [("list_reports", json!({})), ("get_report", json!({"id": report.id}))] {
        let resp = post(&app, &writer, req(json!(1), "tools/call", json!({"name": name, "arguments": args}))).await;
        assert_eq!(resp.status.as_u16(), 403, "{name}");
        assert_eq!(
            resp.body,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32003, "message": "forbidden: this key lacks feedback:read"}})
        );
    }
    // A write-only key may still write.
    assert!(!tool(&app, &writer, "set_status", json!({"id": report.id, "status": "triaged"})).await.is_error);

    let (key_id, unrelated) = app.mint(&["channel:read"]).await;
    let out = tool(&app, &unrelated, "introduce", json!({"agentName": "Scopeless bot"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(app.store.get_key(&key_id).await.unwrap().unwrap().agent_name.as_deref(), Some("Scopeless bot"));
    for name in TOOL_NAMES.iter().filter(|n| **n != "introduce") {
        let resp = post(&app, &unrelated, req(json!(2), "tools/call", json!({"name": name, "arguments": {}}))).await;
        assert_eq!(resp.status.as_u16(), 403, "{name} without its scope");
        expect_error(&resp, 403, &json!(2), -32003);
    }
    // The setup token (`*`) satisfies every scope.
    assert!(!tool(&app, &app.token, "list_reports", json!({})).await.is_error);
}

#[tokio::test]
async fn over_the_rate_limit_the_endpoint_answers_429_with_retry_after() {
    let config = svc_server::ServerConfig { rate_limits: true, key_requests_per_minute: 3, ..Default::default() };
    let app = TestApp::with_config(config).await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let (_, other) = app.mint(&["feedback:read"]).await;
    for i in 0..3 {
        let resp = post(&app, &key, req(json!(i), "ping", json!({}))).await;
        assert_eq!(resp.status.as_u16(), 200, "request {i} is within the limit");
    }
    let resp = post(&app, &key, req(json!(3), "ping", json!({}))).await;
    assert_eq!(resp.status.as_u16(), 429, "{}", resp.text);
    let retry_after: u64 = resp.headers[header::RETRY_AFTER].to_str().unwrap().parse().expect("Retry-After seconds");
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    assert_eq!(resp.body["jsonrpc"], json!("2.0"));
    assert!(resp.body["error"]["message"].as_str().unwrap().contains("rate limit"), "{}", resp.text);
    // The limit is per key.
    let resp = post(&app, &other, req(json!(1), "ping", json!({}))).await;
    assert_eq!(resp.status.as_u16(), 200);
}

#[tokio::test]
async fn a_browser_page_of_a_foreign_origin_is_refused_with_403_and_a_missing_key_is_still_401() {
    let config = svc_server::ServerConfig {
        public_url: "https://feedback.example.com".into(),
        mcp_allowed_origins: vec!["https://inspector.example.org".into()],
        ..no_rate_limits()
    };
    let app = TestApp::with_config(config).await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let base = serve(&app).await;
    let client = reqwest::Client::new();
    let ping = serde_json::to_vec(&req(json!(1), "ping", json!({}))).unwrap();
    let post = |origin: Option<&'static str>, key: Option<String>| {
        let mut request =
            client.post(format!("{base}/mcp")).header("content-type", "application/json").body(ping.clone());
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        request.send()
    };

    // A rebinding page: refused although its key is valid; the tool never runs.
    let refused = post(Some("https://attacker.example"), Some(key.clone())).await.unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    assert!(refused.headers().get("www-authenticate").is_none(), "no OAuth step-up for an origin refusal");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], json!(-32003));
    // Without a key the answer is the OAuth challenge, whatever the origin.
    let unauthenticated = post(Some("https://attacker.example"), None).await.unwrap();
    assert_eq!(unauthenticated.status().as_u16(), 401);

    // No Origin (CLIs, server-side clients), the service's own, a loopback page and a listed one pass.
    for origin in [
        None,
        Some("https://feedback.example.com"),
        Some("http://localhost:6274"),
        Some("http://127.0.0.1:3000"),
        Some("https://inspector.example.org"),
    ] {
        let resp = post(origin, Some(key.clone())).await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "origin {origin:?}");
    }
}
