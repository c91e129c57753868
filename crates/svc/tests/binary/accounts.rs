//! Dashboard accounts from the outside: the first-owner link `svc serve` prints while nobody has an
//! account, and `svc user create` / `svc user reset-password`, each followed over HTTP.

use crate::support::{Server, cookie_pair, form, run_cli, run_cli_with};
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::Value;

const FORM: &str = "application/x-www-form-urlencoded";

/// A client that shows redirects instead of following them, and keeps no cookies.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A form post from the dashboard's own pages (the `Origin` a browser sends).
async fn post_form(http: &reqwest::Client, server: &Server, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
    http.post(server.url(path))
        .header(ORIGIN, &server.base)
        .header(CONTENT_TYPE, FORM)
        .body(form(fields))
        .send()
        .await
        .unwrap()
}

pub(crate) fn location(response: &reqwest::Response) -> String {
    response.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

/// Signs in; returns the session cookie (`svc_session=...`), or `None` when refused.
pub(crate) async fn sign_in(http: &reqwest::Client, server: &Server, email: &str, password: &str) -> Option<String> {
    let response = post_form(http, server, "/sign-in", &[("email", email), ("password", password)]).await;
    match response.status().as_u16() {
        303 => Some(cookie_pair(response.headers()[SET_COOKIE].to_str().unwrap())),
        401 => None,
        other => panic!("sign-in answered {other}: {}", response.text().await.unwrap()),
    }
}

#[tokio::test]
async fn first_start_prints_a_setup_link_that_makes_the_first_owner() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    assert!(server.bootstrap.is_some(), "first start prints the bootstrap block");
    let link = server.setup_link.clone().unwrap_or_else(|| panic!("no setup link in {:?}", server.stdout_lines));
    let prefix = format!("{}/setup?token=svl_", server.base);
    assert!(link.starts_with(&prefix), "{link}");
    let token = link.strip_prefix(&format!("{}/setup?token=", server.base)).unwrap().to_string();
    for line in server.stdout_lines.iter().filter(|line| line.starts_with('{')) {
        assert!(!line.contains(&token), "the link's token was logged: {line}");
    }

    let http = client();
    let page = http.get(&link).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Create the first account"));

    let created = post_form(
        &http,
        &server,
        "/setup",
        &[("token", &token), ("name", "Ada"), ("email", "ada@example.com"), ("password", "correct horse battery")],
    )
    .await;
    assert_eq!(created.status(), 303, "{:?}", created.text().await);
    let set_cookie = created.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(set_cookie.starts_with("svc_session=svs_"), "{set_cookie}");
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    let cookie = cookie_pair(&set_cookie);

    // Signed in: `/` does not send them to sign in, and the sign-in page sends them on.
    let home = http.get(server.url("/")).header(COOKIE, &cookie).send().await.unwrap();
    assert!(!location(&home).starts_with("/sign-in"), "/ redirected to {}", location(&home));
    let sign_in_page = http.get(server.url("/sign-in")).header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(sign_in_page.status(), 303);
    assert_eq!(location(&sign_in_page), "/");

    // The link is spent, and the password works.
    assert_eq!(http.get(&link).send().await.unwrap().status(), 404);
    assert!(sign_in(&http, &server, "ada@example.com", "correct horse battery").await.is_some());
    drop(server);

    // Someone has an account now: the next start prints no link (and no bootstrap block).
    let again = Server::start(dir.path(), &[]);
    assert!(again.bootstrap.is_none());
    assert!(again.setup_link.is_none(), "{:?}", again.stdout_lines);
    assert!(!again.stdout_lines.iter().any(|line| line.contains("/setup?token=")), "{:?}", again.stdout_lines);
}

