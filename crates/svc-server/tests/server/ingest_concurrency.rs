//! Ingest under pressure, over a real socket: two reports racing for one blob, rate limits keyed by
//! the peer address (an IPv6 /64 counted as one, a fair share when a project is at its ceiling); and the clean-up of blobs no report claimed.

use crate::common::ingest::*;
use crate::common::*;
use serde_json::{Value, json};
use svc_server::ServerConfig;

fn client() -> reqwest::Client {
    reqwest::Client::builder().build().unwrap()
}

async fn upload_over_http(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    kind: &str,
    data: &[u8],
) -> reqwest::Response {
    let (content_type, body) =
        multipart(&[Part::text("kind", kind), Part::file("blob", "application/octet-stream", data)]);
    client
        .post(format!("{base}/ingest/blob"))
        .header(PROJECT_KEY, key)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn report_over_http(client: &reqwest::Client, base: &str, key: &str, body: &Value) -> reqwest::Response {
    client.post(format!("{base}/ingest/report")).header(PROJECT_KEY, key).json(body).send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_reports_racing_for_one_blob_bind_it_once() {
    let app = TestApp::new().await;
    let base = serve(&app).await;
    let key = app.key().to_string();
    let http = client();
    for round in 0..10 {
        let upload = upload_over_http(&http, &base, &key, "screenshot", &png(2, 2)).await;
        assert_eq!(upload.status(), 200);
        let blob_id = upload.json::<Value>().await.unwrap()["blobId"].as_str().unwrap().to_string();
        let send = |text: String| {
            let (http, base, key) = (http.clone(), base.clone(), key.clone());
            let body = json!({"blocks": [text_block(&text), {"type": "screenshot", "blobId": blob_id}]});
            tokio::spawn(async move {
                let response = report_over_http(&http, &base, &key, &body).await;
                (response.status().as_u16(), response.json::<Value>().await.unwrap())
            })
        };
        let (a, b) = (send(format!("round {round} A")), send(format!("round {round} B")));
        let mut outcomes = vec![a.await.unwrap(), b.await.unwrap()];
        outcomes.sort_by_key(|(status, _)| *status);
        assert_eq!(outcomes[0].0, 200, "round {round}: {outcomes:?}");
        assert!(is_object_id(&outcomes[0].1["reportId"]), "round {round}: {outcomes:?}");
        assert_eq!(outcomes[1], (409, json!({"error": "blob_already_used"})), "round {round}");

        // The winner holds the blob; the loser left nothing behind.
        let winner = outcomes[0].1["reportId"].as_str().unwrap();
        let stored = app.stored(winner).await;
        assert_eq!(stored["blocks"][1]["blobId"], json!(blob_id));
        assert_eq!(app.store.get_blob(&blob_id).await.unwrap().unwrap().report_id.as_deref(), Some(winner));
    }
    assert_eq!(app.reports().await.len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_over_the_per_address_limit_get_429_with_retry_after() {
    let config =
        ServerConfig { rate_limits: true, ip_reports_per_minute: 2, ip_blobs_per_minute: 2, ..no_rate_limits() };
    let app = TestApp::with_config(config).await;
    let base = serve(&app).await;
    let key = app.key().to_string();
    let http = client();

    for i in 0..2 {
        let response = report_over_http(&http, &base, &key, &text_report(&format!("report {i}"))).await;
        assert_eq!(response.status(), 200);
    }
    let limited = report_over_http(&http, &base, &key, &text_report("one too many")).await;
    assert_eq!(limited.status(), 429);
    let retry_after: u64 = limited.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "Retry-After: {retry_after}");
    assert_eq!(limited.json::<Value>().await.unwrap(), json!({"error": "rate_limited"}));
    assert_eq!(app.reports().await.len(), 2, "the refused report was not filed");

    // Blobs have their own budget per address.
    for _ in 0..2 {
        assert_eq!(upload_over_http(&http, &base, &key, "audio", &ogg()).await.status(), 200);
    }
    let limited = upload_over_http(&http, &base, &key, "audio", &ogg()).await;
    assert_eq!(limited.status(), 429);
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(limited.json::<Value>().await.unwrap(), json!({"error": "rate_limited"}));

    // A browser page can read Retry-After cross-origin.
    let limited = http
        .post(format!("{base}/ingest/report"))
        .header(PROJECT_KEY, &key)
        .header("origin", "https://customer.example.org")
        .json(&text_report("from a page"))
        .send()
        .await
        .unwrap();
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["access-control-allow-origin"], "*");
    let exposed = limited.headers()["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
    assert!(exposed.contains("retry-after"), "{exposed}");

    // Reads are not counted against the report budget.
    let config = http.get(format!("{base}/ingest/config")).header(PROJECT_KEY, &key).send().await.unwrap();
    assert_eq!(config.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_project_report_limit_applies_across_addresses() {
    let config = ServerConfig { rate_limits: true, project_reports_per_minute: 3, ..no_rate_limits() };
    let app = TestApp::with_config(config).await;
    // In process there is no peer address: only the per-project budget counts.
    for i in 0..3 {
        app.file_report(text_report(&format!("report {i}"))).await;
    }
    let limited = app.report(text_report("one too many")).await;
    limited.ingest_error(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
    // Another project has its own budget.
    let (other, _) = app.other_project().await;
    app.report_with(&other.project_key, &[], text_report("elsewhere")).await.ok(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_busy_addresses_cannot_silence_a_project_and_an_ipv6_64_is_one_address() {
    // Behind a trusted proxy, so each request can come from the address its X-Forwarded-For names.
    // Small budgets refill slowly (the ceiling one report per 10 s), so the test is not racing them.
    let config = ServerConfig {
        rate_limits: true,
        ip_reports_per_minute: 3,
        project_reports_per_minute: 6,
        guaranteed_reports_per_address: 1,
        trusted_proxies: vec![svc_server::config::parse_cidr("127.0.0.1").unwrap()],
        ..no_rate_limits()
    };
    let app = TestApp::with_config(config).await;
    let base = serve(&app).await;
    let key = app.key().to_string();
    let http = client();
    let from = |address: &str, text: &str| {
        http.post(format!("{base}/ingest/report"))
            .header(PROJECT_KEY, &key)
            .header("x-forwarded-for", address)
            .json(&text_report(text))
            .send()
    };
    let status = |response: reqwest::Response| response.status().as_u16();

    // Three addresses at their own limit: the first two use up the project's ceiling of 6, the
    // third still files its guaranteed one.
    let mut statuses = Vec::new();
    for n in 0..3 {
        for i in 0..3 {
            statuses.push(status(from(&format!("198.51.100.{n}"), &format!("flood {n}.{i}")).await.unwrap()));
        }
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 429, 429]);
    assert_eq!(status(from("198.51.100.0", "more").await.unwrap()), 429);

    // Somebody else still gets through with their share, then waits like everyone.
    assert_eq!(status(from("203.0.113.7", "a real bug").await.unwrap()), 200);
    let limited = from("203.0.113.7", "another").await.unwrap();
    assert_eq!(limited.status(), 429);
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(limited.json::<Value>().await.unwrap(), json!({"error": "rate_limited"}));

    // Every address of one IPv6 /64 shares one budget; the next /64 is someone else.
    assert_eq!(status(from("2001:db8:7:1::1", "v6").await.unwrap()), 200);
    assert_eq!(status(from("2001:db8:7:1:ffff::2", "same /64").await.unwrap()), 429);
    assert_eq!(status(from("2001:db8:7:2::1", "next /64").await.unwrap()), 200);
    assert_eq!(app.reports().await.len(), 7 + 1 + 1 + 1);
}

#[tokio::test]
async fn unbound_blobs_older_than_a_day_are_deleted_and_bound_ones_kept() {
    use svc_service::blobs::delete_stale_unbound;
    let app = TestApp::new().await;
    let bound = app.blob("screenshot", "image/png", &png(2, 2)).await;
    let unbound = app.blob("audio", "audio/ogg", &ogg()).await;
    let report_id = app.file_report(json!({"blocks": [{"type": "screenshot", "blobId": bound}]})).await;
    let on_disk = |id: &str| app.dir.path().join("blobs").join("objects").join(id);
    assert!(on_disk(&bound).is_file() && on_disk(&unbound).is_file());

    // Young blobs stay.
    let now = svc_core::time::now_ms();
    assert_eq!(delete_stale_unbound(app.service(), &app.state.blobs, now).await.unwrap(), 0);
    assert!(app.store.get_blob(&unbound).await.unwrap().is_some());

    let later = now + 25 * 60 * 60 * 1000;
    assert_eq!(delete_stale_unbound(app.service(), &app.state.blobs, later).await.unwrap(), 1);
    assert!(app.store.get_blob(&unbound).await.unwrap().is_none(), "row deleted");
    assert!(app.state.blobs.get(&unbound).await.unwrap().is_none(), "bytes deleted");
    assert!(!on_disk(&unbound).exists());
    // The bound blob keeps its row and bytes, and is still served.
    assert_eq!(app.store.get_blob(&bound).await.unwrap().unwrap().report_id.as_deref(), Some(report_id.as_str()));
    assert!(on_disk(&bound).is_file());
    let served = app.rest("GET", &app.p(&format!("/blobs/{bound}")), None).await;
    assert_eq!(served.status.as_u16(), 200);
    assert_eq!(served.bytes, png(2, 2));
    // A second pass has nothing left to do, and the deleted blob can no longer be referenced.
    assert_eq!(delete_stale_unbound(app.service(), &app.state.blobs, later).await.unwrap(), 0);
    app.report(json!({"blocks": [{"type": "audio", "blobId": unbound}]})).await.ingest_error(404, "blob_not_found");
}
