//! `svc serve`: open storage, bootstrap on first start, serve until SIGTERM/SIGINT.

use anyhow::Context;
use std::time::Duration;
use svc_blob::BlobStore;
use svc_core::ingest::FILE_MAX_BYTES_CEILING;
use svc_server::config::parse_cidr_list;
use svc_server::http_server::{self, ConnectionSettings};
use svc_server::{AppState, ServerConfig};
use svc_service::mailer::{MailConfig, Mailer};
use svc_service::{bootstrap, housekeeping, mail};
use tokio::net::TcpListener;

use crate::cli::{ServeArgs, StorageArgs};

/// In-flight requests get this long to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

pub async fn run(storage: &StorageArgs, args: ServeArgs) -> anyhow::Result<()> {
    crate::logging::init();
    let rate_limits = match args.rate_limit.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => true,
        "off" | "false" | "0" => false,
        other => anyhow::bail!("SVC_RATE_LIMIT must be on or off, not {other:?}"),
    };
    let trusted_proxies =
        parse_cidr_list(&args.trusted_proxies).map_err(|e| anyhow::anyhow!("SVC_TRUSTED_PROXIES: {e}"))?;
    if args.file_max_bytes == 0 || args.file_max_bytes > FILE_MAX_BYTES_CEILING {
        anyhow::bail!("SVC_FILE_MAX_BYTES must be between 1 and {FILE_MAX_BYTES_CEILING}");
    }
    let connections = connection_settings(&args)?;
    let store = crate::admin::open_store(storage).await?;
    let blobs = BlobStore::from_settings(args.blob_store.as_deref(), &storage.data_dir, args.s3_endpoint.as_deref())
        .context("cannot open the blob store")?;
    let blob_store_name = blobs.describe();
    let listener = TcpListener::bind(&args.bind).await.with_context(|| format!("cannot listen on {}", args.bind))?;
    let metrics_bind = args.metrics_bind.as_deref().map(str::trim).filter(|bind| !bind.is_empty());
    let metrics_listener = match metrics_bind {
        Some(bind) => {
            Some(TcpListener::bind(bind).await.with_context(|| format!("cannot listen on {bind} (SVC_METRICS_BIND)"))?)
        }
        None => None,
    };
    let local = listener.local_addr()?;
    let public_url = crate::cli::public_url(args.public_url.as_deref(), &local);

    let mail = MailConfig::parse(args.smtp_url.as_deref(), args.mail_from.as_deref(), &public_url)
        .map_err(|error| anyhow::anyhow!(error))?;
    let mailer = Mailer::new(&mail, &public_url).map_err(|error| anyhow::anyhow!("mail: {error}"))?;
    let mut config = ServerConfig {
        public_url: public_url.clone(),
        rate_limits,
        trusted_proxies,
        key_requests_per_minute: args.api_requests_per_minute,
        ip_reports_per_minute: args.ingest_reports_per_address,
        ip_blobs_per_minute: args.ingest_blobs_per_address,
        project_reports_per_minute: args.ingest_reports_per_project,
        guaranteed_reports_per_address: args.ingest_reports_guaranteed_per_address,
        mcp_allowed_origins: args
            .mcp_allowed_origins
            .split(',')
            .map(str::trim)
            .filter(|origin| !origin.is_empty())
            .map(str::to_string)
            .collect(),
        mail: mail.clone(),
        client_metadata: svc_service::outbound::OutboundPolicy {
            allow_private: args.oauth_metadata_allow_private,
            ..Default::default()
        },
        webhook_policy: svc_service::outbound::OutboundPolicy {
            allow_private: args.webhook_allow_private,
            ..Default::default()
        },
        metrics: svc_server::MetricsAccess::new(args.metrics_token.as_deref(), metrics_listener.is_some()),
        ..ServerConfig::default()
    };
    config.limits.file_max_bytes = args.file_max_bytes;
    let state = AppState::new(store.clone(), config, blobs);

    // To stdout only: the setup token and the first-owner link must not reach the logs. The
    // bootstrap block is printed once; the first-owner link on every start while nobody has an
    // account (each start makes a new one, valid one hour).
    let created = bootstrap::ensure_default(&state.service).await?;
    let first_owner = bootstrap::first_owner_link(&state.service).await?;
    match (created, first_owner) {
        (Some(created), first_owner) => println!("{}", created.render(&public_url, first_owner.as_ref())),
        (None, Some(first_owner)) => println!("{}", first_owner.render(&public_url)),
        (None, None) => {}
    }

    spawn_housekeeping(state.clone(), args.background_work);
    match &mail.smtp {
        Some(smtp) => tracing::info!(smtp = %smtp.describe(), "mail is sent through SMTP"),
        None => tracing::info!("no SMTP server (SVC_SMTP_URL): mail waits in the dashboard's outbox"),
    }
    if args.background_work {
        mail::spawn(state.service.clone(), mailer, public_url.clone());
        svc_service::webhooks::spawn(state.service.clone(), state.webhooks.clone());
        svc_service::trackers::spawn(state.service.clone(), state.trackers.clone());
    } else {
        tracing::info!(
            "background work is off (SVC_BACKGROUND_WORK): mail, webhooks, issue trackers and housekeeping run on other instances"
        );
    }
    let usage = state.usage.clone();
    let sightings = state.sightings.clone();
    let metrics_app = svc_server::metrics_app(state.clone());
    let app = svc_server::app(state);
    tracing::info!(
        address = %local,
        public_url = %public_url,
        backend = store.backend(),
        blobs = %blob_store_name,
        max_connections = connections.max_connections,
        "svc listening"
    );

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let Some(metrics_listener) = metrics_listener {
        tracing::info!(address = %metrics_listener.local_addr()?, "metrics listening (SVC_METRICS_BIND)");
        let mut stop = stop_rx.clone();
        tokio::spawn(svc_server::serve(metrics_listener, metrics_app, connections.clone(), async move {
            let _ = stop.wait_for(|stop| *stop).await;
        }));
    }
    let server = svc_server::serve(listener, app, connections, async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let mut stopping = stop_rx.clone();
    tokio::select! {
        () = server => {}
        _ = async move {
            let _ = stopping.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::warn!("in-flight requests did not finish within {SHUTDOWN_GRACE:?}; stopping"),
    }
    usage.flush().await;
    sightings.flush().await;
    tracing::info!("svc stopped");
    Ok(())
}

/// Longest accepted timeout: a day.
const TIMEOUT_CEILING_SECS: u64 = 86_400;

fn connection_settings(args: &ServeArgs) -> anyhow::Result<ConnectionSettings> {
    let seconds = |name: &str, value: u64| {
        if (1..=TIMEOUT_CEILING_SECS).contains(&value) {
            Ok(Duration::from_secs(value))
        } else {
            Err(anyhow::anyhow!("{name} must be between 1 and {TIMEOUT_CEILING_SECS} seconds, not {value}"))
        }
    };
    let fitting = http_server::default_max_connections();
    let max_connections = match args.max_connections {
        Some(0) => anyhow::bail!("SVC_MAX_CONNECTIONS must be at least 1"),
        Some(max) => {
            if max > fitting {
                let limit = http_server::descriptor_limit().unwrap_or_default();
                tracing::warn!(
                    max_connections = max,
                    descriptor_limit = limit,
                    "SVC_MAX_CONNECTIONS is more than the file-descriptor limit leaves room for ({fitting}); \
                     accepting may fail with \"Too many open files\" (raise the limit with ulimit -n or LimitNOFILE)"
                );
            }
            max
        }
        None => fitting,
    };
    Ok(ConnectionSettings {
        header_timeout: seconds("SVC_HEADER_TIMEOUT_SECS", args.header_timeout_secs)?,
        idle_timeout: seconds("SVC_IDLE_TIMEOUT_SECS", args.idle_timeout_secs)?,
        body_timeout: seconds("SVC_BODY_TIMEOUT_SECS", args.body_timeout_secs)?,
        max_connections,
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("shutdown signal received; finishing in-flight requests");
}

/// Periodic clean-up: expired hints and idempotency keys, unbound blobs older than a day, idle
/// rate-limit state.
/// Every minute: the shared housekeeping (when this instance does background work) and this
/// process's own (its rate limiters).
fn spawn_housekeeping(state: AppState, background_work: bool) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            let now = svc_core::time::now_ms();
            if background_work {
                housekeeping::run_if_leased(&state.service, &state.blobs, now).await;
            }
            state.rate_limits.prune();
        }
    });
}
