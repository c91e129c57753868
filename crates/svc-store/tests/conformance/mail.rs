//! The mail store (outbox, settings, mail state) on every backend: part of `conformance.rs`, whose
//! fixtures and `conformance!` macro it uses.

use super::*;
use svc_core::account::{Membership, Role};
use svc_core::mail::{MailKind, MailPreference, MailState, NewReports, OutboxMail, id_floor};

fn mail(org_id: &str, to: &str, at: i64) -> OutboxMail {
    OutboxMail {
        id: new_id_at(at),
        org_id: org_id.into(),
        project_id: None,
        recipient: to.into(),
        subject: format!("Hello {to}"),
        body: "Line one\nLine two".into(),
        kind: MailKind::NewReport,
        dedupe_key: None,
        unsubscribe_url: Some("https://svc.example.com/unsubscribe?token=t".into()),
        created_at: at,
        expires_at: None,
        next_attempt_at: at,
        attempts: 0,
        last_error: None,
        sent_at: None,
        given_up_at: None,
    }
}

/// A user who is a member (with `role`) of `org_id`.
async fn member(store: &DynStore, org_id: &str, email: &str, role: Role) -> svc_core::account::User {
    let user = person(email);
    store.create_user(&user, "h", None, None).await.unwrap();
    store
        .put_membership(&Membership { org_id: org_id.into(), user_id: user.id.clone(), role, created_at: 1 })
        .await
        .unwrap();
    user
}

fn preference(user_id: &str, project_id: &str, mode: NewReports, replies: bool, at: i64) -> MailPreference {
    MailPreference {
        user_id: user_id.into(),
        project_id: project_id.into(),
        new_reports: mode,
        replies,
        reports_since: at,
        digest_through: None,
    }
}

