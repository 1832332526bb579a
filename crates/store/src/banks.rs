//! Bank connections, the accounts each brings and where they go, the provider ids already
//! recorded, and the requests made a day. A connection's credentials are a secret
//! (`bank:{id}` in `secrets`), read only where a sync uses them.
//!
//! A connection is visible to a member as an account is: a private one exists only for the
//! member who linked it. What a sync decides lives in `app`.

use domain::{Date, entities::Visibility};

use crate::{
    Db, Result,
    access::{secret, set_secret},
    db::Row,
    sql::{date, opt_date, opt_date_text, parsed},
    value::params,
};

/// The name of a connection's credentials in `secrets`.
fn secret_name(id: i64) -> String {
    format!("bank:{id}")
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionRow {
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    pub member_name: String,
    /// `simplefin` or `enable_banking`.
    pub provider: String,
    pub name: String,
    pub visibility: Visibility,
    pub reach_local: bool,
    pub status: String,
    pub status_detail: Option<String>,
    pub failures: i64,
    pub synced_through: Option<Date>,
    pub last_attempt_at: Option<String>,
    pub last_success_at: Option<String>,
    pub next_sync_at: String,
    pub consent_until: Option<String>,
    /// Its bank's country (Enable Banking), two capital letters.
    pub country: Option<String>,
}

const CONNECTION_SELECT: &str = "SELECT c.*, m.name AS member_name FROM bank_connections c JOIN members m ON m.id = c.member_id";
const CONNECTION_VISIBLE: &str =
    "c.household_id = ?1 AND (c.visibility = 'household' OR c.member_id = ?2)";

fn connection_from_row(row: &Row<'_>) -> Result<ConnectionRow> {
    Ok(ConnectionRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        member_id: row.get("member_id")?,
        member_name: row.get("member_name")?,
        provider: row.get("provider")?,
        name: row.get("name")?,
        visibility: parsed(row, "visibility", Visibility::parse)?,
        reach_local: row.get("reach_local")?,
        status: row.get("status")?,
        status_detail: row.get("status_detail")?,
        failures: row.get("failures")?,
        synced_through: opt_date(row, "synced_through")?,
        last_attempt_at: row.get("last_attempt_at")?,
        last_success_at: row.get("last_success_at")?,
        next_sync_at: row.get("next_sync_at")?,
        consent_until: row.get("consent_until")?,
        country: row.get("country")?,
    })
}

/// The connections `viewer` can see, oldest first.
pub fn connections(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<ConnectionRow>> {
    let sql = format!("{CONNECTION_SELECT} WHERE {CONNECTION_VISIBLE} ORDER BY c.id");
    db.query_map(&sql, params![household_id, viewer], connection_from_row)
}

/// A connection `viewer` can see.
pub fn connection(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    id: i64,
) -> Result<Option<ConnectionRow>> {
    let sql = format!("{CONNECTION_SELECT} WHERE {CONNECTION_VISIBLE} AND c.id = ?3");
    db.query_opt(&sql, params![household_id, viewer, id], connection_from_row)
}

/// A new connection, as linking writes it.
pub struct NewConnection<'a> {
    pub household_id: i64,
    pub member_id: i64,
    pub provider: &'a str,
    pub name: &'a str,
    pub visibility: Visibility,
    pub reach_local: bool,
    pub next_sync_at: &'a str,
    pub country: Option<&'a str>,
}

pub fn insert_connection(db: &Db<'_>, new: &NewConnection<'_>, now: &str) -> Result<i64> {
    db.query_row(
        "INSERT INTO bank_connections (household_id, member_id, provider, name, visibility,
           reach_local, status, next_sync_at, created_at, country)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'ok', ?7, ?8, ?9) RETURNING id",
        params![
            new.household_id,
            new.member_id,
            new.provider,
            new.name,
            new.visibility.as_str(),
            new.reach_local,
            new.next_sync_at,
            now,
            new.country
        ],
        |row| row.get(0),
    )
}

