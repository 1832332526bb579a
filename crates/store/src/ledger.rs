//! Accounts with their balances, labels, and the transactions on the accounts.
//!
//! A transaction is visible to a member when its account is: a private account and everything
//! on it exist only for its owner. Rules about what may be written live in `app`.

use crate::{
    Db, Dialect, Result, StoreError,
    db::{Flow, Row},
    sql::{date, parsed},
    value::{Cache, Param, SqlValue, as_params, columns_then, params},
};
use domain::{
    Currency, Date,
    entities::{AccountKind, Visibility},
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub id: i64,
    pub household_id: i64,
    pub owner_id: i64,
    pub owner_name: String,
    pub name: String,
    pub kind: AccountKind,
    pub currency: Currency,
    pub visibility: Visibility,
    pub archived: bool,
    pub transaction_count: u64,
    /// The latest recorded balance: its date and amount.
    pub balance: Option<(Date, i64)>,
}

const ACCOUNT_SELECT: &str = "SELECT a.*, m.name AS owner_name,
    (SELECT count(*) FROM transactions t WHERE t.account_id = a.id) AS transaction_count,
    (SELECT b.on_date FROM account_balances b WHERE b.account_id = a.id ORDER BY b.on_date DESC LIMIT 1) AS balance_on,
    (SELECT b.amount_minor FROM account_balances b WHERE b.account_id = a.id ORDER BY b.on_date DESC LIMIT 1) AS balance_minor
    FROM accounts a JOIN members m ON m.id = a.owner_id";
const ACCOUNT_VISIBLE: &str =
    "a.household_id = ?1 AND (a.visibility = 'household' OR a.owner_id = ?2)";

fn account_from_row(row: &Row<'_>) -> Result<AccountRow> {
    let balance = match row.get::<Option<i64>>("balance_minor")? {
        Some(minor) => Some((date(row, "balance_on")?, minor)),
        None => None,
    };
    Ok(AccountRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        owner_id: row.get("owner_id")?,
        owner_name: row.get("owner_name")?,
        name: row.get("name")?,
        kind: parsed(row, "kind", AccountKind::parse)?,
        currency: parsed(row, "currency", |code| Currency::parse(code).ok())?,
        visibility: parsed(row, "visibility", Visibility::parse)?,
        archived: row.get("archived")?,
        transaction_count: row.get::<i64>("transaction_count")? as u64,
        balance,
    })
}

/// The accounts `viewer` can see, by name.
pub fn list_accounts(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<AccountRow>> {
    let sql =
        format!("{ACCOUNT_SELECT} WHERE {ACCOUNT_VISIBLE} ORDER BY a.name COLLATE NOCASE, a.id");
    let rows = db.query_map(&sql, params![household_id, viewer], account_from_row)?;
    Ok(rows)
}

pub fn get_account(db: &Db<'_>, household_id: i64, viewer: i64, id: i64) -> Result<AccountRow> {
    let sql = format!("{ACCOUNT_SELECT} WHERE {ACCOUNT_VISIBLE} AND a.id = ?3");
    db.query_row(&sql, params![household_id, viewer, id], account_from_row)
}

/// What an op checks of an account its input names: without the count of its transactions
/// and its balance, which a listing shows and a check need not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRef {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub currency: Currency,
    pub archived: bool,
}

/// An account `viewer` can see, as [`AccountRef`].
pub fn account_ref(db: &Db<'_>, household_id: i64, viewer: i64, id: i64) -> Result<AccountRef> {
    let sql = format!(
        "SELECT a.id, a.household_id, a.name, a.currency, a.archived FROM accounts a WHERE {ACCOUNT_VISIBLE} AND a.id = ?3"
    );
    db.query_row(&sql, params![household_id, viewer, id], |row| {
        Ok(AccountRef {
            id: row.get("id")?,
            household_id: row.get("household_id")?,
            name: row.get("name")?,
            currency: parsed(row, "currency", |code| Currency::parse(code).ok())?,
            archived: row.get("archived")?,
        })
    })
}

pub fn insert_account(db: &Db<'_>, row: &AccountRow, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO accounts (household_id, owner_id, name, kind, currency, visibility, archived, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        params![
            row.household_id,
            row.owner_id,
            row.name,
            row.kind.as_str(),
            row.currency.code(),
            row.visibility.as_str(),
            row.archived,
            now
        ],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn update_account(db: &Db<'_>, row: &AccountRow) -> Result<()> {
    db.execute_one(
        "UPDATE accounts SET name = ?3, kind = ?4, visibility = ?5, archived = ?6
         WHERE household_id = ?1 AND id = ?2",
        params![
            row.household_id,
            row.id,
            row.name,
            row.kind.as_str(),
            row.visibility.as_str(),
            row.archived
        ],
    )
}

