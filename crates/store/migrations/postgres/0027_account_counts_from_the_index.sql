-- An account's count of transactions (list_accounts, the money and transactions pages) read
-- the whole table: row-level security checks each row's household, which the account's index
-- did not hold, so the server chose to read every household's rows (37 ms for an account of
-- 100,000 among 300,000) over looking each up. The index now carries the household, so the
-- count reads the account's entries alone and checks them there.
DROP INDEX transactions_account_date;
CREATE INDEX transactions_account_date ON transactions (account_id, on_date DESC, id DESC)
    INCLUDE (household_id);

-- A household's transactions are all in its own accounts, which the planner, counting each
-- column's values apart, did not know: it expected 27 of a household's 5,000 rows in its one
-- account, and chose plans for 27. These statistics (renewed with the others) tell it.
CREATE STATISTICS transactions_household_account (dependencies) ON household_id, account_id
    FROM transactions;
