-- A transaction's label is seen when its label is (0019 fenced it by its transaction). Both
-- are the household's, so the fence holds as before, but the server now checks it against a
-- household's few labels rather than its every transaction: a search by label read all
-- 100,000 of a household's transactions for the check (73 ms a page), and reads one label now.
-- A row written must still name a transaction the household sees, too.
ALTER POLICY household ON transaction_labels
    USING (EXISTS (SELECT 1 FROM labels p WHERE p.id = transaction_labels.label_id))
    WITH CHECK (EXISTS (SELECT 1 FROM labels p WHERE p.id = transaction_labels.label_id)
        AND EXISTS (SELECT 1 FROM transactions p WHERE p.id = transaction_labels.transaction_id));
