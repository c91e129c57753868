//! `svc serve`'s mail settings: the SMTP server it uses is logged without its password, a
//! malformed `SVC_SMTP_URL` or sender stops it with a message that never repeats the password, and
//! `--help` never shows the variable's value; a reporter's mail that follows a status change is
//! sent once even when the server is killed between the two.

use crate::support::{Server, run_cli_with};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn serve_logs_its_smtp_server_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            ("SVC_SMTP_URL", "smtp://mailer:hunter2-Secret@127.0.0.1:2525?tls=none"),
            ("SVC_MAIL_FROM", "Feedback <fb@example.com>"),
        ],
    );
    let logged = server.stdout_lines.join("\n");
    assert!(logged.contains("127.0.0.1:2525 (no TLS, user mailer)"), "{logged}");
    assert!(!logged.contains("hunter2"), "{logged}");
}

#[test]
fn serve_without_smtp_says_mail_waits_in_the_outbox() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[("SVC_SMTP_URL", "")]);
    let logged = server.stdout_lines.join("\n");
    assert!(logged.contains("mail waits in the dashboard's outbox"), "{logged}");
}

#[test]
fn malformed_mail_settings_stop_serve_without_showing_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let serve = ["serve", "--bind", "127.0.0.1:0"];
    let (ok, stdout, stderr) = run_cli_with(
        dir.path(),
        &serve,
        None,
        &[("SVC_SMTP_URL", "smtp://mailer:hunter2-Secret@mail.example.com?tls=maybe")],
    );
    assert!(!ok, "{stdout}");
    assert!(stderr.contains("SVC_SMTP_URL: tls must be required, opportunistic or none"), "{stderr}");
    assert!(!stderr.contains("hunter2") && !stdout.contains("hunter2"));
    let (ok, _, stderr) = run_cli_with(dir.path(), &serve, None, &[("SVC_MAIL_FROM", "not an address")]);
    assert!(!ok);
    assert!(stderr.contains("SVC_MAIL_FROM"), "{stderr}");

    let (ok, stdout, _) =
        run_cli_with(dir.path(), &["serve", "--help"], None, &[("SVC_SMTP_URL", "smtp://mailer:hunter2-Secret@h")]);
    assert!(ok);
    assert!(stdout.contains("SVC_SMTP_URL") && !stdout.contains("hunter2"), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// Mail that follows a change survives a kill between the two.

#[path = "../../../svc-server/tests/smtp/sink.rs"]
mod sink;

const ANN: &str = "ann@example.com";

/// The mails the sink received whose subject contains `words`.
fn received_about(sink: &sink::SmtpSink, words: &str) -> Vec<Value> {
    sink.received().into_iter().filter(|mail| mail["subject"].as_str().unwrap_or_default().contains(words)).collect()
}

/// Sends a request and reads its JSON answer.
async fn answer(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Waits (a minute at most) for a mail whose subject contains `words`.
fn wait_for_mail(sink: &sink::SmtpSink, words: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(mail) = received_about(sink, words).pop() {
            return mail;
        }
        assert!(Instant::now() < deadline, "no mail about {words:?}; received {:?}", sink.received());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Killed with SIGKILL right after a report is marked fixed and before the reporter is told: the
/// change's event waits in the feed, and the next start mails the reporter, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_change_mails_its_reporter_once_across_a_kill() {
    let Some(sink) = sink::SmtpSink::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let smtp = sink.url(None);
    let with_background = |on: &'static str| [("SVC_SMTP_URL", smtp.as_str()), ("SVC_BACKGROUND_WORK", on)];
    let http = reqwest::Client::new();

    // A reporter signs in by email (the code comes through the SMTP server) and files two reports.
    let server = Server::start(&data, &with_background("on"));
    let boot = server.bootstrap.clone().expect("the first start prints the bootstrap block");
    let (bearer, project) = (format!("Bearer {}", boot.setup_token), format!("/api/v1/projects/{}", boot.project_id));
    let patched = http
        .patch(server.url(&project))
        .header("authorization", &bearer)
        .json(&json!({"reporterAuth": {"mode": "email"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let ingest = |path: &str| http.post(server.url(path)).header("x-svc-project-key", &boot.public_key);
    assert_eq!(ingest("/auth/reporter/email").json(&json!({"email": ANN})).send().await.unwrap().status(), 200);
    let code_mail = wait_for_mail(&sink, "code");
    let code: String = code_mail["body"]
        .as_str()
        .unwrap()
        .lines()
        .find(|line| line.trim().len() == 7 && line.chars().filter(char::is_ascii_digit).count() == 6)
        .expect("a code line")
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let signed_in = answer(ingest("/auth/reporter/email/verify").json(&json!({"email": ANN, "code": code}))).await;
    let token = signed_in["token"].as_str().expect("a reporter token").to_string();
    let mut reports = Vec::new();
    for words in ["Save fails", "Logo is blurry"] {
        let body = json!({"blocks": [{"type": "text", "text": words}]});
        let filed = answer(ingest("/ingest/report").header("x-svc-identity", &token).json(&body)).await;
        reports.push(filed["reportId"].as_str().expect("a report id").to_string());
    }
    drop(server);

    // An instance without background work marks the first report fixed and is killed at once.
    let server = Server::start(&data, &with_background("off"));
    let fixed = |server: &Server, id: &str| {
        http.patch(server.url(&format!("{project}/feedback/{id}")))
            .header("authorization", &bearer)
            .json(&json!({"status": "fixed"}))
            .send()
    };
    assert_eq!(fixed(&server, &reports[0]).await.unwrap().status(), 200);
    drop(server);
    assert!(received_about(&sink, "Fixed").is_empty(), "nothing mailed yet");

    // The next start reads the change from the feed and mails Ann.
    let server = Server::start(&data, &with_background("on"));
    let mail = wait_for_mail(&sink, "Fixed: Save fails");
    assert_eq!(mail["rcpt_tos"], json!([ANN]));
    assert!(mail["body"].as_str().unwrap().contains("/reporter/confirm?token="), "{mail}");
    let events =
        answer(http.get(server.url(&format!("{project}/events?after=0"))).header("authorization", &bearer)).await;
    let changed: Vec<&Value> =
        events["items"].as_array().unwrap().iter().filter(|e| e["type"] == "report.status_changed").collect();
    assert_eq!(changed.len(), 1, "{events}");
    assert_eq!(changed[0]["data"], json!({"from": "new", "to": "fixed"}));
    assert_eq!(changed[0]["by"]["kind"], "agent");

    // A later change is mailed after it; the first was mailed once.
    assert_eq!(fixed(&server, &reports[1]).await.unwrap().status(), 200);
    wait_for_mail(&sink, "Fixed: Logo is blurry");
    assert_eq!(received_about(&sink, "Fixed: Save fails").len(), 1);
}
