//! Bank connections: listing them, linking SimpleFIN, choosing where an account goes,
//! removing one, and a sync's writing of what the bank brought (`bank_calls.rs` asked the
//! bank before the transaction).
//!
//! A sync records each transaction once, by the provider's ids (`bank_keys`), with the rules
//! of `../shared/reference/banks.md` §2.8: an id seen before changes its transaction (a
//! booked one never becomes pending again); a new booked id takes the one pending
//! transaction of the same amount up to 8 days before it (the bank booked it under a new id),
//! or a booked one of the same day, amount and text the feed no longer names (the bank
//! reissued its id), or one a statement import recorded within 3 days; otherwise it is added,
//! under an import of its own per account, so an undo of the sync removes it. A pending
//! transaction the bank stopped showing is removed. Rules run on what was added, and
//! payments are matched to the charges they paid.

use std::collections::HashSet;

use domain::{
    Date, Money, Text,
    entities::{AccountKind, EntityKind},
};
use ops::{
    OpError,
    banks::*,
    common::{Ref, Timestamp},
    household::{Empty, Removed},
    resolve::IsoDate,
};
use store::banks::{BankAccountRow, ConnectionRow};

use crate::{
    bank_calls::{self, Prefetched},
    charge_matching, clock,
    ctx::Ctx,
    refs::check_account,
    rules,
    transactions::StoreExt,
    views,
};

/// How far back a sync looks for recurring charges: a yearly one's last two.
const DETECTION_DAYS: i64 = 400;
use ops::limits::{PENDING_BOOKED_DAYS, STATEMENT_AND_FEED_DAYS as STATEMENT_DAYS};

/// A sentence kept on a connection or an account (`status_detail`, `problem`): a [`Text`] as
/// JSON, read in the reader's language.
fn kept(text: &Text) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn read_kept(ctx: &Ctx<'_>, stored: Option<&str>) -> Option<String> {
    stored.map(|stored| ctx.say_stored(stored))
}

fn timestamp(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(Timestamp::parse)
}

fn account_view(ctx: &Ctx<'_>, row: &BankAccountRow) -> BankAccount {
    let currency = row
        .currency
        .as_deref()
        .and_then(|code| domain::Currency::parse(code).ok())
        .map(ops::common::CurrencyCode);
    BankAccount {
        id: row.id,
        name: row.name.clone(),
        institution: row.institution.clone(),
        currency,
        account: row.account.as_ref().map(|(id, name)| Ref { id: *id, name: name.clone() }),
        balance: row.balance.zip(currency).map(|((_, minor), c)| views::amount(minor, c.0)),
        balance_on: row.balance.map(|(on, _)| IsoDate(on)),
        problem: read_kept(ctx, row.problem.as_deref()),
    }
}

fn connection_view(
    ctx: &Ctx<'_>,
    row: &ConnectionRow,
    accounts: &[BankAccountRow],
) -> Result<BankConnection, OpError> {
    Ok(BankConnection {
        id: row.id,
        provider: BankProvider::parse(&row.provider).ok_or(OpError::Internal)?,
        name: row.name.clone(),
        visibility: row.visibility,
        linked_by: Ref { id: row.member_id, name: row.member_name.clone() },
        status: ConnectionStatus::parse(&row.status).ok_or(OpError::Internal)?,
        problem: read_kept(ctx, row.status_detail.as_deref()),
        last_sync_at: timestamp(row.last_attempt_at.as_deref()),
        last_success_at: timestamp(row.last_success_at.as_deref()),
        next_sync_at: Timestamp::parse(&row.next_sync_at).ok_or(OpError::Internal)?,
        consent_expires_at: timestamp(row.consent_until.as_deref()),
        country: row.country.clone(),
        accounts: accounts
            .iter()
            .filter(|a| a.connection_id == row.id)
            .map(|a| account_view(ctx, a))
            .collect(),
    })
}

fn visible_connection(ctx: &Ctx<'_>, id: i64) -> Result<ConnectionRow, OpError> {
    store::banks::connection(ctx.db, ctx.household_id(), ctx.me(), id)
        .or_internal()?
        .ok_or_else(|| bank_calls::not_found(id))
}

/// A connection as an op answers it, read again after what the op wrote.
fn reread(ctx: &Ctx<'_>, id: i64) -> Result<BankConnection, OpError> {
    let row = visible_connection(ctx, id)?;
    let accounts =
        store::banks::bank_accounts(ctx.db, ctx.household_id(), &[row.id]).or_internal()?;
    connection_view(ctx, &row, &accounts)
}

