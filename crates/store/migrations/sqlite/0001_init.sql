-- Exhale's first schema. Never edit a migration once it has landed; add a new one.
-- Dates are 'YYYY-MM-DD' in the household's time zone; timestamps are RFC 3339 in UTC.
-- Amounts are integers of the currency's minor units.

CREATE TABLE households (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    currency TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    language TEXT NOT NULL DEFAULT 'en',
    week_start TEXT NOT NULL DEFAULT 'monday' CHECK (week_start IN ('monday', 'sunday')),
    reminder_days_before INTEGER NOT NULL DEFAULT 3,
    created_at TEXT NOT NULL
);

CREATE TABLE exchange_rates (
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    rate_micros INTEGER NOT NULL CHECK (rate_micros > 0),
    PRIMARY KEY (household_id, currency)
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
CREATE INDEX members_household ON members(household_id);

CREATE TABLE categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    emoji TEXT NOT NULL DEFAULT '',
    colour TEXT NOT NULL DEFAULT '#8a8f98',
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX categories_name ON categories(household_id, name COLLATE NOCASE);

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
CREATE INDEX payment_methods_household ON payment_methods(household_id);

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
-- Lists are ordered by name ignoring case; this index gives that order without a sort.
CREATE INDEX subscriptions_household ON subscriptions(household_id, name COLLATE NOCASE, id);

CREATE TABLE price_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    effective_on TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    UNIQUE (subscription_id, effective_on)
);

CREATE TABLE pauses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    from_on TEXT NOT NULL,
    until_on TEXT
);
CREATE INDEX pauses_subscription ON pauses(subscription_id, from_on);

CREATE TABLE subscription_tags (
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    tag TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (subscription_id, tag)
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
CREATE INDEX charges_household_date ON charges(household_id, charged_on);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'trusted')),
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    expires_at TEXT,
    revoked_at TEXT
);

-- Secrets (API keys, bot tokens) per household; never returned by any op.
CREATE TABLE secrets (
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (household_id, name)
);

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
CREATE INDEX audit_household ON audit(household_id, id);
CREATE INDEX audit_batch ON audit(batch_id);
CREATE INDEX audit_entity ON audit(household_id, entity, entity_id);

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
);

-- External effects, written in the same transaction as the change and delivered after commit.
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    delivered_at TEXT,
    last_error TEXT
);
CREATE INDEX outbox_pending ON outbox(delivered_at, id);