#[tokio::test]
async fn a_later_start_without_accounts_prints_a_new_link() {
    let dir = tempfile::tempdir().unwrap();
    let first = Server::start(dir.path(), &[]).setup_link.clone().expect("a link on the first start");
    let server = Server::start(dir.path(), &[("SVC_PUBLIC_URL", "https://feedback.example.com/")]);
    assert!(server.bootstrap.is_none());
    assert!(
        server.stdout_lines.iter().any(|line| line.contains("no dashboard account yet")),
        "{:?}",
        server.stdout_lines
    );
    let second = server.setup_link.clone().expect("a new link while nobody has an account");
    assert!(second.starts_with("https://feedback.example.com/setup?token=svl_"), "{second}");
    assert_ne!(first.split("token=").nth(1), second.split("token=").nth(1));
    // Both links work until one of them is used (each for one hour).
    let http = client();
    for link in [&first, &second] {
        let token = link.split("token=").nth(1).unwrap();
        let page = http.get(server.url(&format!("/setup?token={token}"))).send().await.unwrap();
        assert_eq!(page.status(), 200, "{link}");
    }
    // The second is used: the first stops working and cannot make a second owner.
    let second_token = second.split("token=").nth(1).unwrap();
    let created = post_form(
        &http,
        &server,
        "/setup",
        &[("token", second_token), ("email", "ada@example.com"), ("password", "correct horse battery")],
    )
    .await;
    assert_eq!(created.status(), 303);
    let first_token = first.split("token=").nth(1).unwrap();
    let page = http.get(server.url(&format!("/setup?token={first_token}"))).send().await.unwrap();
    assert_eq!(page.status(), 404, "an older link after the first account was set up");
    let refused = post_form(
        &http,
        &server,
        "/setup",
        &[("token", first_token), ("email", "mallory@example.com"), ("password", "correct horse battery")],
    )
    .await;
    assert_eq!(refused.status(), 404, "{:?}", refused.text().await);
    assert!(sign_in(&http, &server, "mallory@example.com", "correct horse battery").await.is_none());
}

#[tokio::test]
async fn a_setup_link_stops_working_once_an_owner_is_made_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let link = server.setup_link.clone().expect("a link on the first start");
    let (ok, _, stderr) = run_cli(
        dir.path(),
        &["user", "create", "--email", "ops@example.com", "--password-stdin", "--role", "owner"],
        Some("correct horse battery\n"),
    );
    assert!(ok, "{stderr}");
    let http = client();
    assert_eq!(http.get(&link).send().await.unwrap().status(), 404);
    let token = link.split("token=").nth(1).unwrap();
    let refused = post_form(
        &http,
        &server,
        "/setup",
        &[("token", token), ("email", "mallory@example.com"), ("password", "correct horse battery")],
    )
    .await;
    assert_eq!(refused.status(), 404, "{:?}", refused.text().await);
    assert!(sign_in(&http, &server, "mallory@example.com", "correct horse battery").await.is_none());
}

