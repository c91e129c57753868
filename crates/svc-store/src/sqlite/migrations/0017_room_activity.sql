-- Each artifact's report count and newest report, kept as reports are filed and deleted, so the
-- rooms page reads one row per room instead of every report that names one. A trigger keeps it
-- on filing (every path that inserts a report, at the cost of one upsert for a report that names an
-- artifact and nothing for one that does not); deletions adjust it in the same transaction
-- (shared/deletion.rs), once per artifact and batch.
CREATE TABLE room_activity (
    project_id      TEXT NOT NULL,
    artifact_id     TEXT NOT NULL,
    report_count    INTEGER NOT NULL,
    last_report_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, artifact_id)
) WITHOUT ROWID;

INSERT INTO room_activity (project_id, artifact_id, report_count, last_report_at)
    SELECT project_id, artifact_id, count(*), max(created_at) FROM reports
    WHERE artifact_id IS NOT NULL GROUP BY project_id, artifact_id;

CREATE TRIGGER reports_room_activity AFTER INSERT ON reports WHEN NEW.artifact_id IS NOT NULL
BEGIN
    INSERT INTO room_activity (project_id, artifact_id, report_count, last_report_at)
        VALUES (NEW.project_id, NEW.artifact_id, 1, NEW.created_at)
        ON CONFLICT (project_id, artifact_id) DO UPDATE SET
            report_count = report_count + 1,
            last_report_at = max(last_report_at, excluded.last_report_at);
END;