pub fn delete_account(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM accounts WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Records what the account held at the end of `on`, replacing a balance of the same day.
pub fn set_balance(db: &Db<'_>, account_id: i64, on: Date, minor: i64) -> Result<()> {
    db.execute(
        "INSERT INTO account_balances (account_id, on_date, amount_minor) VALUES (?1, ?2, ?3)
         ON CONFLICT (account_id, on_date) DO UPDATE SET amount_minor = excluded.amount_minor",
        params![account_id, on.to_string(), minor],
    )?;
    Ok(())
}

/// An account's recorded balances, oldest first.
pub fn balances(db: &Db<'_>, account_id: i64) -> Result<Vec<(Date, i64)>> {
    let rows = db.query_map(
        "SELECT on_date, amount_minor FROM account_balances WHERE account_id = ?1 ORDER BY on_date",
        params![account_id],
        |row| Ok((date(row, 0)?, row.get(1)?)),
    )?;
    Ok(rows)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRow {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub colour: String,
    /// Transactions carrying it that the viewer can see.
    pub transaction_count: u64,
}

/// A label's count is of the transactions the viewer (?2) sees: all that carry it, less those
/// in accounts of the household (?1) private to someone else, usually none. Counted the other
/// way, each labelled transaction was looked up for its account (16 ms for 5,000 on
/// PostgreSQL).
const LABEL_SELECT: &str = "SELECT l.*, (SELECT count(*) FROM transaction_labels tl WHERE tl.label_id = l.id)
    - (SELECT count(*) FROM accounts h JOIN transactions t ON t.account_id = h.id
       JOIN transaction_labels tl ON tl.transaction_id = t.id AND tl.label_id = l.id
       WHERE h.household_id = ?1 AND h.visibility <> 'household' AND h.owner_id <> ?2) AS transaction_count
    FROM labels l";

fn label_from_row(row: &Row<'_>) -> Result<LabelRow> {
    Ok(LabelRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        name: row.get("name")?,
        colour: row.get("colour")?,
        transaction_count: row.get::<i64>("transaction_count")? as u64,
    })
}

pub fn list_labels(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<LabelRow>> {
    let sql =
        format!("{LABEL_SELECT} WHERE l.household_id = ?1 ORDER BY l.name COLLATE NOCASE, l.id");
    let rows = db.query_map(&sql, params![household_id, viewer], label_from_row)?;
    Ok(rows)
}

pub fn get_label(db: &Db<'_>, household_id: i64, viewer: i64, id: i64) -> Result<LabelRow> {
    let sql = format!("{LABEL_SELECT} WHERE l.household_id = ?1 AND l.id = ?3");
    db.query_row(&sql, params![household_id, viewer, id], label_from_row)
}

/// Whether the household has a label with this id (without counting its transactions).
pub fn label_exists(db: &Db<'_>, household_id: i64, id: i64) -> Result<bool> {
    db.exists("SELECT 1 FROM labels WHERE household_id = ?1 AND id = ?2", params![household_id, id])
}

/// The id of the label with this name, ignoring case.
pub fn find_label(db: &Db<'_>, household_id: i64, name: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM labels WHERE household_id = ?1 AND nocase(name) = nocase(?2)",
        params![household_id, name],
        |r| r.get(0),
    )
}

pub fn insert_label(
    db: &Db<'_>,
    household_id: i64,
    name: &str,
    colour: &str,
    now: &str,
) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO labels (household_id, name, colour, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id",
        params![household_id, name, colour, now],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn update_label(db: &Db<'_>, row: &LabelRow) -> Result<()> {
    db.execute_one(
        "UPDATE labels SET name = ?3, colour = ?4 WHERE household_id = ?1 AND id = ?2",
        params![row.household_id, row.id, row.name, row.colour],
    )
}

pub fn delete_label(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM labels WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Ids of every transaction (visible or not: the label is the household's) carrying a label.
pub fn transactions_with_label(db: &Db<'_>, label_id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT transaction_id FROM transaction_labels WHERE label_id = ?1 ORDER BY transaction_id",
        params![label_id],
        |r| r.get(0),
    )?;
    Ok(ids)
}

/// Where a transaction came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Manual,
    Import,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manual => "manual",
            Self::Import => "import",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "manual" => Some(Self::Manual),
            "import" => Some(Self::Import),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionRow {
    pub id: i64,
    pub household_id: i64,
    pub account_id: i64,
    pub account_name: String,
    pub on_date: Date,
    /// Signed: money out is negative.
    pub amount_minor: i64,
    pub currency: Currency,
    pub payee: String,
    pub description: String,
    pub notes: Option<String>,
    pub category_id: Option<i64>,
    pub category_name: Option<String>,
    pub transfer_id: Option<i64>,
    pub charge_id: Option<i64>,
    pub source: Source,
    pub import_key: Option<String>,
    /// The bank shows it as not yet booked.
    pub pending: bool,
    /// (id, name), by name.
    pub labels: Vec<(i64, String)>,
    /// Its parts in categories, when it is split; their amounts add up to its amount.
    pub splits: Vec<SplitRow>,
}

/// One part of a split transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitRow {
    pub amount_minor: i64,
    /// (id, name).
    pub category: Option<(i64, String)>,
    pub note: Option<String>,
}

const TRANSACTION_COLUMNS: &str = "SELECT t.*, a.name AS account_name, c.name AS category_name";
/// What a row of [`TRANSACTION_COLUMNS`] names besides the transaction `t`.
const TRANSACTION_JOINS: &str =
    " JOIN accounts a ON a.id = t.account_id LEFT JOIN categories c ON c.id = t.category_id";
/// A count whose text the index narrows reads its candidates from the index, then each row
/// (CROSS JOIN fixes that order).
const FROM_TEXT_MATCHES: &str =
    " FROM transaction_text f CROSS JOIN transactions t ON t.id = f.rowid";

/// A search whose text has few matches reads them from the list [`few_text_matches`] made,
/// then each row by its id: on SQLite the list is bound (its value added to `values`), on
/// PostgreSQL written in (integers; such a statement is planned for its values anyway), and
/// each row looked up behind OFFSET 0: joined, the planner still chose to read every row of
/// the household's account and hash them, expecting them to be fewer than they were.
fn from_listed_matches(db: &Db<'_>, ids: &[i64], values: &mut Vec<SqlValue>) -> Result<String> {
    Ok(match db.dialect() {
        Dialect::Sqlite => {
            let list =
                serde_json::to_string(ids).map_err(|err| StoreError::Corrupt(err.to_string()))?;
            values.push(list.into());
            format!(
                " FROM json_each(?{}) m CROSS JOIN transactions t ON t.id = m.value",
                values.len()
            )
        }
        Dialect::Postgres => {
            let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            format!(
                " FROM unnest(ARRAY[{list}]::bigint[]) m(value)
                  CROSS JOIN LATERAL (SELECT * FROM transactions t WHERE t.id = m.value OFFSET 0) t"
            )
        }
    })
}
/// The accounts the viewer sees, as a set the planner reads once; a search then needs no join
/// per row to decide, and its count reads only the index.
const TRANSACTION_VISIBLE: &str =
    "t.household_id = ?1 AND t.account_id IN (SELECT v.id FROM accounts v
    WHERE v.household_id = ?1 AND (v.visibility = 'household' OR v.owner_id = ?2))";

/// [`TRANSACTION_VISIBLE`] with the visible accounts read once for the whole statement, for a
/// count that looks rows up one by one: as a set, PostgreSQL read every household's accounts
/// again for each row (with 100 households, a count of 385 rows took 8 to 20 ms).
fn visible_read_once(clause: &str) -> String {
    debug_assert!(clause.contains(TRANSACTION_VISIBLE), "a search's clause starts with it");
    clause.replacen(
        TRANSACTION_VISIBLE,
        "t.household_id = ?1 AND t.account_id = ANY(ARRAY(SELECT v.id FROM accounts v
    WHERE v.household_id = ?1 AND (v.visibility = 'household' OR v.owner_id = ?2)))",
        1,
    )
}

