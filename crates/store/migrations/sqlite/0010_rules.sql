-- Rules: conditions on a transaction's payee, description, amount and account, and what to do
-- with one that matches: set its category, add labels. Applied to imported transactions as
-- they arrive, and to history on request (apply_rule).

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
CREATE UNIQUE INDEX rules_name ON rules(household_id, name COLLATE NOCASE);

CREATE TABLE rule_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id INTEGER NOT NULL REFERENCES rules(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (rule_id, label_id)
);
CREATE INDEX rule_labels_label ON rule_labels(label_id);