/// Deletes a connection with its credentials; its accounts and keys go with it, and the
/// transactions it brought stay.
pub fn delete_connection(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    forget_credentials(db, household_id, id)?;
    db.execute_one(
        "DELETE FROM bank_connections WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )
}

/// Forgets a connection's credentials (the connection went by an undo of its link).
pub fn forget_credentials(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    set_secret(db, household_id, &secret_name(id), None)
}

/// A connection's credentials.
pub fn credentials(db: &Db<'_>, household_id: i64, id: i64) -> Result<Option<String>> {
    secret(db, household_id, &secret_name(id))
}

pub fn set_credentials(db: &Db<'_>, household_id: i64, id: i64, value: &str) -> Result<()> {
    set_secret(db, household_id, &secret_name(id), Some(value))
}

/// How a sync went, as the connection keeps it.
pub struct Outcome<'a> {
    pub status: &'a str,
    pub detail: Option<&'a str>,
    pub failures: i64,
    /// The last day a successful sync covered; `None` keeps the one before.
    pub synced_through: Option<Date>,
    pub attempt_at: &'a str,
    /// `None` keeps the last success.
    pub success_at: Option<&'a str>,
    pub next_sync_at: &'a str,
}

/// Records a sync's outcome and ends its lease.
pub fn record_outcome(
    db: &Db<'_>,
    household_id: i64,
    id: i64,
    outcome: &Outcome<'_>,
) -> Result<()> {
    db.execute_one(
        "UPDATE bank_connections SET status = ?3, status_detail = ?4, failures = ?5,
           synced_through = coalesce(?6, synced_through), last_attempt_at = ?7,
           last_success_at = coalesce(?8, last_success_at), next_sync_at = ?9, leased_until = NULL
         WHERE household_id = ?1 AND id = ?2",
        params![
            household_id,
            id,
            outcome.status,
            outcome.detail,
            outcome.failures,
            opt_date_text(outcome.synced_through),
            outcome.attempt_at,
            outcome.success_at,
            outcome.next_sync_at
        ],
    )
}

/// Takes the connection for a sync until `until`, unless another sync holds it (on any
/// instance); whether it was taken.
pub fn lease(db: &Db<'_>, household_id: i64, id: i64, now: &str, until: &str) -> Result<bool> {
    let taken = db.execute(
        "UPDATE bank_connections SET leased_until = ?4
         WHERE household_id = ?1 AND id = ?2 AND (leased_until IS NULL OR leased_until <= ?3)",
        params![household_id, id, now, until],
    )?;
    Ok(taken == 1)
}

