-- The event feed (svc_core::event): what happened, written in the same transaction as the change.
-- Ids follow commit order: every transaction that writes events takes the same advisory lock just
-- before its first event (held until it commits), so an id handed out later commits later and a
-- reader that has seen id N has seen every event below it.
-- No foreign keys: an event outlives the report it names (`report.deleted`); a deleted project's
-- events go with it (DeletionStore::delete_project).
CREATE TABLE events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id  TEXT COLLATE "C" NOT NULL,
    report_id   TEXT COLLATE "C",
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    by_kind     TEXT NOT NULL,
    by_id       TEXT,
    by_label    TEXT,
    at          BIGINT NOT NULL
);
CREATE INDEX events_by_project ON events (project_id, id);
CREATE INDEX events_by_time ON events (at);

-- How far each consumer of the feed has read, and which instance holds it for now (a lease, so two
-- instances never deliver the same event twice).
CREATE TABLE event_consumers (
    name         TEXT PRIMARY KEY,
    position     BIGINT NOT NULL,
    lease_owner  TEXT,
    lease_until  BIGINT NOT NULL DEFAULT 0
);

-- The team's mail notifications read the feed from its very start (an event written before the
-- mail task first runs is still mailed).
INSERT INTO event_consumers (name, position) VALUES ('mail', 0);
