//! Fixtures shared by the backends' own unit tests (the conformance suite has its own).

use serde_json::json;
use svc_core::ids::{new_id, new_project_key};
use svc_core::model::{Organization, Project};

use crate::{Change, Store, Write};

/// A new organization with one project and no channels.
pub(crate) async fn project(store: &dyn Store) -> Project {
    let org = Organization { id: new_id(), name: "Default".into(), created_at: 1 };
    store.create_organization(&org).await.unwrap();
    let project = Project {
        id: new_id(),
        org_id: org.id,
        name: "Default".into(),
        slug: "default".into(),
        project_key: new_project_key(),
        url_patterns: Vec::new(),
        default_channel_key: "bug".into(),
        widget_config: json!({}),
        allowed_origins: Vec::new(),
        identity_secret: None,
        created_at: 1,
        retention_days: None,
        reporter_auth: Default::default(),
    };
    store.create_project(&project, &[]).await.unwrap();
    project
}

/// Fills every table that can name the project: a channel, reports (one with a bound blob, an
/// idempotency key, a comment, a status change, labels and a viewed mark), an unbound blob, a
/// room, a hint, a flag, a key, an OAuth code and an OAuth key with its grant, and an audit event;
/// indexed for search. Returns the report ids.
pub(crate) async fn fill_project(store: &dyn Store, project: &Project) -> Vec<String> {
    use svc_core::model::*;
    let now = svc_core::time::now_ms();
    let by = Author { kind: svc_core::model::AuthorKind::User, id: Some("user:ann".into()), label: Some("Ann".into()) };
    let channel = Channel {
        id: new_id(),
        project_id: project.id.clone(),
        key: "bug".into(),
        name: "Bugs".into(),
        color: "#336699".into(),
        mascot: "owl".into(),
        base_weight: 0.0,
        matchers: json!([]),
        archived: false,
        created_at: now,
        updated_at: now,
    };
    store.create_channel(&channel).await.unwrap();
    let blob = |report_id: Option<&str>| Blob {
        id: new_id(),
        project_id: project.id.clone(),
        kind: "screenshot".into(),
        mime: "image/png".into(),
        bytes: 10,
        width: None,
        height: None,
        duration_ms: None,
        name: None,
        report_id: report_id.map(str::to_string),
        created_at: now,
    };
    let bound = blob(None);
    store.create_blob(&bound).await.unwrap();
    store.create_blob(&blob(None)).await.unwrap();
    let mut ids = Vec::new();
    for (index, key) in [Some("idem-1"), None].into_iter().enumerate() {
        let report = Report {
            id: new_id(),
            project_id: project.id.clone(),
            channel_key: "bug".into(),
            status: "new".parse().unwrap(),
            title: "Sweeping words".into(),
            blocks: serde_json::from_value(serde_json::json!([{"type": "text", "text": "Sweeping words"}])).unwrap(),
            context: serde_json::from_value(serde_json::json!({"artifactId": "doc-1"})).unwrap(),
            identity: None,
            identity_error: None,
            author: Author { kind: svc_core::model::AuthorKind::Reporter, id: Some("u-1".into()), label: None },
            artifact_id: Some("doc-1".into()),
            url: None,
            created_at: now,
            updated_at: now,
            assignee: None,
            labels: Vec::new(),
        };
        let blob_ids = if index == 0 { vec![bound.id.clone()] } else { Vec::new() };
        let new = NewReport { report: report.clone(), blob_ids, idempotency_key: key.map(str::to_string) };
        store.create_report(new).await.unwrap();
        ids.push(report.id);
    }
    let comment = Comment {
        id: new_id(),
        report_id: ids[0].clone(),
        project_id: project.id.clone(),
        author: by.clone(),
        text: "a comment".into(),
        kind: None,
        draft: false,
        created_at: now,
        published_at: Some(now),
    };
    let labels = svc_core::triage::LabelChange::Add(vec![svc_core::triage::Label::parse("UX").unwrap()]);
    let mut writes =
        vec![Write::Comment(comment), Write::Status { report_id: ids[0].clone(), to: "triaged".parse().unwrap() }];
    writes.extend(ids.iter().map(|id| Write::Labels { report_id: id.clone(), change: labels.clone() }));
    store.apply(&Change::anywhere(by.clone(), now, writes)).await.unwrap();
    store.mark_viewed(&ids, "user:ann", now).await.unwrap();
    let room = Room {
        id: new_id(),
        project_id: project.id.clone(),
        artifact_id: "doc-1".into(),
        title: "Doc".into(),
        meta: None,
        archived: false,
        created_at: now,
        updated_at: now,
    };
    store.upsert_room(&room, &RoomChanges::default(), Some(&by)).await.unwrap();
    let hint = Hint {
        id: new_id(),
        project_id: project.id.clone(),
        channel_key: "bug".into(),
        weight: HintWeight::Max,
        user_id: None,
        created_at: now,
        expires_at: now + HINT_TTL_MS,
    };
    store.create_hint(&hint).await.unwrap();
    store
        .set_flag(&Flag { project_id: project.id.clone(), key: "beta".into(), enabled: true, updated_at: now })
        .await
        .unwrap();
    let key = ApiKey {
        id: new_id(),
        project_id: Some(project.id.clone()),
        org_id: project.org_id.clone(),
        name: "CI".into(),
        key_hash: format!("{:0>64}", new_id()),
        scopes: vec!["feedback:read".into()],
        origin: KeyOrigin::Api,
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
        agent_name: None,
        agent_owner: None,
        created_at: now,
    };
    store.create_key(&key).await.unwrap();
    // An OAuth connection to the project: its client, an unused code and a key with its grant.
    let client = svc_core::oauth::OAuthClient {
        client_id: svc_core::oauth::new_client_id(),
        client_name: "Agent".into(),
        redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
        created_at: now,
        last_used_at: None,
    };
    store.create_oauth_client(&client).await.unwrap();
    let code = svc_core::oauth::OAuthCode {
        code_hash: format!("{:0>64}", new_id()),
        client_id: client.client_id.clone(),
        redirect_uri: client.redirect_uris[0].clone(),
        code_challenge: "c".repeat(43),
        resource: None,
        user_id: "ann".into(),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        scopes: vec!["feedback:read".into()],
        created_at: now,
        expires_at: now + svc_core::oauth::CODE_LIFETIME_MS,
        used_at: None,
    };
    store.create_oauth_code(&code).await.unwrap();
    let oauth_key = ApiKey {
        id: new_id(),
        name: "OAuth: Agent".into(),
        key_hash: format!("{:0>64}", new_id()),
        origin: KeyOrigin::Oauth,
        ..key.clone()
    };
    let grant = svc_core::oauth::OAuthGrant {
        key_id: oauth_key.id.clone(),
        client_id: client.client_id.clone(),
        client_name: "Agent".into(),
        redirect_host: "127.0.0.1:9".into(),
        user_id: "ann".into(),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        created_at: now,
    };
    store.create_oauth_key(&oauth_key, &grant).await.unwrap();
    let event = svc_core::audit::AuditEvent {
        id: new_id(),
        org_id: project.org_id.clone(),
        project_id: Some(project.id.clone()),
        at: now,
        actor: by,
        action: "settings.changed".into(),
        detail: json!({}),
    };
    store.record_audit(&event).await.unwrap();
    // A reporter signing in: a mailed code, a session and an OpenID Connect popup under way.
    let reporter = svc_core::reporter::Reporter::by_email(&svc_core::account::Email::parse("r@example.com").unwrap());
    let sign_in_code = svc_core::reporter::SignInCode {
        id: new_id(),
        project_id: project.id.clone(),
        email: "r@example.com".into(),
        code_hash: "h".into(),
        created_at: now,
        expires_at: now + svc_core::reporter::CODE_LIFETIME_MS,
        attempts: 0,
        consumed_at: None,
    };
    store.create_sign_in_code(&sign_in_code).await.unwrap();
    let session = svc_core::reporter::ReporterSession {
        id: new_id(),
        project_id: project.id.clone(),
        secret_hash: format!("{:0>64}", new_id()),
        reporter,
        created_at: now,
        last_used_at: now,
        expires_at: now + svc_core::reporter::SESSION_LIFETIME_MS,
    };
    store.create_reporter_session(&session).await.unwrap();
    let state = svc_core::reporter::OidcState {
        state_hash: format!("{:0>64}", new_id()),
        project_id: project.id.clone(),
        origin: "https://app.example".into(),
        code_verifier: "v".repeat(43),
        nonce: "n".into(),
        created_at: now,
        expires_at: now + svc_core::reporter::OIDC_STATE_LIFETIME_MS,
    };
    store.put_oidc_state(&state).await.unwrap();
    store.run_maintenance_once().await.unwrap();
    ids
}

