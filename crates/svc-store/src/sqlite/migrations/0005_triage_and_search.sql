-- Triage: an assignee and labels on reports; full-text search of reports.
--
-- Filing a report writes none of this: the new columns stay NULL and the partial index below holds
-- only assigned reports, so the group commit writes no more pages per report than before.

-- A user id; no foreign key (users live in their own tables and may go away; the report keeps it).
ALTER TABLE reports ADD COLUMN assignee_id TEXT;
-- The report's labels as a JSON array, NULL when it has none: read with the row, so listings need
-- no second query. `report_labels` holds the same labels, one row each, for the filter and counts.
ALTER TABLE reports ADD COLUMN labels TEXT;
CREATE INDEX reports_by_assignee ON reports (project_id, assignee_id, id) WHERE assignee_id IS NOT NULL;

-- `label_key` is the label in lower case (svc_core::triage::key, done in Rust: SQLite's lower()
-- only knows ASCII).
CREATE TABLE report_labels (
    label_key   TEXT NOT NULL,
    report_id   TEXT NOT NULL REFERENCES reports (id),
    project_id  TEXT NOT NULL REFERENCES projects (id),
    label       TEXT NOT NULL,
    PRIMARY KEY (label_key, report_id)
) WITHOUT ROWID;
CREATE INDEX report_labels_by_project ON report_labels (project_id, label_key);

-- The search index (sqlite/search.rs), filled off the write path. Its rowid is the report's rowid,
-- so a search reads matches newest first straight off the index (ORDER BY rowid DESC) and stops
-- at the page's end. `project` holds the project id and `reporter` the author id, so those filters
-- are part of the match; `body` is svc_core::search::document. Contentless: the text is not stored
-- twice; rows can still be deleted (contentless_delete) when a report's comments change.
CREATE VIRTUAL TABLE report_search USING fts5 (
    project, reporter, body,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

-- One row: the highest reports rowid whose report is in report_search. Reports are never deleted
-- and rowids only grow (VACUUM keeps them: the table has indexes).
CREATE TABLE search_progress (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 0),
    last_rowid INTEGER NOT NULL
);
INSERT INTO search_progress (singleton, last_rowid) VALUES (0, 0);

-- Reports whose comments changed since they were indexed, marked by the triggers below and
-- re-indexed by the indexer's next round.
CREATE TABLE search_stale (report_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER comments_added_stale AFTER INSERT ON comments BEGIN
    INSERT OR IGNORE INTO search_stale (report_id) VALUES (new.report_id);
END;
CREATE TRIGGER comments_edited_stale AFTER UPDATE OF text ON comments BEGIN
    INSERT OR IGNORE INTO search_stale (report_id) VALUES (new.report_id);
END;
CREATE TRIGGER comments_deleted_stale AFTER DELETE ON comments BEGIN
    INSERT OR IGNORE INTO search_stale (report_id) VALUES (old.report_id);
END;
