//! Turning rows into the catalog's output types, and parsing the catalog's input values into
//! domain values with errors that point at the field.

use domain::{
    Currency, Cycle, CycleUnit, Date, Money, PauseSpan, PricePoint, Series, Text,
    entities::{SubscriptionStatus, Visibility},
    validate,
};
use ops::{
    OpError,
    common::{Amount, CycleInput, CycleOutput, Ref},
    subscriptions::Subscription,
};
use store::subscriptions::SubscriptionRow;

use crate::ctx::invalid;

pub(crate) const MAX_NAME: usize = 100;
pub(crate) const MAX_NOTES: usize = 2000;
pub(crate) const MAX_TAG: usize = 40;
pub(crate) const MAX_TAGS: usize = 20;

/// 'YYYY-MM-DD' without the general formatter, which shows in list profiles.
pub(crate) fn date_text(date: Date) -> String {
    fn push(out: &mut String, value: i32, width: u32) {
        for position in (0..width).rev() {
            out.push(char::from(b'0' + ((value / 10_i32.pow(position)) % 10) as u8));
        }
    }
    let mut out = String::with_capacity(10);
    push(&mut out, i32::from(date.year()), 4);
    out.push('-');
    push(&mut out, i32::from(date.month()), 2);
    out.push('-');
    push(&mut out, i32::from(date.day()), 2);
    out
}

pub(crate) fn amount(minor: i64, currency: Currency) -> Amount {
    let money = Money::new(minor, currency);
    Amount {
        amount: money.to_decimal_string(),
        currency: currency.code().into(),
        display: money.display(),
    }
}

pub(crate) fn cycle_output(cycle: Cycle) -> CycleOutput {
    CycleOutput {
        every: i64::from(cycle.every()),
        unit: cycle.unit().as_str().into(),
        preset: cycle.preset_name().map(Into::into),
        description: cycle.describe(),
    }
}

pub(crate) fn parse_cycle(pointer: &str, input: &CycleInput) -> Result<Cycle, OpError> {
    match input {
        CycleInput::Preset(name) => Cycle::preset(name).ok_or_else(|| {
            invalid(
                pointer,
                Text::new("{name} is not a cycle preset. Use weekly, every_two_weeks, monthly, every_two_months, quarterly, every_six_months or yearly, or {\"every\": 3, \"unit\": \"month\"}.")
                    .with("name", name),
            )
        }),
        CycleInput::Custom { every, unit } => {
            let unit = CycleUnit::parse(unit).ok_or_else(|| {
                invalid(&format!("{pointer}/unit"), Text::new("{unit} is not a cycle unit; use day, week, month or year.").with("unit", unit))
            })?;
            Cycle::new(*every, unit).map_err(|err| invalid(&format!("{pointer}/every"), Text::new("{error}.").with("error", err)))
        }
    }
}

pub(crate) fn parse_currency(pointer: &str, code: &str) -> Result<Currency, OpError> {
    Currency::parse(code).map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))
}

/// A non-negative amount in the currency, within range.
pub(crate) fn parse_amount(pointer: &str, text: &str, currency: Currency) -> Result<i64, OpError> {
    let money = Money::parse(text, currency)
        .map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))?;
    if money.minor() < 0 {
        return Err(invalid(
            pointer,
            Text::new(
                "The amount cannot be negative; write the price as a positive decimal such as \"12.99\".",
            ),
        ));
    }
    Ok(money.minor())
}

