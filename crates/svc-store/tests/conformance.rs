//! One behaviour suite for every `Store` backend. Each test is written once against a `DynStore` and
//! runs as `sqlite_<name>` (always, in its own temporary folder) and `postgres_<name>` (in its own
//! fresh schema when `SVC_TEST_POSTGRES_URL` is set; otherwise it says it skipped and passes).

use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use svc_core::ids::{new_id, new_id_at, short_id};
use svc_core::model::*;
use svc_core::time::now_ms;
use svc_store::postgres::PostgresStore;
use svc_store::sqlite::SqliteStore;
use svc_store::{
    Applied, ArtifactActivity, Change, CreatedReport, DynStore, IDEMPOTENCY_WINDOW_MS, StoreError, StoreResult, Write,
};

macro_rules! conformance {
    ($(async fn $name:ident($store:ident: DynStore) $body:block)*) => {
        $(
            pastey::paste! {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn [<sqlite_ $name>]() {
                    let folder = tempfile::tempdir().expect("temporary folder");
                    let $store: DynStore = Arc::new(open_sqlite(folder.path()).await);
                    $body
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn [<postgres_ $name>]() {
                    let Ok(url) = std::env::var("SVC_TEST_POSTGRES_URL") else {
                        eprintln!("skipped: SVC_TEST_POSTGRES_URL not set");
                        return;
                    };
                    let $store: DynStore =
                        Arc::new(PostgresStore::connect_fresh_schema(&url).await.expect("fresh PostgreSQL schema"));
                    $body
                }
            }
        )*
    };
}

// Fixtures

// Changes (each test below states what one kind of write does; `ChangeStore::apply` applies them)

fn system() -> Author {
    Author { kind: AuthorKind::System, id: None, label: Some("test".into()) }
}

async fn apply(
    store: &DynStore,
    project_ids: Option<&[String]>,
    at: i64,
    writes: Vec<Write>,
) -> StoreResult<Vec<Applied>> {
    let change = Change { project_ids: project_ids.map(<[String]>::to_vec), by: system(), at, writes };
    store.apply(&change).await
}

async fn set_report_status(
    store: &DynStore,
    report_id: &str,
    to: svc_core::status::Status,
    by: &Author,
    at: i64,
) -> StoreResult<Option<StatusChange>> {
    let change = Change::anywhere(by.clone(), at, vec![Write::Status { report_id: report_id.into(), to }]);
    match store.apply(&change).await?.pop() {
        Some(Applied::Status(recorded)) => Ok(recorded),
        other => panic!("a status write answered {other:?}"),
    }
}

async fn create_comment(store: &DynStore, comment: &Comment) -> StoreResult<()> {
    apply(store, None, comment.created_at, vec![Write::Comment(comment.clone())]).await.map(drop)
}

async fn set_assignee(
    store: &DynStore,
    project_ids: &[String],
    report_ids: &[String],
    to: Option<&str>,
    at: i64,
) -> StoreResult<()> {
    let writes =
        report_ids.iter().map(|id| Write::Assignee { report_id: id.clone(), to: to.map(str::to_string) }).collect();
    apply(store, Some(project_ids), at, writes).await.map(drop)
}

async fn change_labels(
    store: &DynStore,
    project_ids: &[String],
    report_ids: &[String],
    change: &svc_core::triage::LabelChange,
    at: i64,
) -> StoreResult<Vec<(String, Vec<String>)>> {
    let writes = report_ids.iter().map(|id| Write::Labels { report_id: id.clone(), change: change.clone() }).collect();
    let applied = apply(store, Some(project_ids), at, writes).await?;
    Ok(report_ids
        .iter()
        .zip(applied)
        .map(|(id, outcome)| match outcome {
            Applied::Labels(labels) => (id.clone(), labels),
            other => panic!("a label write answered {other:?}"),
        })
        .collect())
}

/// The comment written by a draft write, `None` when the report has no such comment (or draft).
async fn comment_write(store: &DynStore, at: i64, write: Write) -> StoreResult<Option<Comment>> {
    match apply(store, None, at, vec![write]).await {
        Ok(applied) => Ok(applied.into_iter().find_map(|outcome| match outcome {
            Applied::Comment(comment) => Some(comment),
            _ => None,
        })),
        Err(StoreError::NotFound) => Ok(None),
        Err(other) => Err(other),
    }
}

async fn publish_comment(store: &DynStore, comment: &Comment, at: i64) -> StoreResult<Option<Comment>> {
    let write = Write::PublishDraft { report_id: comment.report_id.clone(), comment_id: comment.id.clone() };
    comment_write(store, at, write).await
}

async fn edit_draft_comment(store: &DynStore, comment: &Comment, text: &str) -> StoreResult<Option<Comment>> {
    let write =
        Write::EditDraft { report_id: comment.report_id.clone(), comment_id: comment.id.clone(), text: text.into() };
    comment_write(store, now_ms(), write).await
}

async fn discard_draft_comment(store: &DynStore, comment: &Comment) -> StoreResult<bool> {
    let write = Write::DiscardDraft { report_id: comment.report_id.clone(), comment_id: comment.id.clone() };
    match apply(store, None, now_ms(), vec![write]).await {
        Ok(_) => Ok(true),
        Err(StoreError::NotFound) => Ok(false),
        Err(other) => Err(other),
    }
}

async fn open_sqlite(folder: &std::path::Path) -> SqliteStore {
    let url = format!("sqlite://{}", folder.join("svc.db").display());
    SqliteStore::connect(&url).await.expect("open SQLite store")
}

async fn organization(store: &DynStore, name: &str) -> Organization {
    let org = Organization { id: new_id(), name: name.into(), created_at: now_ms() };
    store.create_organization(&org).await.unwrap();
    org
}

fn project_in(org_id: &str, name: &str, slug: &str) -> Project {
    Project {
        id: new_id(),
        org_id: org_id.into(),
        name: name.into(),
        slug: slug.into(),
        project_key: svc_core::ids::new_project_key(),
        url_patterns: vec!["https://app.example.com/*".into()],
        default_channel_key: "bug".into(),
        widget_config: json!({"mascot": "fox", "size": 48}),
        allowed_origins: vec!["https://app.example.com".into()],
        identity_secret: None,
        created_at: now_ms(),
        retention_days: None,
        reporter_auth: Default::default(),
    }
}

fn channel(project_id: &str, key: &str, created_at: i64) -> Channel {
    Channel {
        id: new_id_at(created_at),
        project_id: project_id.into(),
        key: key.into(),
        name: format!("{key} channel"),
        color: "#336699".into(),
        mascot: "owl".into(),
        base_weight: 0.5,
        matchers: json!([{"conditions": [{"field": "path", "op": "prefix", "value": "/admin"}], "weight": 2.0, "note": "admin"}]),
        archived: false,
        created_at,
        updated_at: created_at,
    }
}

fn default_channels(project_id: &str) -> Vec<Channel> {
    let now = now_ms();
    ["bug", "idea", "question"].iter().map(|key| channel(project_id, key, now)).collect()
}

/// An organization with one project and its default channels.
async fn project(store: &DynStore) -> Project {
    let org = organization(store, "Acme").await;
    project_of(store, &org.id, "web").await
}

async fn project_of(store: &DynStore, org_id: &str, slug: &str) -> Project {
    let project = project_in(org_id, slug, slug);
    store.create_project(&project, &default_channels(&project.id)).await.unwrap();
    project
}

fn report_at(project_id: &str, created_at: i64) -> Report {
    Report {
        id: new_id_at(created_at),
        project_id: project_id.into(),
        channel_key: "bug".into(),
        status: "new".parse().unwrap(),
        title: "The save button does nothing".into(),
        blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": "The save button does nothing"}]))
            .unwrap(),
        context: serde_json::from_value(
            serde_json::json!({"url": "https://app.example.com/settings", "viewport": {"width": 1280, "height": 800}}),
        )
        .unwrap(),
        identity: Some(
            serde_json::from_value(serde_json::json!({"userId": "u-1", "email": "ann@example.com", "verified": true}))
                .unwrap(),
        ),
        identity_error: None,
        author: Author {
            kind: svc_core::model::AuthorKind::Reporter,
            id: Some("u-1".into()),
            label: Some("Ann".into()),
        },
        artifact_id: None,
        url: Some("https://app.example.com/settings".into()),
        created_at,
        updated_at: created_at,
        assignee: None,
        labels: Vec::new(),
    }
}

fn report(project_id: &str) -> Report {
    report_at(project_id, now_ms())
}

fn filed(report: Report) -> NewReport {
    NewReport { report, blob_ids: Vec::new(), idempotency_key: None }
}

fn with_blobs(report: Report, blob_ids: &[&str]) -> NewReport {
    NewReport { report, blob_ids: blob_ids.iter().map(|id| id.to_string()).collect(), idempotency_key: None }
}

fn with_key(report: Report, key: &str) -> NewReport {
    NewReport { report, blob_ids: Vec::new(), idempotency_key: Some(key.into()) }
}

async fn create(store: &DynStore, new: NewReport) -> Report {
    match store.create_report(new).await.unwrap() {
        CreatedReport::Created(report) => report,
        CreatedReport::Repeat(id) => panic!("expected a new report, got a repeat of {id}"),
    }
}

fn blob_at(project_id: &str, created_at: i64) -> Blob {
    Blob {
        id: new_id_at(created_at),
        project_id: project_id.into(),
        kind: "screenshot".into(),
        mime: "image/png".into(),
        bytes: 2048,
        width: Some(640),
        height: Some(480),
        duration_ms: None,
        name: None,
        report_id: None,
        created_at,
    }
}

async fn stored_blob(store: &DynStore, project_id: &str) -> Blob {
    let blob = blob_at(project_id, now_ms());
    store.create_blob(&blob).await.unwrap();
    blob
}

fn ids(reports: &[Report]) -> Vec<String> {
    reports.iter().map(|r| r.id.clone()).collect()
}

fn filter(project_id: &str, limit: u32) -> ReportFilter {
    ReportFilter { project_ids: vec![project_id.into()], limit, ..ReportFilter::default() }
}

fn author(kind: &str, id: &str) -> Author {
    Author {
        kind: svc_core::model::AuthorKind::parse(kind).expect("an author kind"),
        id: Some(id.into()),
        label: Some(format!("{id} label")),
    }
}

fn api_key(org_id: &str, project_id: Option<&str>, name: &str) -> ApiKey {
    ApiKey {
        id: new_id(),
        project_id: project_id.map(str::to_string),
        org_id: org_id.into(),
        name: name.into(),
        key_hash: format!("{:0>64}", new_id()),
        scopes: vec!["feedback:read".into(), "feedback:write".into()],
        origin: KeyOrigin::Api,
        expires_at: Some(now_ms() + 3_600_000),
        revoked_at: None,
        last_used_at: None,
        agent_name: None,
        agent_owner: None,
        created_at: now_ms(),
    }
}

fn room(project_id: &str, artifact_id: &str, at: i64) -> Room {
    Room {
        id: new_id_at(at),
        project_id: project_id.into(),
        artifact_id: artifact_id.into(),
        title: format!("Room {artifact_id}"),
        meta: Some(json!({"tool": "figma", "goal": "review"})),
        archived: false,
        created_at: at,
        updated_at: at,
    }
}

fn hint(project_id: &str, channel_key: &str, user_id: Option<&str>, expires_at: i64) -> Hint {
    Hint {
        id: new_id(),
        project_id: project_id.into(),
        channel_key: channel_key.into(),
        weight: HintWeight::Number(3.5),
        user_id: user_id.map(str::to_string),
        created_at: expires_at - HINT_TTL_MS,
        expires_at,
    }
}

fn comment(report: &Report, text: &str, draft: bool, created_at: i64) -> Comment {
    Comment {
        id: new_id_at(created_at),
        report_id: report.id.clone(),
        project_id: report.project_id.clone(),
        author: author("agent", "agent:k1"),
        text: text.into(),
        kind: Some("fix".into()),
        draft,
        created_at,
        published_at: None,
    }
}

conformance! {
    async fn organizations_are_stored_and_found(store: DynStore) {
        assert!(!store.backend().is_empty());
        store.ping().await.unwrap();
        assert_eq!(store.count_organizations().await.unwrap(), 0);
        let acme = organization(&store, "Acme").await;
        organization(&store, "Globex").await;
        assert_eq!(store.get_organization(&acme.id).await.unwrap(), Some(acme.clone()));
        assert_eq!(store.find_organization_by_name("Acme").await.unwrap(), Some(acme));
        assert_eq!(store.find_organization_by_name("Initech").await.unwrap(), None);
        assert_eq!(store.get_organization(&new_id()).await.unwrap(), None);
        assert_eq!(store.count_organizations().await.unwrap(), 2);
    }

    async fn project_and_default_channels_are_created_together(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let web = project_in(&org.id, "Web", "web");
        let channels = default_channels(&web.id);
        store.create_project(&web, &channels).await.unwrap();
        assert_eq!(store.get_project(&web.id).await.unwrap(), Some(web.clone()));
        assert_eq!(store.list_channels(&web.id, false).await.unwrap().to_vec(), channels);

        // The same slug in the same organization is a conflict, and nothing of the project stays.
        let clash = project_in(&org.id, "Web again", "web");
        let error = store.create_project(&clash, &default_channels(&clash.id)).await.unwrap_err();
        assert!(matches!(error, StoreError::Conflict(_)), "{error:?}");
        assert_eq!(store.get_project(&clash.id).await.unwrap(), None);
        assert!(store.list_channels(&clash.id, true).await.unwrap().is_empty());

        // A channel that fails takes the project down with it.
        let broken = project_in(&org.id, "Broken", "broken");
        let twice = vec![channel(&broken.id, "bug", now_ms()), channel(&broken.id, "bug", now_ms())];
        let error = store.create_project(&broken, &twice).await.unwrap_err();
        assert!(matches!(error, StoreError::Conflict(_)), "{error:?}");
        assert_eq!(store.get_project(&broken.id).await.unwrap(), None);

        // Slugs are unique per organization only.
        let other_org = organization(&store, "Globex").await;
        store.create_project(&project_in(&other_org.id, "Web", "web"), &[]).await.unwrap();
        assert_eq!(store.list_projects(&org.id).await.unwrap(), vec![web]);
    }

    async fn projects_are_found_by_key_listed_and_updated(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let first = project_of(&store, &org.id, "first").await;
        let second = project_of(&store, &org.id, "second").await;
        assert_eq!(store.get_project_by_key(&second.project_key).await.unwrap().as_deref(), Some(&second));
        assert_eq!(store.get_project_by_key("pr_unknown").await.unwrap(), None);
        assert_eq!(store.list_projects(&org.id).await.unwrap(), vec![first.clone(), second.clone()]);

        let mut changed = first.clone();
        changed.name = "First, renamed".into();
        changed.url_patterns = vec![];
        changed.default_channel_key = "idea".into();
        changed.widget_config = json!({"anchor": "bottom-left"});
        changed.allowed_origins = vec!["https://a.example".into(), "https://b.example".into()];
        // Fields outside the update's reach keep their stored values.
        changed.slug = "ignored".into();
        store.update_project(&changed).await.unwrap();
        let stored = store.get_project(&first.id).await.unwrap().unwrap();
        assert_eq!(stored, Project { slug: first.slug.clone(), ..changed });

        store.set_identity_secret(&first.id, Some("s3cret")).await.unwrap();
        assert_eq!(store.get_project(&first.id).await.unwrap().unwrap().identity_secret.as_deref(), Some("s3cret"));
        store.set_identity_secret(&first.id, None).await.unwrap();
        assert_eq!(store.get_project(&first.id).await.unwrap().unwrap().identity_secret, None);

        let ghost = project_in(&org.id, "Ghost", "ghost");
        assert!(matches!(store.update_project(&ghost).await, Err(StoreError::NotFound)));
        assert!(matches!(store.set_identity_secret(&ghost.id, Some("x")).await, Err(StoreError::NotFound)));
    }

    async fn channels_are_created_listed_oldest_first_and_updated(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms() + 1000;
        let later = channel(&project.id, "billing", base + 20);
        let earlier = channel(&project.id, "ux", base + 10);
        store.create_channel(&later).await.unwrap();
        store.create_channel(&earlier).await.unwrap();
        let error = store.create_channel(&channel(&project.id, "ux", base + 30)).await.unwrap_err();
        assert!(matches!(error, StoreError::Conflict(_)), "{error:?}");

        let keys: Vec<String> = store.list_channels(&project.id, false).await.unwrap().iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["bug", "idea", "question", "ux", "billing"]);
        assert_eq!(store.get_channel(&project.id, "ux").await.unwrap(), Some(earlier.clone()));
        assert_eq!(store.get_channel(&project.id, "nope").await.unwrap(), None);

        let mut archived = earlier.clone();
        archived.name = "User experience".into();
        archived.color = "#aabbcc".into();
        archived.mascot = "otter".into();
        archived.base_weight = -1.25;
        archived.matchers = json!([]);
        archived.archived = true;
        archived.updated_at = base + 99;
        store.update_channel(&archived).await.unwrap();
        assert_eq!(store.get_channel(&project.id, "ux").await.unwrap(), Some(archived.clone()));
        let active: Vec<String> = store.list_channels(&project.id, false).await.unwrap().iter().map(|c| c.key.clone()).collect();
        assert_eq!(active, ["bug", "idea", "question", "billing"]);
        let all = store.list_channels(&project.id, true).await.unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[3], archived);

        let ghost = channel(&project.id, "ghost", base);
        assert!(matches!(store.update_channel(&ghost).await, Err(StoreError::NotFound)));
    }

    async fn a_created_report_reads_back_as_filed(store: DynStore) {
        let project = project(&store).await;
        let mut filed_report = report(&project.id);
        filed_report.identity = None;
        filed_report.identity_error = Some("expired".into());
        filed_report.artifact_id = Some("doc-1".into());
        let created = create(&store, filed(filed_report.clone())).await;
        assert_eq!(created, filed_report);
        assert_eq!(store.get_report(&filed_report.id).await.unwrap(), Some(filed_report.clone()));
        assert_eq!(store.get_report(&new_id()).await.unwrap(), None);
        assert!(store.status_history(&filed_report.id).await.unwrap().is_empty());

        let duplicate = store.create_report(filed(filed_report)).await.unwrap_err();
        assert!(matches!(duplicate, StoreError::Conflict(_)), "{duplicate:?}");
    }

    async fn an_idempotent_repeat_returns_the_first_report_and_stores_nothing(store: DynStore) {
        let project = project(&store).await;
        let first = create(&store, with_key(report(&project.id), "key-1")).await;
        let again = report(&project.id);
        let outcome = store.create_report(with_key(again.clone(), "key-1")).await.unwrap();
        assert_eq!(outcome, CreatedReport::Repeat(first.id.clone()));
        assert_eq!(store.get_report(&again.id).await.unwrap(), None);
        assert_eq!(ids(&store.list_reports(&filter(&project.id, 10)).await.unwrap()), vec![first.id.clone()]);

        // Keys are per project.
        let org = store.get_organization(&project.org_id).await.unwrap().unwrap();
        let other = project_of(&store, &org.id, "other").await;
        create(&store, with_key(report(&other.id), "key-1")).await;
    }

    async fn an_idempotency_key_older_than_a_day_files_a_new_report(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let old = create(&store, with_key(report_at(&project.id, now - IDEMPOTENCY_WINDOW_MS - 60_000), "key-1")).await;
        let fresh = create(&store, with_key(report_at(&project.id, now), "key-1")).await;
        assert_ne!(old.id, fresh.id);
        // The key now remembers the newer report.
        let outcome = store.create_report(with_key(report_at(&project.id, now + 1), "key-1")).await.unwrap();
        assert_eq!(outcome, CreatedReport::Repeat(fresh.id));
    }

    async fn expired_idempotency_keys_are_deleted(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        create(&store, with_key(report_at(&project.id, now - 2 * IDEMPOTENCY_WINDOW_MS), "old")).await;
        let recent = create(&store, with_key(report_at(&project.id, now), "recent")).await;
        assert_eq!(store.delete_expired_idempotency_keys(now - IDEMPOTENCY_WINDOW_MS).await.unwrap(), 1);
        assert_eq!(store.delete_expired_idempotency_keys(now - IDEMPOTENCY_WINDOW_MS).await.unwrap(), 0);
        let outcome = store.create_report(with_key(report(&project.id), "recent")).await.unwrap();
        assert_eq!(outcome, CreatedReport::Repeat(recent.id));
        assert_eq!(store.list_reports(&filter(&project.id, 10)).await.unwrap().len(), 2);
    }

    async fn a_report_binds_its_blobs_once(store: DynStore) {
        let project = project(&store).await;
        let screenshot = stored_blob(&store, &project.id).await;
        let voice = stored_blob(&store, &project.id).await;
        // The same blob named twice (two blocks showing it) is bound once.
        let first = create(&store, with_blobs(report(&project.id), &[&screenshot.id, &voice.id, &screenshot.id])).await;
        for blob in [&screenshot, &voice] {
            let stored = store.get_blob(&blob.id).await.unwrap().unwrap();
            assert_eq!(stored, Blob { report_id: Some(first.id.clone()), ..blob.clone() });
        }

        let unused = stored_blob(&store, &project.id).await;
        let second = report(&project.id);
        let error = store.create_report(with_blobs(second.clone(), &[&unused.id, &screenshot.id])).await.unwrap_err();
        assert!(matches!(&error, StoreError::BlobAlreadyUsed(id) if *id == screenshot.id), "{error:?}");
        assert_eq!(store.get_report(&second.id).await.unwrap(), None);
        assert_eq!(store.get_blob(&unused.id).await.unwrap().unwrap().report_id, None, "the failed report bound nothing");

        let error = store.create_report(with_blobs(report(&project.id), &[&new_id()])).await.unwrap_err();
        assert!(matches!(error, StoreError::NotFound), "{error:?}");

        let org = store.get_organization(&project.org_id).await.unwrap().unwrap();
        let other = project_of(&store, &org.id, "other").await;
        let foreign = stored_blob(&store, &other.id).await;
        let error = store.create_report(with_blobs(report(&project.id), &[&foreign.id])).await.unwrap_err();
        assert!(matches!(error, StoreError::NotFound), "{error:?}");
        assert_eq!(store.get_blob(&foreign.id).await.unwrap().unwrap().report_id, None);
        assert_eq!(ids(&store.list_reports(&filter(&project.id, 10)).await.unwrap()), vec![first.id]);
    }

    async fn two_reports_racing_for_one_blob_have_one_winner(store: DynStore) {
        let project = project(&store).await;
        for _ in 0..5 {
            let blob = stored_blob(&store, &project.id).await;
            let attempts: Vec<_> = (0..2)
                .map(|_| {
                    let store = store.clone();
                    let new = with_blobs(report(&project.id), &[&blob.id]);
                    tokio::spawn(async move { store.create_report(new).await })
                })
                .collect();
            let mut winners = Vec::new();
            let mut losers = 0;
            for attempt in attempts {
                match attempt.await.unwrap() {
                    Ok(CreatedReport::Created(report)) => winners.push(report.id),
                    Err(StoreError::BlobAlreadyUsed(id)) if id == blob.id => losers += 1,
                    other => panic!("unexpected outcome {other:?}"),
                }
            }
            assert_eq!((winners.len(), losers), (1, 1));
            assert_eq!(store.get_blob(&blob.id).await.unwrap().unwrap().report_id, Some(winners[0].clone()));
        }
    }

    async fn concurrent_reports_are_all_stored_even_when_some_fail(store: DynStore) {
        let project = project(&store).await;
        let used = stored_blob(&store, &project.id).await;
        create(&store, with_blobs(report(&project.id), &[&used.id])).await;

        let mut tasks = Vec::new();
        for index in 0..60 {
            let store = store.clone();
            let new = if index % 10 == 0 { with_blobs(report(&project.id), &[&used.id]) } else { filed(report(&project.id)) };
            tasks.push(tokio::spawn(async move { (new.report.id.clone(), store.create_report(new).await) }));
        }
        let mut stored = HashSet::new();
        for task in tasks {
            match task.await.unwrap() {
                (id, Ok(CreatedReport::Created(report))) => {
                    assert_eq!(report.id, id);
                    stored.insert(id);
                }
                (_, Err(StoreError::BlobAlreadyUsed(_))) => {}
                (_, other) => panic!("unexpected outcome {other:?}"),
            }
        }
        assert_eq!(stored.len(), 54);
        let listed: HashSet<String> = ids(&store.list_reports(&filter(&project.id, 100)).await.unwrap()).into_iter().collect();
        assert_eq!(listed.len(), 55);
        assert!(stored.is_subset(&listed));
    }

    async fn a_duplicate_id_among_concurrent_plain_reports_fails_alone(store: DynStore) {
        // Plain reports (no blobs, no idempotency key) are batched into multi-row INSERTs on SQLite;
        // one bad row must not take the others down with it.
        let project = project(&store).await;
        let taken = create(&store, filed(report(&project.id))).await;
        let mut tasks = Vec::new();
        for index in 0..40 {
            let store = store.clone();
            let mut new = filed(report(&project.id));
            if index == 17 {
                new.report.id = taken.id.clone();
            }
            tasks.push(tokio::spawn(async move { (index, store.create_report(new).await) }));
        }
        let mut stored = 0;
        for task in tasks {
            match task.await.unwrap() {
                (17, Err(StoreError::Conflict(_) | StoreError::Database(_))) => {}
                (index, Ok(CreatedReport::Created(_))) if index != 17 => stored += 1,
                (index, other) => panic!("report {index}: unexpected outcome {other:?}"),
            }
        }
        assert_eq!(stored, 39);
        assert_eq!(store.list_reports(&filter(&project.id, 100)).await.unwrap().len(), 40);
        assert_eq!(store.get_report(&taken.id).await.unwrap().unwrap(), taken);
    }

    async fn text_listings_hold_what_serializing_the_listed_reports_gives(store: DynStore) {
        let project = project(&store).await;
        let mut made = Vec::new();
        for index in 0..5i64 {
            let mut report = report_at(&project.id, now_ms() + index);
            report.blocks = serde_json::from_value(serde_json::json!([{"type": "text", "text": format!("é \"{index}\" \\ \u{1f600}\n")},
                                   {"type": "pinpoint", "selector": "#a", "target": {"css": "#a"}, "point": {"x": 0.1, "y": 1e-7}}])).unwrap();
            report.context = serde_json::from_value(serde_json::json!({"url": "https://x.example/?a=1", "n": -12, "big": 18446744073709551615u64,
                                    "f": 1.5e300, "nested": {"b": [1, 2.5, null], "a": true}})).unwrap();
            report.identity = (index % 2 == 0).then(|| serde_json::from_value(serde_json::json!({"userId": "u-1", "name": "Zoë", "verified": true})).unwrap());
            made.push(create(&store, filed(report)).await);
        }
        for status in [None, Some("new".to_string())] {
            let filter = ReportFilter { status, ..filter(&project.id, 3) };
            let parsed = store.list_reports(&filter).await.unwrap();
            let text = store.list_reports_text(&filter).await.unwrap();
            assert_eq!(parsed.len(), 3);
            assert_eq!(text.len(), parsed.len());
            for (listed, report) in text.iter().zip(&parsed) {
                assert_eq!(listed.id, report.id);
                assert_eq!(listed.blocks.get(), serde_json::to_string(&report.blocks).unwrap());
                assert_eq!(listed.context.get(), serde_json::to_string(&report.context).unwrap());
                assert_eq!(
                    listed.identity.as_ref().map(|i| i.get().to_string()),
                    report.identity.as_ref().map(|i| serde_json::to_string(i).unwrap())
                );
                assert_eq!(
                    (&listed.title, &listed.author, listed.created_at, &listed.url),
                    (&report.title, &report.author, report.created_at, &report.url)
                );
            }
        }
    }

    async fn report_lists_filter_by_status_channel_artifact_and_project(store: DynStore) {
        let project = project(&store).await;
        let org_id = project.org_id.clone();
        let other = project_of(&store, &org_id, "other").await;
        let base = now_ms();
        let mut made = Vec::new();
        for index in 0..12i64 {
            let mut report = report_at(if index % 3 == 2 { &other.id } else { &project.id }, base + index);
            report.channel_key = if index % 2 == 0 { "bug".into() } else { "idea".into() };
            report.artifact_id = (index % 4 == 0).then(|| "doc-1".to_string());
            made.push(create(&store, filed(report)).await);
        }
        let fixed = [made[0].id.clone(), made[4].id.clone()];
        for id in &fixed {
            set_report_status(&store, id, "fixed".parse().unwrap(), &author("user", "u-9"), base + 100).await.unwrap();
        }
        let expect = |keep: &dyn Fn(&Report) -> bool| -> Vec<String> {
            made.iter().rev().filter(|r| keep(r)).map(|r| r.id.clone()).collect()
        };
        let list = |filter: ReportFilter| {
            let store = store.clone();
            async move { ids(&store.list_reports(&filter).await.unwrap()) }
        };

        assert_eq!(list(filter(&project.id, 50)).await, expect(&|r| r.project_id == project.id));
        assert_eq!(list(filter(&project.id, 3)).await, expect(&|r| r.project_id == project.id)[..3]);
        assert_eq!(
            list(ReportFilter { status: Some("fixed".parse().unwrap()), ..filter(&project.id, 50) }).await,
            vec![made[4].id.clone(), made[0].id.clone()]
        );
        assert_eq!(
            list(ReportFilter { channel_key: Some("idea".into()), ..filter(&project.id, 50) }).await,
            expect(&|r| r.project_id == project.id && r.channel_key == "idea")
        );
        assert_eq!(
            list(ReportFilter { artifact_id: Some("doc-1".into()), ..filter(&project.id, 50) }).await,
            expect(&|r| r.project_id == project.id && r.artifact_id.as_deref() == Some("doc-1"))
        );
        assert_eq!(
            list(ReportFilter { status: Some("new".parse().unwrap()), channel_key: Some("bug".into()), ..filter(&project.id, 50) }).await,
            expect(&|r| r.project_id == project.id && r.channel_key == "bug" && !fixed.contains(&r.id))
        );
        // Unknown values give empty lists, not errors.
        assert!(list(ReportFilter { status: Some("bogus".into()), ..filter(&project.id, 50) }).await.is_empty());
        assert!(list(filter(&new_id(), 50)).await.is_empty());
        assert!(list(ReportFilter { limit: 50, ..ReportFilter::default() }).await.is_empty());

        // Several projects: one list, newest first, cut at the limit.
        let both = ReportFilter { project_ids: vec![project.id.clone(), other.id.clone()], limit: 50, ..ReportFilter::default() };
        assert_eq!(list(both.clone()).await, expect(&|_| true));
        assert_eq!(list(ReportFilter { limit: 5, ..both.clone() }).await, expect(&|_| true)[..5]);
        let before = made[6].id.clone();
        assert_eq!(
            list(ReportFilter { before: Some(before.clone()), ..both.clone() }).await,
            expect(&|r| r.id < before)
        );
        assert_eq!(
            list(ReportFilter { channel_key: Some("bug".into()), ..both }).await,
            expect(&|r| r.channel_key == "bug")
        );
    }

    async fn paging_with_before_returns_every_report_once_newest_first(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms() - 1_000_000;
        // Several reports share a millisecond: ids still order them.
        let reports: Vec<Report> = (0..250).map(|index| report_at(&project.id, base + index / 3)).collect();
        store.insert_reports_bulk(&reports[..100]).await.unwrap();
        store.insert_reports_bulk(&reports[100..]).await.unwrap();

        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = store.list_reports(&ReportFilter { before: before.clone(), ..filter(&project.id, 20) }).await.unwrap();
            if page.is_empty() {
                break;
            }
            assert!(page.len() <= 20);
            before = page.last().map(|r| r.id.clone());
            seen.extend(page);
        }
        let mut newest_first = reports.clone();
        newest_first.reverse();
        assert_eq!(seen, newest_first);
    }

    async fn bulk_inserted_reports_read_back_whole(store: DynStore) {
        let project = project(&store).await;
        let mut reports: Vec<Report> = (0..1200).map(|_| report(&project.id)).collect();
        reports[7].identity = None;
        reports[7].artifact_id = Some("doc-9".into());
        store.insert_reports_bulk(&reports).await.unwrap();
        store.insert_reports_bulk(&[]).await.unwrap();
        assert_eq!(store.get_report(&reports[7].id).await.unwrap(), Some(reports[7].clone()));
        assert_eq!(store.list_reports(&filter(&project.id, 2000)).await.unwrap().len(), 1200);
        assert_eq!(store.count_room_reports(&project.id, "doc-9").await.unwrap(), 1);
    }

    async fn status_changes_are_recorded_in_order(store: DynStore) {
        let project = project(&store).await;
        let filed_report = create(&store, filed(report(&project.id))).await;
        let at = now_ms() + 10;
        let agent = author("agent", "agent:k1");
        let change = set_report_status(&store, &filed_report.id, "triaged".parse().unwrap(), &agent, at).await.unwrap().unwrap();
        // The same status again is no change: nothing recorded.
        assert_eq!(set_report_status(&store, &filed_report.id, "triaged".parse().unwrap(), &agent, at + 1).await.unwrap(), None);
        assert_eq!(
            change,
            StatusChange { report_id: filed_report.id.clone(), from_status: "new".parse().unwrap(), to_status: "triaged".parse().unwrap(), by: agent.clone(), at }
        );
        let human = Author { kind: svc_core::model::AuthorKind::User, id: None, label: None };
        set_report_status(&store, &filed_report.id, "fixed".parse().unwrap(), &human, at + 5).await.unwrap();

        let stored = store.get_report(&filed_report.id).await.unwrap().unwrap();
        assert_eq!((stored.status.as_str(), stored.updated_at), ("fixed", at + 5));
        let history = store.status_history(&filed_report.id).await.unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(history[0], change);
        assert_eq!(
            history[1],
            StatusChange { report_id: filed_report.id.clone(), from_status: "triaged".parse().unwrap(), to_status: "fixed".parse().unwrap(), by: human, at: at + 5 }
        );

        let error = set_report_status(&store, &new_id(), "fixed".parse().unwrap(), &agent, at).await.unwrap_err();
        assert!(matches!(error, StoreError::NotFound), "{error:?}");
        assert!(store.status_history(&new_id()).await.unwrap().is_empty());
    }

    async fn short_ids_find_reports_in_the_given_projects(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let mine = create(&store, filed(report(&project.id))).await;
        let theirs = create(&store, filed(report(&other.id))).await;
        for _ in 0..20 {
            create(&store, filed(report(&project.id))).await;
        }
        let only_mine = vec![project.id.clone()];
        assert_eq!(store.find_reports_by_short_id(&only_mine, short_id(&mine.id), 5).await.unwrap(), vec![mine.clone()]);
        assert!(store.find_reports_by_short_id(&only_mine, short_id(&theirs.id), 5).await.unwrap().is_empty());
        let both = vec![project.id.clone(), other.id.clone()];
        assert_eq!(ids(&store.find_reports_by_short_id(&both, short_id(&theirs.id), 5).await.unwrap()), vec![theirs.id.clone()]);
        // A longer suffix works too; a suffix nobody has finds nothing.
        assert_eq!(ids(&store.find_reports_by_short_id(&only_mine, &mine.id[10..], 5).await.unwrap()), vec![mine.id.clone()]);
        assert!(store.find_reports_by_short_id(&only_mine, "zzzzzz", 5).await.unwrap().is_empty());
    }

    async fn short_id_matches_are_newest_first_and_limited(store: DynStore) {
        let project = project(&store).await;
        // Hand-made ids sharing a short id, as an ambiguous shortId would.
        let base = now_ms();
        let reports: Vec<Report> = (0..3i64)
            .map(|index| Report { id: format!("{:012x}00000abcdef", base + index), ..report_at(&project.id, base + index) })
            .collect();
        store.insert_reports_bulk(&reports).await.unwrap();
        let found = store.find_reports_by_short_id(std::slice::from_ref(&project.id), "abcdef", 2).await.unwrap();
        assert_eq!(ids(&found), vec![reports[2].id.clone(), reports[1].id.clone()]);
    }

    async fn short_ids_find_bulk_loaded_and_new_reports_once_each(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms();
        let with_id = |index: i64| Report {
            id: format!("{:012x}00000fedcba", base + index),
            ..report_at(&project.id, base + index)
        };
        // Loaded in bulk (SQLite copies their short ids at once), then filed one by one (SQLite
        // finds those in the tail not copied yet, until its indexer catches up).
        store.insert_reports_bulk(&[with_id(0), with_id(1)]).await.unwrap();
        for index in 2..4 {
            create(&store, filed(with_id(index))).await;
        }
        let expected: Vec<String> = (0..4).rev().map(|index| with_id(index).id).collect();
        let projects = std::slice::from_ref(&project.id);
        assert_eq!(ids(&store.find_reports_by_short_id(projects, "fedcba", 10).await.unwrap()), expected);
        // Once the indexer has run (SQLite copies the short ids into their table), each is still
        // found exactly once, now through the table.
        store.run_maintenance_once().await.unwrap();
        assert_eq!(ids(&store.find_reports_by_short_id(projects, "fedcba", 10).await.unwrap()), expected);
        assert_eq!(ids(&store.find_reports_by_short_id(projects, "fedcba", 3).await.unwrap()), expected[..3].to_vec());
        let newest = create(&store, filed(with_id(4))).await;
        let found = store.find_reports_by_short_id(projects, "fedcba", 1).await.unwrap();
        assert_eq!(found, vec![newest]);
    }

    async fn rooms_are_inserted_then_changed_field_by_field(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        let new_room = room(&project.id, "doc-1", at);
        let (stored, inserted) = store.upsert_room(&new_room, &RoomChanges::default(), None).await.unwrap();
        assert!(inserted);
        assert_eq!(stored, new_room);
        assert_eq!(store.get_room(&project.id, "doc-1").await.unwrap(), Some(new_room.clone()));
        assert_eq!(store.get_room(&project.id, "doc-2").await.unwrap(), None);

        // A repeat changes only what it is given; the room keeps its id and creation time.
        let repeat = Room { title: "ignored".into(), meta: None, updated_at: at + 10, ..room(&project.id, "doc-1", at + 10) };
        let retitle = RoomChanges { title: Some("Design review".into()), ..RoomChanges::default() };
        let (stored, inserted) = store.upsert_room(&repeat, &retitle, None).await.unwrap();
        assert!(!inserted);
        let expected = Room { title: "Design review".into(), updated_at: at + 10, ..new_room.clone() };
        assert_eq!(stored, expected);
        assert_eq!(store.get_room(&project.id, "doc-1").await.unwrap(), Some(expected.clone()));

        let clear_and_archive = RoomChanges { meta: Some(None), archived: Some(true), ..RoomChanges::default() };
        let (stored, _) = store.upsert_room(&room(&project.id, "doc-1", at + 20), &clear_and_archive, None).await.unwrap();
        assert_eq!(stored, Room { meta: None, archived: true, updated_at: at + 20, ..expected.clone() });
        let new_meta = RoomChanges { meta: Some(Some(json!({"url": "https://x.example"}))), archived: Some(false), ..RoomChanges::default() };
        let (stored, _) = store.upsert_room(&room(&project.id, "doc-1", at + 30), &new_meta, None).await.unwrap();
        assert_eq!(stored.meta, Some(json!({"url": "https://x.example"})));
        assert!(!stored.archived);
        assert_eq!(store.get_room(&project.id, "doc-1").await.unwrap(), Some(stored));

        // Same artifact id in another project is another room.
        let other = project_of(&store, &project.org_id, "other").await;
        assert!(store.upsert_room(&room(&other.id, "doc-1", at), &RoomChanges::default(), None).await.unwrap().1);
    }

    async fn room_rows_hold_every_stored_room_and_the_activity_of_each_artifact_id(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms() - 100_000;
        let file = |artifact: Option<&str>, at: i64| {
            let mut report = report_at(&project.id, at);
            report.artifact_id = artifact.map(str::to_string);
            filed(report)
        };
        // Artifact "implicit": two reports, the last at base+50, no stored room.
        create(&store, file(Some("implicit"), base + 10)).await;
        create(&store, file(Some("implicit"), base + 50)).await;
        // Stored room "stored" with one report at base+30.
        store.upsert_room(&room(&project.id, "stored", base + 5), &RoomChanges::default(), None).await.unwrap();
        create(&store, file(Some("stored"), base + 30)).await;
        // Stored room without reports.
        store.upsert_room(&room(&project.id, "empty", base + 40), &RoomChanges::default(), None).await.unwrap();
        // An archived stored room is a row like any other.
        let archived = Room { archived: true, ..room(&project.id, "archived", base + 1) };
        store.upsert_room(&archived, &RoomChanges::default(), None).await.unwrap();
        create(&store, file(Some("archived"), base + 90)).await;
        // Reports without an artifact id count for no room; other projects' rows are not read.
        create(&store, file(None, base + 99)).await;
        let other = project_of(&store, &project.org_id, "other").await;
        create(&store, filed(Report { artifact_id: Some("elsewhere".into()), ..report_at(&other.id, base + 95) })).await;
        store.upsert_room(&room(&other.id, "theirs", base), &RoomChanges::default(), None).await.unwrap();

        let mut rows = store.room_rows(&project.id).await.unwrap();
        rows.stored.sort_by(|a, b| a.artifact_id.cmp(&b.artifact_id));
        rows.activity.sort_by(|a, b| a.artifact_id.cmp(&b.artifact_id));
        let stored = |artifact_id: &str| rows.stored.iter().find(|r| r.artifact_id == artifact_id).cloned();
        let artifact_ids: Vec<&str> = rows.stored.iter().map(|r| r.artifact_id.as_str()).collect();
        assert_eq!(artifact_ids, ["archived", "empty", "stored"]);
        assert_eq!(stored("stored"), store.get_room(&project.id, "stored").await.unwrap());
        assert!(stored("archived").unwrap().archived);
        let activity = |artifact_id: &str, report_count: i64, last_report_at: i64| ArtifactActivity {
            artifact_id: artifact_id.into(),
            report_count,
            last_report_at,
        };
        assert_eq!(
            rows.activity,
            vec![activity("archived", 1, base + 90), activity("implicit", 2, base + 50), activity("stored", 1, base + 30)]
        );

        assert_eq!(store.count_room_reports(&project.id, "implicit").await.unwrap(), 2);
        assert_eq!(store.count_room_reports(&project.id, "empty").await.unwrap(), 0);
        assert_eq!(store.room_rows(&new_id()).await.unwrap(), svc_store::RoomRows::default());

        // Reports loaded in bulk count like filed ones.
        let loaded = Report { artifact_id: Some("stored".into()), ..report_at(&project.id, base + 20) };
        store.insert_reports_bulk(std::slice::from_ref(&loaded)).await.unwrap();
        assert_eq!(store.count_room_reports(&project.id, "stored").await.unwrap(), 2);

        // Retention takes its reports out of the counts, oldest (by id: the order they were filed)
        // first, and the newest report of a room is read again from what is left.
        let oldest_first = |store: &DynStore| {
            let store = store.clone();
            let project_id = project.id.clone();
            async move { assert_eq!(store.delete_reports(&project_id, None, 1).await.unwrap().reports, 1) }
        };
        oldest_first(&store).await; // "implicit" at base+10
        let mut activity_now = store.room_rows(&project.id).await.unwrap().activity;
        activity_now.sort_by(|a, b| a.artifact_id.cmp(&b.artifact_id));
        assert_eq!(
            activity_now,
            vec![activity("archived", 1, base + 90), activity("implicit", 1, base + 50), activity("stored", 2, base + 30)]
        );
        oldest_first(&store).await; // "implicit" at base+50: the room has no report left
        oldest_first(&store).await; // "stored" at base+30: the bulk-loaded one (base+20) is its newest now
        let mut activity_now = store.room_rows(&project.id).await.unwrap().activity;
        activity_now.sort_by(|a, b| a.artifact_id.cmp(&b.artifact_id));
        assert_eq!(activity_now, vec![activity("archived", 1, base + 90), activity("stored", 1, base + 20)]);
        assert_eq!(store.count_room_reports(&project.id, "implicit").await.unwrap(), 0);
    }

    async fn api_keys_are_found_listed_revoked_and_touched(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let first = api_key(&project.org_id, Some(&project.id), "CI");
        let second = ApiKey { origin: KeyOrigin::Setup, scopes: vec!["*".into()], expires_at: None, ..api_key(&project.org_id, Some(&project.id), "Setup") };
        let org_wide = ApiKey { origin: KeyOrigin::Oauth, ..api_key(&project.org_id, None, "OAuth: client") };
        let elsewhere = api_key(&project.org_id, Some(&other.id), "Other");
        for key in [&first, &second, &org_wide, &elsewhere] {
            store.create_key(key).await.unwrap();
        }
        let clash = ApiKey { id: new_id(), ..first.clone() };
        assert!(matches!(store.create_key(&clash).await, Err(StoreError::Conflict(_))));

        // A key comes with its own project, read in the same statement; an org-wide key with none.
        let found = |key: &ApiKey, project: Option<&Project>| {
            Some(svc_store::FoundKey { key: key.clone(), project: project.cloned() })
        };
        assert_eq!(store.find_key_by_hash(&second.key_hash).await.unwrap(), found(&second, Some(&project)));
        assert_eq!(store.find_key_by_hash(&elsewhere.key_hash).await.unwrap(), found(&elsewhere, Some(&other)));
        assert_eq!(store.find_key_by_hash(&org_wide.key_hash).await.unwrap(), found(&org_wide, None));
        assert_eq!(store.find_key_by_hash("0".repeat(64).as_str()).await.unwrap(), None);
        assert_eq!(store.get_key(&first.id).await.unwrap(), Some(first.clone()));
        assert_eq!(store.list_keys(&project.id).await.unwrap(), vec![first.clone(), second.clone()]);

        let at = now_ms();
        assert_eq!(store.revoke_key(&other.id, &first.id, at).await.unwrap(), None, "another project's key");
        assert_eq!(store.revoke_key(&project.id, &first.id, at).await.unwrap(), Some(at));
        assert_eq!(store.revoke_key(&project.id, &first.id, at + 1).await.unwrap(), None, "already revoked");
        assert_eq!(store.revoke_key(&project.id, &new_id(), at).await.unwrap(), None);
        let revoked = store.find_key_by_hash(&first.key_hash).await.unwrap().unwrap().key;
        assert_eq!(revoked.revoked_at, Some(at));
        assert!(!revoked.is_active(at));
        assert_eq!(store.list_keys(&project.id).await.unwrap().len(), 2, "revoked keys are still listed");

        store.touch_key(&second.id, at + 5).await.unwrap();
        store.touch_key(&second.id, at + 9).await.unwrap();
        store.set_key_agent(&second.id, "Claude", Some("ann@example.com")).await.unwrap();
        let touched = store.get_key(&second.id).await.unwrap().unwrap();
        assert_eq!(touched.last_used_at, Some(at + 9));
        assert_eq!((touched.agent_name.as_deref(), touched.agent_owner.as_deref()), (Some("Claude"), Some("ann@example.com")));
        store.set_key_agent(&second.id, "Cursor", None).await.unwrap();
        let renamed = store.get_key(&second.id).await.unwrap().unwrap();
        assert_eq!((renamed.agent_name.as_deref(), renamed.agent_owner), (Some("Cursor"), None));
    }

    async fn hints_expire_and_reach_only_their_user(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let everyone = hint(&project.id, "bug", None, now + 60_000);
        let for_ann = Hint { weight: HintWeight::Max, ..hint(&project.id, "idea", Some("ann"), now + 60_000) };
        let for_bob = Hint { weight: HintWeight::Suggest, ..hint(&project.id, "question", Some("bob"), now + 60_000) };
        let expired = hint(&project.id, "bug", None, now - 1);
        let elsewhere = project_of(&store, &project.org_id, "other").await;
        let other_project = hint(&elsewhere.id, "bug", None, now + 60_000);
        for hint in [&everyone, &for_ann, &for_bob, &expired, &other_project] {
            store.create_hint(hint).await.unwrap();
        }

        assert_eq!(store.list_active_hints(&project.id, None, now).await.unwrap(), vec![everyone.clone()]);
        let mut anns = store.list_active_hints(&project.id, Some("ann"), now).await.unwrap();
        anns.sort_by(|a, b| a.channel_key.cmp(&b.channel_key));
        assert_eq!(anns, vec![everyone.clone(), for_ann.clone()]);
        let mut all = store.list_all_active_hints(&project.id, now).await.unwrap();
        all.sort_by(|a, b| a.channel_key.cmp(&b.channel_key));
        assert_eq!(all, vec![everyone.clone(), for_ann.clone(), for_bob.clone()], "every user's, this project's only");
        assert!(store.list_all_active_hints(&project.id, now + 60_000).await.unwrap().is_empty());
        assert!(store.list_active_hints(&project.id, None, now + 60_000).await.unwrap().is_empty(), "expired at expires_at");

        assert_eq!(store.delete_expired_hints(now).await.unwrap(), 1);
        assert_eq!(store.delete_expired_hints(now).await.unwrap(), 0);
        assert_eq!(store.delete_expired_hints(now + 60_001).await.unwrap(), 4);
    }

    async fn comments_are_listed_oldest_first_and_published(store: DynStore) {
        let project = project(&store).await;
        let filed_report = create(&store, filed(report(&project.id))).await;
        let at = now_ms();
        let draft = comment(&filed_report, "Proposed fix: debounce the handler", true, at + 20);
        let posted = Comment { published_at: Some(at + 10), ..comment(&filed_report, "Looking into it", false, at + 10) };
        create_comment(&store, &draft).await.unwrap();
        create_comment(&store, &posted).await.unwrap();
        assert_eq!(store.list_comments(&filed_report.id).await.unwrap(), vec![posted.clone(), draft.clone()]);

        let published = publish_comment(&store, &draft, at + 30).await.unwrap().unwrap();
        let expected = Comment { draft: false, published_at: Some(at + 30), ..draft.clone() };
        assert_eq!(published, expected);
        assert_eq!(store.list_comments(&filed_report.id).await.unwrap(), vec![posted, expected]);
        let never = Comment { id: new_id(), ..draft.clone() };
        assert_eq!(publish_comment(&store, &never, at).await.unwrap(), None);
        assert!(store.list_comments(&new_id()).await.unwrap().is_empty());
    }

    async fn only_drafts_are_edited_or_discarded(store: DynStore) {
        let project = project(&store).await;
        let filed_report = create(&store, filed(report(&project.id))).await;
        let at = now_ms();
        let draft = comment(&filed_report, "first words", true, at);
        let posted = Comment { published_at: Some(at + 1), ..comment(&filed_report, "posted", false, at + 1) };
        create_comment(&store, &draft).await.unwrap();
        create_comment(&store, &posted).await.unwrap();

        let edited = edit_draft_comment(&store, &draft, "better words").await.unwrap().unwrap();
        assert_eq!(edited, Comment { text: "better words".into(), ..draft.clone() });
        assert_eq!(edit_draft_comment(&store, &posted, "rewritten").await.unwrap(), None);
        assert!(!discard_draft_comment(&store, &posted).await.unwrap());
        assert!(discard_draft_comment(&store, &draft).await.unwrap());
        assert!(!discard_draft_comment(&store, &draft).await.unwrap());
        assert_eq!(store.list_comments(&filed_report.id).await.unwrap(), vec![posted]);
    }

    async fn viewed_marks_keep_one_row_per_viewer_with_the_last_time(store: DynStore) {
        let project = project(&store).await;
        let first = create(&store, filed(report(&project.id))).await;
        let second = create(&store, filed(report(&project.id))).await;
        let both = vec![first.id.clone(), second.id.clone()];
        let at = now_ms();
        store.mark_viewed(&both, "agent:k1", at).await.unwrap();
        store.mark_viewed(std::slice::from_ref(&first.id), "agent:k1", at + 100).await.unwrap();
        store.mark_viewed(std::slice::from_ref(&first.id), "user:ann", at + 50).await.unwrap();
        store.mark_viewed(&[], "user:ann", at + 60).await.unwrap();

        assert_eq!(
            store.list_viewers(&first.id).await.unwrap(),
            vec![("agent:k1".to_string(), at + 100), ("user:ann".to_string(), at + 50)]
        );
        assert_eq!(store.list_viewers(&second.id).await.unwrap(), vec![("agent:k1".to_string(), at)]);
        assert!(store.list_viewers(&new_id()).await.unwrap().is_empty());
    }

    async fn concurrent_viewed_marks_keep_the_latest_and_fail_alone(store: DynStore) {
        // On SQLite concurrent marks share a commit and are folded; a call naming an unknown report
        // fails as a whole and takes no other call down with it.
        let project = project(&store).await;
        let first = create(&store, filed(report(&project.id))).await;
        let second = create(&store, filed(report(&project.id))).await;
        let at = now_ms();
        let mut tasks = Vec::new();
        for index in 0..30i64 {
            let store = store.clone();
            let mut ids = vec![first.id.clone(), second.id.clone()];
            if index == 11 {
                ids.push(new_id());
            }
            let viewer = if index % 2 == 0 { "agent:k1" } else { "user:ann" };
            tasks.push(tokio::spawn(async move { (index, store.mark_viewed(&ids, viewer, at + index).await) }));
        }
        for task in tasks {
            match task.await.unwrap() {
                (11, result) => assert!(result.is_err(), "a mark for an unknown report fails"),
                (index, result) => assert!(result.is_ok(), "mark {index}: {result:?}"),
            }
        }
        let expected = vec![("user:ann".to_string(), at + 29), ("agent:k1".to_string(), at + 28)];
        assert_eq!(store.list_viewers(&first.id).await.unwrap(), expected);
        assert_eq!(store.list_viewers(&second.id).await.unwrap(), expected);
    }

    async fn flags_are_set_and_read(store: DynStore) {
        let project = project(&store).await;
        let at = now_ms();
        assert_eq!(store.get_flag(&project.id, "new-editor").await.unwrap(), None);
        let on = Flag { project_id: project.id.clone(), key: "new-editor".into(), enabled: true, updated_at: at };
        let beta = Flag { project_id: project.id.clone(), key: "beta".into(), enabled: false, updated_at: at };
        store.set_flag(&on).await.unwrap();
        store.set_flag(&beta).await.unwrap();
        assert_eq!(store.get_flag(&project.id, "new-editor").await.unwrap(), Some(on.clone()));

        let off = Flag { enabled: false, updated_at: at + 5, ..on };
        store.set_flag(&off).await.unwrap();
        assert_eq!(store.get_flag(&project.id, "new-editor").await.unwrap(), Some(off.clone()));
        assert_eq!(store.list_flags(&project.id).await.unwrap(), vec![beta, off]);
        assert!(store.list_flags(&new_id()).await.unwrap().is_empty());
    }

    async fn unbound_blobs_are_listed_and_deleted_but_bound_ones_stay(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let old = blob_at(&project.id, now - 100_000);
        let older = Blob { kind: "file".into(), mime: "text/plain".into(), name: Some("notes.txt".into()), width: None, height: None, ..blob_at(&project.id, now - 200_000) };
        let audio = Blob { kind: "audio".into(), mime: "audio/webm".into(), duration_ms: Some(4200), width: None, height: None, ..blob_at(&project.id, now - 150_000) };
        let recent = blob_at(&project.id, now);
        let bound = blob_at(&project.id, now - 300_000);
        for blob in [&old, &older, &audio, &recent, &bound] {
            store.create_blob(blob).await.unwrap();
        }
        assert!(matches!(store.create_blob(&old).await, Err(StoreError::Conflict(_))));
        assert_eq!(store.get_blob(&older.id).await.unwrap(), Some(older.clone()));
        assert_eq!(store.get_blob(&new_id()).await.unwrap(), None);
        let owner = create(&store, with_blobs(report(&project.id), &[&bound.id])).await;

        let cutoff = now - 50_000;
        assert_eq!(store.list_unbound_blobs(cutoff, 10).await.unwrap(), vec![older.clone(), audio.clone(), old.clone()]);
        assert_eq!(store.list_unbound_blobs(cutoff, 1).await.unwrap(), vec![older.clone()]);

        assert!(store.delete_unbound_blob(&older.id).await.unwrap());
        assert!(!store.delete_unbound_blob(&older.id).await.unwrap());
        assert!(!store.delete_unbound_blob(&bound.id).await.unwrap(), "a bound blob is kept");
        assert_eq!(store.get_blob(&bound.id).await.unwrap().unwrap().report_id, Some(owner.id));
        assert_eq!(store.get_blob(&older.id).await.unwrap(), None);
        assert_eq!(store.list_unbound_blobs(cutoff, 10).await.unwrap(), vec![audio, old]);
    }
}

