//! Acknowledged means stored: the real `svc` binary takes a burst of concurrent ingest traffic, is
//! killed with SIGKILL in the middle of it, and restarted on the same data folder. Every report (and
//! every screenshot) that was answered 200 before the kill must be there, readable through REST.

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const CLIENTS: usize = 64;
const BURST: Duration = Duration::from_millis(1500);
/// One client in this many attaches a screenshot to each of its reports.
const SCREENSHOT_EVERY: usize = 8;

/// The running binary; killed (SIGKILL) and reaped when dropped, so a failing test leaves nothing.
pub(crate) struct Svc {
    pub(crate) child: Child,
    pub(crate) base: String,
}

impl Drop for Svc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the first start prints once.
#[derive(Debug, Default)]
pub(crate) struct Bootstrap {
    pub(crate) project_id: String,
    pub(crate) public_key: String,
    pub(crate) setup_token: String,
}

/// Starts `svc serve` on `data_dir` on a port the OS picks; returns it with the lines it printed
/// before it logged its address (the bootstrap block on a first start). Its later output goes to
/// `log_name` beside the data folder.
pub(crate) fn start(data_dir: &Path, log_name: &str) -> (Svc, Vec<String>) {
    let mut log = std::fs::File::create(data_dir.parent().unwrap().join(log_name)).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_svc"));
    command
        .args(["serve", "--data-dir"])
        .arg(data_dir)
        .args(["--bind", "127.0.0.1:0"])
        .env("SVC_RATE_LIMIT", "off")
        .env_remove("SVC_DATABASE_URL")
        .env_remove("SVC_BLOB_STORE")
        .env_remove("SVC_PUBLIC_URL")
        .env("RUST_LOG", "warn,svc::serve=info");
    let started = crate::support::spawn_serve(command, move |line| {
        let _ = writeln!(log, "{line}");
    });
    (Svc { child: started.child, base: started.base }, started.before)
}

/// Reads the bootstrap block from what the first start printed.
pub(crate) fn read_bootstrap(lines: &[String]) -> Bootstrap {
    let mut boot = Bootstrap::default();
    for line in lines {
        let value = |prefix: &str| line.strip_prefix(prefix).map(|v| v.trim().to_string());
        if let Some(v) = value("Project id:") {
            boot.project_id = v;
        } else if let Some(v) = value("Public key:") {
            boot.public_key = v;
        } else if let Some(v) = value("Setup token:") {
            boot.setup_token = v;
        }
    }
    assert!(boot.public_key.starts_with("pr_") && boot.setup_token.starts_with("pr_sk_"), "{boot:?}");
    boot
}

pub(crate) async fn wait_ready(svc: &mut Svc, http: &reqwest::Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = svc.child.try_wait().unwrap() {
            panic!("svc exited before it was ready: {status}");
        }
        if let Ok(response) = http.get(format!("{}/readyz", svc.base)).send().await
            && response.status() == 200
        {
            return;
        }
        assert!(Instant::now() < deadline, "svc did not become ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A small real PNG (1×1, RGB, stored deflate block), unique per `seed`.
pub(crate) fn png(seed: u32) -> Vec<u8> {
    let pixel = seed.to_be_bytes();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, 1, 1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Stored deflate blocks: tiny and unique per seed.
    encoder.set_compression(png::Compression::NoCompression);
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&pixel[1..]).expect("PNG data");
    writer.finish().expect("PNG end");
    out
}

/// A report the server acknowledged before the kill.
#[derive(Debug, Clone)]
pub(crate) struct Acked {
    pub(crate) report_id: String,
    pub(crate) text: String,
    pub(crate) screenshot: Option<(String, Vec<u8>)>,
}

/// One client: sends reports back to back until told to stop or the server goes away.
async fn client_loop(
    client: usize,
    http: reqwest::Client,
    base: String,
    key: String,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<Acked>>>,
    failures: Arc<AtomicUsize>,
) {
    let boundary = "durability-boundary-5f1c0e";
    for n in 0u32.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let text = format!("client {client} report {n}");
        let mut blocks = vec![json!({"type": "text", "text": text})];
        let mut screenshot = None;
        if client.is_multiple_of(SCREENSHOT_EVERY) {
            let image = png(((client as u32) << 16) | n);
            let mut body = format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nscreenshot\r\n--{boundary}\r\n\
                 Content-Disposition: form-data; name=\"file\"; filename=\"s.png\"\r\nContent-Type: image/png\r\n\r\n"
            )
            .into_bytes();
            body.extend_from_slice(&image);
            body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
            let uploaded = http
                .post(format!("{base}/ingest/blob"))
                .header("x-svc-project-key", &key)
                .header("content-type", format!("multipart/form-data; boundary={boundary}"))
                .body(body)
                .send()
                .await;
            let blob_id = match uploaded {
                Ok(response) if response.status() == 200 => match response.json::<Value>().await {
                    Ok(answer) => answer["blobId"].as_str().unwrap().to_string(),
                    Err(_) => break,
                },
                Ok(response) => panic!("upload refused: {}", response.status()),
                Err(_) => break,
            };
            blocks.push(json!({"type": "screenshot", "blobId": blob_id}));
            screenshot = Some((blob_id, image));
        }
        let sent = http
            .post(format!("{base}/ingest/report"))
            .header("x-svc-project-key", &key)
            .json(&json!({"blocks": blocks, "context": {"extra": {"client": client, "n": n}}}))
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == 200 => match response.json::<Value>().await {
                Ok(answer) => {
                    let report_id = answer["reportId"].as_str().expect("reportId").to_string();
                    acked.lock().unwrap().push(Acked { report_id, text, screenshot });
                }
                // The answer was cut off by the kill: not acknowledged.
                Err(_) => break,
            },
            Ok(response) => panic!("report refused: {} {:?}", response.status(), response.text().await),
            Err(_) => break,
        }
    }
    failures.fetch_add(1, Ordering::Relaxed);
}

