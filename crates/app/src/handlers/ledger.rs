//! Account, balance, label and transaction handlers.
//!
//! What a member sees of transactions follows their accounts: another member's private
//! account, and everything on it, is "not found".

use domain::{
    Money, Text,
    entities::{EntityKind, Visibility},
};
use ops::{
    OpError,
    common::{IdInput, Patch, RecordId, Ref},
    household::{Empty, Removed},
    ledger::*,
    resolve::{AccountId, IsoDate, LabelId},
};
use store::ledger::{self as db, AccountRow, LabelRow, Source, TransactionFilter, TransactionRow};

use crate::{
    charge_matching,
    ctx::Ctx,
    input,
    refs::{check_account, check_category, check_labels, referenced},
    transactions::StoreExt,
    views,
};

fn load_account(ctx: &Ctx<'_>, id: i64) -> Result<AccountRow, OpError> {
    db::get_account(ctx.db, ctx.household_id(), ctx.me(), id)
        .or_not_found(|| ctx.unknown(EntityKind::Account, id))
}

fn load_label(ctx: &Ctx<'_>, id: i64) -> Result<LabelRow, OpError> {
    db::get_label(ctx.db, ctx.household_id(), ctx.me(), id)
        .or_not_found(|| ctx.unknown(EntityKind::Label, id))
}

fn load_transaction(ctx: &Ctx<'_>, id: i64) -> Result<TransactionRow, OpError> {
    db::get_transaction(ctx.db, ctx.household_id(), ctx.me(), id).or_not_found(|| {
        Text::new("No transaction with id {id}. Call search_transactions to find ids.")
            .with("id", id)
    })
}

/// Refuses a change by someone else that would make the account private.
fn check_visibility(
    ctx: &Ctx<'_>,
    row: &AccountRow,
    visibility: Visibility,
) -> Result<(), OpError> {
    if visibility == Visibility::Private && row.owner_id != ctx.me() {
        return Err(OpError::invalid(
            "/visibility",
            Text::new("Only its owner can make an account private."),
        ));
    }
    Ok(())
}

