//! Command-line interface (decisions §1).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "svc", version, about = "Svc: self-hostable feedback collection service")]
pub struct Cli {
    #[command(flatten)]
    pub storage: StorageArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Where data lives; shared by every command.
#[derive(Args, Clone)]
pub struct StorageArgs {
    /// Folder for the SQLite database and blobs.
    #[arg(long, env = "SVC_DATA_DIR", default_value = "./svc-data", global = true)]
    pub data_dir: PathBuf,
    /// Database URL (`postgres://...` for PostgreSQL); default: SQLite in the data dir.
    #[arg(long, env = "SVC_DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
}

impl StorageArgs {
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) if !url.is_empty() => url.clone(),
            _ => format!("sqlite://{}", self.data_dir.join("svc.db").display()),
        }
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the server.
    Serve(ServeArgs),
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Mint keys.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Manage dashboard users.
    #[command(subcommand)]
    User(UserCommand),
    /// Write a consistent copy of a SQLite installation (database and blob folder) to one archive,
    /// while the service keeps running (docs/operations.md, "Backups").
    Backup(BackupArgs),
    /// Restore an archive made by `svc backup` into an empty data directory, after checking every
    /// file's checksum and the database's integrity.
    Restore(RestoreArgs),
    /// Copy this installation (every table and every blob) into another: SQLite and a blob folder
    /// to PostgreSQL and S3, or back. Resumable; the source is left as it is.
    Migrate(MigrateArgs),
}

#[derive(Args)]
pub struct MigrateArgs {
    /// The destination database: `postgres://...`, or `sqlite:///path/svc.db` to come back. It must
    /// be new and empty (or this copy's own, interrupted: it resumes).
    #[arg(long)]
    pub to: String,
    /// Where the blobs go: `s3://bucket/prefix` or a folder. Default: beside a SQLite destination
    /// (`<its folder>/blobs`); with a PostgreSQL destination the blobs stay where they are.
    #[arg(long)]
    pub blobs_to: Option<String>,
    /// The source's blob storage, as for `serve`.
    #[arg(long, env = "SVC_BLOB_STORE")]
    pub blob_store: Option<String>,
    /// S3 endpoint for non-AWS services, for either side, as for `serve`.
    #[arg(long, env = "SVC_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,
    /// Rows per batch (one transaction each on the destination).
    #[arg(long, default_value_t = svc_store::transfer::BATCH_ROWS, hide = true)]
    pub batch_rows: usize,
    /// Stops after this many batches of a table (to test resuming).
    #[arg(long, hide = true)]
    pub stop_after_batches: Option<usize>,
}

#[derive(Args)]
pub struct BackupArgs {
    /// The archive to write (a gzip-compressed tar); refused if it exists.
    #[arg(long)]
    pub to: PathBuf,
    /// Blob storage, as for `serve`: with `s3://...` only the database is archived.
    #[arg(long, env = "SVC_BLOB_STORE")]
    pub blob_store: Option<String>,
}

#[derive(Args)]
pub struct RestoreArgs {
    /// The archive `svc backup` wrote.
    #[arg(long)]
    pub from: PathBuf,
}

