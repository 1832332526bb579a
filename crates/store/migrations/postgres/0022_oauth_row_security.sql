-- OAuth's codes and tokens belong to their grant's household (a grant is a row of `tokens`):
-- a row is seen when its grant is, as the other tables without a household column
-- (0019_row_level_security). Registered clients belong to no household and stay unfenced.
DO $$
DECLARE child text;
BEGIN
    FOREACH child IN ARRAY ARRAY['oauth_codes', 'oauth_tokens']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', child);
        EXECUTE format(
            'CREATE POLICY household ON %1$I USING (EXISTS (SELECT 1 FROM tokens p WHERE p.id = %1$I.grant_id)) WITH CHECK (EXISTS (SELECT 1 FROM tokens p WHERE p.id = %1$I.grant_id))',
            child);
    END LOOP;
END $$;
