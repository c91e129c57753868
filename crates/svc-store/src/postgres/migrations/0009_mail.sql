-- Mail (docs/mail.md): the outbox every message waits in until it is delivered (or read by an
-- owner in the dashboard when no SMTP server is set), each person's mail settings per project,
-- and the service's own mail state (the unsubscribe signing key, the instant notifier's mark).

CREATE TABLE mail_outbox (
    id               TEXT COLLATE "C" PRIMARY KEY,
    -- Owners of this organization read the message in the dashboard's outbox.
    org_id           TEXT COLLATE "C" NOT NULL,
    project_id       TEXT COLLATE "C",
    recipient        TEXT NOT NULL,
    subject          TEXT NOT NULL,
    body             TEXT NOT NULL,
    kind             TEXT NOT NULL,
    -- A second message with the same key is not stored (one mail per report and person).
    dedupe_key       TEXT UNIQUE,
    unsubscribe_url  TEXT,
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT,
    -- When a sender may try next; while one holds the message, the end of its lease.
    next_attempt_at  BIGINT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    last_error       TEXT,
    sent_at          BIGINT,
    given_up_at      BIGINT
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND given_up_at IS NULL;
CREATE INDEX mail_outbox_by_org ON mail_outbox (org_id, id);
CREATE INDEX mail_outbox_by_age ON mail_outbox (created_at);

-- No row: new reports off, replies on.
CREATE TABLE mail_preferences (
    user_id         TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    project_id      TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    new_reports     TEXT NOT NULL,
    replies         BOOLEAN NOT NULL,
    -- When new_reports last changed: reports filed before are never mailed at once, and the
    -- first digest starts there.
    reports_since   BIGINT NOT NULL,
    digest_through  BIGINT,
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX mail_preferences_by_project ON mail_preferences (project_id);
CREATE INDEX mail_preferences_sending ON mail_preferences (new_reports) WHERE new_reports <> 'off';

CREATE TABLE mail_state (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