#[tokio::test]
async fn user_create_and_reset_password() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = run_cli(
        dir.path(),
        &["user", "create", "--email", "Ada@Example.com", "--name", "Ada", "--password-stdin", "--json"],
        Some("correct horse battery\n"),
    );
    assert!(ok, "{stderr}");
    let created: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(created["email"], "ada@example.com");
    assert_eq!(created["role"], "member");
    assert_eq!(created["userId"].as_str().unwrap().len(), 24);
    assert_eq!(created["orgId"].as_str().unwrap().len(), 24);

    // A taken email (in any case) fails with a message; so do a missing password and a short one.
    let (ok, _, stderr) = run_cli(
        dir.path(),
        &["user", "create", "--email", "ADA@example.com", "--password-stdin", "--role", "owner"],
        Some("another long password\n"),
    );
    assert!(!ok);
    assert!(stderr.contains("ada@example.com already exists"), "{stderr}");
    let (ok, _, stderr) = run_cli(dir.path(), &["user", "create", "--email", "bob@example.com"], None);
    assert!(!ok && stderr.contains("--password-stdin"), "{stderr}");
    let (ok, _, stderr) =
        run_cli(dir.path(), &["user", "create", "--email", "bob@example.com", "--password-stdin"], Some(""));
    assert!(!ok && stderr.contains("no password on stdin"), "{stderr}");
    let (ok, _, stderr) =
        run_cli(dir.path(), &["user", "create", "--email", "bob@example.com", "--password-stdin"], Some("short\n"));
    assert!(!ok && stderr.contains("at least 10 characters"), "{stderr}");
    let (ok, _, stderr) = run_cli(
        dir.path(),
        &["user", "create", "--email", "bob@example.com", "--password-stdin", "--org", "Nope"],
        Some("bob's long password\n"),
    );
    assert!(!ok && stderr.contains("no organization"), "{stderr}");

    // Owner of the organization by name; the text output names what was made. The password keeps
    // its spaces, only the line break goes.
    let (ok, stdout, stderr) = run_cli(
        dir.path(),
        &["user", "create", "--email", "bob@example.com", "--password-stdin", "--org", "Default", "--role", "owner"],
        Some(" bob's long password \r\n"),
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("bob@example.com") && stdout.contains("owner") && stdout.contains("Default"), "{stdout}");

    // A reset link at the public URL, valid one hour.
    let (ok, stdout, stderr) = run_cli_with(
        dir.path(),
        &["user", "reset-password", "--email", "ada@example.com", "--json"],
        None,
        &[("SVC_PUBLIC_URL", "https://feedback.example.com/")],
    );
    assert!(ok, "{stderr}");
    let reset: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(reset["userId"], created["userId"]);
    assert!(
        reset["link"].as_str().unwrap().starts_with("https://feedback.example.com/reset-password?token=svl_"),
        "{reset}"
    );
    let expires = svc_core::time::parse_iso(reset["expiresAt"].as_str().unwrap()).unwrap();
    assert!((expires - (svc_core::time::now_ms() + 3_600_000)).abs() < 60_000, "{reset}");
    let (ok, _, stderr) = run_cli(dir.path(), &["user", "reset-password", "--email", "nobody@example.com"], None);
    assert!(!ok && stderr.contains("no user with the email nobody@example.com"), "{stderr}");

    // Followed against the running server (default public URL: http://<bind>). Its first start
    // still sets up the project "Default" in the organization the users joined, but prints no
    // first-owner link: accounts exist.
    let server = Server::start(dir.path(), &[]);
    let boot = server.bootstrap.clone().unwrap_or_else(|| panic!("no bootstrap block: {:?}", server.stdout_lines));
    assert!(server.setup_link.is_none(), "accounts exist: no first-owner link");
    let store = svc_store::connect(&format!("sqlite://{}", dir.path().join("svc.db").display())).await.unwrap();
    let project = store.get_project(&boot.project_id).await.unwrap().expect("the project is stored");
    assert_eq!(project.org_id, created["orgId"].as_str().unwrap());
    assert_eq!(store.count_organizations().await.unwrap(), 1);
    let (ok, stdout, stderr) =
        run_cli_with(dir.path(), &["user", "reset-password", "--email", "ada@example.com"], None, &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("http://127.0.0.1:8080/reset-password?token=svl_"), "{stdout}");
    let token = stdout.split("token=").nth(1).unwrap().split_whitespace().next().unwrap().to_string();

    let http = client();
    let ada_session = sign_in(&http, &server, "ada@example.com", "correct horse battery").await.expect("signs in");
    let form_page = http.get(server.url(&format!("/reset-password?token={token}"))).send().await.unwrap();
    assert_eq!(form_page.status(), 200);
    assert!(form_page.text().await.unwrap().contains("ada@example.com"));
    let set =
        post_form(&http, &server, "/reset-password", &[("token", &token), ("password", "a brand new password")]).await;
    assert_eq!(set.status(), 303);
    assert_eq!(location(&set), "/sign-in?notice=password-set");
    // The old password and the old session are over; the new password works.
    assert!(sign_in(&http, &server, "ada@example.com", "correct horse battery").await.is_none());
    let old = http.get(server.url("/sign-in")).header(COOKIE, &ada_session).send().await.unwrap();
    assert_eq!(old.status(), 200, "the old session is signed out");
    assert!(sign_in(&http, &server, "ada@example.com", "a brand new password").await.is_some());
    assert!(sign_in(&http, &server, "bob@example.com", " bob's long password ").await.is_some());

    // `--password-stdin` sets the password at once and signs the user out everywhere.
    let bob_session = sign_in(&http, &server, "bob@example.com", " bob's long password ").await.unwrap();
    let (ok, stdout, stderr) = run_cli(
        dir.path(),
        &["user", "reset-password", "--email", "bob@example.com", "--password-stdin", "--json"],
        Some("bob's next password\n"),
    );
    assert!(ok, "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(stdout.trim()).unwrap()["passwordSet"], true);
    let old = http.get(server.url("/sign-in")).header(COOKIE, &bob_session).send().await.unwrap();
    assert_eq!(old.status(), 200, "bob's session ended");
    assert!(sign_in(&http, &server, "bob@example.com", " bob's long password ").await.is_none());
    assert!(sign_in(&http, &server, "bob@example.com", "bob's next password").await.is_some());
}
