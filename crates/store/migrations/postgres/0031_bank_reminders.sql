-- See the SQLite migration of the same name.
ALTER TABLE reminder_preferences ADD COLUMN new_recurring BIGINT NOT NULL DEFAULT 0 CHECK (new_recurring IN (0, 1));
ALTER TABLE bank_connections ADD COLUMN country TEXT COLLATE "C";
ALTER TABLE bank_consents ADD COLUMN country TEXT COLLATE "C";
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check,
    ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('charge_upcoming', 'trial_ending', 'card_expiring', 'price_rise', 'weekly_digest', 'agent_change', 'bank_consent_ending', 'new_recurring', 'test'));
CREATE INDEX transactions_pending ON transactions(household_id, on_date) WHERE pending = 1;
