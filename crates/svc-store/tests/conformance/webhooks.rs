//! Webhook deliveries on every backend: a change's run of deliveries is made whole (one made per
//! event and endpoint, however many arrive at once, each with its body), and a round of attempts
//! records every delivery's state and logs the attempts a delivery log shows; an endpoint keeps
//! when it was last turned on, a round's reports are read in one call, and an endpoint or project
//! deleted takes its deliveries with it. Part of
//! `conformance.rs`, whose fixtures and `conformance!` macro it uses.

use super::*;
use svc_core::secret::Secret;
use svc_core::webhook::{DeliveryState, Webhook, WebhookAttempt, WebhookDelivery, WebhookFormat};
use svc_store::AttemptOutcome;

fn endpoint(project_id: &str, at: i64) -> Webhook {
    Webhook {
        id: new_id(),
        project_id: project_id.into(),
        url: "https://hooks.example.com/in".into(),
        events: vec!["report.created".into()],
        events_default: false,
        description: None,
        format: WebhookFormat::Standard,
        enabled: true,
        disabled_reason: None,
        secret: Secret::new("whsec_dGVzdA=="),
        previous_secret: None,
        previous_until: None,
        failing_since: None,
        paused_until: None,
        enabled_at: at,
        created_at: at,
        updated_at: at,
    }
}

fn delivery_for(hook: &Webhook, event_id: i64, at: i64) -> WebhookDelivery {
    WebhookDelivery::new_pending(
        new_id_at(at),
        hook,
        Some((event_id, "report.created")),
        format!("msg_{event_id}_{}", hook.id),
        format!("{{\"type\":\"report.created\",\"event\":{event_id}}}"),
        at,
        at,
    )
}

fn attempt(delivery: &WebhookDelivery, at: i64, status: Option<i64>) -> WebhookAttempt {
    WebhookAttempt {
        delivery_id: delivery.id.clone(),
        webhook_id: delivery.webhook_id.clone(),
        at,
        status,
        error: status.filter(|s| *s >= 400).map(|s| format!("answered {s}")),
        duration_ms: 12,
    }
}

