//! Issue trackers (connections, issue links, handled deliveries) on every backend: part of
//! `conformance.rs`, whose fixtures and `conformance!` macro it uses.

use super::*;
use svc_core::secret::Secret;
use svc_core::tracker::{AuthKind, ChannelRule, IssueLink, TrackerConnection, TrackerKind, TrackerSettings};

fn connection(project_id: &str, repository: &str, at: i64) -> TrackerConnection {
    let mut settings = TrackerSettings::new(repository.into(), AuthKind::Token);
    settings.rules = vec![ChannelRule { channel_key: "bug".into(), labels: vec!["from-svc".into()] }];
    TrackerConnection {
        project_id: project_id.into(),
        tracker: TrackerKind::Github,
        settings,
        credential: Secret::new("github_pat_x"),
        webhook_secret: Secret::new("a-long-enough-secret"),
        last_error: None,
        last_error_at: None,
        created_at: at,
        updated_at: at,
    }
}

fn link(report: &Report, repository: &str, number: i64) -> IssueLink {
    IssueLink {
        report_id: report.id.clone(),
        project_id: report.project_id.clone(),
        tracker: TrackerKind::Github,
        repository: repository.into(),
        number,
        url: format!("https://github.com/{repository}/issues/{number}"),
        created_at: 5,
    }
}

conformance! {
    async fn a_connection_is_kept_found_by_its_repository_and_replaced_whole(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        store.put_tracker_connection(&connection(&project.id, "Octo-Org/Shop", 1)).await.unwrap();
        store.put_tracker_connection(&connection(&other.id, "octo-org/shop", 2)).await.unwrap();
        let stored = store.tracker_connection(&project.id).await.unwrap().unwrap();
        assert_eq!(stored, connection(&project.id, "Octo-Org/Shop", 1));
        let both = store.tracker_connections_for(TrackerKind::Github, "octo-org/shop").await.unwrap();
        assert_eq!(both.len(), 2, "names compare without case");
        assert!(store.tracker_connections_for(TrackerKind::Github, "octo-org/other").await.unwrap().is_empty());

        let mut moved = connection(&project.id, "octo-org/other", 1);
        moved.updated_at = 9;
        store.put_tracker_connection(&moved).await.unwrap();
        assert_eq!(store.tracker_connection(&project.id).await.unwrap().unwrap(), moved);
        store.set_tracker_error(&project.id, Some("GitHub said no"), 10).await.unwrap();
        let failing = store.tracker_connection(&project.id).await.unwrap().unwrap();
        assert_eq!((failing.last_error.as_deref(), failing.last_error_at), (Some("GitHub said no"), Some(10)));
        store.set_tracker_error(&project.id, None, 11).await.unwrap();
        assert_eq!(store.tracker_connection(&project.id).await.unwrap().unwrap().last_error, None);
        assert_eq!(store.all_tracker_connections().await.unwrap().len(), 2);
        assert!(store.delete_tracker_connection(&project.id).await.unwrap());
        assert!(!store.delete_tracker_connection(&project.id).await.unwrap());
    }

    async fn a_report_keeps_its_first_issue_and_an_issue_finds_its_reports(store: DynStore) {
        let project = project(&store).await;
        let first = create(&store, filed(report(&project.id))).await;
        let second = create(&store, filed(report(&project.id))).await;
        let made = store.link_issue(&link(&first, "Octo-Org/Shop", 7)).await.unwrap();
        assert_eq!(made, link(&first, "Octo-Org/Shop", 7));
        // Linking again keeps the first issue.
        assert_eq!(store.link_issue(&link(&first, "Octo-Org/Shop", 8)).await.unwrap().number, 7);
        store.link_issue(&link(&second, "octo-org/shop", 7)).await.unwrap();
        let linked = store.links_to_issue(TrackerKind::Github, "octo-org/shop", 7).await.unwrap();
        assert_eq!(linked.len(), 2);
        let ids = vec![first.id.clone(), second.id.clone(), "no-such-report".to_string()];
        assert_eq!(store.issue_links(&ids).await.unwrap().len(), 2);
        // A report that goes takes its link with it.
        store.delete_reports(&project.id, None, 10).await.unwrap();
        assert!(store.issue_links(&ids).await.unwrap().is_empty());
    }

    async fn a_delivery_is_handled_once_with_its_change(store: DynStore) {
        let project = project(&store).await;
        let filed_report = create(&store, filed(report(&project.id))).await;
        let handled = |to: svc_core::status::Status| Change {
            project_ids: Some(vec![project.id.clone()]),
            by: system(),
            at: 100,
            writes: vec![
                Write::Status { report_id: filed_report.id.clone(), to },
                Write::TrackerDelivery { tracker: TrackerKind::Github, delivery_id: "d-1".into() },
            ],
        };
        store.apply(&handled(svc_core::status::Status::Fixed)).await.unwrap();
        // The same delivery again: the whole change is refused, the status stays.
        assert!(matches!(store.apply(&handled(svc_core::status::Status::Canceled)).await, Err(StoreError::Conflict(_))));
        assert_eq!(store.get_report(&filed_report.id).await.unwrap().unwrap().status, svc_core::status::Status::Fixed);
        assert_eq!(store.delete_old_tracker_deliveries(101).await.unwrap(), 1);
        store.apply(&handled(svc_core::status::Status::Canceled)).await.unwrap();
    }
}

