//! The blob store: screenshots, audio notes and file attachments, kept in an object store.
//!
//! [`BlobStore`] wraps an [`object_store`] backend: a local folder (the embedded default, under the data
//! directory), S3 or an S3-compatible service (scale-out), or memory (tests). Every blob lives at
//! `objects/<blobId>` inside the store's root (the local folder, or the S3 prefix); a blob id is 24
//! lowercase hex characters and anything else is refused before a path is built.
//!
//! Writes stream: [`BlobWriter`] keeps at most a few parts in memory whatever the upload's size (small
//! blobs go up in one put, larger ones as a multipart upload). [`BlobWriter::finish`] returns once the
//! blob is durably stored. The local folder writes a blob under one part straight into its own new
//! file, syncs it and syncs the folder, one folder sync shared by the uploads finishing together (see
//! `folder.rs`); a larger one is staged by the backend, synced, renamed into place and the folder
//! synced. S3 answers a put or a completed multipart upload only once it is stored.
//!
//! A missing blob is not an error: reads answer `Ok(None)` and deleting a missing blob is `Ok(())`.
//!
//! Write health: a blob write that fails because of the backend (a full disk, an unreachable or
//! refusing bucket) marks the store as failing writes, and the next blob stored clears the mark.
//! While it is set, [`BlobStore::ping`] (readiness) writes and deletes a tiny probe object under
//! `health/` and fails until that works, so readiness follows whether blobs can be stored, which
//! listing a folder or a bucket cannot tell.

#![forbid(unsafe_code)]

mod folder;

use std::fmt;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutPayloadMut, RetryConfig, WriteMultipart};

/// The folder, inside the store's root, that holds the blobs (`objects/<blobId>`).
///
/// Part of the on-disk and in-bucket format: changing it orphans every stored blob.
pub const OBJECT_FOLDER: &str = "objects";

/// How long [`BlobStore::ping`] waits for the backend before reporting it unreachable.
pub const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// The object [`BlobStore::ping`] writes and deletes while blob writes are failing. Outside
/// [`OBJECT_FOLDER`], so it can never be taken for a blob.
pub const PROBE_OBJECT: &str = "health/probe";

/// Part size for the local folder and memory. Nothing requires a minimum there, so keep parts small.
const LOCAL_PART_SIZE: usize = 1024 * 1024;
const LOCAL_PARTS_IN_FLIGHT: usize = 2;
/// S3 refuses parts under 5 MiB (except the last). One part uploading while the next one fills keeps
/// an upload's memory under about two parts (10 MiB); a browser upload is slower than S3 anyway.
const S3_PART_SIZE: usize = 5 * 1024 * 1024;
const S3_PARTS_IN_FLIGHT: usize = 1;

