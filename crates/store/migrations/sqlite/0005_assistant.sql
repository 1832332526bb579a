-- The built-in assistant: where a household's questions go, what it remembers of a member's
-- conversation, and what each question cost.

-- A proposal of the assistant is a confirmation the person applies with a tap, never the
-- model: `confirm_change` refuses these rows, and they last 30 minutes, not 10.
ALTER TABLE confirmations ADD COLUMN by_assistant INTEGER NOT NULL DEFAULT 0;

-- What an owner saved; the server's EXHALE_ASSISTANT_* variables win field by field. The API
-- key is the secret 'assistant_api_key' (table `secrets`), which no op returns.
CREATE TABLE assistant_settings (
    household_id INTEGER PRIMARY KEY REFERENCES households(id) ON DELETE CASCADE,
    provider TEXT,
    model TEXT,
    base_url TEXT,
    -- JSON array of per-model prices, in millionths of a dollar per million tokens.
    prices TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT NOT NULL
);

-- A member's conversation: turns (question and answer, text only) and proposals (their card,
-- kept to say what the person did with it). Removed when they expire, on the next question.
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
CREATE INDEX assistant_memory_member ON assistant_memory(member_id, id);
CREATE INDEX assistant_memory_expiry ON assistant_memory(expires_at);

-- One row per question or document read with a model: never its words. Kept 400 days.
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
);
CREATE INDEX assistant_usage_household ON assistant_usage(household_id, at);
