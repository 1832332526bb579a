-- A reference carries its household: a row may point only at a row of its own household. SQLite
-- cannot add a reference to a table without rebuilding it, so triggers check it, as the
-- PostgreSQL migration of the same name does with references of (household_id, column): for
-- each reference between two tables that have a household, and for the tables without one that
-- refer to two (a transaction's labels and split parts, a rule's labels, a budget's categories
-- and labels), when a row is written. A column left empty refers to nothing and passes.

CREATE TRIGGER accounts_same_household_insert BEFORE INSERT ON accounts
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: accounts refers to another household'); END;

CREATE TRIGGER accounts_same_household_update BEFORE UPDATE OF household_id, owner_id ON accounts
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: accounts refers to another household'); END;

CREATE TRIGGER assistant_memory_same_household_insert BEFORE INSERT ON assistant_memory
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_memory refers to another household'); END;

CREATE TRIGGER assistant_memory_same_household_update BEFORE UPDATE OF household_id, member_id ON assistant_memory
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_memory refers to another household'); END;

CREATE TRIGGER assistant_usage_same_household_insert BEFORE INSERT ON assistant_usage
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_usage refers to another household'); END;

CREATE TRIGGER assistant_usage_same_household_update BEFORE UPDATE OF household_id, member_id ON assistant_usage
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: assistant_usage refers to another household'); END;

CREATE TRIGGER charges_same_household_insert BEFORE INSERT ON charges
WHEN (NEW.subscription_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscriptions p WHERE p.id = NEW.subscription_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: charges refers to another household'); END;

CREATE TRIGGER charges_same_household_update BEFORE UPDATE OF household_id, subscription_id ON charges
WHEN (NEW.subscription_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscriptions p WHERE p.id = NEW.subscription_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: charges refers to another household'); END;

CREATE TRIGGER chat_imports_same_household_insert BEFORE INSERT ON chat_imports
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_imports refers to another household'); END;

CREATE TRIGGER chat_imports_same_household_update BEFORE UPDATE OF household_id, member_id ON chat_imports
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_imports refers to another household'); END;

CREATE TRIGGER chat_link_codes_same_household_insert BEFORE INSERT ON chat_link_codes
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_link_codes refers to another household'); END;

CREATE TRIGGER chat_link_codes_same_household_update BEFORE UPDATE OF household_id, member_id ON chat_link_codes
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: chat_link_codes refers to another household'); END;

CREATE TRIGGER destinations_same_household_insert BEFORE INSERT ON destinations
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: destinations refers to another household'); END;

CREATE TRIGGER destinations_same_household_update BEFORE UPDATE OF household_id, member_id ON destinations
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: destinations refers to another household'); END;

CREATE TRIGGER imports_same_household_insert BEFORE INSERT ON imports
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: imports refers to another household'); END;

CREATE TRIGGER imports_same_household_update BEFORE UPDATE OF household_id, account_id, member_id ON imports
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: imports refers to another household'); END;

CREATE TRIGGER outbox_same_household_insert BEFORE INSERT ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;

CREATE TRIGGER outbox_same_household_update BEFORE UPDATE OF household_id, destination_id, member_id ON outbox
WHEN (NEW.destination_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = NEW.destination_id AND p.household_id = NEW.household_id))
    OR (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: outbox refers to another household'); END;

CREATE TRIGGER payment_methods_same_household_insert BEFORE INSERT ON payment_methods
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: payment_methods refers to another household'); END;

CREATE TRIGGER payment_methods_same_household_update BEFORE UPDATE OF household_id, owner_id ON payment_methods
WHEN (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: payment_methods refers to another household'); END;

CREATE TRIGGER rules_same_household_insert BEFORE INSERT ON rules
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.set_category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.set_category_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rules refers to another household'); END;

CREATE TRIGGER rules_same_household_update BEFORE UPDATE OF household_id, account_id, set_category_id ON rules
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.set_category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.set_category_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rules refers to another household'); END;

CREATE TRIGGER subscriptions_same_household_insert BEFORE INSERT ON subscriptions
WHEN (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
    OR (NEW.payment_method_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM payment_methods p WHERE p.id = NEW.payment_method_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: subscriptions refers to another household'); END;

CREATE TRIGGER subscriptions_same_household_update BEFORE UPDATE OF household_id, category_id, owner_id, payment_method_id ON subscriptions
WHEN (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.owner_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.owner_id AND p.household_id = NEW.household_id))
    OR (NEW.payment_method_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM payment_methods p WHERE p.id = NEW.payment_method_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: subscriptions refers to another household'); END;

CREATE TRIGGER tokens_same_household_insert BEFORE INSERT ON tokens
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: tokens refers to another household'); END;

CREATE TRIGGER tokens_same_household_update BEFORE UPDATE OF household_id, member_id ON tokens
WHEN (NEW.member_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM members p WHERE p.id = NEW.member_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: tokens refers to another household'); END;

CREATE TRIGGER transactions_same_household_insert BEFORE INSERT ON transactions
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.charge_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM charges p WHERE p.id = NEW.charge_id AND p.household_id = NEW.household_id))
    OR (NEW.import_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM imports p WHERE p.id = NEW.import_id AND p.household_id = NEW.household_id))
    OR (NEW.transfer_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions p WHERE p.id = NEW.transfer_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transactions refers to another household'); END;

CREATE TRIGGER transactions_same_household_update BEFORE UPDATE OF household_id, account_id, category_id, charge_id, import_id, transfer_id ON transactions
WHEN (NEW.account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts p WHERE p.id = NEW.account_id AND p.household_id = NEW.household_id))
    OR (NEW.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories p WHERE p.id = NEW.category_id AND p.household_id = NEW.household_id))
    OR (NEW.charge_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM charges p WHERE p.id = NEW.charge_id AND p.household_id = NEW.household_id))
    OR (NEW.import_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM imports p WHERE p.id = NEW.import_id AND p.household_id = NEW.household_id))
    OR (NEW.transfer_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions p WHERE p.id = NEW.transfer_id AND p.household_id = NEW.household_id))
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transactions refers to another household'); END;

