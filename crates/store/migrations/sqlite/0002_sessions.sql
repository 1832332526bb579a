-- Browser sessions of the web app. The cookie holds a random secret; only its SHA-256 is
-- stored, as for tokens. A session ends when signed out, when it expires, or with its member.
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    secret_hash TEXT NOT NULL UNIQUE,
    csrf TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

CREATE INDEX sessions_member ON sessions(member_id);
