//! The app every test drives: a fresh SQLite (or PostgreSQL) store and a local blob folder in its own
//! temporary directory, driven in process with `tower::ServiceExt::oneshot`, or served on a real
//! loopback socket where the peer address or the connection itself matters. [`ingest`] adds the
//! ingest API's requests, multipart bodies and little media files.
#![allow(dead_code)]

pub mod ingest;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use serde_json::{Value, json};
use svc_blob::BlobStore;
use svc_core::model::{ApiKey, Author, Blob, Comment, KeyOrigin, NewReport, Project, Report};
use svc_core::{ids, time};
use svc_server::{AppState, ServerConfig};
use svc_service::keys::{self, MintRequest};
use svc_store::DynStore;
use tower::ServiceExt;

/// The seven scopes a project key can hold.
pub const ALL_SCOPES: [&str; 7] = [
    "feedback:read",
    "feedback:write",
    "channel:read",
    "channel:write",
    "project:read",
    "project:write",
    "apikey:write",
];

pub struct TestApp {
    /// Kept so the database and blob folders live as long as the app.
    pub dir: tempfile::TempDir,
    pub store: DynStore,
    pub router: axum::Router,
    /// The state behind the router; its blob store is the folder `<dir>/blobs`.
    pub state: AppState,
    /// The bootstrapped project "Default".
    pub project: Project,
    /// The bootstrap setup token (scope `*`).
    pub token: String,
    /// The database behind the store, for faults a test injects into it.
    pub database: Database,
}

/// Where a [`TestApp`]'s data is.
#[derive(Clone)]
pub enum Database {
    Sqlite(std::path::PathBuf),
    /// A pool on the app's own schema.
    Postgres(sqlx::PgPool),
}

/// The name of the trigger [`TestApp::inject_event_fault`] makes.
const FAULT: &str = "injected_fault";

impl TestApp {
    /// From now on the database refuses to write events of type `event_type` (the last write of a
    /// change that causes one), as a failing disk would, until [`TestApp::clear_fault`].
    pub async fn inject_event_fault(&self, event_type: &str) {
        let statements = match &self.database {
            Database::Sqlite(_) => vec![format!(
                "CREATE TRIGGER {FAULT} BEFORE INSERT ON events WHEN NEW.type = '{event_type}' \
                 BEGIN SELECT RAISE(ABORT, 'injected fault: the disk failed'); END"
            )],
            Database::Postgres(_) => vec![
                format!(
                    "CREATE FUNCTION {FAULT}() RETURNS trigger LANGUAGE plpgsql AS \
                     $$ BEGIN RAISE EXCEPTION 'injected fault: the disk failed'; END $$"
                ),
                format!(
                    "CREATE TRIGGER {FAULT} BEFORE INSERT ON events FOR EACH ROW \
                     WHEN (NEW.type = '{event_type}') EXECUTE FUNCTION {FAULT}()"
                ),
            ],
        };
        self.run_sql(&statements).await;
    }

    /// Ends [`TestApp::inject_event_fault`].
    pub async fn clear_fault(&self) {
        let statement = match &self.database {
            Database::Sqlite(_) => format!("DROP TRIGGER {FAULT}"),
            Database::Postgres(_) => format!("DROP TRIGGER {FAULT} ON events"),
        };
        self.run_sql(&[statement]).await;
    }

    async fn run_sql(&self, statements: &[String]) {
        use sqlx::Connection;
        match &self.database {
            Database::Sqlite(path) => {
                let url = format!("sqlite://{}", path.display());
                let mut connection = sqlx::SqliteConnection::connect(&url).await.expect("open the test database");
                for statement in statements {
                    sqlx::query(sqlx::AssertSqlSafe(statement.clone())).execute(&mut connection).await.unwrap();
                }
            }
            Database::Postgres(pool) => {
                for statement in statements {
                    sqlx::query(sqlx::AssertSqlSafe(statement.clone())).execute(pool).await.unwrap();
                }
            }
        }
    }
}