pub(crate) fn parse_date(pointer: &str, text: &str) -> Result<Date, OpError> {
    validate::parse_date(text)
        .map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn parse_opt_date(pointer: &str, text: Option<&str>) -> Result<Option<Date>, OpError> {
    text.map(|t| parse_date(pointer, t)).transpose()
}

pub(crate) fn clean_name(pointer: &str, text: &str, max: usize) -> Result<String, OpError> {
    validate::clean_line(text, max)
        .map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn clean_notes(pointer: &str, text: &str) -> Result<String, OpError> {
    validate::clean_multiline(text, MAX_NOTES)
        .map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn clean_url(pointer: &str, text: &str) -> Result<String, OpError> {
    validate::clean_url(text)
        .map_err(|err| invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn parse_visibility(pointer: &str, text: &str) -> Result<Visibility, OpError> {
    Visibility::parse(text).ok_or_else(|| {
        invalid(
            pointer,
            Text::new("{value} is not a visibility; use household or private.").with("value", text),
        )
    })
}

/// Tags cleaned, de-duplicated ignoring case, and sorted.
pub(crate) fn clean_tags(pointer: &str, tags: &[String]) -> Result<Vec<String>, OpError> {
    if tags.len() > MAX_TAGS {
        return Err(invalid(
            pointer,
            Text::new("At most {max} tags per subscription.").with("max", MAX_TAGS),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for (i, tag) in tags.iter().enumerate() {
        let tag = clean_name(&format!("{pointer}/{i}"), tag, MAX_TAG)?;
        if !out.iter().any(|t| t.to_lowercase() == tag.to_lowercase()) {
            out.push(tag);
        }
    }
    out.sort_by_key(|t| t.to_lowercase());
    Ok(out)
}

/// Owned pauses and prices of a subscription, to build its `Series`.
pub(crate) struct SeriesParts {
    pauses: Vec<PauseSpan>,
    prices: Vec<PricePoint>,
}

impl SeriesParts {
    pub(crate) fn of(row: &SubscriptionRow) -> Self {
        Self {
            pauses: row.pauses.iter().map(|p| PauseSpan { from: p.from, until: p.until }).collect(),
            prices: row
                .prices
                .iter()
                .map(|&(effective_on, minor)| PricePoint { effective_on, minor })
                .collect(),
        }
    }

    pub(crate) fn series<'a>(&'a self, row: &SubscriptionRow) -> Series<'a> {
        Series {
            anchor: row.anchor_on,
            cycle: row.cycle,
            end_on: row.ends_on,
            pauses: &self.pauses,
            prices: &self.prices,
        }
    }
}

/// The status a person would expect today: a trial that has ended is active, a pause that
/// has ended is over.
pub(crate) fn effective_status(row: &SubscriptionRow, today: Date) -> SubscriptionStatus {
    match row.status {
        SubscriptionStatus::Trial if row.trial_ends_on.is_some_and(|end| end <= today) => {
            SubscriptionStatus::Active
        }
        SubscriptionStatus::Paused
            if !row.pauses.iter().any(|p| p.from <= today && p.until.is_none_or(|u| u > today)) =>
        {
            if row.pauses.iter().any(|p| p.from > today) {
                SubscriptionStatus::Paused
            } else {
                SubscriptionStatus::Active
            }
        }
        status => status,
    }
}

/// The price that applies today (or, before the first charge, the first price).
pub(crate) fn current_price(row: &SubscriptionRow, today: Date) -> i64 {
    let parts = SeriesParts::of(row);
    parts.series(row).amount_on(today.max(row.anchor_on))
}

pub(crate) fn subscription_view(row: &SubscriptionRow, today: Date) -> Subscription {
    let parts = SeriesParts::of(row);
    let series = parts.series(row);
    let price = series.amount_on(today.max(row.anchor_on));
    let next = if row.status == SubscriptionStatus::Cancelled && row.ends_on.is_none() {
        None
    } else {
        series.next_on_or_after(today)
    };
    let paused_until = row
        .pauses
        .iter()
        .filter(|p| p.until.is_none_or(|u| u > today))
        .find(|p| p.from <= today)
        .and_then(|p| p.until);
    Subscription {
        id: row.id,
        name: row.name.clone(),
        url: row.url.clone(),
        notes: row.notes.clone(),
        price: amount(price, row.currency),
        cycle: cycle_output(row.cycle),
        status: effective_status(row, today).as_str().into(),
        anchor_on: date_text(row.anchor_on),
        next_charge_on: next.map(|o| date_text(o.date)),
        next_charge_amount: next.map(|o| amount(o.minor, row.currency)),
        trial_ends_on: row.trial_ends_on.map(date_text),
        ends_on: row.ends_on.map(date_text),
        paused_until: paused_until.map(date_text),
        category: row.category_id.zip(row.category_name.clone()).map(|(id, name)| Ref { id, name }),
        payment_method: payment_method_ref(row),
        tags: row.tags.clone(),
        owner: Ref { id: row.owner_id, name: row.owner_name.clone() },
        visibility: row.visibility.as_str().into(),
        monthly: amount(row.cycle.monthly_minor(price), row.currency),
        yearly: amount(row.cycle.yearly_minor(price), row.currency),
    }
}

/// The payment method as the viewer may see it (None for another member's private card).
pub(crate) fn payment_method_ref(row: &SubscriptionRow) -> Option<Ref> {
    row.payment_method_id.zip(row.payment_method_name.clone()).map(|(id, name)| Ref { id, name })
}

/// A charge expected from a subscription's series.
pub(crate) fn projected_charge(
    row: &SubscriptionRow,
    occurrence: domain::Occurrence,
) -> ops::charges::ProjectedCharge {
    ops::charges::ProjectedCharge {
        subscription: Ref { id: row.id, name: row.name.clone() },
        charge_on: date_text(occurrence.date),
        amount: amount(occurrence.minor, row.currency),
        payment_method: payment_method_ref(row),
    }
}

pub(crate) fn not_found_subscription(id: i64) -> Text {
    Text::new("No subscription with id {id}. Call list_subscriptions to find ids.").with("id", id)
}
