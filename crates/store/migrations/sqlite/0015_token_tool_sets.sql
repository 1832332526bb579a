-- A token's client may list the subscriptions tool set too (`ops::tools::ToolSet`).
--
-- SQLite changes a column's CHECK by rebuilding the table. OAuth codes and tokens refer to
-- tokens(id): the runner applies migrations with foreign keys off, so dropping the old table
-- deletes none of theirs, and checks every reference before it commits. The new table keeps
-- the old one's AUTOINCREMENT counter, so no id of a deleted token is given again.
CREATE TABLE tokens_v15 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'oauth')),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    -- SHA-256 of an API token's secret; NULL for a grant.
    hash TEXT UNIQUE,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'trusted')),
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    expires_at TEXT,
    revoked_at TEXT,
    tools TEXT NOT NULL DEFAULT 'full' CHECK (tools IN ('full', 'subscriptions', 'compact')),
    -- The client a grant was given to.
    client_id TEXT REFERENCES oauth_clients(id) ON DELETE CASCADE,
    -- The resource (audience) a grant's access tokens are for.
    resource TEXT,
    CHECK ((kind = 'api') = (hash IS NOT NULL)),
    CHECK ((kind = 'oauth') = (client_id IS NOT NULL AND resource IS NOT NULL))
);
INSERT INTO tokens_v15 (id, household_id, member_id, kind, name, prefix, hash, scope, created_at,
                        last_used_at, expires_at, revoked_at, tools, client_id, resource)
    SELECT id, household_id, member_id, kind, name, prefix, hash, scope, created_at,
           last_used_at, expires_at, revoked_at, tools, client_id, resource
    FROM tokens;
DELETE FROM sqlite_sequence WHERE name = 'tokens_v15';
INSERT INTO sqlite_sequence (name, seq) SELECT 'tokens_v15', seq FROM sqlite_sequence WHERE name = 'tokens';
DROP TABLE tokens;
ALTER TABLE tokens_v15 RENAME TO tokens;
CREATE INDEX tokens_member ON tokens(household_id, member_id);
