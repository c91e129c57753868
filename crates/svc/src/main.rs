//! `svc`: the self-hostable feedback collection service. One binary: the server and its admin CLI.

#![deny(unsafe_code)]

mod admin;
mod allocator;
mod backup;
mod cli;
mod logging;
mod migrate;
mod progress;
mod serve;

use clap::Parser;

/// mimalloc instead of the system allocator: a request allocates and frees a few hundred small
/// objects (JSON trees, strings), and with glibc's malloc that was about a third of the CPU time
/// of an ingest request (see bench/README.md, profiling notes). Called as `allocator` explains.
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> anyhow::Result<()> {
    allocator::configure();
    let cli = cli::Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            cli::Command::Serve(args) => serve::run(&cli.storage, args).await,
            cli::Command::Project(command) => admin::project(&cli.storage, command).await,
            cli::Command::Token(command) => admin::token(&cli.storage, command).await,
            cli::Command::User(command) => admin::user(&cli.storage, command).await,
            cli::Command::Backup(args) => backup::backup(&cli.storage, &args).await,
            cli::Command::Restore(args) => backup::restore(&cli.storage, &args).await,
            cli::Command::Migrate(args) => migrate::run(&cli.storage, &args).await,
        }
    })
}
