//! The webhook deliveries' own file (see `deliveries`): a delivery transaction never holds up a
//! report, and deliveries kept in the database itself (before this file, or in a backup) move into
//! it when the store opens, with the webhook consumer's position.

use super::tests::{open, plain};
use super::*;
use crate::prelude::*;
use crate::test_fixtures::{project, webhook as endpoint};
use svc_core::event::consumer;
use svc_core::ids::new_id;
use svc_core::webhook::{Webhook, WebhookDelivery};

fn delivery_for(hook: &Webhook, event_id: i64, at: i64) -> WebhookDelivery {
    WebhookDelivery::new_pending(
        new_id(),
        hook,
        Some((event_id, "report.created")),
        format!("msg_{event_id}"),
        format!("{{\"event\":{event_id}}}"),
        at,
        at,
    )
}

/// A store in `folder` with a project and one endpoint, and the time they were made.
async fn with_an_endpoint(folder: &std::path::Path) -> (SqliteStore, Project, Webhook, i64) {
    let store = open(folder).await;
    let project = project(&store).await;
    let at = svc_core::time::now_ms();
    let hook = endpoint(&project.id, at);
    store.create_webhook(&hook).await.unwrap();
    (store, project, hook, at)
}

/// While a transaction of deliveries is open and has written (it holds its file's write lock),
/// a report is filed and a change applied: neither waits for it. On one writer they would wait
/// until it committed, which here is never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_transaction_never_holds_up_a_report() {
    let folder = tempfile::tempdir().unwrap();
    let (store, project, hook, at) = with_an_endpoint(folder.path()).await;
    let deliveries: Vec<WebhookDelivery> = (1..=200).map(|event_id| delivery_for(&hook, event_id, at)).collect();

    let mut tx = store.begin_delivery_write().await.unwrap();
    let made = webhooks::insert_deliveries(&mut tx, &deliveries.iter().collect::<Vec<_>>()).await.unwrap();
    assert!(made.iter().all(|made| *made));
    let held = std::time::Duration::from_secs(30);
    let filed = tokio::time::timeout(held, store.create_report(plain(&project))).await;
    let Ok(Ok(CreatedReport::Created(report))) = filed else { panic!("the report waited for the deliveries") };
    let by = Author { kind: svc_core::model::AuthorKind::Agent, id: None, label: None };
    let triage = crate::Write::Status { report_id: report.id.clone(), to: "triaged".parse().unwrap() };
    let applied = tokio::time::timeout(held, store.apply(&crate::Change::anywhere(by, at, vec![triage]))).await;
    assert!(matches!(applied, Ok(Ok(_))), "the change waited for the deliveries: {applied:?}");
    store.commit_write(tx).await.unwrap();
    assert_eq!(store.list_deliveries(&hook.id, None, 500).await.unwrap().len(), 200);
    assert!(folder.path().join("svc.db-deliveries").exists(), "the deliveries are in a file beside the database");
}

/// A backup holds the deliveries inside its one database file; the store opened on it moves them
/// into a file of their own (as it does for a database from before that file), keeps the webhook
/// consumer's position, and leaves no copy in the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_kept_in_the_database_move_into_their_file_with_the_consumers_position() {
    let folder = tempfile::tempdir().unwrap();
    let (store, project, hook, at) = with_an_endpoint(folder.path()).await;
    let deliveries: Vec<WebhookDelivery> = (1..=3).map(|event_id| delivery_for(&hook, event_id, at)).collect();
    let writes = deliveries.iter().cloned().map(crate::Write::WebhookDelivery).collect::<Vec<_>>();
    let by = Author { kind: svc_core::model::AuthorKind::Cli, id: None, label: None };
    store.apply(&crate::Change::anywhere(by.clone(), at, writes)).await.unwrap();
    store.create_report(plain(&project)).await.unwrap();
    let last = store.last_event_id().await.unwrap();
    assert!(store.lease_consumer(consumer::WEBHOOKS, "A", at, at + 60_000).await.unwrap().is_some());
    let advance = crate::Write::AdvanceConsumer { name: consumer::WEBHOOKS.into(), owner: "A".into(), to: last };
    store.apply(&crate::Change::anywhere(by, at, vec![advance])).await.unwrap();
    assert_eq!(store.consumer_position(consumer::WEBHOOKS).await.unwrap(), Some(last));

    let restored = tempfile::tempdir().unwrap();
    backup::copy_database(&folder.path().join("svc.db"), &restored.path().join("svc.db")).await.unwrap();
    assert!(!restored.path().join("svc.db-deliveries").exists(), "a backup is one file");
    let reopened = open(restored.path()).await;
    let listed = reopened.list_deliveries(&hook.id, None, 10).await.unwrap();
    let mut ids: Vec<&str> = listed.iter().map(|d| d.id.as_str()).collect();
    ids.sort();
    let mut expected: Vec<&str> = deliveries.iter().map(|d| d.id.as_str()).collect();
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(reopened.consumer_position(consumer::WEBHOOKS).await.unwrap(), Some(last));
    let in_database: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM main.sqlite_master WHERE name IN ('webhook_deliveries', 'webhook_payloads', \
         'webhook_attempts', 'feed_positions')",
    )
    .fetch_one(&reopened.writer)
    .await
    .unwrap();
    assert_eq!(in_database, 0, "moved, not copied");
    // The bodies moved with them: a sender claims each with its body.
    let claimed = reopened.claim_due_deliveries(at, at + 60_000, 10, None).await.unwrap();
    assert_eq!(claimed.len(), 3);
    assert!(claimed.iter().all(|d| d.payload.starts_with("{\"event\":")));
}