fn transaction_from_row(row: &Row<'_>) -> Result<TransactionRow> {
    Ok(TransactionRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        account_id: row.get("account_id")?,
        account_name: row.get("account_name")?,
        on_date: date(row, "on_date")?,
        amount_minor: row.get("amount_minor")?,
        currency: parsed(row, "currency", |code| Currency::parse(code).ok())?,
        payee: row.get("payee")?,
        description: row.get("description")?,
        notes: row.get("notes")?,
        category_id: row.get("category_id")?,
        category_name: row.get("category_name")?,
        transfer_id: row.get("transfer_id")?,
        charge_id: row.get("charge_id")?,
        source: parsed(row, "source", Source::parse)?,
        import_key: row.get("import_key")?,
        pending: row.get("pending")?,
        labels: Vec::new(),
        splits: Vec::new(),
    })
}

/// Fills in the labels of `rows` with one query.
fn attach_labels(db: &Db<'_>, rows: &mut [TransactionRow]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let sql = format!(
        "SELECT tl.transaction_id, l.id, l.name FROM transaction_labels tl JOIN labels l ON l.id = tl.label_id
         WHERE tl.transaction_id {} ORDER BY l.name COLLATE NOCASE, l.id",
        db.in_ids(1)
    );
    db.each(Cache::Keep, &sql, params![ids], &mut |row| {
        let transaction: i64 = row.get(0)?;
        if let Some(target) = rows.iter_mut().find(|r| r.id == transaction) {
            target.labels.push((row.get(1)?, row.get(2)?));
        }
        Ok(Flow::Continue)
    })?;
    let sql = format!(
        "SELECT s.transaction_id, s.amount_minor, s.category_id, c.name, s.note
         FROM transaction_splits s LEFT JOIN categories c ON c.id = s.category_id
         WHERE s.transaction_id {} ORDER BY s.id",
        db.in_ids(1)
    );
    db.each(Cache::Keep, &sql, params![ids], &mut |row| {
        let transaction: i64 = row.get(0)?;
        if let Some(target) = rows.iter_mut().find(|r| r.id == transaction) {
            let category = match row.get::<Option<i64>>(2)? {
                Some(id) => Some((id, row.get::<Option<String>>(3)?.unwrap_or_default())),
                None => None,
            };
            target.splits.push(SplitRow { amount_minor: row.get(1)?, category, note: row.get(4)? });
        }
        Ok(Flow::Continue)
    })?;
    Ok(())
}

pub fn get_transaction(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    id: i64,
) -> Result<TransactionRow> {
    let sql = format!(
        "{TRANSACTION_COLUMNS} FROM transactions t{TRANSACTION_JOINS} WHERE {TRANSACTION_VISIBLE} AND t.id = ?3"
    );
    let row = db.query_row(&sql, params![household_id, viewer, id], transaction_from_row)?;
    let mut rows = [row];
    attach_labels(db, &mut rows)?;
    let [row] = rows;
    Ok(row)
}

/// What a search keeps; every field narrows it (labels: any of them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionFilter {
    pub account_id: Option<i64>,
    pub category_id: Option<i64>,
    pub uncategorised: bool,
    pub label_ids: Vec<i64>,
    pub from: Option<Date>,
    pub to: Option<Date>,
    /// Bounds in thousandths of a major unit, compared in each transaction's currency.
    pub min_milli: Option<i64>,
    pub max_milli: Option<i64>,
    /// Case-insensitive, in payee, description and notes.
    pub text: Option<String>,
    /// Case-insensitive, in the payee alone (a rule's condition).
    pub payee_contains: Option<String>,
    /// Case-insensitive, in the description alone (a rule's condition).
    pub description_contains: Option<String>,
    /// Only the transactions one import added.
    pub import_id: Option<i64>,
}

/// SQLite's text index's query for a search's text: one phrase, so every character in it is
/// searched for as written. `None` for text shorter than a trigram, which the index cannot
/// narrow, and on PostgreSQL, whose planner picks its trigram index by itself.
fn text_phrase(db: &Db<'_>, filter: &TransactionFilter) -> Option<String> {
    let text = filter.text.as_deref()?;
    // The index's query stops at a NUL; LIKE alone reads such a text.
    (db.dialect() == Dialect::Sqlite && text.chars().count() >= 3 && !text.contains('\0'))
        .then(|| format!("\"{}\"", text.replace('"', "\"\"")))
}

/// Below this many index matches for a search's text, over every household, a page reads the
/// matches and sorts them; from it up, it walks the date index checking each row's text. The
/// walk stops after the page's last row, quickly when matches are dense and slowly when they
/// are rare; reading the matches costs what there are. Measured over 100,000 rows: the two
/// cost the same near 1,000 matches.
const FEW_TEXT_MATCHES: i64 = 1000;