/// Ends a lease without recording an outcome (a sync that never asked the bank).
pub fn release(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "UPDATE bank_connections SET leased_until = NULL WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// The requests made for a connection on a UTC day.
pub fn requests_on(db: &Db<'_>, connection_id: i64, day: Date) -> Result<i64> {
    let count: Option<i64> = db.query_opt(
        "SELECT count FROM bank_requests WHERE connection_id = ?1 AND on_date = ?2",
        params![connection_id, day.to_string()],
        |row| row.get(0),
    )?;
    Ok(count.unwrap_or(0))
}

/// Counts one request for a connection on a UTC day.
pub fn count_request(db: &Db<'_>, connection_id: i64, day: Date) -> Result<()> {
    db.execute(
        "INSERT INTO bank_requests (connection_id, on_date, count) VALUES (?1, ?2, 1)
         ON CONFLICT (connection_id, on_date) DO UPDATE SET count = bank_requests.count + 1",
        params![connection_id, day.to_string()],
    )?;
    Ok(())
}

/// The connections of every household whose sync is due at `now` and that nobody is
/// syncing, as (household, connection, the member who linked it), the longest waiting first.
/// Those that need a person (link again, a setting to fix) wait for them.
pub fn due(db: &Db<'_>, now: &str) -> Result<Vec<(i64, i64, i64)>> {
    db.query_map(
        "SELECT household_id, id, member_id FROM bank_connections
         WHERE next_sync_at <= ?1 AND (leased_until IS NULL OR leased_until <= ?1)
           AND status NOT IN ('needs_relink', 'misconfigured')
         ORDER BY next_sync_at, id",
        params![now],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankAccountRow {
    pub id: i64,
    pub connection_id: i64,
    pub remote_key: String,
    pub name: String,
    pub institution: Option<String>,
    pub currency: Option<String>,
    /// The Exhale account it goes into, with its name.
    pub account: Option<(i64, String)>,
    pub available_minor: Option<i64>,
    pub problem: Option<String>,
    /// The Exhale account's latest balance.
    pub balance: Option<(Date, i64)>,
}

const BANK_ACCOUNT_SELECT: &str = "SELECT b.*, a.name AS account_name,
    (SELECT x.on_date FROM account_balances x WHERE x.account_id = b.account_id ORDER BY x.on_date DESC LIMIT 1) AS balance_on,
    (SELECT x.amount_minor FROM account_balances x WHERE x.account_id = b.account_id ORDER BY x.on_date DESC LIMIT 1) AS balance_minor
    FROM bank_accounts b LEFT JOIN accounts a ON a.id = b.account_id";

fn bank_account_from_row(row: &Row<'_>) -> Result<BankAccountRow> {
    let account = match row.get::<Option<i64>>("account_id")? {
        Some(id) => Some((id, row.get("account_name")?)),
        None => None,
    };
    let balance = match row.get::<Option<i64>>("balance_minor")? {
        Some(minor) => Some((date(row, "balance_on")?, minor)),
        None => None,
    };
    Ok(BankAccountRow {
        id: row.get("id")?,
        connection_id: row.get("connection_id")?,
        remote_key: row.get("remote_key")?,
        name: row.get("name")?,
        institution: row.get("institution")?,
        currency: row.get("currency")?,
        account,
        available_minor: row.get("available_minor")?,
        problem: row.get("problem")?,
        balance,
    })
}

/// The accounts of these connections, in the order they were first seen.
pub fn bank_accounts(
    db: &Db<'_>,
    household_id: i64,
    connection_ids: &[i64],
) -> Result<Vec<BankAccountRow>> {
    if connection_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "{BANK_ACCOUNT_SELECT} WHERE b.household_id = ?1 AND b.connection_id {} ORDER BY b.id",
        db.in_ids(2)
    );
    db.query_map(&sql, params![household_id, connection_ids.to_vec()], bank_account_from_row)
}

/// One bank account.
pub fn bank_account(db: &Db<'_>, household_id: i64, id: i64) -> Result<Option<BankAccountRow>> {
    let sql = format!("{BANK_ACCOUNT_SELECT} WHERE b.household_id = ?1 AND b.id = ?2");
    db.query_opt(&sql, params![household_id, id], bank_account_from_row)
}

/// An account as a fetch names it.
pub struct SeenAccount<'a> {
    pub remote_key: &'a str,
    pub name: &'a str,
    pub institution: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub available_minor: Option<i64>,
    pub problem: Option<&'a str>,
}

/// Records an account a fetch named (its name, currency and state renewed when it is known);
/// its id.
pub fn put_bank_account(
    db: &Db<'_>,
    household_id: i64,
    connection_id: i64,
    seen: &SeenAccount<'_>,
) -> Result<i64> {
    db.query_row(
        "INSERT INTO bank_accounts (household_id, connection_id, remote_key, name, institution,
           currency, available_minor, problem)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (connection_id, remote_key) DO UPDATE SET name = excluded.name,
           institution = excluded.institution, currency = excluded.currency,
           available_minor = excluded.available_minor, problem = excluded.problem
         RETURNING id",
        params![
            household_id,
            connection_id,
            seen.remote_key,
            seen.name,
            seen.institution,
            seen.currency,
            seen.available_minor,
            seen.problem
        ],
        |row| row.get(0),
    )
}

