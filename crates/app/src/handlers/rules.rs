//! Rule handlers: what a rule may hold (at least one condition that can hold, at least one
//! action), and running one over history as a preview or for real, each change recorded.
//!
//! A rule whose condition is another member's private account is that member's: "not found"
//! for everyone else, like the account.

use domain::{Text, entities::EntityKind};
use ops::{
    OpError,
    common::{IdInput, Ref},
    household::{Empty, Removed},
    rules::*,
};
use store::{ledger::TransactionRow, rules::RuleRow};

use crate::{
    ctx::Ctx,
    input,
    refs::{check_account, check_category, check_labels},
    transactions::StoreExt,
    views,
};

/// How many transactions a preview shows.
const SAMPLE: usize = 10;

fn load_rule(ctx: &Ctx<'_>, id: i64) -> Result<RuleRow, OpError> {
    store::rules::get_rule(ctx.db, ctx.household_id(), ctx.me(), id)
        .or_not_found(|| ctx.unknown(EntityKind::Rule, id))
}

fn check_unique_name(ctx: &Ctx<'_>, name: &str, except: Option<i64>) -> Result<(), OpError> {
    match store::rules::find_rule(ctx.db, ctx.household_id(), name).or_internal()? {
        Some(id) if Some(id) != except => {
            // Names are unique in the household, but a rule on another member's private
            // account is theirs: its id is not said.
            let seen = store::rules::get_rule(ctx.db, ctx.household_id(), ctx.me(), id).is_ok();
            let message = if seen {
                Text::new("A rule named {name} exists (id {id}). Choose another name, or change that one with update_rule.")
                    .with("id", id)
            } else {
                Text::new("The household has a rule named {name} already. Choose another name.")
            };
            Err(OpError::conflict(message.with("name", name)))
        }
        _ => Ok(()),
    }
}

fn text_condition(pointer: &str, text: Option<&str>) -> Result<Option<String>, OpError> {
    match text.map(str::trim) {
        None => Ok(None),
        Some("") => Err(OpError::invalid(
            pointer,
            Text::new(
                "An empty text matches everything; leave the condition out, or write part of the text.",
            ),
        )),
        Some(text) => Ok(Some(input::clean_name(pointer, text, ops::limits::SHORT_NAME)?)),
    }
}

/// The conditions and actions, checked: at least one of each, and conditions that can hold
/// together, so no rule is kept that could never match.
fn checked_fields(ctx: &Ctx<'_>, name: String, fields: &RuleFields) -> Result<RuleRow, OpError> {
    let payee_contains = text_condition("/payee_contains", fields.payee_contains.as_deref())?;
    let description_contains =
        text_condition("/description_contains", fields.description_contains.as_deref())?;
    let min_milli = fields.min_amount.map(|a| input::milli_bound("/min_amount", a)).transpose()?;
    let max_milli = fields.max_amount.map(|a| input::milli_bound("/max_amount", a)).transpose()?;
    if let (Some(min), Some(max)) = (min_milli, max_milli)
        && min > max
    {
        return Err(OpError::invalid(
            "/max_amount",
            Text::new(
                "max_amount is below min_amount, so the rule could never match. Amounts are signed: money out of 20 to 50 is min_amount \"-50\", max_amount \"-20\".",
            ),
        ));
    }
    let account = fields
        .account_id
        .map(|id| check_account(ctx, "/account_id", id).map(|a| (a.id, a.name)))
        .transpose()?;
    if payee_contains.is_none()
        && description_contains.is_none()
        && min_milli.is_none()
        && max_milli.is_none()
        && account.is_none()
    {
        return Err(OpError::invalid(
            "/payee_contains",
            Text::new(
                "A rule needs at least one condition (payee_contains, description_contains, min_amount, max_amount or account_id); to change every transaction use categorise_transactions.",
            ),
        ));
    }
    let set_category = fields
        .set_category_id
        .map(|id| {
            let id = check_category(ctx, "/set_category_id", id)?;
            let found = store::organise::get_category(ctx.db, ctx.household_id(), None, id)
                .or_internal()?;
            Ok::<_, OpError>((id, found.name))
        })
        .transpose()?;
    if fields.add_label_ids.len() > ops::limits::TAGS {
        return Err(OpError::invalid(
            "/add_label_ids",
            Text::new("At most {max} labels.").with("max", ops::limits::TAGS),
        ));
    }
    let labels: Vec<(i64, String)> = check_labels(ctx, "/add_label_ids", &fields.add_label_ids)?
        .into_iter()
        .map(|id| (id, String::new()))
        .collect();
    if set_category.is_none() && labels.is_empty() {
        return Err(OpError::invalid(
            "/set_category_id",
            Text::new("A rule needs something to do: set_category_id, add_label_ids or both."),
        ));
    }
    Ok(RuleRow {
        id: 0,
        household_id: ctx.household_id(),
        name,
        payee_contains,
        description_contains,
        min_milli,
        max_milli,
        account,
        set_category,
        labels,
    })
}