// SQLite only: the file itself.

#[tokio::test]
async fn sqlite_data_survives_reopening_the_file() {
    let folder = tempfile::tempdir().unwrap();
    let (project, filed_report, blob) = {
        let store: DynStore = Arc::new(open_sqlite(folder.path()).await);
        let project = project(&store).await;
        let blob = stored_blob(&store, &project.id).await;
        let filed_report = create(
            &store,
            NewReport { idempotency_key: Some("k".into()), ..with_blobs(report(&project.id), &[&blob.id]) },
        )
        .await;
        set_report_status(&store, &filed_report.id, "triaged".parse().unwrap(), &author("user", "u"), now_ms())
            .await
            .unwrap();
        (project, filed_report, blob)
    };

    let store: DynStore = Arc::new(open_sqlite(folder.path()).await);
    assert_eq!(store.get_project(&project.id).await.unwrap(), Some(project.clone()));
    assert_eq!(store.list_channels(&project.id, false).await.unwrap().len(), 3);
    let reread = store.get_report(&filed_report.id).await.unwrap().unwrap();
    assert_eq!(reread.status, "triaged");
    assert_eq!(store.status_history(&filed_report.id).await.unwrap().len(), 1);
    assert_eq!(store.get_blob(&blob.id).await.unwrap().unwrap().report_id, Some(filed_report.id.clone()));
    let repeat = store.create_report(with_key(report(&project.id), "k")).await.unwrap();
    assert_eq!(repeat, CreatedReport::Repeat(filed_report.id));
}

