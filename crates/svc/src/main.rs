//! `svc`: the self-hostable feedback collection service. One binary: the server and its admin CLI.

#![deny(unsafe_code)]

mod admin;
mod allocator;
mod cli;
mod logging;
mod serve;

use clap::Parser;

/// mimalloc instead of the system allocator: a request allocates and frees a few hundred small
/// objects (JSON trees, strings), and with glibc's malloc that was about a third of the CPU time
/// of an ingest request (see bench/README.md, profiling notes).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Threads for blocking work: the local blob folder's writes and their fsyncs, password hashing.
/// Tokio allows 512; 64 clients uploading screenshots at once then ran 64 threads, each with its
/// own allocator heap (peak memory 220 MB against 135 MB with 32, at the same pairs per second).
const BLOCKING_THREADS: usize = 32;

fn main() -> anyhow::Result<()> {
    allocator::configure();
    let cli = cli::Cli::parse();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().max_blocking_threads(BLOCKING_THREADS).enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            cli::Command::Serve(args) => serve::run(&cli.storage, args).await,
            cli::Command::Project(command) => admin::project(&cli.storage, command).await,
            cli::Command::Token(command) => admin::token(&cli.storage, command).await,
            cli::Command::User(command) => admin::user(&cli.storage, command).await,
        }
    })
}