conformance! {
    async fn mail_is_queued_once_per_dedupe_key_and_read_back_whole(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let mut first = mail(&org.id, "ada@example.com", 1_000);
        first.dedupe_key = Some("report:r1:u1".into());
        first.project_id = Some("p1".into());
        first.expires_at = Some(9_000);
        assert!(store.queue_mail(&first).await.unwrap());
        let again = OutboxMail { id: new_id_at(1_001), ..first.clone() };
        assert!(!store.queue_mail(&again).await.unwrap(), "the same dedupe key is stored once");
        // Without a key, nothing is deduplicated.
        assert!(store.queue_mail(&mail(&org.id, "ada@example.com", 1_002)).await.unwrap());
        assert!(store.queue_mail(&mail(&org.id, "ada@example.com", 1_003)).await.unwrap());
        assert_eq!(store.get_outbox_mail(&first.id).await.unwrap(), Some(first.clone()));
        assert_eq!(store.get_outbox_mail(&again.id).await.unwrap(), None);
        assert_eq!(first.state(), MailState::Queued);
    }

    async fn due_mail_is_claimed_once_with_a_lease(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let [a, b, later] = [mail(&org.id, "a@example.com", 100), mail(&org.id, "b@example.com", 200), mail(&org.id, "c@example.com", 5_000)];
        for m in [&a, &b, &later] {
            store.queue_mail(m).await.unwrap();
        }
        assert!(!store.mail_due(99).await.unwrap());
        assert!(store.mail_due(100).await.unwrap());
        let claimed = store.claim_due_mail(1_000, 61_000, 10).await.unwrap();
        assert!(!store.mail_due(4_999).await.unwrap(), "claimed ones are held; the later one is not due");
        let ids: Vec<&str> = claimed.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, [a.id.as_str(), b.id.as_str()], "due messages, oldest first; not the later one");
        assert!(claimed.iter().all(|m| m.attempts == 1 && m.next_attempt_at == 61_000));
        assert!(store.claim_due_mail(1_000, 61_000, 10).await.unwrap().is_empty(), "held messages are not claimed again");
        // The limit applies.
        let claimed = store.claim_due_mail(6_000, 70_000, 1).await.unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].id, later.id);
        // A lease that ran out (the sender died) is claimed again.
        let again = store.claim_due_mail(61_000, 121_000, 10).await.unwrap();
        assert_eq!(again.len(), 2);
        assert!(again.iter().all(|m| m.attempts == 2));
    }

    async fn concurrent_senders_never_share_a_message(store: DynStore) {
        let org = organization(&store, "Acme").await;
        for i in 0..40 {
            store.queue_mail(&mail(&org.id, &format!("p{i}@example.com"), 100 + i)).await.unwrap();
        }
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let claimed = store.claim_due_mail(1_000, 100_000, 3).await.unwrap();
                    if claimed.is_empty() {
                        return mine;
                    }
                    mine.extend(claimed.into_iter().map(|m| m.id));
                }
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap());
        }
        let unique: HashSet<&String> = all.iter().collect();
        assert_eq!(all.len(), 40, "every message claimed once");
        assert_eq!(unique.len(), 40);
    }

    async fn sent_and_failed_mail_is_recorded(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let [a, b, c] = [mail(&org.id, "a@example.com", 100), mail(&org.id, "b@example.com", 200), mail(&org.id, "c@example.com", 300)];
        for m in [&a, &b, &c] {
            store.queue_mail(m).await.unwrap();
        }
        store.claim_due_mail(1_000, 2_000, 10).await.unwrap();
        store.mail_sent(&a.id, 1_500).await.unwrap();
        store.mail_failed(&b.id, "451 try again later", Some(9_000), 1_500).await.unwrap();
        store.mail_failed(&c.id, "550 no such mailbox", None, 1_600).await.unwrap();
        let a = store.get_outbox_mail(&a.id).await.unwrap().unwrap();
        assert_eq!((a.sent_at, a.state()), (Some(1_500), MailState::Sent));
        let b = store.get_outbox_mail(&b.id).await.unwrap().unwrap();
        assert_eq!((b.last_error.as_deref(), b.next_attempt_at, b.state()), (Some("451 try again later"), 9_000, MailState::Queued));
        let c = store.get_outbox_mail(&c.id).await.unwrap().unwrap();
        assert_eq!((c.given_up_at, c.state()), (Some(1_600), MailState::Failed));
        // Only the retry comes back, at its time.
        assert!(store.claim_due_mail(8_999, 20_000, 10).await.unwrap().is_empty());
        let claimed = store.claim_due_mail(9_000, 20_000, 10).await.unwrap();
        assert_eq!(claimed.iter().map(|m| &m.id).collect::<Vec<_>>(), [&b.id]);
        store.mail_sent(&b.id, 9_100).await.unwrap();
        assert_eq!(store.get_outbox_mail(&b.id).await.unwrap().unwrap().last_error, None, "sent clears the error");
        // Old finished messages go; queued ones stay, however old.
        let queued = mail(&org.id, "d@example.com", 50);
        store.queue_mail(&queued).await.unwrap();
        assert_eq!(store.delete_old_mail(10_000).await.unwrap(), 3);
        assert!(store.get_outbox_mail(&queued.id).await.unwrap().is_some());
    }

    async fn the_outbox_lists_an_organizations_mail_newest_first(store: DynStore) {
        let acme = organization(&store, "Acme").await;
        let other = organization(&store, "Other").await;
        let mut ids = Vec::new();
        for i in 0..5 {
            let m = mail(&acme.id, "a@example.com", 1_000 + i);
            store.queue_mail(&m).await.unwrap();
            ids.push(m.id);
        }
        let foreign = mail(&other.id, "x@example.com", 2_000);
        store.queue_mail(&foreign).await.unwrap();
        let listed: Vec<String> = store.list_outbox(std::slice::from_ref(&acme.id), None, 3).await.unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(listed, [ids[4].clone(), ids[3].clone(), ids[2].clone()]);
        let next: Vec<String> = store.list_outbox(std::slice::from_ref(&acme.id), Some(&ids[2]), 3).await.unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(next, [ids[1].clone(), ids[0].clone()]);
        let both = store.list_outbox(&[acme.id.clone(), other.id.clone()], None, 10).await.unwrap();
        assert_eq!(both.len(), 6);
        assert_eq!(both[0].id, foreign.id);
        assert!(store.list_outbox(&[], None, 10).await.unwrap().is_empty());
    }

    async fn preferences_start_again_only_when_the_choice_changes(store: DynStore) {
        let project = project(&store).await;
        let ada = member(&store, &project.org_id, "ada@example.com", Role::Member).await;
        assert!(store.mail_preferences(&ada.id).await.unwrap().is_empty());
        store.put_mail_preference(&preference(&ada.id, &project.id, NewReports::Digest, true, 100)).await.unwrap();
        store.set_digest_through(&ada.id, &project.id, 500).await.unwrap();
        store.set_digest_through(&ada.id, &project.id, 400).await.unwrap();
        let stored = store.mail_preferences(&ada.id).await.unwrap();
        assert_eq!(stored, [MailPreference { digest_through: Some(500), ..preference(&ada.id, &project.id, NewReports::Digest, true, 100) }], "the mark never moves back");
        // Replies off: the digest keeps its start and mark.
        store.put_mail_preference(&preference(&ada.id, &project.id, NewReports::Digest, false, 900)).await.unwrap();
        let stored = &store.mail_preferences(&ada.id).await.unwrap()[0];
        assert_eq!((stored.replies, stored.reports_since, stored.digest_through), (false, 100, Some(500)));
        // Another choice starts again.
        store.put_mail_preference(&preference(&ada.id, &project.id, NewReports::Instant, false, 1_000)).await.unwrap();
        let stored = &store.mail_preferences(&ada.id).await.unwrap()[0];
        assert_eq!((stored.new_reports, stored.reports_since, stored.digest_through), (NewReports::Instant, 1_000, None));
    }

    async fn subscribers_are_members_of_the_projects_organization(store: DynStore) {
        let project = project(&store).await;
        let second = project_of(&store, &project.org_id, "second").await;
        let elsewhere = organization(&store, "Elsewhere").await;
        let ada = member(&store, &project.org_id, "ada@example.com", Role::Owner).await;
        let bob = member(&store, &project.org_id, "bob@example.com", Role::Member).await;
        let cy = member(&store, &project.org_id, "cy@example.com", Role::Member).await;
        // A stranger's stored choice (no longer a member, say) is ignored.
        let eve = member(&store, &elsewhere.id, "eve@example.com", Role::Owner).await;
        store.put_mail_preference(&preference(&ada.id, &project.id, NewReports::Instant, true, 1)).await.unwrap();
        store.put_mail_preference(&preference(&bob.id, &project.id, NewReports::Digest, false, 2)).await.unwrap();
        store.put_mail_preference(&preference(&bob.id, &second.id, NewReports::Instant, true, 3)).await.unwrap();
        store.put_mail_preference(&preference(&eve.id, &project.id, NewReports::Instant, true, 4)).await.unwrap();

        let instant = store.report_subscribers(NewReports::Instant).await.unwrap();
        let mut pairs: Vec<(String, String)> = instant.iter().map(|s| (s.project_id.clone(), s.email.clone())).collect();
        pairs.sort();
        let mut expected = vec![(project.id.clone(), "ada@example.com".to_string()), (second.id.clone(), "bob@example.com".to_string())];
        expected.sort();
        assert_eq!(pairs, expected);
        let ada_row = instant.iter().find(|s| s.user_id == ada.id).unwrap();
        assert_eq!((ada_row.preference.reports_since, ada_row.name.as_str()), (1, "Ada"));
        let digest = store.report_subscribers(NewReports::Digest).await.unwrap();
        assert_eq!(digest.iter().map(|s| s.email.as_str()).collect::<Vec<_>>(), ["bob@example.com"]);

        // Replies: everyone of the organization but who turned them off (no row: on).
        let mut replies: Vec<String> = store.reply_subscribers(&project.id).await.unwrap().into_iter().map(|s| s.email).collect();
        replies.sort();
        assert_eq!(replies, ["ada@example.com", "cy@example.com"]);
        let cy_row = store.reply_subscribers(&project.id).await.unwrap().into_iter().find(|s| s.user_id == cy.id).unwrap();
        assert_eq!(cy_row.preference, MailPreference::default_for(&cy.id, &project.id));

        // Deleting a project deletes the settings for it.
        store.delete_project(&second.id).await.unwrap();
        assert_eq!(store.mail_preferences(&bob.id).await.unwrap().len(), 1);
    }

    async fn reports_are_counted_by_creation_time(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        // Ids made at these times (not through `new_id_at`, which never goes back in time).
        let at = |project_id: &str, ms: i64| Report { id: format!("{ms:012x}{:012x}", 7), ..report_at(project_id, ms) };
        for ms in [1_000, 2_000, 2_999, 3_000] {
            create(&store, filed(at(&project.id, ms))).await;
        }
        create(&store, filed(at(&other.id, 2_500))).await;
        assert_eq!(store.count_reports_between(&project.id, &id_floor(2_000), &id_floor(3_000)).await.unwrap(), 2);
        assert_eq!(store.count_reports_between(&project.id, &id_floor(0), &id_floor(10_000)).await.unwrap(), 4);
        assert_eq!(store.count_reports_between(&other.id, &id_floor(0), &id_floor(10_000)).await.unwrap(), 1);
    }

    async fn mail_state_is_set_once(store: DynStore) {
        assert_eq!(store.mail_state("mark").await.unwrap(), None);
        assert_eq!(store.init_mail_state("mark", "1").await.unwrap(), "1");
        assert_eq!(store.init_mail_state("mark", "2").await.unwrap(), "1", "the first value stays");
        assert_eq!(store.mail_state("mark").await.unwrap().as_deref(), Some("1"));
    }
}
