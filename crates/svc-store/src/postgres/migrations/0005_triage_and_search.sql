-- Triage: an assignee and labels on reports; full-text search of reports.

-- A user id; no foreign key (users live in their own tables and may go away; the report keeps it).
ALTER TABLE reports ADD COLUMN assignee_id TEXT COLLATE "C";
-- The report's labels as a JSON array, NULL when it has none: read with the row, so listings need
-- no second query. `report_labels` holds the same labels, one row each, for the filter and counts.
ALTER TABLE reports ADD COLUMN labels JSONB;
-- Only assigned reports are in it: filing a report adds nothing to it.
CREATE INDEX reports_project_assignee_idx ON reports (project_id, assignee_id, id) WHERE assignee_id IS NOT NULL;

-- `label_key` is the label in lower case (svc_core::triage::key).
CREATE TABLE report_labels (
    label_key  TEXT NOT NULL,
    report_id  TEXT COLLATE "C" NOT NULL REFERENCES reports (id),
    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    label      TEXT NOT NULL,
    PRIMARY KEY (label_key, report_id)
);
CREATE INDEX report_labels_project_idx ON report_labels (project_id, label_key);

-- Search (postgres/search.rs): one row per report, filled off the write path. `doc` is
-- to_tsvector('simple', svc_core::search::document(...)); `simple` lowercases without stemming,
-- so any language is matched word for word. `reporter` is the report's author id, for the
-- reporter filter: an index on the reports table would cost every filed report one more index
-- entry (and most reports from the widget have an author id).
CREATE TABLE report_search (
    report_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES reports (id),
    project_id TEXT COLLATE "C" NOT NULL,
    reporter   TEXT,
    doc        TSVECTOR NOT NULL
);
CREATE INDEX report_search_doc_idx ON report_search USING gin (doc);
CREATE INDEX report_search_reporter_idx ON report_search (reporter, report_id) WHERE reporter IS NOT NULL;
-- Statistics on ten times as many words as by default: whether a search walks the newest reports
-- or reads a word's matches from the index depends on how rare the planner knows the word to be,
-- and a word missing from the statistics is taken for a fairly common one.
ALTER TABLE report_search ALTER COLUMN doc SET STATISTICS 1000;

-- Which reports are not indexed yet. Every insert records its transaction id (a default: the
-- filing statements do not change); the indexer takes the reports of transactions older than
-- every transaction still running (pg_snapshot_xmin), which can no longer gain reports, so none is
-- missed whatever order transactions commit in. BRIN: new rows cost nothing to index, and the
-- newest pages (not yet summarized) are always read. Reports stored before this migration, and
-- bulk-loaded ones (indexed as they are loaded), have NULL.
ALTER TABLE reports ADD COLUMN ingest_xid BIGINT;
ALTER TABLE reports ALTER COLUMN ingest_xid SET DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX reports_ingest_xid_idx ON reports USING brin (ingest_xid);

CREATE TABLE search_progress (
    singleton       INTEGER PRIMARY KEY CHECK (singleton = 0),
    -- Reports with (ingest_xid, id) up to this pair are indexed.
    mark_xid        BIGINT NOT NULL,
    mark_id         TEXT COLLATE "C" NOT NULL,
    -- Reports stored before this migration: ids up to `backfill_until` (NULL once done), indexed
    -- in id order after `backfill_after`.
    backfill_until  TEXT COLLATE "C",
    backfill_after  TEXT COLLATE "C" NOT NULL
);
INSERT INTO search_progress (singleton, mark_xid, mark_id, backfill_until, backfill_after)
VALUES (0, 0, '', (SELECT max(id) FROM reports), '');

-- Reports whose comments changed since they were indexed, marked by the trigger below and indexed
-- again by the indexer's next round.
CREATE TABLE search_stale (report_id TEXT COLLATE "C" PRIMARY KEY);

CREATE FUNCTION search_mark_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_stale (report_id) VALUES (OLD.report_id) ON CONFLICT DO NOTHING;
    ELSE
        INSERT INTO search_stale (report_id) VALUES (NEW.report_id) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER comments_search_stale AFTER INSERT OR DELETE OR UPDATE OF text ON comments
    FOR EACH ROW EXECUTE FUNCTION search_mark_stale();