/// The public base URL `serve` uses: `--public-url` / `SVC_PUBLIC_URL`, else `http://<address>`,
/// without a trailing slash.
pub fn public_url(explicit: Option<&str>, address: &dyn std::fmt::Display) -> String {
    match explicit {
        Some(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_string(),
        _ => format!("http://{address}"),
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SVC_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Public base URL for snippets and links (default: http://<bind>).
    #[arg(long, env = "SVC_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// `on` or `off`: rate limits (off for benchmarks, test suites and trusted networks).
    #[arg(long, env = "SVC_RATE_LIMIT", default_value = "on")]
    pub rate_limit: String,
    /// REST API and tool endpoint: requests per minute per key.
    #[arg(long, env = "SVC_API_REQUESTS_PER_MINUTE", default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..))]
    pub api_requests_per_minute: u32,
    /// Ingest: reports per minute per client address (an IPv4 address or an IPv6 /64).
    #[arg(long, env = "SVC_INGEST_REPORTS_PER_ADDRESS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub ingest_reports_per_address: u32,
    /// Ingest: blob uploads per minute per client address.
    #[arg(long, env = "SVC_INGEST_BLOBS_PER_ADDRESS", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub ingest_blobs_per_address: u32,
    /// Ingest: reports per minute per project (the ceiling).
    #[arg(long, env = "SVC_INGEST_REPORTS_PER_PROJECT", default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub ingest_reports_per_project: u32,
    /// Ingest: reports per minute an address may still file for a project whose ceiling is used up.
    #[arg(long, env = "SVC_INGEST_REPORTS_GUARANTEED_PER_ADDRESS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub ingest_reports_guaranteed_per_address: u32,
    /// Blob storage: `s3://bucket/prefix` for S3-compatible storage; default: `<data-dir>/blobs`.
    #[arg(long, env = "SVC_BLOB_STORE")]
    pub blob_store: Option<String>,
    /// S3 endpoint for non-AWS services (MinIO, R2, ...).
    #[arg(long, env = "SVC_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,
    /// Proxies (comma-separated CIDRs) whose X-Forwarded-For names the client.
    #[arg(long, env = "SVC_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// Origins of browser pages (comma-separated, `*` for all) that may call the tool endpoint
    /// besides the service's own and loopback pages.
    #[arg(long, env = "SVC_MCP_ALLOWED_ORIGINS", default_value = "")]
    pub mcp_allowed_origins: String,
    /// Let OAuth clients' metadata documents be read from private and loopback addresses too (a
    /// service whose agents publish their documents inside a private network). Off: only public
    /// addresses are read.
    #[arg(long, env = "SVC_OAUTH_METADATA_ALLOW_PRIVATE")]
    pub oauth_metadata_allow_private: bool,
    /// Let webhooks deliver to private, loopback and link-local addresses too (receivers inside a
    /// private network, and tests). Off: only public addresses are sent to.
    #[arg(long, env = "SVC_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
    /// Run the background work on this instance: mail (notifications from the event feed, and
    /// delivery), webhook deliveries and housekeeping (clean-up, retention). `off`: this instance only answers
    /// requests, for a deployment where other instances on the same database do that work (mail
    /// waits in the outbox and the event feed until one does).
    #[arg(long, env = "SVC_BACKGROUND_WORK", default_value = "on", value_name = "on|off",
        value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set, hide_possible_values = true)]
    pub background_work: bool,
    /// A separate address serving `/metrics` alone (for example `127.0.0.1:9090`); the main address
    /// then answers `/metrics` with 404.
    #[arg(long, env = "SVC_METRICS_BIND")]
    pub metrics_bind: Option<String>,
    /// A bearer token `/metrics` then requires (`Authorization: Bearer <token>`).
    #[arg(long, env = "SVC_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Largest file attachment in bytes (at most 104857600).
    #[arg(long, env = "SVC_FILE_MAX_BYTES", default_value_t = 5 * 1024 * 1024)]
    pub file_max_bytes: u64,
    /// Seconds a client has to send a request's headers: counted from connecting for the first
    /// request, from its first byte for later ones on a kept-alive connection.
    #[arg(long, env = "SVC_HEADER_TIMEOUT_SECS", default_value_t = 30)]
    pub header_timeout_secs: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, env = "SVC_IDLE_TIMEOUT_SECS", default_value_t = 75)]
    pub idle_timeout_secs: u64,
    /// Seconds a request body has to arrive in full, counted from its headers.
    #[arg(long, env = "SVC_BODY_TIMEOUT_SECS", default_value_t = 300)]
    pub body_timeout_secs: u64,
    /// Open connections at most (default: 1024, less when the file-descriptor limit is low).
    #[arg(long, env = "SVC_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// SMTP server for mail: `smtps://user:pass@host`, `smtp://user:pass@host:587` (STARTTLS),
    /// `smtp://host:25?tls=none` (plain text). Unset: mail waits in the dashboard's outbox.
    #[arg(long, env = "SVC_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Sender of every mail (`Name <address>`; default: Svc <svc@host of the public URL>).
    #[arg(long, env = "SVC_MAIL_FROM")]
    pub mail_from: Option<String>,
}

