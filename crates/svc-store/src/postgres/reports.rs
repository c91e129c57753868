//! Reports: filing (idempotency key, blob binding), keyset listing, status changes, bulk loading.

use super::queries::{bind_report, push_before, push_optional_filters};
use super::rows::{report_columns, report_select_columns};
use super::search;
use super::{DbRow, map_write_error};
use crate::{CreatedReport, IDEMPOTENCY_WINDOW_MS, ReportText, StoreError, StoreResult, StoredJson, json_text};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo};
use sqlx::{Encode, PgPool, Postgres, QueryBuilder, Row, Type};
use std::collections::{BTreeSet, HashMap};
use svc_core::model::*;

/// A report's JSON text, sent as a `json` value: the `json` type keeps its input text as it is, so
/// listings return exactly what [`json_text`] wrote (`jsonb` would reorder and respace it).
pub(super) struct JsonText<'a>(&'a str);

pub(super) fn report_json(text: &str) -> JsonText<'_> {
    JsonText(text)
}

impl Type<Postgres> for JsonText<'_> {
    fn type_info() -> PgTypeInfo {
        // The built-in `json` type's OID.
        PgTypeInfo::with_oid(Oid(114))
    }
}

impl Encode<'_, Postgres> for JsonText<'_> {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        // The binary form of `json` is its text.
        <&str as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

/// A report's JSON text column (type `json`, which checked it on the way in and returns its input
/// text; its binary form is that text), neither checked again nor parsed.
pub(super) fn raw_json_column(row: &DbRow, column: impl super::rows::Column) -> StoreResult<Option<StoredJson>> {
    // Unchecked: sqlx's `String` is not declared compatible with `json`, whose form is text all the same.
    Ok(row.try_get_unchecked::<Option<String>, _>(column)?.map(StoredJson::from_column))
}

/// One report row, as a single statement (its JSON text serialized beforehand). SQLite stores new
/// reports in its group commit (`sqlite/group_commit.rs`).
pub(super) async fn insert_report<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    report: &Report,
    text: &ReportText,
) -> StoreResult<()> {
    let query = sqlx::query(concat!(
        "INSERT INTO reports (",
        report_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    ));
    bind_report(query, report, text).execute(executor).await.map_err(map_write_error)?;
    Ok(())
}

/// Rows per statement in `insert_reports_bulk`: large enough to amortize round trips, small enough
/// to keep each statement's parameter arrays a few megabytes.
const BULK_CHUNK_ROWS: usize = 5_000;

/// Files a report with blobs to bind, in one transaction; and a report with an idempotency key that
/// the group commit could not file with others (see [`file_chunk`]). (The others go through
/// [`super::group_commit`].)
pub(super) async fn create_report(pool: &PgPool, new: NewReport) -> StoreResult<CreatedReport> {
    let report = &new.report;
    let mut tx = pool.begin().await?;

    // Claim the idempotency key before touching anything else. A concurrent request with the same
    // key blocks here until the first one commits (then sees its key and repeats it) or rolls
    // back (then claims the key itself), so it never reaches the blobs the first one bound.
    if let Some(key) = &new.idempotency_key {
        // A key at least this old is expired and may be taken over.
        let expired_at_or_before = report.created_at - IDEMPOTENCY_WINDOW_MS;
        let claimed: Option<String> = sqlx::query_scalar(
            "INSERT INTO idempotency_keys (project_id, key, report_id, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (project_id, key) DO UPDATE \
             SET report_id = EXCLUDED.report_id, created_at = EXCLUDED.created_at \
             WHERE idempotency_keys.created_at <= $5 \
             RETURNING report_id",
        )
        .bind(&report.project_id)
        .bind(key)
        .bind(&report.id)
        .bind(report.created_at)
        .bind(expired_at_or_before)
        .fetch_optional(&mut *tx)
        .await?;
        if claimed.is_none() {
            // A live key: this statement's fresh snapshot sees the committed first report's id.
            let first_id: String =
                sqlx::query_scalar("SELECT report_id FROM idempotency_keys WHERE project_id = $1 AND key = $2")
                    .bind(&report.project_id)
                    .bind(key)
                    .fetch_one(&mut *tx)
                    .await?;
            tx.rollback().await?;
            return Ok(CreatedReport::Repeat(first_id));
        }
    }

    insert_report(&mut *tx, report, &ReportText::of(report)).await?;

    bind_blobs(&mut tx, report, &new.blob_ids).await?;

    super::events::insert_events(&mut tx, &[svc_core::event::NewEvent::report_created(report)]).await?;
    tx.commit().await?;
    Ok(CreatedReport::Created(new.report))
}

