//! The admin CLI: `svc project create` and `list`, `svc token setup`, `svc token org`, `svc project identity-secret`.

use crate::support::run_cli;
use serde_json::Value;

#[test]
fn project_create_json_prints_ids_and_a_working_setup_token() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = run_cli(dir.path(), &["project", "create", "--name", "Shop Web", "--json"], None);
    assert!(ok, "{stderr}");
    let created: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(created["projectId"].as_str().unwrap().len() == 24);
    assert!(created["projectKey"].as_str().unwrap().starts_with("pr_"));
    assert!(created["setupToken"].as_str().unwrap().starts_with("pr_sk_"));

    let project_id = created["projectId"].as_str().unwrap();
    let (ok, stdout, stderr) =
        run_cli(dir.path(), &["token", "setup", "--project", project_id, "--ttl", "120", "--json"], None);
    assert!(ok, "{stderr}");
    let token: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(token["key"].as_str().unwrap().starts_with("pr_sk_"));
    assert!(token["id"].as_str().unwrap().len() == 24);
    let expires = svc_core::time::parse_iso(token["expiresAt"].as_str().unwrap()).unwrap();
    let in_two_minutes = svc_core::time::now_ms() + 120_000;
    assert!((expires - in_two_minutes).abs() < 10_000, "expiresAt {expires} vs {in_two_minutes}");
}

#[test]
fn unknown_project_and_bad_ttl_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = run_cli(dir.path(), &["token", "setup", "--project", "0123456789abcdef01234567"], None);
    assert!(!ok);
    assert!(stderr.contains("no project"), "{stderr}");
    let (_, stdout, _) = run_cli(dir.path(), &["project", "create", "--name", "A", "--json"], None);
    let id = serde_json::from_str::<Value>(stdout.trim()).unwrap()["projectId"].as_str().unwrap().to_string();
    let (ok, _, stderr) = run_cli(dir.path(), &["token", "setup", "--project", &id, "--ttl", "5"], None);
    assert!(!ok);
    assert!(stderr.contains("expiresInSeconds") || stderr.contains("60"), "{stderr}");
}

#[test]
fn org_token_is_minted_for_an_existing_organization() {
    let dir = tempfile::tempdir().unwrap();
    run_cli(dir.path(), &["project", "create", "--name", "A", "--json"], None);
    let (ok, stdout, stderr) = run_cli(
        dir.path(),
        &["token", "org", "--org", "Default", "--scopes", "feedback:read,feedback:write", "--json"],
        None,
    );
    assert!(ok, "{stderr}");
    let key: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(key["key"].as_str().unwrap().starts_with("pr_sk_"));
    assert!(key["expiresAt"].is_null());
    let (ok, _, stderr) = run_cli(dir.path(), &["token", "org", "--org", "Nope", "--scopes", "feedback:read"], None);
    assert!(!ok);
    assert!(stderr.contains("no organization"), "{stderr}");
    let (ok, _, stderr) = run_cli(dir.path(), &["token", "org", "--org", "Default", "--scopes", "*"], None);
    assert!(!ok, "{stderr}");
}

#[tokio::test]
async fn identity_secret_set_rotate_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stdout, _) = run_cli(dir.path(), &["project", "create", "--name", "A", "--json"], None);
    let created: Value = serde_json::from_str(stdout.trim()).unwrap();
    let id = created["projectId"].as_str().unwrap().to_string();
    let store = svc_store::connect(&format!("sqlite://{}", dir.path().join("svc.db").display())).await.unwrap();

    let (ok, _, stderr) = run_cli(dir.path(), &["project", "identity-secret", "--project", &id], Some("short\n"));
    assert!(!ok && stderr.contains("at least 16"), "{stderr}");

    let secret = "a-very-long-identity-secret-from-stdin";
    let (ok, stdout, stderr) =
        run_cli(dir.path(), &["project", "identity-secret", "--project", &id], Some(&format!("{secret}\n")));
    assert!(ok, "{stderr}");
    assert!(!stdout.contains(secret), "the secret is never echoed");
    assert_eq!(store.get_project(&id).await.unwrap().unwrap().identity_secret.as_deref(), Some(secret));

    let (ok, stdout, _) = run_cli(dir.path(), &["project", "identity-secret", "--project", &id, "--rotate"], None);
    assert!(ok);
    let rotated = stdout.trim().to_string();
    assert!(rotated.len() >= 32);
    assert_eq!(store.get_project(&id).await.unwrap().unwrap().identity_secret.as_deref(), Some(rotated.as_str()));

    let (ok, _, _) = run_cli(dir.path(), &["project", "identity-secret", "--project", &id, "--clear"], None);
    assert!(ok);
    assert_eq!(store.get_project(&id).await.unwrap().unwrap().identity_secret, None);
}

