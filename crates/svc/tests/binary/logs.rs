//! What `svc serve` writes to its log when the log is a pipe or a file: one line per event whatever
//! a request carried, and no terminal colour codes.

use crate::support::svc_binary;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test]
async fn request_text_cannot_forge_log_lines_and_a_pipe_gets_no_colour() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(svc_binary())
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args(["--bind", "127.0.0.1:0"])
        .env_remove("SVC_LOG_FORMAT")
        .env_remove("SVC_DATABASE_URL")
        .env("SVC_RATE_LIMIT", "off")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("svc starts");
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    // The human-readable "svc listening" line carries the address.
    let mut seen = Vec::new();
    let address = loop {
        let line = lines_rx.recv_timeout(Duration::from_secs(60)).expect("svc logs that it listens");
        seen.push(line.clone());
        if line.contains("svc listening") {
            let address = line.split("address=").nth(1).expect("an address field").split_whitespace().next().unwrap();
            break address.trim_matches('"').to_string();
        }
    };

    let forged = "\nERROR svc: forged line\u{1b}[31m\u{7}";
    let report = serde_json::json!({"csp-report": {
        "document-uri": format!("http://{address}/{forged}"),
        "violated-directive": format!("script-src{forged}"),
        "blocked-uri": "inline",
    }});
    let answer = reqwest::Client::new()
        .post(format!("http://{address}/dashboard/csp-report"))
        .header("content-type", "application/csp-report")
        .body(report.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 204);
    // The report is logged as a warning; wait for it.
    let logged = loop {
        let line = lines_rx.recv_timeout(Duration::from_secs(30)).expect("the report is logged");
        seen.push(line.clone());
        if line.contains("content security policy violation") {
            break line;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    while let Ok(line) = lines_rx.recv_timeout(Duration::from_millis(200)) {
        seen.push(line);
    }
    assert!(logged.contains("forged line"), "the report's fields are logged: {logged}");
    assert!(logged.contains("\\n"), "the line break is escaped: {logged}");
    for line in &seen {
        assert!(!line.starts_with("ERROR svc: forged line"), "a request forged a log line: {seen:#?}");
        assert!(!line.contains('\u{1b}') && !line.contains('\u{7}'), "control bytes in the log: {line:?}");
    }
}
