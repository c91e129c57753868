//! Two `svc serve` processes on one PostgreSQL database and one S3 bucket act as one service: what
//! one stores the other serves, what one revokes the other refuses at once, and when one is killed
//! the other goes on. Needs `SVC_TEST_POSTGRES_URL` and `SVC_TEST_S3_ENDPOINT` (the test command
//! starts moto); without either it says it skipped and passes.
//!
//! Housekeeping running once between instances is `rest_postgres::postgres_housekeeping_runs_on_one_
//! instance_of_two` (svc-server), mail and webhook delivery once are `mail` and `webhooks` there.

use crate::accounts::{client, location, sign_in};
use crate::durability::png;
use crate::support::{Server, run_cli_with};
use reqwest::header::COOKIE;
use serde_json::{Value, json};
use sqlx::Connection;

/// A fresh schema on the test database; the URL `svc serve` opens it with.
pub(crate) async fn fresh_schema(base: &str) -> (String, String) {
    // Named as the store's own test schemas are, so a run that dies leaves one that is swept later.
    let schema = format!("t_{}", svc_core::ids::new_id());
    let mut db = sqlx::PgConnection::connect(base).await.expect("connect to SVC_TEST_POSTGRES_URL");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\""))).execute(&mut db).await.unwrap();
    db.close().await.unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    (format!("{base}{separator}options=-c%20search_path%3D{schema}"), schema)
}

pub(crate) async fn drop_schema(base: &str, schema: &str) {
    let mut db = sqlx::PgConnection::connect(base).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA \"{schema}\" CASCADE"))).execute(&mut db).await.unwrap();
    db.close().await.unwrap();
}

