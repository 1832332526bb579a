-- Recurring charges a bank sync noticed on an account that are not a subscription yet: shown
-- as needing attention until a person adds the subscription or dismisses the suggestion,
-- never created silently. One per account, merchant and currency; a later sync renews its
-- amount and date, and a dismissed one stays dismissed.
CREATE TABLE recurring_proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    -- The grouping key of the detection (upper case merchant words).
    merchant TEXT NOT NULL,
    name TEXT NOT NULL,
    -- Positive: what each charge takes.
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    cycle TEXT NOT NULL,
    -- A bill that follows use: the amount is the median of the last three.
    amount_varies INTEGER NOT NULL DEFAULT 0 CHECK (amount_varies IN (0, 1)),
    next_expected TEXT NOT NULL,
    dismissed INTEGER NOT NULL DEFAULT 0 CHECK (dismissed IN (0, 1)),
    created_at TEXT NOT NULL,
    UNIQUE (account_id, merchant, currency)
);
CREATE INDEX recurring_proposals_household ON recurring_proposals(household_id, id);

CREATE TRIGGER recurring_proposals_same_household_insert BEFORE INSERT ON recurring_proposals
WHEN (NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: recurring_proposals refers to another household'); END;

CREATE TRIGGER recurring_proposals_same_household_update BEFORE UPDATE OF household_id, account_id ON recurring_proposals
WHEN (NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: recurring_proposals refers to another household'); END;