impl TestApp {
    /// The service behind the app's surfaces (what a test calls an operation on).
    pub fn service(&self) -> &svc_service::Service {
        &self.state.service
    }
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    pub bytes: Vec<u8>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an ingest error: this status and `{"error": code}` (a schema error also says which
    /// field is at fault, in `message`).
    #[track_caller]
    pub fn ingest_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text);
        let mut body = self.body.clone();
        if matches!(code, "blocks_invalid" | "context_invalid" | "blob_id_invalid")
            && let Some(message) = body.as_object_mut().and_then(|b| b.remove("message"))
        {
            assert!(message.as_str().is_some_and(|m| !m.is_empty()), "a message naming the field: {}", self.text);
        }
        assert_eq!(body, json!({ "error": code }), "ingest error body");
    }

    /// Asserts the status and that the body is the REST error shape `{error, code}` with this code;
    /// returns the message.
    #[track_caller]
    pub fn error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text);
        let object = self.body.as_object().unwrap_or_else(|| panic!("error body is not a JSON object: {}", self.text));
        assert_eq!(object.get("code"), Some(&json!(code)), "error code; body: {}", self.text);
        let message = object
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("error message missing: {}", self.text));
        assert!(!message.is_empty(), "empty error message");
        assert_eq!(object.len(), 2, "an error body has exactly `error` and `code`: {}", self.text);
        message.to_string()
    }

    /// Asserts the status and returns the JSON body.
    #[track_caller]
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text);
        &self.body
    }
}

pub fn no_rate_limits() -> ServerConfig {
    ServerConfig { rate_limits: false, ..Default::default() }
}

impl TestApp {
    pub async fn new() -> Self {
        Self::with_config(no_rate_limits()).await
    }

    pub async fn with_config(config: ServerConfig) -> Self {
        Self::sqlite(tempfile::tempdir().expect("temporary folder"), config).await
    }

    /// The app with its data (database and blob folder) in a new folder inside `parent`.
    pub async fn in_folder(parent: &std::path::Path, config: ServerConfig) -> Self {
        Self::sqlite(tempfile::tempdir_in(parent).expect("temporary folder"), config).await
    }

    async fn sqlite(dir: tempfile::TempDir, config: ServerConfig) -> Self {
        let path = dir.path().join("svc.db");
        let store = svc_store::connect(&format!("sqlite://{}", path.display())).await.expect("open store");
        Self::over(dir, store, Database::Sqlite(path), config).await
    }

    /// The app over PostgreSQL (a fresh schema) when `SVC_TEST_POSTGRES_URL` is set.
    pub async fn postgres() -> Option<Self> {
        Self::postgres_with(no_rate_limits()).await
    }

    /// [`TestApp::postgres`] on `config`.
    pub async fn postgres_with(config: ServerConfig) -> Option<Self> {
        let Ok(url) = std::env::var("SVC_TEST_POSTGRES_URL") else {
            eprintln!("skipped: SVC_TEST_POSTGRES_URL not set");
            return None;
        };
        let store =
            svc_store::postgres::PostgresStore::connect_fresh_schema(&url).await.expect("fresh PostgreSQL schema");
        let dir = tempfile::tempdir().expect("temporary folder");
        let database = Database::Postgres(store.pool().clone());
        Some(Self::over(dir, std::sync::Arc::new(store), database, config).await)
    }

    /// Two instances of the service over one fresh PostgreSQL schema (each with its own pool and
    /// tasks, as two `svc serve` processes would have), when `SVC_TEST_POSTGRES_URL` is set.
    pub async fn postgres_pair() -> Option<(Self, Self)> {
        Self::postgres_pair_with(no_rate_limits()).await
    }

    /// [`TestApp::postgres_pair`] with both instances on `config`.
    pub async fn postgres_pair_with(config: ServerConfig) -> Option<(Self, Self)> {
        let Ok(url) = std::env::var("SVC_TEST_POSTGRES_URL") else {
            eprintln!("skipped: SVC_TEST_POSTGRES_URL not set");
            return None;
        };
        let store =
            svc_store::postgres::PostgresStore::connect_fresh_schema(&url).await.expect("fresh PostgreSQL schema");
        let other = store.another_instance().await.expect("a second instance on the same schema");
        let database = Database::Postgres(store.pool().clone());
        let first = Self::over(
            tempfile::tempdir().expect("temporary folder"),
            std::sync::Arc::new(store),
            database.clone(),
            config.clone(),
        )
        .await;
        let dir = tempfile::tempdir().expect("temporary folder");
        let store: DynStore = std::sync::Arc::new(other);
        let blobs = BlobStore::local(&dir.path().join("blobs")).expect("blob folder");
        let state = AppState::new(store.clone(), config, blobs);
        let router = svc_server::app(state.clone());
        let (project, token) = (first.project.clone(), first.token.clone());
        let second = TestApp { dir, store, router, state, project, token, database };
        Some((first, second))
    }

    async fn over(dir: tempfile::TempDir, store: DynStore, database: Database, config: ServerConfig) -> Self {
        let blobs = BlobStore::local(&dir.path().join("blobs")).expect("blob folder");
        let state = AppState::new(store.clone(), config, blobs);
        let boot = svc_service::bootstrap::ensure_default(&state.service)
            .await
            .expect("bootstrap")
            .expect("an empty database is bootstrapped");
        let router = svc_server::app(state.clone());
        let token = boot.setup_token.expose().to_string();
        TestApp { dir, store, router, state, project: boot.project, token, database }
    }

