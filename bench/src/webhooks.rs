//! What webhooks cost ingest: receivers for the deliveries (two that answer 204, one that answers
//! 500) and a paced load client that files reports at a fixed rate, as a busy site does, rather
//! than as fast as the server answers.
//!
//! In use, receivers are other machines. Here they share the 2 cores with the server and the load
//! client, so each runs on a thread of its own in Linux's idle scheduling class: it takes only the
//! CPU nobody else wants, instead of delaying the paced client's requests (they used to share its
//! runtime) or the server's. At nice 19 (before) a receiver that had a core kept it until its time
//! slice ran out (up to 1.5 ms on 2 cores), even when a request's thread woke up; an idle-class
//! thread gives the core up at once.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::stats::Latencies;

/// A receiver on a loopback port that answers every POST with `status` and counts them.
pub struct Receiver {
    pub addr: SocketAddr,
    received: Arc<AtomicU64>,
}

impl Receiver {
    pub fn start(status: u16) -> anyhow::Result<Receiver> {
        let received = Arc::new(AtomicU64::new(0));
        let counter = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let status = axum::http::StatusCode::from_u16(status)?;
        let app = axum::Router::new().fallback(move |_body: axum::body::Bytes| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                status
            }
        });
        std::thread::Builder::new().name(format!("receiver-{status}")).spawn(move || {
            idle_class();
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                axum::serve(listener, app).await
            })
        })?;
        Ok(Receiver { addr, received })
    }

    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }
}

/// Puts the calling thread in Linux's idle scheduling class (per thread: 0 names the caller), or at
/// nice 19 where that is refused.
#[allow(unsafe_code)]
fn idle_class() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system calls on the calling thread; `param` outlives the call that reads it.
    unsafe {
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        }
    }
}

/// What a paced run measured.
pub struct Paced {
    pub sent: u64,
    pub failed: u64,
    pub per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// Files reports at `rate` per second for `duration` (each request on its own task, so a slow
/// answer does not hold the pace back), cycling through `bodies`.
pub async fn paced(
    url: String,
    key: String,
    bodies: Vec<String>,
    rate: u32,
    duration: Duration,
) -> anyhow::Result<Paced> {
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).timeout(Duration::from_secs(30)).build()?;
    let started = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / f64::from(rate));
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = tokio::task::JoinSet::new();
    let mut n = 0usize;
    while started.elapsed() < duration {
        tick.tick().await;
        let body = bodies[n % bodies.len()].clone();
        n += 1;
        let request =
            client.post(&url).header("x-svc-project-key", &key).header("content-type", "application/json").body(body);
        tasks.spawn(async move {
            let sent = Instant::now();
            let ok = request.send().await.is_ok_and(|answer| answer.status().is_success());
            (ok, sent.elapsed())
        });
    }
    let mut latencies = Latencies::default();
    let mut failed = 0;
    while let Some(done) = tasks.join_next().await {
        let (ok, took) = done?;
        if ok {
            latencies.record(took);
        } else {
            failed += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let sent = latencies.count() as u64;
    Ok(Paced {
        sent,
        failed,
        per_s: sent as f64 / seconds,
        p50_ms: latencies.percentile_ms(50.0).unwrap_or(0.0),
        p99_ms: latencies.percentile_ms(99.0).unwrap_or(0.0),
    })
}
