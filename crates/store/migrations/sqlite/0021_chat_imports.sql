-- What a document sent to a chat bot was found to hold, waiting for its sender's Import
-- button: in the database, so the press is honoured by whichever instance receives it and
-- after a restart. `id` is the button's key; only the member who sent the document may take
-- it, and only before `expires_at`.
CREATE TABLE chat_imports (
    id TEXT PRIMARY KEY,
    household_id INTEGER NOT NULL REFERENCES households(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    -- The import_subscriptions items, as JSON.
    items TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX chat_imports_expiry ON chat_imports(expires_at);
