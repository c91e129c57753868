//! `svc migrate` (docs/operations.md, "Moving to PostgreSQL and S3"): copies every table
//! (`svc_store::transfer`) and every blob of this installation into another, with a progress bar,
//! then compares both sides: rows and SHA-256 per table, count and SHA-256 of the blobs. Run again
//! after an interruption, it goes on where it stopped. The source is only read.

use crate::cli::{MigrateArgs, StorageArgs};
use anyhow::{Context, bail};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use svc_blob::BlobStore;
use svc_store::transfer::{Database, Transfer};

pub async fn run(storage: &StorageArgs, args: &MigrateArgs) -> anyhow::Result<()> {
    let source_url = storage.database_url();
    let postgres = svc_store::is_postgres_url;
    anyhow::ensure!(
        postgres(&source_url) != postgres(&args.to),
        "svc migrate copies between SQLite and PostgreSQL; the source and --to are both {}",
        if postgres(&args.to) { "PostgreSQL" } else { "SQLite" }
    );
    if let Some(path) = svc_store::sqlite_file(&source_url) {
        anyhow::ensure!(path.exists(), "no database at {}: nothing to migrate", path.display());
    }
    let source_blobs =
        BlobStore::from_settings(args.blob_store.as_deref(), &storage.data_dir, args.s3_endpoint.as_deref())
            .context("the source's blob store")?;
    let dest_blobs = destination_blobs(args)?;

    let source = Database::open(&source_url, false).await.context("opening the source database")?;
    let dest = Database::open(&args.to, true).await.context("opening the destination database")?;
    let transfer = Transfer::plan(source, dest).await?;

    let counts = transfer.source_rows().await?;
    let total: i64 = counts.iter().map(|(_, rows)| rows).sum();
    eprintln!("copying {} tables, {total} rows…", counts.len());
    let bar = crate::progress::bar(total as u64, "{msg:24} [{bar:30}] {pos}/{len} rows ({eta})");
    for table in transfer.tables() {
        bar.set_message(table.name.clone());
        let complete =
            transfer.copy(table, &mut |rows| bar.inc(rows), args.batch_rows, args.stop_after_batches).await?;
        if !complete {
            bar.abandon();
            bail!(
                "stopped after {} batches of {} (--stop-after-batches); run it again to go on",
                args.stop_after_batches.unwrap_or(0),
                table.name
            );
        }
    }
    bar.finish_and_clear();

    let blobs = match &dest_blobs {
        Some(dest_blobs) => Some(copy_blobs(&transfer, &source_blobs, dest_blobs).await?),
        None => None,
    };
    eprintln!("comparing both sides…");
    let compared = transfer.finish().await?;
    transfer.close().await;
    if compared.iter().all(|table| table.same()) {
        // What the service derives from the rows (the search index; on SQLite the short ids), built
        // now, so the service starts with every report searchable.
        eprintln!("building the search index…");
        let store = svc_store::connect(&args.to).await.context("opening the copy")?;
        store.run_maintenance_once().await.context("building the search index")?;
    }

    println!("{:<24} {:>10} {:>10}  {}", "table", "source", "copy", "SHA-256");
    for table in &compared {
        let verdict = if table.same() { "same" } else { "DIFFERENT" };
        println!(
            "{:<24} {:>10} {:>10}  {} {verdict}",
            table.table,
            table.source_rows,
            table.dest_rows,
            &table.dest_sha256[..12]
        );
    }
    match &blobs {
        Some(blobs) => println!(
            "{:<24} {:>10} {:>10}  {} {}",
            "blobs",
            blobs.count,
            blobs.copied_or_present,
            &blobs.sha256[..12],
            if blobs.mismatched.is_empty() { "same" } else { "DIFFERENT" }
        ),
        None => println!("blobs stay where they are: {} (set SVC_BLOB_STORE to it)", source_blobs.describe()),
    }
    let different: Vec<&str> = compared.iter().filter(|t| !t.same()).map(|t| t.table.as_str()).collect();
    if !different.is_empty() {
        bail!(
            "the copy differs from the source in {}: run svc migrate again (the source changed while it ran?)",
            different.join(", ")
        );
    }
    if let Some(blobs) = blobs
        && !blobs.mismatched.is_empty()
    {
        bail!(
            "{} blob(s) differ from the source (first: {}): run svc migrate again",
            blobs.mismatched.len(),
            blobs.mismatched[0]
        );
    }
    let blob_setting = match &args.blobs_to {
        Some(blobs) if blobs.starts_with("s3://") => format!(" SVC_BLOB_STORE={blobs}"),
        _ => String::new(),
    };
    if svc_store::is_postgres_url(&args.to) {
        println!(
            "Migration complete. Start the service on it: SVC_DATABASE_URL=<the destination>{blob_setting} svc serve"
        );
    } else {
        println!(
            "Migration complete. Start the service on it: svc serve --data-dir <the destination's folder>{blob_setting}"
        );
    }
    Ok(())
}

/// The destination's blob store, or `None` when the blobs stay where they are.
fn destination_blobs(args: &MigrateArgs) -> anyhow::Result<Option<BlobStore>> {
    let target = match args.blobs_to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        Some(target) => target.to_string(),
        None => match svc_store::sqlite_file(&args.to) {
            Some(path) => path.parent().unwrap_or(std::path::Path::new(".")).join("blobs").display().to_string(),
            None => return Ok(None),
        },
    };
    let store = if target.starts_with("s3://") {
        BlobStore::from_settings(Some(&target), std::path::Path::new("."), args.s3_endpoint.as_deref())?
    } else {
        BlobStore::local(std::path::Path::new(&target))?
    };
    Ok(Some(store))
}

struct CopiedBlobs {
    count: usize,
    copied_or_present: usize,
    sha256: String,
    mismatched: Vec<String>,
}

/// Copies each blob the source names that the destination lacks, then reads it back: the SHA-256
/// of each side must agree.
async fn copy_blobs(transfer: &Transfer, source: &BlobStore, dest: &BlobStore) -> anyhow::Result<CopiedBlobs> {
    let ids = transfer.blob_ids().await?;
    eprintln!("copying {} blobs…", ids.len());
    let bar = crate::progress::bar(ids.len() as u64, "blobs [{bar:30}] {pos}/{len} ({eta})");
    let mut all = Sha256::new();
    let (mut present, mut mismatched) = (0, Vec::new());
    for id in &ids {
        bar.inc(1);
        let Some(source_hash) = hash_of(source, id).await? else {
            continue; // deleted from the store, as the row says it may be once unbound
        };
        if hash_of(dest, id).await? != Some(source_hash.clone()) {
            let (_, mut stream) = source.get(id).await?.context("a blob vanished from the source")?;
            let mut writer = dest.writer(id)?;
            while let Some(chunk) = stream.next().await {
                writer.write(chunk?).await?;
            }
            writer.finish().await?;
        }
        match hash_of(dest, id).await? {
            Some(hash) if hash == source_hash => present += 1,
            _ => mismatched.push(id.clone()),
        }
        all.update(id.as_bytes());
        all.update(&source_hash);
    }
    bar.finish_and_clear();
    Ok(CopiedBlobs { count: ids.len(), copied_or_present: present, sha256: hex::encode(all.finalize()), mismatched })
}

async fn hash_of(store: &BlobStore, id: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let Some((_, mut stream)) = store.get(id).await? else { return Ok(None) };
    let mut hash = Sha256::new();
    while let Some(chunk) = stream.next().await {
        hash.update(&chunk?);
    }
    Ok(Some(hash.finalize().to_vec()))
}
