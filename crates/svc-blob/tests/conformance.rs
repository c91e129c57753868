//! One behaviour suite for every `BlobStore` backend. Each test is written once and runs as
//! `local_<name>` (in its own temporary folder), `memory_<name>`, and `s3_<name>` (under its own key
//! prefix in the bucket `SVC_TEST_S3_BUCKET`, default `svc-test`, at `SVC_TEST_S3_ENDPOINT`; created if
//! missing). Without `SVC_TEST_S3_ENDPOINT` the S3 variants say they skipped and pass.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::TryStreamExt;
use svc_blob::{BlobError, BlobStore, OBJECT_FOLDER};

macro_rules! conformance {
    ($(async fn $name:ident($store:ident: BlobStore) $body:block)*) => {
        $(
            pastey::paste! {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn [<local_ $name>]() {
                    let folder = tempfile::tempdir().expect("temporary folder");
                    let $store = BlobStore::local(folder.path()).expect("local blob store");
                    $body
                    assert_no_staging_files(folder.path());
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn [<memory_ $name>]() {
                    let $store = BlobStore::memory();
                    $body
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn [<s3_ $name>]() {
                    let Some($store) = s3_store(stringify!($name)).await else {
                        eprintln!("skipped: SVC_TEST_S3_ENDPOINT not set");
                        return;
                    };
                    $body
                }
            }
        )*
    };
}

// Fixtures

/// A fresh, well-formed blob id (24 lowercase hex characters), unique within the test process.
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{:012x}{:06x}{:06x}", nanos & 0xffff_ffff_ffff, std::process::id() & 0xff_ffff, n & 0xff_ffff)
}

/// `len` bytes of a deterministic pattern (xorshift), different for each seed.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Write `bytes` in `chunk`-sized pieces and finish; returns what `finish` reported.
async fn put(store: &BlobStore, id: &str, bytes: &[u8], chunk: usize) -> u64 {
    let mut writer = store.writer(id).expect("writer");
    for piece in bytes.chunks(chunk) {
        writer.write(Bytes::copy_from_slice(piece)).await.expect("write");
    }
    assert_eq!(writer.bytes_written(), bytes.len() as u64);
    writer.finish().await.expect("finish")
}

async fn get_bytes(store: &BlobStore, id: &str) -> Option<(u64, Vec<u8>)> {
    let (size, stream) = store.get(id).await.expect("get")?;
    let chunks: Vec<Bytes> = stream.try_collect().await.expect("read the stream");
    Some((size, chunks.concat()))
}

/// Nothing half-written is left in a local store's folder (the local backend stages multipart
/// writes as `<name>#<n>` beside the final file).
fn assert_no_staging_files(root: &std::path::Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                assert!(!path.to_string_lossy().contains('#'), "staging file left behind: {}", path.display());
            }
        }
    }
}

/// The S3 store for one test, under its own prefix, or `None` when `SVC_TEST_S3_ENDPOINT` is unset.
async fn s3_store(test: &str) -> Option<BlobStore> {
    let endpoint = std::env::var("SVC_TEST_S3_ENDPOINT").ok().filter(|e| !e.is_empty())?;
    let bucket = std::env::var("SVC_TEST_S3_BUCKET").unwrap_or_else(|_| "svc-test".into());
    ensure_bucket(&endpoint, &bucket).await;
    let prefix = format!("conformance/{test}-{}", new_id());
    Some(BlobStore::s3(&bucket, &prefix, Some(&endpoint)).expect("S3 blob store"))
}

fn credential() -> object_store::aws::AwsCredential {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("SVC_TEST_S3_ENDPOINT is set but {name} is not (for moto: AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test)")
        })
    };
    object_store::aws::AwsCredential {
        key_id: var("AWS_ACCESS_KEY_ID"),
        secret_key: var("AWS_SECRET_ACCESS_KEY"),
        token: std::env::var("AWS_SESSION_TOKEN").ok(),
    }
}

fn region() -> String {
    std::env::var("AWS_REGION").or_else(|_| std::env::var("AWS_DEFAULT_REGION")).unwrap_or_else(|_| "us-east-1".into())
}

