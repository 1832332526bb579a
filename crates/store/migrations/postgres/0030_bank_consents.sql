-- See the SQLite migration of the same name.
CREATE TABLE bank_consents (
    state TEXT COLLATE "C" PRIMARY KEY,
    household_id BIGINT NOT NULL REFERENCES households(id) ON DELETE CASCADE DEFERRABLE,
    member_id BIGINT NOT NULL,
    bank TEXT COLLATE "C" NOT NULL,
    visibility TEXT COLLATE "C" NOT NULL CHECK (visibility IN ('household', 'private')),
    connection_id BIGINT,
    consent_until TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL,
    CONSTRAINT bank_consents_member_id_fkey FOREIGN KEY (household_id, member_id)
        REFERENCES members (household_id, id) ON DELETE CASCADE DEFERRABLE,
    CONSTRAINT bank_consents_connection_id_fkey FOREIGN KEY (household_id, connection_id)
        REFERENCES bank_connections (household_id, id) ON DELETE CASCADE DEFERRABLE
);
CREATE INDEX bank_consents_expiry ON bank_consents(expires_at);

ALTER TABLE bank_consents ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY household ON bank_consents
    USING ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household()))
    WITH CHECK ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household()));
