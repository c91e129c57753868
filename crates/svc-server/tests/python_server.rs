//! Test servers written in Python (the SMTP sink, the webhook receiver): finding a venv's Python
//! that has their packages, starting one and reading the port it prints, and reading the JSON
//! files they write. Included with `#[path]` by `smtp/sink.rs` and `webhooks/receiver.rs`.

#![allow(dead_code)]

use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Python named by the environment variable `env`, else the one of `target/<venv>`, if it
/// can import `imports` (`import a, b`).
pub fn venv_python(env: &str, venv: &str, imports: &str) -> Option<PathBuf> {
    let python = match std::env::var(env) {
        Ok(python) => PathBuf::from(python),
        Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target").join(venv).join("bin/python"),
    };
    let imports = Command::new(&python)
        .args(["-c", &format!("import {imports}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    imports.then_some(python)
}

/// Starts `python script args...` and waits (30 s at most) for the `PORT <n>` line it prints
/// once it accepts connections.
pub fn spawn(python: &Path, script: &Path, args: &[std::ffi::OsString]) -> (Child, u16) {
    let mut command = Command::new(python);
    command.arg(script).args(args).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = command.spawn().unwrap_or_else(|error| panic!("start {}: {error}", script.display()));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let name = script.file_name().unwrap_or_default().to_string_lossy().to_string();
    let line =
        rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap_or_else(|_| panic!("{name} starts within 30 s"));
    let port = line.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok());
    let port = port.unwrap_or_else(|| panic!("{name} said {line:?}, not PORT <n>"));
    (child, port)
}

/// A script beside `file` (a `file!()` of the including crate: relative to the workspace).
pub fn script_beside(file: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(file).with_file_name(name)
}

/// The JSON files `<n>.json` in `folder`, in the order of `n`.
pub fn numbered_records(folder: &Path) -> Vec<Value> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(folder)
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