#[tokio::test]
async fn sqlite_connect_accepts_url_forms_and_creates_missing_folders() {
    let folder = tempfile::tempdir().unwrap();
    let nested = folder.path().join("a/b/svc.db");
    for url in [format!("sqlite://{}", nested.display()), format!("sqlite:{}", nested.display())] {
        let store = SqliteStore::connect(&url).await.unwrap();
        svc_store::Store::ping(&store).await.unwrap();
    }
    assert!(nested.exists());
    let store = svc_store::connect(&format!("sqlite:{}", folder.path().join("other.db").display())).await.unwrap();
    assert_eq!(store.backend(), "sqlite");
}

// Accounts

fn person(email: &str) -> svc_core::account::User {
    svc_core::account::User { id: new_id(), email: email.into(), name: "Ada".into(), created_at: now_ms() }
}

conformance! {
    async fn users_are_unique_by_email_and_keep_their_password_hash(store: DynStore) {
        let ada = person("ada@example.com");
        store.create_user(&ada, "hash-1", None, None).await.unwrap();
        assert!(matches!(store.create_user(&person("ada@example.com"), "x", None, None).await, Err(StoreError::Conflict(_))));
        let (found, hash) = store.find_user_by_email("ada@example.com").await.unwrap().unwrap();
        assert_eq!((found, hash.as_str()), (ada.clone(), "hash-1"));
        store.set_password_hash(&ada.id, "hash-2", now_ms()).await.unwrap();
        assert_eq!(store.find_user_by_email("ada@example.com").await.unwrap().unwrap().1, "hash-2");
        assert!(matches!(store.set_password_hash("nobody", "h", 1).await, Err(StoreError::NotFound)));
        assert_eq!(store.count_users().await.unwrap(), 1);
        assert_eq!(store.get_user(&ada.id).await.unwrap(), Some(ada));
    }

    async fn memberships_change_role_in_place(store: DynStore) {
        use svc_core::account::{Membership, Role};
        let org = organization(&store, "Acme").await;
        let ada = person("ada@example.com");
        store.create_user(&ada, "h", None, None).await.unwrap();
        let member = Membership { org_id: org.id.clone(), user_id: ada.id.clone(), role: Role::Member, created_at: 1 };
        store.put_membership(&member).await.unwrap();
        store.put_membership(&Membership { role: Role::Owner, ..member.clone() }).await.unwrap();
        let memberships = store.list_memberships(&ada.id).await.unwrap();
        assert_eq!(memberships.len(), 1);
        assert_eq!(memberships[0].role, Role::Owner);
        let members = store.list_members(&org.id).await.unwrap();
        assert_eq!(members.len(), 1);
        assert_eq!(members[0].0.email, "ada@example.com");
    }

    async fn sessions_expire_and_end_together(store: DynStore) {
        use svc_core::account::Session;
        let ada = person("ada@example.com");
        store.create_user(&ada, "h", None, None).await.unwrap();
        for (hash, expires_at) in [("a", 1_000), ("b", 5_000)] {
            let session = Session { id_hash: hash.into(), user_id: ada.id.clone(), created_at: 0, last_seen_at: 0, expires_at };
            store.create_session(&session).await.unwrap();
        }
        assert!(store.get_session("a", 2_000).await.unwrap().is_none(), "an expired session is not found");
        store.touch_session("b", 4_000, 9_000).await.unwrap();
        assert_eq!(store.get_session("b", 6_000).await.unwrap().unwrap().expires_at, 9_000);
        assert_eq!(store.delete_expired_accounts_rows(2_000).await.unwrap(), 1);
        assert_eq!(store.delete_user_sessions(&ada.id).await.unwrap(), 1);
        assert!(store.get_session("b", 6_000).await.unwrap().is_none());
    }

    async fn a_one_time_link_is_taken_once(store: DynStore) {
        use svc_core::account::{LinkPurpose, OneTimeLink};
        let org = organization(&store, "Acme").await;
        let link = OneTimeLink {
            token_hash: "t".into(),
            purpose: LinkPurpose::FirstOwner,
            org_id: Some(org.id.clone()),
            user_id: None,
            created_at: 0,
            expires_at: 10_000,
            role: None,
        };
        store.create_link(&link).await.unwrap();
        assert!(store.peek_link("t", 20_000).await.unwrap().is_none(), "expired");
        assert_eq!(store.peek_link("t", 5_000).await.unwrap(), Some(link.clone()));
        let (first, second) = tokio::join!(store.take_link("t", 5_000), store.take_link("t", 5_000));
        let winners = [first.unwrap(), second.unwrap()].into_iter().flatten().count();
        assert_eq!(winners, 1, "two redemptions racing: exactly one wins");
        assert!(store.peek_link("t", 5_000).await.unwrap().is_none(), "used");
    }
}

