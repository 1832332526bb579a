-- See the SQLite migration of the same name.
CREATE TABLE chat_imports (
    id TEXT COLLATE "C" PRIMARY KEY,
    household_id BIGINT NOT NULL REFERENCES households(id) ON DELETE CASCADE DEFERRABLE,
    member_id BIGINT NOT NULL REFERENCES members(id) ON DELETE CASCADE DEFERRABLE,
    items TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX chat_imports_expiry ON chat_imports(expires_at);

-- A household's rows, as every table with a household (0019_row_level_security).
ALTER TABLE chat_imports ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY household ON chat_imports
    USING ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household()))
    WITH CHECK ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household()));
