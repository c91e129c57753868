-- Webhooks (docs/webhooks.md): a project's endpoints, the deliveries the event feed makes for
-- them (one per event and endpoint, its body fixed when made) and every attempt at one.

CREATE TABLE webhooks (
    id               TEXT COLLATE "C" PRIMARY KEY,
    project_id       TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    -- JSON array of event type names.
    events           TEXT NOT NULL,
    events_default   BOOLEAN NOT NULL,
    description      TEXT,
    format           TEXT NOT NULL,
    enabled          BOOLEAN NOT NULL,
    disabled_reason  TEXT,
    -- Signing secrets are kept as they are: Svc signs with them (a hash could not).
    secret           TEXT NOT NULL,
    previous_secret  TEXT,
    previous_until   BIGINT,
    failing_since    BIGINT,
    -- After a failed attempt nothing more is sent to it until then (its failed delivery's retry).
    paused_until     BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX webhooks_by_project ON webhooks (project_id, id);

CREATE TABLE webhook_deliveries (
    id                TEXT COLLATE "C" PRIMARY KEY,
    webhook_id        TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    project_id        TEXT COLLATE "C" NOT NULL,
    event_id          BIGINT,
    message_id        TEXT NOT NULL,
    event_type        TEXT NOT NULL,
    state             TEXT NOT NULL,
    attempts          BIGINT NOT NULL DEFAULT 0,
    -- When a sender may try next; while one holds the delivery, the end of its lease.
    next_attempt_at   BIGINT NOT NULL,
    last_status       BIGINT,
    last_error        TEXT,
    last_attempt_at   BIGINT,
    last_duration_ms  BIGINT,
    created_at        BIGINT NOT NULL,
    delivered_at      BIGINT
);
-- One delivery per event and endpoint, whatever happens to the consumer that makes them.
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (webhook_id, event_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);

-- The body, apart from the delivery's row: that row changes with every attempt, the body never.
CREATE TABLE webhook_payloads (
    delivery_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    payload      TEXT NOT NULL
);

-- Attempts after the first, and a first that failed (a delivery delivered at once has its one
-- attempt in its own row).
CREATE TABLE webhook_attempts (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id  TEXT COLLATE "C" NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    webhook_id   TEXT COLLATE "C" NOT NULL,
    at           BIGINT NOT NULL,
    status       BIGINT,
    error        TEXT,
    duration_ms  BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id);

-- The webhook deliveries are made from the feed's very start (an event written before the
-- delivery task first runs is still delivered).
INSERT INTO event_consumers (name, position) VALUES ('webhooks', 0);