// Triage (assignees, labels) and search.

fn labels(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| t.to_string()).collect()
}

fn add(texts: &[&str]) -> svc_core::triage::LabelChange {
    svc_core::triage::LabelChange::Add(texts.iter().map(|t| svc_core::triage::Label::parse(t).unwrap()).collect())
}

fn remove(texts: &[&str]) -> svc_core::triage::LabelChange {
    svc_core::triage::LabelChange::Remove(texts.iter().map(|t| svc_core::triage::Label::parse(t).unwrap()).collect())
}

fn replace(texts: &[&str]) -> svc_core::triage::LabelChange {
    svc_core::triage::LabelChange::Replace(svc_core::triage::LabelSet::parse(&labels(texts)).unwrap())
}

fn label_counts(pairs: &[(&str, i64)]) -> Vec<LabelCount> {
    pairs.iter().map(|(label, count)| LabelCount { label: label.to_string(), count: *count }).collect()
}

/// A report whose only text block says `text`, filed by `author_id`.
fn saying(project_id: &str, at: i64, text: &str, author_id: &str) -> Report {
    Report {
        title: text.chars().take(80).collect(),
        blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": text}])).unwrap(),
        author: Author { kind: svc_core::model::AuthorKind::Reporter, id: Some(author_id.into()), label: None },
        identity: None,
        ..report_at(project_id, at)
    }
}

