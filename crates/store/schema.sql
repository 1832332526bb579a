CREATE TRIGGER accounts_same_household_insert BEFORE INSERT ON accounts
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: accounts refers to another household'); END;
CREATE TRIGGER accounts_same_household_update BEFORE UPDATE OF household_id, owner_id ON accounts
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: accounts refers to another household'); END;
CREATE TRIGGER assistant_memory_same_household_insert BEFORE INSERT ON assistant_memory
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_memory refers to another household'); END;
CREATE TRIGGER assistant_memory_same_household_update BEFORE UPDATE OF household_id, member_id ON assistant_memory
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_memory refers to another household'); END;
CREATE TRIGGER assistant_usage_same_household_insert BEFORE INSERT ON assistant_usage
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_usage refers to another household'); END;
CREATE TRIGGER assistant_usage_same_household_update BEFORE UPDATE OF household_id, member_id ON assistant_usage
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_usage refers to another household'); END;
CREATE TRIGGER bank_accounts_same_household_insert BEFORE INSERT ON bank_accounts
WHEN (NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
    OR (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_accounts refers to another household'); END;
CREATE TRIGGER bank_accounts_same_household_update BEFORE UPDATE OF household_id, connection_id, account_id ON bank_accounts
WHEN (NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
    OR (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_accounts refers to another household'); END;
CREATE TRIGGER bank_connections_same_household_insert BEFORE INSERT ON bank_connections
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_connections refers to another household'); END;
CREATE TRIGGER bank_connections_same_household_update BEFORE UPDATE OF household_id, member_id ON bank_connections
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_connections refers to another household'); END;
CREATE TRIGGER bank_consents_same_household_insert BEFORE INSERT ON bank_consents
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
    OR (NEW.connection_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_consents refers to another household'); END;
CREATE TRIGGER bank_consents_same_household_update BEFORE UPDATE OF household_id, member_id, connection_id ON bank_consents
WHEN (NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
    OR (NEW.connection_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bank_connections p WHERE p.id = NEW.connection_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_consents refers to another household'); END;
CREATE TRIGGER bank_keys_same_household_insert BEFORE INSERT ON bank_keys
WHEN (SELECT household_id FROM bank_accounts WHERE id = NEW.bank_account_id)
    IS NOT (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_keys refers to two households'); END;
CREATE TRIGGER bank_keys_same_household_update BEFORE UPDATE OF bank_account_id, transaction_id ON bank_keys
WHEN (SELECT household_id FROM bank_accounts WHERE id = NEW.bank_account_id)
    IS NOT (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: bank_keys refers to two households'); END;
CREATE TRIGGER budget_categories_same_household_insert BEFORE INSERT ON budget_categories
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_categories refers to two households'); END;
CREATE TRIGGER budget_categories_same_household_update BEFORE UPDATE OF budget_id, category_id ON budget_categories
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_categories refers to two households'); END;
CREATE TRIGGER budget_labels_same_household_insert BEFORE INSERT ON budget_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_labels refers to two households'); END;
CREATE TRIGGER budget_labels_same_household_update BEFORE UPDATE OF budget_id, label_id ON budget_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_labels refers to two households'); END;
CREATE TRIGGER charges_same_household_insert BEFORE INSERT ON charges
WHEN (NEW.subscription_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscriptions p WHERE p.id = NEW.subscription_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: charges refers to another household'); END;
CREATE TRIGGER charges_same_household_update BEFORE UPDATE OF household_id, subscription_id ON charges
WHEN (NEW.subscription_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscriptions p WHERE p.id = NEW.subscription_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: charges refers to another household'); END;
CREATE TRIGGER chat_imports_same_household_insert BEFORE INSERT ON chat_imports
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_imports refers to another household'); END;
CREATE TRIGGER chat_imports_same_household_update BEFORE UPDATE OF household_id, member_id ON chat_imports
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_imports refers to another household'); END;
CREATE TRIGGER chat_link_codes_same_household_insert BEFORE INSERT ON chat_link_codes
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_link_codes refers to another household'); END;
CREATE TRIGGER chat_link_codes_same_household_update BEFORE UPDATE OF household_id, member_id ON chat_link_codes
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_link_codes refers to another household'); END;
CREATE TRIGGER destination_secret_removed AFTER DELETE ON destinations
BEGIN
    DELETE FROM secrets WHERE household_id = OLD.household_id AND name = 'destination:' || OLD.id;
END;
CREATE TRIGGER destinations_same_household_insert BEFORE INSERT ON destinations
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: destinations refers to another household'); END;
CREATE TRIGGER destinations_same_household_update BEFORE UPDATE OF household_id, member_id ON destinations
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: destinations refers to another household'); END;
CREATE TRIGGER imports_same_household_insert BEFORE INSERT ON imports
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: imports refers to another household'); END;
CREATE TRIGGER imports_same_household_update BEFORE UPDATE OF household_id, account_id, member_id ON imports
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: imports refers to another household'); END;
CREATE TRIGGER outbox_same_household_insert BEFORE INSERT ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;
CREATE TRIGGER outbox_same_household_update BEFORE UPDATE OF household_id, destination_id, member_id ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;
CREATE TRIGGER payment_methods_same_household_insert BEFORE INSERT ON payment_methods
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: payment_methods refers to another household'); END;
CREATE TRIGGER payment_methods_same_household_update BEFORE UPDATE OF household_id, owner_id ON payment_methods
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: payment_methods refers to another household'); END;
CREATE TRIGGER recurring_proposals_same_household_insert BEFORE INSERT ON recurring_proposals
WHEN (NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: recurring_proposals refers to another household'); END;
CREATE TRIGGER recurring_proposals_same_household_update BEFORE UPDATE OF household_id, account_id ON recurring_proposals
WHEN (NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: recurring_proposals refers to another household'); END;
CREATE TRIGGER rule_labels_same_household_insert BEFORE INSERT ON rule_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM rules WHERE id = NEW.rule_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rule_labels refers to two households'); END;
CREATE TRIGGER rule_labels_same_household_update BEFORE UPDATE OF rule_id, label_id ON rule_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM rules WHERE id = NEW.rule_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rule_labels refers to two households'); END;
CREATE TRIGGER rules_same_household_insert BEFORE INSERT ON rules
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.set_category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.set_category_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rules refers to another household'); END;
CREATE TRIGGER rules_same_household_update BEFORE UPDATE OF household_id, account_id, set_category_id ON rules
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.set_category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.set_category_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rules refers to another household'); END;
CREATE TRIGGER subscriptions_same_household_insert BEFORE INSERT ON subscriptions
WHEN (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
    OR (NEW.payment_method_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM payment_methods p WHERE p.id = NEW.payment_method_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: subscriptions refers to another household'); END;
CREATE TRIGGER subscriptions_same_household_update BEFORE UPDATE OF household_id, category_id, owner_id, payment_method_id ON subscriptions
WHEN (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
    OR (NEW.payment_method_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM payment_methods p WHERE p.id = NEW.payment_method_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: subscriptions refers to another household'); END;
CREATE TRIGGER tokens_same_household_insert BEFORE INSERT ON tokens
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: tokens refers to another household'); END;
CREATE TRIGGER tokens_same_household_update BEFORE UPDATE OF household_id, member_id ON tokens
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: tokens refers to another household'); END;
CREATE TRIGGER transaction_labels_same_household_insert BEFORE INSERT ON transaction_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_labels refers to two households'); END;
CREATE TRIGGER transaction_labels_same_household_update BEFORE UPDATE OF transaction_id, label_id ON transaction_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_labels refers to two households'); END;
CREATE TRIGGER transaction_splits_same_household_insert BEFORE INSERT ON transaction_splits
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_splits refers to two households'); END;
CREATE TRIGGER transaction_splits_same_household_update BEFORE UPDATE OF transaction_id, category_id ON transaction_splits
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_splits refers to two households'); END;
CREATE TRIGGER transaction_text_delete AFTER DELETE ON transactions BEGIN
    INSERT INTO transaction_text (transaction_text, rowid, payee, description, notes)
        VALUES ('delete', old.id, old.payee, old.description, old.notes);
END;
CREATE TRIGGER transaction_text_insert AFTER INSERT ON transactions BEGIN
    INSERT INTO transaction_text (rowid, payee, description, notes)
        VALUES (new.id, new.payee, new.description, new.notes);
END;
CREATE TRIGGER transaction_text_update AFTER UPDATE OF payee, description, notes ON transactions
WHEN old.payee IS NOT new.payee OR old.description IS NOT new.description OR old.notes IS NOT new.notes
BEGIN
    INSERT INTO transaction_text (transaction_text, rowid, payee, description, notes)
        VALUES ('delete', old.id, old.payee, old.description, old.notes);
    INSERT INTO transaction_text (rowid, payee, description, notes)
        VALUES (new.id, new.payee, new.description, new.notes);
END;
CREATE TRIGGER transactions_same_household_insert BEFORE INSERT ON transactions
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.charge_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM charges p WHERE p.id = NEW.charge_id AND p.household_id = NEW.household_id))
    OR (NEW.import_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM imports p WHERE p.id = NEW.import_id AND p.household_id = NEW.household_id))
    OR (NEW.transfer_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions p WHERE p.id = NEW.transfer_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transactions refers to another household'); END;
CREATE TRIGGER transactions_same_household_update BEFORE UPDATE OF household_id, account_id, category_id, charge_id, import_id, transfer_id ON transactions
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.charge_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM charges p WHERE p.id = NEW.charge_id AND p.household_id = NEW.household_id))
    OR (NEW.import_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM imports p WHERE p.id = NEW.import_id AND p.household_id = NEW.household_id))
    OR (NEW.transfer_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions p WHERE p.id = NEW.transfer_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transactions refers to another household'); END;
CREATE TABLE account_balances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    on_date TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (account_id, on_date)
);
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
CREATE TABLE assistant_memory (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('turn', 'proposal')),
    -- The confirmation of a proposal.
    proposal_id TEXT UNIQUE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE assistant_settings (
    household_id INTEGER PRIMARY KEY REFERENCES households(id) ON DELETE CASCADE,
    provider TEXT,
    model TEXT,
    base_url TEXT,
    -- JSON array of per-model prices, in millionths of a dollar per million tokens.
    prices TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT NOT NULL
);
CREATE TABLE assistant_usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER REFERENCES members(id) ON DELETE SET NULL,
    at TEXT NOT NULL,
    via TEXT NOT NULL,
    purpose TEXT NOT NULL CHECK (purpose IN ('question', 'document')),
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_micro_usd INTEGER
, repairs INTEGER NOT NULL DEFAULT 0 CHECK (repairs >= 0));
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    member_id INTEGER,
    token_id INTEGER,
    token_name TEXT,
    client_name TEXT,
    via TEXT NOT NULL,
    op TEXT NOT NULL,
    entity TEXT NOT NULL,
    entity_id INTEGER NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('created', 'updated', 'deleted')),
    summary TEXT NOT NULL,
    before_state TEXT,
    after_state TEXT,
    batch_id TEXT NOT NULL,
    -- Set when only this member may see the entry (a change to a private item).
    private_to INTEGER,
    undone_by INTEGER,
    undo_of INTEGER
);
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
, country TEXT);
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
, country TEXT);
CREATE TABLE bank_keys (
    bank_account_id INTEGER NOT NULL REFERENCES bank_accounts(id) ON DELETE CASCADE,
    provider_key TEXT NOT NULL,
    transaction_id INTEGER NOT NULL,
    PRIMARY KEY (bank_account_id, provider_key)
);
CREATE TABLE bank_requests (
    connection_id INTEGER NOT NULL REFERENCES bank_connections(id) ON DELETE CASCADE,
    on_date TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (connection_id, on_date)
);
CREATE TABLE budget_amounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    from_date TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (budget_id, from_date)
);
CREATE TABLE budget_categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
    UNIQUE (budget_id, category_id)
);
CREATE TABLE budget_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (budget_id, label_id)
);
CREATE TABLE budgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    period TEXT NOT NULL CHECK (period IN ('weekly', 'fortnightly', 'monthly', 'yearly')),
    -- A weekday (1 Monday), a day of the month or a month, as the period reads it.
    start_day INTEGER NOT NULL,
    -- The first day of the first period: history is counted from there.
    starts_on TEXT NOT NULL,
    -- Carry a positive remainder into the next period, or start each period afresh.
    rollover INTEGER NOT NULL CHECK (rollover IN (0, 1)),
    catch_all INTEGER NOT NULL DEFAULT 0 CHECK (catch_all IN (0, 1)),
    -- The household's currency when it was made: its amounts and what it counts are in it,
    -- whatever the household's currency later becomes.
    currency TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE calendar_feeds (
    member_id INTEGER PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    show_amounts INTEGER NOT NULL DEFAULT 1 CHECK (show_amounts IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE TABLE categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    emoji TEXT NOT NULL DEFAULT '',
    colour TEXT NOT NULL DEFAULT '#8a8f98',
    created_at TEXT NOT NULL
);
CREATE TABLE charges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    charged_on TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('paid', 'skipped', 'failed', 'refunded')),
    note TEXT,
    UNIQUE (subscription_id, charged_on)
);
CREATE TABLE chat_bots (
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('telegram', 'slack')),
    username TEXT,
    last_error TEXT,
    -- Telegram: the next getUpdates offset, so no update is handled twice across restarts.
    update_offset INTEGER NOT NULL DEFAULT 0,
    -- Telegram: updates arrive by webhook (its secret header is 'telegram_webhook_secret'),
    -- not long polling.
    webhook INTEGER NOT NULL DEFAULT 0 CHECK (webhook IN (0, 1)),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (household_id, kind)
);
CREATE TABLE chat_imports (
    id TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    -- The import_subscriptions items, as JSON.
    items TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE chat_link_codes (
    code_hash TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('telegram', 'slack')),
    expires_at TEXT NOT NULL
);
CREATE TABLE confirmations (
    id TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL,
    token_id INTEGER,
    op TEXT NOT NULL,
    input TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
, by_assistant INTEGER NOT NULL DEFAULT 0);
CREATE TABLE destination_health (
    destination_id INTEGER PRIMARY KEY REFERENCES destinations(id) ON DELETE CASCADE,
    last_sent_at TEXT,
    last_error TEXT,
    last_error_at TEXT,
    -- The service said the destination is gone (a blocked bot, a 410): nothing more is sent.
    disabled_at TEXT
);
CREATE TABLE destinations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('ntfy', 'webhook', 'email', 'telegram', 'slack')),
    name TEXT NOT NULL,
    -- The ntfy topic URL, the webhook URL, the email address, the Telegram chat id or the Slack
    -- user id.
    address TEXT NOT NULL,
    reminders INTEGER NOT NULL DEFAULT 1 CHECK (reminders IN (0, 1)),
    agent_changes INTEGER NOT NULL DEFAULT 1 CHECK (agent_changes IN (0, 1)),
    -- Added by an owner, so it may be an address on the local network (Home Assistant).
    allow_lan INTEGER NOT NULL DEFAULT 0 CHECK (allow_lan IN (0, 1)),
    created_at TEXT NOT NULL,
    UNIQUE (member_id, kind, address)
);
CREATE TABLE exchange_rates (
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    rate_micros INTEGER NOT NULL CHECK (rate_micros > 0),
    PRIMARY KEY (household_id, currency)
);
CREATE TABLE households (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    currency TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    language TEXT NOT NULL DEFAULT 'en',
    week_start TEXT NOT NULL DEFAULT 'monday' CHECK (week_start IN ('monday', 'sunday')),
    reminder_days_before INTEGER NOT NULL DEFAULT 3,
    created_at TEXT NOT NULL
, trusted_apps INTEGER NOT NULL DEFAULT 0 CHECK (trusted_apps IN (0, 1)));
CREATE TABLE imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id),
    transaction_count INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    colour TEXT NOT NULL DEFAULT '#8a8f98',
    created_at TEXT NOT NULL
);
CREATE TABLE limit_counts (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    count INTEGER NOT NULL,
    since TEXT NOT NULL,
    last TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE TABLE limit_paces (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    due INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE TABLE mail_servers (
    household_id INTEGER PRIMARY KEY REFERENCES households(id) ON DELETE CASCADE,
    host TEXT NOT NULL,
    port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    security TEXT NOT NULL CHECK (security IN ('tls', 'starttls', 'none')),
    username TEXT,
    from_address TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    email TEXT NOT NULL COLLATE NOCASE UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    language TEXT NOT NULL DEFAULT 'en',
    password_hash TEXT,
    invite_hash TEXT UNIQUE,
    invite_expires_at TEXT,
    created_at TEXT NOT NULL
);
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
CREATE TABLE oauth_codes (
    hash TEXT PRIMARY KEY,
    grant_id INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    redirect_explicit INTEGER NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    consumed_at TEXT
);
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
, retry_pair TEXT);
CREATE TABLE "outbox" (
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
CREATE TABLE pauses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    from_on TEXT NOT NULL,
    until_on TEXT
);
CREATE TABLE payment_methods (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    owner_id INTEGER NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    last4 TEXT,
    expires TEXT,
    visibility TEXT NOT NULL CHECK (visibility IN ('household', 'private')),
    created_at TEXT NOT NULL
);
CREATE TABLE price_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    effective_on TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (subscription_id, effective_on)
);
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
CREATE TABLE reminder_preferences (
    member_id INTEGER PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
    -- JSON array of days before a charge, largest first; NULL for the household's default.
    days_before TEXT,
    time_of_day TEXT NOT NULL DEFAULT '09:00',
    covers TEXT NOT NULL DEFAULT 'mine' CHECK (covers IN ('mine', 'household')),
    trial_endings INTEGER NOT NULL DEFAULT 1 CHECK (trial_endings IN (0, 1)),
    card_expiry INTEGER NOT NULL DEFAULT 1 CHECK (card_expiry IN (0, 1)),
    price_rises INTEGER NOT NULL DEFAULT 1 CHECK (price_rises IN (0, 1)),
    weekly_digest TEXT NOT NULL DEFAULT 'off',
    updated_at TEXT NOT NULL
, new_recurring INTEGER NOT NULL DEFAULT 0 CHECK (new_recurring IN (0, 1)));
CREATE TABLE rule_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id INTEGER NOT NULL REFERENCES rules(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (rule_id, label_id)
);
CREATE TABLE rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- Case-insensitive parts of the text; NULL: any.
    payee_contains TEXT,
    description_contains TEXT,
    -- Signed bounds in thousandths of a major unit, as a search compares them; NULL: open.
    min_milli INTEGER,
    max_milli INTEGER,
    account_id INTEGER REFERENCES accounts(id) ON DELETE CASCADE,
    set_category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE secrets (
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (household_id, name)
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    secret_hash TEXT NOT NULL UNIQUE,
    csrf TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE setup_links (
    hash TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE subscription_tags (
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    tag TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (subscription_id, tag)
);
CREATE TABLE subscriptions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    owner_id INTEGER NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    url TEXT,
    notes TEXT,
    currency TEXT NOT NULL,
    cycle_every INTEGER NOT NULL CHECK (cycle_every BETWEEN 1 AND 366),
    cycle_unit TEXT NOT NULL CHECK (cycle_unit IN ('day', 'week', 'month', 'year')),
    anchor_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('trial', 'active', 'paused', 'cancelled')),
    trial_ends_on TEXT,
    ends_on TEXT,
    category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
    payment_method_id INTEGER REFERENCES payment_methods(id) ON DELETE SET NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('household', 'private')),
    -- The last date for which charges were recorded by the materialising job.
    charged_through TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE "tokens" (
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
CREATE TABLE transaction_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (transaction_id, label_id)
);
CREATE TABLE transaction_splits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    amount_minor INTEGER NOT NULL,
    category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
    note TEXT
);
CREATE VIRTUAL TABLE transaction_text USING fts5(
    payee, description, notes,
    content = 'transactions', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TABLE 'transaction_text_config'(k PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE 'transaction_text_data'(id INTEGER PRIMARY KEY, block BLOB);
CREATE TABLE 'transaction_text_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
CREATE TABLE 'transaction_text_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
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
, pending INTEGER NOT NULL DEFAULT 0 CHECK (pending IN (0, 1)));
CREATE INDEX accounts_household ON accounts(household_id, name COLLATE NOCASE, id);
CREATE INDEX assistant_memory_expiry ON assistant_memory(expires_at);
CREATE INDEX assistant_memory_member ON assistant_memory(member_id, id);
CREATE INDEX assistant_usage_household ON assistant_usage(household_id, at);
CREATE INDEX audit_batch ON audit(batch_id);
CREATE INDEX audit_entity ON audit(household_id, entity, entity_id);
CREATE INDEX audit_household ON audit(household_id, id);
CREATE INDEX bank_accounts_account ON bank_accounts(account_id);
CREATE INDEX bank_connections_due ON bank_connections(next_sync_at);
CREATE INDEX bank_connections_household ON bank_connections(household_id, id);
CREATE INDEX bank_consents_expiry ON bank_consents(expires_at);
CREATE INDEX bank_keys_transaction ON bank_keys(transaction_id);
CREATE INDEX budget_categories_category ON budget_categories(category_id);
CREATE INDEX budget_labels_label ON budget_labels(label_id);
CREATE UNIQUE INDEX budgets_catch_all ON budgets(household_id) WHERE catch_all = 1;
CREATE UNIQUE INDEX budgets_name ON budgets(household_id, name COLLATE NOCASE);
CREATE UNIQUE INDEX categories_name ON categories(household_id, name COLLATE NOCASE);
CREATE INDEX charges_household_date ON charges(household_id, charged_on);
CREATE INDEX chat_imports_expiry ON chat_imports(expires_at);
CREATE UNIQUE INDEX labels_name ON labels(household_id, name COLLATE NOCASE);
CREATE INDEX limit_counts_since ON limit_counts(kind, since);
CREATE INDEX members_household ON members(household_id);
CREATE INDEX oauth_clients_created ON oauth_clients(created_at);
CREATE INDEX oauth_tokens_family ON oauth_tokens(family);
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE INDEX outbox_destination ON outbox(destination_id, status);
CREATE INDEX outbox_due ON outbox(status, due_at);
CREATE INDEX pauses_subscription ON pauses(subscription_id, from_on);
CREATE INDEX payment_methods_household ON payment_methods(household_id);
CREATE INDEX recurring_proposals_household ON recurring_proposals(household_id, id);
CREATE INDEX rule_labels_label ON rule_labels(label_id);
CREATE UNIQUE INDEX rules_name ON rules(household_id, name COLLATE NOCASE);
CREATE INDEX sessions_member ON sessions(member_id);
CREATE INDEX subscriptions_household ON subscriptions(household_id, name COLLATE NOCASE, id);
CREATE INDEX tokens_member ON tokens(household_id, member_id);
CREATE INDEX transaction_labels_label ON transaction_labels(label_id, transaction_id);
CREATE INDEX transaction_splits_category ON transaction_splits(category_id, transaction_id);
CREATE INDEX transaction_splits_transaction ON transaction_splits(transaction_id);
CREATE INDEX transactions_account_date ON transactions(account_id, on_date DESC, id DESC);
CREATE INDEX transactions_category ON transactions(category_id, on_date);
CREATE INDEX transactions_charge ON transactions(charge_id) WHERE charge_id IS NOT NULL;
CREATE INDEX transactions_household_date
    ON transactions(household_id, on_date DESC, id DESC, account_id, amount_minor, currency, category_id);
CREATE INDEX transactions_import ON transactions(import_id);
CREATE UNIQUE INDEX transactions_import_key ON transactions(account_id, import_key)
    WHERE import_key IS NOT NULL;
CREATE INDEX transactions_pending ON transactions(household_id, on_date) WHERE pending = 1;
CREATE INDEX transactions_transfer ON transactions(transfer_id) WHERE transfer_id IS NOT NULL;