/// What can go wrong with the blob store. A missing blob is not one of them (see the module docs).
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// The blob id is not 24 lowercase hex characters. The id itself is not repeated (untrusted text).
    #[error("invalid blob id: expected 24 lowercase hex characters")]
    InvalidId,
    /// The blob store setting cannot be used (bad `SVC_BLOB_STORE`, bad bucket name, ...).
    #[error("blob store setting: {0}")]
    Config(String),
    /// The local folder could not be created or reached.
    #[error("blob store folder: {0}")]
    Io(#[from] std::io::Error),
    /// The backend refused or failed an operation.
    #[error("blob store: {0}")]
    Store(#[from] object_store::Error),
    /// The backend did not answer a reachability check in time.
    #[error("blob store did not answer within {} s", .0.as_secs())]
    Timeout(Duration),
    /// A write after a failed write: the upload was already cleaned up and cannot go on.
    #[error("blob writer is closed after an earlier failure")]
    WriterClosed,
}

/// The bytes of a stored blob, in chunks, read as they are sent.
pub type BlobStream = BoxStream<'static, Result<Bytes, BlobError>>;

/// Is `blob_id` a well-formed blob id (24 lowercase hex characters)?
pub fn is_blob_id(blob_id: &str) -> bool {
    blob_id.len() == 24 && blob_id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The object path of a blob. The only place a path is built from an id, and only from a valid one.
fn object_path(blob_id: &str) -> Result<ObjectPath, BlobError> {
    if !is_blob_id(blob_id) {
        return Err(BlobError::InvalidId);
    }
    Ok(ObjectPath::from_iter([OBJECT_FOLDER, blob_id]))
}

/// Where the blobs are kept; cheap to clone (one shared backend).
#[derive(Clone)]
pub struct BlobStore {
    inner: Arc<dyn ObjectStore>,
    kind: Kind,
    description: Arc<str>,
    part_size: usize,
    parts_in_flight: usize,
    /// Whether blob writes currently fail (see the module docs); shared by every clone and writer.
    writes_failing: Arc<AtomicBool>,
    /// Clean-ups of dropped writers still running; shared by every clone and writer.
    cleanups: Arc<CleanUps>,
}

/// Counts the clean-up tasks of dropped writers, so [`BlobStore::settle`] can wait for them.
#[derive(Default)]
struct CleanUps {
    running: AtomicUsize,
    done: tokio::sync::Notify,
}

/// One running clean-up; dropped when the task ends (or is dropped unrun at runtime shutdown).
struct CleanUpGuard(Arc<CleanUps>);

impl CleanUpGuard {
    fn new(cleanups: &Arc<CleanUps>) -> Self {
        cleanups.running.fetch_add(1, Ordering::AcqRel);
        CleanUpGuard(Arc::clone(cleanups))
    }
}

impl Drop for CleanUpGuard {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.done.notify_waiters();
        }
    }
}

/// Notes a write's outcome in the write health: only failures of the backend count.
fn note_write<T>(writes_failing: &AtomicBool, result: &Result<T, BlobError>) {
    match result {
        Ok(_) => {
            // Stores only when failing: a store on every write would bounce the cache line.
            if writes_failing.load(Ordering::Relaxed) {
                writes_failing.store(false, Ordering::Relaxed);
            }
        }
        Err(BlobError::Store(_) | BlobError::Io(_) | BlobError::Timeout(_)) => {
            writes_failing.store(true, Ordering::Relaxed);
        }
        Err(_) => {}
    }
}

#[derive(Clone)]
enum Kind {
    /// `folder` writes the one-put blobs (see [`folder`]); the backend does the rest.
    Local {
        root: PathBuf,
        folder: Arc<folder::Folder>,
    },
    S3,
    Memory,
}

impl fmt::Debug for BlobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BlobStore").field(&self.description).finish()
    }
}

impl BlobStore {
    /// Blobs in a local folder (created if missing). Every write is synced and renamed into place
    /// before it is acknowledged.
    pub fn local(dir: &FsPath) -> Result<Self, BlobError> {
        std::fs::create_dir_all(dir)?;
        let root = std::fs::canonicalize(dir)?;
        let fs = LocalFileSystem::new_with_prefix(&root)?.with_fsync(true);
        let folder = Arc::new(folder::Folder::new(root.join(OBJECT_FOLDER)));
        Ok(Self {
            inner: Arc::new(fs),
            description: format!("local:{}", root.display()).into(),
            kind: Kind::Local { root, folder },
            part_size: LOCAL_PART_SIZE,
            parts_in_flight: LOCAL_PARTS_IN_FLIGHT,
            writes_failing: Arc::default(),
            cleanups: Arc::default(),
        })
    }

    /// Blobs in memory, gone with the process: for tests.
    pub fn memory() -> Self {
        Self {
            inner: Arc::new(InMemory::new()),
            kind: Kind::Memory,
            description: "memory".into(),
            part_size: LOCAL_PART_SIZE,
            parts_in_flight: LOCAL_PARTS_IN_FLIGHT,
            writes_failing: Arc::default(),
            cleanups: Arc::default(),
        }
    }

