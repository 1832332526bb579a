-- Money beyond subscriptions: accounts with their balances over time, labels, and the
-- transactions on the accounts (with their labels and splits).

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    owner_id INTEGER NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('checking', 'savings', 'credit_card', 'cash', 'investment', 'loan', 'property')),
    currency TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('household', 'private')),
    -- Archived rather than deleted while transactions exist: their history stays.
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE INDEX accounts_household ON accounts(household_id, name COLLATE NOCASE, id);

-- What an account held at the end of a day, as the bank or the person said.
CREATE TABLE account_balances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    on_date TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (account_id, on_date)
);

CREATE TABLE labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    colour TEXT NOT NULL DEFAULT '#8a8f98',
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX labels_name ON labels(household_id, name COLLATE NOCASE);

-- One statement loaded into an account: undoing it takes its transactions away.
CREATE TABLE imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id),
    transaction_count INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    on_date TEXT NOT NULL,
    -- Signed: money out is negative.
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    -- Normalised as import normalises it ("AMAZON PRIME"), for matching and grouping.
    payee TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    notes TEXT,
    category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
    -- The other side of a transfer between two of the household's accounts.
    transfer_id INTEGER REFERENCES transactions(id) ON DELETE SET NULL,
    -- The subscription charge this transaction paid.
    charge_id INTEGER REFERENCES charges(id) ON DELETE SET NULL,
    source TEXT NOT NULL CHECK (source IN ('manual', 'import')),
    -- What makes an imported row the same row when the statement is imported again.
    import_key TEXT,
    import_id INTEGER REFERENCES imports(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- Searches list the newest first; these give that order without a sort.
CREATE INDEX transactions_household_date ON transactions(household_id, on_date DESC, id DESC);
CREATE INDEX transactions_account_date ON transactions(account_id, on_date DESC, id DESC);
CREATE INDEX transactions_category ON transactions(category_id);
CREATE INDEX transactions_import ON transactions(import_id);
CREATE UNIQUE INDEX transactions_import_key ON transactions(account_id, import_key)
    WHERE import_key IS NOT NULL;

CREATE TABLE transaction_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (transaction_id, label_id)
);
CREATE INDEX transaction_labels_label ON transaction_labels(label_id, transaction_id);

-- Parts of one transaction in different categories; their amounts add up to its amount.
CREATE TABLE transaction_splits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    amount_minor INTEGER NOT NULL,
    category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
    note TEXT
);
CREATE INDEX transaction_splits_transaction ON transaction_splits(transaction_id);
