-- A member may ask to be told when a bank sync notices a new recurring charge (off unless
-- they ask). An Enable Banking connection keeps its bank's country, so its consent is renewed
-- at the same bank without asking which country again.
ALTER TABLE reminder_preferences ADD COLUMN new_recurring INTEGER NOT NULL DEFAULT 0 CHECK (new_recurring IN (0, 1));
ALTER TABLE bank_connections ADD COLUMN country TEXT;
ALTER TABLE bank_consents ADD COLUMN country TEXT;

-- Two kinds of message more: a bank's consent ending, and a new recurring charge. SQLite
-- changes a CHECK only by building the table again, with its indexes and triggers.
CREATE TABLE outbox_v31 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    destination_id INTEGER NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
    -- One per message: planning twice never writes a second row, and receivers see the same
    -- id on every attempt.
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('charge_upcoming', 'trial_ending', 'card_expiring', 'price_rise', 'weekly_digest', 'agent_change', 'bank_consent_ending', 'new_recurring', 'test')),
    -- JSON: what the message is about; it is worded when it is sent.
    payload TEXT NOT NULL,
    due_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'obsolete', 'missed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    -- While 'sending': when the worker's claim ends and the message may be tried again.
    lease_until TEXT,
    sent_at TEXT,
    external_id TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO outbox_v31 (id, household_id, member_id, destination_id, key, kind, payload, due_at,
                        status, attempts, lease_until, sent_at, external_id, last_error, created_at)
    SELECT id, household_id, member_id, destination_id, key, kind, payload, due_at,
           status, attempts, lease_until, sent_at, external_id, last_error, created_at
    FROM outbox;
DELETE FROM sqlite_sequence WHERE name = 'outbox_v31';
INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_v31', seq FROM sqlite_sequence WHERE name = 'outbox';
DROP TABLE outbox;
ALTER TABLE outbox_v31 RENAME TO outbox;
CREATE INDEX outbox_due ON outbox(status, due_at);
CREATE INDEX outbox_destination ON outbox(destination_id, status);

CREATE TRIGGER outbox_same_household_insert BEFORE INSERT ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;

CREATE TRIGGER outbox_same_household_update BEFORE UPDATE OF household_id, destination_id, member_id ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;

-- The pending transactions of a household, which the attention items read for possible
-- duplicates at every briefing: few, among many booked ones.
CREATE INDEX transactions_pending ON transactions(household_id, on_date) WHERE pending = 1;