    pub fn pid(&self) -> &str {
        &self.project.id
    }

    /// The project key (`pr_...`) the ingest API and the widget use.
    pub fn key(&self) -> &str {
        &self.project.project_key
    }

    /// `/api/v1/projects/<id><rest>`.
    pub fn p(&self, rest: &str) -> String {
        format!("/api/v1/projects/{}{}", self.project.id, rest)
    }

    /// Sends a prepared request. Only the dashboard's sign-in, setup and sign-out answers set a
    /// cookie (its session), and the inbox the view it remembers; no answer of the API, ingest or
    /// the tool endpoint ever does.
    pub async fn send(&self, request: Request<Body>) -> Resp {
        let sets_session =
            ["/sign-in", "/sign-out", "/sign-out-everywhere", "/setup", "/"].contains(&request.uri().path());
        let response = self.router.clone().oneshot(request).await.expect("the router is infallible");
        if sets_session { read_resp(response).await } else { into_resp(response).await }
    }

    /// A request with an optional raw `Authorization` header value and an optional raw body.
    pub async fn raw(&self, method: &str, path: &str, authorization: Option<&str>, body: Option<Vec<u8>>) -> Resp {
        let mut builder = Request::builder().method(Method::from_bytes(method.as_bytes()).unwrap()).uri(path);
        if let Some(value) = authorization {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        let body = match body {
            Some(bytes) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(bytes)
            }
            None => Body::empty(),
        };
        self.send(builder.body(body).unwrap()).await
    }

    /// A request with a bearer key and an optional JSON body.
    pub async fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> Resp {
        let authorization = format!("Bearer {key}");
        self.raw(method, path, Some(&authorization), body.map(|b| serde_json::to_vec(&b).unwrap())).await
    }

