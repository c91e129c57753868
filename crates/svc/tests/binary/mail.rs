//! `svc serve`'s mail settings: the SMTP server it uses is logged without its password, a
//! malformed `SVC_SMTP_URL` or sender stops it with a message that never repeats the password, and
//! `--help` never shows the variable's value.

use crate::support::{Server, run_cli_with};

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
