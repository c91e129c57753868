//! Prometheus metrics: request counts and latencies per route, reports created (prometheus-client).
//!
//! Each series is its own atomic counter or histogram; looking one up takes a shared read lock, so
//! requests do not queue behind each other. The label sets seen so far are also kept sorted (written
//! only when a new one appears) so `/metrics` lists series by method, route and status.

use axum::extract::MatchedPath;
use axum::http::Method;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The `route` label: the route template, never the raw path (ids and keys in paths would become
/// labels). Holding the `MatchedPath` itself keeps recording free of allocation.
#[derive(Clone, Debug)]
pub enum Route {
    Matched(MatchedPath),
    Named(&'static str),
}

impl Route {
    fn as_str(&self) -> &str {
        match self {
            Route::Matched(path) => path.as_str(),
            Route::Named(name) => name,
        }
    }
}

/// The `method` label.
#[derive(Clone, Debug)]
struct MethodLabel(Method);

macro_rules! label_by_str {
    ($type:ty) => {
        impl PartialEq for $type {
            fn eq(&self, other: &Self) -> bool {
                self.as_str() == other.as_str()
            }
        }
        impl Eq for $type {}
        impl Hash for $type {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state)
            }
        }
        impl PartialOrd for $type {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $type {
            fn cmp(&self, other: &Self) -> Ordering {
                self.as_str().cmp(other.as_str())
            }
        }
        impl EncodeLabelValue for $type {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
                encoder.write_str(self.as_str())
            }
        }
    };
}

impl MethodLabel {
    fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

// Compared, hashed, ordered and written by their text.
label_by_str!(MethodLabel);
label_by_str!(Route);

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, EncodeLabelSet)]
struct RequestLabels {
    method: MethodLabel,
    route: Route,
    status: u16,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, EncodeLabelSet)]
struct RouteLabels {
    method: MethodLabel,
    route: Route,
}

#[derive(Clone, Debug)]
struct LatencyBuckets;

impl MetricConstructor<Histogram> for LatencyBuckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(BUCKETS)
    }
}

/// Every series: the two per-route families with the label sets seen so far in order, and the report
/// counter (one collector, so families are listed in this order).
#[derive(Debug)]
struct Series {
    reports_created: Counter,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, LatencyBuckets>,
    /// Written only the first time a label set is seen.
    seen: Mutex<(BTreeSet<RequestLabels>, BTreeSet<RouteLabels>)>,
}

impl Collector for Series {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut requests = encoder.encode_descriptor(
            "svc_http_requests",
            "HTTP requests by method, route and status.",
            None,
            MetricType::Counter,
        )?;
        for labels in &seen.0 {
            if let Some(counter) = self.requests.get(labels) {
                counter.encode(requests.encode_family(labels)?)?;
            }
        }
        let mut latency = encoder.encode_descriptor(
            "svc_http_request_duration_seconds",
            "HTTP request latency by method and route.",
            None,
            MetricType::Histogram,
        )?;
        for labels in &seen.1 {
            if let Some(histogram) = self.latency.get(labels) {
                histogram.encode(latency.encode_family(labels)?)?;
            }
        }
        let reports = encoder.encode_descriptor(
            "svc_reports_created",
            "Reports filed since start.",
            None,
            MetricType::Counter,
        )?;
        self.reports_created.encode(reports)
    }
}

pub struct Metrics {
    series: Arc<Series>,
    registry: Registry,
}

impl Default for Metrics {
    fn default() -> Self {
        let series = Arc::new(Series {
            reports_created: Counter::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(LatencyBuckets),
            seen: Mutex::default(),
        });
        let mut registry = Registry::default();
        registry.register_collector(Box::new(series.clone()));
        Metrics { series, registry }
    }
}

impl Metrics {
    pub fn record_request(&self, method: &Method, route: Route, status: u16, seconds: f64) {
        let http = &self.series;
        let method = MethodLabel(method.clone());
        let request = RequestLabels { method: method.clone(), route: route.clone(), status };
        let series = RouteLabels { method, route };
        // The common case: both series exist, one shared read lock each.
        let counted = http.requests.get(&request).map(|counter| counter.inc()).is_some();
        let timed = http.latency.get(&series).map(|histogram| histogram.observe(seconds)).is_some();
        if counted && timed {
            return;
        }
        let mut seen = http.seen.lock().unwrap_or_else(|p| p.into_inner());
        if !counted {
            http.requests.get_or_create(&request).inc();
            seen.0.insert(request);
        }
        if !timed {
            http.latency.get_or_create(&series).observe(seconds);
            seen.1.insert(series);
        }
    }

    pub fn report_created(&self) {
        self.series.reports_created.inc();
    }

    /// Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_histograms() {
        let metrics = Metrics::default();
        metrics.record_request(&Method::GET, Route::Named("/api/v1/me"), 200, 0.003);
        metrics.record_request(&Method::GET, Route::Named("/api/v1/me"), 200, 0.2);
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
        for (method, route, status) in
            [(Method::POST, "/b", 201), (Method::GET, "/b", 200), (Method::GET, "/a", 404), (Method::GET, "/a", 200)]
        {
            metrics.record_request(&method, Route::Named(route), status, 0.001);
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
