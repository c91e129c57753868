//! The load client for requests that depend on an earlier answer: upload a screenshot blob
//! (multipart), then file the report that references the returned `blobId`. Each client loops for
//! the run's duration; the result is one JSON line (pairs per second, pair latency, the client's
//! own CPU time).

use bytes::Bytes;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::stats::{Latencies, cpu_seconds_self};

const BOUNDARY: &str = "svc-bench-4f1d2c";

pub struct Options {
    pub url: String,
    pub project_key: String,
    pub clients: usize,
    pub duration: Duration,
    pub png_bytes: usize,
}

fn multipart_body(png: &[u8]) -> Bytes {
    let mut body = Vec::with_capacity(png.len() + 512);
    body.extend_from_slice(
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nscreenshot\r\n").as_bytes(),
    );
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"screenshot.png\"\r\n\
             Content-Type: image/png\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(png);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    Bytes::from(body)
}

#[derive(Default)]
struct ClientResult {
    pairs: Latencies,
    blobs: Latencies,
    reports: Latencies,
    errors: u64,
    first_error: Option<String>,
}

async fn client_loop(
    client: reqwest::Client,
    options: std::sync::Arc<Options>,
    body: Bytes,
    index: usize,
    until: Instant,
) -> ClientResult {
    let mut result = ClientResult::default();
    let mut n = index * 1_000_000;
    while Instant::now() < until {
        n += 1;
        let started = Instant::now();
        let outcome: anyhow::Result<()> = async {
            let answer = client
                .post(format!("{}/ingest/blob", options.url))
                .header("x-svc-project-key", &options.project_key)
                .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
                .body(body.clone())
                .send()
                .await?;
            let status = answer.status();
            let answer: Value = answer.json().await?;
            anyhow::ensure!(status.is_success(), "blob upload answered {status}: {answer}");
            let blob_id = answer["blobId"].as_str().ok_or_else(|| anyhow::anyhow!("no blobId in {answer}"))?;
            let blob_done = Instant::now();
            result.blobs.record(blob_done - started);
            let answer = client
                .post(format!("{}/ingest/report", options.url))
                .header("x-svc-project-key", &options.project_key)
                .header("content-type", "application/json")
                .body(crate::data::screenshot_body(n, blob_id))
                .send()
                .await?;
            let status = answer.status();
            let answer: Value = answer.json().await?;
            anyhow::ensure!(status.is_success(), "report answered {status}: {answer}");
            result.reports.record(blob_done.elapsed());
            Ok(())
        }
        .await;
        match outcome {
            Ok(()) => result.pairs.record(started.elapsed()),
            Err(error) => {
                result.errors += 1;
                result.first_error.get_or_insert_with(|| format!("{error:#}"));
                // Do not spin on a refusing server.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    result
}

pub async fn run(options: Options) -> anyhow::Result<Value> {
    let body = multipart_body(&crate::data::png(options.png_bytes));
    let client =
        reqwest::Client::builder().pool_max_idle_per_host(options.clients).timeout(Duration::from_secs(30)).build()?;
    let options = std::sync::Arc::new(options);
    let cpu_before = cpu_seconds_self();
    let started = Instant::now();
    let until = started + options.duration;
    let tasks: Vec<_> = (0..options.clients)
        .map(|index| tokio::spawn(client_loop(client.clone(), options.clone(), body.clone(), index, until)))
        .collect();
    let mut total = ClientResult::default();
    for task in tasks {
        let result = task.await?;
        total.pairs.extend(result.pairs);
        total.blobs.extend(result.blobs);
        total.reports.extend(result.reports);
        total.errors += result.errors;
        if total.first_error.is_none() {
            total.first_error = result.first_error;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds_self() - cpu_before;
    Ok(json!({
        "pairs": total.pairs.count(),
        "errors": total.errors,
        "first_error": total.first_error,
        "seconds": elapsed,
        "pairs_per_s": total.pairs.count() as f64 / elapsed,
        "p50_ms": total.pairs.percentile_ms(50.0),
        "p99_ms": total.pairs.percentile_ms(99.0),
        "blob_p50_ms": total.blobs.percentile_ms(50.0),
        "blob_p99_ms": total.blobs.percentile_ms(99.0),
        "report_p50_ms": total.reports.percentile_ms(50.0),
        "report_p99_ms": total.reports.percentile_ms(99.0),
        "gen_cpu_s": cpu,
    }))
}