    pub async fn get(&self, path: &str, key: &str) -> Resp {
        self.call("GET", path, key, None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> Resp {
        self.call("POST", path, key, Some(body)).await
    }

    pub async fn patch(&self, path: &str, key: &str, body: Value) -> Resp {
        self.call("PATCH", path, key, Some(body)).await
    }

    /// A request with the setup token and an optional JSON body.
    pub async fn rest(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.call(method, path, &self.token, body).await
    }

    /// The report as `GET .../feedback/:id` shows it.
    pub async fn stored(&self, report_id: &str) -> Value {
        self.rest("GET", &self.p(&format!("/feedback/{report_id}")), None).await.ok(200).clone()
    }

    /// Every report of the project (up to 100), newest first.
    pub async fn reports(&self) -> Vec<Value> {
        let page = self.rest("GET", &self.p("/feedback?limit=100"), None).await;
        page.ok(200)["items"].as_array().unwrap().clone()
    }

    pub async fn patch_project(&self, body: Value) -> Value {
        self.rest("PATCH", &self.p(""), Some(body)).await.ok(200).clone()
    }

    /// Sets (or clears) the project's identity secret.
    pub async fn set_identity_secret(&self, secret: Option<&str>) {
        self.store.set_identity_secret(self.pid(), secret).await.expect("set identity secret");
    }

    /// Mints a key through the API with the setup token; returns the whole response body.
    pub async fn mint_api(&self, scopes: &[&str]) -> Value {
        let resp = self.post(&self.p("/keys"), &self.token, json!({"name": "test key", "scopes": scopes})).await;
        resp.ok(201).clone()
    }

    /// Mints a project key through the service (any scopes, `apikey:write` and `*` included);
    /// returns (key id, plaintext).
    pub async fn mint(&self, scopes: &[&str]) -> (String, String) {
        mint_for(self.service(), &self.project, scopes).await
    }

    /// An org-wide key (no project): it must be refused on every REST route.
    pub async fn mint_org_wide(&self, scopes: &[&str]) -> String {
        let (_, secret) = keys::mint(
            self.service(),
            MintRequest {
                org_id: self.project.org_id.clone(),
                project_id: None,
                name: "org key".into(),
                scopes: scopes.iter().map(|s| s.to_string()).collect(),
                ttl_secs: None,
                origin: KeyOrigin::Cli,
                by: svc_service::audit::command_line(),
            },
        )
        .await
        .expect("mint org-wide key");
        secret.expose().to_string()
    }

    /// A second project in the same organization, with a `*` key of its own.
    pub async fn other_project(&self) -> (Project, String) {
        let project = svc_service::projects::create_project(
            self.service(),
            &svc_service::principal::Principal::Operator,
            &self.project.org_id,
            "Other",
        )
        .await
        .expect("create project");
        let (_, key) = mint_for(self.service(), &project, &["*"]).await;
        (project, key)
    }

    /// Stores a key whose expiry is already past (as if the clock had moved on); returns
    /// (key id, plaintext).
    pub async fn expired_key(&self) -> (String, String) {
        let plaintext = ids::new_secret_key();
        let now = time::now_ms();
        let key = ApiKey {
            id: ids::new_id(),
            project_id: Some(self.project.id.clone()),
            org_id: self.project.org_id.clone(),
            name: "expired".into(),
            key_hash: svc_core::secret::hash_secret(&plaintext),
            scopes: vec!["*".into()],
            origin: KeyOrigin::Api,
            expires_at: Some(now - 1_000),
            revoked_at: None,
            last_used_at: None,
            agent_name: None,
            agent_owner: None,
            created_at: now - 120_000,
        };
        self.store.create_key(&key).await.expect("store key");
        (key.id, plaintext)
    }

    /// Files a report in this project (see [`Seed`]).
    pub async fn seed(&self, seed: Seed) -> Report {
        seed_report(&self.store, &self.project.id, seed).await
    }

    /// Files `n` reports with texts `report 0`, `report 1`, ... (oldest first); returns them in that order.
    pub async fn seed_many(&self, n: usize) -> Vec<Report> {
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(self.seed(Seed::text(&format!("report {i}"))).await);
        }
        out
    }

    /// Stores a blob (row and bytes) in `project_id`; returns its id.
    pub async fn seed_blob(&self, project_id: &str, kind: &str, mime: &str, data: &[u8], name: Option<&str>) -> String {
        let id = ids::new_id();
        let blob = Blob {
            id: id.clone(),
            project_id: project_id.into(),
            kind: kind.into(),
            mime: mime.into(),
            bytes: data.len() as i64,
            width: None,
            height: None,
            duration_ms: None,
            name: name.map(String::from),
            report_id: None,
            created_at: time::now_ms(),
        };
        self.store.create_blob(&blob).await.expect("store blob row");
        let mut writer = self.state.blobs.writer(&id).expect("blob writer");
        writer.write(axum::body::Bytes::copy_from_slice(data)).await.expect("write blob");
        writer.finish().await.expect("finish blob");
        id
    }

    pub async fn seed_comment(&self, report_id: &str, text: &str, draft: bool) -> Comment {
        let now = time::now_ms();
        let comment = Comment {
            id: ids::new_id(),
            report_id: report_id.into(),
            project_id: self.project.id.clone(),
            author: Author {
                kind: svc_core::model::AuthorKind::Agent,
                id: Some("agent:abc".into()),
                label: Some("Claude".into()),
            },
            text: text.into(),
            kind: Some("fix".into()),
            draft,
            created_at: now,
            published_at: if draft { None } else { Some(now) },
        };
        let write = svc_store::Write::Comment(comment.clone());
        let change = svc_store::Change::anywhere(comment.author.clone(), now, vec![write]);
        self.store.apply(&change).await.expect("store comment");
        comment
    }
}

/// Reads a response whole; asserts that it sets no cookie (the API, ingest, the tool endpoint and
/// the widget never do).
pub async fn into_resp(response: axum::response::Response) -> Resp {
    assert!(response.headers().get(header::SET_COOKIE).is_none(), "no response outside the dashboard sets a cookie");
    read_resp(response).await
}

/// Reads a response whole.
pub async fn read_resp(response: axum::response::Response) -> Resp {
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("read body").to_vec();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Resp { status, headers, text, bytes, body }
}

// ---------------------------------------------------------------------------------------------
// Dashboard pages: forms, session cookies and the people who sign in.

/// The password every [`TestApp::user`] gets.
pub const PASSWORD: &str = "correct horse battery";

impl Resp {
    /// The `Set-Cookie` header, if the response sets a cookie.
    pub fn set_cookie(&self) -> Option<&str> {
        self.header("set-cookie")
    }

    /// The `name=value` part of the cookie the response sets.
    #[track_caller]
    pub fn cookie(&self) -> String {
        let set = self.set_cookie().unwrap_or_else(|| panic!("no cookie set ({}): {}", self.status, self.text));
        set.split(';').next().unwrap().trim().to_string()
    }

    pub fn location(&self) -> Option<&str> {
        self.header("location")
    }
}

impl TestApp {
    /// Sends a dashboard request; its response may set a cookie.
    pub async fn page(&self, request: Request<Body>) -> Resp {
        read_resp(self.router.clone().oneshot(request).await.expect("the router is infallible")).await
    }

