//! Periodic clean-up, one pass at a time: `svc serve` runs it every minute, tests call it directly.

use crate::Service;
use svc_blob::BlobStore;

/// The lease housekeeping runs under: one instance at a time among those on one database.
const LEASE: &str = "housekeeping";
/// How long a pass's lease lasts: past the next minute's renewal, so the instance running it keeps
/// it; an instance that stops gives it up to another within this long.
pub const LEASE_MS: i64 = 150_000;

/// [`run_once`] on the instance that holds (or takes) the housekeeping lease, so several instances
/// on one database do each pass once; whether this one ran it.
pub async fn run_if_leased(svc: &Service, blobs: &BlobStore, now: i64) -> bool {
    match svc.store().take_lease(LEASE, svc.instance_id(), now, now + LEASE_MS).await {
        Ok(true) => {
            run_once(svc, blobs, now).await;
            true
        }
        Ok(false) => false,
        Err(error) => {
            tracing::warn!(%error, "could not take the housekeeping lease; skipping this pass");
            false
        }
    }
}

/// Events of the feed are kept this long (a script reading `.../events` may pause this long).
pub const EVENT_KEEP_MS: i64 = 30 * 24 * 3600 * 1000;

/// Deletes expired hints, idempotency keys, dashboard sessions and one-time links, expired OAuth
/// codes and OAuth registrations never used within a day, reporters' sign-in codes older than the
/// per-address window, their expired sessions and unfinished provider sign-ins, unbound blobs
/// older than a day, reports older than their project's retention period (with their blobs), and
/// events older than [`EVENT_KEEP_MS`] that every consumer has read; deletes blob objects still
/// queued for deletion. Each part runs whatever the others do; failures are logged.
pub async fn run_once(svc: &Service, blobs: &BlobStore, now: i64) {
    let store = svc.store();
    if let Err(error) = store.delete_expired_hints(now).await {
        tracing::warn!(%error, "hint clean-up failed");
    }
    if let Err(error) = store.delete_expired_idempotency_keys(now - svc_store::IDEMPOTENCY_WINDOW_MS).await {
        tracing::warn!(%error, "idempotency clean-up failed");
    }
    if let Err(error) = store.delete_expired_accounts_rows(now).await {
        tracing::warn!(%error, "session and link clean-up failed");
    }
    match super::oauth::clean_up(svc, now).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted expired OAuth codes and unused OAuth registrations"),
        Err(error) => tracing::warn!(%error, "OAuth clean-up failed"),
    }
    match store.delete_stale_reporter_rows(now, now - svc_core::reporter::CODE_WINDOW_MS).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted old reporter sign-in codes, sessions and sign-ins"),
        Err(error) => tracing::warn!(%error, "reporter sign-in clean-up failed"),
    }
    match super::blobs::delete_stale_unbound(svc, blobs, now).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted unbound blobs older than 24 hours"),
        Err(error) => tracing::warn!(error = %format!("{error:#}"), "unbound blob clean-up failed"),
    }
    match super::retention::run_once(svc, blobs, now).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted reports older than their project's retention period"),
        Err(error) => tracing::warn!(%error, "retention clean-up failed"),
    }
    match store.delete_events_before(now - EVENT_KEEP_MS).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted events older than 30 days"),
        Err(error) => tracing::warn!(%error, "event clean-up failed"),
    }
    match super::blobs::delete_queued(svc, blobs).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "deleted blob objects queued for deletion"),
        Err(error) => tracing::warn!(error = %format!("{error:#}"), "queued blob deletion failed"),
    }
}
