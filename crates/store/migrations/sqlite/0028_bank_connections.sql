-- Bank connections (SimpleFIN Bridge, Enable Banking): what a household linked, the accounts
-- each brings and where they go, which provider ids are already recorded, and how many
-- requests each connection made a day. A connection's credentials are a secret
-- (`secrets`, named `bank:{id}`), never a column here.

CREATE TABLE bank_connections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    -- Who linked it: a sync runs as them, and a private connection is theirs alone.
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    provider TEXT NOT NULL CHECK (provider IN ('simplefin', 'enable_banking')),
    name TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('household', 'private')),
    -- An owner linked a bridge on this machine or the local network.
    reach_local INTEGER NOT NULL DEFAULT 0 CHECK (reach_local IN (0, 1)),
    status TEXT NOT NULL CHECK (status IN ('ok', 'needs_relink', 'try_later', 'rate_limited', 'misconfigured', 'unreadable')),
    -- The last failure in words, with what to do.
    status_detail TEXT,
    -- Failed syncs in a row, for the backoff.
    failures INTEGER NOT NULL DEFAULT 0,
    -- The last day a successful sync covered: the next one starts a few days before it.
    synced_through TEXT,
    last_attempt_at TEXT,
    last_success_at TEXT,
    next_sync_at TEXT NOT NULL,
    consent_until TEXT,
    -- While a sync runs, on whichever instance: no other starts before this.
    leased_until TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX bank_connections_due ON bank_connections(next_sync_at);
CREATE INDEX bank_connections_household ON bank_connections(household_id, id);

CREATE TABLE bank_accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    connection_id INTEGER NOT NULL REFERENCES bank_connections(id) ON DELETE CASCADE,
    -- What the provider calls it from one sync to the next.
    remote_key TEXT NOT NULL,
    name TEXT NOT NULL,
    institution TEXT,
    -- Empty for a currency Exhale does not know: nothing of it is recorded.
    currency TEXT,
    -- Where its transactions go; empty: not recorded.
    account_id INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
    available_minor INTEGER,
    -- What went wrong for this account alone at the last sync, in words.
    problem TEXT,
    UNIQUE (connection_id, remote_key)
);
CREATE INDEX bank_accounts_account ON bank_accounts(account_id);

-- Every provider id a transaction was given (a pending one, the booked one it became, an id
-- the provider reissued): a key seen again changes that transaction, never adds one. Not a
-- reference: a transaction deleted or undone keeps its keys, so a later sync does not bring
-- it back, and an undo that restores it (ids are never given twice) finds them again.
CREATE TABLE bank_keys (
    bank_account_id INTEGER NOT NULL REFERENCES bank_accounts(id) ON DELETE CASCADE,
    provider_key TEXT NOT NULL,
    transaction_id INTEGER NOT NULL,
    PRIMARY KEY (bank_account_id, provider_key)
);
CREATE INDEX bank_keys_transaction ON bank_keys(transaction_id);

-- Requests made for a connection, by UTC day, within the provider's daily limit.
CREATE TABLE bank_requests (
    connection_id INTEGER NOT NULL REFERENCES bank_connections(id) ON DELETE CASCADE,
    on_date TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (connection_id, on_date)
);

-- A transaction the bank shows as not yet booked.
ALTER TABLE transactions ADD COLUMN pending INTEGER NOT NULL DEFAULT 0 CHECK (pending IN (0, 1));

CREATE TRIGGER bank_connections_same_household_insert BEFORE INSERT ON bank_connections
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_connections refers to another household'); END;

CREATE TRIGGER bank_connections_same_household_update BEFORE UPDATE OF household_id, member_id ON bank_connections
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_connections refers to another household'); END;

CREATE TRIGGER bank_accounts_same_household_insert BEFORE INSERT ON bank_accounts
WHEN (NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
    OR (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_accounts refers to another household'); END;

CREATE TRIGGER bank_accounts_same_household_update BEFORE UPDATE OF household_id, connection_id, account_id ON bank_accounts
WHEN (NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
    OR (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_accounts refers to another household'); END;

CREATE TRIGGER bank_keys_same_household_insert BEFORE INSERT ON bank_keys
WHEN (SELECT household_id FROM bank_accounts WHERE id = NEW.bank_account_id)
    IS NOT (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_keys refers to two households'); END;

CREATE TRIGGER bank_keys_same_household_update BEFORE UPDATE OF bank_account_id, transaction_id ON bank_keys
WHEN (SELECT household_id FROM bank_accounts WHERE id = NEW.bank_account_id)
    IS NOT (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_keys refers to two households'); END;
