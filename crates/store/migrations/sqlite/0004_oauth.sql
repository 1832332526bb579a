-- OAuth 2.1: Exhale as its own authorization server for remote MCP clients.
--
-- A person's consent to a client is a grant, and a grant is a row of `tokens` of kind 'oauth':
-- it has the member, the scope, a name (the client's), last use and revocation, so the
-- invoker, the audit log, rate limits, confirmations and MCP sessions treat it as they treat an
-- API token. A grant has no secret of its own (its bearers are the access and refresh tokens
-- below), so `hash` becomes optional; SQLite changes a column's constraint by rebuilding the
-- table.

-- Clients, registered by themselves (RFC 7591) or known by a metadata document URL.
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    name TEXT NOT NULL,
    -- JSON array of the exact redirect URIs.
    redirect_uris TEXT NOT NULL,
    auth_method TEXT NOT NULL CHECK (auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
    secret_hash TEXT,
    grant_types TEXT NOT NULL,
    application_type TEXT,
    registered_from TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX oauth_clients_created ON oauth_clients(created_at);

CREATE TABLE tokens_v4 (
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
    tools TEXT NOT NULL DEFAULT 'full' CHECK (tools IN ('full', 'compact')),
    -- The client a grant was given to.
    client_id TEXT REFERENCES oauth_clients(id) ON DELETE CASCADE,
    -- The resource (audience) a grant's access tokens are for.
    resource TEXT,
    CHECK ((kind = 'api') = (hash IS NOT NULL)),
    CHECK ((kind = 'oauth') = (client_id IS NOT NULL AND resource IS NOT NULL))
);
INSERT INTO tokens_v4 (id, household_id, member_id, kind, name, prefix, hash, scope, created_at,
                       last_used_at, expires_at, revoked_at, tools)
    SELECT id, household_id, member_id, 'api', name, prefix, hash, scope, created_at,
           last_used_at, expires_at, revoked_at, tools
    FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_v4 RENAME TO tokens;
CREATE INDEX tokens_member ON tokens(household_id, member_id);

-- Authorization requests checked and waiting for the person's decision (minutes).
CREATE TABLE oauth_requests (
    id_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    redirect_explicit INTEGER NOT NULL,
    state TEXT,
    code_challenge TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

-- Authorization codes: single use, a minute.
CREATE TABLE oauth_codes (
    hash TEXT PRIMARY KEY,
    grant_id INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    redirect_explicit INTEGER NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    consumed_at TEXT
);

-- Access and refresh tokens of grants, stored as SHA-256. A refresh token is replaced by its
-- successor on every use; the tokens of one line of refreshes share a family.
CREATE TABLE oauth_tokens (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
    family TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'trusted')),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    -- Refresh tokens: when this one was exchanged, and the hash of the refresh token that
    -- replaced it.
    rotated_at TEXT,
    successor TEXT,
    revoked_at TEXT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE INDEX oauth_tokens_family ON oauth_tokens(family);

-- Whether the household's owners let connected apps be given the `trusted` scope; off until
-- an owner turns it on.
ALTER TABLE households ADD COLUMN trusted_apps INTEGER NOT NULL DEFAULT 0 CHECK (trusted_apps IN (0, 1));
