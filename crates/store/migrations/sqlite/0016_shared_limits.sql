-- What limits count (failed sign-ins, OAuth requests by network, the assistant's messages),
-- in the database, so every instance on it counts the same; each kind forgets what is past
-- its window.
CREATE TABLE limit_counts (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    count INTEGER NOT NULL,
    since TEXT NOT NULL,
    last TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX limit_counts_since ON limit_counts(kind, since);

-- The pair a refresh issued, sealed with a key derived from the refresh token it replaced
-- (which only its client holds), so a retry of the same refresh within a minute gets it from
-- any instance; the database alone cannot open it.
ALTER TABLE oauth_tokens ADD COLUMN retry_pair TEXT;

-- The one-time setup links each instance printed while nobody had an account (their hashes).
CREATE TABLE setup_links (
    hash TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
