//! Runs the real `svc` binary for end-to-end tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

pub fn svc_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svc"))
}

/// A started `svc serve` and the address it reported.
pub struct Spawned {
    pub child: Child,
    /// `http://127.0.0.1:<port>`
    pub base: String,
    /// What it printed before it logged the address: the bootstrap block on a first start.
    pub before: Vec<String>,
}

enum Output {
    Line(String),
    Listening(String),
}

/// Starts `command` (an `svc serve --bind 127.0.0.1:0`: the OS picks the port) with its stdout and
/// stderr in one pipe and JSON logs, and waits for the `svc listening` log line, which carries the
/// address. The bootstrap block is printed before that line is logged, so in the one pipe it comes
/// first. Every later line goes to `rest` (the test's output or a log file), so the pipe never fills.
pub fn spawn_serve(mut command: Command, mut rest: impl FnMut(String) + Send + 'static) -> Spawned {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    command
        .env("SVC_LOG_FORMAT", "json")
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("a pipe"))
        .stderr(writer);
    let child = command.spawn().expect("svc starts");
    // The command holds the pipe's write ends: without dropping it, the reader never sees the end.
    drop(command);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut listening = false;
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            if listening {
                rest(line);
                continue;
            }
            let log: Option<serde_json::Value> = serde_json::from_str(&line).ok();
            let address = log
                .as_ref()
                .filter(|log| log["message"] == "svc listening")
                .and_then(|log| log["address"].as_str())
                .map(String::from);
            let message = match address {
                Some(address) => {
                    listening = true;
                    Output::Listening(address)
                }
                None => Output::Line(line),
            };
            if tx.send(message).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut before = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Output::Line(line)) => before.push(line),
            Ok(Output::Listening(address)) => {
                return Spawned { child, base: format!("http://{address}"), before };
            }
            Err(RecvTimeoutError::Timeout) => panic!("svc did not log its address in time; it printed {before:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("svc exited before listening; it printed {before:?}"),
        }
    }
}

/// The base address in a bootstrap block's embed snippet (`src="http://127.0.0.1:<port>/v1/svc/…"`).
pub fn base_from_embed(embed: &str) -> Option<String> {
    let url = embed.split("src=\"").nth(1)?;
    let end = url.find("/v1/svc/")?;
    Some(url[..end].to_string())
}

/// What the first start printed.
#[derive(Debug, Clone, Default)]
pub struct BootstrapBlock {
    pub project_id: String,
    pub public_key: String,
    pub setup_token: String,
    pub embed: String,
}

pub struct Server {
    pub child: Child,
    pub base: String,
    pub bootstrap: Option<BootstrapBlock>,
    /// The first-owner link (`<base>/setup?token=...`) printed while nobody has an account.
    pub setup_link: Option<String>,
    pub stdout_lines: Vec<String>,
}

impl Server {
    /// Starts `svc serve` on `data_dir` on a port the OS picks, waits for `/readyz`, and reads the
    /// bootstrap block if one is printed.
    pub fn start(data_dir: &Path, extra_env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(svc_binary());
        command
            .args(["serve", "--data-dir"])
            .arg(data_dir)
            .args(["--bind", "127.0.0.1:0"])
            .env("SVC_RATE_LIMIT", "off")
            .env_remove("SVC_DATABASE_URL")
            .env("RUST_LOG", "warn,svc::serve=info");
        for (name, value) in extra_env {
            command.env(name, value);
        }
        // Shown with the test's output when it fails.
        let Spawned { child, base, before } = spawn_serve(command, |line| eprintln!("svc: {line}"));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ready(&base) {
            assert!(Instant::now() < deadline, "svc did not become ready; it printed {before:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let bootstrap = parse_bootstrap(&before);
        let setup_link = before.iter().find_map(|line| {
            line.strip_prefix("First account:").map(|rest| rest.split_whitespace().next().unwrap_or("").to_string())
        });
        Server { child, base, bootstrap, setup_link, stdout_lines: before }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ready(base: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(base.trim_start_matches("http://")) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

pub fn parse_bootstrap(lines: &[String]) -> Option<BootstrapBlock> {
    let field = |name: &str| {
        lines.iter().find_map(|l| {
            l.strip_prefix(name).map(|rest| rest.trim().split_whitespace().next().unwrap_or("").to_string())
        })
    };
    Some(BootstrapBlock {
        project_id: field("Project id:")?,
        public_key: field("Public key:")?,
        setup_token: field("Setup token:")?,
        embed: lines.iter().find_map(|l| l.strip_prefix("Embed:").map(|r| r.trim().to_string()))?,
    })
}

/// Runs an admin command against a data dir and returns (exit status ok, stdout, stderr).
pub fn run_cli(data_dir: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    run_cli_with(data_dir, args, stdin, &[])
}

/// [`run_cli`] with environment variables (`SVC_PUBLIC_URL` and `SVC_BIND` are unset unless given).
pub fn run_cli_with(
    data_dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> (bool, String, String) {
    use std::io::Write;
    let mut command = Command::new(svc_binary());
    command
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("SVC_DATABASE_URL")
        .env_remove("SVC_PUBLIC_URL")
        .env_remove("SVC_BIND")
        .env("RUST_BACKTRACE", "0");
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("svc runs");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into(),
        String::from_utf8_lossy(&output.stderr).into(),
    )
}

/// An `application/x-www-form-urlencoded` body.
pub fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
}

/// The `name=value` part of a `Set-Cookie` header.
pub fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap_or_default().trim().to_string()
}