    /// `GET path`, with a session cookie (`name=value`) when given.
    pub async fn get_page(&self, path: &str, cookie: Option<&str>) -> Resp {
        let mut builder = Request::builder().uri(path);
        if let Some(cookie) = cookie {
            builder = builder.header(header::COOKIE, cookie);
        }
        self.page(builder.body(Body::empty()).unwrap()).await
    }

    /// A form POST as a browser sends it from the dashboard's own page (`Origin` is the public URL).
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)], cookie: Option<&str>) -> Resp {
        self.post_form_with(path, fields, cookie, &[]).await
    }

    /// A form POST with other headers: a given `Origin` replaces the dashboard's own; `("origin",
    /// "")` sends none.
    pub async fn post_form_with(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        cookie: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("origin")) {
            builder = builder.header(header::ORIGIN, self.state.config.public_url.as_str());
        }
        for (name, value) in headers {
            if !value.is_empty() {
                builder = builder.header(*name, *value);
            }
        }
        if let Some(cookie) = cookie {
            builder = builder.header(header::COOKIE, cookie);
        }
        self.page(builder.body(Body::from(body)).unwrap()).await
    }

    /// A dashboard user with [`PASSWORD`], owner of the organization "Default".
    pub async fn user(&self, email: &str) -> svc_core::account::User {
        use svc_service::accounts::{self, NewUser};
        let new = NewUser::parse(email, "", svc_core::secret::Secret::new(PASSWORD)).expect("a valid new user");
        let join = Some((self.project.org_id.as_str(), svc_core::account::Role::Owner));
        accounts::create_user(self.service(), new, join).await.expect("create user")
    }

    /// Signs in through the form; returns the session cookie (`name=value`).
    pub async fn sign_in(&self, email: &str, password: &str) -> String {
        let resp = self.post_form("/sign-in", &[("email", email), ("password", password)], None).await;
        assert_eq!(resp.status, StatusCode::SEE_OTHER, "sign-in: {}", resp.text);
        resp.cookie()
    }

    /// Whether a session cookie still signs someone in (the sign-in page then sends them on).
    pub async fn signed_in(&self, cookie: &str) -> bool {
        let resp = self.get_page("/sign-in", Some(cookie)).await;
        match resp.status.as_u16() {
            303 => true,
            200 => false,
            other => panic!("GET /sign-in answered {other}: {}", resp.text),
        }
    }
}

/// The CSRF token of the session behind a cookie (`name=value`), as the dashboard's forms carry it.
pub fn csrf_of(cookie: &str) -> String {
    svc_server::dashboard::csrf_token(cookie.split_once('=').expect("name=value").1)
}

pub async fn mint_for(service: &svc_service::Service, project: &Project, scopes: &[&str]) -> (String, String) {
    let (key, secret) = keys::mint(
        service,
        MintRequest {
            org_id: project.org_id.clone(),
            project_id: Some(project.id.clone()),
            name: format!("key {}", scopes.join(" ")),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            ttl_secs: None,
            origin: KeyOrigin::Api,
            by: svc_service::audit::command_line(),
        },
    )
    .await
    .expect("mint key");
    (key.id, secret.expose().to_string())
}

/// What a seeded report carries.
#[derive(Clone)]
pub struct Seed {
    pub text: String,
    pub channel_key: String,
    pub status: String,
    pub artifact_id: Option<String>,
    /// Creation time; now when `None`.
    pub created_at: Option<i64>,
}

impl Seed {
    pub fn text(text: &str) -> Self {
        Seed {
            text: text.into(),
            channel_key: "bug".into(),
            status: "new".parse().unwrap(),
            artifact_id: None,
            created_at: None,
        }
    }
    pub fn channel(mut self, key: &str) -> Self {
        self.channel_key = key.into();
        self
    }
    pub fn status(mut self, status: &str) -> Self {
        self.status = status.into();
        self
    }
    pub fn artifact(mut self, artifact_id: &str) -> Self {
        self.artifact_id = Some(artifact_id.into());
        self
    }
    pub fn at(mut self, ms: i64) -> Self {
        self.created_at = Some(ms);
        self
    }
}