/// A request with one header (a key or the bearer token), answered with JSON.
pub(crate) async fn json_with(request: reqwest::RequestBuilder, header: (&str, &str)) -> (u16, Value) {
    let response = request.header(header.0, header.1).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

pub(crate) fn multipart_screenshot(image: &[u8]) -> (String, Vec<u8>) {
    multipart_upload("screenshot", "s.png", "image/png", image)
}

/// An ingest upload's body: a blob of `kind` named `filename`; (content type, body).
pub(crate) fn multipart_upload(kind: &str, filename: &str, mime: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "instances-boundary-41b7";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\n{kind}\r\n--{boundary}\r\n\
         Content-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The test PostgreSQL and S3 endpoint, the bucket made; `None` (after saying so) without them.
pub(crate) async fn postgres_and_s3(http: &reqwest::Client) -> Option<(String, String, String)> {
    let (Ok(postgres), Ok(s3)) = (std::env::var("SVC_TEST_POSTGRES_URL"), std::env::var("SVC_TEST_S3_ENDPOINT")) else {
        eprintln!("skipped: needs SVC_TEST_POSTGRES_URL and SVC_TEST_S3_ENDPOINT (the test command sets both)");
        return None;
    };
    let bucket = std::env::var("SVC_TEST_S3_BUCKET").unwrap_or_else(|_| "svc-test".into());
    // moto takes an unsigned bucket creation; "already yours" is fine.
    let made = http.put(format!("{}/{bucket}", s3.trim_end_matches('/'))).send().await.unwrap().status();
    assert!(made.is_success() || made == 409, "creating the bucket {bucket}: {made}");
    Some((postgres, s3, bucket))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgresql_and_one_s3_act_as_one_service() {
    let http = client();
    let Some((postgres, s3, bucket)) = postgres_and_s3(&http).await else { return };
    let (database_url, schema) = fresh_schema(&postgres).await;
    let blob_store = format!("s3://{bucket}/instances-{schema}");
    let env = [("SVC_DATABASE_URL", database_url.as_str()), ("SVC_BLOB_STORE", &blob_store), ("SVC_S3_ENDPOINT", &s3)];
    let dirs = tempfile::tempdir().unwrap();
    let first = Server::start(&dirs.path().join("a"), &env);
    let boot = first.bootstrap.clone().expect("the first instance sets the database up");
    let second = Server::start(&dirs.path().join("b"), &env);
    assert!(second.bootstrap.is_none(), "the second instance finds the project made: {:?}", second.stdout_lines);
    let api = |server: &Server, rest: &str| server.url(&format!("/api/v1/projects/{}{rest}", boot.project_id));
    let setup = format!("Bearer {}", boot.setup_token);

    // A screenshot uploaded through the first is bound by a report filed through the second, and
    // both serve its bytes (from the one bucket).
    let image = png(0x5eed);
    let (content_type, body) = multipart_screenshot(&image);
    let project_key = ("x-svc-project-key", boot.public_key.as_str());
    let upload = http.post(first.url("/ingest/blob")).header("content-type", content_type).body(body);
    let (_, uploaded) = json_with(upload, project_key).await;
    let blob_id = uploaded["blobId"].as_str().expect("blobId").to_string();
    let report =
        json!({"blocks": [{"type": "text", "text": "checkout spinner"}, {"type": "screenshot", "blobId": blob_id}]});
    let (status, filed) = json_with(http.post(second.url("/ingest/report")).json(&report), project_key).await;
    assert_eq!(status, 200, "{filed}");
    let report_id = filed["reportId"].as_str().unwrap().to_string();
    let setup = ("authorization", setup.as_str());
    for server in [&first, &second] {
        let (_, stored) = json_with(http.get(api(server, &format!("/feedback/{report_id}"))), setup).await;
        assert_eq!(stored["blocks"][1]["blobId"], json!(blob_id));
        let bytes = http.get(api(server, &format!("/blobs/{blob_id}"))).header(setup.0, setup.1).send().await.unwrap();
        assert_eq!(bytes.status(), 200);
        assert_eq!(bytes.bytes().await.unwrap().as_ref(), image.as_slice());
    }

    // A key minted on the first works on the second; revoked on the first, the second refuses it
    // on the very next request.
    let new_key = json!({"name": "triage agent", "scopes": ["feedback:read"]});
    let (_, minted) = json_with(http.post(api(&first, "/keys")).json(&new_key), setup).await;
    let key = format!("Bearer {}", minted["key"].as_str().expect("the minted key"));
    let key = ("authorization", key.as_str());
    assert_eq!(json_with(http.get(api(&second, "/feedback")), key).await.0, 200);
    let revoke = http.delete(api(&first, &format!("/keys/{}", minted["id"].as_str().unwrap())));
    assert_eq!(json_with(revoke, setup).await.0, 200);
    let (refused, _) = json_with(http.get(api(&second, "/feedback")), key).await;
    assert_eq!(refused, 401, "a key revoked on one instance still works on the other");

    // A channel hint set on the first is served by the second.
    let hint = json!({"channelKey": "idea", "weight": "max"});
    assert_eq!(json_with(http.post(api(&first, "/hints")).json(&hint), setup).await.0, 200);
    let (_, config) = json_with(http.get(second.url("/ingest/config")), project_key).await;
    assert_eq!(config["hints"][0]["channelKey"], json!("idea"), "{config}");

    // A dashboard session made on the first is good on the second.
    let (made, out, err) = run_cli_with(
        &dirs.path().join("cli"),
        &["user", "create", "--email", "ada@example.com", "--password-stdin", "--role", "owner"],
        Some("correct horse battery staple\n"),
        &env,
    );
    assert!(made, "{out}{err}");
    let cookie = sign_in(&http, &first, "ada@example.com", "correct horse battery staple").await.expect("signed in");
    let inbox = http.get(second.url("/")).header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(inbox.status(), 200, "the second instance sent the session to {}", location(&inbox));
    assert!(inbox.text().await.unwrap().contains("checkout spinner"), "the inbox lists the report");

    // The first is killed: the second goes on taking and serving reports.
    drop(first);
    let late = json!({"blocks": [{"type": "text", "text": "filed after the first instance died"}]});
    assert_eq!(json_with(http.post(second.url("/ingest/report")).json(&late), project_key).await.0, 200);
    let (_, listed) = json_with(http.get(api(&second, "/feedback")), setup).await;
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(2), "{listed}");
    drop(second);
    drop_schema(&postgres, &schema).await;
}
