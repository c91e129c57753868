//! The runner: starts `svc serve` (and the ceiling server) on fresh data, drives every scenario with
//! wrk or the Rust load client, repeats each run, and prints one table (median, min, max) that is
//! also written as Markdown. `bench/run` builds the binaries and calls this.

use anyhow::{Context, bail};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::http;
use crate::stats::{load_average, process_cpu_seconds, rss_mib, summary, wait_with_cpu};

pub struct Options {
    pub smoke: bool,
    pub runs: usize,
    pub ingest_seconds: u64,
    pub list_seconds: u64,
    pub warmup_seconds: u64,
    pub reports: usize,
    pub clients: usize,
    pub blob_clients: usize,
    pub list_clients: usize,
    pub wrk_threads: usize,
    pub postgres_url: Option<String>,
    pub svc: PathBuf,
    pub bench_bin: PathBuf,
    pub bench_dir: PathBuf,
    pub work: PathBuf,
    pub out: PathBuf,
    pub only: Option<Vec<String>>,
    /// Record a CPU profile of the server over each scenario's first measured run, into this folder.
    pub profile: Option<PathBuf>,
}

impl Options {
    fn wants(&self, scenario: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.iter().any(|s| s == scenario))
    }
}

#[derive(Clone, Copy)]
enum Target {
    AtLeast(f64),
    AtMost(f64),
}

impl Target {
    fn met(self, value: f64) -> bool {
        match self {
            Target::AtLeast(t) => value >= t,
            Target::AtMost(t) => value <= t,
        }
    }
    fn describe(self) -> String {
        match self {
            Target::AtLeast(t) => format!("≥ {}", number(t)),
            Target::AtMost(t) => format!("≤ {}", number(t)),
        }
    }
}

struct Row {
    scenario: String,
    measure: String,
    values: Vec<f64>,
    target: Option<Target>,
    /// Generator CPU per run, in % of one core.
    gen_cpu: Vec<f64>,
    note: Option<String>,
}

#[derive(Default)]
struct Table {
    rows: Vec<Row>,
    problems: Vec<String>,
}

impl Table {
    fn add(&mut self, scenario: &str, measure: &str, values: Vec<f64>, target: Option<Target>, gen_cpu: Vec<f64>) {
        self.rows.push(Row { scenario: scenario.into(), measure: measure.into(), values, target, gen_cpu, note: None });
    }
    fn skip(&mut self, scenario: &str, reason: &str) {
        eprintln!("    skipped {scenario}: {reason}");
        self.rows.push(Row {
            scenario: scenario.into(),
            measure: "-".into(),
            values: vec![],
            target: None,
            gen_cpu: vec![],
            note: Some(format!("skipped: {reason}")),
        });
    }
    fn problem(&mut self, text: String) {
        eprintln!("    PROBLEM: {text}");
        self.problems.push(text);
    }
    fn median(&self, scenario: &str, measure: &str) -> Option<f64> {
        let row = self.rows.iter().find(|r| r.scenario == scenario && r.measure == measure)?;
        summary(&row.values).map(|(median, _, _)| median)
    }
}