    /// Blobs in an S3 bucket (or an S3-compatible service at `endpoint`), under `prefix`.
    ///
    /// Credentials, region and the other settings come from the usual `AWS_*` variables
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, ...), then from
    /// the instance or container role. A custom endpoint is addressed path-style
    /// (`<endpoint>/<bucket>/<key>`), and may be plain `http://`.
    pub fn s3(bucket: &str, prefix: &str, endpoint: Option<&str>) -> Result<Self, BlobError> {
        if !is_bucket_name(bucket) {
            return Err(BlobError::Config(
                "the S3 bucket name must be 3 to 63 characters of a-z, 0-9, '.' and '-'".into(),
            ));
        }
        let prefix = prefix.trim_matches('/');
        let prefix_path = ObjectPath::parse(prefix)
            .map_err(|_| BlobError::Config("the S3 key prefix is not a valid object path".into()))?;
        let endpoint = endpoint.map(|e| e.trim().trim_end_matches('/')).filter(|e| !e.is_empty());

        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket).with_retry(RetryConfig {
            // The defaults retry for up to three minutes: too long for a request waiting on an upload.
            max_retries: 3,
            retry_timeout: Duration::from_secs(30),
            ..RetryConfig::default()
        });
        if let Some(endpoint) = endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                return Err(BlobError::Config("the S3 endpoint must start with http:// or https://".into()));
            }
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"))
                .with_virtual_hosted_style_request(false);
        }
        let s3 = builder.build()?;

        let mut description = format!("s3://{bucket}");
        if !prefix.is_empty() {
            description.push('/');
            description.push_str(prefix);
        }
        if let Some(endpoint) = endpoint {
            description.push_str(" at ");
            description.push_str(&endpoint_origin(endpoint));
        }
        let inner: Arc<dyn ObjectStore> =
            if prefix.is_empty() { Arc::new(s3) } else { Arc::new(PrefixStore::new(s3, prefix_path)) };
        Ok(Self {
            inner,
            kind: Kind::S3,
            description: description.into(),
            part_size: S3_PART_SIZE,
            parts_in_flight: S3_PARTS_IN_FLIGHT,
            writes_failing: Arc::default(),
            cleanups: Arc::default(),
        })
    }

    /// The store the server's settings select: no `SVC_BLOB_STORE` (or an empty one) is the folder
    /// `<data_dir>/blobs`; `s3://bucket/prefix` is S3 (with `SVC_S3_ENDPOINT` as the endpoint, if set);
    /// anything else is an error that says what is accepted.
    pub fn from_settings(
        blob_store_url: Option<&str>,
        data_dir: &FsPath,
        s3_endpoint: Option<&str>,
    ) -> Result<Self, BlobError> {
        let Some(url) = blob_store_url.map(str::trim).filter(|u| !u.is_empty()) else {
            return Self::local(&data_dir.join("blobs"));
        };
        match url.strip_prefix("s3://") {
            Some(rest) => {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                Self::s3(bucket, prefix, s3_endpoint)
            }
            None => {
                // Name the scheme only: the rest of a URL may hold a secret.
                let what = match url.split_once("://") {
                    Some((scheme, _)) => format!("the scheme {scheme:?} is not supported"),
                    None => "it is not a URL".to_string(),
                };
                Err(BlobError::Config(format!(
                    "SVC_BLOB_STORE must be s3://bucket/prefix, or unset for a folder under the data directory; {what}"
                )))
            }
        }
    }

    /// Where the blobs are, for logs and start-up messages: `local:/abs/path`, `s3://bucket/prefix`
    /// (with ` at <scheme://host:port>` for a custom endpoint) or `memory`. Never holds a secret.
    pub fn describe(&self) -> String {
        self.description.to_string()
    }

    /// Start writing the blob `blob_id`. What is read under that id before [`BlobWriter::finish`]
    /// returns is not the blob: nothing, or on the local folder a file being written. Nobody else knows
    /// a new blob's id before its upload is answered.
    pub fn writer(&self, blob_id: &str) -> Result<BlobWriter, BlobError> {
        Ok(BlobWriter {
            store: Arc::clone(&self.inner),
            path: object_path(blob_id)?,
            part_size: self.part_size,
            parts_in_flight: self.parts_in_flight,
            state: WriterState::Buffering(PutPayloadMut::new()),
            written: 0,
            folder: match &self.kind {
                Kind::Local { folder, .. } => Some(Arc::clone(folder)),
                Kind::S3 | Kind::Memory => None,
            },
            writes_failing: Arc::clone(&self.writes_failing),
            cleanups: Arc::clone(&self.cleanups),
        })
    }

    /// Waits until the clean-up of every writer dropped unfinished so far has run (its multipart upload
    /// aborted): for tests, and for a shutdown that wants nothing left behind.
    pub async fn settle(&self) {
        loop {
            let mut done = std::pin::pin!(self.cleanups.done.notified());
            // Registered before the count is read, so a clean-up ending in between still wakes us.
            done.as_mut().enable();
            if self.cleanups.running.load(Ordering::Acquire) == 0 {
                return;
            }
            done.await;
        }
    }

    /// The blob's size and its bytes as a stream (read as they are sent), or `None` if there is no such
    /// blob.
    pub async fn get(&self, blob_id: &str) -> Result<Option<(u64, BlobStream)>, BlobError> {
        let path = object_path(blob_id)?;
        match self.inner.get(&path).await {
            Ok(result) => {
                let size = result.meta.size;
                Ok(Some((size, result.into_stream().map_err(BlobError::from).boxed())))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The whole blob in memory, or `None` if there is no such blob. For small blobs; serve downloads
    /// with [`BlobStore::get`].
    pub async fn read_all(&self, blob_id: &str) -> Result<Option<Bytes>, BlobError> {
        let path = object_path(blob_id)?;
        let result = match self.inner.get(&path).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        match result.bytes().await {
            Ok(bytes) => Ok(Some(bytes)),
            // Deleted between the open and the read.
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Delete the blob. Deleting a blob that does not exist is fine.
    pub async fn delete(&self, blob_id: &str) -> Result<(), BlobError> {
        let path = object_path(blob_id)?;
        match self.inner.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the latest blob write failed because of the backend (see the module docs).
    pub fn writes_failing(&self) -> bool {
        self.writes_failing.load(Ordering::Relaxed)
    }

    /// A cheap check that the backend is reachable (for `/readyz`), bounded by [`PING_TIMEOUT`]. An empty
    /// store is fine. Local: the folder exists. S3: listing the blob folder answers (one request; it
    /// fails on a missing bucket or refused credentials). While blob writes are failing, also writes and
    /// deletes [`PROBE_OBJECT`], and clears the failing mark once that works.
    pub async fn ping(&self) -> Result<(), BlobError> {
        let reachable = self.reachable();
        tokio::time::timeout(PING_TIMEOUT, reachable).await.map_err(|_| BlobError::Timeout(PING_TIMEOUT))??;
        if self.writes_failing() {
            let probe = async {
                let path = ObjectPath::parse(PROBE_OBJECT).expect("a valid object path");
                self.inner.put(&path, Bytes::from_static(b"ok").into()).await?;
                match self.inner.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(BlobError::from(e)),
                }
            };
            let probed =
                tokio::time::timeout(PING_TIMEOUT, probe).await.unwrap_or(Err(BlobError::Timeout(PING_TIMEOUT)));
            note_write(&self.writes_failing, &probed);
            probed?;
        }
        Ok(())
    }

    async fn reachable(&self) -> Result<(), BlobError> {
        let check = async {
            match &self.kind {
                Kind::Local { root, .. } => {
                    let meta = tokio::fs::metadata(root).await?;
                    if !meta.is_dir() {
                        return Err(BlobError::Io(std::io::Error::new(
                            std::io::ErrorKind::NotADirectory,
                            format!("{} is not a folder", root.display()),
                        )));
                    }
                    Ok(())
                }
                Kind::S3 | Kind::Memory => {
                    let folder = ObjectPath::from(OBJECT_FOLDER);
                    match self.inner.list(Some(&folder)).next().await {
                        None | Some(Ok(_)) => Ok(()),
                        Some(Err(e)) => Err(e.into()),
                    }
                }
            }
        };
        check.await
    }
}

/// S3 bucket naming rules, loosely: enough to refuse text that is clearly not a bucket name.
fn is_bucket_name(bucket: &str) -> bool {
    (3..=63).contains(&bucket.len())
        && bucket.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-'))
        && !bucket.starts_with(['.', '-'])
        && !bucket.ends_with(['.', '-'])
}

/// `scheme://host[:port]` of an endpoint, without any user info, path or query.
fn endpoint_origin(endpoint: &str) -> String {
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("", endpoint));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}")
}

/// A blob being written. Feed it chunks with [`write`](Self::write), then [`finish`](Self::finish) it
/// (durable on return) or [`abort`](Self::abort) it (nothing left behind).
///
/// Memory stays bounded whatever the size: below one part the bytes are buffered and stored with a
/// single put; past it they go up as a multipart upload, one part at a time, with `write` waiting while
/// too many parts are in flight. A failed `write` cleans up the upload itself, and so does dropping an
/// unfinished writer (for example when the client goes away mid-upload: the clean-up runs as a task on
/// the current tokio runtime, and [`BlobStore::settle`] waits for it).
pub struct BlobWriter {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    part_size: usize,
    parts_in_flight: usize,
    state: WriterState,
    written: u64,
    /// The local folder, which stores a one-put blob itself (see [`folder`]).
    folder: Option<Arc<folder::Folder>>,
    /// The store's write health (see the module docs).
    writes_failing: Arc<AtomicBool>,
    /// The store's running clean-ups (see [`BlobStore::settle`]).
    cleanups: Arc<CleanUps>,
}

enum WriterState {
    /// Less than one part so far, all in memory.
    Buffering(PutPayloadMut),
    /// A multipart upload is under way.
    Uploading(WriteMultipart),
    /// Finished, aborted, or failed (and cleaned up).
    Closed,
}

impl fmt::Debug for BlobWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            WriterState::Buffering(_) => "buffering",
            WriterState::Uploading(_) => "uploading",
            WriterState::Closed => "closed",
        };
        f.debug_struct("BlobWriter")
            .field("path", &self.path.as_ref())
            .field("state", &state)
            .field("written", &self.written)
            .finish()
    }
}