/// The ids of the text's matches, when there are fewer than [`FEW_TEXT_MATCHES`]: a page
/// (or, on SQLite, a count) then reads those rows alone, and the index is asked once. On
/// SQLite from the FTS5 index, which finds some more than LIKE, which still decides; on
/// PostgreSQL from the household's part of `transaction_search`, exactly what LIKE finds.
/// There the planner, left to choose, expected a household's rows in its account to be a
/// few, and read all of them to join them with the matches (18 to 21 ms a page for 385
/// matches among 5,000, where looking the 385 up takes 1). `None` when there are more, or
/// no text an index can look up.
fn few_text_matches(
    db: &Db<'_>,
    household_id: i64,
    filter: &TransactionFilter,
) -> Result<Option<Vec<i64>>> {
    let ids: Vec<i64> = match db.dialect() {
        Dialect::Sqlite => {
            let Some(phrase) = text_phrase(db, filter) else {
                return Ok(None);
            };
            db.query_map(
                "SELECT rowid FROM transaction_text WHERE transaction_text MATCH ?1 LIMIT ?2",
                params![phrase, FEW_TEXT_MATCHES],
                |row| row.get(0),
            )?
        }
        Dialect::Postgres => {
            let Some(pattern) =
                filter.text.as_deref().and_then(|text| like_value(Dialect::Postgres, text))
            else {
                return Ok(None);
            };
            let sql = format!("{} LIMIT ?3", text_matches(&search_part(db, household_id)?, "?2"));
            let values: [SqlValue; 3] = [household_id.into(), pattern, FEW_TEXT_MATCHES.into()];
            db.query_map_once(&sql, &as_params(&values), |row| row.get(0))?
        }
    };
    Ok(((ids.len() as i64) < FEW_TEXT_MATCHES).then_some(ids))
}

/// Escapes LIKE's wildcards, so a search for "100%" finds that text.
fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `column` holds the text bound at `#`, as SQLite's LIKE decides: ASCII letters in either
/// case match, other letters only as written. PostgreSQL's LIKE tells case apart, so there both
/// sides are folded as `nocase` folds (the pattern by [`like_value`]).
fn contains_clause(dialect: Dialect, column: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("{column} LIKE # ESCAPE '\\'"),
        Dialect::Postgres => format!("nocase({column}) LIKE # ESCAPE '\\'"),
    }
}

/// The pattern [`contains_clause`] binds for `text`; `None` when nothing can hold it
/// (PostgreSQL stores no NUL, so no text there contains one).
fn like_value(dialect: Dialect, text: &str) -> Option<SqlValue> {
    match dialect {
        Dialect::Sqlite => Some(like_pattern(text).into()),
        Dialect::Postgres => {
            (!text.contains('\0')).then(|| like_pattern(text).to_ascii_lowercase().into())
        }
    }
}

/// Where a page of a search starts: after this transaction in the search's order (date, then
/// id, newest first). A position, not an offset, so rows added or removed before it move
/// nothing on the later pages, and reaching a deep page costs no more than the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    pub on_date: Date,
    pub id: i64,
}

impl After {
    /// The position after `row`, where the next page starts.
    pub fn of(row: &TransactionRow) -> Self {
        Self { on_date: row.on_date, id: row.id }
    }
}

/// The scale of each minor unit against thousandths of a major unit, as SQL over
/// `t.currency`, for the currencies the household's accounts hold (a transaction is in its
/// account's): amounts in different currencies compare with one bound. Only the currencies
/// not in hundredths are named, usually none, because the expression runs once per row.
fn per_milli(db: &Db<'_>, household_id: i64) -> Result<String> {
    let codes: Vec<String> = db.query_map(
        "SELECT DISTINCT currency FROM accounts WHERE household_id = ?1",
        params![household_id],
        |r| r.get(0),
    )?;
    let mut sql = String::from("(CASE t.currency");
    for currency in codes.iter().filter_map(|code| Currency::parse(code).ok()) {
        if currency.exponent() != 2 {
            let scale = 10i64.pow(3u32.saturating_sub(u32::from(currency.exponent())));
            sql.push_str(&format!(" WHEN '{}' THEN {scale}", currency.code()));
        }
    }
    if sql.ends_with("currency") {
        return Ok("10".to_owned());
    }
    sql.push_str(" ELSE 10 END)");
    Ok(sql)
}

/// How many parts migration 0026 splits PostgreSQL's `transaction_search` into, by household.
const SEARCH_PARTS: u32 = 32;

/// PostgreSQL: the part of `transaction_search` that holds `household_id`'s text. A search
/// names it, rather than the whole table, for the planner's sake: the whole table has no
/// statistics of its own (autovacuum renews only its parts'), so the planner guessed that a
/// common text had 200 matches, and read them all to sort them (48 ms a page for
/// "farmacia" from a date, where walking the date index takes 1).
fn search_part(db: &Db<'_>, household_id: i64) -> Result<String> {
    let part: i64 = db.query_row(
        &format!(
            "SELECT r FROM generate_series(0, {last}) r
             WHERE satisfies_hash_partition('transaction_search'::regclass, {SEARCH_PARTS}, r::int, ?1::bigint)",
            last = SEARCH_PARTS - 1
        ),
        params![household_id],
        |row| row.get(0),
    )?;
    Ok(format!("transaction_search_{part}"))
}

/// PostgreSQL: the ids of the household's (?1) transactions whose text holds the pattern
/// bound at `pattern`, from the household's part of `transaction_search` (`part`, from
/// [`search_part`]) and its trigram index.
fn text_matches(part: &str, pattern: &str) -> String {
    format!(
        "SELECT s.id FROM {part} s WHERE s.household_id = ?1
           AND (s.payee LIKE {pattern} ESCAPE '\\' OR s.description LIKE {pattern} ESCAPE '\\' OR s.notes LIKE {pattern} ESCAPE '\\')"
    )
}

