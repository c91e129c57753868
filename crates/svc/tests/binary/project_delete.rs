//! `svc project delete --project ID --confirm NAME`: refused without the exact name; with it, the
//! project, its reports and its blob files are gone, and `svc project list` no longer shows it.

use crate::support::run_cli;
use serde_json::Value;
use svc_core::model::{Author, Blob, NewReport, Report};

/// A report of the project with a screenshot stored in the data folder's blob store; returns the
/// blob id.
async fn report_with_blob(data_dir: &std::path::Path, project_id: &str) -> String {
    let store = svc_store::connect(&format!("sqlite://{}", data_dir.join("svc.db").display())).await.unwrap();
    let blobs = svc_blob::BlobStore::local(&data_dir.join("blobs")).unwrap();
    let now = svc_core::time::now_ms();
    let blob_id = svc_core::ids::new_id();
    let mut writer = blobs.writer(&blob_id).unwrap();
    writer.write(b"\x89PNG\r\n\x1a\nscreenshot".to_vec().into()).await.unwrap();
    writer.finish().await.unwrap();
    let blob = Blob {
        id: blob_id.clone(),
        project_id: project_id.into(),
        kind: "screenshot".into(),
        mime: "image/png".into(),
        bytes: 18,
        width: None,
        height: None,
        duration_ms: None,
        name: None,
        report_id: None,
        created_at: now,
    };
    store.create_blob(&blob).await.unwrap();
    let report = Report {
        id: svc_core::ids::new_id(),
        project_id: project_id.into(),
        channel_key: "bug".into(),
        status: "new".parse().unwrap(),
        title: "Broken".into(),
        blocks: serde_json::from_value(serde_json::json!([{"type": "screenshot", "blobId": blob_id}])).unwrap(),
        context: serde_json::from_value(serde_json::json!({})).unwrap(),
        identity: None,
        identity_error: None,
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: None, label: None },
        artifact_id: None,
        url: None,
        created_at: now,
        updated_at: now,
        assignee: None,
        labels: Vec::new(),
    };
    store.create_report(NewReport { report, blob_ids: vec![blob_id.clone()], idempotency_key: None }).await.unwrap();
    blob_id
}

fn listed_ids(data_dir: &std::path::Path) -> Vec<String> {
    let (ok, stdout, stderr) = run_cli(data_dir, &["project", "list", "--json"], None);
    assert!(ok, "{stderr}");
    let listed: Value = serde_json::from_str(stdout.trim()).unwrap();
    listed.as_array().unwrap().iter().map(|p| p["projectId"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn project_delete_takes_the_exact_name_and_removes_the_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = run_cli(dir.path(), &["project", "create", "--name", "Old Shop", "--json"], None);
    assert!(ok, "{stderr}");
    let project_id = serde_json::from_str::<Value>(stdout.trim()).unwrap()["projectId"].as_str().unwrap().to_string();
    let blob_id = report_with_blob(dir.path(), &project_id).await;
    let blob_file = dir.path().join("blobs").join(svc_blob::OBJECT_FOLDER).join(&blob_id);
    assert!(blob_file.exists());

    let (ok, _, stderr) =
        run_cli(dir.path(), &["project", "delete", "--project", &project_id, "--confirm", "Old"], None);
    assert!(!ok, "a wrong name is refused");
    assert!(stderr.contains("type its name exactly"), "{stderr}");
    assert!(listed_ids(dir.path()).contains(&project_id));
    assert!(blob_file.exists());

    let (ok, stdout, stderr) =
        run_cli(dir.path(), &["project", "delete", "--project", &project_id, "--confirm", "Old Shop"], None);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("1 reports, 1 blobs"), "{stdout}");
    assert!(!listed_ids(dir.path()).contains(&project_id));
    assert!(!blob_file.exists(), "the blob file is gone");
}
