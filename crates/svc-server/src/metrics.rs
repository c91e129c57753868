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

/// Counts and latencies of one (route, method).
#[derive(Default)]
struct RouteStats {
    /// status → count
    statuses: BTreeMap<u16, u64>,
    latency: Latency,
}

#[derive(Default)]
pub struct Metrics {
    /// route → method → stats. Nested so that recording a request for a known route and method
    /// looks it up by `&str` and allocates nothing.
    routes: Mutex<BTreeMap<String, BTreeMap<String, RouteStats>>>,
    reports_created: AtomicU64,
}

impl Metrics {
    pub fn record_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let methods = match routes.get_mut(route) {
            Some(methods) => methods,
            None => routes.entry(route.to_string()).or_default(),
        };
        let stats = match methods.get_mut(method) {
            Some(stats) => stats,
            None => methods.entry(method.to_string()).or_default(),
        };
        *stats.statuses.entry(status).or_default() += 1;
        let latency = &mut stats.latency;
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
        let routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        // Series are listed by method, then route (then status).
        let mut series: Vec<(&str, &str, &RouteStats)> = routes
            .iter()
            .flat_map(|(route, methods)| {
                methods.iter().map(move |(method, stats)| (method.as_str(), route.as_str(), stats))
            })
            .collect();
        series.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut out = String::new();
        out.push_str("# HELP svc_http_requests_total HTTP requests by method, route and status.\n");
        out.push_str("# TYPE svc_http_requests_total counter\n");
        for (method, route, stats) in &series {
            for (status, count) in &stats.statuses {
                let _ = writeln!(
                    out,
                    "svc_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {count}"
                );
            }
        }
        out.push_str("# HELP svc_http_request_duration_seconds HTTP request latency by method and route.\n");
        out.push_str("# TYPE svc_http_request_duration_seconds histogram\n");
        for (method, route, stats) in &series {
            let latency = &stats.latency;
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
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    metrics.record_request(method.as_str(), route, response.status().as_u16(), started.elapsed().as_secs_f64());
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

    #[test]
    fn series_are_ordered_by_method_route_and_status() {
        let metrics = Metrics::default();
        for (method, route, status) in [("POST", "/b", 201), ("GET", "/b", 200), ("GET", "/a", 404), ("GET", "/a", 200)]
        {
            metrics.record_request(method, route, status, 0.001);
        }
        let text = metrics.render();
        let series: Vec<&str> = text.lines().filter(|l| l.starts_with("svc_http_requests_total{")).collect();
        assert_eq!(
            series,
            [
                "svc_http_requests_total{method=\"GET\",route=\"/a\",status=\"200\"} 1",
                "svc_http_requests_total{method=\"GET\",route=\"/a\",status=\"404\"} 1",
                "svc_http_requests_total{method=\"GET\",route=\"/b\",status=\"200\"} 1",
                "svc_http_requests_total{method=\"POST\",route=\"/b\",status=\"201\"} 1",
            ]
        );
        let counts: Vec<&str> =
            text.lines().filter(|l| l.starts_with("svc_http_request_duration_seconds_count")).collect();
        assert_eq!(counts.len(), 3);
        assert!(counts[0].contains("method=\"GET\",route=\"/a\"") && counts[0].ends_with(" 2"));
        assert!(counts[2].contains("method=\"POST\",route=\"/b\""));
    }
}
