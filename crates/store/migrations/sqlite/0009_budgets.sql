-- Budgets: a limit per period over categories and/or labels, or the one catch-all budget over
-- every expense. Periods are worked out from the definition when read (domain::budget); only
-- the amount, which may change from a period on, is stored per period.

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
CREATE UNIQUE INDEX budgets_name ON budgets(household_id, name COLLATE NOCASE);
CREATE UNIQUE INDEX budgets_catch_all ON budgets(household_id) WHERE catch_all = 1;

CREATE TABLE budget_categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
    UNIQUE (budget_id, category_id)
);
CREATE INDEX budget_categories_category ON budget_categories(category_id);

CREATE TABLE budget_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    UNIQUE (budget_id, label_id)
);
CREATE INDEX budget_labels_label ON budget_labels(label_id);

-- The amount allowed per period, from the period starting `from_date` on: a change applies
-- to the period in progress and later ones, and closed periods keep what they had.
CREATE TABLE budget_amounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget_id INTEGER NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    from_date TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (budget_id, from_date)
);

-- Spending in a period reads a category's transactions by date.
DROP INDEX transactions_category;
CREATE INDEX transactions_category ON transactions(category_id, on_date);
