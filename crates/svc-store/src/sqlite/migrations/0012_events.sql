-- The event feed (svc_core::event): what happened, written in the same transaction as the change.
-- AUTOINCREMENT: ids only ever grow, never reused (one writer: id order is commit order).
-- No foreign keys: an event outlives the report it names (`report.deleted`); a deleted project's
-- events go with it (DeletionStore::delete_project).
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  TEXT NOT NULL,
    report_id   TEXT,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    by_kind     TEXT NOT NULL,
    by_id       TEXT,
    by_label    TEXT,
    at          INTEGER NOT NULL
);
CREATE INDEX events_by_project ON events (project_id, id);
CREATE INDEX events_by_time ON events (at);

-- How far each consumer of the feed has read, and which instance holds it for now (a lease, so two
-- instances never deliver the same event twice).
CREATE TABLE event_consumers (
    name         TEXT PRIMARY KEY,
    position     INTEGER NOT NULL,
    lease_owner  TEXT,
    lease_until  INTEGER NOT NULL DEFAULT 0
);

-- The team's mail notifications read the feed from its very start (an event written before the
-- mail task first runs is still mailed).
INSERT INTO event_consumers (name, position) VALUES ('mail', 0);