/// The tables [`fill_project`] (plus a widget sighting the test adds) puts rows of the project in,
/// found by a `project_id` or `report_id` column.
pub(crate) const FILLED_TABLES: [&str; 20] = [
    "channels",
    "reports",
    "status_changes",
    "rooms",
    "api_keys",
    "hints",
    "comments",
    "viewed_marks",
    "flags",
    "blobs",
    "idempotency_keys",
    "report_labels",
    "widget_sightings",
    "audit_events",
    "report_search",
    "oauth_codes",
    "oauth_grants",
    "reporter_codes",
    "reporter_sessions",
    "reporter_oidc_states",
];

/// Deletes one of two filled projects and checks, with the backend's own `counts` (rows naming a
/// project or its reports, per table, every table of the schema), that nothing of it is left in
/// any table and that the other project kept every row. `add_sighting` stores a widget sighting
/// (no store method writes one yet).
pub(crate) async fn deleting_a_project_leaves_nothing(
    store: &dyn Store,
    add_sighting: impl AsyncFn(&str),
    counts: impl AsyncFn(&str, &[String]) -> std::collections::BTreeMap<String, i64>,
) {
    let doomed = project(store).await;
    let kept = project(store).await;
    let doomed_reports = fill_project(store, &doomed).await;
    let kept_reports = fill_project(store, &kept).await;
    add_sighting(&doomed.id).await;
    add_sighting(&kept.id).await;
    let before = counts(&doomed.id, &doomed_reports).await;
    for table in FILLED_TABLES {
        assert!(before.get(table).copied().unwrap_or(0) > 0, "the fixture fills {table}: {before:?}");
    }
    let kept_before = counts(&kept.id, &kept_reports).await;

    store.delete_project(&doomed.id).await.unwrap();

    let after = counts(&doomed.id, &doomed_reports).await;
    assert!(after.values().all(|&n| n == 0), "rows of the deleted project remain: {after:?}");
    assert_eq!(store.get_project(&doomed.id).await.unwrap(), None);
    assert_eq!(counts(&kept.id, &kept_reports).await, kept_before, "the other project is untouched");
}