/// The WHERE clause of a search and its values (?1 the household, ?2 the viewer). With
/// `from_text_index`, the count reads the text's matches itself: on SQLite from
/// [`FROM_TEXT_MATCHES`], which the clause narrows to the text's index matches; on
/// PostgreSQL from [`text_matches`], and the clause leaves the text out.
fn transaction_where(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &TransactionFilter,
    after: Option<After>,
    from_text_index: bool,
) -> Result<(String, Vec<SqlValue>)> {
    let mut sql = format!(" WHERE {TRANSACTION_VISIBLE}");
    let mut values: Vec<SqlValue> = vec![household_id.into(), viewer.into()];
    let mut bind = |sql: &mut String, clause: &str, value: SqlValue| {
        values.push(value);
        sql.push_str(&clause.replace('#', &format!("?{}", values.len())));
    };
    if let Some(account) = filter.account_id {
        bind(&mut sql, " AND t.account_id = #", account.into());
    }
    if let Some(after) = after {
        bind(&mut sql, " AND (t.on_date, t.id) < (#", after.on_date.into());
        bind(&mut sql, ", #)", after.id.into());
    }
    // The category is in the date index; split parts, few, are a set read once.
    if let Some(category) = filter.category_id {
        bind(
            &mut sql,
            " AND (t.category_id = # OR t.id IN (SELECT s.transaction_id FROM transaction_splits s WHERE s.category_id = #))",
            category.into(),
        );
    }
    if filter.uncategorised {
        sql.push_str(" AND t.category_id IS NULL AND NOT EXISTS (SELECT 1 FROM transaction_splits s WHERE s.transaction_id = t.id)");
    }
    if !filter.label_ids.is_empty() {
        let list = filter.label_ids.iter().map(|id| id.to_string()).collect::<Vec<_>>().join(", ");
        // Ids are integers; written in, so a statement's shape does not depend on their count.
        // A probe per entry walked: a page stops at its last row, where a set of every
        // labelled transaction would be read whole first. PostgreSQL would turn the probe
        // into a join that reads every transaction (73 ms a page over 100,000); OFFSET 0
        // keeps it a probe (0.9 ms).
        let fence = db.pick("", " OFFSET 0");
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM transaction_labels tl WHERE tl.transaction_id = t.id AND tl.label_id IN ({list}){fence})"
        ));
    }
    if let Some(from) = filter.from {
        bind(&mut sql, " AND t.on_date >= #", from.into());
    }
    if let Some(to) = filter.to {
        bind(&mut sql, " AND t.on_date <= #", to.into());
    }
    if filter.min_milli.is_some() || filter.max_milli.is_some() {
        let scale = per_milli(db, household_id)?;
        if let Some(min) = filter.min_milli {
            bind(&mut sql, &format!(" AND t.amount_minor * {scale} >= #"), min.into());
        }
        if let Some(max) = filter.max_milli {
            bind(&mut sql, &format!(" AND t.amount_minor * {scale} <= #"), max.into());
        }
    }
    let dialect = db.dialect();
    let contains = |columns: &[&str]| {
        let each: Vec<String> =
            columns.iter().map(|column| contains_clause(dialect, column)).collect();
        format!(" AND ({})", each.join(" OR "))
    };
    if let Some(text) = &filter.text {
        match (like_value(dialect, text), dialect) {
            (Some(pattern), Dialect::Sqlite) => {
                bind(&mut sql, &contains(&["t.payee", "t.description", "t.notes"]), pattern)
            }
            // Row-level security keeps PostgreSQL from looking up a LIKE (which is not
            // "leakproof") in an index of `transactions`, so the ids come from
            // `transaction_search` (migration 0020), the folded text beside its household
            // without a policy; `transactions`' own policy still decides what comes back.
            // A count reads the matches first and adds no such condition (see
            // `count_transactions`).
            (Some(_), Dialect::Postgres) if from_text_index => {}
            (Some(pattern), Dialect::Postgres) => {
                let part = search_part(db, household_id)?;
                bind(&mut sql, &format!(" AND t.id IN ({})", text_matches(&part, "#")), pattern)
            }
            (None, _) => sql.push_str(" AND FALSE"),
        }
        // The index finds every row LIKE does and some more (it folds case beyond ASCII), so
        // LIKE above still decides.
        if let Some(phrase) = text_phrase(db, filter).filter(|_| from_text_index) {
            bind(&mut sql, " AND f.transaction_text MATCH #", phrase.into());
        }
    }
    for (column, text) in
        [("t.payee", &filter.payee_contains), ("t.description", &filter.description_contains)]
    {
        if let Some(text) = text {
            match like_value(dialect, text) {
                Some(pattern) => bind(&mut sql, &contains(&[column]), pattern),
                None => sql.push_str(" AND FALSE"),
            }
        }
    }
    if let Some(import) = filter.import_id {
        bind(&mut sql, " AND t.import_id = #", import.into());
    }
    Ok((sql, values))
}

/// Sets a category and adds labels on every transaction `viewer` can see that passes
/// `filter`, without recording each (an import applies its rules this way: undoing the import
/// takes its transactions away whole).
pub fn apply_to_matching(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &TransactionFilter,
    category_id: Option<i64>,
    label_ids: &[i64],
) -> Result<()> {
    let (clause, values) = transaction_where(db, household_id, viewer, filter, None, false)?;
    let matching = format!("SELECT t.id FROM transactions t{clause}");
    if let Some(category) = category_id {
        let mut values = values.clone();
        values.push(category.into());
        db.execute(
            &format!(
                "UPDATE transactions SET category_id = ?{} WHERE id IN ({matching})",
                values.len()
            ),
            &as_params(&values),
        )?;
    }
    for label in label_ids {
        let mut values = values.clone();
        values.push((*label).into());
        let sql = format!(
            "INSERT INTO transaction_labels (transaction_id, label_id)
             SELECT m.id, ?{} FROM ({matching}) m WHERE true ON CONFLICT DO NOTHING",
            values.len()
        );
        db.execute(&sql, &as_params(&values))?;
    }
    Ok(())
}

