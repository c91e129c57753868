//! The admin CLI: `svc project create`, `svc token setup`, `svc token org`, `svc project identity-secret`.

mod support;

use serde_json::Value;
use support::run_cli;

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