impl BlobWriter {
    /// Append `chunk`. May wait while earlier parts are uploading (back-pressure). After an error the
    /// upload is already cleaned up and every later call fails with [`BlobError::WriterClosed`].
    pub async fn write(&mut self, chunk: Bytes) -> Result<(), BlobError> {
        let written = self.write_chunk(chunk).await;
        if written.is_err() {
            note_write(&self.writes_failing, &written);
        }
        written
    }

    async fn write_chunk(&mut self, chunk: Bytes) -> Result<(), BlobError> {
        let len = chunk.len() as u64;
        match &mut self.state {
            WriterState::Closed => return Err(BlobError::WriterClosed),
            _ if chunk.is_empty() => return Ok(()),
            WriterState::Buffering(buffer) if buffer.content_length() + chunk.len() < self.part_size => {
                buffer.push(chunk);
            }
            WriterState::Buffering(buffer) => {
                let buffered = std::mem::take(buffer).freeze();
                let upload = match self.store.put_multipart(&self.path).await {
                    Ok(upload) => upload,
                    Err(e) => {
                        self.state = WriterState::Closed;
                        return Err(e.into());
                    }
                };
                let mut parts = WriteMultipart::new_with_chunk_size(upload, self.part_size);
                for bytes in buffered {
                    parts.put(bytes);
                }
                parts.put(chunk);
                self.state = WriterState::Uploading(parts);
            }
            WriterState::Uploading(parts) => {
                if let Err(e) = parts.wait_for_capacity(self.parts_in_flight).await {
                    self.close().await;
                    return Err(e.into());
                }
                parts.put(chunk);
            }
        }
        self.written += len;
        Ok(())
    }

