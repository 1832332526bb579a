-- A consent a person started at their bank through Enable Banking, waiting for them to come
-- back: in the database, so whichever instance their browser returns to completes it. `state`
-- is what the bank sends back; only the member who started it may complete it, once, before
-- `expires_at`.
CREATE TABLE bank_consents (
    state TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    -- The bank, as Enable Banking names it: the connection's name.
    bank TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('household', 'private')),
    -- A connection whose consent this renews.
    connection_id INTEGER REFERENCES bank_connections(id) ON DELETE CASCADE,
    -- When the consent asked for ends.
    consent_until TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX bank_consents_expiry ON bank_consents(expires_at);

CREATE TRIGGER bank_consents_same_household_insert BEFORE INSERT ON bank_consents
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
    OR (NEW.connection_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_consents refers to another household'); END;

CREATE TRIGGER bank_consents_same_household_update BEFORE UPDATE OF household_id, member_id, connection_id ON bank_consents
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
    OR (NEW.connection_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_consents refers to another household'); END;
