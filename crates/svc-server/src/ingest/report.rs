//! `POST /ingest/report`: validate, resolve the channel, bind blobs, store durably, answer.

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use svc_core::context::Context;
use svc_core::identity::{Identity, IdentityError};
use svc_core::ingest::{REPORT_BODY_MAX_BYTES, parse_submission};
use svc_core::model::{Author, Project};

use super::access::{self, IDENTITY_HEADER, IngestProject};
use super::error::{IngestError, IngestResult};
use crate::body::{BodyError, read_limited};
use crate::state::AppState;
use svc_service::reporters;
use svc_service::reports::{self, Filing, FilingError};
use svc_service::sightings::{PageKnown, Source};

const IDEMPOTENCY_KEY_MAX_CHARS: usize = 200;

pub async fn submit(State(state): State<AppState>, request: Request<Body>) -> IngestResult<Json<Value>> {
    let (mut parts, body) = request.into_parts();
    let IngestProject(project) = IngestProject::from_request_parts(&mut parts, &state).await?;
    state
        .rate_limits
        .check_report(access::client_ip(&state, &parts), &project.id)
        .map_err(|secs| IngestError::RateLimited { retry_after_secs: secs })?;
    // Read only now, after the key (and the rate limit) passed.
    let bytes = read_limited(&parts.headers, body, REPORT_BODY_MAX_BYTES).await.map_err(|error| match error {
        BodyError::TooLarge => IngestError::TOO_LARGE,
        BodyError::Unreadable => IngestError::BLOCKS_INVALID,
    })?;
    let submission = parse_submission(&bytes, &state.config.limits)?;
    record_sighting(&state, &project, &parts.headers, &submission.context);
    let idempotency_key = match parts.headers.get("idempotency-key").map(|v| v.to_str()) {
        None => None,
        Some(Ok(key)) if !key.is_empty() && key.len() <= IDEMPOTENCY_KEY_MAX_CHARS => Some(key.to_string()),
        // A key we cannot keep is not silently dropped: the client would believe retries are safe.
        Some(_) => return Err(IngestError::BLOCKS_INVALID),
    };
    let (identity, identity_error) = verify_identity(&state, &project, parts.headers.get(IDENTITY_HEADER)).await?;
    let author = reporter_author(identity.as_ref(), &submission.context);
    let filing = Filing { project: &project, submission, author, identity, identity_error, idempotency_key };
    match reports::file(&state.service, filing).await {
        Ok(filed) => {
            if matches!(filed, reports::Filed::Created(_)) {
                state.metrics.report_created();
            }
            Ok(Json(json!({"reportId": filed.id()})))
        }
        Err(error) => Err(match error {
            FilingError::ChannelInvalid => IngestError::CHANNEL_INVALID,
            FilingError::BlobNotFound => IngestError::BLOB_NOT_FOUND,
            FilingError::BlobProjectMismatch => IngestError::BLOB_PROJECT_MISMATCH,
            FilingError::BlobMimeMismatch => IngestError::BLOB_MIME_MISMATCH,
            FilingError::BlobAlreadyUsed => IngestError::BLOB_ALREADY_USED,
            FilingError::Store(error) => IngestError::internal(error),
        }),
    }
}

/// The widget was seen on the page the report names (`context.url`), else on the page its
/// request came from.
fn record_sighting(state: &AppState, project: &Project, headers: &HeaderMap, context: &Context) {
    let now = svc_core::time::now_ms();
    match context.url.as_deref().filter(|url| url.starts_with("http://") || url.starts_with("https://")) {
        Some(url) => state.sightings.record(&project.id, Source::Report, Some(url), PageKnown::FromPage, now),
        None => {
            let page = crate::ingest::access::page_from_headers(headers);
            state.sightings.record(&project.id, Source::Report, page, PageKnown::FromHeaders, now);
        }
    }
}

/// A reporter token (Svc's own, from reporter sign-in) is checked with the project's reporter
/// key; an identity token, when the project has an identity secret, with that secret (without one
/// the header is ignored). A valid token gives the verified identity; a bad one leaves `identity`
/// null and says why, and the report is still accepted: a reporter's words are never dropped.
async fn verify_identity(
    state: &AppState,
    project: &Project,
    header: Option<&HeaderValue>,
) -> IngestResult<(Option<Identity>, Option<String>)> {
    let Some(header) = header else { return Ok((None, None)) };
    // A header that is not plain text is a malformed token, not a missing one; an empty one is missing.
    let Ok(token) = header.to_str() else {
        let checked = project.identity_secret.is_some();
        return Ok((None, checked.then(|| IdentityError::Malformed.code().to_string())));
    };
    if token.trim().is_empty() {
        return Ok((None, None));
    }
    Ok(match reporters::check_identity(&state.service, project, token).await? {
        None => (None, None),
        Some(Ok(identity)) => (Some(identity), None),
        Some(Err(error)) => (None, Some(error.code().to_string())),
    })
}

/// `reporter`: the verified reporter's id (which says how they were verified), else
/// `context.userId`; labelled by name or email.
fn reporter_author(identity: Option<&Identity>, context: &Context) -> Author {
    let verified = identity.and_then(svc_core::reporter::Reporter::from_identity);
    let label = verified.as_ref().and_then(|r| r.name.clone().filter(|n| !n.is_empty()).or_else(|| r.email.clone()));
    Author {
        kind: svc_core::model::AuthorKind::Reporter,
        id: verified.map(|r| r.id).or_else(|| context.user_id.clone()),
        label,
    }
}
