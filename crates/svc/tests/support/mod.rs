//! Runs the real `svc` binary for end-to-end tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn svc_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svc"))
}

/// A port that was free a moment ago. The server must be told its port on the command line, so the
/// test asks the OS for one and lets it go.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
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
    pub stdout_lines: Vec<String>,
}

impl Server {
    /// Starts `svc serve` on `data_dir`, waits for `/readyz`, and reads the bootstrap block if one
    /// is printed.
    pub fn start(data_dir: &Path, extra_env: &[(&str, &str)]) -> Server {
        let port = free_port();
        let mut command = Command::new(svc_binary());
        command
            .args(["serve", "--data-dir"])
            .arg(data_dir)
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .env("SVC_RATE_LIMIT", "off")
            .env_remove("SVC_DATABASE_URL")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in extra_env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("svc starts");
        let base = format!("http://127.0.0.1:{port}");
        // The bootstrap block (if any) is printed before the server accepts connections.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut lines = Vec::new();
        loop {
            while let Ok(line) = rx.try_recv() {
                lines.push(line);
            }
            if ready(&base) {
                break;
            }
            assert!(Instant::now() < deadline, "svc did not become ready; stdout: {lines:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(50));
        while let Ok(line) = rx.try_recv() {
            lines.push(line);
        }
        let bootstrap = parse_bootstrap(&lines);
        Server { child, base, bootstrap, stdout_lines: lines }
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
    use std::io::Write;
    let mut child = Command::new(svc_binary())
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("SVC_DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("svc runs");
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
