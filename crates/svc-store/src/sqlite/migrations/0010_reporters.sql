-- Reporter sign-in (docs/widget.md, "Reporter sign-in"): each project's settings, the six-digit
-- codes mailed in email mode (only their keyed hash), the sessions a signed-in widget renews its
-- reporter token with (only the SHA-256 of their secret), and the pending OpenID Connect popups.
ALTER TABLE projects ADD COLUMN reporter_auth TEXT NOT NULL DEFAULT '{}';

CREATE TABLE reporter_codes (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id),
    email       TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    consumed_at INTEGER
);
CREATE INDEX reporter_codes_by_address ON reporter_codes (project_id, email, created_at);
CREATE INDEX reporter_codes_by_expiry ON reporter_codes (expires_at);

CREATE TABLE reporter_sessions (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id),
    secret_hash  TEXT NOT NULL UNIQUE,
    reporter_id  TEXT NOT NULL,
    email        TEXT,
    name         TEXT,
    method       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX reporter_sessions_by_project ON reporter_sessions (project_id);
CREATE INDEX reporter_sessions_by_expiry ON reporter_sessions (expires_at);

CREATE TABLE reporter_oidc_states (
    state_hash    TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects (id),
    -- The page origin the popup posts its result to.
    origin        TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX reporter_oidc_states_by_project ON reporter_oidc_states (project_id);
CREATE INDEX reporter_oidc_states_by_expiry ON reporter_oidc_states (expires_at);
