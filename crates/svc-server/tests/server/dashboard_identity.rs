//! The Identity tab: a secret generated in the dashboard (shown once) signs tokens that ingest
//! verifies; rotating it stops the old one at once; clearing it makes ingest ignore the header;
//! a pasted secret works the same way. Checked through ingest and the REST API.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::common::ingest::*;
use super::common::*;
use super::dashboard_channels::{Tab, audit, redirected};

/// The secret a response shows once (`<code id="new-secret">`).
fn shown_secret(page: &Resp) -> String {
    let marker = r#"<code id="new-secret">"#;
    let at = page.text.find(marker).unwrap_or_else(|| panic!("no secret shown: {}", page.text)) + marker.len();
    page.text[at..].split('<').next().unwrap().to_string()
}

fn token_for(sub: &str, secret: &str) -> String {
    let now = svc_core::time::now_ms() / 1000;
    let claims = json!({"sub": sub, "email": "ada@example.com", "name": "Ada Lovelace", "iat": now, "exp": now + 600});
    svc_core::identity::sign(&claims, secret)
}

/// Files a report with the token and returns it as REST shows it.
async fn filed_with(app: &TestApp, token: &str) -> Value {
    let id = app.file_report_with(&[("x-svc-identity", token)], text_report("Signed in and stuck")).await;
    app.stored(&id).await
}

#[tokio::test]
async fn a_secret_set_in_the_dashboard_verifies_tokens_until_rotated_or_cleared() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let page = owner.get(&app, "/identity").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("Not set") && page.text.contains("Generate a secret"));
    // The examples sign what decisions §3 asks for, and show how the page hands the token on.
    for part in [
        "createHmac(\"sha256\", secret)",
        "alg: \"HS256\"",
        "jwt.encode(claims",
        "algorithm=\"HS256\"",
        "reporter: { token",
    ] {
        assert!(page.text.contains(part), "the page shows {part}");
    }
    assert!(page.text.contains(&format!("projectKey: \"{}\"", app.key())));

    // Generated: shown once, then never again.
    let generated = owner.post(&app, "/identity", &[("action", "generate")]).await;
    assert_eq!(generated.status, StatusCode::OK, "{}", generated.text);
    let first = shown_secret(&generated);
    assert!(first.len() >= 40 && first.chars().all(|c| c.is_ascii_alphanumeric()), "{first}");
    assert_eq!(generated.header("cache-control"), Some("no-store"));
    let again = owner.get(&app, "/identity").await;
    assert!(again.text.contains("Set") && again.text.contains("Rotate: generate a new secret"));
    assert!(!again.text.contains(&first), "the secret is never shown again");
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["identitySecretSet"], json!(true));

    let signed = filed_with(&app, &token_for("u-42", &first)).await;
    assert_eq!(
        signed["identity"],
        json!({"userId": "u-42", "email": "ada@example.com", "name": "Ada Lovelace", "avatarUrl": null, "verified": true})
    );

    // Rotated: the old secret's tokens stop at once, the new one's verify.
    let rotated = owner.post(&app, "/identity", &[("action", "generate")]).await;
    let second = shown_secret(&rotated);
    assert_ne!(first, second);
    let old = filed_with(&app, &token_for("u-42", &first)).await;
    assert_eq!((old["identity"].clone(), old["identityError"].clone()), (Value::Null, json!("invalid_signature")));
    assert_eq!(filed_with(&app, &token_for("u-43", &second)).await["identity"]["userId"], json!("u-43"));

    // Cleared (after confirming): the header is ignored.
    let unconfirmed = owner.post(&app, "/identity", &[("action", "clear")]).await;
    assert_eq!(unconfirmed.status, StatusCode::BAD_REQUEST);
    assert!(unconfirmed.text.contains("Tick the box to confirm"));
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["identitySecretSet"], json!(true));
    redirected(&owner.post(&app, "/identity", &[("action", "clear"), ("confirm", "yes")]).await);
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["identitySecretSet"], json!(false));
    let ignored = filed_with(&app, &token_for("u-43", &second)).await;
    assert_eq!(ignored["identity"], Value::Null);
    assert!(ignored.get("identityError").is_none_or(Value::is_null), "{ignored}");
    assert!(owner.get(&app, "/identity?done=cleared").await.text.contains("Not set"));

    let acts: Vec<String> = audit(&app).await.into_iter().map(|(action, _, _)| action).collect();
    assert_eq!(acts, ["identity_secret.cleared", "identity_secret.set", "identity_secret.set"]);
}

#[tokio::test]
async fn a_pasted_secret_must_be_long_enough_and_then_verifies() {
    let app = TestApp::new().await;
    let owner = Tab::owner(&app).await;
    let short = owner.post(&app, "/identity", &[("action", "set"), ("secret", "too-short")]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    assert!(short.text.contains("at least 16 characters"));
    assert!(!short.text.contains("too-short"), "a refused secret is not echoed back");
    assert_eq!(app.rest("GET", &app.p(""), None).await.ok(200)["identitySecretSet"], json!(false));

    let mine = "my-own-identity-secret-0123456789";
    let set = owner.post(&app, "/identity", &[("action", "set"), ("secret", mine)]).await;
    assert!(redirected(&set).ends_with("/identity?done=set"));
    let page = owner.get(&app, "/identity?done=set").await;
    assert!(page.text.contains("The identity secret is set.") && !page.text.contains(mine));
    assert_eq!(filed_with(&app, &token_for("u-1", mine)).await["identity"]["verified"], json!(true));
}
