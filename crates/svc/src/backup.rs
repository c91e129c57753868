//! `svc backup` and `svc restore` (docs/operations.md, "Backups"): one gzip-compressed tar holding
//! a consistent copy of the SQLite database, the blob folder and a manifest with every file's size
//! and SHA-256. A restore checks all of it, and the database's integrity, before anything lands in
//! the data directory.
//!
//! The database is copied first (one snapshot), the blobs after it: a blob is written before any
//! report names it and never changes, so every blob the copied database names is in the folder by
//! then (unless retention deleted it in between, which the summary reports).

use crate::cli::{BackupArgs, RestoreArgs, StorageArgs};
use anyhow::{Context, bail};
use indicatif::ProgressBar;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

const FORMAT: &str = "svc-backup";
const VERSION: u64 = 1;
const MANIFEST: &str = "manifest.json";
const DATABASE: &str = "svc.db";
const BLOBS: &str = "blobs";

pub async fn backup(storage: &StorageArgs, args: &BackupArgs) -> anyhow::Result<()> {
    let database = sqlite_path(storage, "svc backup")?;
    anyhow::ensure!(database.exists(), "no database at {}: nothing to back up", database.display());
    anyhow::ensure!(!args.to.exists(), "{} exists already; choose another name or move it away", args.to.display());
    let external_blobs = args.blob_store.as_deref().map(str::trim).filter(|url| !url.is_empty());
    let blob_folder = storage.data_dir.join(BLOBS);

    // Written beside the archive and renamed at the end: a backup that failed half-way never
    // leaves a file that looks whole.
    let partial = sibling(&args.to, ".partial");
    let staging = tempfile::Builder::new().prefix(".svc-backup-").tempdir_in(parent_of(&args.to))?;
    let copy = staging.path().join(DATABASE);
    eprintln!("copying the database (one consistent snapshot; the service may keep running)…");
    svc_store::sqlite::backup::copy_database(&database, &copy)
        .await
        .with_context(|| format!("copying {}", database.display()))?;

    let blobs_note = match external_blobs {
        Some(url) => format!("{url} (not in this archive: back it up with the object store's own versioning)"),
        None => "included".to_string(),
    };
    let folder = external_blobs.is_none().then_some(blob_folder);
    let to = args.to.clone();
    let summary = tokio::task::spawn_blocking(move || -> anyhow::Result<Summary> {
        let written = write_archive(&partial, &copy, folder.as_deref(), &blobs_note)
            .and_then(|summary| Ok(std::fs::rename(&partial, &to).map(|()| summary)?));
        if written.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        sync_dir(parent_of(&to))?;
        written
    })
    .await??;
    drop(staging);

    println!("Backup written: {}", args.to.display());
    println!("  database   {}", bytes(summary.database_bytes));
    match external_blobs {
        Some(url) => println!("  blobs      not included: they are in {url} (see docs/operations.md)"),
        None => println!("  blobs      {} ({})", summary.blobs, bytes(summary.blob_bytes)),
    }
    if summary.vanished > 0 {
        println!("  note       {} blob(s) were deleted (retention) while the backup ran; left out", summary.vanished);
    }
    println!("  archive    {} ({})", bytes(summary.archive_bytes), summary.archive_sha256);
    Ok(())
}

pub async fn restore(storage: &StorageArgs, args: &RestoreArgs) -> anyhow::Result<()> {
    let database = sqlite_path(storage, "svc restore")?;
    let data_dir = database.parent().map(Path::to_path_buf).unwrap_or_else(|| storage.data_dir.clone());
    if let Ok(mut entries) = std::fs::read_dir(&data_dir) {
        anyhow::ensure!(
            entries.next().is_none(),
            "{} is not empty: restore into a new or empty data directory (--data-dir)",
            data_dir.display()
        );
    }
    let archive = File::open(&args.from).with_context(|| format!("opening {}", args.from.display()))?;
    let created = !data_dir.exists();
    std::fs::create_dir_all(&data_dir)?;
    // On a refusal the data directory is left as it was found.
    let give_back = |staging: tempfile::TempDir| {
        drop(staging);
        if created {
            let _ = std::fs::remove_dir(&data_dir);
        }
    };
    let staging = tempfile::Builder::new().prefix(".svc-restore-").tempdir_in(&data_dir)?;
    let staged = staging.path().to_path_buf();
    let total = archive.metadata()?.len();
    let checked = tokio::task::spawn_blocking(move || unpack_and_check(archive, total, &staged)).await?;
    let manifest = match checked {
        Ok(manifest) => manifest,
        Err(error) => {
            give_back(staging);
            bail!(
                "{} cannot be restored: {error:#}. Nothing was written to {}",
                args.from.display(),
                data_dir.display()
            );
        }
    };
    let problems = svc_store::sqlite::backup::integrity_problems(&staging.path().join(DATABASE)).await?;
    if !problems.is_empty() {
        give_back(staging);
        bail!("the database in {} fails SQLite's integrity check: {}", args.from.display(), problems.join("; "));
    }
    // Checked: move it into place.
    std::fs::rename(staging.path().join(DATABASE), &database)?;
    if staging.path().join(BLOBS).exists() {
        std::fs::rename(staging.path().join(BLOBS), data_dir.join(BLOBS))?;
    }
    drop(staging);
    sync_dir(&data_dir)?;
    let files = manifest["files"].as_array().map(Vec::len).unwrap_or(0);
    println!("Restored {} into {}", args.from.display(), data_dir.display());
    println!("  taken      {}", manifest["createdAt"].as_str().unwrap_or("?"));
    println!("  files      {files} checked (SHA-256), database integrity ok");
    println!("  blobs      {}", manifest["blobs"].as_str().unwrap_or("?"));
    println!("Start the service on it with: svc serve --data-dir {}", data_dir.display());
    Ok(())
}