pub(crate) fn number(value: f64) -> String {
    if value >= 1000.0 {
        let whole = value.round() as i64;
        let text = whole.to_string();
        let mut out = String::new();
        for (i, c) in text.chars().enumerate() {
            if i > 0 && (text.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn render(table: &Table, options: &Options, header: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{header}\n");
    let _ = writeln!(out, "| Scenario | Measure | Median | Min | Max | Target | Met | Generator CPU |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|---|---:|");
    for row in &table.rows {
        if let Some(note) = &row.note {
            let _ = writeln!(out, "| {} | {} | | | | | | |", row.scenario, note);
            continue;
        }
        let Some((median, min, max)) = summary(&row.values) else { continue };
        let (target, met) = match row.target {
            // A smoke run's timings mean nothing: no verdict.
            Some(t) if options.smoke => (t.describe(), "-"),
            Some(t) => (t.describe(), if t.met(median) { "yes" } else { "**no**" }),
            None => (String::new(), ""),
        };
        let cpu = summary(&row.gen_cpu).map(|(m, _, _)| format!("{m:.0}%")).unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.scenario,
            row.measure,
            number(median),
            number(min),
            number(max),
            target,
            met,
            cpu
        );
    }
    let _ = writeln!(
        out,
        "\n{} runs per scenario (median, min, max); generator CPU is the load generator's own user+system time \
         as a share of one core over the run (2 cores in all: generator and server share them).",
        options.runs
    );
    if !table.problems.is_empty() {
        let _ = writeln!(out, "\nProblems seen:");
        for p in &table.problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Processes

struct Bootstrap {
    project_id: String,
    project_key: String,
    setup_token: String,
}

struct Svc {
    child: Child,
    addr: SocketAddr,
    ready_ms: f64,
    stdout: Arc<Mutex<Vec<String>>>,
    log: PathBuf,
}

impl Svc {
    fn start(options: &Options, name: &str, data_dir: &Path, database_url: Option<&str>) -> anyhow::Result<Svc> {
        std::fs::create_dir_all(options.work.join("logs"))?;
        let log = options.work.join("logs").join(format!("{name}.log"));
        let log_file = std::fs::File::create(&log)?;
        let mut command = Command::new(&options.svc);
        command
            .arg("serve")
            .env("SVC_DATA_DIR", data_dir)
            .env("SVC_BIND", "127.0.0.1:0")
            .env("SVC_RATE_LIMIT", "off")
            .env("SVC_LOG_FORMAT", "json")
            // The webhook scenario's receivers are on loopback.
            .env("SVC_WEBHOOK_ALLOW_PRIVATE", "true")
            .env_remove("RUST_LOG")
            .env_remove("SVC_PUBLIC_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file);
        match database_url {
            Some(url) => command.env("SVC_DATABASE_URL", url),
            None => command.env_remove("SVC_DATABASE_URL"),
        };
        let started = Instant::now();
        let mut child = command.spawn().with_context(|| format!("cannot start {}", options.svc.display()))?;
        let stdout = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = child.stdout.take() {
            let lines = stdout.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            });
        }
        let deadline = started + Duration::from_secs(120);
        let addr = loop {
            if let Some(addr) = listening_address(&log) {
                break addr;
            }
            if let Some(status) = child.try_wait()? {
                bail!("svc exited ({status}) before listening; log {}:\n{}", log.display(), tail(&log));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                bail!("svc did not start listening within 120 s; log {}", log.display());
            }
            std::thread::sleep(Duration::from_micros(500));
        };
        let ready_ms = loop {
            if http::get(addr, "/readyz", &[]).is_ok_and(|a| a.status == 200) {
                break started.elapsed().as_secs_f64() * 1000.0;
            }
            if child.try_wait()?.is_some() || Instant::now() > deadline {
                let _ = child.kill();
                bail!("svc never became ready; log {}:\n{}", log.display(), tail(&log));
            }
            std::thread::sleep(Duration::from_micros(500));
        };
        Ok(Svc { child, addr, ready_ms, stdout, log })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn server(&self) -> Server {
        Server { addr: self.addr, pid: self.pid() }
    }

    /// The bootstrap block a first start prints on stdout.
    fn bootstrap(&self) -> anyhow::Result<Bootstrap> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            {
                let lines = self.stdout.lock().unwrap();
                let field = |prefix: &str| {
                    lines.iter().find_map(|l| l.trim().strip_prefix(prefix).map(|v| v.trim().to_string()))
                };
                if let (Some(project_id), Some(project_key), Some(setup_token)) =
                    (field("Project id:"), field("Public key:"), field("Setup token:"))
                {
                    return Ok(Bootstrap { project_id, project_key, setup_token });
                }
            }
            if Instant::now() > deadline {
                bail!("no bootstrap block on svc's stdout");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// (current, peak) resident set size in MiB.
    fn rss(&self) -> (f64, f64) {
        rss_mib(self.pid()).unwrap_or((f64::NAN, f64::NAN))
    }

    /// SIGTERM, then up to 20 s for a graceful exit, then SIGKILL.
    fn stop(mut self) -> anyhow::Result<()> {
        // SAFETY: signalling our own child by its pid.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM)
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    bail!("svc exited with {status} on SIGTERM; log {}", self.log.display());
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("svc did not stop within 20 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn listening_address(log: &Path) -> Option<SocketAddr> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().find_map(|line| {
        let value: Value = serde_json::from_str(line).ok()?;
        (value["message"] == "svc listening").then(|| value["address"].as_str()?.parse().ok())?
    })
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// The ceiling server (this binary's `ceiling` command) on a loopback port.
struct Ceiling {
    child: Child,
    addr: SocketAddr,
}

impl Ceiling {
    fn start(options: &Options) -> anyhow::Result<Ceiling> {
        let mut child = Command::new(&options.bench_bin)
            .args(["ceiling", "--bind", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
        let addr = line.trim().strip_prefix("listening ").context("ceiling did not say where it listens")?.parse()?;
        Ok(Ceiling { child, addr })
    }
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------------------------------------
// Load generators

/// A server under load: where it answers, and its process (for profiles).
#[derive(Clone, Copy)]
struct Server {
    addr: SocketAddr,
    pid: u32,
}

/// A CPU profile of a server over one measured run: `perf record` with call graphs, written to
/// `<dir>/<label>.perf.data` (`bench/profile` turns it into tables).
struct Profile(Child);

impl Profile {
    fn start(dir: &Path, label: &str, pid: u32, seconds: u64) -> anyhow::Result<Profile> {
        std::fs::create_dir_all(dir)?;
        let name: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let child = Command::new("perf")
            .args(["record", "--quiet", "-F", "499", "--call-graph", "dwarf,16384", "-p", &pid.to_string(), "-o"])
            .arg(dir.join(format!("{name}.perf.data")))
            .args(["--", "sleep", &seconds.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run perf (apt-get install linux-perf)")?;
        Ok(Profile(child))
    }

    fn finish(mut self) -> anyhow::Result<()> {
        let status = self.0.wait()?;
        anyhow::ensure!(status.success(), "perf record failed ({status})");
        Ok(())
    }
}

/// One request shape for wrk.
struct Shape {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    bodies: Option<PathBuf>,
}

struct WrkRun {
    ok_per_s: f64,
    ok: u64,
    failed: u64,
    p50_ms: f64,
    p99_ms: f64,
    gen_cpu_pct: f64,
    /// The server's CPU time (user + system) per successful request, in µs: what a request costs,
    /// whatever else the machine is doing (rates and latencies move with the machine's load).
    server_cpu_us: f64,
}

fn wrk(options: &Options, addr: SocketAddr, shape: &Shape, seconds: u64, connections: usize) -> anyhow::Result<WrkRun> {
    let mut command = Command::new("wrk");
    command
        .arg(format!("-t{}", options.wrk_threads.min(connections)))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .arg("--timeout")
        .arg("10s")
        .arg("-s")
        .arg(options.bench_dir.join("wrk/svc.lua"))
        .arg(format!("http://{addr}"))
        .env("SVC_BENCH_METHOD", shape.method)
        .env("SVC_BENCH_PATH", &shape.path)
        .env("SVC_BENCH_HEADERS", shape.headers.iter().map(|(n, v)| format!("{n}: {v}")).collect::<Vec<_>>().join("\n"))
        .env("SVC_BENCH_BODIES", shape.bodies.as_deref().map(|p| p.as_os_str()).unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().context("cannot run wrk (apt-get install wrk)")?;
    let mut output = String::new();
    child.stdout.take().context("no stdout")?.read_to_string(&mut output)?;
    let mut errors = String::new();
    child.stderr.take().context("no stderr")?.read_to_string(&mut errors)?;
    let (success, cpu) = wait_with_cpu(&mut child)?;
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix("JSON "))
        .with_context(|| format!("wrk printed no result (exit ok: {success}):\n{output}\n{errors}"))?;
    let result: Value = serde_json::from_str(line)?;
    let field = |name: &str| result[name].as_f64().unwrap_or(0.0);
    let duration_s = field("duration_us") / 1e6;
    let requests = field("requests") as u64;
    let non2xx = field("non2xx") as u64;
    let socket_errors =
        (field("connect_errors") + field("read_errors") + field("write_errors") + field("timeouts")) as u64;
    let ok = requests.saturating_sub(non2xx);
    Ok(WrkRun {
        ok_per_s: ok as f64 / duration_s,
        ok,
        failed: non2xx + socket_errors,
        p50_ms: field("p50_us") / 1000.0,
        p99_ms: field("p99_us") / 1000.0,
        gen_cpu_pct: cpu / duration_s * 100.0,
        server_cpu_us: 0.0,
    })
}

/// Several wrk runs after a warm-up; returns the measured ones. Failed requests are problems.
/// Measures one request shape with wrk over `options.list_clients` connections and adds the
/// scenario's rows: p50, p99 (against `p99_target` ms) and requests/s.
fn measure_listing(
    ctx: &mut Ctx,
    label: &str,
    scenario: &str,
    server: Server,
    shape: &Shape,
    p99_target: f64,
) -> anyhow::Result<()> {
    let options = ctx.options;
    let runs = wrk_runs(options, &mut ctx.table, label, server, shape, options.list_seconds, options.list_clients)?;
    ctx.table.add(scenario, "p50 ms", column(&runs, |r| r.p50_ms), None, vec![]);
    ctx.table.add(
        scenario,
        "p99 ms",
        column(&runs, |r| r.p99_ms),
        Some(Target::AtMost(p99_target)),
        column(&runs, |r| r.gen_cpu_pct),
    );
    ctx.table.add(scenario, "requests/s", column(&runs, |r| r.ok_per_s), None, vec![]);
    ctx.table.add(scenario, "server CPU µs per request", column(&runs, |r| r.server_cpu_us), None, vec![]);
    Ok(())
}

fn wrk_runs(
    options: &Options,
    table: &mut Table,
    label: &str,
    Server { addr, pid }: Server,
    shape: &Shape,
    seconds: u64,
    connections: usize,
) -> anyhow::Result<Vec<WrkRun>> {
    if options.warmup_seconds > 0 {
        let warm = wrk(options, addr, shape, options.warmup_seconds, connections)?;
        if warm.failed > 0 {
            table.problem(format!("{label}: {} failed requests during warm-up", warm.failed));
        }
    }
    let mut runs = Vec::new();
    for run in 1..=options.runs {
        // The first measured run is the profiled one, when profiles are asked for.
        let profile = match &options.profile {
            Some(dir) if run == 1 => Some(Profile::start(dir, label, pid, seconds)?),
            _ => None,
        };
        let cpu_before = process_cpu_seconds(pid);
        let mut result = wrk(options, addr, shape, seconds, connections)?;
        if let (Some(before), Some(after)) = (cpu_before, process_cpu_seconds(pid)) {
            result.server_cpu_us = (after - before) * 1e6 / result.ok.max(1) as f64;
        }
        if let Some(profile) = profile {
            profile.finish()?;
        }
        eprintln!(
            "    {label} run {run}: {:.0}/s ok, p50 {:.2} ms, p99 {:.2} ms, {} failed, generator {:.0}% CPU",
            result.ok_per_s, result.p50_ms, result.p99_ms, result.failed, result.gen_cpu_pct
        );
        if result.failed > 0 {
            table.problem(format!("{label} run {run}: {} failed requests", result.failed));
        }
        if result.ok == 0 {
            table.problem(format!("{label} run {run}: no successful request"));
        }
        runs.push(result);
    }
    Ok(runs)
}

fn column(runs: &[WrkRun], f: impl Fn(&WrkRun) -> f64) -> Vec<f64> {
    runs.iter().map(f).collect()
}

/// The blob-then-report load client (this binary's `blobload` command) as a child process.
fn blobload(options: &Options, addr: SocketAddr, key: &str, seconds: u64) -> anyhow::Result<(Value, f64)> {
    let mut child = Command::new(&options.bench_bin)
        .args(["blobload", "--url", &format!("http://{addr}"), "--key", key])
        .args(["--clients", &options.blob_clients.to_string(), "--seconds", &seconds.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut output = String::new();
    child.stdout.take().context("no stdout")?.read_to_string(&mut output)?;
    let (success, cpu) = wait_with_cpu(&mut child)?;
    anyhow::ensure!(success, "blobload failed:\n{output}");
    let result: Value = serde_json::from_str(output.trim()).with_context(|| format!("blobload printed {output}"))?;
    let seconds = result["seconds"].as_f64().unwrap_or(seconds as f64);
    Ok((result, cpu / seconds * 100.0))
}

// ------------------------------------------------------------------------------------------------
// PostgreSQL databases for one scenario

/// `base` with its database name replaced by `name`.
fn database_url(base: &str, name: &str) -> anyhow::Result<String> {
    let (without_query, query) = match base.split_once('?') {
        Some((a, b)) => (a, Some(b)),
        None => (base, None),
    };
    let scheme_end = without_query.find("://").context("a postgres:// URL")? + 3;
    let path_start = without_query[scheme_end..].find('/').map(|i| i + scheme_end).unwrap_or(without_query.len());
    let mut url = format!("{}/{name}", &without_query[..path_start]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    Ok(url)
}

fn pg_execute(runtime: &tokio::runtime::Runtime, base: &str, statements: &[String]) -> anyhow::Result<()> {
    use sqlx::{Connection, Executor};
    runtime.block_on(async {
        let mut connection = sqlx::PgConnection::connect(base).await?;
        for statement in statements {
            connection.execute(sqlx::AssertSqlSafe(statement.clone())).await?;
        }
        connection.close().await?;
        anyhow::Ok(())
    })
}

/// A fresh database `svc_bench_<suffix>` on the server `base` names; dropped by `drop_database`.
fn fresh_database(runtime: &tokio::runtime::Runtime, base: &str, suffix: &str) -> anyhow::Result<(String, String)> {
    let name = format!("svc_bench_{suffix}");
    pg_execute(
        runtime,
        base,
        &[format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"), format!("CREATE DATABASE {name}")],
    )?;
    Ok((name.clone(), database_url(base, &name)?))
}

fn drop_database(runtime: &tokio::runtime::Runtime, base: &str, name: &str) {
    if let Err(error) = pg_execute(runtime, base, &[format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")]) {
        eprintln!("    could not drop database {name}: {error:#}");
    }
}

// ------------------------------------------------------------------------------------------------
// Scenarios

struct Ctx<'a> {
    options: &'a Options,
    table: Table,
    runtime: tokio::runtime::Runtime,
    bodies: PathBuf,
    data_dirs: usize,
}

impl Ctx<'_> {
    fn fresh_dir(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        self.data_dirs += 1;
        let dir = self.options.work.join(format!("data-{}-{name}", self.data_dirs));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

fn ingest_shape(ctx: &Ctx, key: &str) -> Shape {
    Shape {
        method: "POST",
        path: "/ingest/report".into(),
        headers: vec![("Content-Type".into(), "application/json".into()), ("x-svc-project-key".into(), key.into())],
        bodies: Some(ctx.bodies.clone()),
    }
}

fn scenario_startup_empty(ctx: &mut Ctx) -> anyhow::Result<()> {
    eprintln!("==> start-up on an empty data dir, idle memory");
    let (mut ready, mut idle) = (Vec::new(), Vec::new());
    for run in 0..ctx.options.runs {
        let dir = ctx.fresh_dir("empty")?;
        let svc = Svc::start(ctx.options, &format!("startup-empty-{run}"), &dir, None)?;
        svc.bootstrap()?;
        std::thread::sleep(Duration::from_secs(if ctx.options.smoke { 0 } else { 2 }));
        let (rss, _) = svc.rss();
        eprintln!("    run {}: ready in {:.0} ms, idle RSS {rss:.1} MiB", run + 1, svc.ready_ms);
        ready.push(svc.ready_ms);
        idle.push(rss);
        svc.stop()?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    ctx.table.add("Start-up, empty data dir", "ms to /readyz 200", ready, Some(Target::AtMost(300.0)), vec![]);
    ctx.table.add("Memory, idle after start", "RSS MiB", idle, Some(Target::AtMost(40.0)), vec![]);
    Ok(())
}

fn scenario_ceiling(ctx: &mut Ctx) -> anyhow::Result<()> {
    eprintln!("==> ceiling: parse + validate only, {} clients", ctx.options.clients);
    let ceiling = Ceiling::start(ctx.options)?;
    let shape = ingest_shape(ctx, "pr_0123456789abcdefghijklmn");
    let runs = wrk_runs(
        ctx.options,
        &mut ctx.table,
        "ceiling",
        Server { addr: ceiling.addr, pid: ceiling.child.id() },
        &shape,
        ctx.options.ingest_seconds,
        ctx.options.clients,
    );
    ceiling.stop();
    let runs = runs?;
    ctx.table.add(
        "Ceiling (parse + validate, no storage)",
        "requests/s",
        column(&runs, |r| r.ok_per_s),
        None,
        column(&runs, |r| r.gen_cpu_pct),
    );
    ctx.table.add("Ceiling (parse + validate, no storage)", "p99 ms", column(&runs, |r| r.p99_ms), None, vec![]);
    Ok(())
}

/// Text-only ingest; returns the runs. Checks the server's own count of created reports.
fn ingest_text(ctx: &mut Ctx, label: &str, svc: &Svc, key: &str) -> anyhow::Result<Vec<WrkRun>> {
    let shape = ingest_shape(ctx, key);
    ingest_runs(ctx, label, svc, &shape)
}

/// The same reports as the widget sends them: each with an Idempotency-Key of its own.
fn keyed_shape(ctx: &Ctx, key: &str) -> Shape {
    let mut keyed = ingest_shape(ctx, key);
    keyed.headers.push(("Idempotency-Key".into(), "{unique}".into()));
    keyed
}

/// Ingest runs of one request shape; a problem when the server counts fewer reports than were
/// acknowledged.
fn ingest_runs(ctx: &mut Ctx, label: &str, svc: &Svc, shape: &Shape) -> anyhow::Result<Vec<WrkRun>> {
    let created_before = reports_created(svc.addr)?;
    let runs = wrk_runs(
        ctx.options,
        &mut ctx.table,
        label,
        svc.server(),
        shape,
        ctx.options.ingest_seconds,
        ctx.options.clients,
    )?;
    let created = reports_created(svc.addr)? - created_before;
    let answered: u64 = runs.iter().map(|r| r.ok).sum();
    // The warm-up's reports are counted by the server too.
    if created < answered {
        ctx.table.problem(format!("{label}: {answered} reports acknowledged but the server counts {created}"));
    }
    Ok(runs)
}

fn reports_created(addr: SocketAddr) -> anyhow::Result<u64> {
    let metrics = http::get(addr, "/metrics", &[])?;
    metrics
        .body
        .lines()
        .find_map(|l| l.strip_prefix("svc_reports_created_total "))
        .and_then(|v| v.trim().parse().ok())
        .context("no svc_reports_created_total in /metrics")
}

fn add_ingest_rows(ctx: &mut Ctx, scenario: &str, runs: &[WrkRun], rate_target: f64) {
    ctx.table.add(
        scenario,
        "reports/s (durable)",
        column(runs, |r| r.ok_per_s),
        Some(Target::AtLeast(rate_target)),
        column(runs, |r| r.gen_cpu_pct),
    );
    ctx.table.add(scenario, "p50 ms", column(runs, |r| r.p50_ms), None, vec![]);
    ctx.table.add(scenario, "p99 ms", column(runs, |r| r.p99_ms), Some(Target::AtMost(50.0)), vec![]);
    ctx.table.add(scenario, "server CPU µs per report", column(runs, |r| r.server_cpu_us), None, vec![]);
}

/// The ingest rate as a share of the ceiling measured in the same run (the figure that holds across
/// machines and their busy moments), when the ceiling ran.
fn add_share_of_ceiling(ctx: &mut Ctx, scenario: &str, runs: &[WrkRun], target_percent: f64) {
    if let Some(ceiling) = ctx.table.median("Ceiling (parse + validate, no storage)", "requests/s") {
        ctx.table.add(
            scenario,
            "% of ceiling",
            column(runs, |r| r.ok_per_s / ceiling * 100.0),
            Some(Target::AtLeast(target_percent)),
            vec![],
        );
    }
}

fn scenario_ingest_sqlite(ctx: &mut Ctx) -> anyhow::Result<()> {
    let options = ctx.options;
    eprintln!("==> ingest on SQLite: text-only ({} clients), then screenshot + report", options.clients);
    let dir = ctx.fresh_dir("ingest")?;
    let svc = Svc::start(options, "ingest-sqlite", &dir, None)?;
    let boot = svc.bootstrap()?;
    let result = (|| {
        let runs = ingest_text(ctx, "ingest sqlite", &svc, &boot.project_key)?;
        let scenario = "Ingest, text-only ~1 KB, SQLite";
        add_ingest_rows(ctx, scenario, &runs, 10_000.0);
        add_share_of_ceiling(ctx, scenario, &runs, 35.0);
        let runs = ingest_runs(ctx, "ingest sqlite, keyed", &svc, &keyed_shape(ctx, &boot.project_key))?;
        let scenario = "Ingest, text-only ~1 KB with an Idempotency-Key each (as the widget sends), SQLite";
        add_ingest_rows(ctx, scenario, &runs, 10_000.0);
        let (_, peak) = svc.rss();
        eprintln!("    peak RSS after text ingest: {peak:.1} MiB");
        ctx.table.add("Memory, peak under text ingest", "RSS MiB", vec![peak], Some(Target::AtMost(80.0)), vec![]);

        eprintln!("    screenshot (200 KB) + report, {} clients", options.blob_clients);
        if options.warmup_seconds > 0 {
            blobload(options, svc.addr, &boot.project_key, options.warmup_seconds)?;
        }
        let (mut rate, mut p50, mut p99, mut cpu, mut server_cpu) = (vec![], vec![], vec![], vec![], vec![]);
        for run in 1..=options.runs {
            let cpu_before = process_cpu_seconds(svc.pid());
            let (result, gen_cpu) = blobload(options, svc.addr, &boot.project_key, options.ingest_seconds)?;
            let f = |name: &str| result[name].as_f64().unwrap_or(f64::NAN);
            let pairs = result["pairs"].as_u64().unwrap_or(0);
            let server_cpu_us = match (cpu_before, process_cpu_seconds(svc.pid())) {
                (Some(before), Some(after)) => (after - before) * 1e6 / pairs.max(1) as f64,
                _ => f64::NAN,
            };
            eprintln!(
                "    screenshot run {run}: {:.0} pairs/s, p50 {:.1} ms, p99 {:.1} ms (blob p99 {:.1}, report p99 {:.1}), {} errors, server {server_cpu_us:.0} µs CPU per pair, generator {gen_cpu:.0}% CPU",
                f("pairs_per_s"),
                f("p50_ms"),
                f("p99_ms"),
                f("blob_p99_ms"),
                f("report_p99_ms"),
                result["errors"]
            );
            if result["errors"].as_u64().unwrap_or(0) > 0 {
                ctx.table.problem(format!(
                    "screenshot run {run}: {} errors, first: {}",
                    result["errors"], result["first_error"]
                ));
            }
            if pairs == 0 {
                ctx.table.problem(format!("screenshot run {run}: no report filed"));
            }
            rate.push(f("pairs_per_s"));
            p50.push(f("p50_ms"));
            p99.push(f("p99_ms"));
            cpu.push(gen_cpu);
            server_cpu.push(server_cpu_us);
        }
        let scenario = "Ingest, 200 KB screenshot blob + report, SQLite";
        ctx.table.add(scenario, "pairs/s (durable)", rate, Some(Target::AtLeast(1_300.0)), cpu);
        ctx.table.add(scenario, "p50 ms (blob + report)", p50, None, vec![]);
        ctx.table.add(scenario, "p99 ms (blob + report)", p99, None, vec![]);
        ctx.table.add(scenario, "server CPU µs per pair", server_cpu, None, vec![]);
        let (_, peak) = svc.rss();
        ctx.table.add(
            "Memory, peak under screenshot ingest",
            "RSS MiB",
            vec![peak],
            Some(Target::AtMost(150.0)),
            vec![],
        );
        anyhow::Ok(())
    })();
    svc.stop()?;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The pause before each of the webhook scenario's runs: the server's background work left by the
/// run before (search index, short ids, WAL checkpoints; each runs every second or two) finishes
/// first instead of weighing on the next run.
const SETTLE: Duration = Duration::from_secs(3);

/// The server's threads that do delivery's own work (`svc-service/src/webhooks.rs` names them):
/// in the idle class, they get only the CPU requests leave.
const DELIVERY_THREADS: [&str; 2] = ["svc-webhooks", "svc-deliveries"];
/// Pairs the signed-rank test needs before it can tell a steady difference at 0.05 (3 rounds).
const MIN_PAIRS_FOR_A_VERDICT: usize = 6;

/// What webhooks cost ingest, on SQLite: reports filed at 1,000 a second (paced, as a busy site
/// files them) and at full rate, with no endpoint and with three subscribed to `report.created`
/// (two answering 204, one answering 500); and how soon the deliveries have all arrived after the
/// paced load. Each measured run is four paced runs, endpoints off, on, on, off: the spread of each
/// side shows the machine's noise beside the difference the endpoints make.
fn scenario_webhooks(ctx: &mut Ctx) -> anyhow::Result<()> {
    use crate::webhooks::{Receiver, paced};
    let options = ctx.options;
    let rate = if options.smoke { 100 } else { 1_000 };
    eprintln!("==> webhooks: ingest at {rate} reports/s and at full rate, without and with three endpoints");
    let dir = ctx.fresh_dir("webhooks")?;
    let svc = Svc::start(options, "webhooks", &dir, None)?;
    let outcome = (|| -> anyhow::Result<()> {
        let boot = svc.bootstrap()?;
        let url = format!("http://{}/ingest/report", svc.addr);
        let bodies = crate::data::report_bodies(64);
        let seconds = Duration::from_secs(options.ingest_seconds);
        // A paced run, the MB svc wrote to disk during it (what deliveries add to the disk that
        // every report's fsync waits on), and its threads' CPU time before it.
        let paced_run = |ctx: &Ctx| {
            let written = || crate::stats::written_bytes(svc.pid()).unwrap_or(0);
            let (before, cpu_before) = (written(), crate::stats::thread_cpu_seconds(svc.pid()));
            let run = ctx.runtime.block_on(paced(url.clone(), boot.project_key.clone(), bodies.clone(), rate, seconds));
            run.map(|run| (run, (written() - before) as f64 / 1e6, cpu_before))
        };
        // CPU seconds since `before`: the threads that serve requests and store (the runtime's and
        // SQLite's connections'), and delivery's own (its thread and the deliveries' writer).
        let cpu_since = |before: &std::collections::BTreeMap<String, f64>| -> (f64, f64) {
            let (mut serving, mut delivering) = (0.0, 0.0);
            for (name, seconds) in crate::stats::thread_cpu_seconds(svc.pid()) {
                let spent = seconds - before.get(&name).copied().unwrap_or(0.0);
                if DELIVERY_THREADS.contains(&name.as_str()) { delivering += spent } else { serving += spent }
            }
            (serving, delivering)
        };
        let receivers = [Receiver::start(204)?, Receiver::start(204)?, Receiver::start(500)?];
        // Seconds from now until both answering receivers have `count` more than `before`.
        let all_delivered = |before: &[u64], count: u64, limit: Duration| {
            let started = Instant::now();
            loop {
                if receivers[..2].iter().zip(before).all(|(r, before)| r.received() >= before + count) {
                    break Some(started.elapsed().as_secs_f64());
                }
                if started.elapsed() > limit {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let bearer = format!("Bearer {}", boot.setup_token);
        let hooks_path = format!("/api/v1/projects/{}/webhooks", boot.project_id);
        // Added anew for each run with endpoints (what came before an endpoint is not sent to it)
        // and deleted after it, so each run without has none.
        let add_endpoints = || -> anyhow::Result<Vec<String>> {
            let mut ids = Vec::new();
            for receiver in &receivers {
                let body = serde_json::json!({"url": receiver.url(), "events": ["report.created"]}).to_string();
                let answer = http::post_json(svc.addr, &hooks_path, &[("Authorization", &bearer)], &body)?;
                anyhow::ensure!(answer.status == 201, "adding a webhook answered {}: {}", answer.status, answer.body);
                ids.push(answer.json()?["id"].as_str().unwrap_or_default().to_string());
            }
            Ok(ids)
        };
        let delete_endpoints = |ids: &[String]| -> anyhow::Result<()> {
            for id in ids {
                let path = format!("{hooks_path}/{id}");
                let answer = http::request(svc.addr, "DELETE", &path, &[("Authorization", &bearer)], None)?;
                anyhow::ensure!(answer.status == 200, "deleting a webhook answered {}", answer.status);
            }
            Ok(())
        };
        let (mut plain, mut hooked, mut caught_up) = (Vec::new(), Vec::new(), Vec::new());
        let (mut plain_written, mut hooked_written) = (Vec::new(), Vec::new());
        let (mut plain_cpu, mut hooked_cpu, mut delivery_cpu) = (Vec::new(), Vec::new(), Vec::new());
        for round in 1..=options.runs {
            // Four runs in the order without, with, with, without: each side once right after the
            // other and once in the other place, so neither side always inherits what the run
            // before it left behind (the search index and the short ids catching up on its 10,000
            // reports, a longer WAL). In the order without, with, a run with no endpoint on either
            // side put the second's p99 far above the first's in three rounds of five (bench/README.md,
            // "The order of the runs"). A pause before each lets most of the leftover work finish.
            let mut endpoints = Vec::new();
            let mut p99s = Vec::new();
            for with_endpoints in [false, true, true, false] {
                if !with_endpoints {
                    delete_endpoints(&std::mem::take(&mut endpoints))?;
                }
                std::thread::sleep(SETTLE);
                if !with_endpoints {
                    let (without, written, cpu_before) = paced_run(ctx)?;
                    plain_cpu.push(cpu_since(&cpu_before).0 * 1e6 / without.sent.max(1) as f64);
                    p99s.push(format!("{:.1} without", without.p99_ms));
                    plain.push(without);
                    plain_written.push(written);
                    continue;
                }
                if endpoints.is_empty() {
                    endpoints = add_endpoints()?;
                }
                let before: Vec<u64> = receivers[..2].iter().map(Receiver::received).collect();
                let attempts_before: u64 = receivers.iter().map(Receiver::received).sum();
                let (with, written, cpu_before) = paced_run(ctx)?;
                hooked_written.push(written);
                // Every report of the paced run reaches both answering endpoints; how long after the load.
                match all_delivered(&before, with.sent, Duration::from_secs(60)) {
                    Some(seconds) => caught_up.push(seconds),
                    None => ctx.table.problem(format!(
                        "webhooks: deliveries did not catch up within 60 s (round {round}: {} and {} of {})",
                        receivers[0].received() - before[0],
                        receivers[1].received() - before[1],
                        with.sent
                    )),
                }
                // CPU from the run's start until its deliveries arrived (or the wait gave up).
                let (serving, delivering) = cpu_since(&cpu_before);
                let attempts = receivers.iter().map(Receiver::received).sum::<u64>() - attempts_before;
                hooked_cpu.push(serving * 1e6 / with.sent.max(1) as f64);
                delivery_cpu.push(delivering * 1e6 / attempts.max(1) as f64);
                p99s.push(format!("{:.1} with", with.p99_ms));
                hooked.push(with);
            }
            eprintln!(
                "    paced round {round}: p99 ms {}; all delivered {:?} s after the load (the failing endpoint \
                 tried {} times in all)",
                p99s.join(", "),
                &caught_up[caught_up.len().saturating_sub(2)..],
                receivers[2].received()
            );
        }
        // The full-rate runs come after the paced ones: each leaves work behind it (the search
        // index catching up), which would weigh on a paced run after it.
        std::thread::sleep(SETTLE);
        let plain_full = ingest_text(ctx, "webhooks: full rate, no endpoint", &svc, &boot.project_key)?;
        add_endpoints()?;
        std::thread::sleep(SETTLE);
        let (before, created_before) =
            (receivers[..2].iter().map(Receiver::received).collect::<Vec<u64>>(), reports_created(svc.addr)?);
        let hooked_full = ingest_text(ctx, "webhooks: full rate, three endpoints", &svc, &boot.project_key)?;
        // Delivery may fall behind at full rate, but never further than it can make up soon after.
        let filed = reports_created(svc.addr)? - created_before;
        let full_caught_up = all_delivered(&before, filed, Duration::from_secs(600));
        eprintln!("    full rate: {filed} reports with endpoints, all delivered {full_caught_up:?} s after the load");
        let failed: u64 = plain.iter().chain(&hooked).map(|run| run.failed).sum();
        if failed > 0 {
            ctx.table.problem(format!("webhooks: {failed} paced reports failed"));
        }
        let paced_label = if rate == 1_000 { "1,000".to_string() } else { rate.to_string() };
        let without = format!("Webhooks: {paced_label} reports/s, no endpoint");
        let with = format!("Webhooks: {paced_label} reports/s, 3 endpoints (1 failing)");
        let (without, with) = (without.as_str(), with.as_str());
        let p50 = |runs: &[crate::webhooks::Paced]| runs.iter().map(|run| run.p50_ms).collect::<Vec<_>>();
        let p99 = |runs: &[crate::webhooks::Paced]| runs.iter().map(|run| run.p99_ms).collect::<Vec<_>>();
        ctx.table.add(without, "p50 ms", p50(&plain), None, vec![]);
        ctx.table.add(without, "p99 ms", p99(&plain), None, vec![]);
        ctx.table.add(without, "MB written to disk", plain_written, None, vec![]);
        ctx.table.add(without, "server CPU µs per report", plain_cpu, None, vec![]);
        ctx.table.add(with, "p50 ms", p50(&hooked), None, vec![]);
        ctx.table.add(with, "p99 ms", p99(&hooked), Some(Target::AtMost(50.0)), vec![]);
        ctx.table.add(
            with,
            "reports/s filed",
            hooked.iter().map(|run| run.per_s).collect(),
            Some(Target::AtLeast(f64::from(rate) * 0.98)),
            vec![],
        );
        ctx.table.add(with, "MB written to disk", hooked_written, None, vec![]);
        ctx.table.add(with, "server CPU µs per report, delivery's threads apart", hooked_cpu, None, vec![]);
        ctx.table.add(with, "delivery's threads' CPU µs per delivery attempt", delivery_cpu, None, vec![]);
        // Within noise or not: each run with endpoints against the run without beside it (the
        // first two of a round, and the last two), a steady difference told from the machine's
        // spread by a paired test rather than by eye.
        let paired = |figure: fn(&crate::webhooks::Paced) -> f64| -> Vec<(f64, f64)> {
            plain.iter().zip(&hooked).map(|(without, with)| (figure(without), figure(with))).collect()
        };
        let beside = "Webhooks: 1,000 reports/s, 3 endpoints against the run without beside it";
        for (name, figure) in
            [("p50", (|run| run.p50_ms) as fn(&crate::webhooks::Paced) -> f64), ("p99", |run| run.p99_ms)]
        {
            let pairs = paired(figure);
            let ratios: Vec<f64> = pairs.iter().map(|(without, with)| with / without).collect();
            ctx.table.add(beside, &format!("{name} with ÷ without"), ratios, None, vec![]);
            if let Some(p) = crate::stats::signed_rank_p(&pairs) {
                // With fewer than 6 pairs no outcome reaches 0.05 (the smallest p is 2 / 2^pairs):
                // the figure is shown, but it cannot meet or miss the target.
                let target = (pairs.len() >= MIN_PAIRS_FOR_A_VERDICT).then_some(Target::AtLeast(0.05));
                ctx.table.add(
                    beside,
                    &format!("{name}: p of a steady difference (signed-rank, {} pairs)", pairs.len()),
                    vec![p],
                    target,
                    vec![],
                );
            }
        }
        if !caught_up.is_empty() {
            ctx.table.add(with, "s until all delivered after the load", caught_up, Some(Target::AtMost(5.0)), vec![]);
        }
        let full = "Webhooks: full-rate ingest, 3 endpoints (1 failing)";
        match full_caught_up {
            Some(seconds) => ctx.table.add(full, "s until all delivered after the load", vec![seconds], None, vec![]),
            None => {
                ctx.table.problem("webhooks: deliveries did not catch up within 600 s of the full-rate runs".into())
            }
        }
        let base =
            crate::stats::summary(&column(&plain_full, |r| r.ok_per_s)).map(|(median, _, _)| median).unwrap_or(0.0);
        ctx.table.add(full, "reports/s (durable)", column(&hooked_full, |r| r.ok_per_s), None, vec![]);
        if base > 0.0 {
            ctx.table.add(
                full,
                "% of the same run without",
                column(&hooked_full, |r| r.ok_per_s / base * 100.0),
                Some(Target::AtLeast(90.0)),
                vec![],
            );
        }
        Ok(())
    })();
    svc.stop()?;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn scenario_ingest_postgres(ctx: &mut Ctx, base: &str) -> anyhow::Result<()> {
    let options = ctx.options;
    eprintln!("==> ingest on PostgreSQL: text-only ({} clients), without and with keys", options.clients);
    let (name, url) = fresh_database(&ctx.runtime, base, "ingest")?;
    let dir = ctx.fresh_dir("ingest-pg")?;
    let result = (|| {
        let svc = Svc::start(options, "ingest-postgres", &dir, Some(&url))?;
        let outcome = (|| {
            let boot = svc.bootstrap()?;
            let runs = ingest_text(ctx, "ingest postgres", &svc, &boot.project_key)?;
            let scenario = "Ingest, text-only ~1 KB, PostgreSQL";
            add_ingest_rows(ctx, scenario, &runs, 5_000.0);
            add_share_of_ceiling(ctx, scenario, &runs, 25.0);
            let runs = ingest_runs(ctx, "ingest postgres, keyed", &svc, &keyed_shape(ctx, &boot.project_key))?;
            let scenario = "Ingest, text-only ~1 KB with an Idempotency-Key each (as the widget sends), PostgreSQL";
            add_ingest_rows(ctx, scenario, &runs, 5_000.0);
            anyhow::Ok(())
        })();
        svc.stop()?;
        outcome
    })();
    drop_database(&ctx.runtime, base, &name);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Mints a read/write key with the setup token.
fn mint_key(addr: SocketAddr, boot: &Bootstrap) -> anyhow::Result<String> {
    let bearer = format!("Bearer {}", boot.setup_token);
    let answer = http::post_json(
        addr,
        &format!("/api/v1/projects/{}/keys", boot.project_id),
        &[("Authorization", &bearer)],
        r#"{"name":"bench reader","scopes":["feedback:read","feedback:write"]}"#,
    )?;
    anyhow::ensure!(answer.status == 201, "minting a key answered {}: {}", answer.status, answer.body);
    Ok(answer.json()?["key"].as_str().context("no key in the answer")?.to_string())
}

const MCP_LIST: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_reports","arguments":{"limit":50}}}"#;

/// Seeds, measures start-up with the seeded reports, then the list scenarios.
fn scenario_lists(ctx: &mut Ctx, backend: &str, database: Option<(&str, &str)>) -> anyhow::Result<()> {
    let options = ctx.options;
    let reports = options.reports;
    eprintln!(
        "==> {backend}: {reports} reports seeded through the store, start-up, listing ({} clients)",
        options.list_clients
    );
    let dir = ctx.fresh_dir(&format!("list-{backend}"))?;
    let database_url = database.map(|(_, url)| url);
    let svc = Svc::start(options, &format!("list-{backend}-bootstrap"), &dir, database_url)?;
    let boot = svc.bootstrap()?;
    svc.stop()?;
    let store_url = match database_url {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", dir.join("svc.db").display()),
    };
    let seeded = ctx.runtime.block_on(crate::seed::run(&store_url, &boot.project_id, reports))?;
    eprintln!("    seeded {reports} reports in {:.1} s", seeded["seconds"].as_f64().unwrap_or(0.0));
    let session = ctx.runtime.block_on(crate::seed::dashboard_session(&store_url, &boot.project_id))?;

    let mut ready = Vec::new();
    let mut running = None;
    for run in 0..options.runs {
        let svc = Svc::start(options, &format!("list-{backend}-{run}"), &dir, database_url)?;
        eprintln!("    start-up with {reports} reports, run {}: ready in {:.0} ms", run + 1, svc.ready_ms);
        ready.push(svc.ready_ms);
        if run + 1 == options.runs {
            running = Some(svc);
        } else {
            svc.stop()?;
        }
    }
    let svc = running.context("at least one run")?;
    let scenario = format!("Start-up, {} reports, {backend}", number(reports as f64));
    let target = (backend == "SQLite").then_some(Target::AtMost(1000.0));
    ctx.table.add(&scenario, "ms to /readyz 200", ready, target, vec![]);

    let result = (|| {
        let key = mint_key(svc.addr, &boot)?;
        let bearer = format!("Bearer {key}");
        let feedback = format!("/api/v1/projects/{}/feedback?limit=100", boot.project_id);
        let variants: [(&str, String); 4] = [
            ("no filter", feedback.clone()),
            ("status=triaged", format!("{feedback}&status=triaged")),
            ("channelKey=idea", format!("{feedback}&channelKey=idea")),
            ("status=new&channelKey=bug", format!("{feedback}&status=new&channelKey=bug")),
        ];
        for (filter, path) in variants {
            // One checked request first: the answer must be a full page.
            let answer = http::get(svc.addr, &path, &[("Authorization", &bearer)])?;
            anyhow::ensure!(answer.status == 200, "GET {path} answered {}: {}", answer.status, answer.body);
            let items = answer.json()?["items"].as_array().map(Vec::len).unwrap_or(0);
            if items != 100.min(reports) {
                ctx.table.problem(format!("{backend} list {filter}: {items} items on the first page"));
            }
            let shape = Shape {
                method: "GET",
                path: path.clone(),
                headers: vec![("Authorization".into(), bearer.clone())],
                bodies: None,
            };
            let label = format!("{backend} REST list {filter}");
            let scenario = format!("REST list limit=100, {filter}, {backend}");
            measure_listing(ctx, &label, &scenario, svc.server(), &shape, 10.0)?;
        }

        let answer = http::post_json(
            svc.addr,
            "/mcp",
            &[("Authorization", &bearer), ("Accept", "application/json, text/event-stream")],
            MCP_LIST,
        )?;
        anyhow::ensure!(answer.status == 200, "tool endpoint answered {}: {}", answer.status, answer.body);
        let reply = answer.json()?;
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
        let items = serde_json::from_str::<Value>(text).ok().and_then(|v| v.as_array().map(Vec::len)).unwrap_or(0);
        if reply["result"]["isError"] == true || items != 50.min(reports) {
            ctx.table.problem(format!(
                "{backend} list_reports: {items} items ({})",
                answer.body.chars().take(200).collect::<String>()
            ));
        }
        let bodies = options.work.join("mcp-bodies.txt");
        std::fs::write(&bodies, format!("{MCP_LIST}\n"))?;
        let shape = Shape {
            method: "POST",
            path: "/mcp".into(),
            headers: vec![
                ("Authorization".into(), bearer.clone()),
                ("Content-Type".into(), "application/json".into()),
                ("Accept".into(), "application/json, text/event-stream".into()),
            ],
            bodies: Some(bodies),
        };
        let label = format!("{backend} tool list_reports");
        let scenario = format!("Tool endpoint list_reports limit=50, {backend}");
        measure_listing(ctx, &label, &scenario, svc.server(), &shape, 15.0)?;

        // The dashboard's inbox as a signed-in person loads it: the first page, and searches.
        let cookie = format!("svc_session={session}");
        let inbox_target = if backend == "SQLite" { 20.0 } else { 30.0 };
        let pages: [(&str, &str, &str); 3] = [
            ("first page", "/", "reports"),
            ("search checkout", "/?q=checkout", "<mark>"),
            ("search \"spinner forever\"", "/?q=%22spinner+forever%22", "item"),
        ];
        for (what, path, expect) in pages {
            let answer = http::get(svc.addr, path, &[("Cookie", &cookie)])?;
            anyhow::ensure!(answer.status == 200, "GET {path} answered {}", answer.status);
            let items = answer.body.matches("class=\"item").count();
            if items != 50.min(reports) || !answer.body.contains(expect) {
                ctx.table.problem(format!("{backend} inbox {what}: {items} items on the first page"));
            }
            let shape = Shape {
                method: "GET",
                path: path.into(),
                headers: vec![("Cookie".into(), cookie.clone())],
                bodies: None,
            };
            let label = format!("{backend} inbox {what}");
            let scenario = format!("Dashboard inbox, {what}, {backend}");
            measure_listing(ctx, &label, &scenario, svc.server(), &shape, inbox_target)?;
        }
        measure_triage_pages(ctx, backend, &svc, &cookie, reports)?;
        measure_keyboard_status(ctx, backend, &svc, &session)?;
        let (rss, peak) = svc.rss();
        eprintln!("    RSS after listing: {rss:.1} MiB (peak {peak:.1} MiB)");
        anyhow::Ok(())
    })();
    svc.stop()?;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The dashboard as a person triaging works in it (issue 27): each view's first page, a report
/// beside the list (the whole page, and the pane alone as the script asks for it when moving), the
/// rooms page, and a status change (the form's POST; the page it leads to is the view measured
/// above). Each p99 at most 50 ms.
fn measure_triage_pages(ctx: &mut Ctx, backend: &str, svc: &Svc, cookie: &str, reports: usize) -> anyhow::Result<()> {
    const TARGET_MS: f64 = 50.0;
    let first = http::get(svc.addr, "/?view=all", &[("Cookie", cookie)])?;
    let marker = "data-id=\"";
    let report_id = first
        .body
        .find(marker)
        .map(|at| first.body[at + marker.len()..].split('"').next().unwrap_or_default().to_string())
        .context("a report on the inbox's first page")?;
    let csrf_marker = "name=\"_csrf\" value=\"";
    let csrf = first
        .body
        .find(csrf_marker)
        .map(|at| first.body[at + csrf_marker.len()..].split('"').next().unwrap_or_default().to_string())
        .context("a CSRF token on the inbox")?;
    let get = |path: String, extra: Option<(&str, &str)>| Shape {
        method: "GET",
        path,
        headers: [("Cookie".to_string(), cookie.to_string())]
            .into_iter()
            .chain(extra.map(|(name, value)| (name.to_string(), value.to_string())))
            .collect(),
        bodies: None,
    };
    let mut pages: Vec<(String, Shape, &str)> = ["triage", "open", "drafts", "waiting", "mine"]
        .into_iter()
        .map(|view| (format!("view {view}"), get(format!("/?view={view}"), None), "class=\"views\""))
        .collect();
    pages.push(("report view".into(), get(format!("/?view=all&r={report_id}"), None), "Similar reports"));
    pages.push((
        "report pane alone".into(),
        get(format!("/?view=all&r={report_id}"), Some(("Svc-Fragment", "report"))),
        "Similar reports",
    ));
    pages.push(("rooms".into(), get("/rooms".into(), None), "Rooms"));
    for (what, shape, expect) in &pages {
        let headers: Vec<(&str, &str)> = shape.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let answer = http::get(svc.addr, &shape.path, &headers)?;
        if answer.status != 200 || !answer.body.contains(expect) {
            ctx.table.problem(format!("{backend} dashboard {what}: {} at {}", answer.status, shape.path));
        }
        let label = format!("{backend} dashboard {what}");
        let scenario = format!("Dashboard {what}, {} reports, {backend}", number(reports as f64));
        measure_listing(ctx, &label, &scenario, svc.server(), shape, TARGET_MS)?;
    }
    // The status change: the same report set back and forth, as the status form posts it.
    let bodies = ctx.options.work.join("status-bodies.txt");
    std::fs::write(
        &bodies,
        ["triaged", "new"].map(|status| format!("_csrf={csrf}&status={status}&back=%2F%3Fview%3Dall\n")).concat(),
    )?;
    let shape = Shape {
        method: "POST",
        path: format!("/reports/{report_id}/status"),
        headers: vec![
            ("Cookie".into(), cookie.to_string()),
            ("Content-Type".into(), "application/x-www-form-urlencoded".into()),
            ("Sec-Fetch-Site".into(), "same-origin".into()),
        ],
        bodies: Some(bodies),
    };
    let label = format!("{backend} dashboard status change");
    let scenario = format!("Dashboard status change (POST), {} reports, {backend}", number(reports as f64));
    measure_listing(ctx, &label, &scenario, svc.server(), &shape, TARGET_MS)
}

/// A keyboard status change in Chromium, from the keydown to the row showing it (issue 27: at most
/// 100 ms), on the listing scenario's server.
fn measure_keyboard_status(ctx: &mut Ctx, backend: &str, svc: &Svc, session: &str) -> anyhow::Result<()> {
    let scenario = format!("Dashboard keyboard status change in Chromium, {backend}");
    let chromium = std::env::var("SVC_BENCH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let script_dir = ctx.options.bench_dir.join("widget");
    if !Path::new(&chromium).exists() || !script_dir.join("node_modules/playwright-core").exists() {
        ctx.table.skip(&scenario, "needs Chromium and playwright-core (the widget scenario installs it)");
        return Ok(());
    }
    let output = Command::new("node")
        .arg(script_dir.join("keyboard.mjs"))
        .env("SVC_URL", format!("http://{}", svc.addr))
        .env("SVC_SESSION", session)
        .env("SVC_BENCH_CHANGES", (4 * ctx.options.runs).to_string())
        .env("SVC_BENCH_CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    anyhow::ensure!(output.status.success(), "the keyboard scenario failed: {stdout}");
    let result: Value = stdout.lines().find_map(|line| serde_json::from_str(line).ok()).context("no result")?;
    if let Some(reason) = result["skipped"].as_str() {
        ctx.table.skip(&scenario, reason);
        return Ok(());
    }
    let times: Vec<f64> =
        result["visible_ms"].as_array().context("no times")?.iter().filter_map(Value::as_f64).collect();
    eprintln!("    keyboard status change visible after {times:?} ms");
    ctx.table.add(&scenario, "ms from keydown to the row's new status", times, Some(Target::AtMost(100.0)), vec![]);
    Ok(())
}

fn scenario_widget(ctx: &mut Ctx) -> anyhow::Result<()> {
    let options = ctx.options;
    eprintln!("==> widget: the per-project loader in Chromium, CPU throttled 4x");
    let scenario = "Widget loader, Chromium 4x CPU throttling";
    let chromium = std::env::var("SVC_BENCH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        ctx.table.skip(scenario, &format!("no Chromium at {chromium} (apt-get install chromium)"));
        return Ok(());
    }
    let widget_dir = options.bench_dir.join("widget");
    if !widget_dir.join("node_modules/playwright-core").exists() {
        let installed = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&widget_dir)
            .stdin(Stdio::null())
            .status();
        if !installed.is_ok_and(|s| s.success()) {
            ctx.table.skip(scenario, "could not install playwright-core (npm ci in bench/widget)");
            return Ok(());
        }
    }
    let dir = ctx.fresh_dir("widget")?;
    let svc = Svc::start(options, "widget", &dir, None)?;
    let result = (|| {
        let boot = svc.bootstrap()?;
        let loader = http::get(svc.addr, &format!("/v1/svc/{}.js", boot.project_key), &[])?;
        if loader.status != 200 {
            ctx.table.skip(scenario, "widget loader not available");
            return Ok(());
        }
        let served_kb = gzip_len(loader.body.as_bytes())? as f64 / 1024.0;
        ctx.table.add(
            "Widget loader, as served for a project",
            "KB gzip (level 9)",
            vec![served_kb],
            Some(Target::AtMost(6.0)),
            vec![],
        );
        let output = Command::new("node")
            .arg(widget_dir.join("widget.mjs"))
            .env("SVC_URL", format!("http://{}", svc.addr))
            .env("SVC_PROJECT_KEY", &boot.project_key)
            .env("SVC_BENCH_RUNS", options.runs.to_string())
            .env("SVC_BENCH_CHROMIUM", &chromium)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "the widget scenario failed: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        let (mut longest, mut longest_any, mut visible) = (vec![], vec![], vec![]);
        let (mut recorder_median, mut recorder_click, mut recorder_task) = (vec![], vec![], vec![]);
        let (mut page_median, mut page_mean) = (vec![], vec![]);
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(run) = serde_json::from_str::<Value>(line) else { continue };
            if let Some(reason) = run["skipped"].as_str() {
                ctx.table.skip(scenario, reason);
                return Ok(());
            }
            eprintln!("    {run}");
            longest.push(run["longest_task_ms"].as_f64().unwrap_or(f64::NAN));
            longest_any.push(run["longest_any_task_ms"].as_f64().unwrap_or(f64::NAN));
            visible.push(run["launcher_visible_ms"].as_f64().unwrap_or(f64::NAN));
            recorder_median.push(run["recorder_click_median_ms"].as_f64().unwrap_or(f64::NAN));
            recorder_click.push(run["recorder_click_ms"].as_f64().unwrap_or(f64::NAN));
            recorder_task.push(run["recorder_longest_call_ms"].as_f64().unwrap_or(f64::NAN));
            page_median.push(run["page_listener_median_ms"].as_f64().unwrap_or(f64::NAN));
            page_mean.push(run["page_listener_ms"].as_f64().unwrap_or(f64::NAN));
        }
        anyhow::ensure!(!longest.is_empty(), "the widget scenario printed no result");
        ctx.table.add(scenario, "longest task running loader script, ms", longest, Some(Target::AtMost(50.0)), vec![]);
        ctx.table.add(scenario, "longest main-thread task of any kind, ms", longest_any, None, vec![]);
        ctx.table.add(scenario, "ms to launcher visible", visible, None, vec![]);
        ctx.table.add(
            scenario,
            "steps recorder, script ms per click (median)",
            recorder_median,
            Some(Target::AtMost(0.1)),
            vec![],
        );
        ctx.table.add(scenario, "steps recorder, script ms per click (mean)", recorder_click, None, vec![]);
        ctx.table.add(scenario, "steps recorder, longest call, ms", recorder_task, Some(Target::AtMost(50.0)), vec![]);
        // The floor: the page's own listener that only counts clicks, in the same trace.
        ctx.table.add(scenario, "page's empty click listener, ms per click (median)", page_median, None, vec![]);
        ctx.table.add(scenario, "page's empty click listener, ms per click (mean)", page_mean, None, vec![]);
        anyhow::Ok(())
    })();
    svc.stop()?;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Bytes of `data` gzip-compressed at the best level (what a compressing proxy in front of Svc sends).
fn gzip_len(data: &[u8]) -> anyhow::Result<usize> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data)?;
    Ok(encoder.finish()?.len())
}

fn postgres_base(options: &Options) -> Option<String> {
    options.postgres_url.clone()
}

fn machine_line() -> String {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cpus} cores ({model})")
}

fn git_commit(dir: &Path) -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

pub fn run(options: Options) -> anyhow::Result<bool> {
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(&options.work);
    std::fs::create_dir_all(&options.work)?;
    let bodies = options.work.join("report-bodies.txt");
    std::fs::write(&bodies, crate::data::report_bodies(64).join("\n") + "\n")?;
    let load_before = load_average();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut ctx = Ctx { options: &options, table: Table::default(), runtime, bodies, data_dirs: 0 };

    type Scenario = fn(&mut Ctx) -> anyhow::Result<()>;
    let sqlite_lists: Scenario = |ctx| scenario_lists(ctx, "SQLite", None);
    // The widget runs early, on a quiet machine: after the PostgreSQL rows the database server is
    // still busy dropping its million-report database, and a 4x-throttled page feels every bit of it.
    let steps: [(&str, Scenario); 6] = [
        ("startup", scenario_startup_empty),
        ("widget", scenario_widget),
        ("ceiling", scenario_ceiling),
        ("ingest", scenario_ingest_sqlite),
        ("webhooks", scenario_webhooks),
        ("list", sqlite_lists),
    ];
    let mut ok = true;
    for (name, step) in steps {
        if options.wants(name)
            && let Err(error) = step(&mut ctx)
        {
            ctx.table.problem(format!("{name}: {error:#}"));
            ok = false;
        }
    }
    let postgres = postgres_base(&options);
    if options.wants("pg-ingest") || options.wants("pg-list") {
        match &postgres {
            None => {
                ctx.table.skip("Ingest, text-only ~1 KB, PostgreSQL", "no PostgreSQL (set SVC_BENCH_POSTGRES_URL)");
                ctx.table.skip("Listing, PostgreSQL", "no PostgreSQL (set SVC_BENCH_POSTGRES_URL)");
            }
            Some(base) => {
                if options.wants("pg-ingest")
                    && let Err(error) = scenario_ingest_postgres(&mut ctx, base)
                {
                    ctx.table.problem(format!("pg-ingest: {error:#}"));
                    ok = false;
                }
                if options.wants("pg-list") {
                    let outcome = fresh_database(&ctx.runtime, base, "list").and_then(|(name, url)| {
                        let result = scenario_lists(&mut ctx, "PostgreSQL", Some((&name, &url)));
                        drop_database(&ctx.runtime, base, &name);
                        result
                    });
                    if let Err(error) = outcome {
                        ctx.table.problem(format!("pg-list: {error:#}"));
                        ok = false;
                    }
                }
            }
        }
    }
    if !ctx.table.problems.is_empty() {
        ok = false;
    }

    let load_after = load_average();
    let when = svc_core::time::iso(svc_core::time::now_ms());
    let header = format!(
        "{} run, {when}, commit {}, {}; load average {} before, {} after; {:.0} s in all{}",
        if options.smoke { "Smoke" } else { "Benchmark" },
        git_commit(&options.bench_dir),
        machine_line(),
        load_before.map(|l| format!("{l:.2}")).unwrap_or_default(),
        load_after.map(|l| format!("{l:.2}")).unwrap_or_default(),
        started.elapsed().as_secs_f64(),
        if options.smoke { " (smoke: tiny data, short runs, timings mean nothing)" } else { "" },
    );
    let text = render(&ctx.table, &options, &header);
    println!("\n{text}");
    if let Some(parent) = options.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&options.out, format!("# Latest benchmark results\n\n{text}"))?;
    eprintln!("written to {}", options.out.display());
    if !options.smoke {
        clear_work_keeping_logs(&options.work, &options.out);
    }
    Ok(ok)
}

/// Removes the scratch data (databases, blob folders, request bodies: gigabytes after a full
/// run) but keeps each server's log, so a failed request in the table can still be traced, and
/// the table when it was written there (an `--only` run's `partial.md`).
fn clear_work_keeping_logs(work: &Path, table: &Path) {
    let Ok(entries) = std::fs::read_dir(work) else { return };
    for entry in entries.flatten() {
        if entry.file_name() == "logs" || entry.path() == table {
            continue;
        }
        let path = entry.path();
        let _ = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
    }
    eprintln!("server logs kept in {}", work.join("logs").display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls() {
        assert_eq!(
            database_url("postgres://postgres@127.0.0.1:5432/test", "svc_bench_x").unwrap(),
            "postgres://postgres@127.0.0.1:5432/svc_bench_x"
        );
        assert_eq!(
            database_url("postgresql://u:p@h/db?sslmode=disable", "b").unwrap(),
            "postgresql://u:p@h/b?sslmode=disable"
        );
        assert_eq!(database_url("postgres://h:5432", "b").unwrap(), "postgres://h:5432/b");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(12345.6), "12,346");
        assert_eq!(number(1234567.0), "1,234,567");
        assert_eq!(number(123.4), "123");
        assert_eq!(number(12.34), "12.3");
        assert_eq!(number(1.234), "1.23");
    }
}
