-- Every reference becomes DEFERRABLE (still checked at each statement, as before), so
-- `exhale migrate` can copy rows that refer to each other, such as the two sides of a
-- transfer, in one transaction checked once at its end. A reference added later is written
-- DEFERRABLE in its own migration.
DO $$
DECLARE reference record;
BEGIN
    FOR reference IN
        SELECT conrelid::regclass AS on_table, conname AS name
        FROM pg_constraint
        WHERE contype = 'f' AND NOT condeferrable
          AND connamespace = current_schema()::regnamespace
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE', reference.on_table, reference.name);
    END LOOP;
END $$;
