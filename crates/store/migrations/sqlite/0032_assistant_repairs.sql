-- How many of a question's slips the assistant's loop mended (a call written as text, an answer
-- asked for again): counted per question, so an owner sees how well a model does.
ALTER TABLE assistant_usage ADD COLUMN repairs INTEGER NOT NULL DEFAULT 0 CHECK (repairs >= 0);
