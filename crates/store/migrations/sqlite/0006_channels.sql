-- Reminders and messages to members: when each member wants reminding, where messages go, and
-- every message on its way. The new outbox replaces the first one, whose rows only marked
-- agent changes that the activity feed already shows.

DROP TABLE outbox;

-- A member's reminder timing; no row means the defaults (the household's days before, 09:00,
-- the member's own subscriptions, trial endings, card expiry and price rises on, no digest).
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
);

-- Where a member is told things. A destination's secret (an ntfy token, a webhook signing
-- secret) is the secret 'destination:<id>' in `secrets`, which no op returns.
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

-- However a destination goes (removed, its member removed, an Undo of its adding), its secret
-- goes with it.
CREATE TRIGGER destination_secret_removed AFTER DELETE ON destinations
BEGIN
    DELETE FROM secrets WHERE household_id = OLD.household_id AND name = 'destination:' || OLD.id;
END;

-- How sending to a destination went, written by the delivery worker (so not part of the
-- member's audited state).
CREATE TABLE destination_health (
    destination_id INTEGER PRIMARY KEY REFERENCES destinations(id) ON DELETE CASCADE,
    last_sent_at TEXT,
    last_error TEXT,
    last_error_at TEXT,
    -- The service said the destination is gone (a blocked bot, a 410): nothing more is sent.
    disabled_at TEXT
);

-- Every message to a member, written in the transaction that caused it (an agent's change) or
-- by the planner (reminders), and delivered after commit by the worker.
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    destination_id INTEGER NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
    -- One per message: planning twice never writes a second row, and receivers see the same
    -- id on every attempt.
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('charge_upcoming', 'trial_ending', 'card_expiring', 'price_rise', 'weekly_digest', 'agent_change', 'test')),
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
CREATE INDEX outbox_due ON outbox(status, due_at);
CREATE INDEX outbox_destination ON outbox(destination_id, status);

-- A member's calendar feed: the hash of the secret in its address.
CREATE TABLE calendar_feeds (
    member_id INTEGER PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    show_amounts INTEGER NOT NULL DEFAULT 1 CHECK (show_amounts IN (0, 1)),
    created_at TEXT NOT NULL
);

-- The household's mail server; its password is the secret 'smtp_password'.
CREATE TABLE mail_servers (
    household_id INTEGER PRIMARY KEY REFERENCES households(id) ON DELETE CASCADE,
    host TEXT NOT NULL,
    port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    security TEXT NOT NULL CHECK (security IN ('tls', 'starttls', 'none')),
    username TEXT,
    from_address TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- A household's chat bots as Exhale last reached them; their tokens are secrets
-- ('telegram_bot_token'; 'slack_bot_token' and 'slack_app_token').
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

-- One-time codes that link a chat to a member: the hash of the code, for ten minutes.
CREATE TABLE chat_link_codes (
    code_hash TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('telegram', 'slack')),
    expires_at TEXT NOT NULL
);
