//! Tests of the `svc` binary as one test binary: the CLI, the agent self-setup flow against a running
//! server, dashboard accounts (the first-owner link, `svc user`), and durability under SIGKILL.
//! `support` starts and talks to `svc`.

mod support;

mod accounts;
mod backup;
mod cli;
mod durability;
mod instances;
mod logs;
mod mail;
mod metrics;
mod migrate;
mod project_delete;
mod self_setup;
mod webhooks;