pub(crate) fn list_accounts(
    ctx: &mut Ctx<'_>,
    input: ListAccountsInput,
) -> Result<AccountList, OpError> {
    let all = input.include_archived.unwrap_or(false);
    let rows = db::list_accounts(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    Ok(AccountList {
        items: rows.iter().filter(|row| all || !row.archived).map(views::account_view).collect(),
    })
}

pub(crate) fn create_account(
    ctx: &mut Ctx<'_>,
    input: CreateAccountInput,
) -> Result<Account, OpError> {
    ctx.check_cap(store::households::Counted::Accounts, 1)?;
    let currency = match &input.currency {
        Some(code) => code.currency(),
        None => ctx.household.currency,
    };
    let row = AccountRow {
        id: 0,
        household_id: ctx.household_id(),
        owner_id: ctx.me(),
        owner_name: String::new(),
        name: input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?,
        kind: input.kind,
        currency,
        visibility: input.visibility.unwrap_or(Visibility::Household),
        archived: false,
        transaction_count: 0,
        balance: None,
    };
    let balance =
        input.balance.map(|b| input::minor_units("/balance", b.money(currency))).transpose()?;
    let id = db::insert_account(ctx.db, &row, &ctx.now_text()).or_internal()?;
    if let Some(minor) = balance {
        db::set_balance(ctx.db, id, ctx.today, minor).or_internal()?;
    }
    ctx.record(
        EntityKind::Account,
        id,
        None,
        Text::new("Added account {name}").with("name", &row.name),
    )?;
    Ok(views::account_view(&load_account(ctx, id)?))
}

pub(crate) fn update_account(
    ctx: &mut Ctx<'_>,
    input: UpdateAccountInput,
) -> Result<Account, OpError> {
    let mut row = load_account(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Account, row.id)?;
    if let Some(name) = &input.name {
        row.name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
    }
    if let Some(kind) = input.kind {
        row.kind = kind;
    }
    if let Some(visibility) = input.visibility {
        check_visibility(ctx, &row, visibility)?;
        row.visibility = visibility;
    }
    if let Some(archived) = input.archived {
        row.archived = archived;
    }
    db::update_account(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::Account,
        row.id,
        before,
        Text::new("Updated account {name}").with("name", &row.name),
    )?;
    Ok(views::account_view(&load_account(ctx, row.id)?))
}

pub(crate) fn delete_account(
    ctx: &mut Ctx<'_>,
    input: IdInput<AccountId>,
) -> Result<Removed, OpError> {
    let row = load_account(ctx, input.id.get())?;
    if row.transaction_count > 0 {
        return Err(OpError::conflict(
            Text::new(
                "{name} has {count} transactions, so it is kept for their history. Archive it with update_account (archived: true), or delete its transactions first.",
            )
            .with("name", &row.name)
            .with("count", row.transaction_count),
        ));
    }
    let rules = store::rules::rules_on_account(ctx.db, row.id).or_internal()?;
    if !rules.is_empty() {
        return Err(OpError::conflict(
            Text::new("The rules {rules} match on {name}. Change them with update_rule or delete them first.")
                .with("rules", rules.join(", "))
                .with("name", &row.name),
        ));
    }
    let before = ctx.snapshot(EntityKind::Account, row.id)?;
    db::delete_account(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Account,
        row.id,
        before,
        Text::new("Deleted account {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}

pub(crate) fn record_balance(
    ctx: &mut Ctx<'_>,
    input: RecordBalanceInput,
) -> Result<Account, OpError> {
    let row = load_account(ctx, input.account_id.get())?;
    let minor = input::minor_units("/balance", input.balance.money(row.currency))?;
    let on = input.on.map(IsoDate::date).unwrap_or(ctx.today);
    if on > ctx.today {
        return Err(OpError::invalid(
            "/on",
            Text::new("{date} has not come yet; today is {today}. Record a balance for today or an earlier day.")
                .with("date", IsoDate(on))
                .with("today", IsoDate(ctx.today)),
        ));
    }
    let before = ctx.snapshot(EntityKind::Account, row.id)?;
    db::set_balance(ctx.db, row.id, on, minor).or_internal()?;
    ctx.record(
        EntityKind::Account,
        row.id,
        before,
        Text::new("{name} held {amount} on {date}")
            .with("name", &row.name)
            .with_money("amount", Money::new(minor, row.currency))
            .with("date", IsoDate(on)),
    )?;
    Ok(views::account_view(&load_account(ctx, row.id)?))
}

pub(crate) fn list_labels(ctx: &mut Ctx<'_>, _: Empty) -> Result<LabelList, OpError> {
    let rows = db::list_labels(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    Ok(LabelList { items: rows.iter().map(views::label_view).collect() })
}

fn check_unique_label(ctx: &Ctx<'_>, name: &str, except: Option<i64>) -> Result<(), OpError> {
    if let Some(existing) = db::find_label(ctx.db, ctx.household_id(), name).or_internal()?
        && Some(existing) != except
    {
        return Err(OpError::conflict(
            Text::new(
                "A label named {name} exists already (id {id}). Use it, or choose another name.",
            )
            .with("name", name)
            .with("id", existing),
        ));
    }
    Ok(())
}

pub(crate) fn create_label(ctx: &mut Ctx<'_>, input: CreateLabelInput) -> Result<Label, OpError> {
    ctx.check_cap(store::households::Counted::Labels, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?;
    check_unique_label(ctx, &name, None)?;
    let colour = input
        .colour
        .as_deref()
        .map(|c| input::clean_colour("/colour", c))
        .transpose()?
        .unwrap_or_else(|| "#8a8f98".into());
    let id = db::insert_label(ctx.db, ctx.household_id(), &name, &colour, &ctx.now_text())
        .or_internal()?;
    ctx.record(EntityKind::Label, id, None, Text::new("Added label {name}").with("name", &name))?;
    Ok(views::label_view(&load_label(ctx, id)?))
}

pub(crate) fn update_label(ctx: &mut Ctx<'_>, input: UpdateLabelInput) -> Result<Label, OpError> {
    let mut row = load_label(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Label, row.id)?;
    if let Some(name) = &input.name {
        let name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
        check_unique_label(ctx, &name, Some(row.id))?;
        row.name = name;
    }
    if let Some(colour) = &input.colour {
        row.colour = input::clean_colour("/colour", colour)?;
    }
    db::update_label(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::Label,
        row.id,
        before,
        Text::new("Updated label {name}").with("name", &row.name),
    )?;
    Ok(views::label_view(&load_label(ctx, row.id)?))
}

pub(crate) fn delete_label(ctx: &mut Ctx<'_>, input: IdInput<LabelId>) -> Result<Removed, OpError> {
    let row = load_label(ctx, input.id.get())?;
    // Each transaction's change is recorded, so an undo puts the label back where it was
    // (the label is the household's: on every transaction, seen by the caller or not).
    for id in db::transactions_with_label(ctx.db, row.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Transaction, id)?;
        let labels = label_ids_of(before.as_ref(), row.id);
        db::set_transaction_labels(ctx.db, id, &labels).or_internal()?;
        ctx.record(
            EntityKind::Transaction,
            id,
            before,
            Text::new("Label {label} taken off a transaction").with("label", &row.name),
        )?;
    }
    for budget in store::budgets::budgets_tracking_label(ctx.db, row.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Budget, budget)?;
        store::budgets::untrack_label(ctx.db, budget, row.id).or_internal()?;
        ctx.record(
            EntityKind::Budget,
            budget,
            before,
            Text::new("A budget no longer tracks label {label}").with("label", &row.name),
        )?;
    }
    for rule in store::rules::rules_adding_label(ctx.db, row.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Rule, rule)?;
        store::rules::drop_label(ctx.db, rule, row.id).or_internal()?;
        ctx.record(
            EntityKind::Rule,
            rule,
            before,
            Text::new("A rule no longer adds label {label}").with("label", &row.name),
        )?;
    }
    let before = ctx.snapshot(EntityKind::Label, row.id)?;
    db::delete_label(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Label,
        row.id,
        before,
        Text::new("Deleted label {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}

/// A transaction's labels as its snapshot holds them (also one the caller cannot see), less
/// `without`.
fn label_ids_of(state: Option<&serde_json::Value>, without: i64) -> Vec<i64> {
    state
        .and_then(|s| s.pointer("/children/transaction_labels"))
        .and_then(|rows| rows.as_array())
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r.get("label_id").and_then(serde_json::Value::as_i64))
                .filter(|l| *l != without)
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn search_transactions(
    ctx: &mut Ctx<'_>,
    input: SearchTransactionsInput,
) -> Result<ops::ledger::TransactionPage, OpError> {
    let limit = input::page_limit(input.limit)?;
    let account_id = input
        .account_id
        .map(|id| check_account(ctx, "/account_id", id))
        .transpose()?
        .map(|account| account.id);
    let category_id =
        input.category_id.map(|id| check_category(ctx, "/category_id", id)).transpose()?;
    if input.label_ids.len() > ops::limits::BULK {
        return Err(OpError::invalid(
            "/label_ids",
            Text::new("At most {max} labels.").with("max", ops::limits::BULK),
        ));
    }
    let label_ids = check_labels(ctx, "/label_ids", &input.label_ids)?;
    let (from, to) = (input.from.map(IsoDate::date), input.to.map(IsoDate::date));
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        return Err(OpError::invalid(
            "/to",
            Text::new("to ({to}) is before from ({from}); swap them.")
                .with("from", IsoDate(from))
                .with("to", IsoDate(to)),
        ));
    }
    let min_milli = input.min_amount.map(|a| input::milli_bound("/min_amount", a)).transpose()?;
    let max_milli = input.max_amount.map(|a| input::milli_bound("/max_amount", a)).transpose()?;
    if let (Some(min), Some(max)) = (min_milli, max_milli)
        && min > max
    {
        return Err(OpError::invalid(
            "/max_amount",
            Text::new(
                "max_amount is below min_amount; amounts are signed, so money out of 20 to 50 is min_amount \"-50\", max_amount \"-20\".",
            ),
        ));
    }
    let text = match input.text.as_deref() {
        Some(text) => input::clean_optional_name("/text", text, ops::limits::SHORT_NAME)?,
        None => None,
    };
    let filter = TransactionFilter {
        account_id,
        category_id,
        uncategorised: input.uncategorised.unwrap_or(false),
        label_ids,
        from,
        to,
        min_milli,
        max_milli,
        text,
        ..TransactionFilter::default()
    };
    let (household, me) = (ctx.household_id(), ctx.me());
    // A page starts at a position; an offset cursor (what MCP gives when it cuts a page short)
    // is turned into one.
    let (after, before) = match input.cursor.as_deref() {
        None => (None, 0),
        Some(text) => {
            match (ops::common::PositionCursor::parse(text), ops::common::cursor_offset(Some(text)))
            {
                (Some(position), _) => {
                    (Some(db::After { on_date: position.on, id: position.id }), position.before)
                }
                (None, Some(offset)) => {
                    (db::position_at(ctx.db, household, me, &filter, offset).or_internal()?, offset)
                }
                (None, None) => return Err(input::unknown_cursor()),
            }
        }
    };
    let rows =
        db::search_transactions(ctx.db, household, me, &filter, limit, after).or_internal()?;
    // A short page ends the list, so its end is the count; otherwise count, up to a cap. An
    // empty page past the start (an offset beyond the end, rows deleted since) counts again
    // from the start, as far as the cap: `before` comes from the client.
    let (total, total_is_lower_bound) = if rows.is_empty() && before > 0 {
        let cap = ops::limits::COUNTED_TRANSACTIONS;
        let counted =
            db::count_transactions(ctx.db, household, me, &filter, None, cap + 1).or_internal()?;
        (counted.min(cap), counted > cap)
    } else if (rows.len() as u64) < u64::from(limit) {
        (before + rows.len() as u64, false)
    } else {
        let cap = ops::limits::COUNTED_TRANSACTIONS;
        let counted =
            db::count_transactions(ctx.db, household, me, &filter, after, cap + 1).or_internal()?;
        (before + counted.min(cap), counted > cap)
    };
    let shown = before + rows.len() as u64;
    let next_cursor = rows.last().filter(|_| shown < total).map(|last| {
        ops::common::PositionCursor { on: last.on_date, id: last.id, before: shown }.to_string()
    });
    let note = match (rows.is_empty(), input.cursor) {
        (true, None) => nothing_matched(ctx, &filter)?,
        _ => None,
    };
    Ok(ops::ledger::TransactionPage {
        note,
        next_cursor,
        items: rows.iter().map(views::transaction_view).collect(),
        total,
        total_is_lower_bound,
    })
}

/// How many of the transactions a wider search finds an empty search's note names.
const WIDER_SHOWN: u32 = 3;

/// What a search that matched nothing says, when fewer filters match something: its text
/// alone, or else the other filters without the dates (a small model searched "Mercadona" with
/// `uncategorised` for "our last shop at Mercadona", found nothing, and made up an amount).
/// `None` when the wider search finds nothing too, or there is nothing to drop.
fn nothing_matched(ctx: &Ctx<'_>, filter: &TransactionFilter) -> Result<Option<String>, OpError> {
    let text_only = TransactionFilter { text: filter.text.clone(), ..TransactionFilter::default() };
    let (wider, read, widen) = match &filter.text {
        Some(text) if text_only != *filter => (
            text_only,
            format!("Nothing matched all these filters. With text \"{text}\" alone, the newest is"),
            "with only that text".to_owned(),
        ),
        _ if filter.from.is_some() || filter.to.is_some() => {
            let from = filter.from.map(|d| format!(" from {}", IsoDate(d))).unwrap_or_default();
            let to = filter.to.map(|d| format!(" to {}", IsoDate(d))).unwrap_or_default();
            (
                TransactionFilter { from: None, to: None, ..filter.clone() },
                format!("Nothing matched{from}{to}. Without the dates, the newest match is"),
                "with wider dates, or none,".to_owned(),
            )
        }
        _ => return Ok(None),
    };
    let rows =
        db::search_transactions(ctx.db, ctx.household_id(), ctx.me(), &wider, WIDER_SHOWN, None)
            .or_internal()?;
    if rows.is_empty() {
        return Ok(None);
    }
    let found: Vec<String> = rows
        .iter()
        .map(views::transaction_view)
        .map(|t| {
            let category = t.category.map_or_else(|| "no category".to_owned(), |c| c.name);
            format!(
                "{} {} {} ({}, {}, id {})",
                t.on, t.payee, t.amount.display, t.account.name, category, t.id
            )
        })
        .collect::<Vec<_>>();
    // The newest by itself: told "newest first", a small model answered with the last.
    let (newest, before) = found.split_first().ok_or(OpError::Internal)?;
    let before = if before.is_empty() {
        String::new()
    } else {
        format!("; before it: {}", before.join("; "))
    };
    Ok(Some(format!(
        "{read} {newest}{before}. Call search_transactions again {widen} to read them all."
    )))
}

fn clean_description(pointer: &str, text: &str) -> Result<String, OpError> {
    Ok(input::clean_optional_name(pointer, text, ops::limits::NOTES)?.unwrap_or_default())
}

pub(crate) fn create_transaction(
    ctx: &mut Ctx<'_>,
    input: CreateTransactionInput,
) -> Result<Transaction, OpError> {
    ctx.check_cap(store::households::Counted::Transactions, 1)?;
    let account = check_account(ctx, "/account_id", input.account_id)?;
    if account.archived {
        return Err(OpError::conflict(
            Text::new("{name} is archived. Unarchive it with update_account (archived: false) first, or choose another account.")
                .with("name", &account.name),
        ));
    }
    let row = TransactionRow {
        id: 0,
        household_id: ctx.household_id(),
        account_id: account.id,
        account_name: account.name.clone(),
        on_date: input.on.date(),
        amount_minor: input::minor_units("/amount", input.amount.money(account.currency))?,
        currency: account.currency,
        payee: input::clean_name("/payee", &input.payee, ops::limits::NAME)?,
        description: input
            .description
            .as_deref()
            .map(|d| clean_description("/description", d))
            .transpose()?
            .unwrap_or_default(),
        notes: input.notes.as_deref().map(|n| input::clean_notes("/notes", n)).transpose()?,
        category_id: input
            .category_id
            .map(|c| check_category(ctx, "/category_id", c))
            .transpose()?,
        category_name: None,
        transfer_id: None,
        charge_id: None,
        pending: false,
        source: Source::Manual,
        splits: Vec::new(),
        import_key: None,
        labels: Vec::new(),
    };
    let labels = check_labels(ctx, "/label_ids", &input.label_ids)?;
    let id = db::insert_transaction(ctx.db, &row, &ctx.now_text()).or_internal()?;
    db::set_transaction_labels(ctx.db, id, &labels).or_internal()?;
    ctx.record(
        EntityKind::Transaction,
        id,
        None,
        Text::new("Recorded {amount} with {payee} on {account}")
            .with_money("amount", Money::new(row.amount_minor, row.currency))
            .with("payee", &row.payee)
            .with("account", &account.name),
    )?;
    Ok(views::transaction_view(&load_transaction(ctx, id)?))
}

pub(crate) fn update_transaction(
    ctx: &mut Ctx<'_>,
    input: UpdateTransactionInput,
) -> Result<Transaction, OpError> {
    let mut row = load_transaction(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
    if let Some(on) = input.on {
        row.on_date = on.date();
    }
    if let Some(amount) = &input.amount {
        let minor = input::minor_units("/amount", amount.money(row.currency))?;
        if minor != row.amount_minor && !row.splits.is_empty() {
            return Err(OpError::invalid(
                "/amount",
                Text::new("The transaction is split, and its parts add up to {amount}. Make it whole with split_transaction (parts: []) first, or split it again to the new amount afterwards.")
                    .with_money("amount", Money::new(row.amount_minor, row.currency)),
            ));
        }
        row.amount_minor = minor;
    }
    if let Some(payee) = &input.payee {
        row.payee = input::clean_name("/payee", payee, ops::limits::NAME)?;
    }
    if let Some(description) = &input.description {
        row.description = clean_description("/description", description)?;
    }
    match &input.notes {
        Patch::Keep => {}
        Patch::Clear => row.notes = None,
        Patch::Set(notes) => row.notes = Some(input::clean_notes("/notes", notes)?),
    }
    match input.category_id {
        Patch::Keep => {}
        Patch::Clear => row.category_id = None,
        Patch::Set(id) => row.category_id = Some(check_category(ctx, "/category_id", id)?),
    }
    db::update_transaction(ctx.db, &row, &ctx.now_text()).or_internal()?;
    if let Some(ids) = &input.label_ids {
        let labels = check_labels(ctx, "/label_ids", ids)?;
        db::set_transaction_labels(ctx.db, row.id, &labels).or_internal()?;
    }
    ctx.record(
        EntityKind::Transaction,
        row.id,
        before,
        Text::new("Updated the transaction with {payee} on {date}")
            .with("payee", &row.payee)
            .with("date", IsoDate(row.on_date)),
    )?;
    Ok(views::transaction_view(&load_transaction(ctx, row.id)?))
}

pub(crate) fn categorise_transactions(
    ctx: &mut Ctx<'_>,
    input: CategoriseTransactionsInput,
) -> Result<TransactionsChanged, OpError> {
    if input.ids.is_empty() || input.ids.len() > ops::limits::BULK {
        return Err(OpError::invalid(
            "/ids",
            Text::new("Give 1 to {max} transaction ids from search_transactions.")
                .with("max", ops::limits::BULK),
        ));
    }
    if input.category_id.is_keep()
        && input.add_label_ids.is_empty()
        && input.remove_label_ids.is_empty()
    {
        return Err(OpError::invalid(
            "",
            Text::new("Say what to change: category_id, add_label_ids or remove_label_ids."),
        ));
    }
    let category = match input.category_id {
        Patch::Keep => None,
        Patch::Clear => Some(None),
        Patch::Set(id) => Some(Some(check_category(ctx, "/category_id", id)?)),
    };
    let add = check_labels(ctx, "/add_label_ids", &input.add_label_ids)?;
    let remove = check_labels(ctx, "/remove_label_ids", &input.remove_label_ids)?;
    let mut rows = Vec::with_capacity(input.ids.len());
    for (i, id) in input.ids.iter().enumerate() {
        rows.push(referenced(format!("/ids/{i}"), load_transaction(ctx, id.get()))?);
    }
    let mut changed = 0;
    let before_count = ctx.changes.len();
    for mut row in rows {
        let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
        if let Some(category) = category {
            row.category_id = category;
            db::update_transaction(ctx.db, &row, &ctx.now_text()).or_internal()?;
        }
        let mut labels: Vec<i64> =
            row.labels.iter().map(|(id, _)| *id).filter(|id| !remove.contains(id)).collect();
        for id in &add {
            if !labels.contains(id) {
                labels.push(*id);
            }
        }
        db::set_transaction_labels(ctx.db, row.id, &labels).or_internal()?;
        ctx.record(
            EntityKind::Transaction,
            row.id,
            before,
            Text::new("Categorised the transaction with {payee} on {date}")
                .with("payee", &row.payee)
                .with("date", IsoDate(row.on_date)),
        )?;
        changed = ctx.changes.len() - before_count;
    }
    Ok(TransactionsChanged { transactions_changed: changed as u64 })
}

pub(crate) fn split_transaction(
    ctx: &mut Ctx<'_>,
    input: SplitTransactionInput,
) -> Result<Transaction, OpError> {
    let row = load_transaction(ctx, input.id.get())?;
    if input.parts.len() == 1 || input.parts.len() > ops::limits::SPLIT_PARTS {
        return Err(OpError::invalid(
            "/parts",
            Text::new("Split it into 2 to {max} parts, or pass none to make it whole again; to change its category alone use categorise_transactions.")
                .with("max", ops::limits::SPLIT_PARTS),
        ));
    }
    let mut parts = Vec::with_capacity(input.parts.len());
    for (i, part) in input.parts.iter().enumerate() {
        let minor =
            input::minor_units(&format!("/parts/{i}/amount"), part.amount.money(row.currency))?;
        if minor == 0 || minor.signum() != row.amount_minor.signum() {
            return Err(OpError::invalid(
                format!("/parts/{i}/amount"),
                Text::new("Each part has the sign of the transaction ({amount}) and is not zero.")
                    .with_money("amount", Money::new(row.amount_minor, row.currency)),
            ));
        }
        let category = part
            .category_id
            .map(|id| {
                let id = check_category(ctx, &format!("/parts/{i}/category_id"), id)?;
                let found = store::organise::get_category(ctx.db, ctx.household_id(), None, id)
                    .or_internal()?;
                Ok::<_, OpError>((id, found.name))
            })
            .transpose()?;
        let note = match part.note.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(note) => {
                Some(input::clean_name(&format!("/parts/{i}/note"), note, ops::limits::SHORT_NAME)?)
            }
        };
        parts.push(db::SplitRow { amount_minor: minor, category, note });
    }
    let total: i64 = parts.iter().map(|p| p.amount_minor).sum();
    if !parts.is_empty() && total != row.amount_minor {
        return Err(OpError::invalid(
            "/parts",
            Text::new(
                "The parts add up to {total}, and the transaction is {amount}; make them add up.",
            )
            .with("total", Money::new(total, row.currency).display())
            .with_money("amount", Money::new(row.amount_minor, row.currency)),
        ));
    }
    let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
    db::set_splits(ctx.db, row.id, &parts).or_internal()?;
    let summary = if parts.is_empty() {
        Text::new("The transaction with {payee} is whole again")
    } else {
        Text::new("Split the transaction with {payee} into {count} parts")
            .with("count", parts.len())
    }
    .with("payee", &row.payee);
    ctx.record(EntityKind::Transaction, row.id, before, summary)?;
    Ok(views::transaction_view(&load_transaction(ctx, row.id)?))
}

pub(crate) fn pair_transfer(
    ctx: &mut Ctx<'_>,
    input: PairTransferInput,
) -> Result<Transaction, OpError> {
    let row = load_transaction(ctx, input.id.get())?;
    let other = input
        .other_id
        .map(|id| referenced("/other_id".into(), load_transaction(ctx, id.get())))
        .transpose()?;
    if let Some(other) = &other {
        if other.id == row.id || other.account_id == row.account_id {
            return Err(OpError::invalid(
                "/other_id",
                Text::new(
                    "A transfer's two sides are on two different accounts: pass the transaction on the other account (search_transactions with its account_id).",
                ),
            ));
        }
        let opposite = row.amount_minor.signum() == -other.amount_minor.signum()
            && row.amount_minor != 0
            && (row.currency != other.currency || row.amount_minor == -other.amount_minor);
        if !opposite {
            return Err(OpError::invalid(
                "/other_id",
                Text::new("The two sides of a transfer are the same money out of one account and into the other; {one} and {two} are not.")
                    .with("one", Money::new(row.amount_minor, row.currency).display())
                    .with("two", Money::new(other.amount_minor, other.currency).display()),
            ));
        }
    }
    // Every transaction whose pairing changes: these two and their old partners.
    let mut touched = vec![row.id];
    touched.extend(row.transfer_id);
    if let Some(other) = &other {
        touched.push(other.id);
        touched.extend(other.transfer_id);
    }
    touched.sort_unstable();
    touched.dedup();
    let mut befores = Vec::with_capacity(touched.len());
    for id in &touched {
        befores.push(ctx.snapshot(EntityKind::Transaction, *id)?);
    }
    db::set_transfer(ctx.db, row.id, other.as_ref().map(|o| o.id)).or_internal()?;
    for (id, before) in touched.into_iter().zip(befores) {
        let summary = match &other {
            Some(other) => Text::new("Paired a transfer between {one} and {two}")
                .with("one", &row.account_name)
                .with("two", &other.account_name),
            None => Text::new("Unpaired a transfer"),
        };
        ctx.record(EntityKind::Transaction, id, before, summary)?;
    }
    Ok(views::transaction_view(&load_transaction(ctx, row.id)?))
}

pub(crate) fn match_charge(
    ctx: &mut Ctx<'_>,
    input: MatchChargeInput,
) -> Result<Transaction, OpError> {
    let row = load_transaction(ctx, input.transaction_id.get())?;
    let Some(charge_id) = input.charge_id else {
        let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
        db::set_charge(ctx.db, row.id, None).or_internal()?;
        ctx.record(
            EntityKind::Transaction,
            row.id,
            before,
            Text::new("The transaction with {payee} no longer pays a charge")
                .with("payee", &row.payee),
        )?;
        return Ok(views::transaction_view(&load_transaction(ctx, row.id)?));
    };
    let found = store::charges::get(ctx.db, ctx.household_id(), Some(ctx.me()), charge_id.get())
        .or_not_found(|| {
            Text::new("No charge with id {id}. Call list_charges to find ids.")
                .with("id", charge_id)
        });
    let charge = referenced("/charge_id".into(), found)?;
    if row.amount_minor >= 0 {
        return Err(OpError::invalid(
            "/transaction_id",
            Text::new("A charge is paid by money out, and this transaction is {amount} in.")
                .with_money("amount", Money::new(row.amount_minor, row.currency)),
        ));
    }
    if charge_matching::days_apart(row.on_date, charge.charged_on) > charge_matching::MATCH_DAYS {
        return Err(OpError::invalid(
            "/charge_id",
            Text::new("That charge of {name} is on {charged}, and the payment on {paid}: more than {days} days apart. Pick the charge of that period (list_charges with subscription_id).")
                .with("name", &charge.subscription_name)
                .with("charged", IsoDate(charge.charged_on))
                .with("paid", IsoDate(row.on_date))
                .with("days", charge_matching::MATCH_DAYS),
        ));
    }
    if let Some(other) = db::transaction_for_charge(ctx.db, charge.id).or_internal()?
        && other != row.id
    {
        return Err(OpError::conflict(
            Text::new("Transaction {other} is matched to that charge already. Unmatch it first (match_charge with charge_id null).")
                .with("other", other),
        ));
    }
    charge_matching::pay(ctx, &row, charge)?;
    Ok(views::transaction_view(&load_transaction(ctx, row.id)?))
}

pub(crate) fn delete_transaction(
    ctx: &mut Ctx<'_>,
    input: IdInput<RecordId>,
) -> Result<Removed, OpError> {
    let row = load_transaction(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
    // Its partner in a transfer is unpaired first, recorded, so an undo (which restores this
    // one, paired, and then the partner) pairs them again.
    if let Some(partner) = row.transfer_id {
        let partner_before = ctx.snapshot(EntityKind::Transaction, partner)?;
        db::set_transfer(ctx.db, row.id, None).or_internal()?;
        ctx.record(
            EntityKind::Transaction,
            partner,
            partner_before,
            Text::new("Unpaired a transfer"),
        )?;
    }
    db::delete_transaction(ctx.db, ctx.household_id(), row.id).or_internal()?;
    let summary = Text::new("Deleted the transaction of {amount} with {payee} on {date}")
        .with_money("amount", Money::new(row.amount_minor, row.currency))
        .with("payee", &row.payee)
        .with("date", IsoDate(row.on_date));
    ctx.record(EntityKind::Transaction, row.id, before, summary)?;
    Ok(Removed { id: row.id, name: row.payee })
}

/// What makes a statement's row the same row when the statement is imported again: its day,
/// amount and description, and how many identical rows came before it in the statement (two
/// coffees of the same price on one day are two rows).
fn import_keys(transactions: &[statement::Transaction]) -> Vec<String> {
    let mut seen: std::collections::HashMap<(domain::Date, i64, &str), u32> =
        std::collections::HashMap::with_capacity(transactions.len());
    transactions
        .iter()
        .map(|t| {
            let description = t.description.trim();
            let n = seen.entry((t.date, t.amount_minor, description)).or_default();
            *n += 1;
            format!("{}|{}|{}|{n}", t.date, t.amount_minor, description.to_uppercase())
        })
        .collect()
}

/// Gives the transactions a bank feed brought the keys of the statement's rows they are (the
/// same amount, the nearest day within [`ops::limits::STATEMENT_AND_FEED_DAYS`]), so the
/// import skips those rows as already there.
fn name_bank_rows(
    ctx: &Ctx<'_>,
    account: &db::AccountRef,
    transactions: &[statement::Transaction],
    keys: &[String],
) -> Result<(), OpError> {
    let days = ops::limits::STATEMENT_AND_FEED_DAYS;
    let margin = jiff::Span::new().days(days);
    let (Some(from), Some(to)) =
        (transactions.iter().map(|t| t.date).min(), transactions.iter().map(|t| t.date).max())
    else {
        return Ok(());
    };
    let mut fed = store::banks::unmatched_bank_rows(
        ctx.db,
        ctx.household_id(),
        account.id,
        from.saturating_sub(margin),
        to.saturating_add(margin),
    )
    .or_internal()?;
    for (t, key) in transactions.iter().zip(keys) {
        let apart = |on: domain::Date| charge_matching::days_apart(on, t.date);
        let nearest = fed
            .iter()
            .enumerate()
            .filter(|(_, (_, on, amount))| *amount == t.amount_minor && apart(*on) <= days)
            .min_by_key(|(_, (_, on, _))| apart(*on))
            .map(|(position, _)| position);
        if let Some(position) = nearest {
            let (id, _, _) = fed.remove(position);
            store::banks::set_import_key(ctx.db, ctx.household_id(), id, key).or_internal()?;
        }
    }
    Ok(())
}

/// How many problems an import answers with; the count of the rest is in the last one.
const SHOWN_PROBLEMS: usize = 100;

pub(crate) fn import_transactions(
    ctx: &mut Ctx<'_>,
    input: ops::import::ImportTransactionsInput,
) -> Result<ops::import::ImportedTransactions, OpError> {
    let account = check_account(ctx, "/account_id", input.account_id)?;
    if account.archived {
        return Err(OpError::conflict(
            Text::new("{name} is archived. Unarchive it with update_account (archived: false) first, or choose another account.")
                .with("name", &account.name),
        ));
    }
    let bytes = input::statement_bytes(input.content, input.content_base64)?;
    let read = ctx.pdf.read(&bytes, account.currency).map_err(|err| {
        OpError::invalid(
            "/content",
            Text::new("The statement cannot be read: {reason}").with("reason", err.to_string()),
        )
    })?;
    if let Some(other) = read.transactions.iter().find(|t| t.currency != account.currency) {
        return Err(OpError::invalid(
            "/account_id",
            Text::new("The statement has amounts in {currency}, and {name} is in {account}. Choose the account it is of (list_accounts), or create one in {currency}.")
                .with("currency", other.currency.code())
                .with("name", &account.name)
                .with("account", account.currency.code()),
        ));
    }
    ctx.check_cap(store::households::Counted::Transactions, read.transactions.len())?;
    let keys = import_keys(&read.transactions);
    let payees: Vec<String> = read
        .transactions
        .iter()
        .map(|t| statement::merchant::display_name(&t.description))
        .collect();
    let rows: Vec<db::ImportedRow<'_>> = read
        .transactions
        .iter()
        .zip(&keys)
        .zip(&payees)
        .map(|((t, key), payee)| db::ImportedRow {
            on_date: t.date,
            amount_minor: t.amount_minor,
            payee,
            description: t.description.trim(),
            import_key: key,
        })
        .collect();
    name_bank_rows(ctx, &account, &read.transactions, &keys)?;
    let (import_id, imported) =
        db::import_transactions(ctx.db, &account, ctx.me(), &rows, &ctx.now_text())
            .or_internal()?;
    let mut proposed_matches = Vec::new();
    if let Some(import_id) = import_id {
        crate::rules::apply_to_import(ctx, import_id)?;
        if let (Some(from), Some(to)) = (
            read.transactions.iter().map(|t| t.date).min(),
            read.transactions.iter().map(|t| t.date).max(),
        ) {
            proposed_matches = charge_matching::propose(ctx, import_id, from, to)?;
        }
        ctx.record(
            EntityKind::Import,
            import_id,
            None,
            Text::new("Imported {count} transactions into {name}")
                .with("count", imported)
                .with("name", &account.name),
        )?;
    }
    let mut problems: Vec<ops::import::StatementProblem> = read
        .problems
        .iter()
        .take(SHOWN_PROBLEMS)
        .map(|p| ops::import::StatementProblem { line: p.line as u64, message: p.message.clone() })
        .collect();
    if read.problems.len() > SHOWN_PROBLEMS {
        problems.push(ops::import::StatementProblem {
            line: 0,
            message: ctx.say(
                &Text::new("…and {count} more lines that could not be read.")
                    .with("count", read.problems.len() - SHOWN_PROBLEMS),
            ),
        });
    }
    Ok(ops::import::ImportedTransactions {
        account: Ref { id: account.id, name: account.name },
        imported,
        already_imported: read.transactions.len() as u64 - imported,
        from: read.transactions.iter().map(|t| t.date).min().map(IsoDate),
        to: read.transactions.iter().map(|t| t.date).max().map(IsoDate),
        problems,
        proposed_matches,
    })
}
