//! `svc migrate` from SQLite and a blob folder to PostgreSQL and S3 (moto), interrupted and
//! resumed, then the service started there: everything filed through the public APIs is found the
//! same through REST, the tool endpoint and the dashboard, with the old keys and passwords. Needs
//! `SVC_TEST_POSTGRES_URL` and `SVC_TEST_S3_ENDPOINT` (the test command sets both).

use crate::accounts::{client, sign_in};
use crate::durability::png;
use crate::instances::{drop_schema, fresh_schema, json_with, multipart_screenshot, multipart_upload, postgres_and_s3};
use crate::support::{Server, run_cli_with};
use reqwest::header::COOKIE;
use serde_json::json;
use sqlx::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installation_moves_to_postgresql_and_s3_whole() {
    let http = client();
    let Some((postgres, s3, bucket)) = postgres_and_s3(&http).await else { return };
    let dirs = tempfile::tempdir().unwrap();
    let data = dirs.path().join("sqlite");
    let env = [("SVC_WEBHOOK_ALLOW_PRIVATE", "true")];

    // An installation on SQLite, filled through its public APIs.
    let sqlite = Server::start(&data, &env);
    let boot = sqlite.bootstrap.clone().unwrap();
    let project_key = ("x-svc-project-key", boot.public_key.as_str());
    let setup = format!("Bearer {}", boot.setup_token);
    let setup = ("authorization", setup.as_str());
    let api = |server: &Server, rest: &str| server.url(&format!("/api/v1/projects/{}{rest}", boot.project_id));
    let image = png(0xc0ffee);
    let (content_type, body) = multipart_screenshot(&image);
    let upload = http.post(sqlite.url("/ingest/blob")).header("content-type", content_type).body(body);
    let screenshot = json_with(upload, project_key).await.1["blobId"].as_str().unwrap().to_string();
    let log = b"12:00:01 cart total 19.999 rounded to 19.99\n".repeat(40);
    let (content_type, body) = multipart_upload("file", "cart.log", "text/plain", &log);
    let upload = http.post(sqlite.url("/ingest/blob")).header("content-type", content_type).body(body);
    let file = json_with(upload, project_key).await.1["blobId"].as_str().unwrap().to_string();
    let mut reports = Vec::new();
    for n in 0..12 {
        let mut blocks = vec![json!({"type": "text", "text": format!("report {n}: the total is wrong")})];
        if n == 0 {
            blocks.push(json!({"type": "screenshot", "blobId": screenshot}));
            blocks.push(json!({"type": "file", "blobId": file, "name": "cart.log"}));
        }
        let report =
            json!({"blocks": blocks, "context": {"artifactId": "preview-42", "url": "https://shop.example/cart"}});
        let (status, filed) = json_with(http.post(sqlite.url("/ingest/report")).json(&report), project_key).await;
        assert_eq!(status, 200, "{filed}");
        reports.push(filed["reportId"].as_str().unwrap().to_string());
    }
    let room = json!({"artifactId": "preview-42", "title": "Preview 42", "meta": {"tool": "vercel"}});
    assert!(json_with(http.post(api(&sqlite, "/rooms")).json(&room), setup).await.0 < 300);
    let new_key = json!({"name": "triage agent", "scopes": ["feedback:read", "feedback:write"]});
    let minted = json_with(http.post(api(&sqlite, "/keys")).json(&new_key), setup).await.1;
    let agent_key = format!("Bearer {}", minted["key"].as_str().unwrap());
    let agent = ("authorization", agent_key.as_str());
    let comment = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_comment",
        "arguments": {"report_id": reports[0], "text": "Fixed in #12: rounding in the cart total.", "draft": false}}});
    let (status, commented) = json_with(http.post(sqlite.url("/mcp")).json(&comment), agent).await;
    assert_eq!((status, &commented["result"]["isError"]), (200, &json!(false)), "{commented}");
    let hook = json!({"url": "http://127.0.0.1:9/hooks", "events": ["report.created"]});
    let (status, webhook) = json_with(http.post(api(&sqlite, "/webhooks")).json(&hook), setup).await;
    assert_eq!(status, 201, "{webhook}");
    // One delivery in its log (the test event; refused, the address is private): on SQLite it is
    // kept in the deliveries' file beside the database, which the copy reads too.
    let deliveries = format!("/webhooks/{}/deliveries", webhook["id"].as_str().unwrap());
    let test = format!("/webhooks/{}/test", webhook["id"].as_str().unwrap());
    assert_eq!(json_with(http.post(api(&sqlite, &test)), setup).await.0, 200);
    assert!(data.join("svc.db-deliveries").exists());
    let storage = [("SVC_RATE_LIMIT", "off")];
    let password = "correct horse battery staple";
    let (made, out, err) = run_cli_with(
        &data,
        &["user", "create", "--email", "ada@example.com", "--password-stdin", "--role", "owner"],
        Some(&format!("{password}\n")),
        &storage,
    );
    assert!(made, "{out}{err}");
    // An agent connected with OAuth (registration, consent in the dashboard, code for token).
    let cookie = sign_in(&http, &sqlite, "ada@example.com", password).await.expect("signed in");
    let oauth_token = connect_agent(&http, &sqlite, &cookie, &format!("project:{}", boot.project_id)).await;
    let oauth = format!("Bearer {oauth_token}");
    let oauth = ("authorization", oauth.as_str());
    let list =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_reports", "arguments": {}}});
    let listed = json_with(http.post(sqlite.url("/mcp")).json(&list), oauth).await;
    assert_eq!((listed.0, &listed.1["result"]["isError"]), (200, &json!(false)), "{}", listed.1);
    let before = json_with(http.get(api(&sqlite, "/feedback?limit=100")), setup).await.1;
    drop(sqlite);

    // Moved, once interrupted (two rows per batch, stopped after the first batch of a table) and
    // then resumed; the source is left as it was.
    let (database_url, schema) = fresh_schema(&postgres).await;
    let blobs_to = format!("s3://{bucket}/migrated-{schema}");
    let migrate = |extra: &[&str]| {
        let mut args = vec!["migrate", "--to", &database_url, "--blobs-to", &blobs_to, "--s3-endpoint", &s3];
        args.extend_from_slice(extra);
        run_cli_with(&data, &args, None, &storage)
    };
    let (ok, out, err) = migrate(&["--batch-rows", "2", "--stop-after-batches", "1"]);
    assert!(!ok && err.contains("run it again"), "the first run should stop early: {out}{err}");
    // Meanwhile a row it had copied already changed in the source (as if the service still ran):
    // the resumed run finds the difference, says so, and the next run copies that table again.
    let source_url = format!("sqlite://{}", data.join("svc.db").display());
    let mut source = sqlx::SqliteConnection::connect(&source_url).await.unwrap();
    sqlx::query("UPDATE audit_events SET actor_label = 'changed later' WHERE id = (SELECT min(id) FROM audit_events)")
        .execute(&mut source)
        .await
        .unwrap();
    source.close().await.unwrap();
    let (ok, out, err) = migrate(&["--batch-rows", "2"]);
    assert!(!ok && err.contains("differs from the source in audit_events"), "{out}{err}");
    assert!(out.lines().any(|line| line.starts_with("audit_events") && line.ends_with("DIFFERENT")), "{out}");
    let (ok, out, err) = migrate(&["--batch-rows", "2"]);
    assert!(ok, "svc migrate failed: {out}{err}");
    assert!(out.contains("Migration complete") && !out.contains("DIFFERENT"), "{out}");
    assert!(
        out.lines().any(|line| line.starts_with("reports") && line.contains(" 12 ") && line.ends_with("same")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|line| line.starts_with("webhook_deliveries") && line.contains(" 1 ") && line.ends_with("same")),
        "{out}"
    );
    // Run again on a complete copy: nothing left to do, and it says the same.
    let (ok, out, err) = migrate(&[]);
    assert!(
        !ok && err.contains("already holds an installation"),
        "a finished copy is not copied into again: {out}{err}"
    );

    // The service on PostgreSQL and S3.
    let moved_env = [
        ("SVC_DATABASE_URL", database_url.as_str()),
        ("SVC_BLOB_STORE", blobs_to.as_str()),
        ("SVC_S3_ENDPOINT", s3.as_str()),
    ];
    let moved = Server::start(&dirs.path().join("unused"), &moved_env);
    assert!(moved.bootstrap.is_none(), "nothing is set up again: {:?}", moved.stdout_lines);
    let after = json_with(http.get(api(&moved, "/feedback?limit=100")), setup).await.1;
    assert_eq!(after["items"], before["items"], "REST lists the same reports, the same way");
    let blob = http.get(api(&moved, &format!("/blobs/{screenshot}"))).header(setup.0, setup.1).send().await.unwrap();
    assert_eq!(blob.bytes().await.unwrap().as_ref(), image.as_slice(), "the screenshot, from S3");
    let attached = http.get(api(&moved, &format!("/blobs/{file}"))).header(setup.0, setup.1).send().await.unwrap();
    assert_eq!(attached.bytes().await.unwrap().as_ref(), log.as_slice(), "the attached file, from S3");
    let rooms = json_with(http.get(api(&moved, "/rooms")), agent).await.1;
    assert_eq!(rooms["items"][0]["count"], json!(12), "room counts are rebuilt: {rooms}");
    let hooks = json_with(http.get(api(&moved, "/webhooks")), setup).await.1;
    assert_eq!(hooks["items"][0]["id"], webhook["id"], "{hooks}");
    let log = json_with(http.get(api(&moved, &deliveries)), setup).await.1;
    let tested = log["items"].as_array().and_then(|items| items.iter().find(|d| d["event"] == "webhook.test"));
    let tested = tested.unwrap_or_else(|| panic!("the delivery log moved too: {log}"))["id"].clone();
    // The agent's key reads the report and its comment through the tool endpoint; search finds it.
    let read = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_report", "arguments": {"report_id": reports[0]}}});
    let document = json_with(http.post(moved.url("/mcp")).json(&read), agent).await.1;
    let text = document["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("rounding in the cart total") && text.contains("report 0"), "{document}");
    let listed = json_with(http.post(moved.url("/mcp")).json(&list), oauth).await;
    assert_eq!(
        (listed.0, &listed.1["result"]["isError"]),
        (200, &json!(false)),
        "the OAuth connection still works: {}",
        listed.1
    );
    let found = json_with(http.get(api(&moved, "/feedback?q=total")), agent).await.1;
    assert_eq!(found["items"].as_array().map(Vec::len), Some(12), "the search index is rebuilt: {found}");
    // The person signs in with the same password and sees the reports.
    let kept = http.get(moved.url("/?view=all")).header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(kept.status(), 200, "the session made before the move is still signed in");
    let cookie = sign_in(&http, &moved, "ada@example.com", password).await.expect("the old password works");
    let inbox = http.get(moved.url("/?view=all")).header(COOKIE, &cookie).send().await.unwrap().text().await.unwrap();
    assert!(inbox.contains("report 11: the total is wrong"), "the dashboard lists the moved reports");
    // New reports keep their ids apart from the moved ones (the feed's sequence moved on).
    let late = json!({"blocks": [{"type": "text", "text": "after the move"}]});
    assert_eq!(json_with(http.post(moved.url("/ingest/report")).json(&late), project_key).await.0, 200);
    let moved_list = json_with(http.get(api(&moved, "/feedback?limit=100")), setup).await.1;
    drop(moved);

    // And back to SQLite and a folder, as a small installation would come back.
    let back = dirs.path().join("back");
    let to = format!("sqlite://{}", back.join("svc.db").display());
    let (ok, out, err) = run_cli_with(&dirs.path().join("unused"), &["migrate", "--to", &to], None, &moved_env);
    assert!(ok && out.contains("Migration complete"), "{out}{err}");
    let returned = Server::start(&back, &[]);
    assert!(returned.bootstrap.is_none());
    let listed = json_with(http.get(api(&returned, "/feedback?limit=100")), agent).await.1;
    assert_eq!(listed["items"], moved_list["items"], "the same 13 reports on SQLite again");
    let blob = http.get(api(&returned, &format!("/blobs/{screenshot}"))).header(setup.0, setup.1).send().await.unwrap();
    assert_eq!(blob.bytes().await.unwrap().as_ref(), image.as_slice(), "the screenshot, in the folder again");
    // (With the report filed after the move, if the moved service's delivery got to it.)
    let log = json_with(http.get(api(&returned, &deliveries)), setup).await.1;
    assert!(log["items"].as_array().is_some_and(|items| items.iter().any(|d| d["id"] == tested)), "{log}");
    assert!(back.join("svc.db-deliveries").exists(), "in its own file once the service opened the copy");
    drop(returned);
    drop_schema(&postgres, &schema).await;
}