pub async fn seed_report(store: &DynStore, project_id: &str, seed: Seed) -> Report {
    let created_at = seed.created_at.unwrap_or_else(time::now_ms);
    let blocks: Vec<svc_core::block::Block> =
        serde_json::from_value(json!([{"type": "text", "text": seed.text}])).expect("a text block");
    let mut context: svc_core::context::Context =
        serde_json::from_value(json!({"url": "https://app.example.com/page", "extra": {"source": "test"}}))
            .expect("a context");
    context.artifact_id = seed.artifact_id.clone();
    let report = Report {
        // Ids are time-ordered within the process, so the newest report always has the largest id.
        id: ids::new_id(),
        project_id: project_id.into(),
        channel_key: seed.channel_key,
        status: seed.status.parse().expect("a status"),
        title: svc_core::report::derive_title(&blocks),
        blocks,
        context,
        identity: None,
        identity_error: None,
        author: Author {
            kind: svc_core::model::AuthorKind::Reporter,
            id: Some("user-1".into()),
            label: Some("Ada".into()),
        },
        artifact_id: seed.artifact_id,
        url: Some("https://app.example.com/page".into()),
        created_at,
        updated_at: created_at,
        assignee: None,
        labels: Vec::new(),
    };
    store
        .create_report(NewReport { report: report.clone(), blob_ids: vec![], idempotency_key: None })
        .await
        .expect("store report");
    report
}

/// Every (method, path) of the REST API, with `{projectId}`-style parameters, as the OpenAPI
/// document must list them.
pub const REST_ROUTES: [(&str, &str); 20] = [
    ("get", "/api/v1/me"),
    ("get", "/api/v1/projects/{projectId}"),
    ("patch", "/api/v1/projects/{projectId}"),
    ("get", "/api/v1/projects/{projectId}/feedback"),
    ("get", "/api/v1/projects/{projectId}/feedback/{reportId}"),
    ("patch", "/api/v1/projects/{projectId}/feedback/{reportId}"),
    ("get", "/api/v1/projects/{projectId}/feedback/{reportId}/comments"),
    ("get", "/api/v1/projects/{projectId}/rooms"),
    ("post", "/api/v1/projects/{projectId}/rooms"),
    ("patch", "/api/v1/projects/{projectId}/rooms/{artifactId}"),
    ("get", "/api/v1/projects/{projectId}/channels"),
    ("post", "/api/v1/projects/{projectId}/channels"),
    ("patch", "/api/v1/projects/{projectId}/channels/{channelKey}"),
    ("post", "/api/v1/projects/{projectId}/hints"),
    ("post", "/api/v1/projects/{projectId}/keys"),
    ("delete", "/api/v1/projects/{projectId}/keys/{keyId}"),
    ("get", "/api/v1/projects/{projectId}/flags"),
    ("put", "/api/v1/projects/{projectId}/flags/{key}"),
    ("get", "/api/v1/projects/{projectId}/blobs/{blobId}"),
    ("get", "/api/v1/openapi.json"),
];

/// One project route: method, path under `/api/v1/projects/{p}` (placeholders `{r}` report id,
/// `{a}` artifact id, `{k}` key id, `{b}` blob id), the scope it needs, a valid body and the success status.
pub struct RouteCase {
    pub method: &'static str,
    pub path: &'static str,
    pub scope: &'static str,
    pub body: Option<Value>,
    pub success: u16,
}

/// Every keyed project route with a body that succeeds on [`Fixture`].
pub fn project_routes() -> Vec<RouteCase> {
    let case = |method, path, scope, body: Option<Value>, success| RouteCase { method, path, scope, body, success };
    vec![
        case("GET", "", "project:read", None, 200),
        case("PATCH", "", "project:write", Some(json!({"name": "Renamed"})), 200),
        case("GET", "/feedback", "feedback:read", None, 200),
        case("GET", "/feedback/{r}", "feedback:read", None, 200),
        case("PATCH", "/feedback/{r}", "feedback:write", Some(json!({"status": "triaged"})), 200),
        case("GET", "/feedback/{r}/comments", "feedback:read", None, 200),
        case("GET", "/rooms", "feedback:read", None, 200),
        case("POST", "/rooms", "feedback:write", Some(json!({"artifactId": "matrix-room"})), 201),
        case("PATCH", "/rooms/{a}", "feedback:write", Some(json!({"title": "Renamed room"})), 200),
        case("GET", "/channels", "channel:read", None, 200),
        case(
            "POST",
            "/channels",
            "channel:write",
            Some(json!({"key": "matrix", "name": "Matrix", "color": "#112233", "mascot": "owl"})),
            201,
        ),
        case("PATCH", "/channels/bug", "channel:write", Some(json!({"name": "Bugs!"})), 200),
        case("POST", "/hints", "channel:write", Some(json!({"channelKey": "bug", "weight": "max"})), 200),
        case("POST", "/keys", "apikey:write", Some(json!({"name": "minted", "scopes": ["feedback:read"]})), 201),
        case("DELETE", "/keys/{k}", "apikey:write", None, 200),
        case("GET", "/flags", "project:read", None, 200),
        case("PUT", "/flags/beta", "project:write", Some(json!({"enabled": true})), 200),
        case("GET", "/blobs/{b}", "feedback:read", None, 200),
    ]
}

