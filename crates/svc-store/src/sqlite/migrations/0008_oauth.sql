-- OAuth for the tool endpoint (spec Authentication §5): registered clients, authorization codes
-- (only their SHA-256) and what each OAuth key was made for. The access token a client gets is
-- the secret of an ordinary API key (origin 'oauth'); oauth_grants says which client, redirect
-- host and person it belongs to.
CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    client_name   TEXT NOT NULL,
    -- JSON array of strings.
    redirect_uris TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    -- The last completed token exchange; NULL: never (cleaned up after a day).
    last_used_at  INTEGER
);
CREATE INDEX oauth_clients_unused ON oauth_clients (created_at) WHERE last_used_at IS NULL;

CREATE TABLE oauth_codes (
    code_hash      TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT,
    user_id        TEXT NOT NULL,
    org_id         TEXT NOT NULL,
    -- NULL: a grant on the whole organization.
    project_id     TEXT,
    -- JSON array of strings.
    scopes         TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
);
CREATE INDEX oauth_codes_by_expiry ON oauth_codes (expires_at);
CREATE INDEX oauth_codes_by_client ON oauth_codes (client_id);
CREATE INDEX oauth_codes_by_project ON oauth_codes (project_id) WHERE project_id IS NOT NULL;

CREATE TABLE oauth_grants (
    key_id        TEXT PRIMARY KEY REFERENCES api_keys (id),
    client_id     TEXT NOT NULL,
    client_name   TEXT NOT NULL,
    redirect_host TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    org_id        TEXT NOT NULL,
    -- The key's project; NULL for an organization-wide key.
    project_id    TEXT,
    created_at    INTEGER NOT NULL
);
CREATE INDEX oauth_grants_by_user ON oauth_grants (user_id, created_at);
CREATE INDEX oauth_grants_by_project ON oauth_grants (project_id) WHERE project_id IS NOT NULL;
