//! A webhook receiver for tests (`receiver.py` beside this file: Python's `standardwebhooks` checks
//! every signature, `slack_sdk` every Slack message), shared by the service's tests and the
//! binary's (`#[path]`-included by both).

#![allow(dead_code)]

use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Python of the venv `scripts/test` installs the receiver's packages into
/// (`SVC_TEST_WEBHOOK_PYTHON` names another), if it can import them.
fn receiver_python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let python = match std::env::var("SVC_TEST_WEBHOOK_PYTHON") {
                Ok(python) => PathBuf::from(python),
                Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/webhook-venv/bin/python"),
            };
            let imports = Command::new(&python)
                .args(["-c", "import standardwebhooks, slack_sdk"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            imports.then_some(python)
        })
        .clone()
}

/// The receiver on a loopback port: every request is a JSON file in `folder`. Stopped when dropped.
pub struct Receiver {
    child: Child,
    pub port: u16,
    folder: tempfile::TempDir,
    python: PathBuf,
}

impl Receiver {
    /// `None` (the test then says it skipped) when the packages are not installed.
    pub fn start() -> Option<Self> {
        let Some(python) = receiver_python() else {
            eprintln!(
                "skipped: standardwebhooks and slack_sdk are not installed (scripts/test installs them into \
                 target/webhook-venv: python3 -m venv target/webhook-venv && target/webhook-venv/bin/pip install \
                 -r crates/svc-server/tests/webhooks/requirements.txt)"
            );
            return None;
        };
        let folder = tempfile::tempdir().expect("a folder for received deliveries");
        let (child, port) = spawn(&python, folder.path(), None);
        Some(Receiver { child, port, folder, python })
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The secrets each delivery is verified with (in this order in `verified`).
    pub fn verify_with(&self, secrets: &[&str]) {
        std::fs::write(self.folder.path().join("secrets.json"), serde_json::to_vec(secrets).unwrap()).unwrap();
    }

    /// Answers every request with `status` (200 again with [`Receiver::answer_ok`]).
    pub fn answer(&self, status: u16) {
        std::fs::write(self.folder.path().join("answer"), status.to_string()).unwrap();
    }

    pub fn answer_ok(&self) {
        let _ = std::fs::remove_file(self.folder.path().join("answer"));
    }

    /// Waits `seconds` before each answer.
    pub fn delay(&self, seconds: f64) {
        std::fs::write(self.folder.path().join("delay"), seconds.to_string()).unwrap();
    }

    pub fn no_delay(&self) {
        let _ = std::fs::remove_file(self.folder.path().join("delay"));
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let (child, port) = spawn(&self.python, self.folder.path(), Some(self.port));
        assert_eq!(port, self.port);
        self.child = child;
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(self.folder.path())
            .unwrap()
            .filter_map(|entry| {
                let path = entry.unwrap().path();
                let n = path.file_name()?.to_str()?.strip_suffix(".json")?.parse().ok()?;
                Some((n, path))
            })
            .collect();
        files.sort();
        files.into_iter().map(|(_, path)| serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spawn(python: &Path, folder: &Path, port: Option<u16>) -> (Child, u16) {
    // `file!()` is relative to the workspace, two folders above either crate that includes this.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = workspace.join(file!()).with_file_name("receiver.py");
    let mut command = Command::new(python);
    command.arg(script).arg(folder).stdout(Stdio::piped()).stderr(Stdio::inherit());
    if let Some(port) = port {
        command.arg("--port").arg(port.to_string());
    }
    let mut child = command.spawn().expect("start the webhook test receiver");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the receiver starts within 30 s");
    let port = line.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok());
    let port = port.unwrap_or_else(|| panic!("the receiver said {line:?}, not PORT <n>"));
    (child, port)
}