pub(crate) fn list_rules(ctx: &mut Ctx<'_>, _: Empty) -> Result<RuleList, OpError> {
    let rows = store::rules::list_rules(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    Ok(RuleList { items: rows.iter().map(views::rule_view).collect() })
}

pub(crate) fn create_rule(ctx: &mut Ctx<'_>, input: CreateRuleInput) -> Result<Rule, OpError> {
    ctx.check_cap(store::households::Counted::Rules, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?;
    check_unique_name(ctx, &name, None)?;
    let row = checked_fields(ctx, name, &input.fields)?;
    let id = store::rules::insert_rule(ctx.db, &row, &ctx.now_text()).or_internal()?;
    ctx.record(EntityKind::Rule, id, None, Text::new("Added rule {name}").with("name", &row.name))?;
    Ok(views::rule_view(&load_rule(ctx, id)?))
}

pub(crate) fn update_rule(ctx: &mut Ctx<'_>, input: UpdateRuleInput) -> Result<Rule, OpError> {
    let current = load_rule(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Rule, current.id)?;
    let name = match &input.name {
        Some(name) => {
            let name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
            check_unique_name(ctx, &name, Some(current.id))?;
            name
        }
        None => current.name.clone(),
    };
    let mut row = match &input.rule {
        Some(fields) => checked_fields(ctx, name, fields)?,
        None => RuleRow { name, ..current.clone() },
    };
    row.id = current.id;
    store::rules::update_rule(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::Rule,
        row.id,
        before,
        Text::new("Updated rule {name}").with("name", &row.name),
    )?;
    Ok(views::rule_view(&load_rule(ctx, row.id)?))
}

pub(crate) fn delete_rule(
    ctx: &mut Ctx<'_>,
    input: IdInput<ops::resolve::RuleId>,
) -> Result<Removed, OpError> {
    let row = load_rule(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Rule, row.id)?;
    store::rules::delete_rule(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Rule,
        row.id,
        before,
        Text::new("Deleted rule {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}

/// Whether the rule changes this transaction: another category, or a label it lacks.
fn changes(rule: &RuleRow, row: &TransactionRow) -> bool {
    let category = rule.set_category.as_ref().is_some_and(|(id, _)| row.category_id != Some(*id));
    let label = rule.labels.iter().any(|(id, _)| !row.labels.iter().any(|(l, _)| l == id));
    category || label
}

pub(crate) fn apply_rule(ctx: &mut Ctx<'_>, input: ApplyRuleInput) -> Result<RuleRun, OpError> {
    let rule = load_rule(ctx, input.id.get())?;
    let filter = crate::rules::filter_of(&rule);
    let (household, me) = (ctx.household_id(), ctx.me());
    // Pages of a thousand, newest first: one walk counts the matches and those it changes,
    // and keeps the changes up to the cap.
    let mut changed: Vec<TransactionRow> = Vec::new();
    let mut would_change = 0u64;
    let mut matched = 0u64;
    let mut after = None;
    loop {
        let page = store::ledger::search_transactions(ctx.db, household, me, &filter, 1000, after)
            .or_internal()?;
        matched += page.len() as u64;
        after = page.last().map(store::ledger::After::of);
        for row in page.iter().filter(|row| changes(&rule, row)) {
            would_change += 1;
            if (changed.len() as u64) < ops::limits::RULE_CHANGES {
                changed.push(row.clone());
            }
        }
        if page.len() < 1000 {
            break;
        }
    }
    let sample = changed.iter().take(SAMPLE).map(views::transaction_view).collect();
    let apply = input.apply.unwrap_or(false);
    if apply {
        let labels: Vec<i64> = rule.labels.iter().map(|(id, _)| *id).collect();
        for row in &changed {
            let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
            let mut updated = row.clone();
            if let Some((category, _)) = &rule.set_category {
                updated.category_id = Some(*category);
            }
            store::ledger::update_transaction(ctx.db, &updated, &ctx.now_text()).or_internal()?;
            let mut now: Vec<i64> = row.labels.iter().map(|(id, _)| *id).collect();
            let missing: Vec<i64> = labels.iter().copied().filter(|l| !now.contains(l)).collect();
            now.extend(missing);
            store::ledger::set_transaction_labels(ctx.db, row.id, &now).or_internal()?;
            ctx.record(
                EntityKind::Transaction,
                row.id,
                before,
                Text::new("Rule {rule} changed a transaction of {payee}")
                    .with("rule", &rule.name)
                    .with("payee", &row.payee),
            )?;
        }
    }
    let done = changed.len() as u64;
    Ok(RuleRun {
        rule: Ref { id: rule.id, name: rule.name },
        matched,
        affected: would_change,
        applied: apply,
        // A preview counts what a run would leave too, so the person is told before.
        remaining: would_change - done,
        sample,
    })
}
