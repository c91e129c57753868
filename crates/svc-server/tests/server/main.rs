//! svc-server's integration tests as one test binary (one link instead of one per file: the suite
//! builds faster on 2 cores). Each module is one area; `common`, `ingest_support` and `mcp_support`
//! build the apps they drive.

mod common;
mod ingest_support;
mod mcp_support;

mod connections;
mod ingest_concurrency;
mod ingest_errors;
mod ingest_reports;
mod ingest_widget;
mod mcp_org;
mod mcp_protocol;
mod mcp_tools;
mod rest_api;
mod rest_auth;
mod rest_misc;
mod rest_postgres;
mod rest_triage;
mod widget_routes;
