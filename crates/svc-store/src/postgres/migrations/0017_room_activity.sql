-- Each artifact's report count and newest report, kept as reports are filed and deleted, so the
-- rooms page reads one row per room instead of every report that names one. A statement trigger
-- keeps it on filing (every path that inserts reports: one grouped upsert per INSERT statement,
-- over the rows that statement filed); deletions adjust it in the same transaction
-- (shared/deletion.rs), once per artifact and batch. The upsert takes the rows in key order, so two
-- filing transactions never wait on each other's rows in opposite orders.
CREATE TABLE room_activity (
    project_id      TEXT NOT NULL,
    artifact_id     TEXT NOT NULL,
    report_count    BIGINT NOT NULL,
    last_report_at  BIGINT NOT NULL,
    PRIMARY KEY (project_id, artifact_id)
);

INSERT INTO room_activity (project_id, artifact_id, report_count, last_report_at)
    SELECT project_id, artifact_id, count(*), max(created_at) FROM reports
    WHERE artifact_id IS NOT NULL GROUP BY project_id, artifact_id;

CREATE FUNCTION reports_count_room_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO room_activity (project_id, artifact_id, report_count, last_report_at)
        SELECT project_id, artifact_id, count(*), max(created_at) FROM filed
        WHERE artifact_id IS NOT NULL GROUP BY project_id, artifact_id ORDER BY project_id, artifact_id
        ON CONFLICT (project_id, artifact_id) DO UPDATE SET
            report_count = room_activity.report_count + excluded.report_count,
            last_report_at = greatest(room_activity.last_report_at, excluded.last_report_at);
    RETURN NULL;
END;
$$;

CREATE TRIGGER reports_room_activity AFTER INSERT ON reports REFERENCING NEW TABLE AS filed
    FOR EACH STATEMENT EXECUTE FUNCTION reports_count_room_activity();
