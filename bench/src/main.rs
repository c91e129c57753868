//! `svc-bench`: Svc's benchmark suite. `bench/run` builds it with `svc` and calls `svc-bench suite`;
//! the other commands are its parts (the ceiling server, the blob-then-report load client, the
//! seeder), usable on their own. See bench/README.md.

// `unsafe` only where the benchmark calls libc (CPU time of a child, signals), each allowed there.
#![deny(unsafe_code)]

mod ceiling;
mod compare;
mod data;
mod http;
mod loadgen;
mod seed;
mod stats;
mod suite;
mod webhooks;

use clap::{Parser, Subcommand};

/// The same allocator as `svc`, set up the same way, so the ceiling server runs on equal terms.
#[path = "../../crates/svc/src/allocator.rs"]
mod allocator;
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "svc-bench", about = "Svc's benchmark suite")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every scenario and print the table (what bench/run calls).
    Suite(SuiteArgs),
    /// The ceiling server: parse + validate a report body with Svc's own code, store nothing.
    Ceiling {
        #[arg(long, default_value = "127.0.0.1:0")]
        bind: String,
    },
    /// Blob-then-report load: each client uploads a screenshot, then files the report naming it.
    Blobload {
        #[arg(long)]
        url: String,
        /// Public project key.
        #[arg(long)]
        key: String,
        #[arg(long, default_value_t = 64)]
        clients: usize,
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        #[arg(long, default_value_t = 200 * 1024)]
        png_bytes: usize,
    },
    /// Bulk-load reports into a project through the store (sqlite://... or postgres://...).
    Seed {
        #[arg(long)]
        database_url: String,
        #[arg(long)]
        project_id: String,
        #[arg(long, default_value_t = 1_000_000)]
        count: usize,
    },
    /// Two builds measured alternately in one run, and the ratio of each figure (what
    /// `bench/run --compare <commit>` runs: the base is that commit's build, the head this one).
    Compare {
        /// The base build's `svc-bench` and `svc`.
        #[arg(long)]
        base_bench: PathBuf,
        #[arg(long)]
        base_svc: PathBuf,
        /// What the base is (a commit), for the table.
        #[arg(long)]
        base_label: String,
        /// The head's `svc` (its `svc-bench` is this one).
        #[arg(long)]
        head_svc: PathBuf,
        #[arg(long, default_value = "working tree")]
        head_label: String,
        /// Scenarios (comma-separated), as `suite --only` takes them.
        #[arg(long, value_delimiter = ',', default_value = "ingest,list")]
        only: Vec<String>,
        /// Rounds: each measures both sides once, taking turns to go first.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Seconds per ingest run, seconds per listing run, reports seeded (the suite's defaults).
        #[arg(long)]
        seconds: Option<u64>,
        #[arg(long)]
        list_seconds: Option<u64>,
        #[arg(long)]
        reports: Option<usize>,
        /// Where the table goes (default target/bench-work/compare/compare-<base>.md).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Files reports at a steady rate (what the webhook scenario's paced runs send), for profiling
    /// a running server at a load short of its limit; prints the rate kept and the latencies.
    Paced {
        /// The ingest URL (`http://host:port/ingest/report`).
        #[arg(long)]
        url: String,
        /// Public project key.
        #[arg(long)]
        key: String,
        #[arg(long, default_value_t = 1_000)]
        rate: u32,
        #[arg(long, default_value_t = 10)]
        seconds: u64,
    },
    /// Print the report bodies the ingest scenarios send, one per line.
    Bodies {
        #[arg(long, default_value_t = 64)]
        count: usize,
    },
}