/// `INSERT` of a widget sighting for project `$1` (both backends read `$1`).
pub(crate) const INSERT_SIGHTING: &str =
    "INSERT INTO widget_sightings (project_id, url, source, seen_at) VALUES ($1, 'https://a.example/', 'loader', 1)";

/// An enabled standard endpoint of `project_id`, made at `at`, for `report.created`.
pub(crate) fn webhook(project_id: &str, at: i64) -> svc_core::webhook::Webhook {
    svc_core::webhook::Webhook {
        id: new_id(),
        project_id: project_id.into(),
        url: "https://hooks.example.com/in".into(),
        events: vec!["report.created".into()],
        events_default: false,
        description: None,
        format: svc_core::webhook::WebhookFormat::Standard,
        enabled: true,
        disabled_reason: None,
        secret: svc_core::secret::Secret::new("whsec_dGVzdA=="),
        previous_secret: None,
        previous_until: None,
        failing_since: None,
        paused_until: None,
        enabled_at: at,
        created_at: at,
        updated_at: at,
    }
}

/// An event's deliveries to three endpoints of one format keep one body between them (`bodies`
/// counts the backend's stored bodies), which goes with the last of them, not with the one it was
/// stored with.
pub(crate) async fn one_body_until_the_last_delivery_goes(store: &dyn Store, bodies: impl AsyncFn() -> i64) {
    use svc_core::webhook::WebhookDelivery;
    let project = project(store).await;
    let at = svc_core::time::now_ms();
    let hooks = [webhook(&project.id, at), webhook(&project.id, at), webhook(&project.id, at)];
    let mut writes = Vec::new();
    let mut holder: Option<String> = None;
    for hook in &hooks {
        store.create_webhook(hook).await.unwrap();
        let message_id = format!("msg_1_{}", hook.id);
        let mut delivery =
            WebhookDelivery::new_pending(new_id(), hook, Some((1, "report.created")), message_id, "{}".into(), at, at);
        delivery.shares_payload_of = holder.clone();
        holder.get_or_insert_with(|| delivery.id.clone());
        writes.push(Write::WebhookDelivery(delivery));
    }
    let by = svc_core::model::Author { kind: svc_core::model::AuthorKind::Cli, id: None, label: None };
    store.apply(&Change::anywhere(by, at, writes)).await.unwrap();
    assert_eq!(bodies().await, 1, "one body for three deliveries");
    for (hook, left) in hooks.iter().zip([1, 1, 0]) {
        assert!(store.delete_webhook(&project.id, &hook.id).await.unwrap());
        assert_eq!(bodies().await, left, "after endpoint {} went", hook.id);
    }
}

/// Files these reports together, each from a task of its own (so they share group commits, as under
/// a burst), and waits for all of them.
pub(crate) async fn file_together(
    store: &std::sync::Arc<impl Store>,
    reports: impl IntoIterator<Item = svc_core::model::NewReport>,
) {
    let filed: Vec<_> = reports
        .into_iter()
        .map(|report| {
            let store = store.clone();
            tokio::spawn(async move { store.create_report(report).await.unwrap() })
        })
        .collect();
    for task in filed {
        task.await.unwrap();
    }
}

/// A listing of the project's reports that match `text`.
pub(crate) fn search(project: &Project, text: &str, limit: u32) -> svc_core::model::ReportFilter {
    svc_core::model::ReportFilter {
        project_ids: vec![project.id.clone()],
        search: Some(text.into()),
        limit,
        ..Default::default()
    }
}
