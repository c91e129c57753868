//! Prometheus metrics: request counts and latencies per route, reports created.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Default)]
struct Latency {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
pub struct Metrics {
    /// (method, route, status) → count
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// (method, route) → latency histogram
    latencies: Mutex<BTreeMap<(String, String), Latency>>,
    reports_created: AtomicU64,
}

impl Metrics {
    pub fn record_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((method.to_string(), route.to_string(), status))
            .or_default() += 1;
        let mut latencies = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        let latency = latencies.entry((method.to_string(), route.to_string())).or_default();
        latency.count += 1;
        latency.sum += seconds;
        for (bucket, bound) in latency.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }

    pub fn report_created(&self) {
        self.reports_created.fetch_add(1, Ordering::Relaxed);
    }

    /// Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP svc_http_requests_total HTTP requests by method, route and status.\n");
        out.push_str("# TYPE svc_http_requests_total counter\n");
        for ((method, route, status), count) in self.requests.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = writeln!(
                out,
                "svc_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {count}"
            );
        }
        out.push_str("# HELP svc_http_request_duration_seconds HTTP request latency by method and route.\n");
        out.push_str("# TYPE svc_http_request_duration_seconds histogram\n");
        for ((method, route), latency) in self.latencies.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let labels = format!("method=\"{method}\",route=\"{route}\"");
            for (bound, count) in BUCKETS.iter().zip(latency.buckets) {
                let _ = writeln!(out, "svc_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}");
            }
            let _ = writeln!(out, "svc_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}", latency.count);
            let _ = writeln!(out, "svc_http_request_duration_seconds_sum{{{labels}}} {}", latency.sum);
            let _ = writeln!(out, "svc_http_request_duration_seconds_count{{{labels}}} {}", latency.count);
        }
        out.push_str("# HELP svc_reports_created_total Reports filed since start.\n");
        out.push_str("# TYPE svc_reports_created_total counter\n");
        let _ = writeln!(out, "svc_reports_created_total {}", self.reports_created.load(Ordering::Relaxed));
        out
    }
}

/// Middleware: times each request and counts it under its route template (never the raw path, so
/// ids and keys in paths do not become labels).
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route =
        request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    let response = next.run(request).await;
    metrics.record_request(&method, &route, response.status().as_u16(), started.elapsed().as_secs_f64());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_histograms() {
        let metrics = Metrics::default();
        metrics.record_request("GET", "/api/v1/me", 200, 0.003);
        metrics.record_request("GET", "/api/v1/me", 200, 0.2);
        metrics.report_created();
        let text = metrics.render();
        assert!(text.contains("svc_http_requests_total{method=\"GET\",route=\"/api/v1/me\",status=\"200\"} 2"));
        assert!(text.contains("route=\"/api/v1/me\",le=\"0.005\"} 1"));
        assert!(text.contains("route=\"/api/v1/me\",le=\"+Inf\"} 2"));
        assert!(text.contains("svc_reports_created_total 1"));
    }
}
