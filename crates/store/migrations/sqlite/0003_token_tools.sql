-- Which tools a token's client lists: every op, or the compact set for small context windows.
ALTER TABLE tokens ADD COLUMN tools TEXT NOT NULL DEFAULT 'full' CHECK (tools IN ('full', 'compact'));
