-- A search's text is found in a trigram index of payee, description and notes, so a text that
-- few transactions hold is found without reading every row. The index only narrows: the search
-- still checks each candidate with LIKE, so what matches is what matched before. It reads the
-- text from `transactions` (external content) and the triggers keep it in step.
--
-- A statement that writes through these triggers flushes the index's pending writes when it
-- ends, so bulk writes (an import) are one statement, not one a row.
CREATE VIRTUAL TABLE transaction_text USING fts5(
    payee, description, notes,
    content = 'transactions', content_rowid = 'id', tokenize = 'trigram'
);
INSERT INTO transaction_text (transaction_text) VALUES ('rebuild');

CREATE TRIGGER transaction_text_insert AFTER INSERT ON transactions BEGIN
    INSERT INTO transaction_text (rowid, payee, description, notes)
        VALUES (new.id, new.payee, new.description, new.notes);
END;
CREATE TRIGGER transaction_text_delete AFTER DELETE ON transactions BEGIN
    INSERT INTO transaction_text (transaction_text, rowid, payee, description, notes)
        VALUES ('delete', old.id, old.payee, old.description, old.notes);
END;
-- An update writes every column (a category set, a rule applied); only a changed text is
-- indexed again.
CREATE TRIGGER transaction_text_update AFTER UPDATE OF payee, description, notes ON transactions
WHEN old.payee IS NOT new.payee OR old.description IS NOT new.description OR old.notes IS NOT new.notes
BEGIN
    INSERT INTO transaction_text (transaction_text, rowid, payee, description, notes)
        VALUES ('delete', old.id, old.payee, old.description, old.notes);
    INSERT INTO transaction_text (rowid, payee, description, notes)
        VALUES (new.id, new.payee, new.description, new.notes);
END;