pub(crate) fn list_bank_connections(
    ctx: &mut Ctx<'_>,
    _: Empty,
) -> Result<BankConnections, OpError> {
    let rows = store::banks::connections(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    let ids: Vec<i64> = rows.iter().map(|row| row.id).collect();
    let accounts = store::banks::bank_accounts(ctx.db, ctx.household_id(), &ids).or_internal()?;
    let items =
        rows.iter().map(|row| connection_view(ctx, row, &accounts)).collect::<Result<_, _>>()?;
    Ok(BankConnections { items })
}

pub(crate) fn sync_bank_connection(
    ctx: &mut Ctx<'_>,
    input: SyncBankConnectionInput,
) -> Result<BankSync, OpError> {
    let connection = visible_connection(ctx, input.connection_id.get())?;
    let Some(Prefetched::Sync { connection_id, fetched, today_utc, consent_until }) =
        ctx.bank.take()
    else {
        return Err(OpError::Internal);
    };
    if connection_id != connection.id {
        return Err(OpError::Internal);
    }
    let applied = apply(ctx, &connection, &fetched, today_utc)?;
    if let Some(until) = consent_until {
        let until = clock::timestamp_text(until);
        store::banks::renew_consent(ctx.db, ctx.household_id(), connection.id, Some(&until), None)
            .or_internal()?;
    }
    Ok(applied.into_sync(&reread(ctx, connection.id)?))
}

pub(crate) fn link_simplefin(
    ctx: &mut Ctx<'_>,
    input: LinkSimplefinInput,
) -> Result<LinkedBank, OpError> {
    let (secret, fetched, today_utc) = match ctx.bank.take() {
        Some(Prefetched::Link { secret, fetched, today_utc }) => {
            (Some(secret), Some(fetched), today_utc)
        }
        Some(Prefetched::LinkChecked) => (None, None, bank_calls::utc_day(ctx.now)),
        _ => return Err(OpError::Internal),
    };
    let household = ctx.household_id();
    let now_text = ctx.now_text();
    let id = match input.connection_id {
        Some(id) => visible_connection(ctx, id.get())?.id,
        None => {
            let new = store::banks::NewConnection {
                household_id: household,
                member_id: ctx.me(),
                provider: BankProvider::SimpleFin.as_str(),
                name: &connection_name(fetched.as_ref().and_then(|f| f.as_ref().ok())),
                visibility: input.visibility.unwrap_or(domain::entities::Visibility::Household),
                reach_local: ctx.caller.is_owner(),
                next_sync_at: &now_text,
                country: None,
            };
            let id = store::banks::insert_connection(ctx.db, &new, &now_text).or_internal()?;
            record_linked(ctx, id, new.name)?;
            id
        }
    };
    if let Some(secret) = &secret {
        store::banks::set_credentials(ctx.db, household, id, secret).or_internal()?;
        // The first fetch was a request of today's.
        store::banks::count_request(ctx.db, id, today_utc).or_internal()?;
    }
    let connection = visible_connection(ctx, id)?;
    let applied = match fetched {
        Some(Ok(fetched)) => apply(ctx, &connection, &fetched, today_utc)?,
        Some(Err(failure)) => {
            // The token is spent: the connection is kept, saying what went wrong.
            record_failure(ctx, id, BankProvider::SimpleFin, &failure)?;
            Applied::default()
        }
        None => Applied::default(),
    };
    let connection = reread(ctx, id)?;
    Ok(LinkedBank { sync: applied.into_sync(&connection), connection })
}

pub(crate) fn set_enable_banking(
    ctx: &mut Ctx<'_>,
    input: SetEnableBankingInput,
) -> Result<EnableBankingSettings, OpError> {
    let household = ctx.household_id();
    let id = input.application_id.trim();
    if id.is_empty() && input.private_key.trim().is_empty() {
        store::banks::set_enable_banking(ctx.db, household, None).or_internal()?;
        return Ok(EnableBankingSettings { application_id: None });
    }
    // The key was read (`bank_calls.rs`) before the transaction.
    let Some(Prefetched::ApplicationChecked) = ctx.bank.take() else {
        return Err(OpError::Internal);
    };
    store::banks::set_enable_banking(ctx.db, household, Some((id, input.private_key.trim())))
        .or_internal()?;
    Ok(EnableBankingSettings { application_id: Some(id.to_owned()) })
}

pub(crate) fn list_banks(ctx: &mut Ctx<'_>, _: ListBanksInput) -> Result<BankChoices, OpError> {
    // Asked (`bank_calls.rs`) before the transaction.
    let Some(Prefetched::Banks(items)) = ctx.bank.take() else {
        return Err(OpError::Internal);
    };
    Ok(BankChoices { items })
}

pub(crate) fn start_bank_consent(
    ctx: &mut Ctx<'_>,
    input: StartBankConsentInput,
) -> Result<BankConsent, OpError> {
    let Some(Prefetched::ConsentStarted { state, bank, started }) = ctx.bank.take() else {
        return Err(OpError::Internal);
    };
    let expires = ctx.now + jiff::SignedDuration::from_mins(bank_calls::CONSENT_MINS);
    let consent = store::banks::ConsentRow {
        state,
        household_id: ctx.household_id(),
        member_id: ctx.me(),
        bank,
        visibility: input.visibility.unwrap_or(domain::entities::Visibility::Household),
        connection_id: input.connection_id.map(|id| id.get()),
        consent_until: clock::timestamp_text(started.valid_until),
        expires_at: clock::timestamp_text(expires),
        country: input.country.to_string(),
    };
    store::banks::put_consent(ctx.db, &consent).or_internal()?;
    Ok(BankConsent { url: started.url, expires_at: Timestamp(expires) })
}

pub(crate) fn complete_bank_consent(
    ctx: &mut Ctx<'_>,
    _: CompleteBankConsentInput,
) -> Result<LinkedBank, OpError> {
    let Some(Prefetched::ConsentGiven { consent, given, today_utc }) = ctx.bank.take() else {
        return Err(OpError::Internal);
    };
    let household = ctx.household_id();
    if !store::banks::take_consent(ctx.db, household, &consent.state).or_internal()? {
        return Err(OpError::conflict(Text::new(
            "This return from the bank was used already; the bank is connected.",
        )));
    }
    let now_text = ctx.now_text();
    // (Empty for a consent started before Exhale kept the country.)
    let country = Some(consent.country.as_str()).filter(|country| !country.is_empty());
    let id = match consent.connection_id {
        Some(id) => visible_connection(ctx, id)?.id,
        None => {
            let new = store::banks::NewConnection {
                household_id: household,
                member_id: ctx.me(),
                provider: BankProvider::EnableBanking.as_str(),
                name: &bounded(&consent.bank),
                visibility: consent.visibility,
                reach_local: false,
                next_sync_at: &now_text,
                country,
            };
            let id = store::banks::insert_connection(ctx.db, &new, &now_text).or_internal()?;
            record_linked(ctx, id, new.name)?;
            id
        }
    };
    store::banks::set_credentials(ctx.db, household, id, &given.session_id).or_internal()?;
    store::banks::count_request(ctx.db, id, today_utc).or_internal()?;
    let until = given.valid_until.map(clock::timestamp_text).unwrap_or(consent.consent_until);
    store::banks::renew_consent(ctx.db, household, id, Some(&until), country).or_internal()?;
    let connection = visible_connection(ctx, id)?;
    let applied = match given.fetched {
        Ok(fetched) => apply(ctx, &connection, &fetched, today_utc)?,
        Err(failure) => {
            record_failure(ctx, id, BankProvider::EnableBanking, &failure)?;
            Applied::default()
        }
    };
    let connection = reread(ctx, id)?;
    Ok(LinkedBank { sync: applied.into_sync(&connection), connection })
}

/// The activity's entry for a new connection (its credentials are never in it); undoing it
/// removes the connection with what its first sync brought.
fn record_linked(ctx: &mut Ctx<'_>, id: i64, name: &str) -> Result<(), OpError> {
    ctx.record(
        EntityKind::BankConnection,
        id,
        None,
        Text::new("Linked the bank connection {name}").with("name", name),
    )
}

/// Keeps on a connection a failed first read, in the op's own transaction (its credential is
/// kept either way).
fn record_failure(
    ctx: &mut Ctx<'_>,
    id: i64,
    provider: BankProvider,
    failure: &Failure,
) -> Result<(), OpError> {
    let now_text = ctx.now_text();
    let next = clock::timestamp_text(bank_calls::next_sync(provider, ctx.now, Some(failure), 1));
    let detail = kept(&bank_calls::failure_error(failure).text());
    let outcome = store::banks::Outcome {
        status: failure.status().as_str(),
        detail: Some(&detail),
        failures: 1,
        synced_through: None,
        attempt_at: &now_text,
        success_at: None,
        next_sync_at: &next,
    };
    store::banks::record_outcome(ctx.db, ctx.household_id(), id, &outcome).or_internal()
}

/// A new connection's name: the banks it brings, as the provider names them.
fn connection_name(fetched: Option<&Fetched>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for account in fetched.map(|f| f.accounts.as_slice()).unwrap_or_default() {
        if let Some(name) = account.institution.as_deref()
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    if names.is_empty() {
        return "SimpleFIN Bridge".into();
    }
    names.join(", ").chars().take(ops::limits::SHORT_NAME).collect()
}

pub(crate) fn set_bank_account_target(
    ctx: &mut Ctx<'_>,
    input: SetBankAccountTargetInput,
) -> Result<BankConnection, OpError> {
    let household = ctx.household_id();
    let not_found = || {
        OpError::not_found(
            Text::new("No bank account with id {id}. Call list_bank_connections to find ids.")
                .with("id", input.bank_account_id),
        )
    };
    let row = store::banks::bank_account(ctx.db, household, input.bank_account_id.get())
        .or_internal()?
        .ok_or_else(not_found)?;
    let connection = store::banks::connection(ctx.db, household, ctx.me(), row.connection_id)
        .or_internal()?
        .ok_or_else(not_found)?;
    let currency = row.currency.as_deref().and_then(|code| domain::Currency::parse(code).ok());
    let target = match (input.account_id, input.create_account.unwrap_or(false)) {
        (Some(_), true) => {
            return Err(OpError::invalid(
                "/create_account",
                Text::new("Give account_id or create_account, not both."),
            ));
        }
        (Some(account_id), false) => {
            let account =
                check_account(ctx, "/account_id", ops::resolve::AccountId::from(account_id.get()))?;
            if Some(account.currency) != currency {
                return Err(OpError::invalid(
                    "/account_id",
                    Text::new("{name} is in {currency}, and the bank account is not: choose an account in its currency, or create_account.")
                        .with("name", &account.name)
                        .with("currency", account.currency.code()),
                ));
            }
            Some(account.id)
        }
        (None, true) => {
            let Some(currency) = currency else {
                return Err(OpError::conflict(Text::new(
                    "The bank gives this account in a currency Exhale does not know, so nothing of it can be recorded.",
                )));
            };
            Some(create_account(ctx, &connection, &row.name, currency, None)?)
        }
        (None, false) => None,
    };
    let before = ctx.snapshot(EntityKind::BankAccount, row.id)?;
    store::banks::set_target(ctx.db, household, row.id, target).or_internal()?;
    let now_into = store::banks::bank_account(ctx.db, household, row.id)
        .or_internal()?
        .and_then(|account| account.account);
    let summary = match now_into {
        Some((_, into)) => Text::new("Transactions of the bank account {name} now go into {into}")
            .with("into", into),
        None => Text::new("Transactions of the bank account {name} are no longer recorded"),
    };
    ctx.record(EntityKind::BankAccount, row.id, before, summary.with("name", &row.name))?;
    reread(ctx, connection.id)
}

pub(crate) fn dismiss_recurring_proposal(
    ctx: &mut Ctx<'_>,
    input: ops::common::IdInput<ops::common::RecordId>,
) -> Result<Removed, OpError> {
    let id = input.id.get();
    let proposal = store::banks::proposal(ctx.db, ctx.household_id(), ctx.me(), id)
        .or_internal()?
        .ok_or_else(|| {
            OpError::not_found(
                Text::new("No suggested recurring charge with id {id}. Call list_attention_items to find them.")
                    .with("id", id),
            )
        })?;
    let before = ctx.snapshot(EntityKind::RecurringProposal, id)?;
    store::banks::dismiss_proposal(ctx.db, ctx.household_id(), id).or_internal()?;
    let summary =
        Text::new("Stopped suggesting {name} as a recurring charge").with("name", &proposal.name);
    ctx.record(EntityKind::RecurringProposal, id, before, summary)?;
    Ok(Removed { id, name: proposal.name })
}

pub(crate) fn remove_bank_connection(
    ctx: &mut Ctx<'_>,
    input: RemoveBankConnectionInput,
) -> Result<Removed, OpError> {
    let connection = visible_connection(ctx, input.connection_id.get())?;
    if !ops::banks::may_remove(ctx.caller, connection.member_id) {
        return Err(OpError::forbidden(
            Text::new("{name} was linked by {member}; only they or an owner can remove it.")
                .with("name", &connection.name)
                .with("member", &connection.member_name),
        ));
    }
    let before = ctx.snapshot(EntityKind::BankConnection, connection.id)?;
    store::banks::delete_connection(ctx.db, ctx.household_id(), connection.id).or_internal()?;
    let summary = Text::new("Removed the bank connection {name}").with("name", &connection.name);
    ctx.record(EntityKind::BankConnection, connection.id, before, summary)?;
    Ok(Removed { id: connection.id, name: connection.name })
}

/// What a sync did, before it is answered.
#[derive(Default)]
struct Applied {
    added: u64,
    updated: u64,
    from_statements: u64,
    pending_dropped: u64,
    matched: u64,
}

impl Applied {
    fn into_sync(self, connection: &BankConnection) -> BankSync {
        BankSync {
            connection_id: connection.id,
            status: connection.status,
            problem: connection.problem.clone(),
            added: self.added,
            updated: self.updated,
            from_statements: self.from_statements,
            pending_dropped: self.pending_dropped,
            matched: self.matched,
        }
    }
}

/// An Exhale account for a bank account: the linker's account of the same name and currency
/// when there is one, else a new one, theirs, shared as the connection is.
fn account_for(
    ctx: &mut Ctx<'_>,
    connection: &ConnectionRow,
    remote: &RemoteAccount,
    currency: domain::Currency,
) -> Result<i64, OpError> {
    let accounts = store::ledger::list_accounts(ctx.db, ctx.household_id(), connection.member_id)
        .or_internal()?;
    let folded = domain::names::fold(&remote.name);
    if let Some(existing) = accounts
        .iter()
        .find(|a| !a.archived && a.currency == currency && domain::names::fold(&a.name) == folded)
    {
        return Ok(existing.id);
    }
    let balance = remote.balance.map(|b| b.booked_minor);
    create_account(ctx, connection, &remote.name, currency, balance)
}

fn create_account(
    ctx: &mut Ctx<'_>,
    connection: &ConnectionRow,
    name: &str,
    currency: domain::Currency,
    balance: Option<i64>,
) -> Result<i64, OpError> {
    let name: String = bounded(name).chars().take(ops::limits::SHORT_NAME).collect();
    let name = if name.is_empty() { connection.name.clone() } else { name };
    let row = store::ledger::AccountRow {
        id: 0,
        household_id: ctx.household_id(),
        owner_id: connection.member_id,
        owner_name: String::new(),
        name: name.clone(),
        // Money owed is a card's, as far as the bank's balance tells.
        kind: if balance.is_some_and(|b| b < 0) {
            AccountKind::CreditCard
        } else {
            AccountKind::Checking
        },
        currency,
        visibility: connection.visibility,
        archived: false,
        transaction_count: 0,
        balance: None,
    };
    let id = store::ledger::insert_account(ctx.db, &row, &ctx.now_text()).or_internal()?;
    ctx.record(
        EntityKind::Account,
        id,
        None,
        Text::new("Added the account {name} for the bank connection {bank}")
            .with("name", &name)
            .with("bank", &connection.name),
    )?;
    Ok(id)
}

/// What went wrong for `remote` alone, in words, when anything did.
fn account_problem(fetched: &Fetched, remote: &RemoteAccount) -> Option<Text> {
    if remote.currency.is_none() {
        return Some(Text::new(
            "The bank gives this account in a currency Exhale does not know; nothing of it is recorded.",
        ));
    }
    fetched
        .problems
        .iter()
        .find(|p| p.account_key.as_deref() == Some(remote.key.as_str()))
        .map(|p| bank_calls::failure_error(&p.failure).text())
}

/// Writes what a fetch brought: accounts, balances and transactions, then the connection's
/// outcome.
fn apply(
    ctx: &mut Ctx<'_>,
    connection: &ConnectionRow,
    fetched: &Fetched,
    today_utc: Date,
) -> Result<Applied, OpError> {
    let household = ctx.household_id();
    let existing =
        store::banks::bank_accounts(ctx.db, household, &[connection.id]).or_internal()?;
    let mut applied = Applied::default();
    for remote in &fetched.accounts {
        let mut problem = account_problem(fetched, remote);
        let institution = remote.institution.as_deref().map(bounded);
        let stored_problem = problem.as_ref().map(kept);
        let seen = store::banks::SeenAccount {
            remote_key: &remote.key,
            name: &bounded(&remote.name),
            institution: institution.as_deref(),
            currency: remote.currency.map(|c| c.currency().code()),
            available_minor: remote.balance.and_then(|b| b.available_minor),
            problem: stored_problem.as_deref(),
        };
        let bank_account_id =
            store::banks::put_bank_account(ctx.db, household, connection.id, &seen)
                .or_internal()?;
        let (Some(currency), None) = (remote.currency, &problem) else { continue };
        let target = match existing.iter().find(|e| e.remote_key == remote.key) {
            Some(known) => known.account.as_ref().map(|(id, _)| *id),
            None => {
                let id = account_for(ctx, connection, remote, currency.currency())?;
                store::banks::set_target(ctx.db, household, bank_account_id, Some(id))
                    .or_internal()?;
                Some(id)
            }
        };
        let Some(target) = target else { continue };
        let account = store::ledger::get_account(ctx.db, household, connection.member_id, target)
            .or_internal()?;
        if account.currency != currency.currency() || account.archived {
            problem = Some(
                Text::new("It goes into {name}, which is archived or in another currency; choose another account for it.")
                    .with("name", &account.name),
            );
            let stored = problem.as_ref().map(kept);
            store::banks::set_problem(ctx.db, household, bank_account_id, stored.as_deref())
                .or_internal()?;
            continue;
        }
        if let Some(balance) = remote.balance {
            store::ledger::set_balance(ctx.db, account.id, balance.on, balance.booked_minor)
                .or_internal()?;
        }
        let rows: Vec<&RemoteTransaction> =
            fetched.transactions.iter().filter(|t| t.account_key == remote.key).collect();
        let mut sync = AccountSync { connection, bank_account_id, account: &account, applied };
        sync.transactions(ctx, &rows, fetched.from)?;
        applied = sync.applied;
    }
    let provider = BankProvider::parse(&connection.provider).ok_or(OpError::Internal)?;
    let now_text = ctx.now_text();
    // A provider that warns of its limit while it answers (SimpleFIN's quota, past which it
    // disables the access) is asked nothing more until its limit allows.
    let whole: Vec<&Failure> =
        fetched.problems.iter().filter(|p| p.account_key.is_none()).map(|p| &p.failure).collect();
    let limit = whole.iter().copied().find(|f| matches!(f, Failure::RateLimited { .. }));
    let said = || fetched.messages.first().map(|message| bounded(message));
    // What went wrong for a login or the whole connection while the rest came, and what
    // the provider asks to be shown.
    let detail = match (limit, whole.first()) {
        (Some(_), _) => Some(
            Text::new("What came is recorded, and the provider warns of its limit of requests ({said}): Exhale asks it nothing more until its limit allows.")
                .with("said", said().unwrap_or_default()),
        ),
        (None, Some(failure)) => Some(bank_calls::failure_error(failure).text()),
        (None, None) => said().map(|message| Text::new("The provider says: {message}").with("message", message)),
    }
    .map(|text| kept(&text));
    let next = clock::timestamp_text(bank_calls::next_sync(provider, ctx.now, limit, 0));
    let status = limit.map_or(ConnectionStatus::Ok, Failure::status);
    let outcome = store::banks::Outcome {
        status: status.as_str(),
        detail: detail.as_deref(),
        failures: 0,
        synced_through: Some(today_utc),
        attempt_at: &now_text,
        success_at: Some(&now_text),
        next_sync_at: &next,
    };
    store::banks::record_outcome(ctx.db, household, connection.id, &outcome).or_internal()?;
    Ok(applied)
}

/// One account's part of a sync.
struct AccountSync<'a> {
    connection: &'a ConnectionRow,
    bank_account_id: i64,
    account: &'a store::ledger::AccountRow,
    applied: Applied,
}

/// What a new provider id turned out to be.
enum Found {
    /// A pending transaction the bank has booked.
    Posted(i64),
    /// A booked transaction whose id the bank reissued.
    Reissued(i64),
    /// A transaction a statement import recorded.
    FromStatement(i64),
}

fn days_apart(a: Date, b: Date) -> i64 {
    charge_matching::days_apart(a, b)
}

impl AccountSync<'_> {
    fn transactions(
        &mut self,
        ctx: &mut Ctx<'_>,
        rows: &[&RemoteTransaction],
        window_from: Option<Date>,
    ) -> Result<(), OpError> {
        let household = ctx.household_id();
        let earliest = rows.iter().map(|t| t.on).chain(window_from).min();
        let Some(earliest) = earliest else { return Ok(()) };
        let margin = jiff::Span::new().days(PENDING_BOOKED_DAYS.max(STATEMENT_DAYS) + 1);
        let mut known = store::banks::known_rows(
            ctx.db,
            household,
            self.account.id,
            earliest.saturating_sub(margin),
        )
        .or_internal()?;
        // Transactions a booked row of this fetch already stands for.
        let mut claimed: HashSet<i64> = HashSet::new();
        let mut new = Vec::new();
        for t in rows {
            match store::banks::keyed(ctx.db, self.bank_account_id, &t.key).or_internal()? {
                // (Deleted or undone: `update` finds nothing, and it is not brought back.)
                Some(id) => {
                    if !t.pending {
                        claimed.insert(id);
                    }
                    // What the account's rows already say needs no read: most of a window
                    // is unchanged from the sync before.
                    let unchanged = known.iter().any(|k| {
                        k.id == id
                            && k.on_date == t.on
                            && k.amount_minor == t.amount_minor
                            && (k.pending == t.pending || !k.pending)
                    });
                    if !unchanged && self.update(ctx, id, t)? {
                        self.applied.updated += 1;
                    }
                }
                None => new.push(*t),
            }
        }
        ctx.check_cap(store::households::Counted::Transactions, new.len())?;
        let mut import_id = None;
        let mut added = 0;
        for t in new {
            let found = if t.pending { None } else { find(&known, &claimed, t) };
            match found {
                Some(Found::Posted(id)) => {
                    claimed.insert(id);
                    store::banks::add_key(ctx.db, self.bank_account_id, &t.key, id)
                        .or_internal()?;
                    if self.update(ctx, id, t)? {
                        self.applied.updated += 1;
                    }
                    if let Some(row) = known.iter_mut().find(|k| k.id == id) {
                        row.pending = false;
                    }
                }
                Some(Found::Reissued(id)) => {
                    claimed.insert(id);
                    store::banks::add_key(ctx.db, self.bank_account_id, &t.key, id)
                        .or_internal()?;
                }
                Some(Found::FromStatement(id)) => {
                    claimed.insert(id);
                    store::banks::add_key(ctx.db, self.bank_account_id, &t.key, id)
                        .or_internal()?;
                    self.applied.from_statements += 1;
                    if let Some(row) = known.iter_mut().find(|k| k.id == id) {
                        row.from_bank = true;
                    }
                }
                None => {
                    let import = match import_id {
                        Some(id) => id,
                        None => {
                            let id = store::banks::start_import(
                                ctx.db,
                                household,
                                self.account.id,
                                self.connection.member_id,
                                &ctx.now_text(),
                            )
                            .or_internal()?;
                            import_id = Some(id);
                            id
                        }
                    };
                    let description = bounded(&t.description);
                    let payee = match t.payee.as_deref().map(bounded) {
                        Some(payee) if !payee.is_empty() => payee,
                        _ => statement::merchant::display_name(&description),
                    };
                    let payee: String = payee.chars().take(ops::limits::NAME).collect();
                    let synced = store::banks::NewSynced {
                        on_date: t.on,
                        amount_minor: t.amount_minor,
                        payee: &payee,
                        description: &description,
                        pending: t.pending,
                    };
                    let id = store::banks::insert_synced(
                        ctx.db,
                        household,
                        self.account.id,
                        self.account.currency.code(),
                        import,
                        &synced,
                        &ctx.now_text(),
                    )
                    .or_internal()?;
                    store::banks::add_key(ctx.db, self.bank_account_id, &t.key, id)
                        .or_internal()?;
                    if !t.pending {
                        claimed.insert(id);
                    }
                    known.push(store::banks::KnownRow {
                        id,
                        on_date: t.on,
                        amount_minor: t.amount_minor,
                        description,
                        pending: t.pending,
                        from_bank: true,
                    });
                    added += 1;
                }
            }
        }
        self.drop_gone_pending(ctx, rows, window_from)?;
        if let Some(import_id) = import_id {
            self.finish(ctx, import_id, added, rows)?;
            self.propose_recurring(ctx)?;
        }
        Ok(())
    }

    /// Proposes the recurring charges of the account's last 13 months that no subscription
    /// of the household is (by merchant and currency), as attention items for a person to
    /// add or dismiss: never created silently.
    fn propose_recurring(&mut self, ctx: &mut Ctx<'_>) -> Result<(), OpError> {
        let household = ctx.household_id();
        let from = ctx.today.saturating_sub(jiff::Span::new().days(DETECTION_DAYS));
        let currency = self.account.currency;
        let transactions: Vec<statement::Transaction> =
            store::banks::booked_since(ctx.db, household, self.account.id, from)
                .or_internal()?
                .into_iter()
                .enumerate()
                .map(|(line, (date, amount_minor, description))| statement::Transaction {
                    line: line + 1,
                    date,
                    amount_minor,
                    currency,
                    description,
                })
                .collect();
        let subscriptions = store::subscriptions::list(ctx.db, household, None).or_internal()?;
        let now = ctx.now_text();
        for candidate in statement::recurring::detect(&transactions) {
            let known = subscriptions.iter().any(|s| {
                statement::merchant::key(&s.name) == candidate.merchant
                    && s.currency == candidate.currency
            });
            if known
                || !candidate.active
                || candidate.confidence < ops::import::DEFAULT_MIN_CONFIDENCE
            {
                continue;
            }
            let name: String = candidate.name.chars().take(ops::limits::NAME).collect();
            let proposal = store::banks::NewProposal {
                account_id: self.account.id,
                merchant: &candidate.merchant,
                name: &name,
                amount_minor: candidate.amount_minor,
                currency: candidate.currency.code(),
                cycle: candidate.cycle.as_str(),
                amount_varies: candidate.amount_varies,
                next_expected: candidate.next_expected,
            };
            store::banks::put_proposal(ctx.db, household, &proposal, &now).or_internal()?;
        }
        Ok(())
    }

    /// Changes a recorded transaction to what the bank now says: booked when it was pending
    /// (never pending again once booked), with the bank's day and amount. Whether it changed.
    fn update(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: i64,
        t: &RemoteTransaction,
    ) -> Result<bool, OpError> {
        let household = ctx.household_id();
        let Ok(mut row) =
            store::ledger::get_transaction(ctx.db, household, self.connection.member_id, id)
        else {
            return Ok(false);
        };
        if t.pending && !row.pending {
            return Ok(false);
        }
        // A split's parts add up to its amount, which the person set: kept.
        let amount = if row.splits.is_empty() { t.amount_minor } else { row.amount_minor };
        if row.pending == t.pending && row.on_date == t.on && row.amount_minor == amount {
            return Ok(false);
        }
        let before = ctx.snapshot(EntityKind::Transaction, id)?;
        let booked = row.pending && !t.pending;
        row.pending = t.pending;
        row.on_date = t.on;
        row.amount_minor = amount;
        store::ledger::update_transaction(ctx.db, &row, &ctx.now_text()).or_internal()?;
        let summary = if booked {
            Text::new("The bank booked the pending transaction of {amount} with {payee} on {date}")
        } else {
            Text::new("The bank changed the transaction with {payee} to {amount} on {date}")
        };
        ctx.record(
            EntityKind::Transaction,
            id,
            before,
            summary
                .with_money("amount", Money::new(row.amount_minor, row.currency))
                .with("payee", &row.payee)
                .with("date", IsoDate(row.on_date)),
        )?;
        Ok(true)
    }

    /// Removes the pending transactions of the window the bank no longer shows: dropped, or
    /// booked under an id no rule could tie to them.
    fn drop_gone_pending(
        &mut self,
        ctx: &mut Ctx<'_>,
        rows: &[&RemoteTransaction],
        window_from: Option<Date>,
    ) -> Result<(), OpError> {
        let Some(window_from) = window_from else { return Ok(()) };
        let shown: HashSet<&str> = rows.iter().map(|t| t.key.as_str()).collect();
        let household = ctx.household_id();
        for (key, id) in store::banks::pending_keys(ctx.db, self.bank_account_id).or_internal()? {
            if shown.contains(key.as_str()) {
                continue;
            }
            let Ok(row) =
                store::ledger::get_transaction(ctx.db, household, self.connection.member_id, id)
            else {
                continue;
            };
            if row.on_date < window_from {
                continue;
            }
            let before = ctx.snapshot(EntityKind::Transaction, id)?;
            store::ledger::delete_transaction(ctx.db, household, id).or_internal()?;
            ctx.record(
                EntityKind::Transaction,
                id,
                before,
                Text::new("The bank no longer shows the pending transaction of {amount} with {payee} on {date}")
                    .with_money("amount", Money::new(row.amount_minor, row.currency))
                    .with("payee", &row.payee)
                    .with("date", IsoDate(row.on_date)),
            )?;
            self.applied.pending_dropped += 1;
        }
        Ok(())
    }

    /// What follows the additions to one account: the import recorded (an undo removes it),
    /// rules run, and booked payments matched to the charges they paid.
    fn finish(
        &mut self,
        ctx: &mut Ctx<'_>,
        import_id: i64,
        added: u64,
        rows: &[&RemoteTransaction],
    ) -> Result<(), OpError> {
        store::banks::finish_import(ctx.db, import_id, added).or_internal()?;
        self.applied.added += added;
        ctx.record(
            EntityKind::Import,
            import_id,
            None,
            Text::new("The bank connection {bank} brought {count} transactions into {name}")
                .with("bank", &self.connection.name)
                .with("count", added)
                .with("name", &self.account.name),
        )?;
        rules::apply_to_import(ctx, import_id)?;
        let booked = rows.iter().filter(|t| !t.pending).map(|t| t.on);
        let (Some(from), Some(to)) = (booked.clone().min(), booked.max()) else { return Ok(()) };
        let household = ctx.household_id();
        for proposal in charge_matching::propose(ctx, import_id, from, to)? {
            let Ok(row) = store::ledger::get_transaction(
                ctx.db,
                household,
                self.connection.member_id,
                proposal.transaction_id,
            ) else {
                continue;
            };
            if row.pending {
                continue;
            }
            let Ok(charge) = store::charges::get(
                ctx.db,
                household,
                Some(self.connection.member_id),
                proposal.charge_id,
            ) else {
                continue;
            };
            charge_matching::pay(ctx, &row, charge)?;
            self.applied.matched += 1;
        }
        Ok(())
    }
}