#[derive(Subcommand)]
pub enum ProjectCommand {
    /// Create a project (with channels bug, idea, question) and a setup token for it.
    Create {
        #[arg(long)]
        name: String,
        /// Organization id or name (default: the "Default" organization).
        #[arg(long)]
        org: Option<String>,
        /// Print `{"projectId","projectKey","setupToken"}`.
        #[arg(long)]
        json: bool,
    },
    /// List projects: id, name, public key and organization (every organization, or one).
    List {
        /// Organization id or name (default: every organization).
        #[arg(long)]
        org: Option<String>,
        /// Print a JSON array of `{projectId, name, slug, projectKey, orgId, orgName, createdAt}`.
        #[arg(long)]
        json: bool,
    },
    /// Delete a project and everything in it (reports, comments, rooms, channels, keys, blobs,
    /// audit log), after `--confirm` repeats its name exactly.
    Delete {
        #[arg(long)]
        project: String,
        /// The project's name, exactly as it is written.
        #[arg(long)]
        confirm: String,
        /// Blob storage, as for `serve` (`s3://bucket/prefix`; default: `<data-dir>/blobs`).
        #[arg(long, env = "SVC_BLOB_STORE")]
        blob_store: Option<String>,
        /// S3 endpoint for non-AWS services, as for `serve`.
        #[arg(long, env = "SVC_S3_ENDPOINT")]
        s3_endpoint: Option<String>,
    },
    /// Set the identity secret from stdin, or `--rotate` to generate one, or `--clear`.
    IdentitySecret {
        #[arg(long)]
        project: String,
        /// Generate a new secret and print it.
        #[arg(long, conflicts_with = "clear")]
        rotate: bool,
        /// Remove the secret (identity tokens are then ignored).
        #[arg(long)]
        clear: bool,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a dashboard user and add them to an organization. The password is read from stdin
    /// (one line), so it appears neither in the shell history nor in the process list.
    Create {
        #[arg(long)]
        email: String,
        /// Read the password from stdin (required: passwords are never command-line arguments).
        #[arg(long, required = true)]
        password_stdin: bool,
        /// Display name (default: none; the email is shown instead).
        #[arg(long, default_value = "")]
        name: String,
        /// Organization id or name (default: the "Default" organization).
        #[arg(long)]
        org: Option<String>,
        /// `owner` (everything, settings and members included) or `member` (reads and triages).
        #[arg(long, default_value = "member", value_parser = ["owner", "member"])]
        role: String,
        /// Print `{"userId","email","orgId","role"}`.
        #[arg(long)]
        json: bool,
    },
    /// Print a one-time link (valid one hour) with which a user chooses a new password; with
    /// `--password-stdin`, set the password directly instead. Either way, once the password is
    /// set, every session of the user ends.
    ResetPassword {
        #[arg(long)]
        email: String,
        /// Read the new password from stdin (one line) and set it now.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        links: LinkArgs,
        /// Print `{"userId","email","link","expiresAt"}` (or `{"userId","email","passwordSet"}`).
        #[arg(long)]
        json: bool,
    },
}

/// Where printed links point: the public URL `serve` uses.
#[derive(Args)]
pub struct LinkArgs {
    /// Public base URL of the service (default: http://<bind>, as for `serve`).
    #[arg(long, env = "SVC_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// The address `serve` listens on; only used for the default public URL.
    #[arg(long, env = "SVC_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
}

impl LinkArgs {
    pub fn public_url(&self) -> String {
        public_url(self.public_url.as_deref(), &self.bind)
    }
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Mint a setup token (scope `*`) for a project.
    Setup {
        #[arg(long)]
        project: String,
        /// Lifetime in seconds (60 to 31536000).
        #[arg(long, default_value_t = 3600)]
        ttl: i64,
        /// Print `{"id","key","expiresAt"}`.
        #[arg(long)]
        json: bool,
    },
    /// Mint an org-wide key for the tool endpoint (headless agents).
    Org {
        /// Organization id or name.
        #[arg(long)]
        org: String,
        /// Comma-separated scopes, e.g. feedback:read,feedback:write.
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
        #[arg(long, default_value = "Org agent")]
        name: String,
        /// Lifetime in seconds (60 to 31536000); default: no expiry.
        #[arg(long)]
        ttl: Option<i64>,
        #[arg(long)]
        json: bool,
    },
}
