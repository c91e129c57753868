//! Fixtures for the ingest API tests: an app over a fresh SQLite store and a local blob folder in its
//! own temporary directory, driven in process with `tower::ServiceExt::oneshot` (or over a real socket
//! where the peer address matters), plus hand-built multipart bodies and real little media files.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use serde_json::{Value, json};
use svc_blob::BlobStore;
use svc_core::model::Project;
use svc_server::{AppState, ServerConfig};
use svc_store::DynStore;
use tower::ServiceExt;

pub const PROJECT_KEY: &str = "x-svc-project-key";
pub const IDENTITY: &str = "x-svc-identity";

pub struct App {
    /// Kept so the database and blob folders live as long as the app.
    pub dir: tempfile::TempDir,
    pub store: DynStore,
    /// The app's blob store (a local folder under `dir`), shared with the router.
    pub blobs: BlobStore,
    pub router: axum::Router,
    /// The bootstrapped project "Default".
    pub project: Project,
    /// The bootstrap setup token (scope `*`), for reading results back through REST.
    pub token: String,
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Asserts the status and returns the JSON body.
    #[track_caller]
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text());
        &self.body
    }

    /// Asserts an ingest error: this status and exactly `{"error": code}`.
    #[track_caller]
    pub fn ingest_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text());
        assert_eq!(self.body, json!({ "error": code }), "ingest error body");
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub fn no_rate_limits() -> ServerConfig {
    ServerConfig { rate_limits: false, ..Default::default() }
}

impl App {
    pub async fn new() -> Self {
        Self::with_config(no_rate_limits()).await
    }

    pub async fn with_config(config: ServerConfig) -> Self {
        Self::over(tempfile::tempdir().expect("temporary folder"), config).await
    }

    /// The app with its data (database and blob folder) in a new folder inside `parent`.
    pub async fn in_folder(parent: &std::path::Path, config: ServerConfig) -> Self {
        Self::over(tempfile::tempdir_in(parent).expect("temporary folder"), config).await
    }

    async fn over(dir: tempfile::TempDir, config: ServerConfig) -> Self {
        let url = format!("sqlite://{}", dir.path().join("svc.db").display());
        let store = svc_store::connect(&url).await.expect("open store");
        let blobs = BlobStore::local(&dir.path().join("blobs")).expect("blob folder");
        let boot = svc_server::service::bootstrap::ensure_default(store.as_ref())
            .await
            .expect("bootstrap")
            .expect("an empty database is bootstrapped");
        let router = svc_server::app(AppState::new(store.clone(), config).with_blob_store(blobs.clone()));
        App { dir, store, blobs, router, project: boot.project, token: boot.setup_token.expose().to_string() }
    }

    pub fn key(&self) -> &str {
        &self.project.project_key
    }

    pub fn pid(&self) -> &str {
        &self.project.id
    }

    /// `/api/v1/projects/<id><rest>`.
    pub fn p(&self, rest: &str) -> String {
        format!("/api/v1/projects/{}{}", self.project.id, rest)
    }

    /// Sends a prepared request. No response of this service ever sets a cookie.
    pub async fn send(&self, request: Request<Body>) -> Resp {
        let response = self.router.clone().oneshot(request).await.expect("the router is infallible");
        into_resp(response).await
    }

    // ---- ingest -------------------------------------------------------------------------------

