//! The ingest API on a [`TestApp`]: requests with the project key, hand-built multipart bodies and
//! real little media files.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};

use super::{Resp, TestApp};

pub const PROJECT_KEY: &str = "x-svc-project-key";
pub const IDENTITY: &str = "x-svc-identity";

/// The fields of a channel as `/ingest/channels` (and the per-project loader) give it.
pub const CHANNEL_FIELDS: [&str; 11] = [
    "id",
    "key",
    "name",
    "color",
    "mascot",
    "baseWeight",
    "archived",
    "projectId",
    "createdAt",
    "updatedAt",
    "matchers",
];

impl TestApp {
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
        self.file_report_with(&[], body).await
    }

    /// [`TestApp::file_report`] with extra headers (e.g. `x-svc-identity`).
    pub async fn file_report_with(&self, headers: &[(&str, &str)], body: Value) -> String {
        let resp = self.report_with(self.key(), headers, body).await;
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
    super::rgb_png(width, height, &rgb)
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

// ---- report bodies -------------------------------------------------------------------------------

pub fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A report body of one text block.
pub fn text_report(text: &str) -> Value {
    json!({"blocks": [text_block(text)]})
}
