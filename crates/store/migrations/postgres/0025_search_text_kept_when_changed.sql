-- `transaction_search` (0020) was rewritten for every updated transaction, also when its text
-- had not changed: categorising 5,000 transactions wrote 5,000 new entries into the trigram
-- index's pending list, which every later search reads whole, once for each column, until a
-- vacuum merges it (a rare text went from 6 to 18 ms over 100,000). Now a row is rewritten
-- only when its household or text changed.
CREATE OR REPLACE FUNCTION transaction_search_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transaction_search (id, household_id, payee, description, notes)
    SELECT id, household_id, nocase(payee), nocase(description), nocase(notes) FROM written
    ON CONFLICT (id) DO UPDATE SET household_id = EXCLUDED.household_id,
        payee = EXCLUDED.payee, description = EXCLUDED.description, notes = EXCLUDED.notes
    WHERE (transaction_search.household_id, transaction_search.payee,
           transaction_search.description, transaction_search.notes)
        IS DISTINCT FROM (EXCLUDED.household_id, EXCLUDED.payee, EXCLUDED.description,
                          EXCLUDED.notes);
    RETURN NULL;
END $$;
