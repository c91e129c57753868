//! `/metrics` for an operator: on a separate address (`SVC_METRICS_BIND`), behind a bearer token
//! (`SVC_METRICS_TOKEN`), or both.

use crate::support::Server;
use std::time::Duration;

#[tokio::test]
async fn metrics_move_to_their_own_address_behind_a_token() {
    let dir = tempfile::tempdir().unwrap();
    // A free port for the metrics address.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let metrics_bind = format!("127.0.0.1:{port}");
    let server = Server::start(
        &dir.path().join("data"),
        &[("SVC_METRICS_BIND", &metrics_bind), ("SVC_METRICS_TOKEN", "scrape-me-7c1f")],
    );
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let main = http.get(server.url("/metrics")).bearer_auth("scrape-me-7c1f").send().await.unwrap();
    assert_eq!(main.status(), 404, "the main address no longer serves /metrics");

    let metrics = format!("http://{metrics_bind}/metrics");
    let anonymous = http.get(&metrics).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(anonymous.headers()["www-authenticate"], "Bearer");
    let wrong = http.get(&metrics).bearer_auth("scrape-me-7c1e").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    let scraped = http.get(&metrics).bearer_auth("scrape-me-7c1f").send().await.unwrap();
    assert_eq!(scraped.status(), 200);
    let text = scraped.text().await.unwrap();
    assert!(text.contains("# TYPE"), "a Prometheus text exposition: {text}");
    // Only /metrics there: the API and the dashboard stay on the main address.
    let elsewhere = http.get(format!("http://{metrics_bind}/readyz")).send().await.unwrap();
    assert_eq!(elsewhere.status(), 404);
}
