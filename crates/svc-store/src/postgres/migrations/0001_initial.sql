-- Svc schema for PostgreSQL. Times are epoch milliseconds (BIGINT). Id columns use the "C"
-- collation so hex ids compare bytewise: report ids sort by creation time and work as keyset
-- cursors whatever the database's default collation is.

CREATE TABLE organizations (
    id         TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX organizations_name_idx ON organizations (name);

CREATE TABLE projects (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    org_id              TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    name                TEXT NOT NULL,
    slug                TEXT NOT NULL,
    project_key         TEXT COLLATE "C" NOT NULL,
    url_patterns        JSONB NOT NULL,
    default_channel_key TEXT NOT NULL,
    widget_config       JSONB NOT NULL,
    allowed_origins     JSONB NOT NULL,
    identity_secret     TEXT,
    created_at          BIGINT NOT NULL,
    CONSTRAINT projects_org_slug_key UNIQUE (org_id, slug),
    CONSTRAINT projects_project_key_key UNIQUE (project_key)
);

CREATE TABLE channels (
    id          TEXT COLLATE "C" PRIMARY KEY,
    project_id  TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    color       TEXT NOT NULL,
    mascot      TEXT NOT NULL,
    base_weight DOUBLE PRECISION NOT NULL,
    matchers    JSONB NOT NULL,
    archived    BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    CONSTRAINT channels_project_key_key UNIQUE (project_id, key)
);

CREATE TABLE reports (
    id             TEXT COLLATE "C" PRIMARY KEY,
    project_id     TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    channel_key    TEXT NOT NULL,
    status         TEXT NOT NULL,
    title          TEXT NOT NULL,
    blocks         JSONB NOT NULL,
    context        JSONB NOT NULL,
    identity       JSONB,
    identity_error TEXT,
    author_kind    TEXT NOT NULL,
    author_id      TEXT,
    author_label   TEXT,
    artifact_id    TEXT,
    url            TEXT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
-- Keyset pages, newest first, for each list filter.
CREATE INDEX reports_project_idx ON reports (project_id, id);
CREATE INDEX reports_project_status_idx ON reports (project_id, status, id);
CREATE INDEX reports_project_channel_idx ON reports (project_id, channel_key, id);
-- Also serves the room list (count and last activity per artifact id) as an index-only scan.
CREATE INDEX reports_project_artifact_idx ON reports (project_id, artifact_id, id)
    INCLUDE (created_at) WHERE artifact_id IS NOT NULL;
-- Short-id lookups (the last 6 hex characters of the id).
CREATE INDEX reports_project_short_id_idx ON reports (project_id, right(id, 6));

CREATE TABLE status_changes (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    report_id   TEXT COLLATE "C" NOT NULL REFERENCES reports (id),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    by_kind     TEXT NOT NULL,
    by_id       TEXT,
    by_label    TEXT,
    at          BIGINT NOT NULL
);
CREATE INDEX status_changes_report_idx ON status_changes (report_id, at, id);

CREATE TABLE rooms (
    id          TEXT COLLATE "C" PRIMARY KEY,
    project_id  TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    artifact_id TEXT NOT NULL,
    title       TEXT NOT NULL,
    meta        JSONB,
    archived    BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    CONSTRAINT rooms_project_artifact_key UNIQUE (project_id, artifact_id)
);

CREATE TABLE api_keys (
    id           TEXT COLLATE "C" PRIMARY KEY,
    -- NULL for an organization-wide key.
    project_id   TEXT COLLATE "C" REFERENCES projects (id),
    org_id       TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    name         TEXT NOT NULL,
    key_hash     TEXT COLLATE "C" NOT NULL,
    scopes       JSONB NOT NULL,
    origin       TEXT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    last_used_at BIGINT,
    agent_name   TEXT,
    agent_owner  TEXT,
    created_at   BIGINT NOT NULL,
    CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);
CREATE INDEX api_keys_project_idx ON api_keys (project_id, created_at);

CREATE TABLE hints (
    id          TEXT COLLATE "C" PRIMARY KEY,
    project_id  TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    channel_key TEXT NOT NULL,
    -- `suggest`, `max` or a number as text (HintWeight::to_db).
    weight      TEXT NOT NULL,
    user_id     TEXT,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX hints_project_idx ON hints (project_id, expires_at);
CREATE INDEX hints_expires_idx ON hints (expires_at);

CREATE TABLE comments (
    id           TEXT COLLATE "C" PRIMARY KEY,
    report_id    TEXT COLLATE "C" NOT NULL REFERENCES reports (id),
    project_id   TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    author_kind  TEXT NOT NULL,
    author_id    TEXT,
    author_label TEXT,
    text         TEXT NOT NULL,
    kind         TEXT,
    draft        BOOLEAN NOT NULL,
    created_at   BIGINT NOT NULL,
    published_at BIGINT
);
CREATE INDEX comments_report_idx ON comments (report_id, created_at, id);

CREATE TABLE viewed_marks (
    report_id TEXT COLLATE "C" NOT NULL REFERENCES reports (id),
    viewer    TEXT NOT NULL,
    viewed_at BIGINT NOT NULL,
    PRIMARY KEY (report_id, viewer)
);

CREATE TABLE flags (
    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    key        TEXT NOT NULL,
    enabled    BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, key)
);

CREATE TABLE blobs (
    id          TEXT COLLATE "C" PRIMARY KEY,
    project_id  TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
    kind        TEXT NOT NULL,
    mime        TEXT NOT NULL,
    bytes       BIGINT NOT NULL,
    width       BIGINT,
    height      BIGINT,
    duration_ms BIGINT,
    name        TEXT,
    -- NULL while unbound; set once, when a report names the blob.
    report_id   TEXT COLLATE "C" REFERENCES reports (id),
    created_at  BIGINT NOT NULL
);
-- The sweep of unbound blobs.
CREATE INDEX blobs_unbound_idx ON blobs (created_at) WHERE report_id IS NULL;
CREATE INDEX blobs_report_idx ON blobs (report_id) WHERE report_id IS NOT NULL;

CREATE TABLE idempotency_keys (
    project_id TEXT COLLATE "C" NOT NULL,
    key        TEXT NOT NULL,
    -- No foreign key: the key is claimed before its report is inserted (see create_report).
    report_id  TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
