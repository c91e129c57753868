//! svc-server's integration tests as one test binary (one link instead of one per file: the suite
//! builds faster on 2 cores). Each module is one area; every one drives the app `common` builds
//! (`common::ingest` adds the ingest API's requests and media, `mcp_support` the tool endpoint's).

mod common;
mod mcp_support;

mod connections;
mod dashboard_auth;
mod dashboard_channels;
mod dashboard_flags;
mod dashboard_identity;
mod dashboard_install;
mod dashboard_keys;
mod dashboard_live;
mod dashboard_members;
mod dashboard_pages;
mod dashboard_settings;
mod dashboard_webhooks;
mod github;
mod ingest_concurrency;
mod ingest_errors;
mod ingest_reports;
mod ingest_widget;
mod mail;
mod mcp_arguments;
mod mcp_document;
mod mcp_org;
mod mcp_protocol;
mod mcp_resources;
mod mcp_tools;
mod oauth;
mod reporters;
mod rest_api;
mod rest_auth;
mod rest_misc;
mod rest_postgres;
mod rest_triage;
mod webhooks;
mod whole_operations;
mod widget_routes;
