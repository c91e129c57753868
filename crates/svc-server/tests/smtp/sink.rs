//! A real SMTP server for tests (aiosmtpd, `smtp_sink.py` beside this file), shared by the service's
//! tests and the binary's (`#[path]`-included by both).

#![allow(dead_code)]

#[path = "../python_server.rs"]
mod python_server;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Child;

/// The Python of the venv `scripts/test` installs aiosmtpd into (`SVC_TEST_SMTP_PYTHON` names
/// another), if it can import aiosmtpd.
fn smtp_python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| python_server::venv_python("SVC_TEST_SMTP_PYTHON", "mail-venv", "aiosmtpd")).clone()
}

/// aiosmtpd on a loopback port (`tests/smtp/smtp_sink.py`): every accepted message is a JSON file
/// in `folder`. Stopped when dropped.
pub struct SmtpSink {
    child: Child,
    pub port: u16,
    folder: tempfile::TempDir,
    python: PathBuf,
    auth: Option<(String, String)>,
}

impl SmtpSink {
    /// `None` (the test then says it skipped) when aiosmtpd is not installed.
    pub fn start() -> Option<Self> {
        Self::start_with(None)
    }

    pub fn start_with(auth: Option<(&str, &str)>) -> Option<Self> {
        let Some(python) = smtp_python() else {
            eprintln!(
                "skipped: aiosmtpd is not installed (scripts/test installs it into target/mail-venv: \
                 python3 -m venv target/mail-venv && target/mail-venv/bin/pip install -r \
                 crates/svc-server/tests/smtp/requirements.txt)"
            );
            return None;
        };
        let folder = tempfile::tempdir().expect("a folder for received mail");
        let auth = auth.map(|(user, password)| (user.to_string(), password.to_string()));
        let (child, port) = spawn_sink(&python, folder.path(), None, auth.as_ref());
        Some(SmtpSink { child, port, folder, python, auth })
    }

    /// Stops the server (the port then refuses connections).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let (child, port) = spawn_sink(&self.python, self.folder.path(), Some(self.port), self.auth.as_ref());
        assert_eq!(port, self.port);
        self.child = child;
    }

    /// `smtp://127.0.0.1:<port>?tls=none` (with the credentials when given).
    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        match credentials {
            Some((user, password)) => format!("smtp://{user}:{password}@127.0.0.1:{}?tls=none", self.port),
            None => format!("smtp://127.0.0.1:{}?tls=none", self.port),
        }
    }

    /// Answers every message with 451 until [`SmtpSink::accept`].
    pub fn reject(&self) {
        std::fs::write(self.folder.path().join("reject"), b"").unwrap();
    }

    pub fn accept(&self) {
        std::fs::remove_file(self.folder.path().join("reject")).unwrap();
    }

    /// Every message received so far, in order, as aiosmtpd's side parsed it.
    pub fn received(&self) -> Vec<Value> {
        python_server::numbered_records(self.folder.path())
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spawn_sink(python: &Path, folder: &Path, port: Option<u16>, auth: Option<&(String, String)>) -> (Child, u16) {
    let mut args = vec![folder.as_os_str().to_owned()];
    if let Some(port) = port {
        args.extend(["--port".into(), port.to_string().into()]);
    }
    if let Some((user, password)) = auth {
        args.extend(["--user".into(), user.into(), "--password".into(), password.into()]);
    }
    python_server::spawn(python, &python_server::script_beside(file!(), "smtp_sink.py"), &args)
}
