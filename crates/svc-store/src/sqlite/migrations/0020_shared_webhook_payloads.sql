-- One stored body for the deliveries of an event that send the same bytes (the endpoints of one
-- format): a delivery names the delivery whose body it sends (payload_key; NULL: its own), and a
-- body is no longer one delivery's (no foreign key). These tables live in the deliveries' file
-- (`sqlite::deliveries`, which makes the same change there); a database whose rows moved there
-- has them no more, so they are made again here, empty, and the service drops them again when it
-- opens the database. A database copied in by `svc migrate` still holds them, in this shape.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id                TEXT PRIMARY KEY,
    webhook_id        TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    project_id        TEXT NOT NULL,
    event_id          INTEGER,
    message_id        TEXT NOT NULL,
    event_type        TEXT NOT NULL,
    state             TEXT NOT NULL,
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   INTEGER NOT NULL,
    last_status       INTEGER,
    last_error        TEXT,
    last_attempt_at   INTEGER,
    last_duration_ms  INTEGER,
    created_at        INTEGER NOT NULL,
    delivered_at      INTEGER
);
CREATE TABLE IF NOT EXISTS webhook_payloads (
    delivery_id  TEXT PRIMARY KEY REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    payload      TEXT NOT NULL
);
ALTER TABLE webhook_deliveries ADD COLUMN payload_key TEXT;
CREATE TABLE webhook_payloads_shared (
    delivery_id  TEXT PRIMARY KEY,
    payload      TEXT NOT NULL
);
INSERT INTO webhook_payloads_shared (delivery_id, payload) SELECT delivery_id, payload FROM webhook_payloads;
DROP TABLE webhook_payloads;
ALTER TABLE webhook_payloads_shared RENAME TO webhook_payloads;
