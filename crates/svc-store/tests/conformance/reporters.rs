//! The reporter sign-in store (codes, sessions, OpenID Connect states) on every backend: part of
//! `conformance.rs`, whose fixtures and `conformance!` macro it uses.

use super::*;
use svc_core::account::Email;
use svc_core::reporter::{OidcState, Reporter, ReporterAuth, ReporterMode, ReporterSession, SignInCode};

fn code(project_id: &str, email: &str, at: i64) -> SignInCode {
    SignInCode {
        id: new_id_at(at),
        project_id: project_id.into(),
        email: email.into(),
        code_hash: format!("hash-{at}"),
        created_at: at,
        expires_at: at + svc_core::reporter::CODE_LIFETIME_MS,
        attempts: 0,
        consumed_at: None,
    }
}

conformance! {
    async fn reporter_settings_are_stored_with_the_project(store: DynStore) {
        let mut project = project(&store).await;
        assert_eq!(store.get_project(&project.id).await.unwrap().unwrap().reporter_auth, ReporterAuth::default());
        project.reporter_auth = ReporterAuth {
            mode: ReporterMode::Oidc,
            required: true,
            oidc: Some(svc_core::reporter::OidcSettings {
                issuer: "https://id.example.com".into(),
                client_id: "svc".into(),
                client_secret: Some("s".into()),
            }),
        };
        store.update_project(&project).await.unwrap();
        let stored = store.get_project_by_key(&project.project_key).await.unwrap().unwrap();
        assert_eq!(stored.reporter_auth, project.reporter_auth);
    }

    async fn sign_in_codes_count_every_try_and_are_used_once(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let older = code(&project.id, "ann@example.com", now - 1_000);
        let newer = code(&project.id, "ann@example.com", now);
        store.create_sign_in_code(&older).await.unwrap();
        store.create_sign_in_code(&newer).await.unwrap();
        store.create_sign_in_code(&code(&project.id, "bob@example.com", now)).await.unwrap();
        assert_eq!(store.count_sign_in_codes(&project.id, "ann@example.com", now - 5_000).await.unwrap(), 2);
        assert_eq!(store.count_sign_in_codes(&project.id, "ann@example.com", now - 500).await.unwrap(), 1);
        assert_eq!(store.latest_sign_in_code(&project.id, "ann@example.com").await.unwrap(), Some(newer.clone()));
        assert_eq!(store.latest_sign_in_code(&project.id, "eve@example.com").await.unwrap(), None);

        assert_eq!(store.count_sign_in_code_try(&newer.id).await.unwrap(), Some(1));
        assert_eq!(store.count_sign_in_code_try(&newer.id).await.unwrap(), Some(2));
        assert!(store.consume_sign_in_code(&newer.id, now).await.unwrap());
        assert!(!store.consume_sign_in_code(&newer.id, now).await.unwrap(), "a code is used once");
        assert_eq!(store.count_sign_in_code_try(&newer.id).await.unwrap(), None, "a used code takes no tries");
        let stored = store.latest_sign_in_code(&project.id, "ann@example.com").await.unwrap().unwrap();
        assert_eq!((stored.attempts, stored.consumed_at), (2, Some(now)));
    }

    async fn tries_sent_at_once_are_all_counted(store: DynStore) {
        let project = project(&store).await;
        let one = code(&project.id, "ann@example.com", now_ms());
        store.create_sign_in_code(&one).await.unwrap();
        let tries = (0..8).map(|_| {
            let store = store.clone();
            let id = one.id.clone();
            tokio::spawn(async move { store.count_sign_in_code_try(&id).await.unwrap().unwrap() })
        });
        let mut counts = Vec::new();
        for task in tries {
            counts.push(task.await.unwrap());
        }
        counts.sort();
        assert_eq!(counts, (1..=8).collect::<Vec<i64>>(), "each try saw its own count");
    }

    async fn reporter_sessions_are_found_by_secret_renewed_and_ended(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let session = ReporterSession {
            id: new_id(),
            project_id: project.id.clone(),
            secret_hash: "a".repeat(64),
            reporter: Reporter { name: Some("Ann".into()), ..Reporter::by_email(&Email::parse("ann@example.com").unwrap()) },
            created_at: now,
            last_used_at: now,
            expires_at: now + 1_000,
        };
        store.create_reporter_session(&session).await.unwrap();
        assert_eq!(store.reporter_session(&"a".repeat(64)).await.unwrap(), Some(session.clone()));
        assert_eq!(store.reporter_session(&"b".repeat(64)).await.unwrap(), None);
        store.touch_reporter_session(&session.id, now + 10, now + 5_000).await.unwrap();
        let touched = store.reporter_session(&"a".repeat(64)).await.unwrap().unwrap();
        assert_eq!((touched.last_used_at, touched.expires_at), (now + 10, now + 5_000));
        assert!(store.delete_reporter_session(&session.id).await.unwrap());
        assert!(!store.delete_reporter_session(&session.id).await.unwrap());
        assert_eq!(store.reporter_session(&"a".repeat(64)).await.unwrap(), None);
    }

    async fn oidc_states_are_taken_once_and_not_after_they_expire(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let state = |hash: &str, expires_at: i64| OidcState {
            state_hash: hash.repeat(64),
            project_id: project.id.clone(),
            origin: "https://app.example.com".into(),
            code_verifier: "v".repeat(43),
            nonce: "n".into(),
            created_at: now,
            expires_at,
        };
        store.put_oidc_state(&state("a", now + 1_000)).await.unwrap();
        store.put_oidc_state(&state("b", now - 1)).await.unwrap();
        assert_eq!(store.take_oidc_state(&"a".repeat(64), now).await.unwrap(), Some(state("a", now + 1_000)));
        assert_eq!(store.take_oidc_state(&"a".repeat(64), now).await.unwrap(), None, "taken once");
        assert_eq!(store.take_oidc_state(&"b".repeat(64), now).await.unwrap(), None, "expired");
    }

    async fn stale_reporter_rows_are_deleted(store: DynStore) {
        let project = project(&store).await;
        let now = now_ms();
        let hour = 3_600_000;
        store.create_sign_in_code(&code(&project.id, "old@example.com", now - 2 * hour)).await.unwrap();
        store.create_sign_in_code(&code(&project.id, "new@example.com", now)).await.unwrap();
        let session = |id: &str, expires_at: i64| ReporterSession {
            id: id.into(),
            project_id: project.id.clone(),
            secret_hash: format!("{id:0>64}"),
            reporter: Reporter::by_email(&Email::parse("r@example.com").unwrap()),
            created_at: now,
            last_used_at: now,
            expires_at,
        };
        store.create_reporter_session(&session(&new_id(), now - 1)).await.unwrap();
        let live = session(&new_id(), now + hour);
        store.create_reporter_session(&live).await.unwrap();
        assert_eq!(store.delete_stale_reporter_rows(now, now - hour).await.unwrap(), 2);
        assert!(store.latest_sign_in_code(&project.id, "new@example.com").await.unwrap().is_some());
        assert!(store.reporter_session(&live.secret_hash).await.unwrap().is_some());
        assert_eq!(store.delete_stale_reporter_rows(now, now - hour).await.unwrap(), 0);
    }
}
