-- People who sign in to the dashboard, their memberships, sessions and one-time links.

CREATE TABLE users (
    id             TEXT COLLATE "C" PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE TABLE memberships (
    org_id      TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    role        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_by_user ON memberships (user_id);

-- Only the SHA-256 of the cookie's value is kept.
CREATE TABLE sessions (
    id_hash       TEXT PRIMARY KEY,
    user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- First-owner and password-reset links: the SHA-256 of the token; used_at set when redeemed.
CREATE TABLE one_time_links (
    token_hash  TEXT PRIMARY KEY,
    purpose     TEXT NOT NULL,
    org_id      TEXT COLLATE "C" REFERENCES organizations (id),
    user_id     TEXT COLLATE "C" REFERENCES users (id),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);
CREATE INDEX one_time_links_by_expiry ON one_time_links (expires_at);