#[derive(clap::Args)]
struct SuiteArgs {
    /// Seconds-long runs on tiny data (the test command's smoke run); timings mean nothing.
    #[arg(long)]
    smoke: bool,
    /// The svc binary to measure.
    #[arg(long)]
    svc: PathBuf,
    /// Only these scenarios (comma-separated): startup, ceiling, ingest, webhooks, list, pg-ingest, pg-list, widget.
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Measured runs per scenario (default 3; smoke 1).
    #[arg(long)]
    runs: Option<usize>,
    /// Seconds per ingest run (default 10).
    #[arg(long)]
    seconds: Option<u64>,
    /// Seconds per listing run (default 5).
    #[arg(long)]
    list_seconds: Option<u64>,
    /// Reports seeded for the listing and start-up scenarios (default 1,000,000).
    #[arg(long)]
    reports: Option<usize>,
    /// Concurrent ingest clients (default 64).
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// wrk threads.
    #[arg(long, default_value_t = 2)]
    wrk_threads: usize,
    /// PostgreSQL server for the PostgreSQL scenarios (a database svc_bench_* is created and dropped).
    #[arg(long, env = "SVC_BENCH_POSTGRES_URL", hide_env_values = true)]
    postgres_url: Option<String>,
    /// Where the Markdown table goes (default bench/results/latest.md for a full run; smoke.md or
    /// partial.md under --work for --smoke or --only).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scratch folder for data dirs and logs (default target/bench-work; the servers' logs are
    /// kept there after a run, the data is removed).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Record a CPU profile (`perf record`) of the server over each scenario's first measured run,
    /// into this folder (what `bench/profile` runs).
    #[arg(long)]
    profile: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    allocator::configure();
    match Cli::parse().command {
        Command::Suite(args) => {
            let bench_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            let work = args.work.unwrap_or_else(|| bench_dir.join("../target/bench-work"));
            let smoke = args.smoke;
            let options = suite::Options {
                smoke,
                runs: args.runs.unwrap_or(if smoke { 1 } else { 3 }).max(1),
                ingest_seconds: args.seconds.unwrap_or(if smoke { 1 } else { 10 }),
                list_seconds: args.list_seconds.unwrap_or(if smoke { 1 } else { 5 }),
                warmup_seconds: if smoke { 0 } else { 2 },
                reports: args.reports.unwrap_or(if smoke { 2_000 } else { 1_000_000 }),
                clients: if smoke { args.clients.min(8) } else { args.clients },
                blob_clients: if smoke { 4 } else { args.clients },
                list_clients: 8,
                wrk_threads: args.wrk_threads,
                postgres_url: args.postgres_url.filter(|u| !u.is_empty()),
                svc: std::fs::canonicalize(&args.svc)?,
                bench_bin: std::env::current_exe()?,
                // Only a full run replaces the committed table; smoke and `--only` runs stay in `work`.
                out: args.out.unwrap_or_else(|| match (smoke, &args.only) {
                    (true, _) => work.join("smoke.md"),
                    (false, Some(_)) => work.join("partial.md"),
                    (false, None) => bench_dir.join("results/latest.md"),
                }),
                work,
                bench_dir,
                only: args.only,
                profile: args.profile,
            };
            if !suite::run(options)? {
                std::process::exit(1);
            }
        }
        Command::Ceiling { bind } => {
            tokio::runtime::Runtime::new()?.block_on(ceiling::serve(&bind))?;
        }
        Command::Blobload { url, key, clients, seconds, png_bytes } => {
            let options =
                loadgen::Options { url, project_key: key, clients, duration: Duration::from_secs(seconds), png_bytes };
            let result = tokio::runtime::Runtime::new()?.block_on(loadgen::run(options))?;
            println!("{result}");
        }
        Command::Seed { database_url, project_id, count } => {
            let result = tokio::runtime::Runtime::new()?.block_on(seed::run(&database_url, &project_id, count))?;
            println!("{result}");
        }
        Command::Compare {
            base_bench,
            base_svc,
            base_label,
            head_svc,
            head_label,
            only,
            rounds,
            seconds,
            list_seconds,
            reports,
            out,
        } => {
            let work = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-work/compare");
            let mut suite_args = Vec::new();
            for (flag, value) in [
                ("--seconds", seconds.map(|v| v as usize)),
                ("--list-seconds", list_seconds.map(|v| v as usize)),
                ("--reports", reports),
            ] {
                if let Some(value) = value {
                    suite_args.extend([flag.to_string(), value.to_string()]);
                }
            }
            let out = out.unwrap_or_else(|| compare::default_out(&work, &base_label));
            let base = compare::Side {
                name: "base".into(),
                label: base_label,
                bench: std::fs::canonicalize(base_bench)?,
                svc: std::fs::canonicalize(base_svc)?,
            };
            let head = compare::Side {
                name: "head".into(),
                label: head_label,
                bench: std::env::current_exe()?,
                svc: std::fs::canonicalize(head_svc)?,
            };
            let options = compare::Options { base, head, only, rounds: rounds.max(1), suite_args, work, out };
            compare::run(options)?;
        }
        Command::Paced { url, key, rate, seconds } => {
            let bodies = data::report_bodies(64);
            let run = tokio::runtime::Runtime::new()?.block_on(webhooks::paced(
                url,
                key,
                bodies,
                rate,
                Duration::from_secs(seconds),
            ))?;
            println!(
                "{} sent, {} failed, {:.0}/s, p50 {:.2} ms, p99 {:.2} ms",
                run.sent, run.failed, run.per_s, run.p50_ms, run.p99_ms
            );
        }
        Command::Bodies { count } => {
            for body in data::report_bodies(count) {
                println!("{body}");
            }
        }
    }
    Ok(())
}