async fn listed(store: &DynStore, filter: ReportFilter) -> Vec<String> {
    ids(&store.list_reports(&filter).await.unwrap())
}

fn searching(project_ids: &[&String], text: &str, limit: u32) -> ReportFilter {
    ReportFilter {
        project_ids: project_ids.iter().map(|id| id.to_string()).collect(),
        search: Some(text.into()),
        limit,
        ..ReportFilter::default()
    }
}

conformance! {
    async fn reports_are_assigned_and_unassigned_together(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let base = now_ms();
        let made: Vec<Report> = (0..3).map(|i| report_at(&project.id, base + i)).collect();
        for report in &made {
            create(&store, filed(report.clone())).await;
        }
        let foreign = create(&store, filed(report_at(&other.id, base + 5))).await;
        let mine = vec![project.id.clone()];
        let (first, second, third) = (made[0].id.clone(), made[1].id.clone(), made[2].id.clone());

        set_assignee(&store, &mine, &[first.clone(), second.clone()], Some("user-a"), base + 100).await.unwrap();
        let stored = store.get_report(&first).await.unwrap().unwrap();
        assert_eq!((stored.assignee.as_deref(), stored.updated_at), (Some("user-a"), base + 100));
        let assigned = |assignee: AssigneeFilter| ReportFilter { assignee: Some(assignee), ..filter(&project.id, 50) };
        assert_eq!(listed(&store, assigned(AssigneeFilter::User("user-a".into()))).await, vec![second.clone(), first.clone()]);
        assert_eq!(listed(&store, assigned(AssigneeFilter::Unassigned)).await, vec![third.clone()]);
        assert!(listed(&store, assigned(AssigneeFilter::User("nobody".into()))).await.is_empty());

        // A report out of the given projects (or unknown) changes nothing at all.
        for stranger in [foreign.id.clone(), new_id()] {
            let error = set_assignee(&store, &mine, &[third.clone(), stranger], Some("user-b"), base + 200).await.unwrap_err();
            assert!(matches!(error, StoreError::NotFound), "{error:?}");
        }
        assert_eq!(store.get_report(&third).await.unwrap().unwrap().assignee, None);

        // Assigning again to the same user is no change: updatedAt stays.
        set_assignee(&store, &mine, std::slice::from_ref(&first), Some("user-a"), base + 300).await.unwrap();
        assert_eq!(store.get_report(&first).await.unwrap().unwrap().updated_at, base + 100);
        set_assignee(&store, &mine, std::slice::from_ref(&first), None, base + 400).await.unwrap();
        let stored = store.get_report(&first).await.unwrap().unwrap();
        assert_eq!((stored.assignee, stored.updated_at), (None, base + 400));

        // Several projects at once, and in a multi-project listing.
        let both = vec![project.id.clone(), other.id.clone()];
        set_assignee(&store, &both, &[third.clone(), foreign.id.clone()], Some("user-c"), base + 500).await.unwrap();
        let everywhere = ReportFilter {
            project_ids: both.clone(),
            assignee: Some(AssigneeFilter::User("user-c".into())),
            limit: 50,
            ..ReportFilter::default()
        };
        assert_eq!(listed(&store, everywhere).await, vec![foreign.id.clone(), third.clone()]);
        let text = store.list_reports_text(&assigned(AssigneeFilter::User("user-a".into()))).await.unwrap();
        assert_eq!(text.iter().map(|r| r.assignee.clone()).collect::<Vec<_>>(), vec![Some("user-a".to_string())]);
    }

    async fn labels_are_added_removed_and_replaced_with_one_spelling_per_project(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let base = now_ms();
        let first = create(&store, filed(report_at(&project.id, base))).await.id;
        let second = create(&store, filed(report_at(&project.id, base + 1))).await.id;
        let third = create(&store, filed(report_at(&project.id, base + 2))).await.id;
        let foreign = create(&store, filed(report_at(&other.id, base + 3))).await.id;
        let mine = vec![project.id.clone()];

        let changed = change_labels(&store, &mine, std::slice::from_ref(&first), &add(&["Bug"]), base + 10).await.unwrap();
        assert_eq!(changed, vec![(first.clone(), labels(&["Bug"]))]);
        // The project spells it `Bug` now: `bug` added elsewhere takes that spelling.
        let changed =
            change_labels(&store, &mine, &[first.clone(), second.clone()], &add(&["bug", "needs design"]), base + 20).await.unwrap();
        assert_eq!(
            changed,
            vec![(first.clone(), labels(&["Bug", "needs design"])), (second.clone(), labels(&["Bug", "needs design"]))]
        );
        let stored = store.get_report(&second).await.unwrap().unwrap();
        assert_eq!((stored.labels.clone(), stored.updated_at), (labels(&["Bug", "needs design"]), base + 20));
        assert_eq!(store.list_labels(&project.id).await.unwrap(), label_counts(&[("Bug", 2), ("needs design", 2)]));

        change_labels(&store, &mine, std::slice::from_ref(&first), &remove(&["BUG", "never there"]), base + 30).await.unwrap();
        let changed = change_labels(&store, &mine, std::slice::from_ref(&second), &replace(&["NEEDS DESIGN", "Later"]), base + 40).await.unwrap();
        assert_eq!(changed, vec![(second.clone(), labels(&["needs design", "Later"]))]);
        assert_eq!(store.get_report(&first).await.unwrap().unwrap().labels, labels(&["needs design"]));
        assert_eq!(
            store.list_labels(&project.id).await.unwrap(),
            label_counts(&[("Later", 1), ("needs design", 2)])
        );

        // The filter compares labels case-insensitively; listings carry the labels.
        let labelled = |label: &str| ReportFilter { label: Some(label.into()), ..filter(&project.id, 50) };
        assert_eq!(listed(&store, labelled("NEEDS design")).await, vec![second.clone(), first.clone()]);
        assert_eq!(listed(&store, labelled("later")).await, vec![second.clone()]);
        assert!(listed(&store, labelled("bug")).await.is_empty());
        let text = store.list_reports_text(&labelled("later")).await.unwrap();
        assert_eq!(text[0].labels, labels(&["needs design", "Later"]));
        let combined = ReportFilter { status: Some("new".parse().unwrap()), channel_key: Some("bug".into()), ..labelled("needs design") };
        assert_eq!(listed(&store, combined).await, vec![second.clone(), first.clone()]);

        // No change, no new updatedAt.
        change_labels(&store, &mine, std::slice::from_ref(&second), &add(&["later"]), base + 50).await.unwrap();
        assert_eq!(store.get_report(&second).await.unwrap().unwrap().updated_at, base + 40);

        // Twenty at most: the whole change is refused.
        let many: Vec<String> = (0..19).map(|n| format!("l{n}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let error = change_labels(&store, &mine, &[third.clone(), second.clone()], &add(&many), base + 60).await.unwrap_err();
        assert!(matches!(&error, StoreError::TooManyLabels(id) if *id == second), "{error:?}");
        assert!(store.get_report(&third).await.unwrap().unwrap().labels.is_empty());
        change_labels(&store, &mine, std::slice::from_ref(&third), &add(&many), base + 60).await.unwrap();
        change_labels(&store, &mine, std::slice::from_ref(&third), &add(&["one more"]), base + 61).await.unwrap();
        assert_eq!(store.get_report(&third).await.unwrap().unwrap().labels.len(), 20);

        // Another project's report is out of reach; its labels are its project's own.
        let error = change_labels(&store, &mine, &[first.clone(), foreign.clone()], &add(&["x"]), base).await.unwrap_err();
        assert!(matches!(error, StoreError::NotFound), "{error:?}");
        assert_eq!(store.get_report(&first).await.unwrap().unwrap().labels, labels(&["needs design"]));
        change_labels(&store, std::slice::from_ref(&other.id), std::slice::from_ref(&foreign), &add(&["BUG"]), base).await.unwrap();
        assert_eq!(store.list_labels(&other.id).await.unwrap(), label_counts(&[("BUG", 1)]));
        let both = ReportFilter {
            project_ids: vec![project.id.clone(), other.id.clone()],
            label: Some("later".into()),
            limit: 50,
            ..ReportFilter::default()
        };
        assert_eq!(listed(&store, both).await, vec![second.clone()]);
        change_labels(&store, &mine, &[first.clone(), second.clone(), third.clone()], &replace(&[]), base + 70).await.unwrap();
        assert!(store.list_labels(&project.id).await.unwrap().is_empty());
        assert!(store.get_report(&second).await.unwrap().unwrap().labels.is_empty());
    }

    async fn the_reporter_filter_finds_exactly_that_authors_reports(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let base = now_ms();
        let mut made = Vec::new();
        // `u-1` and `u 1` are the same words to a tokenizer, but different authors.
        for (index, author_id) in ["u-1", "u 1", "u-2", "u-1", "ann@example.com"].iter().enumerate() {
            made.push(create(&store, filed(saying(&project.id, base + index as i64, "hello", author_id))).await);
        }
        let theirs = create(&store, filed(saying(&other.id, base + 9, "hello", "u-1"))).await;
        set_report_status(&store, &made[3].id, "fixed".parse().unwrap(), &author("user", "u"), base + 20).await.unwrap();
        store.run_maintenance_once().await.unwrap();

        let by = |reporter: &str| ReportFilter { reporter: Some(reporter.into()), ..filter(&project.id, 50) };
        assert_eq!(listed(&store, by("u-1")).await, vec![made[3].id.clone(), made[0].id.clone()]);
        assert_eq!(listed(&store, by("u 1")).await, vec![made[1].id.clone()]);
        assert_eq!(listed(&store, by("ann@example.com")).await, vec![made[4].id.clone()]);
        assert!(listed(&store, by("u")).await.is_empty());
        assert!(listed(&store, by("--")).await.is_empty());
        let fixed = ReportFilter { status: Some("fixed".parse().unwrap()), ..by("u-1") };
        assert_eq!(listed(&store, fixed).await, vec![made[3].id.clone()]);
        let both = ReportFilter { project_ids: vec![project.id.clone(), other.id.clone()], ..by("u-1") };
        assert_eq!(listed(&store, both.clone()).await, vec![theirs.id.clone(), made[3].id.clone(), made[0].id.clone()]);
        let page = ReportFilter { before: Some(theirs.id.clone()), limit: 1, ..both };
        assert_eq!(listed(&store, page).await, vec![made[3].id.clone()]);
    }

    async fn a_word_in_a_comment_finds_its_report_until_the_comment_goes(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms();
        let checkout = create(&store, filed(saying(&project.id, base, "The checkout total is wrong", "u-1"))).await;
        let profile = create(&store, filed(saying(&project.id, base + 1, "Profile photo upload fails", "u-2"))).await;
        let draft = comment(&profile, "Traced to the zebra resize worker", true, base + 10);
        create_comment(&store, &draft).await.unwrap();
        store.run_maintenance_once().await.unwrap();
        let mine = [&project.id];
        assert_eq!(listed(&store, searching(&mine, "zebra", 10)).await, vec![profile.id.clone()]);
        assert_eq!(listed(&store, searching(&mine, "CHECKOUT", 10)).await, vec![checkout.id.clone()]);

        // Edited: found by its new words only.
        edit_draft_comment(&store, &draft, "Traced to the giraffe resize worker").await.unwrap();
        store.run_maintenance_once().await.unwrap();
        assert!(listed(&store, searching(&mine, "zebra", 10)).await.is_empty());
        assert_eq!(listed(&store, searching(&mine, "giraffe", 10)).await, vec![profile.id.clone()]);
        // Published: still found (drafts were found already).
        publish_comment(&store, &draft, base + 20).await.unwrap();
        store.run_maintenance_once().await.unwrap();
        assert_eq!(listed(&store, searching(&mine, "giraffe worker", 10)).await, vec![profile.id.clone()]);
        // A comment on a report not yet indexed is found with it.
        let late = create(&store, filed(saying(&project.id, base + 2, "Late report", "u-3"))).await;
        create_comment(&store, &comment(&late, "okapi", false, base + 30)).await.unwrap();
        let discarded = comment(&checkout, "hippo", true, base + 31);
        create_comment(&store, &discarded).await.unwrap();
        store.run_maintenance_once().await.unwrap();
        assert_eq!(listed(&store, searching(&mine, "okapi", 10)).await, vec![late.id.clone()]);
        assert_eq!(listed(&store, searching(&mine, "hippo", 10)).await, vec![checkout.id.clone()]);
        // Discarded: gone.
        assert!(discard_draft_comment(&store, &discarded).await.unwrap());
        store.run_maintenance_once().await.unwrap();
        assert!(listed(&store, searching(&mine, "hippo", 10)).await.is_empty());
    }

    async fn a_search_reads_title_blocks_url_reporter_and_phrases(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms();
        let mut quoted = saying(&project.id, base, "Prices look off", "u-1");
        quoted.blocks = serde_json::from_value(serde_json::json!([
            {"type": "quote", "text": "Pay now", "comment": "label is misleading", "selector": "#pay", "target": {"css": "#pay"}},
            {"type": "audio", "blobId": new_id(), "transcript": "the spinner never stops"}
        ])).unwrap();
        quoted.identity = Some(serde_json::from_value(serde_json::json!({"userId": "u-1", "email": "ann@example.com", "name": "Ann Smith", "verified": true})).unwrap());
        quoted.url = Some("https://shop.example.com/basket/summary".into());
        let quoted = create(&store, filed(quoted)).await;
        let plain = create(&store, filed(saying(&project.id, base + 1, "The spinner stops and never loads", "u-2"))).await;
        store.run_maintenance_once().await.unwrap();
        let mine = [&project.id];
        let find = |text: &str| listed(&store, searching(&mine, text, 10));
        assert_eq!(find("misleading").await, vec![quoted.id.clone()]);
        assert_eq!(find("basket").await, vec![quoted.id.clone()]);
        assert_eq!(find("ann@example.com").await, vec![quoted.id.clone()]);
        assert_eq!(find("smith").await, vec![quoted.id.clone()]);
        assert_eq!(find("spinner stops").await, vec![plain.id.clone(), quoted.id.clone()]);
        assert_eq!(find("\"spinner never stops\"").await, vec![quoted.id.clone()]);
        assert_eq!(find("spinner -basket").await, vec![plain.id.clone()]);
        assert_eq!(find("-spinner").await, Vec::<String>::new());
        assert_eq!(find("misleading or loads").await, vec![plain.id.clone(), quoted.id.clone()]);
        assert!(find("pay -pay").await.is_empty());
        // A blank search is no search.
        assert_eq!(find("   ").await, vec![plain.id.clone(), quoted.id.clone()]);
    }

    async fn a_search_never_fails_on_what_users_type(store: DynStore) {
        let project = project(&store).await;
        create(&store, filed(saying(&project.id, now_ms(), "AND OR NOT near the \"quoted\" word", "u-1"))).await;
        store.run_maintenance_once().await.unwrap();
        let mine = [&project.id];
        for text in [
            "\"", "\"\"", "'", "''", "\\", "AND", "OR", "NOT", "a AND", "NEAR(a b)", "NEAR", "a*", "*", "^a",
            "body:x", "project : x", "{body}: x", "(", ")", "((a)", "a OR OR b", "-", "--a", "- -", "-\"", "!!!",
            "%_", "a'b\"c", ":", "+", "NOT a", "\u{0}", "日本語", "a\u{301}",
        ] {
            let result = store.list_reports(&searching(&mine, text, 10)).await;
            assert!(result.is_ok(), "search {text:?}: {result:?}");
        }
        assert_eq!(listed(&store, searching(&mine, "NOT", 10)).await.len(), 1);
        assert_eq!(listed(&store, searching(&mine, "\"quoted\" near", 10)).await.len(), 1);
        assert!(listed(&store, searching(&mine, "!!!", 10)).await.is_empty());
    }

    async fn search_pages_see_each_match_once_newest_first(store: DynStore) {
        let project = project(&store).await;
        let other = project_of(&store, &project.org_id, "other").await;
        let base = now_ms() - 1_000_000;
        // Loaded in bulk: in the index as soon as they are stored.
        let loaded: Vec<Report> = (0..180)
            .map(|i| {
                let project_id = if i % 3 == 0 { &other.id } else { &project.id };
                let text = if i % 2 == 0 { format!("alpha report {i}") } else { format!("beta report {i}") };
                Report { status: if i % 5 == 0 { "fixed".parse().unwrap() } else { "new".parse().unwrap() }, ..saying(project_id, base + i / 2, &text, "u-1") }
            })
            .collect();
        store.insert_reports_bulk(&loaded).await.unwrap();
        let both = [&project.id, &other.id];
        assert_eq!(listed(&store, searching(&both, "alpha", 200)).await.len(), 90);
        // Then filed one by one, indexed by the next round.
        let mut all = loaded.clone();
        for i in 180..200 {
            all.push(create(&store, filed(saying(&project.id, base + i, &format!("alpha late {i}"), "u-2"))).await);
        }
        store.run_maintenance_once().await.unwrap();

        let page_through = |filter: ReportFilter| {
            let store = store.clone();
            async move {
                let mut seen = Vec::new();
                let mut before = None;
                loop {
                    let page = store.list_reports(&ReportFilter { before: before.clone(), ..filter.clone() }).await.unwrap();
                    assert!(page.len() <= filter.limit as usize);
                    let Some(last) = page.last() else { break };
                    before = Some(last.id.clone());
                    seen.extend(ids(&page));
                }
                seen
            }
        };
        let expect = |keep: &dyn Fn(&Report) -> bool| -> Vec<String> {
            all.iter().rev().filter(|r| keep(r)).map(|r| r.id.clone()).collect()
        };
        let alpha = |r: &Report| r.title.starts_with("alpha");
        assert_eq!(page_through(searching(&both, "alpha", 7)).await, expect(&alpha));
        assert_eq!(page_through(searching(&[&project.id], "alpha", 7)).await, expect(&|r| alpha(r) && r.project_id == project.id));
        let fixed = ReportFilter { status: Some("fixed".parse().unwrap()), ..searching(&both, "report", 4) };
        assert_eq!(page_through(fixed).await, expect(&|r| r.title.contains("report") && r.status == "fixed"));
        let by_reporter = ReportFilter { reporter: Some("u-2".into()), ..searching(&both, "alpha", 6) };
        assert_eq!(page_through(by_reporter).await, expect(&|r| alpha(r) && r.author.id.as_deref() == Some("u-2")));
        let ids_only: Vec<String> = all.iter().map(|r| r.id.clone()).collect();
        assert_eq!(ids_only.iter().collect::<HashSet<_>>().len(), 200);
    }

    async fn a_search_combines_with_every_other_filter(store: DynStore) {
        let project = project(&store).await;
        let base = now_ms();
        let mut made = Vec::new();
        for i in 0..8i64 {
            let mut report = saying(&project.id, base + i, &format!("widget broken {i}"), if i % 2 == 0 { "u-1" } else { "u-2" });
            report.channel_key = if i < 4 { "bug".into() } else { "idea".into() };
            report.artifact_id = (i % 4 == 0).then(|| "doc-1".to_string());
            made.push(create(&store, filed(report)).await.id);
        }
        let mine = vec![project.id.clone()];
        set_assignee(&store, &mine, &[made[1].clone(), made[6].clone()], Some("user-a"), base + 50).await.unwrap();
        change_labels(&store, &mine, &[made[2].clone(), made[6].clone()], &add(&["ux"]), base + 50).await.unwrap();
        set_report_status(&store, &made[5], "triaged".parse().unwrap(), &author("user", "u"), base + 60).await.unwrap();
        store.run_maintenance_once().await.unwrap();
        let search = searching(&[&project.id], "widget", 50);
        let pick = |indexes: &[usize]| -> Vec<String> { indexes.iter().rev().map(|i| made[*i].clone()).collect() };
        assert_eq!(listed(&store, ReportFilter { channel_key: Some("idea".into()), ..search.clone() }).await, pick(&[4, 5, 6, 7]));
        assert_eq!(listed(&store, ReportFilter { status: Some("triaged".parse().unwrap()), ..search.clone() }).await, pick(&[5]));
        assert_eq!(listed(&store, ReportFilter { artifact_id: Some("doc-1".into()), ..search.clone() }).await, pick(&[0, 4]));
        assert_eq!(
            listed(&store, ReportFilter { assignee: Some(AssigneeFilter::User("user-a".into())), ..search.clone() }).await,
            pick(&[1, 6])
        );
        assert_eq!(
            listed(&store, ReportFilter { assignee: Some(AssigneeFilter::Unassigned), ..search.clone() }).await,
            pick(&[0, 2, 3, 4, 5, 7])
        );
        assert_eq!(listed(&store, ReportFilter { label: Some("UX".into()), ..search.clone() }).await, pick(&[2, 6]));
        assert_eq!(listed(&store, ReportFilter { reporter: Some("u-2".into()), ..search.clone() }).await, pick(&[1, 3, 5, 7]));
        assert_eq!(
            listed(&store, ReportFilter { reporter: Some("u-1".into()), label: Some("ux".into()), channel_key: Some("idea".into()), ..search.clone() }).await,
            pick(&[6])
        );
        let text = store.list_reports_text(&ReportFilter { label: Some("ux".into()), ..search.clone() }).await.unwrap();
        assert_eq!(text.iter().map(|r| r.labels.clone()).collect::<Vec<_>>(), vec![labels(&["ux"]), labels(&["ux"])]);
        assert!(listed(&store, searching(&[&project.id], "widget -broken", 50)).await.is_empty());
    }
}

conformance! {
    async fn organizations_are_listed_oldest_first(store: DynStore) {
        let first = organization(&store, "First").await;
        let second = organization(&store, "Second").await;
        let listed = store.list_organizations().await.unwrap();
        assert_eq!(listed, vec![first, second]);
    }
}

fn audit_event(org_id: &str, project_id: Option<&str>, at: i64, action: &str) -> svc_core::audit::AuditEvent {
    svc_core::audit::AuditEvent {
        id: new_id_at(at),
        org_id: org_id.to_string(),
        project_id: project_id.map(str::to_string),
        at,
        actor: author("user", "user:1"),
        action: action.to_string(),
        detail: json!({"name": "CI", "scopes": "feedback:read"}),
    }
}

conformance! {
    async fn audit_events_list_newest_first_per_project_and_page(store: DynStore) {
        let first = project(&store).await;
        let other = project_of(&store, &first.org_id, "other").await;
        for (at, action) in [(1_000, "key.minted"), (2_000, "settings.changed"), (3_000, "key.revoked")] {
            store.record_audit(&audit_event(&first.org_id, Some(&first.id), at, action)).await.unwrap();
        }
        store.record_audit(&audit_event(&first.org_id, Some(&other.id), 2_500, "flag.set")).await.unwrap();
        store.record_audit(&audit_event(&first.org_id, None, 2_600, "member.added")).await.unwrap();

        let listed = store.list_audit(&first.id, None, 10).await.unwrap();
        let actions: Vec<_> = listed.iter().map(|e| e.action.as_str()).collect();
        assert_eq!(actions, ["key.revoked", "settings.changed", "key.minted"], "only this project's, newest first");
        assert_eq!(listed[0].actor, author("user", "user:1"));
        assert_eq!(listed[0].detail, json!({"name": "CI", "scopes": "feedback:read"}));

        let page = store.list_audit(&first.id, Some(&listed[0].id), 1).await.unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].action, "settings.changed", "`before` pages to older events");

        let org = store.list_org_audit(&first.org_id, None, 10).await.unwrap();
        assert_eq!(org.iter().map(|e| e.action.as_str()).collect::<Vec<_>>(), ["member.added"], "only the organization's own");
    }
}