conformance! {
    async fn a_run_of_deliveries_is_made_once_per_event_and_endpoint_with_each_body(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        let (first, second) = (endpoint(&project.id, at), endpoint(&project.id, at));
        store.create_webhook(&first).await.unwrap();
        store.create_webhook(&second).await.unwrap();
        let made_before = delivery_for(&first, 1, at);
        assert!(store.queue_delivery(&made_before).await.unwrap());

        // 600 deliveries in one change (more than one statement's worth), with two that exist
        // already: the one made before, and one twice in the change itself.
        let mut deliveries: Vec<WebhookDelivery> = Vec::new();
        for event_id in 1..=300 {
            deliveries.push(delivery_for(&first, event_id, at));
            deliveries.push(delivery_for(&second, event_id, at));
        }
        deliveries.push(delivery_for(&second, 7, at));
        let writes = deliveries.iter().cloned().map(Write::WebhookDelivery).collect();
        let applied = apply(&store, None, at, writes).await.unwrap();
        assert_eq!(applied.len(), 601, "one outcome per write");
        assert_eq!(applied[0], Applied::Skipped, "event 1 had its delivery to the first endpoint already");
        assert_eq!(applied[600], Applied::Skipped, "a second delivery of event 7 to the second endpoint");
        assert_eq!(applied.iter().filter(|a| **a == Applied::Done).count(), 599);

        // What a sender claims carries its body; the duplicates were never made.
        let claimed = store.claim_due_deliveries(at, at + 60_000, 1000, None).await.unwrap();
        assert_eq!(claimed.len(), 600);
        let made = claimed.iter().find(|d| d.id == deliveries[3].id).expect("event 2, second endpoint");
        assert_eq!(made.payload, deliveries[3].payload);
        assert_eq!(made.message_id, format!("msg_2_{}", second.id));
        assert!(claimed.iter().all(|d| d.id != deliveries[0].id && d.id != deliveries[600].id));
        let kept = claimed.iter().find(|d| d.id == made_before.id).expect("the one made before");
        assert_eq!(kept.payload, made_before.payload);
    }

    async fn a_round_of_attempts_records_each_delivery_and_logs_retries(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        let hook = endpoint(&project.id, at);
        store.create_webhook(&hook).await.unwrap();
        let deliveries: Vec<WebhookDelivery> = (1..=3).map(|event_id| delivery_for(&hook, event_id, at)).collect();
        let writes = deliveries.iter().cloned().map(Write::WebhookDelivery).collect();
        apply(&store, None, at, writes).await.unwrap();

        // The first two delivered at once, the third answered 500: retried in 5 s.
        let round = vec![
            (attempt(&deliveries[0], at + 1, Some(204)), AttemptOutcome::Delivered),
            (attempt(&deliveries[1], at + 2, Some(200)), AttemptOutcome::Delivered),
            (attempt(&deliveries[2], at + 3, Some(500)), AttemptOutcome::Retry { at: at + 5_003 }),
        ];
        assert!(!store.record_attempts(&hook.id, &round, &[]).await.unwrap(), "not disabled");
        let listed = store.list_deliveries(&hook.id, None, 10).await.unwrap();
        let state = |id: &str| listed.iter().find(|d| d.id == id).unwrap().clone();
        let delivered = state(&deliveries[1].id);
        assert_eq!(delivered.state, DeliveryState::Delivered);
        assert_eq!((delivered.attempts, delivered.last_status, delivered.delivered_at), (1, Some(200), Some(at + 2)));
        let failed = state(&deliveries[2].id);
        assert_eq!(failed.state, DeliveryState::Pending);
        assert_eq!((failed.attempts, failed.next_attempt_at, failed.last_status), (1, at + 5_003, Some(500)));
        assert_eq!(failed.last_error.as_deref(), Some("answered 500"));
        let paused = store.get_webhook(&project.id, &hook.id).await.unwrap().unwrap();
        assert_eq!((paused.failing_since, paused.paused_until), (Some(at + 3), Some(at + 5_003)));
        // A delivery delivered at its first attempt keeps it in its own row; a failed one is logged.
        let ids: Vec<String> = deliveries.iter().map(|d| d.id.clone()).collect();
        let logged = store.list_attempts(&ids).await.unwrap();
        assert_eq!(logged.len(), 1);
        assert_eq!((logged[0].delivery_id.as_str(), logged[0].status), (deliveries[2].id.as_str(), Some(500)));

        // The retry succeeds: its second attempt is logged too, and the endpoint is healthy again.
        let retry = vec![(attempt(&deliveries[2], at + 5_010, Some(204)), AttemptOutcome::Delivered)];
        store.record_attempts(&hook.id, &retry, &[]).await.unwrap();
        let retried = store.list_deliveries(&hook.id, None, 10).await.unwrap();
        let retried = retried.iter().find(|d| d.id == deliveries[2].id).unwrap();
        assert_eq!((retried.state, retried.attempts, retried.delivered_at), (DeliveryState::Delivered, 2, Some(at + 5_010)));
        let logged = store.list_attempts(&ids).await.unwrap();
        assert_eq!(logged.iter().map(|a| a.status).collect::<Vec<_>>(), vec![Some(500), Some(204)]);
        let healthy = store.get_webhook(&project.id, &hook.id).await.unwrap().unwrap();
        assert_eq!((healthy.failing_since, healthy.paused_until), (None, None));
    }
}

conformance! {
    async fn an_endpoint_keeps_when_it_was_last_turned_on(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        let mut hook = endpoint(&project.id, at);
        store.create_webhook(&hook).await.unwrap();
        hook.enabled = false;
        store.update_webhook(&hook).await.unwrap();
        hook.enabled = true;
        hook.enabled_at = at + 5_000;
        store.update_webhook(&hook).await.unwrap();
        let read = store.get_webhook(&project.id, &hook.id).await.unwrap().unwrap();
        assert_eq!((read.enabled, read.enabled_at, read.created_at), (true, at + 5_000, at));
        assert_eq!(store.enabled_webhooks(std::slice::from_ref(&project.id)).await.unwrap()[0].enabled_at, at + 5_000);
    }
}