/// Deliveries whose endpoint went without them (a crash between the two files' deletions) are
/// swept with the old deliveries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_left_without_their_endpoint_are_swept() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    let project = project(&store).await;
    let at = svc_core::time::now_ms();
    let (gone, kept) = (endpoint(&project.id, at), endpoint(&project.id, at));
    store.create_webhook(&gone).await.unwrap();
    store.create_webhook(&kept).await.unwrap();
    assert!(store.queue_delivery(&delivery_for(&gone, 1, at)).await.unwrap());
    assert!(store.queue_delivery(&delivery_for(&kept, 1, at)).await.unwrap());
    // The endpoint's row alone, as a crash right after it would leave things.
    sqlx::query("DELETE FROM webhooks WHERE id = $1").bind(&gone.id).execute(&store.writer).await.unwrap();
    assert_eq!(store.delete_old_deliveries(0).await.unwrap(), 1);
    assert!(store.list_deliveries(&gone.id, None, 10).await.unwrap().is_empty());
    assert_eq!(store.list_deliveries(&kept.id, None, 10).await.unwrap().len(), 1);
}

/// The bodies kept in the file right now.
async fn bodies_kept(store: &SqliteStore) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM delivery.webhook_payloads").fetch_one(&store.reader).await.unwrap()
}

/// An event's deliveries to three endpoints keep one body between them until the last goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_events_deliveries_keep_one_body_until_the_last_goes() {
    let folder = tempfile::tempdir().unwrap();
    let store = open(folder.path()).await;
    crate::test_fixtures::one_body_until_the_last_delivery_goes(&store, async || bodies_kept(&store).await).await;
}

/// A deliveries' file made before bodies were shared (each body tied to its delivery by a foreign
/// key, no column to name another's) is brought to the new shape when the store opens, its
/// deliveries and bodies kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_from_before_shared_bodies_keeps_its_deliveries() {
    let folder = tempfile::tempdir().unwrap();
    let (store, _project, hook, at) = with_an_endpoint(folder.path()).await;
    let made = delivery_for(&hook, 1, at);
    // The file as it was: the column dropped, the bodies' table with its foreign key again.
    for statement in [
        "DROP TRIGGER delivery.webhook_payloads_unshared",
        "DROP INDEX delivery.webhook_deliveries_sharing",
        "ALTER TABLE delivery.webhook_deliveries DROP COLUMN payload_key",
        "DROP TABLE delivery.webhook_payloads",
        "CREATE TABLE delivery.webhook_payloads (delivery_id TEXT PRIMARY KEY REFERENCES webhook_deliveries (id) \
         ON DELETE CASCADE, payload TEXT NOT NULL)",
    ] {
        sqlx::query(statement).execute(&store.delivery_writer).await.unwrap();
    }
    sqlx::query(
        "INSERT INTO delivery.webhook_deliveries (id, webhook_id, project_id, event_id, message_id, event_type, \
         state, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, 1, 'msg_1', 'report.created', 'pending', 0, ?, ?)",
    )
    .bind(&made.id)
    .bind(&hook.id)
    .bind(&hook.project_id)
    .bind(at)
    .bind(at)
    .execute(&store.delivery_writer)
    .await
    .unwrap();
    sqlx::query("INSERT INTO delivery.webhook_payloads (delivery_id, payload) VALUES (?, ?)")
        .bind(&made.id)
        .bind(&made.payload)
        .execute(&store.delivery_writer)
        .await
        .unwrap();
    drop(store);

    let reopened = open(folder.path()).await;
    let foreign_keys: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pragma_foreign_key_list('webhook_payloads', 'delivery')")
            .fetch_one(&reopened.reader)
            .await
            .unwrap();
    assert_eq!(foreign_keys, 0, "a body is no longer one delivery's");
    let claimed = reopened.claim_due_deliveries(at, at + 60_000, 10, None).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload, made.payload);
    assert_eq!(claimed[0].shares_payload_of, None);
    assert!(reopened.delete_webhook(&hook.project_id, &hook.id).await.unwrap());
    assert_eq!(bodies_kept(&reopened).await, 0, "the trigger is there too");
}