    /// An ingest request with an optional project key and extra headers.
    pub async fn ingest(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Body,
    ) -> Resp {
        let mut builder = Request::builder().method(Method::from_bytes(method.as_bytes()).unwrap()).uri(path);
        if let Some(key) = key {
            builder = builder.header(PROJECT_KEY, key);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        self.send(builder.body(body).unwrap()).await
    }

    /// `GET /ingest/<path>` with the project's key.
    pub async fn ingest_get(&self, path: &str) -> Resp {
        self.ingest("GET", path, Some(self.key()), &[], Body::empty()).await
    }

    /// `POST /ingest/report` with the project's key.
    pub async fn report(&self, body: Value) -> Resp {
        self.report_with(self.key(), &[], body).await
    }

    /// `POST /ingest/report` with a given key and extra headers.
    pub async fn report_with(&self, key: &str, headers: &[(&str, &str)], body: Value) -> Resp {
        self.report_raw(key, headers, serde_json::to_vec(&body).unwrap()).await
    }

    pub async fn report_raw(&self, key: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Resp {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        self.ingest("POST", "/ingest/report", Some(key), &all, Body::from(body)).await
    }

    /// Files a report and returns its id (asserting 200).
    pub async fn file_report(&self, body: Value) -> String {
        let resp = self.report(body).await;
        let answer = resp.ok(200);
        assert_eq!(answer.as_object().unwrap().len(), 1, "the answer is {{reportId}}: {answer}");
        answer["reportId"].as_str().expect("reportId").to_string()
    }

    /// `POST /ingest/blob` with the project's key.
    pub async fn upload(&self, parts: &[Part]) -> Resp {
        self.upload_with(self.key(), parts).await
    }

    pub async fn upload_with(&self, key: &str, parts: &[Part]) -> Resp {
        let (content_type, body) = multipart(parts);
        self.ingest("POST", "/ingest/blob", Some(key), &[("content-type", &content_type)], Body::from(body)).await
    }

    /// Uploads one blob (`kind` first, then the file) and returns the whole answer (asserting 200).
    pub async fn upload_ok(&self, kind: &str, content_type: &str, data: &[u8]) -> Value {
        let resp = self.upload(&[Part::text("kind", kind), Part::file("upload.bin", content_type, data)]).await;
        resp.ok(200).clone()
    }

    /// Uploads one blob and returns its id.
    pub async fn blob(&self, kind: &str, content_type: &str, data: &[u8]) -> String {
        self.upload_ok(kind, content_type, data).await["blobId"].as_str().unwrap().to_string()
    }

    // ---- REST, to read results back ------------------------------------------------------------

    pub async fn rest(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.rest_as(&self.token.clone(), method, path, body).await
    }

    pub async fn rest_as(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        let mut builder = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        let body = match body {
            Some(value) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(serde_json::to_vec(&value).unwrap())
            }
            None => Body::empty(),
        };
        self.send(builder.body(body).unwrap()).await
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

    /// A second project in the same organization and a setup token for it.
    pub async fn second_project(&self, name: &str) -> (Project, String) {
        let project = svc_server::service::projects::create_project(self.store.as_ref(), &self.project.org_id, name)
            .await
            .expect("create project");
        let (_, secret) =
            svc_server::service::keys::mint_setup_token(self.store.as_ref(), &self.project.org_id, &project.id, None)
                .await
                .expect("mint setup token");
        (project, secret.expose().to_string())
    }
}

pub async fn into_resp(response: axum::response::Response) -> Resp {
    assert!(response.headers().get(header::SET_COOKIE).is_none(), "no response ever sets a cookie");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("read body").to_vec();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Resp { status, headers, bytes, body }
}

/// Serves the router on a loopback socket as `svc serve` does (the peer address as `ConnectInfo`,
/// the default connection settings); returns the base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let address = listener.local_addr().unwrap();
    tokio::spawn(svc_server::serve(
        listener,
        router,
        svc_server::ConnectionSettings::default(),
        std::future::pending(),
    ));
    format!("http://{address}")
}

// ---- multipart ------------------------------------------------------------------------------------

pub const BOUNDARY: &str = "svc-test-boundary-b7f3c1d2e9a04f6b";

/// One part of a `multipart/form-data` body.
pub enum Part {
    Text { name: String, value: String },
    File { name: String, filename: Option<String>, content_type: Option<String>, data: Vec<u8> },
}

impl Part {
    pub fn text(name: &str, value: &str) -> Part {
        Part::Text { name: name.into(), value: value.into() }
    }

    /// The `file` field with a file name and a declared type.
    pub fn file(filename: &str, content_type: &str, data: &[u8]) -> Part {
        Part::File {
            name: "file".into(),
            filename: Some(filename.into()),
            content_type: Some(content_type.into()),
            data: data.to_vec(),
        }
    }
}

/// Builds a `multipart/form-data` body; returns its Content-Type and bytes.
pub fn multipart(parts: &[Part]) -> (String, Vec<u8>) {
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match part {
            Part::Text { name, value } => {
                body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes());
                body.extend_from_slice(value.as_bytes());
            }
            Part::File { name, filename, content_type, data } => {
                let mut disposition = format!("Content-Disposition: form-data; name=\"{name}\"");
                if let Some(filename) = filename {
                    disposition.push_str(&format!("; filename=\"{filename}\""));
                }
                body.extend_from_slice(disposition.as_bytes());
                body.extend_from_slice(b"\r\n");
                if let Some(content_type) = content_type {
                    body.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
                }
                body.extend_from_slice(b"\r\n");
                body.extend_from_slice(data);
            }
        }
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={BOUNDARY}"), body)
}

// ---- media ---------------------------------------------------------------------------------------

/// A real, decodable PNG (8-bit RGB, no compression) of the given size.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            rgb.extend_from_slice(&[(x * 37) as u8, (y * 53) as u8, 0x80]);
        }
    }
    crate::common::rgb_png(width, height, &rgb)
}

/// The start of a WebM (Matroska EBML) file: enough for sniffing.
pub fn webm() -> Vec<u8> {
    let mut data = vec![0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01];
    data.extend_from_slice(b"\x42\x82\x84webm");
    data.extend(std::iter::repeat_n(0u8, 64));
    data
}

/// The start of an Ogg file: enough for sniffing.
pub fn ogg() -> Vec<u8> {
    let mut data = b"OggS\x00\x02".to_vec();
    data.extend(std::iter::repeat_n(0u8, 64));
    data
}

// ---- small helpers -------------------------------------------------------------------------------

pub fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A report body of one text block.
pub fn text_report(text: &str) -> Value {
    json!({"blocks": [text_block(text)]})
}

pub fn is_object_id(value: &Value) -> bool {
    value.as_str().is_some_and(svc_core::ids::is_object_id)
}