/// An agent's OAuth connection, as a client makes it: registration, the signed-in person's consent
/// (read access to `grant`), the code exchanged with its PKCE verifier. Returns the access token.
async fn connect_agent(http: &reqwest::Client, server: &Server, cookie: &str, grant: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let redirect = "http://127.0.0.1:9999/callback";
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-migrate";
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier));
    let registration = json!({"client_name": "Claude Code", "redirect_uris": [redirect]});
    let registered: serde_json::Value =
        http.post(server.url("/register")).json(&registration).send().await.unwrap().json().await.unwrap();
    let client_id = registered["client_id"].as_str().expect("a client id").to_string();
    let resource = server.url("/mcp");
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", redirect),
            ("state", "st-1"),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", resource.as_str()),
            ("scope", "feedback:read"),
        ])
        .finish();
    let page = http.get(server.url(&format!("/authorize?{query}"))).header(COOKIE, cookie).send().await.unwrap();
    let page = page.text().await.unwrap();
    let hidden = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let start =
            page.find(&marker).unwrap_or_else(|| panic!("no {name} on the consent page: {page}")) + marker.len();
        page[start..start + page[start..].find('"').unwrap()].to_string()
    };
    let form = crate::support::form(&[
        ("_csrf", &hidden("_csrf")),
        ("request", &hidden("request")),
        ("grant", grant),
        ("access", "read"),
        ("decision", "approve"),
    ]);
    let answered = http
        .post(server.url("/authorize"))
        .header(COOKIE, cookie)
        .header("origin", &server.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    let location = crate::accounts::location(&answered);
    let code = url::Url::parse(&location)
        .unwrap_or_else(|_| panic!("consent answered {}: {location}", answered.status()))
        .query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, value)| value.into_owned())
        .expect("a code");
    let exchange = crate::support::form(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", redirect),
        ("client_id", &client_id),
        ("code_verifier", verifier),
        ("resource", &resource),
    ]);
    let token: serde_json::Value = http
        .post(server.url("/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(exchange)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    token["access_token"].as_str().unwrap_or_else(|| panic!("no access token: {token}")).to_string()
}

/// A copy between two SQLite databases, and a source that does not exist, are refused plainly.
#[test]
fn migrate_refuses_two_databases_of_one_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = crate::support::run_cli(dir.path(), &["project", "list"], None);
    assert!(ok, "{out}{err}");
    let other = format!("sqlite://{}", dir.path().join("other/svc.db").display());
    let (ok, _, err) = crate::support::run_cli(dir.path(), &["migrate", "--to", &other], None);
    assert!(!ok && err.contains("between SQLite and PostgreSQL; the source and --to are both SQLite"), "{err}");
    let postgres = "postgres://svc@db.invalid/svc";
    let (ok, _, err) = crate::support::run_cli(&dir.path().join("none"), &["migrate", "--to", postgres], None);
    assert!(!ok && err.contains("nothing to migrate"), "{err}");
}
