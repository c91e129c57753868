-- Issue trackers (docs/integrations.md): a project's connection to one, the issue each report
-- became, and the tracker's deliveries already handled (a replayed one changes nothing).

CREATE TABLE tracker_connections (
    project_id      TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    tracker         TEXT NOT NULL,
    -- owner/name lowercased: how a delivery's repository finds its connections.
    repository_key  TEXT NOT NULL,
    -- JSON (svc_core::tracker::TrackerSettings): everything that may be shown.
    settings        TEXT NOT NULL,
    -- The token or the app's private key, and the webhook secret: Svc uses them, so they are
    -- kept as they are (a hash could not sign or be sent); no API returns them.
    credential      TEXT NOT NULL,
    webhook_secret  TEXT NOT NULL,
    last_error      TEXT,
    last_error_at   INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX tracker_connections_by_repository ON tracker_connections (tracker, repository_key);

CREATE TABLE issue_links (
    report_id       TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL,
    tracker         TEXT NOT NULL,
    repository      TEXT NOT NULL,
    repository_key  TEXT NOT NULL,
    number          INTEGER NOT NULL,
    url             TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE INDEX issue_links_by_issue ON issue_links (tracker, repository_key, number);

CREATE TABLE tracker_deliveries (
    tracker      TEXT NOT NULL,
    delivery_id  TEXT NOT NULL,
    received_at  INTEGER NOT NULL,
    PRIMARY KEY (tracker, delivery_id)
);
CREATE INDEX tracker_deliveries_by_time ON tracker_deliveries (received_at);

-- Svc's changes go to the issues from the feed's start (events from before a connection was made
-- are passed over by the consumer).
INSERT INTO event_consumers (name, position) VALUES ('trackers', 0);