/// One page of the transactions `viewer` can see that pass `filter`, newest first (date, then
/// id: a stable order), from the start or `after` a position.
pub fn search_transactions(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &TransactionFilter,
    limit: u32,
    after: Option<After>,
) -> Result<Vec<TransactionRow>> {
    let few = few_text_matches(db, household_id, filter)?;
    // PostgreSQL's list is what the text clause would find: it is left out.
    let listed_exactly = few.is_some() && db.dialect() == Dialect::Postgres;
    let (clause, mut values) =
        transaction_where(db, household_id, viewer, filter, after, listed_exactly)?;
    let from = match few {
        Some(ids) => from_listed_matches(db, &ids, &mut values)?,
        None => " FROM transactions t".to_owned(),
    };
    values.push(i64::from(limit).into());
    let sql = format!(
        "{TRANSACTION_COLUMNS}{from}{TRANSACTION_JOINS}{clause} ORDER BY t.on_date DESC, t.id DESC LIMIT ?{}",
        values.len()
    );
    let mut rows: Vec<TransactionRow> = if planned_for_values(db, filter) {
        db.query_map_once(&sql, &as_params(&values), transaction_from_row)?
    } else {
        db.query_map(&sql, &as_params(&values), transaction_from_row)?
    };
    attach_labels(db, &mut rows)?;
    Ok(rows)
}

/// Whether a search's statements are planned for their values each time. PostgreSQL plans a
/// kept statement once for every value after five runs; with a text or labels, how many rows
/// match depends on the value, and the one plan walked a household's rows for a rare text
/// (227 ms over 100,000, against 6.5 ms planned for it). SQLite keeps its statements.
fn planned_for_values(db: &Db<'_>, filter: &TransactionFilter) -> bool {
    db.dialect() == Dialect::Postgres && (filter.text.is_some() || !filter.label_ids.is_empty())
}

/// Earlier than any transaction's date, and a date both databases hold (PostgreSQL's begin in
/// 4713 BC, so not `Date::MIN`).
const BEFORE_EVERY_DATE: Date = Date::constant(1, 1, 1);

/// The position after the first `offset` transactions of a search (an offset cursor turned
/// into a position): `None` at the start, and past the end the last one's.
pub fn position_at(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &TransactionFilter,
    offset: u64,
) -> Result<Option<After>> {
    if offset == 0 {
        return Ok(None);
    }
    let (clause, mut values) = transaction_where(db, household_id, viewer, filter, None, false)?;
    values.push(i64::try_from(offset - 1).unwrap_or(i64::MAX).into());
    let sql = format!(
        "SELECT t.on_date, t.id FROM transactions t{clause} ORDER BY t.on_date DESC, t.id DESC LIMIT 1 OFFSET ?{}",
        values.len()
    );
    let found = db.query_opt(&sql, &as_params(&values), |row| {
        Ok(After { on_date: date(row, "on_date")?, id: row.get("id")? })
    })?;
    // Past the end: a position before every transaction, so the page is empty.
    Ok(Some(found.unwrap_or(After { on_date: BEFORE_EVERY_DATE, id: 0 })))
}

/// How many transactions `viewer` can see pass `filter` (`after` a position, when given),
/// counting no further than `cap`.
pub fn count_transactions(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &TransactionFilter,
    after: Option<After>,
    cap: u64,
) -> Result<u64> {
    // A count needs no order, so it starts from the rarest thing it can (CROSS JOIN fixes the
    // loop order): the labelled transactions, or the text's index matches (listed when few;
    // otherwise read from the index, the last added first, usually the newest, so a count
    // from a recent day stops soonest). Each reads those rows alone rather than every date.
    // PostgreSQL's count reads the matches first by itself (below).
    let few = if filter.label_ids.is_empty() && db.dialect() == Dialect::Sqlite {
        few_text_matches(db, household_id, filter)?
    } else {
        None
    };
    let text_pattern = match (db.dialect(), &filter.text) {
        (Dialect::Postgres, Some(text)) if filter.label_ids.is_empty() => {
            like_value(Dialect::Postgres, text)
        }
        _ => None,
    };
    let from_text_index = few.is_none()
        && filter.label_ids.is_empty()
        && (text_phrase(db, filter).is_some() || text_pattern.is_some());
    let (clause, mut values) =
        transaction_where(db, household_id, viewer, filter, after, from_text_index)?;
    // PostgreSQL: the text's matches, from the household's part of the trigram index, each
    // looked up by its id until the cap (a LATERAL subquery behind OFFSET 0 keeps that
    // order). Joined the other way, a planner that expected fewer matches than the cap
    // hashed every one of the household's rows in the other filters' range (25 ms for
    // "farmacia" from a date with a lowest amount, over 100,000).
    if let Some(pattern) = text_pattern {
        values.push(pattern);
        let mut matches =
            text_matches(&search_part(db, household_id)?, &format!("?{}", values.len()));
        // From a date, the newest first (ids follow the order rows came in): the older
        // matches, which the date leaves out, are then not looked up (7,700 lookups became
        // 1,500 for "farmacia" since a date, over 100,000).
        if filter.from.is_some() {
            matches.push_str(" ORDER BY s.id DESC");
        }
        values.push(i64::try_from(cap).unwrap_or(i64::MAX).into());
        let sql = format!(
            "SELECT count(*) FROM (SELECT 1 FROM ({matches}) m
             CROSS JOIN LATERAL (SELECT 1 FROM transactions t{} AND t.id = m.id OFFSET 0) found LIMIT ?{}) counted",
            visible_read_once(&clause),
            values.len()
        );
        let counted = db.query_map_once(&sql, &as_params(&values), |row| row.get(0))?;
        return Ok(counted.first().copied().unwrap_or(0_i64) as u64);
    }
    let listed = match few {
        Some(ids) => Some(from_listed_matches(db, &ids, &mut values)?),
        None => None,
    };
    values.push(i64::try_from(cap).unwrap_or(i64::MAX).into());
    let (from, order) = if let Some(listed) = listed {
        (format!("SELECT 1{listed}"), "")
    } else if from_text_index {
        (format!("SELECT 1{FROM_TEXT_MATCHES}"), " ORDER BY f.rowid DESC")
    } else if filter.label_ids.is_empty() {
        // Without a text, PostgreSQL reads a household's rows in its date index (0.4 ms for a
        // count to 1,000 over 100,000) unless told no order matters: then it may read the
        // table from its start, through other households' rows (30 ms). A text's matches come
        // from its own index, in no order.
        let order = if filter.text.is_none() {
            db.pick("", " ORDER BY t.on_date DESC, t.id DESC")
        } else {
            ""
        };
        ("SELECT 1 FROM transactions t".to_owned(), order)
    } else {
        let list = filter.label_ids.iter().map(|id| id.to_string()).collect::<Vec<_>>().join(", ");
        match db.dialect() {
            // CROSS JOIN keeps the labels first.
            Dialect::Sqlite => (
                format!(
                    "SELECT DISTINCT t.id FROM transaction_labels l CROSS JOIN transactions t ON t.id = l.transaction_id AND l.label_id IN ({list})"
                ),
                "",
            ),
            // Each labelled transaction looked up by its id, the count stopping at its cap:
            // a LATERAL subquery behind OFFSET 0 is never turned into a join that reads the
            // transactions in their id order (2.8 ms against 23 ms to count to 1,000).
            Dialect::Postgres => {
                let sql = format!(
                    "SELECT count(*) FROM (SELECT 1 FROM (SELECT DISTINCT l.transaction_id FROM transaction_labels l WHERE l.label_id IN ({list})) m
                     CROSS JOIN LATERAL (SELECT 1 FROM transactions t{} AND t.id = m.transaction_id OFFSET 0) found LIMIT ?{}) counted",
                    visible_read_once(&clause),
                    values.len()
                );
                let counted = db.query_map_once(&sql, &as_params(&values), |row| row.get(0))?;
                return Ok(counted.first().copied().unwrap_or(0_i64) as u64);
            }
        }
    };
    let sql =
        format!("SELECT count(*) FROM ({from}{clause}{order} LIMIT ?{}) counted", values.len());
    let count: i64 = if planned_for_values(db, filter) {
        let counted = db.query_map_once(&sql, &as_params(&values), |row| row.get(0))?;
        counted.first().copied().unwrap_or(0)
    } else {
        db.query_row(&sql, &as_params(&values), |row| row.get(0))?
    };
    Ok(count as u64)
}