conformance! {
    async fn a_widget_sighting_is_one_row_per_project_and_never_goes_back_in_time(store: DynStore) {
        use svc_store::WidgetSighting;
        let web = project(&store).await;
        let org = web.org_id.clone();
        let other = project_of(&store, &org, "other").await;
        assert_eq!(store.get_sighting(&web.id).await.unwrap(), None, "a new project has not been seen");
        let seen = |project: &Project, url: Option<&str>, source: &str, at: i64| WidgetSighting {
            project_id: project.id.clone(),
            url: url.map(String::from),
            source: source.into(),
            seen_at: at,
        };
        let first = seen(&web, Some("https://app.example.com/"), "loader", 1_000);
        store.record_sighting(&first).await.unwrap();
        assert_eq!(store.get_sighting(&web.id).await.unwrap(), Some(first));
        let later = seen(&web, Some("https://app.example.com/checkout?step=2"), "report", 2_000);
        store.record_sighting(&later).await.unwrap();
        assert_eq!(store.get_sighting(&web.id).await.unwrap(), Some(later.clone()), "a later sighting replaces it");
        // An instance that writes late with an older sighting does not move the time back.
        store.record_sighting(&seen(&web, Some("https://app.example.com/old"), "config", 1_500)).await.unwrap();
        assert_eq!(store.get_sighting(&web.id).await.unwrap(), Some(later.clone()));
        // A page that was not known (no Referer) is stored as such; projects do not share rows.
        let unknown = seen(&other, None, "config", 3_000);
        store.record_sighting(&unknown).await.unwrap();
        assert_eq!(store.get_sighting(&other.id).await.unwrap(), Some(unknown));
        assert_eq!(store.get_sighting(&web.id).await.unwrap(), Some(later));
    }
}

// Deleting projects and expired reports (shared/deletion.rs).

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A blob of the project bound to a new report saying `text` at `at`; returns (report, blob id).
async fn report_with_blob(store: &DynStore, project_id: &str, at: i64, text: &str) -> (Report, String) {
    let blob = blob_at(project_id, at);
    store.create_blob(&blob).await.unwrap();
    let report = create(store, with_blobs(saying_long_ago(project_id, at, text), &[&blob.id])).await;
    (report, blob.id)
}