/// Clients filing reports back to back (one in [`SCREENSHOT_EVERY`] with a screenshot) until
/// stopped or cut off.
pub(crate) struct Burst {
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<Acked>>>,
    failures: Arc<AtomicUsize>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

impl Burst {
    pub(crate) fn start(clients: usize, http: &reqwest::Client, base: &str, key: &str) -> Burst {
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(Mutex::new(Vec::new()));
        let failures = Arc::new(AtomicUsize::new(0));
        let clients = (0..clients)
            .map(|client| {
                let (http, base, key) = (http.clone(), base.to_string(), key.to_string());
                tokio::spawn(client_loop(client, http, base, key, stop.clone(), acked.clone(), failures.clone()))
            })
            .collect();
        Burst { stop, acked, failures, clients }
    }

    /// How many reports were acknowledged so far.
    pub(crate) fn acked(&self) -> usize {
        self.acked.lock().unwrap().len()
    }

    /// The reports acknowledged so far.
    pub(crate) fn acked_reports(&self) -> Vec<Acked> {
        self.acked.lock().unwrap().clone()
    }

    /// Stops the clients; every report acknowledged, and how many clients were cut off before.
    pub(crate) async fn stop(self) -> (Vec<Acked>, usize) {
        self.stop.store(true, Ordering::Relaxed);
        for client in self.clients {
            client.await.unwrap();
        }
        let acked = self.acked.lock().unwrap().clone();
        (acked, self.failures.load(Ordering::Relaxed))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_reports_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let http =
        reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).timeout(Duration::from_secs(30)).build().unwrap();

    let (mut svc, stdout) = start(&data_dir, "first-start.log");
    let boot = read_bootstrap(&stdout);
    wait_ready(&mut svc, &http).await;

    // The burst.
    let burst = Burst::start(CLIENTS, &http, &svc.base, &boot.public_key);
    tokio::time::sleep(BURST).await;
    let acked_before_kill = burst.acked();
    // SIGKILL while the clients are still sending: no graceful shutdown, no flush.
    svc.child.kill().unwrap();
    svc.child.wait().unwrap();
    let (acked, cut_off) = burst.stop().await;
    drop(svc);
    eprintln!(
        "{} reports acknowledged ({} when the kill was sent); {} clients were cut off",
        acked.len(),
        acked_before_kill,
        cut_off
    );
    assert!(acked_before_kill >= CLIENTS, "the burst should have filed reports before the kill");
    assert!(cut_off > 0, "the clients should still have been sending when the kill came");

    // Restart on the same folder: no new bootstrap, the same project and token.
    let (mut svc, stdout) = start(&data_dir, "second-start.log");
    wait_ready(&mut svc, &http).await;
    assert!(!stdout.iter().any(|l| l.contains("Setup token")), "bootstrap printed again: {stdout:?}");

    // Every acknowledged report is there, whole.
    assert_present(&http, &svc.base, &boot, &acked).await;

    // And the restarted server takes reports again.
    let response = http
        .post(format!("{}/ingest/report", svc.base))
        .header("x-svc-project-key", &boot.public_key)
        .json(&json!({"blocks": [{"type": "text", "text": "after the restart"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// Every report in `acked` is served by the server at `base`, whole: its text, and its screenshot's
/// bytes.
pub(crate) async fn assert_present(http: &reqwest::Client, base: &str, boot: &Bootstrap, acked: &[Acked]) {
    let project = format!("{base}/api/v1/projects/{}", boot.project_id);
    let bearer = format!("Bearer {}", boot.setup_token);
    let chunks: Vec<Vec<Acked>> = acked.chunks(acked.len().div_ceil(16).max(1)).map(<[Acked]>::to_vec).collect();
    let mut checkers = Vec::new();
    for chunk in chunks {
        let (http, project, bearer) = (http.clone(), project.clone(), bearer.clone());
        checkers.push(tokio::spawn(async move {
            for report in chunk {
                let response = http
                    .get(format!("{project}/feedback/{}", report.report_id))
                    .header("authorization", &bearer)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 200, "acknowledged report {} is missing", report.report_id);
                let stored: Value = response.json().await.unwrap();
                assert_eq!(stored["blocks"][0]["text"], json!(report.text));
                if let Some((blob_id, bytes)) = &report.screenshot {
                    assert_eq!(stored["blocks"][1]["blobId"], json!(blob_id));
                    assert_eq!(stored["blocks"][1]["mime"], json!("image/png"));
                    let blob = http
                        .get(format!("{project}/blobs/{blob_id}"))
                        .header("authorization", &bearer)
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(blob.status(), 200, "screenshot {blob_id} of report {} is missing", report.report_id);
                    assert_eq!(blob.bytes().await.unwrap().as_ref(), bytes.as_slice());
                }
            }
        }));
    }
    for checker in checkers {
        checker.await.unwrap();
    }
}
