-- A reference carries its household: a row may point only at a row of its own household, which
-- the server checks as it checks the reference itself. Each table referred to gets a key of
-- (household_id, id), and each reference between two tables that have a household becomes one
-- of (household_id, column) to it, deleting as before (SET NULL empties the column alone).
-- Transactions are the exception: a second key on them cost an import of 100,000 rows 10% of
-- its time, so the one reference between two of them (a transfer's other side) is checked by a
-- trigger when it is set, and transaction_search is kept from transactions by Exhale's own
-- trigger. A
-- table without a household column that refers to two households' tables (a transaction's
-- labels, a rule's labels, a budget's categories and labels, a transaction's split parts) is
-- checked by a trigger that both are the same household's. See the SQLite migration of the
-- same name for its triggers, which check the same.
DO $$
DECLARE
    parent text;
    reference record;
BEGIN
    FOREACH parent IN ARRAY ARRAY['accounts', 'budgets', 'categories', 'charges', 'destinations',
        'imports', 'labels', 'members', 'payment_methods', 'rules', 'subscriptions']
    LOOP
        EXECUTE format('ALTER TABLE %1$I ADD CONSTRAINT %1$s_household_key UNIQUE (household_id, id)', parent);
    END LOOP;
    FOR reference IN
        SELECT c.conname AS name, c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent,
               a.attname::text AS col, c.confdeltype AS on_delete
        FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
          AND cardinality(c.conkey) = 1
          AND c.confrelid::regclass::text NOT IN ('households', 'transactions')
          AND EXISTS (SELECT 1 FROM pg_attribute h WHERE h.attrelid = c.conrelid AND h.attname = 'household_id' AND NOT h.attisdropped)
          AND EXISTS (SELECT 1 FROM pg_attribute h WHERE h.attrelid = c.confrelid AND h.attname = 'household_id' AND NOT h.attisdropped)
    LOOP
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', reference.child, reference.name);
        EXECUTE format(
            'ALTER TABLE %1$I ADD CONSTRAINT %2$I FOREIGN KEY (household_id, %3$I) REFERENCES %4$I (household_id, id) ON DELETE %5$s DEFERRABLE',
            reference.child, reference.name, reference.col, reference.parent,
            CASE reference.on_delete
                WHEN 'c' THEN 'CASCADE'
                WHEN 'n' THEN format('SET NULL (%I)', reference.col)
                ELSE 'NO ACTION'
            END);
    END LOOP;
END $$;

-- Two references of a row without a household column name the same household. A parent this
-- transaction cannot see (row-level security) reads as no household, which differs from any.
-- Checked after each statement, or at commit once deferred, as the references are: `exhale
-- migrate` copies a transaction's labels, or a transfer's two sides, in any order.
CREATE FUNCTION budget_categories_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
        IS DISTINCT FROM (SELECT household_id FROM categories WHERE id = NEW.category_id) THEN
        RAISE EXCEPTION 'a row of budget_categories refers to two households' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON budget_categories DEFERRABLE
    FOR EACH ROW
    EXECUTE FUNCTION budget_categories_same_household();

CREATE FUNCTION budget_labels_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
        IS DISTINCT FROM (SELECT household_id FROM labels WHERE id = NEW.label_id) THEN
        RAISE EXCEPTION 'a row of budget_labels refers to two households' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON budget_labels DEFERRABLE
    FOR EACH ROW
    EXECUTE FUNCTION budget_labels_same_household();

CREATE FUNCTION rule_labels_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM rules WHERE id = NEW.rule_id)
        IS DISTINCT FROM (SELECT household_id FROM labels WHERE id = NEW.label_id) THEN
        RAISE EXCEPTION 'a row of rule_labels refers to two households' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON rule_labels DEFERRABLE
    FOR EACH ROW
    EXECUTE FUNCTION rule_labels_same_household();

CREATE FUNCTION transaction_labels_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
        IS DISTINCT FROM (SELECT household_id FROM labels WHERE id = NEW.label_id) THEN
        RAISE EXCEPTION 'a row of transaction_labels refers to two households' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON transaction_labels DEFERRABLE
    FOR EACH ROW
    EXECUTE FUNCTION transaction_labels_same_household();

CREATE FUNCTION transaction_splits_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
        IS DISTINCT FROM (SELECT household_id FROM categories WHERE id = NEW.category_id) THEN
        RAISE EXCEPTION 'a row of transaction_splits refers to two households' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON transaction_splits DEFERRABLE
    FOR EACH ROW WHEN (NEW.category_id IS NOT NULL)
    EXECUTE FUNCTION transaction_splits_same_household();

CREATE FUNCTION transactions_same_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT household_id FROM transactions WHERE id = NEW.transfer_id)
        IS DISTINCT FROM NEW.household_id THEN
        RAISE EXCEPTION 'a row of transactions refers to another household' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE CONSTRAINT TRIGGER same_household AFTER INSERT OR UPDATE ON transactions DEFERRABLE
    FOR EACH ROW WHEN (NEW.transfer_id IS NOT NULL)
    EXECUTE FUNCTION transactions_same_household();