/// A booked row with a new id: the transaction already recorded that it is, by the rules of
/// the module's documentation, when there is one.
fn find(
    known: &[store::banks::KnownRow],
    claimed: &HashSet<i64>,
    t: &RemoteTransaction,
) -> Option<Found> {
    let open = |k: &&store::banks::KnownRow| !claimed.contains(&k.id);
    let pending: Vec<&store::banks::KnownRow> = known
        .iter()
        .filter(open)
        .filter(|k| k.pending && k.from_bank && k.amount_minor == t.amount_minor)
        .filter(|k| k.on_date <= t.on && days_apart(k.on_date, t.on) <= PENDING_BOOKED_DAYS)
        .collect();
    if let [one] = pending.as_slice() {
        return Some(Found::Posted(one.id));
    }
    if !pending.is_empty() {
        // Several could be it: added beside them, for the person to tell apart.
        return None;
    }
    let description = bounded(&t.description);
    if let Some(reissued) = known.iter().filter(open).find(|k| {
        !k.pending
            && k.from_bank
            && k.on_date == t.on
            && k.amount_minor == t.amount_minor
            && domain::names::fold(&k.description) == domain::names::fold(&description)
    }) {
        return Some(Found::Reissued(reissued.id));
    }
    known
        .iter()
        .filter(open)
        .filter(|k| !k.pending && !k.from_bank && k.amount_minor == t.amount_minor)
        .filter(|k| days_apart(k.on_date, t.on) <= STATEMENT_DAYS)
        .min_by_key(|k| days_apart(k.on_date, t.on))
        .map(|k| Found::FromStatement(k.id))
}