CREATE TRIGGER budget_categories_same_household_insert BEFORE INSERT ON budget_categories
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_categories refers to two households'); END;

CREATE TRIGGER budget_categories_same_household_update BEFORE UPDATE OF budget_id, category_id ON budget_categories
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_categories refers to two households'); END;

CREATE TRIGGER budget_labels_same_household_insert BEFORE INSERT ON budget_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_labels refers to two households'); END;

CREATE TRIGGER budget_labels_same_household_update BEFORE UPDATE OF budget_id, label_id ON budget_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM budgets WHERE id = NEW.budget_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: budget_labels refers to two households'); END;

CREATE TRIGGER rule_labels_same_household_insert BEFORE INSERT ON rule_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM rules WHERE id = NEW.rule_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rule_labels refers to two households'); END;

CREATE TRIGGER rule_labels_same_household_update BEFORE UPDATE OF rule_id, label_id ON rule_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM rules WHERE id = NEW.rule_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: rule_labels refers to two households'); END;

CREATE TRIGGER transaction_labels_same_household_insert BEFORE INSERT ON transaction_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_labels refers to two households'); END;

CREATE TRIGGER transaction_labels_same_household_update BEFORE UPDATE OF transaction_id, label_id ON transaction_labels
WHEN NEW.label_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM labels WHERE id = NEW.label_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_labels refers to two households'); END;

CREATE TRIGGER transaction_splits_same_household_insert BEFORE INSERT ON transaction_splits
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_splits refers to two households'); END;

CREATE TRIGGER transaction_splits_same_household_update BEFORE UPDATE OF transaction_id, category_id ON transaction_splits
WHEN NEW.category_id IS NOT NULL AND (SELECT household_id FROM transactions WHERE id = NEW.transaction_id)
    IS NOT (SELECT household_id FROM categories WHERE id = NEW.category_id)
BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: transaction_splits refers to two households'); END;
