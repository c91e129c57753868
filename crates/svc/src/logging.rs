//! Structured logs on stderr: human-readable, or JSON lines with `SVC_LOG_FORMAT=json`. Filter with
//! `RUST_LOG` (default `info`). Nothing logged carries a secret: keys travel in headers, which are
//! never logged, and key types redact themselves.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let json = std::env::var("SVC_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().flatten_event(true).init();
    } else {
        builder.init();
    }
}