/// Send a signed, bodiless request to the S3 endpoint; the answer's status and body.
async fn signed(method: &str, url: &str) -> (u16, String) {
    use object_store::ClientOptions;
    use object_store::aws::AwsAuthorizer;
    use object_store::client::{HttpConnector, HttpRequest, HttpRequestBody, ReqwestConnector};

    let mut request = HttpRequest::new(HttpRequestBody::empty());
    *request.method_mut() = method.parse().unwrap();
    *request.uri_mut() = url.parse().expect("SVC_TEST_S3_ENDPOINT is a URL");
    let credential = credential();
    let region = region();
    AwsAuthorizer::new(&credential, "s3", &region).try_authorize(&mut request, None).expect("sign");
    let client = ReqwestConnector::default().connect(&ClientOptions::new().with_allow_http(true)).unwrap();
    let response = client.execute(request).await.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let body = response.into_body().bytes().await.unwrap_or_default();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Create the test bucket unless it exists (path style). "Already yours" answers are fine.
async fn ensure_bucket(endpoint: &str, bucket: &str) {
    let url = format!("{}/{bucket}", endpoint.trim_end_matches('/'));
    let (status, body) = signed("PUT", &url).await;
    assert!(status == 200 || status == 409, "create bucket at {url}: HTTP {status}: {body}");
}

// The suite

conformance! {
    async fn chunks_round_trip(store: BlobStore) {
        let id = new_id();
        let mut writer = store.writer(&id).unwrap();
        for chunk in ["screen", "", "shot ", "bytes \u{1f98a}"] {
            writer.write(Bytes::from(chunk)).await.unwrap();
        }
        assert_eq!(writer.finish().await.unwrap(), 21);
        assert_eq!(store.read_all(&id).await.unwrap().unwrap(), Bytes::from("screenshot bytes \u{1f98a}"));
    }

    async fn empty_blob(store: BlobStore) {
        let id = new_id();
        assert_eq!(store.writer(&id).unwrap().finish().await.unwrap(), 0);
        assert_eq!(store.read_all(&id).await.unwrap().unwrap(), Bytes::new());
        assert_eq!(get_bytes(&store, &id).await.unwrap(), (0, Vec::new()));
    }

    async fn get_streams_with_size(store: BlobStore) {
        // 3 MB: past the local part size (a multipart upload there), one put on S3.
        let id = new_id();
        let bytes = data(3 * 1000 * 1000 + 7, 1);
        assert_eq!(put(&store, &id, &bytes, 100 * 1024).await, bytes.len() as u64);
        let (size, read) = get_bytes(&store, &id).await.expect("the blob is there");
        assert_eq!(size, bytes.len() as u64);
        assert!(read == bytes, "streamed bytes differ");
    }

    async fn large_upload_round_trips(store: BlobStore) {
        // 12 MB in 64 KB chunks: a multipart upload on every backend (three parts on S3).
        let id = new_id();
        let bytes = data(12 * 1024 * 1024, 2);
        assert_eq!(put(&store, &id, &bytes, 64 * 1024).await, bytes.len() as u64);
        let (size, read) = get_bytes(&store, &id).await.expect("the blob is there");
        assert_eq!(size, bytes.len() as u64);
        assert!(read == bytes, "streamed bytes differ");
        let all = store.read_all(&id).await.unwrap().unwrap();
        assert!(all == bytes, "read_all bytes differ");
    }

    async fn abort_leaves_no_object(store: BlobStore) {
        // Still buffering in memory.
        let small = new_id();
        let mut writer = store.writer(&small).unwrap();
        writer.write(Bytes::from_static(b"half a screenshot")).await.unwrap();
        writer.abort().await;
        assert!(store.get(&small).await.unwrap().is_none());

        // A multipart upload under way (past the S3 part size too).
        let large = new_id();
        let mut writer = store.writer(&large).unwrap();
        for piece in data(6 * 1024 * 1024, 3).chunks(64 * 1024) {
            writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
        }
        writer.abort().await;
        assert!(store.get(&large).await.unwrap().is_none());
        assert!(store.read_all(&large).await.unwrap().is_none());
    }

    async fn dropped_writer_leaves_no_object(store: BlobStore) {
        // A client that goes away mid-upload: the handler's future, and the writer, are dropped.
        let id = new_id();
        let mut writer = store.writer(&id).unwrap();
        for piece in data(6 * 1024 * 1024, 4).chunks(64 * 1024) {
            writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
        }
        drop(writer);
        // The clean-up runs as a task.
        store.settle().await;
        assert!(store.get(&id).await.unwrap().is_none());
    }

    async fn delete_then_get_is_none(store: BlobStore) {
        let id = new_id();
        put(&store, &id, b"audio note", 4).await;
        assert!(store.read_all(&id).await.unwrap().is_some());
        store.delete(&id).await.unwrap();
        assert!(store.get(&id).await.unwrap().is_none());
        assert!(store.read_all(&id).await.unwrap().is_none());
        // Twice is fine.
        store.delete(&id).await.unwrap();
    }

    async fn delete_missing_is_ok(store: BlobStore) {
        store.delete(&new_id()).await.unwrap();
    }

    async fn missing_blob_is_none(store: BlobStore) {
        let id = new_id();
        assert!(store.get(&id).await.unwrap().is_none());
        assert!(store.read_all(&id).await.unwrap().is_none());
    }

    async fn blobs_are_independent(store: BlobStore) {
        let (a, b) = (new_id(), new_id());
        put(&store, &a, b"first", 2).await;
        put(&store, &b, b"second", 3).await;
        store.delete(&a).await.unwrap();
        assert!(store.read_all(&a).await.unwrap().is_none());
        assert_eq!(store.read_all(&b).await.unwrap().unwrap(), Bytes::from_static(b"second"));
    }

    async fn invalid_ids_are_refused(store: BlobStore) {
        for bad in [
            "",
            "abc",
            "0123456789ABCDEF01234567",
            "0123456789abcdef0123456z",
            "0123456789abcdef012345678",
            "../../../../../etc/passwd",
            "..%2f..%2f..%2f..%2fpassw",
            "0123456789abcdef/1234567",
            "0123456789abcdef\\1234567",
            "0123456789abcdef 1234567",
        ] {
            assert!(matches!(store.writer(bad), Err(BlobError::InvalidId)), "writer {bad:?}");
            assert!(matches!(store.get(bad).await, Err(BlobError::InvalidId)), "get {bad:?}");
            assert!(matches!(store.read_all(bad).await, Err(BlobError::InvalidId)), "read_all {bad:?}");
            assert!(matches!(store.delete(bad).await, Err(BlobError::InvalidId)), "delete {bad:?}");
        }
    }

    async fn ping_works_on_an_empty_store(store: BlobStore) {
        store.ping().await.unwrap();
        put(&store, &new_id(), b"x", 1).await;
        store.ping().await.unwrap();
    }

    async fn describe_names_the_backend(store: BlobStore) {
        let description = store.describe();
        assert!(
            description.starts_with("local:/") || description == "memory" || description.starts_with("s3://"),
            "{description}"
        );
        assert!(!description.contains("secret") && !description.contains("AWS_"), "{description}");
        assert_eq!(format!("{store:?}"), format!("BlobStore({description:?})"));
    }
}

// Local folder only

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_blob_is_a_file_on_disk_and_survives_a_reopen() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = BlobStore::from_settings(None, data_dir.path(), None).unwrap();
    let (small, large) = (new_id(), new_id());
    let small_bytes = data(1000, 5);
    let large_bytes = data(5 * 1024 * 1024 + 3, 6);
    put(&store, &small, &small_bytes, 300).await;
    put(&store, &large, &large_bytes, 64 * 1024).await;

    // The on-disk layout is a stored format: <data_dir>/blobs/objects/<id>.
    let folder = data_dir.path().join("blobs").join(OBJECT_FOLDER);
    assert_eq!(std::fs::read(folder.join(&small)).unwrap(), small_bytes);
    assert!(std::fs::read(folder.join(&large)).unwrap() == large_bytes);
    assert_no_staging_files(data_dir.path());
    drop(store);

    let reopened = BlobStore::local(&data_dir.path().join("blobs")).unwrap();
    assert_eq!(reopened.read_all(&small).await.unwrap().unwrap(), small_bytes);
    let (size, read) = get_bytes(&reopened, &large).await.unwrap();
    assert_eq!(size, large_bytes.len() as u64);
    assert!(read == large_bytes);
    reopened.delete(&small).await.unwrap();
    assert!(!folder.join(&small).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_store_creates_its_folder() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("a").join("b");
    let store = BlobStore::local(&dir).unwrap();
    assert!(dir.is_dir());
    store.ping().await.unwrap();
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(store.describe(), format!("local:{}", canonical.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_ping_fails_when_the_folder_is_gone() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("blobs");
    let store = BlobStore::local(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(store.ping().await.is_err());
}

// S3 only

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_ping_fails_on_a_missing_bucket() {
    let Ok(endpoint) = std::env::var("SVC_TEST_S3_ENDPOINT") else {
        eprintln!("skipped: SVC_TEST_S3_ENDPOINT not set");
        return;
    };
    let store = BlobStore::s3(&format!("svc-missing-{}", new_id()), "x", Some(&endpoint)).unwrap();
    assert!(store.ping().await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_abort_and_drop_discard_the_multipart_upload() {
    let Ok(endpoint) = std::env::var("SVC_TEST_S3_ENDPOINT") else {
        eprintln!("skipped: SVC_TEST_S3_ENDPOINT not set");
        return;
    };
    let bucket = std::env::var("SVC_TEST_S3_BUCKET").unwrap_or_else(|_| "svc-test".into());
    ensure_bucket(&endpoint, &bucket).await;
    let prefix = format!("conformance/multipart-{}", new_id());
    let store = BlobStore::s3(&bucket, &prefix, Some(&endpoint)).unwrap();
    let pending_uploads = || async {
        let url = format!(
            "{}/{bucket}?uploads&prefix={prefix}%2F",
            endpoint.trim_end_matches('/'),
            prefix = prefix.replace('/', "%2F")
        );
        let (status, body) = signed("GET", &url).await;
        assert_eq!(status, 200, "{body}");
        body.matches("<Upload>").count()
    };
    let six_mib = data(6 * 1024 * 1024, 7);

    let mut aborted = store.writer(&new_id()).unwrap();
    let mut dropped = store.writer(&new_id()).unwrap();
    for piece in six_mib.chunks(256 * 1024) {
        aborted.write(Bytes::copy_from_slice(piece)).await.unwrap();
        dropped.write(Bytes::copy_from_slice(piece)).await.unwrap();
    }
    assert_eq!(pending_uploads().await, 2, "two multipart uploads under way");
    aborted.abort().await;
    drop(dropped);
    store.settle().await;
    assert_eq!(pending_uploads().await, 0, "no multipart upload left behind");
}