/// Binds the named blobs to the report: each must exist in the report's project and be unbound.
async fn bind_blobs(tx: &mut sqlx::PgTransaction<'_>, report: &Report, blob_ids: &[String]) -> StoreResult<()> {
    if blob_ids.is_empty() {
        return Ok(());
    }
    // Lock the rows first, in id order, so two reports naming overlapping blobs cannot deadlock.
    // A report racing for the same blob waits here and then sees it bound (FOR UPDATE returns the
    // latest committed row), so exactly one of them binds it.
    let rows = sqlx::query("SELECT id, project_id, report_id FROM blobs WHERE id = ANY($1) ORDER BY id FOR UPDATE")
        .bind(blob_ids)
        .fetch_all(&mut **tx)
        .await?;
    let mut found: HashMap<String, (String, Option<String>)> = HashMap::with_capacity(rows.len());
    for row in &rows {
        found.insert(row.try_get("id")?, (row.try_get("project_id")?, row.try_get("report_id")?));
    }
    // Judge in the order the report names them, so the first bad blob is the one reported.
    for blob_id in blob_ids {
        match found.get(blob_id) {
            Some((project_id, None)) if *project_id == report.project_id => {}
            Some((project_id, Some(_))) if *project_id == report.project_id => {
                return Err(StoreError::BlobAlreadyUsed(blob_id.clone()));
            }
            // Unknown, or another project's blob: not found, as far as this project can tell.
            _ => return Err(StoreError::NotFound),
        }
    }
    // A blob named twice (two blocks showing it) is simply bound once.
    sqlx::query("UPDATE blobs SET report_id = $1 WHERE id = ANY($2)")
        .bind(&report.id)
        .bind(blob_ids)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Whether a listing runs as a prepared statement, whose plan PostgreSQL may reuse for any
/// parameters. Not a search: how many reports a word matches decides the plan (walk the newest
/// reports and check each, or read the word's matches from the GIN index and sort them), and a
/// plan made without the words would walk every report for a rare one.
pub(super) fn list_is_prepared(filter: &ReportFilter) -> bool {
    !search::searches(filter)
}

/// The listing query for `filter`, or `None` when it cannot match anything.
pub(super) fn list_query(filter: &ReportFilter) -> Option<QueryBuilder<Postgres>> {
    listing_after(QueryBuilder::new(""), filter)
}

/// The listing query for `filter` after what `query` holds (`EXPLAIN ` in a test of its plan).
pub(super) fn listing_after(
    mut query: QueryBuilder<Postgres>,
    filter: &ReportFilter,
) -> Option<QueryBuilder<Postgres>> {
    // A project named twice would list its reports twice; so would a status.
    let project_ids: Vec<&str> =
        filter.project_ids.iter().map(String::as_str).collect::<BTreeSet<_>>().into_iter().collect();
    let statuses: Vec<&str> = filter.statuses.iter().map(String::as_str).collect::<BTreeSet<_>>().into_iter().collect();
    if project_ids.is_empty() || filter.limit == 0 {
        return None;
    }
    let limit = i64::from(filter.limit);
    // Several statuses (a view such as "open"): PostgreSQL reads `status IN (...)` from the status
    // index in no order, so it walked the newest reports checking each, through every newer report
    // of another status first. One range scan of the status index per status instead, merged
    // below like the projects' (not when searching: the words decide that plan, once).
    let status_by_status = statuses.len() > 1 && !search::searches(filter);
    if let [project_id] = project_ids.as_slice()
        && !status_by_status
    {
        query.push(concat!("SELECT ", report_select_columns!(), " FROM reports WHERE project_id = "));
        query.push_bind(*project_id);
        push_filters(&mut query, filter);
        query.push(" ORDER BY id DESC LIMIT ");
        query.push_bind(limit);
    } else {
        // One index range scan per project (newest first, stopping at `limit`), then the merge:
        // `project_id = ANY(...) ORDER BY id` would read every report of every project first.
        query.push("SELECT r.* FROM unnest(");
        query.push_bind(project_ids);
        query.push("::text[]) AS wanted(project_id)");
        if status_by_status {
            query.push(" CROSS JOIN unnest(");
            query.push_bind(statuses);
            query.push("::text[]) AS wanted_status(status)");
        }
        query.push(concat!(
            " CROSS JOIN LATERAL (SELECT ",
            report_select_columns!(),
            " FROM reports WHERE reports.project_id = wanted.project_id"
        ));
        if status_by_status {
            query.push(" AND reports.status = wanted_status.status");
            push_filters(&mut query, &ReportFilter { statuses: Vec::new(), ..filter.clone() });
        } else {
            push_filters(&mut query, filter);
        }
        query.push(" ORDER BY id DESC LIMIT ");
        query.push_bind(limit);
        query.push(") AS r ORDER BY r.id DESC LIMIT ");
        query.push_bind(limit);
    }
    Some(query)
}

/// Every filter of a listing after its project condition.
fn push_filters(query: &mut QueryBuilder<Postgres>, filter: &ReportFilter) {
    push_optional_filters(query, filter);
    search::push_index_filters(query, filter);
    push_before(query, filter);
}

pub(super) async fn short_id_rows(
    pool: &PgPool,
    project_ids: &[String],
    short_id: &str,
    limit: u32,
) -> StoreResult<Vec<DbRow>> {
    // `right(id, 6)` matches the expression index for the usual 6-character short id.
    let sql = if short_id.len() == 6 {
        concat!(
            "SELECT ",
            report_select_columns!(),
            " FROM reports WHERE project_id = ANY($1) AND right(id, 6) = $2 ORDER BY id DESC LIMIT $3"
        )
    } else {
        concat!(
            "SELECT ",
            report_select_columns!(),
            " FROM reports WHERE project_id = ANY($1) AND right(id, length($2)) = $2 ORDER BY id DESC LIMIT $3"
        )
    };
    Ok(sqlx::query(sql).bind(project_ids).bind(short_id).bind(i64::from(limit)).fetch_all(pool).await?)
}

/// Loads reports and indexes them for search in the same transaction. Their `ingest_xid` is NULL,
/// so the search indexer does not read them again.
pub(super) async fn insert_reports_bulk(pool: &PgPool, reports: &[Report]) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    for chunk in reports.chunks(BULK_CHUNK_ROWS) {
        insert_report_chunk(&mut *tx, chunk).await?;
        search::index_loaded(&mut tx, chunk).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Binds `$1`..`$16` of a multi-row report INSERT: each column of `chunk` as one array.
fn bind_report_columns<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    chunk: &'q [Report],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    fn column<'r, T>(chunk: &'r [Report], field: impl Fn(&'r Report) -> T) -> Vec<T> {
        chunk.iter().map(field).collect()
    }
    query
        .bind(column(chunk, |r| r.id.as_str()))
        .bind(column(chunk, |r| r.project_id.as_str()))
        .bind(column(chunk, |r| r.channel_key.as_str()))
        .bind(column(chunk, |r| r.status.as_str()))
        .bind(column(chunk, |r| r.title.as_str()))
        .bind(column(chunk, |r| json_text(&r.blocks)))
        .bind(column(chunk, |r| json_text(&r.context)))
        .bind(column(chunk, |r| r.identity.as_ref().map(json_text)))
        .bind(column(chunk, |r| r.identity_error.as_deref()))
        .bind(column(chunk, |r| r.author.kind.as_str()))
        .bind(column(chunk, |r| r.author.id.as_deref()))
        .bind(column(chunk, |r| r.author.label.as_deref()))
        .bind(column(chunk, |r| r.artifact_id.as_deref()))
        .bind(column(chunk, |r| r.url.as_deref()))
        .bind(column(chunk, |r| r.created_at))
        .bind(column(chunk, |r| r.updated_at))
}

