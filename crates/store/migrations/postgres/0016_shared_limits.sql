-- See the SQLite migration of the same name.
CREATE TABLE limit_counts (
    kind TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    count BIGINT NOT NULL,
    since TEXT COLLATE "C" NOT NULL,
    last TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX limit_counts_since ON limit_counts(kind, since);

ALTER TABLE oauth_tokens ADD COLUMN retry_pair TEXT COLLATE "C";

CREATE TABLE setup_links (
    hash TEXT COLLATE "C" PRIMARY KEY,
    created_at TEXT COLLATE "C" NOT NULL
);
