-- Searches walk the date index and check each entry's account against the ones the viewer may
-- see; with the account in the index, an entry that fails is skipped without reading its row.
DROP INDEX transactions_household_date;
CREATE INDEX transactions_household_date ON transactions(household_id, on_date DESC, id DESC, account_id);