/// Resources the route table's placeholders point at.
pub struct Fixture {
    pub report_id: String,
    pub artifact_id: String,
    pub victim_key_id: String,
    pub blob_id: String,
}

impl TestApp {
    pub async fn fixture(&self) -> Fixture {
        let report = self.seed(Seed::text("fixture report").artifact("fixture-room")).await;
        let (victim_key_id, _) = self.mint(&["feedback:read"]).await;
        let blob_id = self.seed_blob(&self.project.id, "screenshot", "image/png", b"\x89PNG fixture", None).await;
        Fixture { report_id: report.id, artifact_id: "fixture-room".into(), victim_key_id, blob_id }
    }

    pub fn route_path(&self, case: &RouteCase, fixture: &Fixture) -> String {
        self.p(&case
            .path
            .replace("{r}", &fixture.report_id)
            .replace("{a}", &fixture.artifact_id)
            .replace("{k}", &fixture.victim_key_id)
            .replace("{b}", &fixture.blob_id))
    }
}

/// Whether `text` is an ISO 8601 UTC timestamp as Svc writes them.
pub fn is_iso(value: &Value) -> bool {
    value.as_str().and_then(time::parse_iso).is_some()
}

pub fn is_object_id(value: &Value) -> bool {
    value.as_str().is_some_and(ids::is_object_id)
}

/// The keys of a JSON object, sorted.
pub fn keys_of(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("a JSON object").keys().cloned().collect();
    keys.sort();
    keys
}

#[track_caller]
pub fn assert_has_fields(value: &Value, fields: &[&str]) {
    let object = value.as_object().unwrap_or_else(|| panic!("not an object: {value}"));
    for field in fields {
        assert!(object.contains_key(*field), "missing field {field} in {value}");
    }
}

/// Walks `before`/`nextCursor` from the first page to the last; returns every id in order.
pub async fn walk(app: &TestApp, limit: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            None => app.p(&format!("/feedback?limit={limit}")),
            Some(before) => app.p(&format!("/feedback?limit={limit}&before={before}")),
        };
        let page = app.get(&path, &app.token).await.ok(200).clone();
        pages += 1;
        assert!(pages < 1_000, "paging does not end");
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= limit);
        ids.extend(items.iter().map(|r| r["id"].as_str().unwrap().to_string()));
        match &page["nextCursor"] {
            Value::Null => {
                assert!(!items.is_empty() || ids.is_empty(), "a last page is not empty unless the list is");
                break;
            }
            Value::String(next) => {
                assert_eq!(items.len(), limit, "only the last page is short");
                assert_eq!(next, items.last().unwrap()["id"].as_str().unwrap());
                cursor = Some(next.clone());
            }
            other => panic!("nextCursor must be a string or null, not {other}"),
        }
    }
    ids
}