/// Sets the Exhale account a bank account goes into, or none.
pub fn set_target(db: &Db<'_>, household_id: i64, id: i64, account_id: Option<i64>) -> Result<()> {
    db.execute_one(
        "UPDATE bank_accounts SET account_id = ?3 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, account_id],
    )
}

/// Sets what went wrong for one account alone, or clears it.
pub fn set_problem(db: &Db<'_>, household_id: i64, id: i64, problem: Option<&str>) -> Result<()> {
    db.execute(
        "UPDATE bank_accounts SET problem = ?3 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, problem],
    )?;
    Ok(())
}

/// The transaction a provider id names, when the id was seen before (the transaction may
/// have been deleted or undone since: then it is not brought back).
pub fn keyed(db: &Db<'_>, bank_account_id: i64, key: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT transaction_id FROM bank_keys WHERE bank_account_id = ?1 AND provider_key = ?2",
        params![bank_account_id, key],
        |row| row.get(0),
    )
}

/// Gives a transaction one more provider id.
pub fn add_key(db: &Db<'_>, bank_account_id: i64, key: &str, transaction_id: i64) -> Result<()> {
    db.execute(
        "INSERT INTO bank_keys (bank_account_id, provider_key, transaction_id) VALUES (?1, ?2, ?3)
         ON CONFLICT (bank_account_id, provider_key) DO UPDATE SET transaction_id = excluded.transaction_id",
        params![bank_account_id, key, transaction_id],
    )?;
    Ok(())
}

/// A transaction of an account as a sync compares it with what the bank brought.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownRow {
    pub id: i64,
    pub on_date: Date,
    pub amount_minor: i64,
    pub description: String,
    pub pending: bool,
    /// It has a provider id (it came from a bank feed, or was matched to one).
    pub from_bank: bool,
}

/// An account's transactions from `from` on, for a sync to compare.
pub fn known_rows(
    db: &Db<'_>,
    household_id: i64,
    account_id: i64,
    from: Date,
) -> Result<Vec<KnownRow>> {
    db.query_map(
        "SELECT t.id, t.on_date, t.amount_minor, t.description, t.pending,
           EXISTS (SELECT 1 FROM bank_keys k WHERE k.transaction_id = t.id) AS from_bank
         FROM transactions t
         WHERE t.household_id = ?1 AND t.account_id = ?2 AND t.on_date >= ?3
         ORDER BY t.on_date, t.id",
        params![household_id, account_id, from.to_string()],
        |row| {
            Ok(KnownRow {
                id: row.get(0)?,
                on_date: date(row, 1)?,
                amount_minor: row.get(2)?,
                description: row.get(3)?,
                pending: row.get(4)?,
                from_bank: row.get(5)?,
            })
        },
    )
}

/// A pending transaction a bank feed brought, on an account the viewer sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRow {
    pub id: i64,
    pub account_id: i64,
    pub account_name: String,
    pub currency: String,
    pub on_date: Date,
    pub amount_minor: i64,
    pub description: String,
}

