-- Paces (a token's calls, a member's messages to the assistant): per kind and key, when the
-- next one is due at the steady rate, in microseconds since 1970. A call is let through while
-- that is at most a burst ahead of now. In the database so every instance on it keeps the
-- same pace. (On SQLite, which one process serves, the server keeps them in memory instead,
-- sparing each call a write; the table is here for what reads the store alike on both.)
CREATE TABLE limit_paces (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    due INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
);