fn project_audit_event(project: &Project, action: &str) -> svc_core::audit::AuditEvent {
    svc_core::audit::AuditEvent {
        id: new_id(),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        at: now_ms(),
        actor: author("user", "user:ann"),
        action: action.into(),
        detail: json!({"fields": ["urlPatterns"]}),
    }
}

/// A report id carrying `ms` as its creation time, as one filed then has (`new_id_at` never goes
/// back before ids this process made already).
fn id_of_time(ms: i64) -> String {
    format!("{ms:012x}{}", &new_id()[12..])
}

/// [`saying`] with an id of its time, for reports filed long ago.
fn saying_long_ago(project_id: &str, at: i64, text: &str) -> Report {
    Report { id: id_of_time(at), ..saying(project_id, at, text, "u-1") }
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

conformance! {
    async fn deleting_a_project_removes_all_of_it_and_keeps_the_others(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let kept = project_of(&store, &org.id, "kept").await;
        let doomed = project_of(&store, &org.id, "doomed").await;
        let now = now_ms();

        // The kept project's report is older than the deleted one's: the deleted reports are the
        // newest stored (on SQLite, the largest rowids, which new reports then take again).
        let (kept_report, kept_blob) = report_with_blob(&store, &kept.id, now - 10, "kept marmalade").await;
        create_comment(&store, &comment(&kept_report, "kept comment", false, now - 9)).await.unwrap();

        let (first, first_blob) = report_with_blob(&store, &doomed.id, now - 5, "doomed pineapple").await;
        let second = create(&store, with_key(saying(&doomed.id, now - 4, "doomed pineapple twice", "u-2"), "idem-1")).await;
        let unbound = stored_blob(&store, &doomed.id).await;
        create_comment(&store, &comment(&first, "doomed comment", true, now - 3)).await.unwrap();
        set_report_status(&store, &first.id, "triaged".parse().unwrap(), &author("user", "user:ann"), now - 2).await.unwrap();
        change_labels(&store, std::slice::from_ref(&doomed.id), &[first.id.clone(), second.id.clone()], &add(&["UX", "Later"]), now - 1).await.unwrap();
        store.mark_viewed(&[first.id.clone(), second.id.clone()], "user:ann", now).await.unwrap();
        store.upsert_room(&room(&doomed.id, "doc-1", now), &RoomChanges::default(), None).await.unwrap();
        store.create_hint(&hint(&doomed.id, "bug", None, now + HINT_TTL_MS)).await.unwrap();
        store.set_flag(&Flag { project_id: doomed.id.clone(), key: "beta".into(), enabled: true, updated_at: now }).await.unwrap();
        let key = api_key(&org.id, Some(&doomed.id), "CI");
        store.create_key(&key).await.unwrap();
        store.record_audit(&project_audit_event(&doomed, "settings.changed")).await.unwrap();
        store.record_audit(&project_audit_event(&kept, "settings.changed")).await.unwrap();
        store.run_maintenance_once().await.unwrap();
        // Both indexed before the deletion: the index rows must go with the reports.
        assert_eq!(listed(&store, searching(&[&doomed.id], "pineapple", 10)).await.len(), 2);

        let deleted = store.delete_project(&doomed.id).await.unwrap();
        assert_eq!(deleted.reports, 2);
        assert_eq!(sorted(deleted.blob_ids.clone()), sorted(vec![first_blob.clone(), unbound.id.clone()]));
        assert_eq!(sorted(store.pending_blob_deletions(100).await.unwrap()), sorted(deleted.blob_ids.clone()));

        assert_eq!(store.get_project(&doomed.id).await.unwrap(), None);
        assert_eq!(store.get_project_by_key(&doomed.project_key).await.unwrap(), None);
        assert_eq!(store.list_projects(&org.id).await.unwrap().iter().map(|p| p.id.clone()).collect::<Vec<_>>(), vec![kept.id.clone()]);
        for report in [&first, &second] {
            assert_eq!(store.get_report(&report.id).await.unwrap(), None);
            assert!(store.status_history(&report.id).await.unwrap().is_empty());
            assert!(store.list_comments(&report.id).await.unwrap().is_empty());
            assert!(store.list_viewers(&report.id).await.unwrap().is_empty());
            let both = [kept.id.clone(), doomed.id.clone()];
            assert!(store.find_reports_by_short_id(&both, short_id(&report.id), 10).await.unwrap().is_empty());
        }
        assert!(listed(&store, searching(&[&doomed.id, &kept.id], "pineapple", 10)).await.is_empty());
        assert_eq!(store.get_blob(&first_blob).await.unwrap(), None);
        assert_eq!(store.get_blob(&unbound.id).await.unwrap(), None);
        assert!(store.list_channels(&doomed.id, true).await.unwrap().is_empty());
        assert!(store.list_labels(&doomed.id).await.unwrap().is_empty());
        assert_eq!(store.room_rows(&doomed.id).await.unwrap(), svc_store::RoomRows::default());
        assert!(store.list_active_hints(&doomed.id, None, now).await.unwrap().is_empty());
        assert!(store.list_flags(&doomed.id).await.unwrap().is_empty());
        assert!(store.list_keys(&doomed.id).await.unwrap().is_empty());
        assert_eq!(store.find_key_by_hash(&key.key_hash).await.unwrap(), None);
        assert!(store.list_audit(&doomed.id, None, 10).await.unwrap().is_empty());
        // A new report may reuse the idempotency key's project and key: nothing remembers it.
        assert_eq!(store.delete_project(&doomed.id).await.unwrap_err().to_string(), StoreError::NotFound.to_string());

        // The other project is whole: its report, blob, comment, search and short id.
        assert_eq!(store.get_report(&kept_report.id).await.unwrap().map(|r| r.id), Some(kept_report.id.clone()));
        assert_eq!(store.get_blob(&kept_blob).await.unwrap().and_then(|b| b.report_id), Some(kept_report.id.clone()));
        assert_eq!(store.list_comments(&kept_report.id).await.unwrap().len(), 1);
        assert_eq!(store.list_channels(&kept.id, false).await.unwrap().len(), 3);
        assert_eq!(store.list_audit(&kept.id, None, 10).await.unwrap().len(), 1);
        assert_eq!(listed(&store, searching(&[&kept.id], "marmalade", 10)).await, vec![kept_report.id.clone()]);
        let found = store.find_reports_by_short_id(std::slice::from_ref(&kept.id), short_id(&kept_report.id), 10).await.unwrap();
        assert_eq!(ids(&found), vec![kept_report.id.clone()]);

        // Reports filed after the deletion (taking the deleted reports' places in storage) are
        // indexed under their own words and found by their short ids.
        let later = create(&store, filed(saying(&kept.id, now_ms(), "later grapefruit", "u-3"))).await;
        let latest = create(&store, filed(saying(&kept.id, now_ms() + 1, "latest grapefruit", "u-3"))).await;
        store.run_maintenance_once().await.unwrap();
        assert_eq!(listed(&store, searching(&[&kept.id], "grapefruit", 10)).await, vec![latest.id.clone(), later.id.clone()]);
        assert!(listed(&store, searching(&[&kept.id], "pineapple", 10)).await.is_empty());
        for report in [&later, &latest] {
            let found = store.find_reports_by_short_id(std::slice::from_ref(&kept.id), short_id(&report.id), 10).await.unwrap();
            assert_eq!(ids(&found), vec![report.id.clone()]);
        }

        store.forget_blob_deletions(&deleted.blob_ids).await.unwrap();
        assert!(store.pending_blob_deletions(100).await.unwrap().is_empty());
    }

    async fn expired_reports_go_oldest_first_with_their_blobs(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let old = now - 40 * DAY_MS;
        let (oldest, oldest_blob) = report_with_blob(&store, &project.id, old, "oldest").await;
        let older = create(&store, filed(saying_long_ago(&project.id, old + 1, "older"))).await;
        let old_one = create(&store, filed(saying_long_ago(&project.id, old + 2, "old"))).await;
        create_comment(&store, &comment(&older, "a comment", false, old + 3)).await.unwrap();
        let (recent, recent_blob) = report_with_blob(&store, &project.id, now - DAY_MS, "recent").await;
        store.run_maintenance_once().await.unwrap();
        let cutoff = now - 30 * DAY_MS;

        let first = store.delete_reports(&project.id, Some(cutoff), 2).await.unwrap();
        assert_eq!(first.reports, 2);
        assert_eq!(first.blob_ids, vec![oldest_blob.clone()]);
        assert_eq!(store.get_report(&oldest.id).await.unwrap(), None);
        assert_eq!(store.get_report(&older.id).await.unwrap(), None);
        assert!(store.list_comments(&older.id).await.unwrap().is_empty());
        assert!(store.get_report(&old_one.id).await.unwrap().is_some());

        let second = store.delete_reports(&project.id, Some(cutoff), 2).await.unwrap();
        assert_eq!((second.reports, second.blob_ids.len()), (1, 0));
        let third = store.delete_reports(&project.id, Some(cutoff), 2).await.unwrap();
        assert_eq!(third, svc_store::DeletedReports::default());

        assert_eq!(listed(&store, filter(&project.id, 10)).await, vec![recent.id.clone()]);
        assert_eq!(store.get_blob(&recent_blob).await.unwrap().and_then(|b| b.report_id), Some(recent.id.clone()));
        assert_eq!(store.pending_blob_deletions(10).await.unwrap(), vec![oldest_blob]);
        let found = store.find_reports_by_short_id(std::slice::from_ref(&project.id), short_id(&recent.id), 10).await.unwrap();
        assert_eq!(ids(&found), vec![recent.id.clone()]);
        assert!(store.find_reports_by_short_id(std::slice::from_ref(&project.id), short_id(&old_one.id), 10).await.unwrap().is_empty());

        // Without a time limit, every report goes (what deleting a project does first).
        let all = store.delete_reports(&project.id, None, 100).await.unwrap();
        assert_eq!(all.reports, 1);
        assert!(listed(&store, filter(&project.id, 10)).await.is_empty());
        assert!(store.get_project(&project.id).await.unwrap().is_some());
    }

    async fn reports_deleted_before_they_were_indexed_leave_the_indexes_right(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let kept = create(&store, filed(saying_long_ago(&project.id, now, "steady report"))).await;
        store.run_maintenance_once().await.unwrap();
        // Filed after it (stored after it) but older, and deleted before any indexer round saw them.
        for i in 0..3 {
            create(&store, filed(saying_long_ago(&project.id, now - 900 + i, "vanishing words"))).await;
        }
        assert_eq!(store.delete_reports(&project.id, Some(now - 800), 10).await.unwrap().reports, 3);
        let next = create(&store, filed(saying(&project.id, now_ms() + 5, "arriving words", "u-2"))).await;
        store.run_maintenance_once().await.unwrap();
        assert_eq!(listed(&store, searching(&[&project.id], "words", 10)).await, vec![next.id.clone()]);
        assert_eq!(listed(&store, searching(&[&project.id], "steady", 10)).await, vec![kept.id.clone()]);
        let found = store.find_reports_by_short_id(std::slice::from_ref(&project.id), short_id(&next.id), 10).await.unwrap();
        assert_eq!(ids(&found), vec![next.id.clone()]);
    }

    async fn retention_is_stored_with_the_project(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let plain = project_of(&store, &org.id, "plain").await;
        let mut kept = project_of(&store, &org.id, "kept").await;
        assert_eq!(store.get_project(&kept.id).await.unwrap().unwrap().retention_days, None);
        kept.retention_days = Some(90);
        store.update_project(&kept).await.unwrap();
        assert_eq!(store.get_project(&kept.id).await.unwrap().unwrap().retention_days, Some(90));
        assert_eq!(store.list_projects_with_retention().await.unwrap(), vec![kept.clone()]);
        assert!(store.list_projects(&org.id).await.unwrap().contains(&plain));
        kept.retention_days = None;
        store.update_project(&kept).await.unwrap();
        assert!(store.list_projects_with_retention().await.unwrap().is_empty());
    }
}

// Members and invitations (the dashboard's Members page).

conformance! {
    async fn an_invitation_keeps_its_role_and_is_listed_until_used_or_withdrawn(store: DynStore) {
        use svc_core::account::{LinkPurpose, OneTimeLink, Role};
        let org = organization(&store, "Acme").await;
        let other = organization(&store, "Other").await;
        let invite = |hash: &str, org_id: &str, created_at: i64| OneTimeLink {
            token_hash: hash.into(),
            purpose: LinkPurpose::Invite,
            org_id: Some(org_id.into()),
            user_id: None,
            created_at,
            expires_at: 10_000,
            role: Some(Role::Owner),
        };
        for link in [invite("a", &org.id, 1), invite("b", &org.id, 2), invite("c", &other.id, 3)] {
            store.create_link(&link).await.unwrap();
        }
        assert_eq!(store.peek_link("a", 5).await.unwrap().unwrap().role, Some(Role::Owner));
        let pending = store.list_org_links(&org.id, LinkPurpose::Invite, 5).await.unwrap();
        assert_eq!(pending.iter().map(|l| l.token_hash.as_str()).collect::<Vec<_>>(), ["b", "a"], "newest first, this organization only");
        assert!(store.list_org_links(&org.id, LinkPurpose::FirstOwner, 5).await.unwrap().is_empty());
        assert!(store.list_org_links(&org.id, LinkPurpose::Invite, 10_000).await.unwrap().is_empty(), "expired");

        store.take_link("a", 5).await.unwrap().unwrap();
        assert!(!store.delete_org_link(&org.id, "a").await.unwrap(), "a used link is not withdrawn");
        assert!(!store.delete_org_link(&org.id, "c").await.unwrap(), "another organization's link is not withdrawn");
        assert!(store.delete_org_link(&org.id, "b").await.unwrap());
        assert!(store.peek_link("b", 5).await.unwrap().is_none(), "a withdrawn link no longer works");
        assert!(store.list_org_links(&org.id, LinkPurpose::Invite, 5).await.unwrap().is_empty());
    }

    async fn adding_a_member_never_changes_an_existing_role(store: DynStore) {
        use svc_core::account::{Membership, Role};
        let org = organization(&store, "Acme").await;
        let ada = person("ada@example.com");
        store.create_user(&ada, "h", None, None).await.unwrap();
        let owner = Membership { org_id: org.id.clone(), user_id: ada.id.clone(), role: Role::Owner, created_at: 1 };
        assert!(store.add_member(&owner).await.unwrap());
        assert!(!store.add_member(&Membership { role: Role::Member, ..owner.clone() }).await.unwrap());
        assert_eq!(store.list_memberships(&ada.id).await.unwrap()[0].role, Role::Owner);
    }

    async fn the_last_owner_is_neither_demoted_nor_removed(store: DynStore) {
        use svc_core::account::{Membership, Role, Session};
        use svc_store::MemberChange;
        let org = organization(&store, "Acme").await;
        let elsewhere = organization(&store, "Elsewhere").await;
        let [ada, bob, cy] = [person("ada@example.com"), person("bob@example.com"), person("cy@example.com")];
        for (user, role) in [(&ada, Role::Owner), (&bob, Role::Member), (&cy, Role::Member)] {
            store.create_user(user, "h", None, None).await.unwrap();
            store.put_membership(&Membership { org_id: org.id.clone(), user_id: user.id.clone(), role, created_at: 1 }).await.unwrap();
            let session = Session { id_hash: format!("s-{}", user.email), user_id: user.id.clone(), created_at: 0, last_seen_at: 0, expires_at: i64::MAX };
            store.create_session(&session).await.unwrap();
        }
        store.put_membership(&Membership { org_id: elsewhere.id.clone(), user_id: cy.id.clone(), role: Role::Member, created_at: 1 }).await.unwrap();

        assert_eq!(store.change_member_role(&org.id, &ada.id, Role::Member).await.unwrap(), MemberChange::LastOwner);
        assert_eq!(store.remove_member(&org.id, &ada.id).await.unwrap(), MemberChange::LastOwner);
        assert_eq!(store.change_member_role(&org.id, &ada.id, Role::Owner).await.unwrap(), MemberChange::Done { previous: Role::Owner }, "an owner stays owner");
        assert_eq!(store.change_member_role(&org.id, "nobody", Role::Owner).await.unwrap(), MemberChange::NotMember);
        assert_eq!(store.remove_member(&elsewhere.id, &bob.id).await.unwrap(), MemberChange::NotMember);
        assert_eq!(store.remove_member("no-such-org", &bob.id).await.unwrap(), MemberChange::NotMember);

        // With a second owner, the first may step down.
        assert_eq!(store.change_member_role(&org.id, &bob.id, Role::Owner).await.unwrap(), MemberChange::Done { previous: Role::Member });
        assert_eq!(store.change_member_role(&org.id, &ada.id, Role::Member).await.unwrap(), MemberChange::Done { previous: Role::Owner });
        assert_eq!(store.remove_member(&org.id, &bob.id).await.unwrap(), MemberChange::LastOwner, "bob is the last owner now");

        // Removing someone ends their sessions only when they belong nowhere else.
        assert_eq!(store.remove_member(&org.id, &ada.id).await.unwrap(), MemberChange::Done { previous: Role::Member });
        assert!(store.list_memberships(&ada.id).await.unwrap().is_empty());
        assert!(store.get_session("s-ada@example.com", 1).await.unwrap().is_none(), "ada belongs nowhere: signed out");
        assert_eq!(store.remove_member(&org.id, &cy.id).await.unwrap(), MemberChange::Done { previous: Role::Member });
        assert!(store.get_session("s-cy@example.com", 1).await.unwrap().is_some(), "cy still belongs to Elsewhere");
        assert_eq!(store.list_members(&org.id).await.unwrap().len(), 1);
    }

    async fn two_owners_demoting_each_other_at_once_leave_one_owner(store: DynStore) {
        use svc_core::account::{Membership, Role};
        use svc_store::MemberChange;
        for round in 0..5 {
            let org = organization(&store, &format!("Acme {round}")).await;
            let [ada, bob] = [person(&format!("ada{round}@example.com")), person(&format!("bob{round}@example.com"))];
            for user in [&ada, &bob] {
                store.create_user(user, "h", None, None).await.unwrap();
                store.put_membership(&Membership { org_id: org.id.clone(), user_id: user.id.clone(), role: Role::Owner, created_at: 1 }).await.unwrap();
            }
            let (first, second) = if round % 2 == 0 {
                tokio::join!(store.change_member_role(&org.id, &ada.id, Role::Member), store.remove_member(&org.id, &bob.id))
            } else {
                tokio::join!(store.remove_member(&org.id, &ada.id), store.remove_member(&org.id, &bob.id))
            };
            let outcomes = [first.unwrap(), second.unwrap()];
            assert_eq!(outcomes.iter().filter(|o| **o == MemberChange::LastOwner).count(), 1, "round {round}: {outcomes:?}");
            let owners = store.list_members(&org.id).await.unwrap().into_iter().filter(|(_, m)| m.role == Role::Owner).count();
            assert_eq!(owners, 1, "round {round}");
        }
    }

    async fn organization_wide_keys_are_listed_and_revoked_apart_from_project_keys(store: DynStore) {
        let org = organization(&store, "Acme").await;
        let other = organization(&store, "Other").await;
        let project = project_in(&org.id, "Web", "web");
        store.create_project(&project, &[]).await.unwrap();
        let key = |org_id: &str, project_id: Option<&str>, name: &str, created_at: i64| ApiKey {
            id: new_id(),
            project_id: project_id.map(str::to_string),
            org_id: org_id.into(),
            name: name.into(),
            key_hash: new_id(),
            scopes: vec!["feedback:read".into()],
            origin: KeyOrigin::Oauth,
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
            agent_name: None,
            agent_owner: None,
            created_at,
        };
        let [first, second, bound, foreign] = [
            key(&org.id, None, "first", 1),
            key(&org.id, None, "second", 2),
            key(&org.id, Some(&project.id), "bound", 3),
            key(&other.id, None, "foreign", 4),
        ];
        for k in [&first, &second, &bound, &foreign] {
            store.create_key(k).await.unwrap();
        }
        let names = |keys: Vec<ApiKey>| keys.into_iter().map(|k| k.name).collect::<Vec<_>>();
        assert_eq!(names(store.list_org_keys(&org.id).await.unwrap()), ["first", "second"]);
        assert_eq!(store.revoke_org_key(&org.id, &bound.id, 10).await.unwrap(), None, "a project key is not org-wide");
        assert_eq!(store.revoke_org_key(&org.id, &foreign.id, 10).await.unwrap(), None, "another organization's key");
        assert_eq!(store.revoke_org_key(&org.id, &first.id, 10).await.unwrap(), Some(10));
        assert_eq!(store.revoke_org_key(&org.id, &first.id, 11).await.unwrap(), None, "revoked once");
        assert_eq!(store.get_key(&first.id).await.unwrap().unwrap().revoked_at, Some(10));
        assert!(store.get_key(&bound.id).await.unwrap().unwrap().revoked_at.is_none());
    }
}

// OAuth: registered clients, authorization codes and the grants behind OAuth keys.

fn oauth_client(created_at: i64) -> svc_core::oauth::OAuthClient {
    svc_core::oauth::OAuthClient {
        client_id: svc_core::oauth::new_client_id(),
        client_name: "Claude <b>Code</b>".into(),
        redirect_uris: vec!["http://127.0.0.1:9999/callback".into(), "cursor://anysphere.cursor-mcp/cb".into()],
        created_at,
        last_used_at: None,
    }
}

fn oauth_code(client_id: &str, project: &Project, expires_at: i64) -> svc_core::oauth::OAuthCode {
    svc_core::oauth::OAuthCode {
        code_hash: format!("{:0>64}", new_id()),
        client_id: client_id.into(),
        redirect_uri: "http://127.0.0.1:9999/callback".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        resource: Some("https://svc.example/mcp".into()),
        user_id: new_id(),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        scopes: vec!["feedback:read".into()],
        created_at: expires_at - svc_core::oauth::CODE_LIFETIME_MS,
        expires_at,
        used_at: None,
    }
}

fn oauth_grant(key: &ApiKey, client_id: &str, user_id: &str, created_at: i64) -> svc_core::oauth::OAuthGrant {
    svc_core::oauth::OAuthGrant {
        key_id: key.id.clone(),
        client_id: client_id.into(),
        client_name: "Claude".into(),
        redirect_host: "127.0.0.1:9999".into(),
        user_id: user_id.into(),
        org_id: key.org_id.clone(),
        project_id: key.project_id.clone(),
        created_at,
    }
}

conformance! {
    async fn a_client_read_from_its_metadata_document_replaces_the_copy_kept(store: DynStore) {
        let now = now_ms();
        let url = "https://app.example.com/client.json";
        let first = svc_core::oauth::OAuthClient { client_id: url.into(), last_used_at: Some(now), ..oauth_client(now) };
        store.put_oauth_client(&first).await.unwrap();
        assert_eq!(store.get_oauth_client(url).await.unwrap(), Some(first.clone()));
        let again = svc_core::oauth::OAuthClient {
            client_name: "Renamed".into(),
            redirect_uris: vec!["https://app.example.com/cb".into()],
            created_at: now + 1,
            last_used_at: None,
            ..first.clone()
        };
        store.put_oauth_client(&again).await.unwrap();
        let kept = store.get_oauth_client(url).await.unwrap().unwrap();
        assert_eq!((kept.client_name.as_str(), kept.redirect_uris.clone(), kept.created_at), ("Renamed", again.redirect_uris, now + 1));
        assert_eq!(kept.last_used_at, Some(now), "when it was last used is kept");
    }

    async fn oauth_codes_are_taken_once_and_only_before_they_expire(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let client = oauth_client(now);
        store.create_oauth_client(&client).await.unwrap();
        assert_eq!(store.get_oauth_client(&client.client_id).await.unwrap(), Some(client.clone()));
        assert_eq!(store.get_oauth_client("mcp_unknown").await.unwrap(), None);
        assert!(matches!(store.create_oauth_client(&client).await, Err(StoreError::Conflict(_))));

        let code = oauth_code(&client.client_id, &project, now + 60_000);
        store.create_oauth_code(&code).await.unwrap();
        let taken = store.take_oauth_code(&code.code_hash, now).await.unwrap().expect("the first exchange wins");
        assert_eq!(taken, svc_core::oauth::OAuthCode { used_at: Some(now), ..code.clone() });
        assert_eq!(store.take_oauth_code(&code.code_hash, now + 1).await.unwrap(), None, "used once");

        let late = oauth_code(&client.client_id, &project, now + 60_000);
        store.create_oauth_code(&late).await.unwrap();
        assert_eq!(store.take_oauth_code(&late.code_hash, now + 60_000).await.unwrap(), None, "expired");
        assert_eq!(store.take_oauth_code(&"f".repeat(64), now).await.unwrap(), None, "unknown");
    }

    async fn oauth_keys_carry_their_grant_and_only_their_person_disconnects_them(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let client = oauth_client(now - 1000);
        store.create_oauth_client(&client).await.unwrap();
        let (ann, bob) = (new_id(), new_id());
        let project_key = ApiKey { origin: KeyOrigin::Oauth, expires_at: None, created_at: now, ..api_key(&project.org_id, Some(&project.id), "OAuth: Claude") };
        let org_key = ApiKey { origin: KeyOrigin::Oauth, expires_at: None, created_at: now + 1, ..api_key(&project.org_id, None, "OAuth: Claude") };
        let plain = api_key(&project.org_id, Some(&project.id), "CI");
        store.create_key(&plain).await.unwrap();
        let first = oauth_grant(&project_key, &client.client_id, &ann, now);
        let second = oauth_grant(&org_key, &client.client_id, &ann, now + 1);
        store.create_oauth_key(&project_key, &first).await.unwrap();
        store.create_oauth_key(&org_key, &second).await.unwrap();

        assert_eq!(store.find_key_by_hash(&project_key.key_hash).await.unwrap().map(|found| found.key), Some(project_key.clone()));
        assert_eq!(store.get_oauth_client(&client.client_id).await.unwrap().unwrap().last_used_at, Some(now + 1));
        let mut grants = store
            .oauth_grants_of(&[project_key.id.clone(), org_key.id.clone(), plain.id.clone()])
            .await
            .unwrap();
        grants.sort_by_key(|grant| grant.created_at);
        assert_eq!(grants, vec![first.clone(), second.clone()], "a key minted otherwise has no grant");
        assert_eq!(store.oauth_grants_of(&[]).await.unwrap(), vec![]);

        let listed = store.list_user_oauth_keys(&ann).await.unwrap();
        assert_eq!(listed, vec![(org_key.clone(), second.clone()), (project_key.clone(), first.clone())], "newest first");
        assert_eq!(store.list_user_oauth_keys(&bob).await.unwrap(), vec![]);

        assert_eq!(store.revoke_user_oauth_key(&bob, &project_key.id, now).await.unwrap(), None, "someone else's");
        assert_eq!(store.revoke_user_oauth_key(&ann, &plain.id, now).await.unwrap(), None, "not an OAuth key");
        assert_eq!(store.revoke_user_oauth_key(&ann, &project_key.id, now + 5).await.unwrap(), Some(now + 5));
        assert_eq!(store.revoke_user_oauth_key(&ann, &project_key.id, now + 6).await.unwrap(), None, "revoked once");
        assert_eq!(store.get_key(&project_key.id).await.unwrap().unwrap().revoked_at, Some(now + 5));
        assert_eq!(store.get_key(&org_key.id).await.unwrap().unwrap().revoked_at, None);
    }

    async fn unused_registrations_and_expired_codes_are_cleaned_up(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let day = svc_core::oauth::UNUSED_CLIENT_LIFETIME_MS;
        let stale = oauth_client(now - day - 1);
        let fresh = oauth_client(now - 1000);
        let used = oauth_client(now - day - 1);
        for client in [&stale, &fresh, &used] {
            store.create_oauth_client(client).await.unwrap();
        }
        let key = ApiKey { origin: KeyOrigin::Oauth, ..api_key(&project.org_id, Some(&project.id), "OAuth: used") };
        store.create_oauth_key(&key, &oauth_grant(&key, &used.client_id, &new_id(), now - day)).await.unwrap();
        let stale_code = oauth_code(&stale.client_id, &project, now + 60_000);
        let expired_code = oauth_code(&fresh.client_id, &project, now - 1);
        let live_code = oauth_code(&fresh.client_id, &project, now + 60_000);
        for code in [&stale_code, &expired_code, &live_code] {
            store.create_oauth_code(code).await.unwrap();
        }

        assert_eq!(store.delete_stale_oauth_rows(now, now - day).await.unwrap(), 3, "two codes and one client");
        assert_eq!(store.get_oauth_client(&stale.client_id).await.unwrap(), None);
        assert!(store.get_oauth_client(&fresh.client_id).await.unwrap().is_some(), "younger than a day");
        assert!(store.get_oauth_client(&used.client_id).await.unwrap().is_some(), "completed an exchange");
        assert!(store.take_oauth_code(&live_code.code_hash, now).await.unwrap().is_some());
        assert_eq!(store.take_oauth_code(&stale_code.code_hash, now).await.unwrap(), None);
        assert_eq!(store.delete_stale_oauth_rows(now, now - day).await.unwrap(), 0);
    }
}

// Mail: the outbox, settings and mail state.
#[path = "conformance/mail.rs"]
mod mail;

// Reporter sign-in: codes, sessions, OpenID Connect sign-ins under way.
#[path = "conformance/reporters.rs"]
mod reporters;

// Whole changes and the event feed.
#[path = "conformance/events.rs"]
mod events;

// Issue trackers (connections, links, handled deliveries) and the inbox's draft marks.
#[path = "conformance/trackers.rs"]
mod trackers;

// Webhook deliveries and the attempts at them.
#[path = "conformance/webhooks.rs"]
mod webhooks;