/// The pending transactions bank feeds brought on the accounts `viewer` sees, oldest first.
pub fn pending_rows(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<PendingRow>> {
    db.query_map(
        "SELECT t.id, t.account_id, a.name, a.currency, t.on_date, t.amount_minor, t.description
         FROM transactions t JOIN accounts a ON a.id = t.account_id
         WHERE t.household_id = ?1 AND t.pending = 1
           AND (a.visibility = 'household' OR a.owner_id = ?2)
           AND EXISTS (SELECT 1 FROM bank_keys k WHERE k.transaction_id = t.id)
         ORDER BY t.on_date, t.id",
        params![household_id, viewer],
        |row| {
            Ok(PendingRow {
                id: row.get(0)?,
                account_id: row.get(1)?,
                account_name: row.get(2)?,
                currency: row.get(3)?,
                on_date: date(row, 4)?,
                amount_minor: row.get(5)?,
                description: row.get(6)?,
            })
        },
    )
}

/// The provider ids of an account's pending transactions, with their transactions.
pub fn pending_keys(db: &Db<'_>, bank_account_id: i64) -> Result<Vec<(String, i64)>> {
    db.query_map(
        "SELECT k.provider_key, k.transaction_id FROM bank_keys k
         JOIN transactions t ON t.id = k.transaction_id
         WHERE k.bank_account_id = ?1 AND t.pending = 1 ORDER BY k.provider_key",
        params![bank_account_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// A transaction a sync records for the first time.
pub struct NewSynced<'a> {
    pub on_date: Date,
    pub amount_minor: i64,
    pub payee: &'a str,
    pub description: &'a str,
    pub pending: bool,
}

/// Records a transaction a sync brought, under `import_id` (so an undo of the sync removes
/// it); its id.
pub fn insert_synced(
    db: &Db<'_>,
    household_id: i64,
    account_id: i64,
    currency: &str,
    import_id: i64,
    row: &NewSynced<'_>,
    now: &str,
) -> Result<i64> {
    db.query_row(
        "INSERT INTO transactions (household_id, account_id, on_date, amount_minor, currency,
           payee, description, pending, source, import_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'import', ?9, ?10, ?10) RETURNING id",
        params![
            household_id,
            account_id,
            row.on_date.to_string(),
            row.amount_minor,
            currency,
            row.payee,
            row.description,
            row.pending,
            import_id,
            now
        ],
        |row| row.get(0),
    )
}

/// A new import for what one sync adds to one account; its id.
pub fn start_import(
    db: &Db<'_>,
    household_id: i64,
    account_id: i64,
    member_id: i64,
    now: &str,
) -> Result<i64> {
    db.query_row(
        "INSERT INTO imports (household_id, account_id, member_id, transaction_count, created_at)
         VALUES (?1, ?2, ?3, 0, ?4) RETURNING id",
        params![household_id, account_id, member_id, now],
        |row| row.get(0),
    )
}

/// Sets how many transactions an import added.
pub fn finish_import(db: &Db<'_>, import_id: i64, count: u64) -> Result<()> {
    db.execute(
        "UPDATE imports SET transaction_count = ?2 WHERE id = ?1",
        params![import_id, count as i64],
    )?;
    Ok(())
}

/// The transactions of `account_id` a bank feed brought and no statement has named yet, from
/// `from` to `to`, as (id, date, amount): what a statement import takes as already there.
pub fn unmatched_bank_rows(
    db: &Db<'_>,
    household_id: i64,
    account_id: i64,
    from: Date,
    to: Date,
) -> Result<Vec<(i64, Date, i64)>> {
    db.query_map(
        "SELECT t.id, t.on_date, t.amount_minor FROM transactions t
         WHERE t.household_id = ?1 AND t.account_id = ?2 AND t.on_date >= ?3 AND t.on_date <= ?4
           AND t.import_key IS NULL AND t.pending = 0
           AND EXISTS (SELECT 1 FROM bank_keys k WHERE k.transaction_id = t.id)
         ORDER BY t.on_date, t.id",
        params![household_id, account_id, from.to_string(), to.to_string()],
        |row| Ok((row.get(0)?, date(row, 1)?, row.get(2)?)),
    )
}

/// Names a transaction a bank feed brought by a statement's row too, so importing the
/// statement again skips it.
pub fn set_import_key(db: &Db<'_>, household_id: i64, id: i64, key: &str) -> Result<()> {
    db.execute_one(
        "UPDATE transactions SET import_key = ?3 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, key],
    )
}

/// A recurring charge a sync noticed on an account that is not a subscription yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalRow {
    pub id: i64,
    pub account_id: i64,
    pub account_name: String,
    pub merchant: String,
    pub name: String,
    /// Positive: what each charge takes.
    pub amount_minor: i64,
    pub currency: String,
    pub cycle: String,
    pub amount_varies: bool,
    pub next_expected: Date,
    /// When a sync first noticed it.
    pub created_at: String,
    pub dismissed: bool,
}

impl ProposalRow {
    /// Its cycle, when it is one Exhale names (always, for what a sync writes).
    pub fn cycle(&self) -> Option<domain::Cycle> {
        domain::CyclePreset::parse(&self.cycle).map(|preset| preset.cycle())
    }
}

/// A recurring charge as a sync proposes it.
pub struct NewProposal<'a> {
    pub account_id: i64,
    pub merchant: &'a str,
    pub name: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    pub cycle: &'a str,
    pub amount_varies: bool,
    pub next_expected: Date,
}

