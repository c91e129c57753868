//! Whole changes and the event feed on every backend: a change is applied whole with its events or
//! not at all; events are listed in commit order after a cursor; consumers lease their position so
//! two instances never act on one event twice. Part of `conformance.rs`, whose fixtures and
//! `conformance!` macro it uses.

use super::*;
use svc_core::event::{EventKind, NewEvent, consumer};
use svc_core::status::Status;
use svc_core::triage::{Label, LabelChange};

/// The feed's events of `project_id` (all of them), as (type, report id).
async fn feed(store: &DynStore, project_id: &str) -> Vec<(&'static str, Option<String>)> {
    let events = store.list_events(Some(&[project_id.to_string()]), 0, 1000).await.unwrap();
    events.iter().map(|e| (e.kind.type_name(), e.report_id.clone())).collect()
}

fn advance(owner: &str, to: i64) -> Write {
    Write::AdvanceConsumer { name: "webhook:test".into(), owner: owner.into(), to }
}

conformance! {
    async fn a_change_is_applied_whole_with_its_events_or_not_at_all(store: DynStore) {
        let project = project(&store).await;
        let first = create(&store, filed(report(&project.id))).await;
        let second = create(&store, filed(report(&project.id))).await;
        assert_eq!(feed(&store, &project.id).await.len(), 2, "each report filed is an event");
        let at = now_ms() + 10;
        let agent = author("agent", "agent:k1");
        let label = LabelChange::Add(vec![Label::parse("UX").unwrap()]);
        let triage = |report_id: &str| {
            vec![
                Write::Status { report_id: report_id.into(), to: Status::Triaged },
                Write::Assignee { report_id: report_id.into(), to: Some("user-a".into()) },
                Write::Labels { report_id: report_id.into(), change: label.clone() },
            ]
        };

        // The last write names a report that does not exist: nothing of the change is stored.
        let mut writes = triage(&first.id);
        writes.push(Write::Status { report_id: new_id(), to: Status::Fixed });
        let change = Change::anywhere(agent.clone(), at, writes);
        assert!(matches!(store.apply(&change).await, Err(StoreError::NotFound)));
        assert_eq!(store.get_report(&first.id).await.unwrap().unwrap(), first, "untouched");
        assert!(store.status_history(&first.id).await.unwrap().is_empty());
        assert_eq!(feed(&store, &project.id).await.len(), 2, "no event of it");

        // A report outside the change's projects is not found either.
        let other = project_of(&store, &project.org_id, "other").await;
        let restricted = Change { project_ids: Some(vec![other.id.clone()]), ..Change::anywhere(agent.clone(), at, triage(&first.id)) };
        assert!(matches!(store.apply(&restricted).await, Err(StoreError::NotFound)));

        // Applied: every write's outcome, the events in the order of the writes, by the change's author.
        let mut writes = triage(&first.id);
        writes.extend(triage(&second.id));
        let applied = store.apply(&Change::anywhere(agent.clone(), at, writes)).await.unwrap();
        assert!(matches!(&applied[0], Applied::Status(Some(c)) if c.from_status == Status::New && c.to_status == Status::Triaged));
        assert_eq!(applied[1], Applied::Assignee { from: None, to: Some("user-a".into()) });
        assert_eq!(applied[2], Applied::Labels(vec!["UX".into()]));
        let events = store.list_events(Some(&[project.id.clone()]), 0, 100).await.unwrap();
        let kinds: Vec<&str> = events.iter().skip(2).map(|e| e.kind.type_name()).collect();
        assert_eq!(kinds, ["report.status_changed", "report.assigned", "report.labels_changed"].repeat(2));
        assert_eq!(events[2].kind, EventKind::StatusChanged { from: Status::New, to: Status::Triaged });
        assert_eq!(events[4].kind, EventKind::LabelsChanged { added: vec!["UX".into()], removed: vec![], labels: vec!["UX".into()] });
        assert!(events.iter().skip(2).all(|e| e.by == agent && e.at == at));
        assert!(events.windows(2).all(|pair| pair[0].id < pair[1].id));

        // The same again changes nothing: no history, no events.
        let again = store.apply(&Change::anywhere(agent.clone(), at + 1, triage(&first.id))).await.unwrap();
        assert_eq!(again[0], Applied::Status(None));
        assert_eq!(feed(&store, &project.id).await.len(), 8);
        assert_eq!(store.status_history(&first.id).await.unwrap().len(), 1);

        // A comment is an event when published, a draft only once a person publishes it.
        let draft = comment(&first, "a draft", true, at + 2);
        let posted = comment(&first, "posted", false, at + 3);
        store.apply(&Change::anywhere(agent.clone(), at + 3, vec![Write::Comment(draft.clone()), Write::Comment(posted.clone())])).await.unwrap();
        let publish = Write::PublishDraft { report_id: first.id.clone(), comment_id: draft.id.clone() };
        store.apply(&Change::anywhere(author("user", "user:u1"), at + 4, vec![publish.clone()])).await.unwrap();
        store.apply(&Change::anywhere(author("user", "user:u1"), at + 5, vec![publish])).await.unwrap();
        let events = store.list_events(Some(&[project.id.clone()]), 0, 100).await.unwrap();
        let published: Vec<&EventKind> = events.iter().skip(8).map(|e| &e.kind).collect();
        assert_eq!(
            published,
            [
                &EventKind::CommentPublished { comment_id: posted.id.clone(), was_draft: false },
                &EventKind::CommentPublished { comment_id: draft.id.clone(), was_draft: true },
            ],
            "published once"
        );
        // Events no other write causes, and their reach.
        let confirmed = NewEvent {
            project_id: project.id.clone(),
            report_id: Some(first.id.clone()),
            kind: EventKind::Confirmed { works: true },
            by: author("reporter", "token:ann"),
            at: at + 6,
        };
        store.apply(&Change::anywhere(author("reporter", "token:ann"), at + 6, vec![Write::Event(confirmed.clone())])).await.unwrap();
        assert_eq!(store.list_events(None, 0, 100).await.unwrap().last().unwrap().kind, confirmed.kind);
        assert_eq!(store.last_event_id().await.unwrap(), store.list_events(None, 0, 100).await.unwrap().last().unwrap().id);
    }

    async fn filing_retention_and_rooms_write_their_events(store: DynStore) {
        let project = project(&store).await;
        assert_eq!(store.last_event_id().await.unwrap(), 0, "a new database has no events");
        let old = create(&store, filed(report(&project.id))).await;
        let by = author("user", "user:u1");
        store.upsert_room(&room(&project.id, "doc-1", now_ms()), &RoomChanges::default(), Some(&by)).await.unwrap();
        store.upsert_room(&room(&project.id, "doc-1", now_ms()), &RoomChanges::default(), Some(&by)).await.unwrap();
        store.upsert_room(&room(&project.id, "doc-2", now_ms()), &RoomChanges::default(), None).await.unwrap();
        let deleted = store.delete_reports(&project.id, Some(now_ms() + 60_000), 10).await.unwrap();
        assert_eq!(deleted.report_ids, vec![old.id.clone()]);
        assert_eq!(
            feed(&store, &project.id).await,
            [("report.created", Some(old.id.clone())), ("room.created", None), ("report.deleted", Some(old.id.clone()))],
            "a room stored again is not new; a room stored without an author is not announced"
        );
        let events = store.list_events(None, 0, 10).await.unwrap();
        assert_eq!(events[0].kind, EventKind::ReportCreated { channel_key: old.channel_key.clone() });
        assert_eq!(events[0].by, old.author);
        assert_eq!(events[1].kind, EventKind::RoomCreated { artifact_id: "doc-1".into() });
        // A cursor: after an id, at most `limit`, oldest first; a project's own only.
        assert_eq!(store.list_events(None, events[0].id, 1).await.unwrap(), vec![events[1].clone()]);
        let other = project_of(&store, &project.org_id, "other").await;
        assert!(store.list_events(Some(&[other.id.clone()]), 0, 10).await.unwrap().is_empty());
        assert!(store.list_events(Some(&[]), 0, 10).await.unwrap().is_empty());

        // Deleting a project deletes its events.
        create(&store, filed(report(&other.id))).await;
        store.delete_project(&other.id).await.unwrap();
        assert!(store.list_events(None, 0, 100).await.unwrap().iter().all(|e| e.project_id == project.id));
    }

    async fn a_named_lease_is_held_by_one_owner_until_it_expires(store: DynStore) {
        let now = now_ms();
        assert!(store.take_lease("housekeeping", "A", now, now + 1000).await.unwrap(), "free: taken");
        assert!(!store.take_lease("housekeeping", "B", now + 1, now + 1001).await.unwrap(), "held by A");
        assert!(store.take_lease("housekeeping", "A", now + 500, now + 1500).await.unwrap(), "renewed by A");
        assert!(!store.take_lease("housekeeping", "B", now + 1200, now + 2200).await.unwrap(), "the renewal holds");
        // Another name is another lease.
        assert!(store.take_lease("other", "B", now, now + 1000).await.unwrap());
        // A stopped renewing: B takes it once it expires, and A no longer holds it.
        assert!(store.take_lease("housekeeping", "B", now + 1500, now + 2500).await.unwrap(), "expired: B");
        assert!(!store.take_lease("housekeeping", "A", now + 1600, now + 2600).await.unwrap(), "B holds it now");
    }

    async fn consumers_lease_their_position_and_old_events_go_once_read(store: DynStore) {
        let project = project(&store).await;
        // The team's mail reads the feed from its start (its row comes with the feed itself).
        assert_eq!(store.consumer_position(consumer::MAIL).await.unwrap(), Some(0));
        let first = create(&store, filed(report(&project.id))).await;
        create(&store, filed(report(&project.id))).await;
        let last = store.last_event_id().await.unwrap();
        let now = now_ms();

        // A new consumer starts at the feed's end; while A holds it, B cannot take it.
        assert_eq!(store.lease_consumer("webhook:test", "A", now, now + 1000).await.unwrap(), Some(last));
        assert_eq!(store.lease_consumer("webhook:test", "B", now + 1, now + 1001).await.unwrap(), None);
        assert_eq!(store.lease_consumer("webhook:test", "A", now + 2, now + 1002).await.unwrap(), Some(last), "renewed");
        // Moving it is part of a change: one that A no longer holds fails whole.
        set_report_status(&store, &first.id, Status::Fixed, &system(), now).await.unwrap();
        let next = store.last_event_id().await.unwrap();
        let by = system();
        let lost = store.apply(&Change::anywhere(by.clone(), now, vec![advance("B", next)])).await;
        assert!(matches!(lost, Err(StoreError::LeaseLost(_))), "{lost:?}");
        store.apply(&Change::anywhere(by.clone(), now, vec![advance("A", next)])).await.unwrap();
        assert_eq!(store.consumer_position("webhook:test").await.unwrap(), Some(next));

        // The lease expires (A stopped): B takes over where A left off, and A's late move fails.
        assert_eq!(store.lease_consumer("webhook:test", "B", now + 1003, now + 2000).await.unwrap(), Some(next));
        let late = store.apply(&Change::anywhere(by.clone(), now, vec![advance("A", next)])).await;
        assert!(matches!(late, Err(StoreError::LeaseLost(_))));
        // Given up on shutdown: taken at once.
        store.release_consumer("webhook:test", "B").await.unwrap();
        assert_eq!(store.lease_consumer("webhook:test", "A", now + 1004, now + 3000).await.unwrap(), Some(next));

        // Old events go only once every consumer has read them (mail has not: nothing goes).
        assert_eq!(store.delete_events_before(now_ms() + 60_000).await.unwrap(), 0);
        let mail = store.lease_consumer(consumer::MAIL, "A", now, now + 1000).await.unwrap();
        assert_eq!(mail, Some(0));
        store.apply(&Change::anywhere(by.clone(), now, vec![Write::AdvanceConsumer { name: consumer::MAIL.into(), owner: "A".into(), to: next }])).await.unwrap();
        // Nor have the webhook deliveries (they too read from the feed's start).
        assert_eq!(store.delete_events_before(now_ms() + 60_000).await.unwrap(), 0);
        assert_eq!(store.lease_consumer(consumer::WEBHOOKS, "A", now, now + 1000).await.unwrap(), Some(0));
        store.apply(&Change::anywhere(by.clone(), now, vec![Write::AdvanceConsumer { name: consumer::WEBHOOKS.into(), owner: "A".into(), to: next }])).await.unwrap();
        // Nor has the issue trackers' consumer.
        assert_eq!(store.delete_events_before(now_ms() + 60_000).await.unwrap(), 0);
        assert_eq!(store.lease_consumer(consumer::TRACKERS, "A", now, now + 1000).await.unwrap(), Some(0));
        store.apply(&Change::anywhere(by, now, vec![Write::AdvanceConsumer { name: consumer::TRACKERS.into(), owner: "A".into(), to: next }])).await.unwrap();
        assert_eq!(store.delete_events_before(now_ms() + 60_000).await.unwrap(), 3);
        assert!(store.list_events(None, 0, 10).await.unwrap().is_empty());
        assert_eq!(store.last_event_id().await.unwrap(), 0, "the newest is gone too; ids never repeat though");
        create(&store, filed(report(&project.id))).await;
        assert!(store.last_event_id().await.unwrap() > next, "ids go on from where they were");
    }

    async fn a_reader_that_follows_the_feed_misses_no_event_written_concurrently(store: DynStore) {
        let project = project(&store).await;
        let mut reports = Vec::new();
        for _ in 0..8 {
            reports.push(create(&store, filed(report(&project.id))).await);
        }
        let start = store.last_event_id().await.unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // A reader remembers the last id it read, as every consumer does.
        let reader = {
            let (store, done) = (store.clone(), done.clone());
            tokio::spawn(async move {
                let (mut position, mut seen) = (start, Vec::new());
                loop {
                    let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                    let page = store.list_events(None, position, 50).await.unwrap();
                    if let Some(last) = page.last() {
                        position = last.id;
                    }
                    seen.extend(page.iter().map(|event| event.id));
                    if finished && page.is_empty() {
                        return seen;
                    }
                }
            })
        };
        // Writers: status changes of their own report, and new reports, all at once.
        let mut writers = Vec::new();
        for (n, report) in reports.into_iter().enumerate() {
            let store = store.clone();
            let project_id = project.id.clone();
            writers.push(tokio::spawn(async move {
                for round in 0..10 {
                    let to = if round % 2 == 0 { Status::Triaged } else { Status::New };
                    set_report_status(&store, &report.id, to, &system(), now_ms()).await.unwrap();
                    if n % 2 == 0 {
                        create(&store, filed(super::report(&project_id))).await;
                    }
                }
            }));
        }
        for writer in writers {
            writer.await.unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let seen = reader.await.unwrap();
        let all: Vec<i64> = store.list_events(None, start, 1000).await.unwrap().iter().map(|event| event.id).collect();
        assert_eq!(all.len(), 8 * 10 + 4 * 10);
        assert_eq!(seen, all, "every event read once, in id order, none passed over");
    }
}
