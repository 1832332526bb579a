//! Tokens, connected apps (OAuth grants), settings and export.

use domain::{Text, entities::EntityKind};
use ops::{
    OpError, Scope, ToolSet,
    access::*,
    common::{ExchangeRate, IdInput, Timestamp},
    household::Empty,
};
use store::access::TokenRow;

use crate::{credentials, ctx::Ctx, input, transactions::StoreExt, views};

fn token_view(row: &TokenRow) -> Result<Token, OpError> {
    Ok(Token {
        id: row.id,
        name: row.name.clone(),
        prefix: row.prefix.clone(),
        scope: Scope::parse(&row.scope).unwrap_or(Scope::Read),
        tools: ToolSet::parse(&row.tools).unwrap_or(ToolSet::Full),
        created_at: views::timestamp(&row.created_at)?,
        last_used_at: row.last_used_at.as_deref().map(views::timestamp).transpose()?,
        expires_at: row.expires_at.as_deref().map(views::timestamp).transpose()?,
        revoked_at: row.revoked_at.as_deref().map(views::timestamp).transpose()?,
    })
}

pub(crate) fn list_tokens(ctx: &mut Ctx<'_>, _: Empty) -> Result<TokenList, OpError> {
    let rows = store::access::list_tokens(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    Ok(TokenList { items: rows.iter().map(token_view).collect::<Result<_, _>>()? })
}

pub(crate) fn create_token(
    ctx: &mut Ctx<'_>,
    input: CreateTokenInput,
) -> Result<CreatedToken, OpError> {
    ctx.check_cap(store::households::Counted::Tokens, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?;
    let expires_at = match input.expires_in_days {
        None => None,
        Some(days) if (1..=ops::limits::TOKEN_DAYS).contains(&days) => {
            let at = ctx
                .now
                .checked_add(jiff::SignedDuration::from_hours(24 * i64::from(days)))
                .map_err(|_| OpError::Internal)?;
            Some(crate::clock::timestamp_text(at))
        }
        Some(_) => {
            return Err(OpError::invalid(
                "/expires_in_days",
                Text::new("expires_in_days must be between 1 and {max}.")
                    .with("max", ops::limits::TOKEN_DAYS),
            ));
        }
    };
    let secret = credentials::new_secret("exh")?;
    let prefix: String = secret.chars().take(12).collect();
    let id = store::access::insert_token(
        ctx.db,
        &store::access::NewToken {
            household_id: ctx.household_id(),
            member_id: ctx.me(),
            name: &name,
            prefix: &prefix,
            hash: &credentials::hash_token(&secret),
            scope: input.scope.as_str(),
            tools: input.tools.unwrap_or(ToolSet::DEFAULT).as_str(),
            expires_at: expires_at.as_deref(),
        },
        &ctx.now_text(),
    )
    .or_internal()?;
    ctx.record(
        EntityKind::Token,
        id,
        None,
        Text::new("Created token {name} ({scope})")
            .with("name", &name)
            .with("scope", input.scope.as_str()),
    )?;
    let row = store::access::get_token(ctx.db, ctx.household_id(), ctx.me(), id).or_internal()?;
    Ok(CreatedToken { token: token_view(&row)?, secret })
}

pub(crate) fn revoke_token(ctx: &mut Ctx<'_>, input: IdInput) -> Result<Token, OpError> {
    let row = store::access::get_token(ctx.db, ctx.household_id(), ctx.me(), input.id.get())
        .or_not_found(|| {
            Text::new("No token of yours with id {id}. Call list_tokens.").with("id", input.id)
        })?;
    revoke_tokens_row(ctx, row.id, Text::new("Revoked token {name}").with("name", &row.name))?;
    let row =
        store::access::get_token(ctx.db, ctx.household_id(), ctx.me(), row.id).or_internal()?;
    token_view(&row)
}

/// Revokes a row of `tokens` (an API token or a connected app's grant) as one audited,
/// undoable change.
fn revoke_tokens_row(ctx: &mut Ctx<'_>, id: i64, summary: Text) -> Result<(), OpError> {
    let before = ctx.snapshot(EntityKind::Token, id)?;
    store::access::revoke_token(ctx.db, id, &ctx.now_text()).or_internal()?;
    ctx.record(EntityKind::Token, id, before, summary)
}

/// A grant as its person sees it, with the scope it acts with now.
fn connected_app_view(
    row: &store::oauth::GrantRow,
    trusted_apps: bool,
) -> Result<ConnectedApp, OpError> {
    let granted = Scope::parse(&row.scope).ok_or(OpError::Internal)?;
    Ok(ConnectedApp {
        id: row.id,
        name: row.name.clone(),
        scope: ops::oauth::app_scope(granted, trusted_apps),
        tools: ToolSet::parse(&row.tools).ok_or(OpError::Internal)?,
        connected_at: views::timestamp(&row.created_at)?,
        last_used_at: row.last_used_at.as_deref().map(views::timestamp).transpose()?,
        revoked_at: row.revoked_at.as_deref().map(views::timestamp).transpose()?,
    })
}

pub(crate) fn list_connected_apps(
    ctx: &mut Ctx<'_>,
    _: Empty,
) -> Result<ConnectedAppList, OpError> {
    let rows = store::oauth::list_grants(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    let trusted_apps = ctx.household.trusted_apps;
    let items = rows.iter().map(|row| connected_app_view(row, trusted_apps));
    Ok(ConnectedAppList { items: items.collect::<Result<_, _>>()? })
}

/// The caller's own grant with this id; a grant is a row of `tokens`, revoked as a token is
/// (its access and refresh tokens check it on every use), so undo brings it back.
pub(crate) fn revoke_connected_app(
    ctx: &mut Ctx<'_>,
    input: IdInput,
) -> Result<ConnectedApp, OpError> {
    let not_found = || {
        OpError::not_found(
            Text::new("No connected app of yours with id {id}. Call list_connected_apps.")
                .with("id", input.id),
        )
    };
    let row = store::oauth::get_grant(ctx.db, input.id.get())
        .or_internal()?
        .filter(|g| g.household_id == ctx.household_id() && g.member_id == ctx.me())
        .ok_or_else(not_found)?;
    revoke_tokens_row(
        ctx,
        row.id,
        Text::new("Disconnected the app {name}").with("name", &row.name),
    )?;
    let row = store::oauth::get_grant(ctx.db, row.id).or_internal()?.ok_or(OpError::Internal)?;
    connected_app_view(&row, ctx.household.trusted_apps)
}

/// The caller's own token or connected app, live, lists another tool set.
pub(crate) fn set_token_tools(
    ctx: &mut Ctx<'_>,
    input: SetTokenToolsInput,
) -> Result<TokenTools, OpError> {
    let id = input.id.get();
    // A token, else a connected app: both are rows of `tokens`, with one sequence of ids.
    let own = match store::access::get_token(ctx.db, ctx.household_id(), ctx.me(), id) {
        Ok(row) => Some((row.id, row.name, row.tools, row.revoked_at)),
        Err(store::StoreError::NotFound) => store::oauth::get_grant(ctx.db, id)
            .or_internal()?
            .filter(|g| g.household_id == ctx.household_id() && g.member_id == ctx.me())
            .map(|g| (g.id, g.name, g.tools, g.revoked_at)),
        Err(err) => return Err(crate::transactions::internal(err)),
    };
    let Some((id, name, tools, revoked_at)) = own else {
        return Err(OpError::not_found(
            Text::new("No token or connected app of yours with id {id}. Call list_tokens or list_connected_apps.")
                .with("id", id),
        ));
    };
    if revoked_at.is_some() {
        return Err(OpError::conflict(
            Text::new("{name} no longer has access; it lists no tools.").with("name", &name),
        ));
    }
    if tools != input.tools.as_str() {
        let before = ctx.snapshot(EntityKind::Token, id)?;
        store::access::set_token_tools(ctx.db, id, input.tools.as_str()).or_internal()?;
        ctx.record(
            EntityKind::Token,
            id,
            before,
            match input.tools {
                ToolSet::Full => Text::new("{name} lists every tool"),
                ToolSet::Subscriptions => Text::new("{name} lists the subscription tools"),
                ToolSet::Compact => Text::new("{name} lists the compact tools"),
            }
            .with("name", &name),
        )?;
    }
    Ok(TokenTools { id, name, tools: input.tools })
}

fn settings_view(ctx: &Ctx<'_>) -> Result<Settings, OpError> {
    let rates = store::households::exchange_rates(ctx.db, ctx.household_id()).or_internal()?;
    let secrets = store::access::secret_names(ctx.db, ctx.household_id()).or_internal()?;
    Ok(Settings {
        exchange_rates: rates
            .into_iter()
            .map(|(currency, micros)| (currency.into(), ExchangeRate::from_micros(micros)))
            .collect(),
        reminder_days_before: u32::try_from(ctx.household.reminder_days_before).unwrap_or_default(),
        secrets: secrets.into_iter().map(|name| SecretSetting { name, is_set: true }).collect(),
        trusted_apps: ctx.household.trusted_apps,
        reminders: crate::reminders::settings_view(ctx)?,
    })
}

pub(crate) fn get_settings(ctx: &mut Ctx<'_>, _: Empty) -> Result<Settings, OpError> {
    settings_view(ctx)
}

pub(crate) fn update_settings(
    ctx: &mut Ctx<'_>,
    input: UpdateSettingsInput,
) -> Result<Settings, OpError> {
    let before = ctx.snapshot(EntityKind::Household, ctx.household_id())?;
    for (code, rate) in &input.exchange_rates {
        let pointer = format!("/exchange_rates/{code}");
        let currency = code.currency();
        if currency == ctx.household.currency {
            return Err(OpError::invalid(
                &pointer,
                Text::new("{code} is the main currency; it needs no rate.").with("code", code),
            ));
        }
        let rate = rate.map(ExchangeRate::micros);
        store::households::set_exchange_rate(ctx.db, ctx.household_id(), currency, rate)
            .or_internal()?;
    }
    if let Some(days) = input.reminder_days_before {
        if days > ops::limits::REMINDER_DAYS {
            return Err(OpError::invalid(
                "/reminder_days_before",
                Text::new("reminder_days_before must be between 0 and {max}.")
                    .with("max", ops::limits::REMINDER_DAYS),
            ));
        }
        ctx.household.reminder_days_before = i64::from(days);
        store::households::update_household(ctx.db, &ctx.household).or_internal()?;
        // Members on the household's default are reminded on the new day.
        crate::reminders::replan_household(ctx.db, &ctx.household, ctx.now).or_internal()?;
    }
    ctx.record(
        EntityKind::Household,
        ctx.household_id(),
        before,
        Text::new("Updated exchange rates and reminders"),
    )?;
    settings_view(ctx)
}

pub(crate) fn allow_trusted_apps(
    ctx: &mut Ctx<'_>,
    input: AllowTrustedAppsInput,
) -> Result<Settings, OpError> {
    let before = ctx.snapshot(EntityKind::Household, ctx.household_id())?;
    ctx.household.trusted_apps = input.allowed;
    store::households::update_household(ctx.db, &ctx.household).or_internal()?;
    let summary = if input.allowed {
        Text::new("Let connected apps be trusted")
    } else {
        Text::new("Stopped connected apps being trusted")
    };
    ctx.record(EntityKind::Household, ctx.household_id(), before, summary)?;
    settings_view(ctx)
}

pub(crate) fn export_data(ctx: &mut Ctx<'_>, _: Empty) -> Result<Export, OpError> {
    let rows =
        store::subscriptions::list(ctx.db, ctx.household_id(), Some(ctx.me())).or_internal()?;
    let subscriptions =
        rows.iter().map(|row| views::subscription_detail(ctx, row)).collect::<Result<_, _>>()?;
    let filter = store::charges::ChargeFilter::default();
    let (charge_rows, _) =
        store::charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, u32::MAX, 0)
            .or_internal()?;
    let (household, me) = (ctx.household_id(), ctx.me());
    let accounts = store::ledger::list_accounts(ctx.db, household, me).or_internal()?;
    let mut balances = Vec::new();
    for account in &accounts {
        for (on, minor) in store::ledger::balances(ctx.db, account.id).or_internal()? {
            balances.push(ops::access::BalanceRecord {
                account_id: account.id,
                on: ops::resolve::IsoDate(on),
                balance: views::amount(minor, account.currency),
            });
        }
    }
    let labels = store::ledger::list_labels(ctx.db, household, me).or_internal()?;
    // Pages of a thousand, as a search reads them: a label list per page, not per row.
    let everything = store::ledger::TransactionFilter::default();
    let mut transactions = Vec::new();
    let mut after = None;
    loop {
        let page =
            store::ledger::search_transactions(ctx.db, household, me, &everything, 1000, after)
                .or_internal()?;
        after = page.last().map(store::ledger::After::of);
        transactions.extend(page.iter().map(views::transaction_view));
        if page.len() < 1000 {
            break;
        }
    }
    let budgets = store::budgets::list_budgets(ctx.db, household)
        .or_internal()?
        .iter()
        .map(|row| crate::budget_periods::budget_view(ctx, row))
        .collect::<Result<_, _>>()?;
    let rules = store::rules::list_rules(ctx.db, household, me).or_internal()?;
    Ok(Export {
        accounts: accounts.iter().map(views::account_view).collect(),
        balances,
        labels: labels.iter().map(views::label_view).collect(),
        transactions,
        budgets,
        rules: rules.iter().map(views::rule_view).collect(),
        exported_at: Timestamp(ctx.now),
        household: views::household_view(ctx),
        members: views::members(ctx)?,
        settings: settings_view(ctx)?,
        categories: views::categories(ctx)?,
        payment_methods: views::payment_methods(ctx)?,
        tags: views::tags(ctx)?,
        subscriptions,
        charges: charge_rows.iter().map(views::charge_view).collect(),
    })
}