/// Files reports of one row each (the group commit): one statement that claims the idempotency
/// keys of those that carry one (`keys`, beside `chunk`), inserts the reports and writes their
/// `report.created` events after taking the feed's order (see `shared/events.rs`), so it is atomic
/// and committed with one WAL flush. The keys are claimed first and without `ON CONFLICT`, in the
/// order [`create_report`] claims a key before the feed's order: a key already claimed (a retry, an
/// expired key, two reports of the chunk with one key) fails the statement, and the group commit
/// files the chunk's reports one at a time. The columns travel as in [`insert_report_chunk`].
pub(super) async fn file_chunk(pool: &PgPool, chunk: &[Report], keys: &[Option<String>]) -> StoreResult<()> {
    const SQL: &str = concat!(
        "WITH claimed AS (INSERT INTO idempotency_keys (project_id, key, report_id, created_at) \
         SELECT * FROM UNNEST($18::text[], $19::text[], $20::text[], $21::bigint[]) RETURNING 1), \
         filed AS (INSERT INTO reports (",
        report_columns!(),
        ") SELECT c1, c2, c3, c4, c5, c6::json, c7::json, c8::json, c9, c10, c11, c12, c13, c14, c15, c16 \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], \
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[], \
         $16::bigint[]) AS t(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16) \
         RETURNING id, project_id, channel_key, author_kind, author_id, author_label, created_at), \
         ordered AS (SELECT 1 AS one FROM (SELECT pg_advisory_xact_lock($17) FROM (SELECT count(*) FROM claimed) AS k) \
         AS locked) \
         INSERT INTO events (project_id, report_id, type, data, by_kind, by_id, by_label, at) \
         SELECT f.project_id, f.id, 'report.created', json_build_object('channelKey', f.channel_key)::text, \
         f.author_kind, f.author_id, f.author_label, f.created_at FROM filed f CROSS JOIN ordered ORDER BY f.id"
    );
    let keyed: Vec<(&Report, &str)> =
        chunk.iter().zip(keys).filter_map(|(report, key)| Some((report, key.as_deref()?))).collect();
    bind_report_columns(sqlx::query(SQL), chunk)
        .bind(super::EVENT_ORDER_LOCK)
        .bind(keyed.iter().map(|(report, _)| report.project_id.as_str()).collect::<Vec<_>>())
        .bind(keyed.iter().map(|(_, key)| *key).collect::<Vec<_>>())
        .bind(keyed.iter().map(|(report, _)| report.id.as_str()).collect::<Vec<_>>())
        .bind(keyed.iter().map(|(report, _)| report.created_at).collect::<Vec<_>>())
        .execute(pool)
        .await
        .map_err(map_write_error)?;
    Ok(())
}

/// One multi-row INSERT of a bulk load (no events): each column travels as one array parameter and UNNEST zips them back
/// into rows, so the statement has 16 parameters whatever the chunk size. The JSON columns travel
/// as the text [`json_text`] writes and are stored as that text.
pub(super) async fn insert_report_chunk<'e>(executor: impl sqlx::PgExecutor<'e>, chunk: &[Report]) -> StoreResult<()> {
    // `ingest_xid` NULL: the caller indexes them for search in the same transaction.
    let sql = concat!(
        "INSERT INTO reports (",
        report_columns!(),
        ", ingest_xid) SELECT c1, c2, c3, c4, c5, c6::json, c7::json, c8::json, c9, c10, c11, c12, c13, c14, \
         c15, c16, NULL \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], \
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[], \
         $16::bigint[]) AS t(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16)"
    );
    bind_report_columns(sqlx::query(sql), chunk).execute(executor).await.map_err(map_write_error)?;
    Ok(())
}
