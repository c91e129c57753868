//! Tool arguments (issue 17): the specification's names, their other spelling (camelCase for
//! snake_case and back) and `id`/`report_id`/`reportId` for a report all work; any other argument
//! is an `isError` result naming it and the closest valid name, never silently ignored; and each
//! tool's description says what it returns.

use crate::common::*;
use crate::mcp_support::*;
use serde_json::{Value, json};

fn rw() -> [&'static str; 2] {
    ["feedback:read", "feedback:write"]
}

#[tokio::test]
async fn every_alias_works_like_the_name_it_stands_for() {
    let app = TestApp::new().await;
    let (key_id, key) = app.mint(&rw()).await;

    // introduce: agent_name for agentName.
    assert!(!tool(&app, &key, "introduce", json!({"agent_name": "Aliased agent"})).await.is_error);
    assert_eq!(app.store.get_key(&key_id).await.unwrap().unwrap().agent_name.as_deref(), Some("Aliased agent"));

    // create_room: artifactId for artifact_id.
    let room = tool_json(&app, &key, "create_room", json!({"artifactId": "preview-9", "title": "Preview 9"})).await;
    assert_eq!((room["artifactId"].clone(), room["created"].clone()), (json!("preview-9"), json!(true)));

    // create_report: channel_key for channelKey.
    let filed = tool_json(&app, &key, "create_report", json!({"message": "Aliased", "channel_key": "idea"})).await;
    assert_eq!(filed["channelKey"], json!("idea"));
    let id = filed["id"].as_str().unwrap().to_string();
    app.seed(Seed::text("in the room").artifact("preview-9").channel("bug")).await;

    // list_reports: channel_key and artifact_id for channelKey and artifactId.
    let ideas = tool_json(&app, &key, "list_reports", json!({"channel_key": "idea"})).await;
    assert_eq!(ideas.as_array().unwrap().len(), 1);
    assert_eq!(ideas[0]["id"], json!(id));
    let room_reports = tool_json(&app, &key, "list_reports", json!({"artifact_id": "preview-9"})).await;
    assert_eq!(room_reports.as_array().unwrap().len(), 1);

    // get_report and set_status: report_id and reportId for id.
    for name in ["id", "report_id", "reportId"] {
        let out = tool(&app, &key, "get_report", json!({name: id})).await;
        assert!(!out.is_error && out.text.starts_with("# Aliased"), "{name}: {}", out.text);
        let changed = tool_json(&app, &key, "set_status", json!({name: id, "status": "triaged"})).await;
        assert_eq!(changed["id"], json!(id), "{name}");
    }
    // add_comment: id and reportId for report_id.
    for name in ["report_id", "id", "reportId"] {
        let comment =
            tool_json(&app, &key, "add_comment", json!({name: &id[18..], "text": format!("via {name}")})).await;
        assert_eq!(comment["reportId"], json!(id), "{name}");
    }
    // The same value under two spellings is fine; two values are a mistake named as such.
    assert!(!tool(&app, &key, "get_report", json!({"id": id, "reportId": id})).await.is_error);
    let out = tool(&app, &key, "add_comment", json!({"report_id": id, "id": "abcdef", "text": "x"})).await;
    out.error_naming(&["report_id", "two spellings", "give it once"]);
}

#[tokio::test]
async fn an_unknown_argument_is_an_error_naming_it_and_the_closest_valid_name() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&rw()).await;
    let report = app.seed(Seed::text("one").channel("idea")).await;
    let id = report.id.as_str();
    let cases: [(&str, Value, &str, &str); 9] = [
        // The case: this used to list every report, unfiltered.
        ("list_reports", json!({"channel": "bug"}), "channel", "channelKey"),
        ("list_reports", json!({"statuses": ["new"]}), "statuses", "status"),
        ("get_report", json!({"id": id, "verbose": true}), "verbose", ""),
        ("get_report", json!({"reportID": id}), "reportID", "id"),
        ("set_status", json!({"id": id, "state": "fixed"}), "state", "status"),
        ("add_comment", json!({"report_id": id, "txt": "hi"}), "txt", "text"),
        ("create_room", json!({"artifact": "x"}), "artifact", "artifact_id"),
        ("create_report", json!({"message": "x", "channel": "bug"}), "channel", "channelKey"),
        ("introduce", json!({"name": "Bot"}), "name", "agentName"),
    ];
    for (tool_name, arguments, unknown, closest) in cases {
        let out = tool(&app, &key, tool_name, arguments.clone()).await;
        let text = out.error_naming(&[&format!("unknown argument \"{unknown}\""), tool_name]);
        if !closest.is_empty() {
            assert!(text.contains(&format!("did you mean {closest}?")), "{tool_name} {arguments}: {text}");
        } else {
            assert!(text.contains("did you mean "), "{text}");
        }
    }
    // Nothing was done by a refused call.
    assert_eq!(app.store.get_report(id).await.unwrap().unwrap().status, "new");
    assert!(tool_json(&app, &key, "list_reports", json!({})).await.as_array().unwrap().len() == 1);
    // Names are not guessed from case: `ChannelKey` is unknown too, and the error says what is known.
    let out = tool(&app, &key, "list_reports", json!({"ChannelKey": "bug"})).await;
    let text = out.error_naming(&["ChannelKey", "did you mean channelKey?"]);
    for name in ["artifactId", "channelKey", "limit", "status"] {
        assert!(text.contains(name), "the valid names are listed: {text}");
    }
}

#[tokio::test]
async fn each_tool_says_what_it_returns() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let listed = rpc(&app, &key, "tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 7);
    for tool in tools {
        let description = tool["description"].as_str().unwrap();
        assert!(description.contains("Returns"), "{}: {description}", tool["name"]);
    }
}