conformance! {
    async fn the_reports_of_a_round_are_read_in_one_call(store: DynStore) {
        let project = project(&store).await;
        let first = create(&store, filed(report(&project.id))).await;
        let second = create(&store, filed(report(&project.id))).await;
        let asked = vec![second.id.clone(), "r_missing".to_string(), first.id.clone()];
        let mut found = store.get_reports(&asked).await.unwrap();
        found.sort_by(|a, b| a.id.cmp(&b.id));
        let mut expected = vec![first, second];
        expected.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(found, expected, "the ones that exist, each whole");
        assert!(store.get_reports(&[]).await.unwrap().is_empty());
    }
}

conformance! {
    async fn an_endpoint_or_project_deleted_takes_its_deliveries_with_it(store: DynStore) {
        let (first, second) = (project(&store).await, project(&store).await);
        let at = now_ms();
        let (deleted, kept, in_deleted_project) =
            (endpoint(&first.id, at), endpoint(&first.id, at), endpoint(&second.id, at));
        for hook in [&deleted, &kept, &in_deleted_project] {
            store.create_webhook(hook).await.unwrap();
            let writes = (1..=3).map(|event_id| Write::WebhookDelivery(delivery_for(hook, event_id, at))).collect();
            apply(&store, None, at, writes).await.unwrap();
        }
        assert!(store.delete_webhook(&first.id, &deleted.id).await.unwrap());
        store.delete_project(&second.id).await.unwrap();
        assert!(store.list_deliveries(&deleted.id, None, 10).await.unwrap().is_empty());
        assert!(store.list_deliveries(&in_deleted_project.id, None, 10).await.unwrap().is_empty());
        assert_eq!(store.list_deliveries(&kept.id, None, 10).await.unwrap().len(), 3);
        let claimed = store.claim_due_deliveries(at, at + 60_000, 100, None).await.unwrap();
        assert_eq!(claimed.len(), 3, "only the kept endpoint's are sent");
        assert!(claimed.iter().all(|d| d.webhook_id == kept.id));
    }
}

conformance! {
    async fn a_body_shared_by_an_events_deliveries_outlives_the_endpoint_it_was_made_with(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        let hooks = [endpoint(&project.id, at), endpoint(&project.id, at), endpoint(&project.id, at)];
        for hook in &hooks {
            store.create_webhook(hook).await.unwrap();
        }
        // Event 2's delivery to the first endpoint exists already (made before, another id): the
        // deliveries that name the new one as their body's still get that body.
        assert!(store.queue_delivery(&delivery_for(&hooks[0], 2, at)).await.unwrap());
        let mut writes = Vec::new();
        for event_id in [1, 2] {
            let holder = delivery_for(&hooks[0], event_id, at);
            for hook in &hooks[1..] {
                let mut sharer = delivery_for(hook, event_id, at);
                sharer.shares_payload_of = Some(holder.id.clone());
                writes.push(sharer);
            }
            writes.insert(writes.len() - 2, holder);
        }
        let applied = apply(&store, None, at, writes.iter().cloned().map(Write::WebhookDelivery).collect()).await.unwrap();
        assert_eq!(applied.iter().filter(|a| **a == Applied::Done).count(), 5, "event 2's first was made before");

        let claimed = store.claim_due_deliveries(at, at + 1_000, 100, None).await.unwrap();
        assert_eq!(claimed.len(), 6);
        for delivery in &claimed {
            let event_id = delivery.event_id.unwrap();
            assert_eq!(delivery.payload, format!("{{\"type\":\"report.created\",\"event\":{event_id}}}"));
        }
        // The endpoint whose deliveries hold the bodies goes; the others still send them.
        assert!(store.delete_webhook(&project.id, &hooks[0].id).await.unwrap());
        let later = at + 2_000;
        let claimed = store.claim_due_deliveries(later, later + 1_000, 100, None).await.unwrap();
        assert_eq!(claimed.len(), 4);
        for delivery in &claimed {
            let event_id = delivery.event_id.unwrap();
            assert_eq!(delivery.payload, format!("{{\"type\":\"report.created\",\"event\":{event_id}}}"));
        }
    }
}
