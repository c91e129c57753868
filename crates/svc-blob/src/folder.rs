//! The local folder's one-put write: a blob smaller than a part goes straight into its final file.
//!
//! `object_store`'s local backend stages every put as `<name>#<n>`, syncs it, renames it into place
//! and syncs the folder: two folder entries changed and two syncs per blob. A blob id is new and
//! unknown to anyone until its upload is answered, so the file can be written under its own name
//! instead: created (never overwriting), written, synced, and the folder synced once for every
//! upload that finished its file meanwhile ([`FolderSync`]). A failed write removes the file; a
//! crash mid-write leaves a file no blob row names, as a crash left a staging file before.
//!
//! Profiled under 64 clients storing screenshots (bench/README.md, "Screenshots: one file, one
//! shared folder sync"): the rename and its folder sync were 6% of the server's CPU.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, PoisonError};

use object_store::PutPayload;

/// Files written at once, per core. Each write holds a thread of the runtime's blocking pool through
/// its sync, and the pool grows a thread for every write waiting: 64 clients uploading screenshots
/// kept 80 threads, each with allocator pages of its own: a fifth of the server's peak memory. Eight
/// at once on two cores stored as many screenshots a second (bench/README.md, "Screenshots out of
/// the file cache").
const WRITERS_PER_CORE: usize = 4;

/// The folder that holds the blobs' files, with the syncs of its entries shared among writers.
#[derive(Debug)]
pub(crate) struct Folder {
    path: PathBuf,
    sync: FolderSync,
    writers: tokio::sync::Semaphore,
}

impl Folder {
    pub(crate) fn new(path: PathBuf) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self {
            sync: FolderSync::new(path.clone()),
            path,
            writers: tokio::sync::Semaphore::new(WRITERS_PER_CORE * cores),
        }
    }

    /// Waits for a turn to write a file (see [`WRITERS_PER_CORE`]); the turn lasts as long as the
    /// permit.
    pub(crate) async fn turn_to_write(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.writers.acquire().await.expect("the writers' semaphore is never closed")
    }

    /// Writes `payload` as the new file `name` and returns once the file and its folder entry are
    /// on disk. Refuses to replace an existing file. On an error nothing is left under `name`.
    /// Blocking: call it on a blocking thread.
    pub(crate) fn put_new(&self, name: &str, payload: &PutPayload) -> io::Result<()> {
        let path = self.path.join(name);
        let mut file = match create_new(&path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // The first blob, or the folder went away (an operator cleaning up): made again,
                // and its own entry synced, as the backend did.
                std::fs::create_dir_all(&self.path)?;
                if let Some(parent) = self.path.parent() {
                    File::open(parent)?.sync_all()?;
                }
                create_new(&path)?
            }
            created => created?,
        };
        let stored = payload
            .iter()
            .try_for_each(|chunk| file.write_all(chunk))
            .and_then(|()| file.sync_all())
            .and_then(|()| self.sync.covering_now());
        if stored.is_ok() {
            drop_cached_pages(&file);
        } else {
            drop(file);
            let _ = std::fs::remove_file(&path);
        }
        stored
    }

    /// Takes a stored file written another way than [`Folder::put_new`] (a multipart upload) out of
    /// the file cache. Blocking.
    pub(crate) fn uncache(&self, name: &str) {
        if let Ok(file) = File::open(self.path.join(name)) {
            drop_cached_pages(&file);
        }
    }
}

/// Takes a stored file's pages out of the operating system's file cache. A blob is written once and
/// rarely read again; kept cached, a second of screenshot uploads adds hundreds of megabytes that
/// push the database's pages out, and copying each write into ever new cache pages was a fifth to
/// a quarter of the server's samples under screenshot ingest (bench/README.md, "Screenshots out of
/// the file cache"). The pages are on disk by now, so dropping them loses nothing; the call is
/// advice, and a kernel that ignores it changes nothing stored.
#[cfg(target_os = "linux")]
fn drop_cached_pages(file: &File) {
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
}

#[cfg(not(target_os = "linux"))]
fn drop_cached_pages(_file: &File) {}

fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// Folder syncs shared by concurrent writers. A sync that starts after a writer created its file
/// makes that file's entry durable, so a writer waits for the next sync to start and finish, and
/// starts it itself when none is running: under load one sync answers every writer that arrived
/// while the one before it ran.
#[derive(Debug)]
struct FolderSync {
    path: PathBuf,
    state: Mutex<SyncState>,
    finished: Condvar,
}

#[derive(Debug, Default)]
struct SyncState {
    /// Rounds started so far; round `n` is the `n`th sync of the folder.
    started: u64,
    /// The last round that has finished, and the last that succeeded.
    finished: u64,
    succeeded: u64,
    running: bool,
    /// The last failed round's error, for the writers that round was to cover.
    failure: Option<(io::ErrorKind, String)>,
}

impl FolderSync {
    fn new(path: PathBuf) -> Self {
        Self { path, state: Mutex::default(), finished: Condvar::new() }
    }

    /// Returns once a sync of the folder that started after this call has succeeded, or with the
    /// error of the one that was to cover it.
    fn covering_now(&self) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A round already running may have read the folder before this writer's entry existed.
        let needed = state.started + 1;
        loop {
            if state.succeeded >= needed {
                return Ok(());
            }
            if state.finished >= needed {
                let (kind, message) = state.failure.clone().unwrap_or((io::ErrorKind::Other, String::new()));
                return Err(io::Error::new(kind, message));
            }
            if state.running {
                state = self.finished.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            state.running = true;
            state.started += 1;
            let round = state.started;
            drop(state);
            let synced = File::open(&self.path).and_then(|folder| folder.sync_all());
            state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.running = false;
            state.finished = round;
            match &synced {
                Ok(()) => state.succeeded = round,
                Err(error) => state.failure = Some((error.kind(), error.to_string())),
            }
            self.finished.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::sync::Arc;

    fn payload(parts: &[&'static [u8]]) -> PutPayload {
        parts.iter().map(|part| Bytes::from_static(part)).collect()
    }

    #[test]
    fn a_put_writes_every_chunk_and_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::new(dir.path().join("objects"));
        // The folder does not exist yet: the first put makes it.
        folder.put_new("a", &payload(&[b"hello ", b"world"])).unwrap();
        assert_eq!(std::fs::read(dir.path().join("objects/a")).unwrap(), b"hello world");
        let error = folder.put_new("a", &payload(&[b"other"])).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(dir.path().join("objects/a")).unwrap(), b"hello world");
    }

    #[test]
    fn concurrent_writers_are_each_covered_by_a_finished_folder_sync() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Arc::new(Folder::new(dir.path().to_path_buf()));
        let writers: Vec<_> = (0..16)
            .map(|n| {
                let folder = Arc::clone(&folder);
                std::thread::spawn(move || folder.put_new(&format!("blob{n}"), &payload(&[b"x"])))
            })
            .collect();
        for writer in writers {
            writer.join().unwrap().unwrap();
        }
        let state = folder.sync.state.lock().unwrap();
        assert!(!state.running);
        assert_eq!(state.finished, state.started);
        assert_eq!(state.succeeded, state.finished);
        assert!((1..=16).contains(&state.started), "{} syncs for 16 writers", state.started);
    }

    #[test]
    fn a_failed_folder_sync_fails_its_writer_and_the_next_writer_gets_a_round_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let sync = FolderSync::new(dir.path().join("gone"));
        let error = sync.covering_now().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        // The next writer gets a round of its own, not the old failure.
        std::fs::create_dir(dir.path().join("gone")).unwrap();
        sync.covering_now().unwrap();
    }
}