    /// The number of bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Store what was written under the blob id; returns its size. On `Ok` the blob is durably stored.
    /// On an error nothing is left behind.
    pub async fn finish(mut self) -> Result<u64, BlobError> {
        let finished = self.finish_upload().await;
        note_write(&self.writes_failing, &finished);
        finished
    }

    async fn finish_upload(&mut self) -> Result<u64, BlobError> {
        match std::mem::replace(&mut self.state, WriterState::Closed) {
            WriterState::Buffering(buffer) => match &self.folder {
                Some(folder) => {
                    let _turn = folder.turn_to_write().await;
                    let (folder, payload) = (Arc::clone(folder), buffer.freeze());
                    let name = self.path.filename().expect("a blob path ends in its id").to_string();
                    tokio::task::spawn_blocking(move || folder.put_new(&name, &payload))
                        .await
                        .map_err(std::io::Error::other)??;
                }
                None => {
                    self.store.put(&self.path, buffer.freeze()).await?;
                }
            },
            // Aborts the multipart upload itself when it fails.
            WriterState::Uploading(parts) => {
                parts.finish().await?;
                if let Some(folder) = &self.folder {
                    let (folder, name) = (Arc::clone(folder), self.path.filename().map(str::to_string));
                    // Best effort, as in `put_new`: the file is stored whether or not this works.
                    let _ = tokio::task::spawn_blocking(move || name.map(|name| folder.uncache(&name))).await;
                }
            }
            WriterState::Closed => return Err(BlobError::WriterClosed),
        }
        Ok(self.written)
    }

