-- Short-id lookups (a report id's last 6 hex characters) go through a table filled in batches
-- (sqlite/short_ids.rs) instead of an index on reports. That index put every new report on a random
-- leaf page, one more page to write and sync in every group commit; batches of ordered rows touch
-- each page once for many reports. Reports after `short_id_progress.last_rowid` are not in the
-- table yet and are found by scanning that short tail of the reports table.
DROP INDEX reports_by_short_id;

-- Small entries (no project: lookups filter on the reports they find), so a round of the indexer
-- has few pages to touch.
CREATE TABLE report_short_ids (
    short_id  TEXT NOT NULL,
    report_id TEXT NOT NULL,
    PRIMARY KEY (short_id, report_id)
) WITHOUT ROWID;

-- One row: the highest reports rowid whose short id is in report_short_ids (reports are never
-- deleted, so rowids only grow).
CREATE TABLE short_id_progress (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 0),
    last_rowid INTEGER NOT NULL
);

INSERT INTO report_short_ids (short_id, report_id) SELECT substr(id, -6), id FROM reports ORDER BY 1, 2;
INSERT INTO short_id_progress (singleton, last_rowid) VALUES (0, COALESCE((SELECT max(rowid) FROM reports), 0));
