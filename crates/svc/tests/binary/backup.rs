//! `svc backup` while reports pour in, and `svc restore` of what it wrote: every report acknowledged
//! before the backup started comes back whole (text and screenshot bytes), with its keys; a damaged,
//! truncated or misplaced restore is refused and writes nothing.

use crate::durability::{Burst, assert_present, read_bootstrap, start, wait_ready};
use crate::support::{run_cli, run_cli_with};
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_under_load_restores_every_report_acknowledged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let archive = dir.path().join("svc-backup.tar.gz");
    let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let (mut svc, stdout) = start(&data_dir, "backup-source.log");
    let boot = read_bootstrap(&stdout);
    wait_ready(&mut svc, &http).await;

    // Reports (one client in eight with a screenshot) keep coming while the backup runs.
    let burst = Burst::start(CLIENTS, &http, &svc.base, &boot.public_key);
    let deadline = Instant::now() + Duration::from_secs(60);
    while burst.acked() < 200 {
        assert!(Instant::now() < deadline, "the clients filed too few reports");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = burst.acked_reports();
    let (source, to) = (data_dir.clone(), archive.to_str().unwrap().to_string());
    let (ok, out, err) =
        tokio::task::spawn_blocking(move || run_cli(&source, &["backup", "--to", &to], None)).await.unwrap();
    let during = burst.acked() - before.len();
    let (_, cut_off) = burst.stop().await;
    assert!(ok, "svc backup failed: {out}{err}");
    assert!(during > 0, "reports should still have been filed while the backup ran");
    assert!(out.contains("Backup written") && out.contains("blobs"), "{out}");
    assert_eq!(cut_off, 0, "a client was refused during the backup");

    // A second backup to the same name is refused: a backup never overwrites one.
    let (ok, _, err) = run_cli(&data_dir, &["backup", "--to", archive.to_str().unwrap()], None);
    assert!(!ok && err.contains("exists already"), "{err}");
    drop(svc);

    // Restored into a new folder: checked, then served as it was.
    let restored = dir.path().join("restored");
    let (ok, out, err) = run_cli(&restored, &["restore", "--from", archive.to_str().unwrap()], None);
    assert!(ok, "svc restore failed: {out}{err}");
    assert!(out.contains("integrity ok"), "{out}");
    let (mut svc, stdout) = start(&restored, "backup-restored.log");
    wait_ready(&mut svc, &http).await;
    assert!(
        !stdout.iter().any(|line| line.contains("Setup token")),
        "a restored installation starts afresh: {stdout:?}"
    );
    assert!(before.iter().any(|report| report.screenshot.is_some()), "the load should have filed screenshots");
    assert_present(&http, &svc.base, &boot, &before).await;
    drop(svc);

    // Restoring over an installation is refused.
    let (ok, _, err) = run_cli(&restored, &["restore", "--from", archive.to_str().unwrap()], None);
    assert!(!ok && err.contains("is not empty"), "{err}");

    // A damaged archive (bytes changed inside the compressed stream) and a truncated one are refused,
    // and leave no data folder behind.
    let bytes = std::fs::read(&archive).unwrap();
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    for byte in &mut damaged[middle..middle + 16] {
        *byte ^= 0x5a;
    }
    for (name, content) in [("damaged", damaged), ("truncated", bytes[..bytes.len() * 2 / 3].to_vec())] {
        let copy = dir.path().join(format!("{name}.tar.gz"));
        std::fs::write(&copy, content).unwrap();
        let target = dir.path().join(format!("restored-{name}"));
        let (ok, out, err) = run_cli(&target, &["restore", "--from", copy.to_str().unwrap()], None);
        assert!(!ok, "a {name} archive was restored: {out}");
        assert!(err.contains("cannot be restored") && err.contains("Nothing was written"), "{name}: {err}");
        assert!(!target.exists(), "a refused restore left {} behind", target.display());
    }
}

#[test]
fn backup_and_restore_explain_what_to_use_on_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let postgres = [("SVC_DATABASE_URL", "postgres://svc@db.internal/svc")];
    for args in [["backup", "--to", "x.tar.gz"], ["restore", "--from", "x.tar.gz"]] {
        let (ok, out, err) = run_cli_with(dir.path(), &args, None, &postgres);
        assert!(!ok, "{out}");
        assert!(err.contains("uses PostgreSQL") && err.contains("pg_dump"), "{err}");
    }
    // And nothing to back up is said plainly.
    let (ok, _, err) = run_cli(&dir.path().join("none"), &["backup", "--to", "y.tar.gz"], None);
    assert!(!ok && err.contains("no database at"), "{err}");
}