/// Proposes a recurring charge, or renews the proposal's amount and date; a dismissed one
/// stays dismissed.
pub fn put_proposal(
    db: &Db<'_>,
    household_id: i64,
    new: &NewProposal<'_>,
    now: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO recurring_proposals (household_id, account_id, merchant, name, amount_minor,
           currency, cycle, amount_varies, next_expected, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (account_id, merchant, currency) DO UPDATE SET name = excluded.name,
           amount_minor = excluded.amount_minor, cycle = excluded.cycle,
           amount_varies = excluded.amount_varies, next_expected = excluded.next_expected",
        params![
            household_id,
            new.account_id,
            new.merchant,
            new.name,
            new.amount_minor,
            new.currency,
            new.cycle,
            new.amount_varies,
            new.next_expected.to_string(),
            now
        ],
    )?;
    Ok(())
}

const PROPOSAL_SELECT: &str = "SELECT p.*, a.name AS account_name FROM recurring_proposals p
    JOIN accounts a ON a.id = p.account_id
    WHERE p.household_id = ?1 AND (a.visibility = 'household' OR a.owner_id = ?2)";

fn proposal_from_row(row: &Row<'_>) -> Result<ProposalRow> {
    Ok(ProposalRow {
        id: row.get("id")?,
        account_id: row.get("account_id")?,
        account_name: row.get("account_name")?,
        merchant: row.get("merchant")?,
        name: row.get("name")?,
        amount_minor: row.get("amount_minor")?,
        currency: row.get("currency")?,
        cycle: row.get("cycle")?,
        amount_varies: row.get("amount_varies")?,
        next_expected: date(row, "next_expected")?,
        created_at: row.get("created_at")?,
        dismissed: row.get("dismissed")?,
    })
}

