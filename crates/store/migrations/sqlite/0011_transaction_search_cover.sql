-- A search's amount and category conditions are decided on the date index as it is walked:
-- with both in it, an entry that fails is skipped without reading its row, and a count reads
-- no row at all for them. Split parts are found by category for the category filter.
DROP INDEX transactions_household_date;
CREATE INDEX transactions_household_date
    ON transactions(household_id, on_date DESC, id DESC, account_id, amount_minor, currency, category_id);
CREATE INDEX transaction_splits_category ON transaction_splits(category_id, transaction_id);
