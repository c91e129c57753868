-- Svc schema for SQLite. Times are INTEGER epoch milliseconds; JSON-shaped fields are TEXT holding JSON.
-- Object ids are time-ordered 24-character hex strings, so `ORDER BY id` is creation order.

CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX organizations_by_name ON organizations (name);

CREATE TABLE projects (
    id                   TEXT PRIMARY KEY,
    org_id               TEXT NOT NULL REFERENCES organizations (id),
    name                 TEXT NOT NULL,
    slug                 TEXT NOT NULL,
    project_key          TEXT NOT NULL UNIQUE,
    url_patterns         TEXT NOT NULL,
    default_channel_key  TEXT NOT NULL,
    widget_config        TEXT NOT NULL,
    allowed_origins      TEXT NOT NULL,
    identity_secret      TEXT,
    created_at           INTEGER NOT NULL,
    UNIQUE (org_id, slug)
);

CREATE TABLE channels (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id),
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    color        TEXT NOT NULL,
    mascot       TEXT NOT NULL,
    base_weight  REAL NOT NULL,
    matchers     TEXT NOT NULL,
    archived     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (project_id, key)
);

CREATE TABLE reports (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects (id),
    channel_key     TEXT NOT NULL,
    status          TEXT NOT NULL,
    title           TEXT NOT NULL,
    blocks          TEXT NOT NULL,
    context         TEXT NOT NULL,
    identity        TEXT,
    identity_error  TEXT,
    author_kind     TEXT NOT NULL,
    author_id       TEXT,
    author_label    TEXT,
    artifact_id     TEXT,
    url             TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- Keyset listing, newest first, per filter: each index ends with id so `ORDER BY id DESC LIMIT n`
-- reads only n entries.
CREATE INDEX reports_by_project ON reports (project_id, id);
CREATE INDEX reports_by_status ON reports (project_id, status, id);
CREATE INDEX reports_by_channel ON reports (project_id, channel_key, id);
-- Also serves the room summary (count and latest created_at per artifact id) without touching rows.
CREATE INDEX reports_by_artifact ON reports (project_id, artifact_id, id, created_at)
    WHERE artifact_id IS NOT NULL;
-- Short ids are the last 6 characters of an id; an expression index keeps their lookup indexed.
CREATE INDEX reports_by_short_id ON reports (project_id, substr(id, -6));

CREATE TABLE status_changes (
    seq          INTEGER PRIMARY KEY,
    report_id    TEXT NOT NULL REFERENCES reports (id),
    from_status  TEXT NOT NULL,
    to_status    TEXT NOT NULL,
    by_kind      TEXT NOT NULL,
    by_id        TEXT,
    by_label     TEXT,
    at           INTEGER NOT NULL
);
CREATE INDEX status_changes_by_report ON status_changes (report_id, at, seq);

CREATE TABLE rooms (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id),
    artifact_id  TEXT NOT NULL,
    title        TEXT NOT NULL,
    meta         TEXT,
    archived     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (project_id, artifact_id)
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    project_id    TEXT REFERENCES projects (id),
    org_id        TEXT NOT NULL REFERENCES organizations (id),
    name          TEXT NOT NULL,
    key_hash      TEXT NOT NULL UNIQUE,
    scopes        TEXT NOT NULL,
    origin        TEXT NOT NULL,
    expires_at    INTEGER,
    revoked_at    INTEGER,
    last_used_at  INTEGER,
    agent_name    TEXT,
    agent_owner   TEXT,
    created_at    INTEGER NOT NULL
);
CREATE INDEX api_keys_by_project ON api_keys (project_id, created_at);

CREATE TABLE hints (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id),
    channel_key  TEXT NOT NULL,
    weight       TEXT NOT NULL,
    user_id      TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX hints_by_project ON hints (project_id, expires_at);
CREATE INDEX hints_by_expiry ON hints (expires_at);

CREATE TABLE comments (
    id            TEXT PRIMARY KEY,
    report_id     TEXT NOT NULL REFERENCES reports (id),
    project_id    TEXT NOT NULL REFERENCES projects (id),
    author_kind   TEXT NOT NULL,
    author_id     TEXT,
    author_label  TEXT,
    text          TEXT NOT NULL,
    kind          TEXT,
    draft         INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    published_at  INTEGER
);
CREATE INDEX comments_by_report ON comments (report_id, created_at, id);

CREATE TABLE viewed_marks (
    report_id  TEXT NOT NULL REFERENCES reports (id),
    viewer     TEXT NOT NULL,
    viewed_at  INTEGER NOT NULL,
    PRIMARY KEY (report_id, viewer)
);

CREATE TABLE flags (
    project_id  TEXT NOT NULL REFERENCES projects (id),
    key         TEXT NOT NULL,
    enabled     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, key)
);

CREATE TABLE blobs (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id),
    kind         TEXT NOT NULL,
    mime         TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    width        INTEGER,
    height       INTEGER,
    duration_ms  INTEGER,
    name         TEXT,
    report_id    TEXT REFERENCES reports (id),
    created_at   INTEGER NOT NULL
);
CREATE INDEX blobs_unbound_by_age ON blobs (created_at) WHERE report_id IS NULL;
CREATE INDEX blobs_by_report ON blobs (report_id) WHERE report_id IS NOT NULL;

CREATE TABLE idempotency_keys (
    project_id  TEXT NOT NULL REFERENCES projects (id),
    key         TEXT NOT NULL,
    report_id   TEXT NOT NULL REFERENCES reports (id),
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
