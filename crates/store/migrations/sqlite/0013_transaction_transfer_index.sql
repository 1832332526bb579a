-- Deleting a transaction looks for the other side of its transfer (`transfer_id`, ON DELETE
-- SET NULL), and deleting a charge for the transaction that paid it (`charge_id`). Without
-- these indexes each deleted row read every transaction: undoing an import of 100,000, or
-- deleting a household, took time in the square of its transactions.
CREATE INDEX transactions_transfer ON transactions(transfer_id) WHERE transfer_id IS NOT NULL;
CREATE INDEX transactions_charge ON transactions(charge_id) WHERE charge_id IS NOT NULL;
