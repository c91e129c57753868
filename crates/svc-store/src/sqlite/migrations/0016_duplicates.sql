-- Reports marked as duplicates of another report of their project (the original). The duplicate
-- is canceled with the mark; its reporter follows the original's fix as if it were their own.
CREATE TABLE report_duplicates (
    report_id    TEXT PRIMARY KEY,
    original_id  TEXT NOT NULL,
    marked_at    BIGINT NOT NULL
);
CREATE INDEX report_duplicates_by_original ON report_duplicates (original_id);