/// The proposals `viewer` sees (on the accounts they see) that nobody dismissed, oldest first.
pub fn open_proposals(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<ProposalRow>> {
    let sql = format!("{PROPOSAL_SELECT} AND p.dismissed = 0 ORDER BY p.id");
    db.query_map(&sql, params![household_id, viewer], proposal_from_row)
}

/// A proposal `viewer` sees, dismissed or not.
pub fn proposal(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    id: i64,
) -> Result<Option<ProposalRow>> {
    let sql = format!("{PROPOSAL_SELECT} AND p.id = ?3");
    db.query_opt(&sql, params![household_id, viewer, id], proposal_from_row)
}

pub fn dismiss_proposal(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute_one(
        "UPDATE recurring_proposals SET dismissed = 1 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )
}

/// An account's booked transactions from `from` on, as (day, amount, description), for the
/// detection of recurring charges.
pub fn booked_since(
    db: &Db<'_>,
    household_id: i64,
    account_id: i64,
    from: Date,
) -> Result<Vec<(Date, i64, String)>> {
    db.query_map(
        "SELECT t.on_date, t.amount_minor, t.description FROM transactions t
         WHERE t.household_id = ?1 AND t.account_id = ?2 AND t.on_date >= ?3 AND t.pending = 0
         ORDER BY t.on_date, t.id",
        params![household_id, account_id, from.to_string()],
        |row| Ok((date(row, 0)?, row.get(1)?, row.get(2)?)),
    )
}

/// The names in `secrets` of the household's Enable Banking application.
const ENABLE_BANKING_ID: &str = "enable_banking_application_id";
const ENABLE_BANKING_KEY: &str = "enable_banking_private_key";

/// The household's Enable Banking application: its id and private key.
pub fn enable_banking(db: &Db<'_>, household_id: i64) -> Result<Option<(String, String)>> {
    let id = secret(db, household_id, ENABLE_BANKING_ID)?;
    let key = secret(db, household_id, ENABLE_BANKING_KEY)?;
    Ok(id.zip(key))
}

/// Sets the household's Enable Banking application, or removes it with `None`.
pub fn set_enable_banking(
    db: &Db<'_>,
    household_id: i64,
    application: Option<(&str, &str)>,
) -> Result<()> {
    set_secret(db, household_id, ENABLE_BANKING_ID, application.map(|(id, _)| id))?;
    set_secret(db, household_id, ENABLE_BANKING_KEY, application.map(|(_, key)| key))
}

/// A consent started at a bank, waiting for the person to come back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentRow {
    pub state: String,
    pub household_id: i64,
    pub member_id: i64,
    /// The bank, as Enable Banking names it.
    pub bank: String,
    pub visibility: Visibility,
    pub connection_id: Option<i64>,
    pub consent_until: String,
    pub expires_at: String,
    /// The bank's country, two capital letters.
    pub country: String,
}

pub fn put_consent(db: &Db<'_>, row: &ConsentRow) -> Result<()> {
    db.execute(
        "INSERT INTO bank_consents (state, household_id, member_id, visibility, connection_id,
           consent_until, expires_at, bank, country) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            row.state,
            row.household_id,
            row.member_id,
            row.visibility.as_str(),
            row.connection_id,
            row.consent_until,
            row.expires_at,
            row.bank,
            row.country
        ],
    )?;
    Ok(())
}

/// The consent `member` started with `state`, unless it expired before `now`.
pub fn consent(
    db: &Db<'_>,
    household_id: i64,
    member_id: i64,
    state: &str,
    now: &str,
) -> Result<Option<ConsentRow>> {
    db.query_opt(
        "SELECT * FROM bank_consents
         WHERE household_id = ?1 AND member_id = ?2 AND state = ?3 AND expires_at > ?4",
        params![household_id, member_id, state, now],
        |row| {
            Ok(ConsentRow {
                state: row.get("state")?,
                household_id: row.get("household_id")?,
                member_id: row.get("member_id")?,
                bank: row.get("bank")?,
                visibility: parsed(row, "visibility", Visibility::parse)?,
                connection_id: row.get("connection_id")?,
                consent_until: row.get("consent_until")?,
                expires_at: row.get("expires_at")?,
                country: row.get::<Option<String>>("country")?.unwrap_or_default(),
            })
        },
    )
}

/// Takes a consent: it completes once.
pub fn take_consent(db: &Db<'_>, household_id: i64, state: &str) -> Result<bool> {
    let taken = db.execute(
        "DELETE FROM bank_consents WHERE household_id = ?1 AND state = ?2",
        params![household_id, state],
    )?;
    Ok(taken == 1)
}

/// Sets when a connection's consent ends and, when given, its bank's country; the new session
/// is its credentials.
pub fn renew_consent(
    db: &Db<'_>,
    household_id: i64,
    id: i64,
    consent_until: Option<&str>,
    country: Option<&str>,
) -> Result<()> {
    db.execute_one(
        "UPDATE bank_connections SET consent_until = ?3, country = COALESCE(?4, country), status = 'ok',
           status_detail = NULL, failures = 0 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, consent_until, country],
    )
}