/// The SQLite database file the settings name; an explanation for PostgreSQL.
fn sqlite_path(storage: &StorageArgs, command: &str) -> anyhow::Result<PathBuf> {
    let url = storage.database_url();
    if svc_store::is_postgres_url(&url) {
        bail!(
            "{command} copies a SQLite installation; this one uses PostgreSQL. Use pg_dump and pg_restore \
             (and the object store's versioning for the blobs), as docs/operations.md shows"
        );
    }
    svc_store::sqlite_file(&url).with_context(|| format!("{command} needs a database file, not {url:?}"))
}

struct Summary {
    database_bytes: u64,
    blobs: u64,
    blob_bytes: u64,
    vanished: u64,
    archive_bytes: u64,
    archive_sha256: String,
}

/// A reader that hashes and counts what passes through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
    bytes: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// A writer that hashes and counts what passes through it (the archive itself).
struct HashingWriter<W> {
    inner: W,
    hash: Sha256,
    bytes: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A bar counting bytes, named `what`.
fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let bar = crate::progress::bar(total, "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({eta})");
    bar.set_message(what.to_string());
    bar
}

/// Every file under `folder` (relative paths, sorted), without object_store's staging files
/// (`name#n`: a large upload still being written). A small upload being written has its own name
/// already, but no row in the database copied before: restored, it is a file nothing names.
fn files_under(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() && !entry.file_name().to_string_lossy().contains('#') {
                found.push(entry.path().strip_prefix(folder).map_err(io::Error::other)?.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn write_archive(path: &Path, database: &Path, blobs: Option<&Path>, blobs_note: &str) -> anyhow::Result<Summary> {
    let file = File::create_new(path).with_context(|| format!("creating {}", path.display()))?;
    let out = HashingWriter { inner: BufWriter::new(file), hash: Sha256::new(), bytes: 0 };
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(out, flate2::Compression::fast()));
    let blob_files = match blobs {
        Some(folder) => files_under(folder)?.into_iter().map(|file| folder.join(file)).collect(),
        None => Vec::new(),
    };
    let database_bytes = std::fs::metadata(database)?.len();
    let total = blob_files
        .iter()
        .fold(database_bytes, |sum, file| sum + std::fs::metadata(file).map(|meta| meta.len()).unwrap_or(0));
    eprintln!("archiving the database and {} blob file(s), {}…", blob_files.len(), bytes(total));
    let progress = progress_bar(total, "archiving");
    let mut listed = Vec::new();
    let mut append = |tar: &mut tar::Builder<_>, source: File, name: String| -> anyhow::Result<u64> {
        let size = source.metadata()?.len();
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(0o600);
        header.set_mtime(0);
        let mut reader = Hashing { inner: progress.wrap_read(source.take(size)), hash: Sha256::new(), bytes: 0 };
        tar.append_data(&mut header, &name, &mut reader)?;
        anyhow::ensure!(reader.bytes == size, "{name} changed size while it was archived");
        listed.push(json!({"path": name, "bytes": size, "sha256": hex::encode(reader.hash.finalize())}));
        Ok(size)
    };
    append(&mut tar, File::open(database)?, DATABASE.to_string())?;
    let (mut count, mut blob_bytes, mut vanished) = (0u64, 0u64, 0u64);
    if let Some(folder) = blobs {
        for file in &blob_files {
            let source = match File::open(file) {
                Ok(source) => source,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    vanished += 1;
                    continue;
                }
                Err(error) => return Err(error.into()),
            };
            let relative = file.strip_prefix(folder)?.to_str().context("a blob's file name is not UTF-8")?;
            let name = format!("{BLOBS}/{relative}");
            blob_bytes += append(&mut tar, source, name)?;
            count += 1;
        }
    }
    progress.finish_and_clear();
    let manifest = json!({
        "format": FORMAT,
        "version": VERSION,
        "createdAt": svc_core::time::iso(svc_core::time::now_ms()),
        "svcVersion": env!("CARGO_PKG_VERSION"),
        "database": DATABASE,
        "blobs": blobs_note,
        "files": listed,
    });
    let manifest = serde_json::to_vec_pretty(&manifest)?;
    let mut header = tar::Header::new_gnu();
    header.set_size(manifest.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(0);
    tar.append_data(&mut header, MANIFEST, manifest.as_slice())?;
    let out = tar.into_inner()?.finish()?;
    let HashingWriter { inner, hash, bytes: archive_bytes } = out;
    let file = inner.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()?;
    Ok(Summary {
        database_bytes,
        blobs: count,
        blob_bytes,
        vanished,
        archive_bytes,
        archive_sha256: format!("sha256:{}", hex::encode(hash.finalize())),
    })
}

/// Unpacks `archive` into `staged`, hashing every file, then holds the files to the manifest (the
/// last entry): the same names, sizes and SHA-256, nothing missing, nothing extra. Returns the
/// manifest.
fn unpack_and_check(archive: File, total: u64, staged: &Path) -> anyhow::Result<Value> {
    eprintln!("checking the archive ({})…", bytes(total));
    let progress = progress_bar(total, "checking");
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(progress.wrap_read(archive)));
    let mut found: Vec<(String, u64, String)> = Vec::new();
    let mut manifest: Option<Value> = None;
    for entry in tar.entries().context("the archive is damaged or not a gzip-compressed tar")? {
        let mut entry = entry.context("the archive is damaged or incomplete")?;
        let name = entry.path().context("an entry's name is unreadable")?.to_string_lossy().into_owned();
        anyhow::ensure!(manifest.is_none(), "an entry ({name}) follows the manifest");
        if name == MANIFEST {
            let mut text = Vec::new();
            entry.read_to_end(&mut text).context("the archive is damaged or incomplete")?;
            manifest = Some(serde_json::from_slice(&text).context("the manifest is not JSON")?);
            continue;
        }
        let relative = Path::new(&name);
        let safe = relative.components().all(|part| matches!(part, Component::Normal(_)));
        anyhow::ensure!(
            safe && (name == DATABASE || name.starts_with(&format!("{BLOBS}/"))),
            "unexpected entry {name:?}"
        );
        let target = staged.join(relative);
        if let Some(folder) = target.parent() {
            std::fs::create_dir_all(folder)?;
        }
        let mut out = BufWriter::new(File::create_new(&target).with_context(|| format!("{name} appears twice"))?);
        let mut hash = Sha256::new();
        let mut buffer = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        loop {
            let n = entry.read(&mut buffer).context("the archive is damaged or incomplete")?;
            if n == 0 {
                break;
            }
            hash.update(&buffer[..n]);
            out.write_all(&buffer[..n])?;
            size += n as u64;
        }
        let file = out.into_inner().map_err(|error| error.into_error())?;
        file.sync_all()?;
        found.push((name, size, hex::encode(hash.finalize())));
    }
    progress.finish_and_clear();
    let manifest = manifest.context("the archive has no manifest: it is incomplete, or not made by svc backup")?;
    anyhow::ensure!(
        manifest["format"] == FORMAT && manifest["version"] == VERSION,
        "not an svc backup of a version this svc reads (format {}, version {})",
        manifest["format"],
        manifest["version"]
    );
    let listed = manifest["files"].as_array().context("the manifest lists no files")?;
    anyhow::ensure!(found.iter().any(|(name, ..)| name == DATABASE), "the archive holds no database");
    for file in listed {
        let name = file["path"].as_str().unwrap_or_default();
        let Some((_, size, sha)) = found.iter().find(|(found, ..)| found == name) else {
            bail!("{name} is listed in the manifest but missing from the archive");
        };
        anyhow::ensure!(
            file["bytes"].as_u64() == Some(*size) && file["sha256"].as_str() == Some(sha.as_str()),
            "{name} does not match its checksum: the archive is damaged"
        );
    }
    anyhow::ensure!(listed.len() == found.len(), "the archive holds files its manifest does not list");
    Ok(manifest)
}

fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Makes a rename or a new file in `dir` durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}