/// For every route: a key with every scope but the one the route needs gets 403; a key with only
/// that scope succeeds.
pub async fn run_scope_matrix(app: &TestApp) {
    let fixture = app.fixture().await;
    let cases = project_routes();
    // Every scope is needed by some route, and every route is in the table.
    for scope in ALL_SCOPES {
        assert!(cases.iter().any(|c| c.scope == scope), "no route needs {scope}");
    }
    assert_eq!(cases.len() + 1, REST_ROUTES.len() - 1, "the table covers every keyed route but /me");

    for case in &cases {
        let path = app.route_path(case, &fixture);
        let all_but: Vec<&str> = ALL_SCOPES.iter().copied().filter(|s| *s != case.scope).collect();
        let (_, lacking) = app.mint(&all_but).await;
        let resp = app.call(case.method, &path, &lacking, case.body.clone()).await;
        assert_eq!(resp.status.as_u16(), 403, "{} {} without {}: {}", case.method, case.path, case.scope, resp.text);
        let message = resp.error(403, "FORBIDDEN");
        assert!(message.contains(case.scope), "the message names the missing scope: {message}");

        let (_, only) = app.mint(&[case.scope]).await;
        let resp = app.call(case.method, &path, &only, case.body.clone()).await;
        assert_eq!(
            resp.status.as_u16(),
            case.success,
            "{} {} with only {}: {}",
            case.method,
            case.path,
            case.scope,
            resp.text
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The real server on a loopback socket, and raw HTTP/1.1 for what client libraries hide: silence,
// trickled headers, bodies that stop half-way.

/// `svc_server::serve` running the app on `127.0.0.1:0`.
pub struct Running {
    pub address: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub async fn start(app: &TestApp, settings: svc_server::ConnectionSettings) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(svc_server::serve(listener, app.router.clone(), settings, async move {
            let _ = stopped.await;
        }));
        Running { address, stop: Some(stop), done: Some(done) }
    }

    pub async fn connect(&self) -> tokio::net::TcpStream {
        tokio::net::TcpStream::connect(self.address).await.expect("connect to the server")
    }

    /// Sends the shutdown signal; `finished` then waits for `serve` to return.
    pub fn shut_down(&mut self) {
        let _ = self.stop.take().expect("shut down once").send(());
    }

    /// Whether `serve` returned within `within`.
    pub async fn finished(&mut self, within: std::time::Duration) -> bool {
        let done = self.done.as_mut().expect("running");
        tokio::time::timeout(within, done).await.is_ok()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(done) = &self.done {
            done.abort();
        }
    }
}

/// The app on a real loopback socket, served as `svc serve` serves it (the peer address as
/// `ConnectInfo`, the default connection settings); returns its base URL. The server runs until the
/// test's runtime ends.
pub async fn serve(app: &TestApp) -> String {
    let server = Running::start(app, svc_server::ConnectionSettings::default()).await;
    let address = server.address;
    // Left running for the rest of the test.
    std::mem::forget(server);
    format!("http://{address}")
}

/// A response read off the wire.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
}

/// Reads one response with a `Content-Length` body; panics if none arrives within 10 s.
pub async fn read_response(stream: &mut tokio::net::TcpStream) -> RawResponse {
    use tokio::io::AsyncReadExt;
    let read = async {
        let mut data = Vec::new();
        let mut chunk = [0u8; 8192];
        let head_end = loop {
            if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            let n = stream.read(&mut chunk).await.expect("read the response");
            assert!(n > 0, "the connection closed before a response: {:?}", String::from_utf8_lossy(&data));
            data.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(data[..head_end].to_vec()).expect("a text head");
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().expect("a status code");
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .map_or(0, |(_, value)| value.parse().expect("a Content-Length"));
        let mut body = data[head_end + 4..].to_vec();
        while body.len() < length {
            let n = stream.read(&mut chunk).await.expect("read the body");
            assert!(n > 0, "the connection closed in the middle of the body");
            body.extend_from_slice(&chunk[..n]);
        }
        body.truncate(length);
        RawResponse { status, headers, body }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read).await.expect("a response within 10 s")
}

/// Waits until the server closes the connection (end of stream, or a reset when it closed with
/// unread data); returns what it sent before closing. Panics if it is still open after `within`.
pub async fn wait_closed(stream: &mut tokio::net::TcpStream, within: std::time::Duration) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let read = async {
        let mut received = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) => return received,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => return received,
                Err(error) => panic!("reading failed: {error}"),
            }
        }
    };
    tokio::time::timeout(within, read)
        .await
        .unwrap_or_else(|_| panic!("the connection was still open after {within:?}"))
}

/// Whether the server has neither closed the connection nor sent anything on it (checked without waiting).
pub fn still_open_and_silent(stream: &tokio::net::TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
}

/// A request body of `chunks` pieces of `chunk_size` bytes, then (when `stall`) nothing more, ever;
/// the counter says how many bytes were taken from it.
pub fn counted_body(
    chunks: usize,
    chunk_size: usize,
    stall: bool,
) -> (Body, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use futures_util::StreamExt;
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = taken.clone();
    let pieces = futures_util::stream::iter((0..chunks).map(move |_| vec![b' '; chunk_size]));
    let rest = if stall { futures_util::stream::pending().boxed() } else { futures_util::stream::empty().boxed() };
    let stream = pieces.chain(rest).map(move |piece: Vec<u8>| {
        counter.fetch_add(piece.len(), std::sync::atomic::Ordering::SeqCst);
        Ok::<_, std::io::Error>(axum::body::Bytes::from(piece))
    });
    (Body::from_stream(stream), taken)
}

/// Sends `request`; panics if no answer comes within 10 s (as when a handler waits for a body that
/// never ends).
pub async fn send_within(app: &TestApp, request: Request<Body>) -> Resp {
    tokio::time::timeout(std::time::Duration::from_secs(10), app.send(request))
        .await
        .expect("an answer without waiting for the body")
}

/// A real PNG of 8-bit RGB pixels (`rgb` holds width × height × 3 bytes), written with stored
/// deflate blocks so its size follows the pixel count (tests rely on that).
pub fn rgb_png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::NoCompression);
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(rgb).expect("PNG data");
    writer.finish().expect("PNG end");
    out
}