    /// Give up: nothing is stored under the blob id, and uploaded parts are discarded.
    pub async fn abort(mut self) {
        self.close().await;
    }

    async fn close(&mut self) {
        if let WriterState::Uploading(parts) = std::mem::replace(&mut self.state, WriterState::Closed) {
            // Best effort: S3 also drops incomplete uploads through a bucket lifecycle rule, if set.
            let _ = parts.abort().await;
        }
    }
}

impl Drop for BlobWriter {
    fn drop(&mut self) {
        if let WriterState::Uploading(parts) = std::mem::replace(&mut self.state, WriterState::Closed)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let running = CleanUpGuard::new(&self.cleanups);
            runtime.spawn(async move {
                let _ = parts.abort().await;
                drop(running);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids() {
        assert!(is_blob_id("0123456789abcdef01234567"));
        for bad in [
            "",
            "0123456789abcdef0123456",
            "0123456789abcdef012345678",
            "0123456789ABCDEF01234567",
            "0123456789abcdef0123456g",
            "../../../../etc/passwd00",
            "0123456789abcdef/1234567",
            "0123456789abcdef012345é",
        ] {
            assert!(!is_blob_id(bad), "{bad:?}");
            assert!(matches!(object_path(bad), Err(BlobError::InvalidId)));
        }
        assert_eq!(object_path("0123456789abcdef01234567").unwrap().as_ref(), "objects/0123456789abcdef01234567");
    }

    #[test]
    fn settings() {
        let data = tempfile::tempdir().unwrap();
        let local = BlobStore::from_settings(None, data.path(), None).unwrap();
        let root = std::fs::canonicalize(data.path().join("blobs")).unwrap();
        assert_eq!(local.describe(), format!("local:{}", root.display()));
        let local = BlobStore::from_settings(Some("  "), data.path(), None).unwrap();
        assert!(local.describe().starts_with("local:"));

        let s3 = BlobStore::from_settings(
            Some("s3://svc-bucket/some/prefix/"),
            data.path(),
            Some("http://user:secret@127.0.0.1:9000/path?x=1"),
        )
        .unwrap();
        assert_eq!(s3.describe(), "s3://svc-bucket/some/prefix at http://127.0.0.1:9000");
        let s3 = BlobStore::from_settings(Some("s3://svc-bucket"), data.path(), None).unwrap();
        assert_eq!(s3.describe(), "s3://svc-bucket");

        for bad in ["s3://", "s3:///prefix", "s3://Bad_Bucket/x", "s3://b/../x", "s3://bucket/a//b"] {
            let err = BlobStore::from_settings(Some(bad), data.path(), None).unwrap_err();
            assert!(matches!(err, BlobError::Config(_)), "{bad}: {err}");
        }
        let err = BlobStore::from_settings(Some("https://key:secret@example.com/b"), data.path(), None).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("s3://bucket/prefix") && message.contains("\"https\""), "{message}");
        assert!(!message.contains("secret"), "{message}");
        let err = BlobStore::from_settings(Some("/var/blobs"), data.path(), None).unwrap_err();
        assert!(err.to_string().contains("not a URL"), "{err}");
        let err = BlobStore::s3("svc-bucket", "", Some("ftp://host")).unwrap_err();
        assert!(matches!(err, BlobError::Config(_)), "{err}");
    }

    #[test]
    fn endpoint_origins() {
        assert_eq!(endpoint_origin("https://s3.example.com"), "https://s3.example.com");
        assert_eq!(endpoint_origin("http://a:b@host:9000/x?y#z"), "http://host:9000");
    }

    /// An in-memory store that slows each uploaded part down and records the most bytes held by parts
    /// in flight at once: what a writer keeps in memory besides its one part being filled.
    #[derive(Debug)]
    struct Watched {
        inner: InMemory,
        in_flight: Arc<std::sync::atomic::AtomicUsize>,
        peak: Arc<std::sync::atomic::AtomicUsize>,
        /// Refuse every put, as a full disk would.
        full: Arc<AtomicBool>,
    }

    impl fmt::Display for Watched {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Watched")
        }
    }

    #[derive(Debug)]
    struct WatchedUpload {
        inner: Box<dyn object_store::MultipartUpload>,
        in_flight: Arc<std::sync::atomic::AtomicUsize>,
        peak: Arc<std::sync::atomic::AtomicUsize>,
    }

    #[async_trait::async_trait]
    impl object_store::MultipartUpload for WatchedUpload {
        fn put_part(&mut self, data: object_store::PutPayload) -> object_store::UploadPart {
            use std::sync::atomic::Ordering::SeqCst;
            let len = data.content_length();
            let now = self.in_flight.fetch_add(len, SeqCst) + len;
            self.peak.fetch_max(now, SeqCst);
            let part = self.inner.put_part(data);
            let in_flight = Arc::clone(&self.in_flight);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let result = part.await;
                in_flight.fetch_sub(len, SeqCst);
                result
            })
        }
        async fn complete(&mut self) -> object_store::Result<object_store::PutResult> {
            self.inner.complete().await
        }
        async fn abort(&mut self) -> object_store::Result<()> {
            self.inner.abort().await
        }
    }

    #[async_trait::async_trait]
    impl ObjectStore for Watched {
        async fn put_opts(
            &self,
            location: &ObjectPath,
            payload: object_store::PutPayload,
            opts: object_store::PutOptions,
        ) -> object_store::Result<object_store::PutResult> {
            if self.full.load(Ordering::SeqCst) {
                return Err(object_store::Error::Generic {
                    store: "Watched",
                    source: "No space left on device".into(),
                });
            }
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &ObjectPath,
            opts: object_store::PutMultipartOptions,
        ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
            Ok(Box::new(WatchedUpload {
                inner: self.inner.put_multipart_opts(location, opts).await?,
                in_flight: Arc::clone(&self.in_flight),
                peak: Arc::clone(&self.peak),
            }))
        }
        async fn get_opts(
            &self,
            location: &ObjectPath,
            options: object_store::GetOptions,
        ) -> object_store::Result<object_store::GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<ObjectPath>>,
        ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&ObjectPath>,
        ) -> BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&ObjectPath>,
        ) -> object_store::Result<object_store::ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &ObjectPath,
            to: &ObjectPath,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    /// Whatever the upload's size, a writer holds at most `parts_in_flight` parts being uploaded plus the
    /// one being filled (which joins them as the last part in `finish`): 20 MiB goes through with at
    /// most 3 MiB (local) or 10 MiB (S3) in flight.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn memory_stays_bounded() {
        const TOTAL: usize = 20 * 1024 * 1024;
        for (part_size, parts_in_flight) in
            [(LOCAL_PART_SIZE, LOCAL_PARTS_IN_FLIGHT), (S3_PART_SIZE, S3_PARTS_IN_FLIGHT)]
        {
            let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let store = BlobStore {
                inner: Arc::new(Watched {
                    inner: InMemory::new(),
                    in_flight: Default::default(),
                    peak: Arc::clone(&peak),
                    full: Default::default(),
                }),
                kind: Kind::Memory,
                description: "watched".into(),
                part_size,
                parts_in_flight,
                writes_failing: Arc::default(),
                cleanups: Arc::default(),
            };
            let id = "0123456789abcdef01234567";
            let mut writer = store.writer(id).unwrap();
            let chunk = Bytes::from(vec![7u8; 64 * 1024]);
            for _ in 0..(TOTAL / chunk.len()) {
                writer.write(chunk.clone()).await.unwrap();
            }
            assert_eq!(writer.finish().await.unwrap(), TOTAL as u64);
            let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
            assert!(peak > 0, "a multipart upload was used");
            assert!(
                peak <= (parts_in_flight + 1) * part_size,
                "peak {peak} bytes in flight with {part_size}-byte parts"
            );
            assert_eq!(store.read_all(id).await.unwrap().unwrap().len(), TOTAL);
        }
    }

    /// More uploads at once than the folder lets write files at once: each waits for its turn and
    /// every one is stored whole, the multipart ones (past a part's size) too.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn uploads_beyond_the_writers_at_once_are_all_stored() {
        let data = tempfile::tempdir().unwrap();
        let store = BlobStore::local(data.path()).unwrap();
        let size = |i: usize| if i % 16 == 0 { LOCAL_PART_SIZE + 4096 } else { 20_000 + i };
        let uploads: Vec<_> = (0..64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let id = format!("{i:024x}");
                    let mut writer = store.writer(&id).unwrap();
                    writer.write(Bytes::from(vec![i as u8; size(i)])).await.unwrap();
                    writer.finish().await.unwrap()
                })
            })
            .collect();
        for (i, upload) in uploads.into_iter().enumerate() {
            assert_eq!(upload.await.unwrap(), size(i) as u64);
        }
        for i in 0..64 {
            let stored = store.read_all(&format!("{i:024x}")).await.unwrap().expect("stored");
            assert!(stored.len() == size(i) && stored.iter().all(|&b| b == i as u8), "blob {i}");
        }
    }

    /// A failed blob write makes readiness write a probe object until that works; a store that never
    /// failed a write is not probed.
    #[tokio::test]
    async fn ping_fails_while_blob_writes_fail_and_recovers_by_itself() {
        let full = Arc::new(AtomicBool::new(false));
        let watched = Watched {
            inner: InMemory::new(),
            in_flight: Default::default(),
            peak: Default::default(),
            full: Arc::clone(&full),
        };
        let store = BlobStore {
            inner: Arc::new(watched),
            kind: Kind::Memory,
            description: "watched".into(),
            part_size: LOCAL_PART_SIZE,
            parts_in_flight: LOCAL_PARTS_IN_FLIGHT,
            writes_failing: Arc::default(),
            cleanups: Arc::default(),
        };
        let id = "0123456789abcdef01234567";
        full.store(true, Ordering::SeqCst);
        store.ping().await.expect("no write has failed yet");

        let mut writer = store.writer(id).unwrap();
        writer.write(Bytes::from_static(b"screenshot")).await.unwrap();
        let error = writer.finish().await.expect_err("the store is full");
        assert!(error.to_string().contains("No space left on device"), "{error}");
        assert!(store.writes_failing());
        for _ in 0..2 {
            let not_ready = store.ping().await.expect_err("not ready while writes fail");
            assert!(not_ready.to_string().contains("No space left on device"), "{not_ready}");
        }

        full.store(false, Ordering::SeqCst);
        store.ping().await.expect("ready again once a write works");
        assert!(!store.writes_failing());
        let probe = ObjectPath::parse(PROBE_OBJECT).unwrap();
        assert!(
            matches!(store.inner.head(&probe).await, Err(object_store::Error::NotFound { .. })),
            "the probe is deleted"
        );
        let mut writer = store.writer(id).unwrap();
        writer.write(Bytes::from_static(b"screenshot")).await.unwrap();
        assert_eq!(writer.finish().await.unwrap(), 10);
    }
}
