-- Webhooks (docs/webhooks.md): a project's endpoints, the deliveries the event feed makes for
-- them (one per event and endpoint, its body fixed when made) and every attempt at one.

CREATE TABLE webhooks (
    id               TEXT PRIMARY KEY,
    project_id       TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    -- JSON array of event type names.
    events           TEXT NOT NULL,
    events_default   INTEGER NOT NULL,
    description      TEXT,
    format           TEXT NOT NULL,
    enabled          INTEGER NOT NULL,
    disabled_reason  TEXT,
    -- Signing secrets are kept as they are: Svc signs with them (a hash could not).
    secret           TEXT NOT NULL,
    previous_secret  TEXT,
    previous_until   INTEGER,
    failing_since    INTEGER,
    -- After a failed attempt nothing more is sent to it until then (its failed delivery's retry).
    paused_until     INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX webhooks_by_project ON webhooks (project_id, id);

CREATE TABLE webhook_deliveries (
    id                TEXT PRIMARY KEY,
    webhook_id        TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    project_id        TEXT NOT NULL,
    event_id          INTEGER,
    message_id        TEXT NOT NULL,
    event_type        TEXT NOT NULL,
    state             TEXT NOT NULL,
    attempts          INTEGER NOT NULL DEFAULT 0,
    -- When a sender may try next; while one holds the delivery, the end of its lease.
    next_attempt_at   INTEGER NOT NULL,
    last_status       INTEGER,
    last_error        TEXT,
    last_attempt_at   INTEGER,
    last_duration_ms  INTEGER,
    created_at        INTEGER NOT NULL,
    delivered_at      INTEGER
);
-- One delivery per event and endpoint, whatever happens to the consumer that makes them.
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (webhook_id, event_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);

-- The body, apart from the delivery's row: that row changes with every attempt, the body never.
CREATE TABLE webhook_payloads (
    delivery_id  TEXT PRIMARY KEY REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    payload      TEXT NOT NULL
);

-- Attempts after the first, and a first that failed (a delivery delivered at once has its one
-- attempt in its own row).
CREATE TABLE webhook_attempts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    webhook_id   TEXT NOT NULL,
    at           INTEGER NOT NULL,
    status       INTEGER,
    error        TEXT,
    duration_ms  INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id);

-- The webhook deliveries are made from the feed's very start (an event written before the
-- delivery task first runs is still delivered).
INSERT INTO event_consumers (name, position) VALUES ('webhooks', 0);
