//! A real SMTP server for tests (aiosmtpd, `smtp_sink.py` beside this file), shared by the service's
//! tests and the binary's (`#[path]`-included by both).

#![allow(dead_code)]

use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Python of the venv `scripts/test` installs aiosmtpd into (`SVC_TEST_SMTP_PYTHON` names
/// another), if it can import aiosmtpd.
fn smtp_python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let python = match std::env::var("SVC_TEST_SMTP_PYTHON") {
                Ok(python) => PathBuf::from(python),
                Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mail-venv/bin/python"),
            };
            let imports = Command::new(&python)
                .args(["-c", "import aiosmtpd"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            imports.then_some(python)
        })
        .clone()
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

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spawn_sink(python: &Path, folder: &Path, port: Option<u16>, auth: Option<&(String, String)>) -> (Child, u16) {
    // `file!()` is relative to the workspace, two folders above either crate that includes this.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = workspace.join(file!()).with_file_name("smtp_sink.py");
    let mut command = Command::new(python);
    command.arg(script).arg(folder).stdout(Stdio::piped()).stderr(Stdio::inherit());
    if let Some(port) = port {
        command.arg("--port").arg(port.to_string());
    }
    if let Some((user, password)) = auth {
        command.arg("--user").arg(user).arg("--password").arg(password);
    }
    let mut child = command.spawn().expect("start the SMTP test server");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the SMTP test server starts within 30 s");
    let port = line.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok());
    let port = port.unwrap_or_else(|| panic!("the SMTP test server said {line:?}, not PORT <n>"));
    (child, port)
}
