//! The spec's six-step agent self-setup flow, against a running `svc serve`, ending with the setup
//! token refused.

use crate::support::Server;
use serde_json::{Value, json};

#[tokio::test]
async fn agent_self_setup_flow_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let boot = server.bootstrap.clone().expect("first start prints the bootstrap block");
    assert!(boot.public_key.starts_with("pr_") && boot.setup_token.starts_with("pr_sk_"));
    assert!(boot.embed.contains(&format!("/v1/svc/{}.js", boot.public_key)));
    let http = reqwest::Client::new();
    let token = boot.setup_token.clone();
    let auth = format!("Bearer {token}");

    // 1. Who am I?
    let me: Value =
        http.get(server.url("/api/v1/me")).header("authorization", &auth).send().await.unwrap().json().await.unwrap();
    let project_id = me["projectId"].as_str().unwrap().to_string();
    assert_eq!(project_id, boot.project_id);
    assert_eq!(me["projectKey"], boot.public_key);
    assert_eq!(me["scopes"], json!(["*"]));
    let key_id = me["keyId"].as_str().unwrap().to_string();

    // 2. Configure the project.
    let patched = http
        .patch(server.url(&format!("/api/v1/projects/{project_id}")))
        .header("authorization", &auth)
        .json(&json!({"urlPatterns": ["http://localhost:3000/*"], "defaultChannelKey": "idea",
                      "widgetConfig": {"mascot": "owl", "anchor": "bottom-right"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let project: Value = patched.json().await.unwrap();
    assert_eq!(project["defaultChannelKey"], "idea");
    assert_eq!(project["widgetConfig"]["mascot"], "owl");

    // 3. Add a channel next to bug, idea, question.
    let created = http
        .post(server.url(&format!("/api/v1/projects/{project_id}/channels")))
        .header("authorization", &auth)
        .json(&json!({"key": "checkout", "name": "Checkout", "color": "#12a594", "mascot": "fox"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let channels: Value = http
        .get(server.url(&format!("/api/v1/projects/{project_id}/channels")))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<&str> = channels["items"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["bug", "idea", "question", "checkout"]);

    // 4. The embed snippet uses the public key; a report through ingest lands in the project.
    let report = http
        .post(server.url("/ingest/report"))
        .header("x-svc-project-key", &boot.public_key)
        .json(&json!({"blocks": [{"type": "text", "text": "The save button does nothing"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(report.status(), 200);

    // 5. Mint the operational key.
    let minted = http
        .post(server.url(&format!("/api/v1/projects/{project_id}/keys")))
        .header("authorization", &auth)
        .json(&json!({"name": "triage agent", "scopes": ["feedback:read", "feedback:write"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(minted.status(), 201);
    let minted: Value = minted.json().await.unwrap();
    let operational = minted["key"].as_str().unwrap().to_string();
    assert!(operational.starts_with("pr_sk_"));

    // 6. The setup token revokes itself...
    let revoked = http
        .delete(server.url(&format!("/api/v1/projects/{project_id}/keys/{key_id}")))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let revoked: Value = revoked.json().await.unwrap();
    assert_eq!(revoked["id"], key_id.as_str());
    assert!(revoked["revokedAt"].is_string());

    // ...and is refused from now on, while the operational key reads the report.
    let refused = http.get(server.url("/api/v1/me")).header("authorization", &auth).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.json::<Value>().await.unwrap()["code"], "UNAUTHORIZED");
    let list: Value = http
        .get(server.url(&format!("/api/v1/projects/{project_id}/feedback")))
        .header("authorization", format!("Bearer {operational}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"][0]["title"], "The save button does nothing");
    assert_eq!(list["items"][0]["channelKey"], "idea");
}

#[tokio::test]
async fn second_start_prints_no_bootstrap_block_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let first = Server::start(dir.path(), &[]);
    let boot = first.bootstrap.clone().unwrap();
    drop(first);
    let second = Server::start(dir.path(), &[]);
    assert!(second.bootstrap.is_none(), "bootstrap printed again: {:?}", second.stdout_lines);
    let me = reqwest::Client::new()
        .get(second.url("/api/v1/me"))
        .header("authorization", format!("Bearer {}", boot.setup_token))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let http = reqwest::Client::new();
    for path in ["/healthz", "/readyz"] {
        let answer: Value = http.get(server.url(path)).send().await.unwrap().json().await.unwrap();
        assert_eq!(answer, json!({"ok": true}), "{path}");
    }
    let boot = server.bootstrap.clone().unwrap();
    let _ =
        http.get(server.url("/api/v1/me")).header("authorization", format!("Bearer {}", boot.setup_token)).send().await;
    http.post(server.url("/ingest/report"))
        .header("x-svc-project-key", &boot.public_key)
        .json(&json!({"blocks": [{"type": "text", "text": "hello"}]}))
        .send()
        .await
        .unwrap();
    let metrics = http.get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(r#"svc_http_requests_total{method="GET",route="/api/v1/me",status="200"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains("svc_http_request_duration_seconds_bucket{method=\"POST\",route=\"/ingest/report\""));
    assert!(metrics.contains("svc_reports_created_total 1"));
    // Keys never become labels: paths are recorded by their route template.
    assert!(!metrics.contains(&boot.setup_token));
}

#[cfg(unix)]
#[test]
fn sigterm_stops_gracefully_with_exit_code_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "svc did not stop after SIGTERM");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[tokio::test]
async fn json_logs_carry_no_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("stderr.log");
    let data = dir.path().join("data");
    let log = std::fs::File::create(&log_path).unwrap();
    // Port 0: the OS picks the port, and the bootstrap block's embed snippet names it (stderr goes to
    // the log file whole, so the address is read from stdout, as the end-to-end runners do).
    let mut child = std::process::Command::new(crate::support::svc_binary())
        .args(["serve", "--data-dir"])
        .arg(&data)
        .args(["--bind", "127.0.0.1:0"])
        .env("SVC_LOG_FORMAT", "json")
        .env("RUST_LOG", "debug")
        .env_remove("SVC_DATABASE_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // The bootstrap block, then the first-owner link.
    let (boot, setup_link) = loop {
        let mut line = String::new();
        use std::io::BufRead;
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no bootstrap block and setup link: {lines:?}");
        lines.push(line.trim_end().to_string());
        if let Some(link) = line.strip_prefix("First account:") {
            let boot = crate::support::parse_bootstrap(&lines).expect("the bootstrap block comes first");
            break (boot, link.trim().to_string());
        }
    };
    let base = crate::support::base_from_embed(&boot.embed).expect("the embed snippet names the address");
    let http = reqwest::Client::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while http.get(format!("{base}/readyz")).send().await.is_err() {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for _ in 0..3 {
        http.get(format!("{base}/api/v1/me"))
            .header("authorization", format!("Bearer {}", boot.setup_token))
            .send()
            .await
            .unwrap();
        http.get(format!("{base}/api/v1/me"))
            .header("authorization", "Bearer pr_sk_wrongwrongwrongwrong")
            .send()
            .await
            .unwrap();
    }
    // The setup link followed, the first account made and its session used.
    let token = setup_link.split("token=").nth(1).expect("a token in the link").to_string();
    assert_eq!(http.get(&setup_link).send().await.unwrap().status(), 200);
    let password = "correct horse battery";
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let created = browser
        .post(format!("{base}/setup"))
        .header("origin", &base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(crate::support::form(&[("token", &token), ("email", "ada@example.com"), ("password", password)]))
        .send()
        .await
        .unwrap();
    let cookie = crate::support::cookie_pair(created.headers()["set-cookie"].to_str().unwrap());
    assert_eq!(created.status(), 303);
    let signed_in = browser.get(format!("{base}/sign-in")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(signed_in.status(), 303, "the session works");
    let _ = child.kill();
    let _ = child.wait();
    let logs = std::fs::read_to_string(&log_path).unwrap();
    assert!(logs.lines().count() > 3, "expected request logs, got {logs}");
    for line in logs.lines() {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "not a JSON line: {line}");
    }
    assert!(!logs.contains(&boot.setup_token));
    assert!(!logs.contains("pr_sk_"), "a key reached the logs");
    assert!(!logs.contains(&token) && !logs.contains("svl_"), "a one-time link reached the logs");
    assert!(!logs.contains(&cookie) && !logs.contains("svs_"), "a session cookie reached the logs");
    assert!(!logs.contains(password), "a password reached the logs");
}