/// Runs `write` with a transaction's own columns bound as `?1` to `?10` (account_id to
/// charge_id, as `insert_transaction` and `update_transaction` name them) and `keys` after
/// them, so both writes bind one list.
fn with_transaction_columns<T>(
    row: &TransactionRow,
    keys: &[&dyn Param],
    write: impl FnOnce(&[&dyn Param]) -> Result<T>,
) -> Result<T> {
    columns_then(
        &[
            &row.account_id,
            &row.on_date.to_string(),
            &row.amount_minor,
            &row.currency.code(),
            &row.payee,
            &row.description,
            &row.notes,
            &row.category_id,
            &row.transfer_id,
            &row.charge_id,
            &row.pending,
        ],
        keys,
        write,
    )
}

pub fn insert_transaction(db: &Db<'_>, row: &TransactionRow, now: &str) -> Result<i64> {
    let keys = params![row.source.as_str(), row.import_key, row.household_id, now];
    with_transaction_columns(row, keys, |params| {
        db.query_row(
            "INSERT INTO transactions (account_id, on_date, amount_minor, currency, payee, description,
               notes, category_id, transfer_id, charge_id, pending, source, import_key, household_id,
               created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15) RETURNING id",
            params,
            |row| row.get(0),
        )
    })
}

pub fn update_transaction(db: &Db<'_>, row: &TransactionRow, now: &str) -> Result<()> {
    with_transaction_columns(row, params![now, row.household_id, row.id], |params| {
        db.execute_one(
            "UPDATE transactions SET account_id = ?1, on_date = ?2, amount_minor = ?3, currency = ?4,
               payee = ?5, description = ?6, notes = ?7, category_id = ?8, transfer_id = ?9,
               charge_id = ?10, pending = ?11, updated_at = ?12
             WHERE household_id = ?13 AND id = ?14",
            params,
        )
    })
}

/// Sets exactly these labels on a transaction.
pub fn set_transaction_labels(db: &Db<'_>, transaction_id: i64, label_ids: &[i64]) -> Result<()> {
    db.execute(
        "DELETE FROM transaction_labels WHERE transaction_id = ?1",
        params![transaction_id],
    )?;
    for label in label_ids {
        db.execute(
            "INSERT INTO transaction_labels (transaction_id, label_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![transaction_id, label],
        )?;
    }
    Ok(())
}

/// Matches a transaction to the subscription charge it paid (None: to none).
pub fn set_charge(db: &Db<'_>, transaction_id: i64, charge_id: Option<i64>) -> Result<()> {
    db.execute(
        "UPDATE transactions SET charge_id = ?2 WHERE id = ?1",
        params![transaction_id, charge_id],
    )?;
    Ok(())
}

/// The transaction matched to a charge, if any.
pub fn transaction_for_charge(db: &Db<'_>, charge_id: i64) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM transactions WHERE charge_id = ?1 LIMIT 1",
        params![charge_id],
        |r| r.get(0),
    )
}

/// Replaces a transaction's parts (none: it is whole again).
pub fn set_splits(db: &Db<'_>, transaction_id: i64, parts: &[SplitRow]) -> Result<()> {
    db.execute(
        "DELETE FROM transaction_splits WHERE transaction_id = ?1",
        params![transaction_id],
    )?;
    for part in parts {
        db.execute(
            "INSERT INTO transaction_splits (transaction_id, amount_minor, category_id, note)
         VALUES (?1, ?2, ?3, ?4)",
            params![
                transaction_id,
                part.amount_minor,
                part.category.as_ref().map(|(id, _)| id),
                part.note
            ],
        )?;
    }
    Ok(())
}

/// Pairs two transactions as the two sides of one transfer, or (`other` None) unpairs `id`
/// and whatever it was paired with.
pub fn set_transfer(db: &Db<'_>, id: i64, other: Option<i64>) -> Result<()> {
    db.execute(
        "UPDATE transactions SET transfer_id = NULL WHERE id = ?1 OR transfer_id = ?1",
        params![id],
    )?;
    if let Some(other) = other {
        db.execute(
            "UPDATE transactions SET transfer_id = NULL WHERE id = ?1 OR transfer_id = ?1",
            params![other],
        )?;
        db.execute("UPDATE transactions SET transfer_id = ?2 WHERE id = ?1", params![id, other])?;
        db.execute("UPDATE transactions SET transfer_id = ?2 WHERE id = ?1", params![other, id])?;
    }
    Ok(())
}

