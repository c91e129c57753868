//! A webhook receiver for tests (`receiver.py` beside this file: Python's `standardwebhooks` checks
//! every signature, `slack_sdk` every Slack message), shared by the service's tests and the
//! binary's (`#[path]`-included by both).

#![allow(dead_code)]

#[path = "../python_server.rs"]
mod python_server;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Child;

/// The Python of the venv `scripts/test` installs the receiver's packages into
/// (`SVC_TEST_WEBHOOK_PYTHON` names another), if it can import them.
fn receiver_python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            python_server::venv_python("SVC_TEST_WEBHOOK_PYTHON", "webhook-venv", "standardwebhooks, slack_sdk")
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
        python_server::numbered_records(self.folder.path())
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spawn(python: &Path, folder: &Path, port: Option<u16>) -> (Child, u16) {
    let mut args = vec![folder.as_os_str().to_owned()];
    if let Some(port) = port {
        args.extend(["--port".into(), port.to_string().into()]);
    }
    python_server::spawn(python, &python_server::script_beside(file!(), "receiver.py"), &args)
}
