-- Row-level security: a second fence between households, after every query's own condition.
-- A transaction says which rows it sees (store::Rows): one household's
-- (`exhale.household_id`), or every household's (`exhale.every_household`, for sign-in,
-- tokens, OAuth, the background jobs and migrations). One that says neither sees none.
-- FORCE makes the policies hold for the tables' owner too, the role Exhale connects as;
-- superusers and BYPASSRLS roles would pass them, so Exhale refuses to run as one.

-- The policies read each setting through a sub-select, which the server evaluates once a
-- statement rather than once a row (38 ms against 16 ms to count 100,000 transactions).
CREATE FUNCTION exhale_household() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('exhale.household_id', true), '')::bigint
$$;
CREATE FUNCTION exhale_every_household() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('exhale.every_household', true) = 'on', false)
$$;

DO $$
DECLARE t record;
BEGIN
    -- Every table with a household: its rows are that household's.
    FOR t IN
        SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'household_id'
          AND table_name IN (SELECT tablename FROM pg_tables WHERE schemaname = current_schema())
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', t.table_name);
        EXECUTE format(
            'CREATE POLICY household ON %I USING ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household())) WITH CHECK ((SELECT exhale_every_household()) OR household_id = (SELECT exhale_household()))',
            t.table_name);
    END LOOP;
END $$;

ALTER TABLE households ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY household ON households
    USING ((SELECT exhale_every_household()) OR id = (SELECT exhale_household()))
    WITH CHECK ((SELECT exhale_every_household()) OR id = (SELECT exhale_household()));

-- A table without a household column belongs to its parent's: a row is seen when its parent
-- is (the parent's own policy decides).
DO $$
DECLARE c record;
BEGIN
    FOR c IN SELECT * FROM (VALUES
        ('account_balances', 'account_id', 'accounts'),
        ('budget_amounts', 'budget_id', 'budgets'),
        ('budget_categories', 'budget_id', 'budgets'),
        ('budget_labels', 'budget_id', 'budgets'),
        ('calendar_feeds', 'member_id', 'members'),
        ('destination_health', 'destination_id', 'destinations'),
        ('oauth_requests', 'member_id', 'members'),
        ('pauses', 'subscription_id', 'subscriptions'),
        ('price_points', 'subscription_id', 'subscriptions'),
        ('reminder_preferences', 'member_id', 'members'),
        ('rule_labels', 'rule_id', 'rules'),
        ('sessions', 'member_id', 'members'),
        ('subscription_tags', 'subscription_id', 'subscriptions'),
        ('transaction_labels', 'transaction_id', 'transactions'),
        ('transaction_splits', 'transaction_id', 'transactions')
    ) AS child(child_table, reference, parent)
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', c.child_table);
        EXECUTE format(
            'CREATE POLICY household ON %1$I USING (EXISTS (SELECT 1 FROM %3$I p WHERE p.id = %1$I.%2$I)) WITH CHECK (EXISTS (SELECT 1 FROM %3$I p WHERE p.id = %1$I.%2$I))',
            c.child_table, c.reference, c.parent);
    END LOOP;
END $$;