pub fn delete_transaction(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM transactions WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Moves a transaction, and its splits, from one category to another (None: to none).
pub fn move_to_category(
    db: &Db<'_>,
    transaction_id: i64,
    from: i64,
    to: Option<i64>,
) -> Result<()> {
    db.execute(
        "UPDATE transactions SET category_id = ?3 WHERE id = ?1 AND category_id = ?2",
        params![transaction_id, from, to],
    )?;
    db.execute(
        "UPDATE transaction_splits SET category_id = ?3 WHERE transaction_id = ?1 AND category_id = ?2",
        params![transaction_id, from, to],
    )?;
    Ok(())
}

/// Ids of every transaction (visible or not) in a category, directly or through a split.
pub fn transactions_in_category(db: &Db<'_>, category_id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT id FROM transactions WHERE category_id = ?1
         UNION SELECT transaction_id FROM transaction_splits WHERE category_id = ?1 ORDER BY 1",
        params![category_id],
        |r| r.get(0),
    )?;
    Ok(ids)
}

/// The accounts a member owns, with their visibility (for removing the member).
pub fn accounts_of(
    db: &Db<'_>,
    household_id: i64,
    owner_id: i64,
) -> Result<Vec<(i64, Visibility)>> {
    let rows = db.query_map(
        "SELECT id, visibility FROM accounts WHERE household_id = ?1 AND owner_id = ?2 ORDER BY id",
        params![household_id, owner_id],
        |row| Ok((row.get(0)?, parsed(row, 1, Visibility::parse)?)),
    )?;
    Ok(rows)
}

pub fn set_account_owner(db: &Db<'_>, household_id: i64, id: i64, owner_id: i64) -> Result<()> {
    db.execute(
        "UPDATE accounts SET owner_id = ?3 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, owner_id],
    )?;
    Ok(())
}

/// One statement's transactions for an account, as import writes them.
pub struct ImportedRow<'a> {
    pub on_date: Date,
    pub amount_minor: i64,
    pub payee: &'a str,
    pub description: &'a str,
    pub import_key: &'a str,
}

/// Adds the rows not on the account already (by import key) under a new import; returns the
/// import's id and how many were added. No import is kept when none was new.
pub fn import_transactions(
    db: &Db<'_>,
    account: &AccountRef,
    member_id: i64,
    rows: &[ImportedRow<'_>],
    now: &str,
) -> Result<(Option<i64>, u64)> {
    let id: i64 = db.query_row(
        "INSERT INTO imports (household_id, account_id, member_id, transaction_count, created_at)
         VALUES (?1, ?2, ?3, 0, ?4) RETURNING id",
        params![account.household_id, account.id, member_id, now],
        |row| row.get(0),
    )?;
    let import_id = id;
    // One statement for all the rows, in their order: the text index's triggers flush its
    // pending writes once a statement, and a statement a row cost seconds over 100,000.
    let rows: Vec<(String, i64, &str, &str, &str)> = rows
        .iter()
        .map(|row| {
            (row.on_date.to_string(), row.amount_minor, row.payee, row.description, row.import_key)
        })
        .collect();
    let rows_json =
        serde_json::to_string(&rows).map_err(|err| StoreError::Corrupt(err.to_string()))?;
    // A row whose import key the account has is skipped: the unique index decides.
    let insert = db.pick(
        "INSERT INTO transactions (household_id, account_id, on_date, amount_minor, currency,
           payee, description, source, import_key, import_id, created_at, updated_at)
         SELECT ?1, ?2, r.value ->> 0, r.value ->> 1, ?3, r.value ->> 2, r.value ->> 3, 'import',
           r.value ->> 4, ?4, ?5, ?5
         FROM json_each(?6) r WHERE true ORDER BY r.key ON CONFLICT DO NOTHING",
        "INSERT INTO transactions (household_id, account_id, on_date, amount_minor, currency,
           payee, description, source, import_key, import_id, created_at, updated_at)
         SELECT ?1, ?2, (r.value ->> 0)::date, (r.value ->> 1)::bigint, ?3, r.value ->> 2,
           r.value ->> 3, 'import', r.value ->> 4, ?4, ?5, ?5
         FROM jsonb_array_elements(?6::jsonb) WITH ORDINALITY r (value, n) ORDER BY r.n
         ON CONFLICT DO NOTHING",
    );
    let added = db.execute(
        insert,
        params![
            account.household_id,
            account.id,
            account.currency.code(),
            import_id,
            now,
            rows_json
        ],
    )? as u64;
    if added == 0 {
        db.execute("DELETE FROM imports WHERE id = ?1", params![import_id])?;
        return Ok((None, 0));
    }
    db.execute(
        "UPDATE imports SET transaction_count = ?2 WHERE id = ?1",
        params![import_id, added as i64],
    )?;
    // PostgreSQL plans from statistics, and answers an index-only read from its visibility
    // map, that its autovacuum renews a minute or so after a large change; until then a search
    // over a freshly imported statement may walk every row (130 ms where 0.2 would do, over
    // 100,000). An import that large has them renewed as it commits (`Db::tidy_after_commit`),
    // with those of what a search reads beside them: the text (`transaction_search`), without
    // which a search for a rare word walked every row, and the small tables autovacuum renews
    // only after 50 changes, without which the server guesses a household's three accounts
    // are 186. SQLite's plans do not depend on such statistics.
    if added >= TIDY_AFTER {
        db.tidy_after_commit(account.household_id);
    }
    Ok((Some(import_id), added))
}

/// Rows an import adds at least for PostgreSQL to renew the transactions' statistics at once.
const TIDY_AFTER: u64 = 1000;
