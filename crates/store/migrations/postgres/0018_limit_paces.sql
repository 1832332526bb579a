-- See the SQLite migration of the same name.
CREATE TABLE limit_paces (
    kind TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    due BIGINT NOT NULL,
    PRIMARY KEY (kind, key)
);