#[test]
fn serve_refuses_zero_timeouts_and_a_zero_connection_cap() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, setting) in [
        ("--header-timeout-secs", "SVC_HEADER_TIMEOUT_SECS"),
        ("--idle-timeout-secs", "SVC_IDLE_TIMEOUT_SECS"),
        ("--body-timeout-secs", "SVC_BODY_TIMEOUT_SECS"),
        ("--max-connections", "SVC_MAX_CONNECTIONS"),
    ] {
        let mut child = std::process::Command::new(crate::support::svc_binary())
            .args(["serve", "--bind", "127.0.0.1:0", flag, "0", "--data-dir"])
            .arg(dir.path())
            .env_remove("SVC_DATABASE_URL")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("svc runs");
        // A server that started anyway would never exit: give it 20 s.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("svc serve {flag} 0 started instead of refusing");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flag} 0 must be refused");
        assert!(stderr.contains(setting), "{flag} 0: the message names {setting}: {stderr}");
    }
}

#[test]
fn project_list_shows_every_project_with_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stdout, _) = run_cli(dir.path(), &["project", "create", "--name", "Shop Web", "--json"], None);
    let created: Value = serde_json::from_str(stdout.trim()).unwrap();
    run_cli(dir.path(), &["project", "create", "--name", "Admin", "--json"], None);

    let (ok, stdout, stderr) = run_cli(dir.path(), &["project", "list", "--json"], None);
    assert!(ok, "{stderr}");
    let listed: Value = serde_json::from_str(stdout.trim()).unwrap();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Shop Web", "Admin"], "oldest first");
    assert_eq!(listed[0]["projectId"], created["projectId"]);
    assert_eq!(listed[0]["projectKey"], created["projectKey"]);
    assert_eq!(listed[0]["orgName"], "Default");

    let (ok, stdout, _) = run_cli(dir.path(), &["project", "list"], None);
    assert!(ok);
    assert!(stdout.contains(created["projectId"].as_str().unwrap()) && stdout.contains("Shop Web"), "{stdout}");
    let (ok, _, stderr) = run_cli(dir.path(), &["project", "list", "--org", "Nope"], None);
    assert!(!ok);
    assert!(stderr.contains("no organization"), "{stderr}");
}

/// docs/operations.md's settings table names every setting `svc serve --help` has, and nothing it
/// lacks (but the two read from the environment alone: the log format and the allocator's delay).
#[test]
fn the_operations_guide_lists_every_setting_of_serve() {
    let help = std::process::Command::new(crate::support::svc_binary()).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let in_help: std::collections::BTreeSet<String> =
        help.split("[env: ").skip(1).filter_map(|rest| rest.split(['=', ']']).next()).map(str::to_string).collect();
    assert!(in_help.contains("SVC_BIND") && in_help.contains("SVC_S3_ENDPOINT"), "{in_help:?}");
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operations.md")).unwrap();
    let settings = guide.split("## Settings").nth(1).unwrap().split("\n## ").next().unwrap();
    let in_table: std::collections::BTreeSet<String> = settings
        .lines()
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| line.split('|').nth(1))
        .filter_map(|cell| cell.split('`').rev().nth(1))
        .map(str::to_string)
        .collect();
    let env_only = ["SVC_LOG_FORMAT", "MIMALLOC_PURGE_DELAY"];
    let missing: Vec<_> = in_help.difference(&in_table).collect();
    assert!(missing.is_empty(), "settings of `svc serve --help` missing from docs/operations.md: {missing:?}");
    let unknown: Vec<_> = in_table.difference(&in_help).filter(|name| !env_only.contains(&name.as_str())).collect();
    assert!(unknown.is_empty(), "docs/operations.md names settings `svc serve` does not have: {unknown:?}");
}

/// An older svc on a database a newer one migrated refuses to start and says what to do.
#[tokio::test]
async fn an_older_svc_refuses_a_database_a_newer_one_migrated() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = run_cli(dir.path(), &["project", "list"], None);
    assert!(ok, "{out}{err}");
    let url = format!("sqlite://{}", dir.path().join("svc.db").display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) \
         VALUES (9999, 'from a newer svc', CURRENT_TIMESTAMP, 1, x'00', 0)",
    )
    .execute(&mut db)
    .await
    .unwrap();
    db.close().await.unwrap();
    let (ok, _, err) = run_cli(dir.path(), &["project", "list"], None);
    assert!(!ok);
    assert!(err.contains("upgraded by a newer svc") && err.contains("migration 9999"), "{err}");
}