conformance! {
    async fn the_reports_with_a_draft_waiting_are_found_among_many(store: DynStore) {
        let project = project(&store).await;
        let with_draft = create(&store, filed(report(&project.id))).await;
        let published = create(&store, filed(report(&project.id))).await;
        let quiet = create(&store, filed(report(&project.id))).await;
        create_comment(&store, &comment(&with_draft, "a draft", true, 10)).await.unwrap();
        create_comment(&store, &comment(&with_draft, "another", true, 11)).await.unwrap();
        create_comment(&store, &comment(&published, "published", false, 12)).await.unwrap();
        let ids = vec![with_draft.id.clone(), published.id.clone(), quiet.id.clone()];
        assert_eq!(store.reports_with_drafts(&ids).await.unwrap(), vec![with_draft.id.clone()]);
        assert!(store.reports_with_drafts(&[]).await.unwrap().is_empty());
    }
}

conformance! {
    async fn a_views_count_stops_at_its_cap_and_follows_its_filters(store: DynStore) {
        let project = project(&store).await;
        for _ in 0..5 {
            create(&store, filed(report(&project.id))).await;
        }
        let triaged = create(&store, filed(report(&project.id))).await;
        set_report_status(&store, &triaged.id, svc_core::status::Status::Triaged, &system(), 20).await.unwrap();
        create_comment(&store, &comment(&triaged, "draft", true, 21)).await.unwrap();
        let scope = ReportFilter { project_ids: vec![project.id.clone()], ..Default::default() };
        let open = ReportFilter { statuses: vec!["triaged".into(), "in-progress".into()], ..scope.clone() };
        let drafts = ReportFilter { drafts_waiting: true, ..scope.clone() };
        let nowhere = ReportFilter { project_ids: vec![], ..scope.clone() };
        let counts = store.count_reports_up_to(&[scope.clone(), open, drafts.clone(), nowhere], 100).await.unwrap();
        assert_eq!(counts, vec![6, 1, 1, 0]);
        assert_eq!(store.count_reports_up_to(&[scope], 3).await.unwrap(), vec![3], "no further than the cap");
        assert!(store.count_reports_up_to(&[], 3).await.unwrap().is_empty());
        let listed = store.list_reports(&ReportFilter { limit: 10, ..drafts }).await.unwrap();
        assert_eq!(listed.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), vec![triaged.id.clone()]);
    }
}
