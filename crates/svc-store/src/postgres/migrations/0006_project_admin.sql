-- What the dashboard's project settings need: retention, where the widget was last seen, member
-- invitations and the audit log.

-- Reports older than this many days are deleted (with their blobs) by housekeeping; NULL keeps them.
ALTER TABLE projects ADD COLUMN retention_days INTEGER;

-- The last page and time the loader or ingest heard from a project's widget (one row per project,
-- written at most about once a minute per instance).
CREATE TABLE widget_sightings (
    project_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES projects (id),
    url         TEXT,
    source      TEXT NOT NULL,
    seen_at     BIGINT NOT NULL
);

-- Invitation links name the role the invited person gets.
ALTER TABLE one_time_links ADD COLUMN role TEXT;

-- Who did what to a project (or, with no project, to an organization), newest first by id.
CREATE TABLE audit_events (
    id           TEXT COLLATE "C" PRIMARY KEY,
    org_id       TEXT COLLATE "C" NOT NULL,
    project_id   TEXT COLLATE "C",
    at           BIGINT NOT NULL,
    actor_kind   TEXT NOT NULL,
    actor_id     TEXT,
    actor_label  TEXT,
    action       TEXT NOT NULL,
    detail       JSONB NOT NULL
);
CREATE INDEX audit_events_by_project ON audit_events (project_id, id);
CREATE INDEX audit_events_by_org ON audit_events (org_id, id);
