//! Reminders: a member's preferences and how Settings shows them, planning the messages they ask for into the outbox, and
//! wording a message from the outbox at the moment it is sent (so "tomorrow" is true then, and
//! a subscription paused since planning gets nothing). Delivery itself is `outbox.rs`.
//!
//! A reminder is "N days before a charge at HH:MM local": the charge's civil date in the
//! household's zone, minus N civil days, at the member's time, converted to an instant the way
//! jiff resolves civil times (a time in a DST gap moves past it, one in a fold takes the earlier
//! instant), so 09:00 stays 09:00 on the wall across DST changes.

use domain::{Date, Language, Text, entities::SubscriptionStatus};
use jiff::{SignedDuration, Timestamp, ToSpan as _, tz::TimeZone};
use ops::{
    OpError,
    channels::{
        CalendarFeed, ChatBotStatus, Covers, Destination, DestinationKind, Digest, Link,
        MailSecurity, MailServer, Message, MessageKind, PlannedMessage, ReminderSettings,
    },
    common::{Ref, Timestamp as TimestampText},
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use store::{
    Db, StoreError,
    channels::{self as rows, DestinationRow, MessageRow, NewMessage, PreferencesRow},
    households::HouseholdRow,
    subscriptions::SubscriptionRow,
};

use crate::{clock, ctx::Ctx, transactions::StoreExt, views};

/// How far ahead of the longest "days before" reminders are planned (a week: the digest's).
const HORIZON_DAYS: i64 = 7;
/// A reminder planned after its time (a subscription added the evening before its charge) is
/// still sent when its time passed less than this long ago; older ones are not planned.
const LATE_HOURS: i64 = 24;
/// Finished messages are kept this long (their keys stop a repeat), then removed.
const KEEP_DAYS: i64 = 90;

/// A member's reminder preferences, read into types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Preferences {
    /// Largest first.
    pub(crate) days_before: Vec<u32>,
    pub(crate) hour: i8,
    pub(crate) minute: i8,
    pub(crate) covers: Covers,
    pub(crate) trial_endings: bool,
    pub(crate) card_expiry: bool,
    pub(crate) price_rises: bool,
    pub(crate) digest: Digest,
    pub(crate) new_recurring: bool,
}

impl Preferences {
    pub(crate) fn read(household: &HouseholdRow, row: Option<PreferencesRow>) -> Self {
        let row = row.unwrap_or_default();
        let default = vec![u32::try_from(household.reminder_days_before).unwrap_or(3)];
        let mut days_before: Vec<u32> = row
            .days_before
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or(default);
        days_before.sort_unstable_by(|a, b| b.cmp(a));
        days_before.dedup();
        let (hour, minute) = ops::channels::time_of_day(&row.time_of_day).unwrap_or((9, 0));
        Self {
            days_before,
            hour,
            minute,
            covers: Covers::parse(&row.covers).unwrap_or(Covers::Mine),
            trial_endings: row.trial_endings,
            card_expiry: row.card_expiry,
            price_rises: row.price_rises,
            digest: Digest::parse(&row.weekly_digest).unwrap_or(Digest::Off),
            new_recurring: row.new_recurring,
        }
    }

    pub(crate) fn time_of_day(&self) -> String {
        format!("{:02}:{:02}", self.hour, self.minute)
    }

    /// The instant of `hour:minute` on `date` in `zone`.
    fn at(&self, date: Date, zone: &TimeZone) -> Option<Timestamp> {
        date.at(self.hour, self.minute, 0, 0).to_zoned(zone.clone()).ok().map(|z| z.timestamp())
    }
}

/// What a planned message is about; stored as the outbox row's payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "about")]
pub(crate) enum About {
    Charge {
        subscription_id: i64,
        #[serde(with = "date_text")]
        charge_on: Date,
        days_before: u32,
    },
    Trial {
        subscription_id: i64,
        #[serde(with = "date_text")]
        ends_on: Date,
        days_before: u32,
    },
    Card {
        subscription_id: i64,
        #[serde(with = "date_text")]
        charge_on: Date,
        payment_method_id: i64,
    },
    Price {
        subscription_id: i64,
        #[serde(with = "date_text")]
        charge_on: Date,
    },
    Digest {
        #[serde(with = "date_text")]
        from: Date,
    },
    /// A bank's consent to a connection ends on `ends_on` (the household's day).
    BankConsent {
        connection_id: i64,
        #[serde(with = "date_text")]
        ends_on: Date,
    },
    /// A bank sync noticed a recurring charge.
    NewRecurring {
        proposal_id: i64,
    },
    Change {
        batch_id: String,
        by: String,
        summaries: Vec<String>,
        first_audit_id: Option<i64>,
    },
    Test,
}

/// Dates in payloads as `YYYY-MM-DD`.
mod date_text {
    use domain::Date;
    use serde::{Deserialize as _, Deserializer, Serializer, de};

    pub(super) fn serialize<S: Serializer>(date: &Date, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(date)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Date, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(de::Error::custom)
    }
}

impl About {
    fn kind(&self) -> MessageKind {
        match self {
            Self::Charge { .. } => MessageKind::ChargeUpcoming,
            Self::Trial { .. } => MessageKind::TrialEnding,
            Self::Card { .. } => MessageKind::CardExpiring,
            Self::Price { .. } => MessageKind::PriceRise,
            Self::Digest { .. } => MessageKind::WeeklyDigest,
            Self::BankConsent { .. } => MessageKind::BankConsentEnding,
            Self::NewRecurring { .. } => MessageKind::NewRecurring,
            Self::Change { .. } => MessageKind::AgentChange,
            Self::Test => MessageKind::Test,
        }
    }

    /// The part of the outbox key that names the message, before its member and destination.
    fn key(&self) -> String {
        match self {
            Self::Charge { subscription_id, charge_on, days_before } => {
                format!("rem:v1:{subscription_id}:{charge_on}:{days_before}")
            }
            Self::Trial { subscription_id, ends_on, days_before } => {
                format!("trial:v1:{subscription_id}:{ends_on}:{days_before}")
            }
            Self::Card { subscription_id, charge_on, payment_method_id } => {
                format!("card:v1:{subscription_id}:{charge_on}:{payment_method_id}")
            }
            Self::Price { subscription_id, charge_on } => {
                format!("price:v1:{subscription_id}:{charge_on}")
            }
            Self::Digest { from } => format!("digest:v1:{from}"),
            Self::BankConsent { connection_id, ends_on } => {
                format!("consent:v1:{connection_id}:{ends_on}")
            }
            Self::NewRecurring { proposal_id } => format!("recurring:v1:{proposal_id}"),
            Self::Change { batch_id, .. } => format!("change:v1:{batch_id}"),
            Self::Test => "test:v1".into(),
        }
    }
}

/// Whom a message goes to: a member, on these of their destinations.
pub(crate) struct Recipient<'a> {
    pub(crate) household_id: i64,
    pub(crate) member_id: i64,
    pub(crate) destinations: &'a [DestinationRow],
}

/// Writes one message per destination of the recipient unless it exists; `unique` makes a key
/// that is never repeated (a test message).
pub(crate) fn enqueue_for(
    db: &Db<'_>,
    recipient: &Recipient<'_>,
    about: &About,
    due_at: Timestamp,
    now: Timestamp,
    unique: Option<&str>,
) -> Result<usize, StoreError> {
    let Recipient { household_id, member_id, destinations } = *recipient;
    let payload =
        serde_json::to_string(about).map_err(|err| StoreError::Corrupt(err.to_string()))?;
    let now = clock::timestamp_text(now);
    let due_at = clock::timestamp_text(due_at);
    let mut added = 0;
    for destination in destinations {
        let mut key = format!("{}:{member_id}:{}", about.key(), destination.id);
        if let Some(unique) = unique {
            key = format!("{key}:{unique}");
        }
        let message = NewMessage {
            household_id,
            member_id,
            destination_id: destination.id,
            key: &key,
            kind: about.kind().as_str(),
            payload: &payload,
            due_at: &due_at,
        };
        if rows::enqueue(db, &message, &now)? {
            added += 1;
        }
    }
    Ok(added)
}

/// The subscriptions a member is reminded of.
fn covered(
    db: &Db<'_>,
    household_id: i64,
    member_id: i64,
    covers: Covers,
) -> Result<Vec<SubscriptionRow>, StoreError> {
    let mut subscriptions = store::subscriptions::list(db, household_id, Some(member_id))?;
    if covers == Covers::Mine {
        subscriptions.retain(|s| s.owner_id == member_id);
    }
    subscriptions.retain(|s| !(s.status == SubscriptionStatus::Cancelled && s.ends_on.is_none()));
    Ok(subscriptions)
}

/// Plans every member's reminders up to the horizon; returns how many messages were added.
pub(crate) fn plan(db: &Db<'_>, now: Timestamp) -> Result<usize, StoreError> {
    let keep_from = now - SignedDuration::from_hours(24 * KEEP_DAYS);
    rows::prune_finished(db, &clock::timestamp_text(keep_from))?;
    let mut added = 0;
    for (household_id, member_id) in rows::members_with_reminders(db)? {
        let household = store::households::get_household(db, household_id)?;
        added += plan_member(db, &household, member_id, now)?;
    }
    Ok(added)
}

/// Drops every member's pending reminders in a household and plans them again: its time zone
/// or its default days before changed.
pub(crate) fn replan_household(
    db: &Db<'_>,
    household: &HouseholdRow,
    now: Timestamp,
) -> Result<(), StoreError> {
    for (household_id, member_id) in rows::members_with_reminders(db)? {
        if household_id == household.id {
            rows::drop_pending_reminders(db, member_id)?;
            plan_member(db, household, member_id, now)?;
        }
    }
    Ok(())
}

/// Plans one member's reminders.
pub(crate) fn plan_member(
    db: &Db<'_>,
    household: &HouseholdRow,
    member_id: i64,
    now: Timestamp,
) -> Result<usize, StoreError> {
    let destinations: Vec<_> = rows::destinations(db, member_id)?
        .into_iter()
        .filter(|d| d.reminders && d.disabled_at.is_none())
        .collect();
    if destinations.is_empty() {
        return Ok(0);
    }
    let preferences = Preferences::read(household, rows::preferences(db, member_id)?);
    let zone = TimeZone::get(&household.time_zone).unwrap_or(TimeZone::UTC);
    let today = clock::today_in(household, now);
    let longest = i64::from(preferences.days_before.first().copied().unwrap_or(0));
    let Ok(until) = today.checked_add((longest + HORIZON_DAYS).days()) else {
        return Ok(0);
    };
    let earliest = now - SignedDuration::from_hours(LATE_HOURS);
    let mut planned: Vec<(About, Timestamp)> = Vec::new();
    let mut plan_at = |about: About, on: Date| -> bool {
        match preferences.at(on, &zone).filter(|due| *due >= earliest) {
            Some(due) => {
                planned.push((about, due));
                true
            }
            None => false,
        }
    };
    // A one-off warning (a price rise, a card expiring) goes once: at the earliest of these
    // offsets that is still ahead.
    let warning_offsets = |least: u32| -> Vec<u32> {
        let mut offsets: Vec<u32> =
            preferences.days_before.iter().map(|d| (*d).max(least)).collect();
        if offsets.is_empty() {
            offsets.push(least);
        }
        offsets.dedup();
        offsets
    };
    for subscription in covered(db, household.id, member_id, preferences.covers)? {
        let parts = crate::series::SeriesParts::of(&subscription);
        let series = parts.series(&subscription);
        let trial_end = (subscription.status == SubscriptionStatus::Trial)
            .then_some(subscription.trial_ends_on)
            .flatten()
            .filter(|_| preferences.trial_endings);
        let occurrences = series.occurrences_between(today, until);
        for occurrence in &occurrences {
            if trial_end == Some(occurrence.date) {
                continue;
            }
            for &days in &preferences.days_before {
                if let Ok(on) = occurrence.date.checked_sub(i64::from(days).days()) {
                    let about = About::Charge {
                        subscription_id: subscription.id,
                        charge_on: occurrence.date,
                        days_before: days,
                    };
                    plan_at(about, on);
                }
            }
        }
        if let Some(ends_on) = trial_end.filter(|end| *end >= today && *end <= until) {
            // At each of the member's offsets, as a charge would be: a trial added a few days
            // before it ends still gets the reminders that are ahead.
            let offsets = if preferences.days_before.is_empty() {
                vec![1]
            } else {
                preferences.days_before.clone()
            };
            for days in offsets {
                if let Ok(on) = ends_on.checked_sub(i64::from(days).days()) {
                    plan_at(
                        About::Trial {
                            subscription_id: subscription.id,
                            ends_on,
                            days_before: days,
                        },
                        on,
                    );
                }
            }
        }
        let Some(next) = occurrences.first() else { continue };
        if preferences.price_rises {
            let raised =
                previous_amount(&series, next.date).is_some_and(|before| next.minor > before);
            if raised {
                for days in warning_offsets(1) {
                    let about =
                        About::Price { subscription_id: subscription.id, charge_on: next.date };
                    if let Ok(on) = next.date.checked_sub(i64::from(days).days())
                        && plan_at(about, on)
                    {
                        break;
                    }
                }
            }
        }
        if preferences.card_expiry
            && let Some(method_id) = subscription.payment_method_id
            && subscription.payment_method_name.is_some()
            && let Some(method) = found(store::organise::get_payment_method(
                db,
                household.id,
                Some(member_id),
                method_id,
            ))?
            && card_expires_before(method.expires.as_deref(), next.date)
        {
            for days in warning_offsets(7) {
                let about = About::Card {
                    subscription_id: subscription.id,
                    charge_on: next.date,
                    payment_method_id: method_id,
                };
                if let Ok(on) = next.date.checked_sub(i64::from(days).days())
                    && plan_at(about, on)
                {
                    break;
                }
            }
        }
    }
    // A bank's consent: a week before it ends (or today, when that has passed), for each
    // connection the member sees; renewed, it is planned again for its new end.
    for connection in store::banks::connections(db, household.id, member_id)? {
        let Some(ends_on) = consent_day(&connection, household) else { continue };
        let warn_from = ends_on
            .checked_sub(ops::limits::BANK_CONSENT_WARNING_DAYS.days())
            .map_or(today, |day| day.max(today));
        if ends_on >= today && warn_from <= until {
            plan_at(About::BankConsent { connection_id: connection.id, ends_on }, warn_from);
        }
    }
    // A recurring charge a sync noticed: at the member's time on the day it was noticed, or
    // the next day when that time had passed. Only one noticed lately: asking for these
    // does not send every old one.
    if preferences.new_recurring {
        for proposal in store::banks::open_proposals(db, household.id, member_id)? {
            let Some(noticed) = TimestampText::parse(&proposal.created_at) else { continue };
            let day = clock::today_in(household, noticed.0);
            let day = match preferences.at(day, &zone) {
                Some(due) if due < noticed.0 => day.tomorrow().unwrap_or(day),
                _ => day,
            };
            plan_at(About::NewRecurring { proposal_id: proposal.id }, day);
        }
    }
    if let Some(weekday) = digest_weekday(preferences.digest) {
        let mut day = today;
        while day.weekday() != weekday {
            day = day.tomorrow().unwrap_or(day);
        }
        plan_at(About::Digest { from: day }, day);
    }
    let recipient =
        Recipient { household_id: household.id, member_id, destinations: &destinations };
    let mut added = 0;
    for (about, due) in planned {
        added += enqueue_for(db, &recipient, &about, due, now, None)?;
    }
    Ok(added)
}

fn digest_weekday(digest: Digest) -> Option<jiff::civil::Weekday> {
    use jiff::civil::Weekday as W;
    Some(match digest {
        Digest::Off => return None,
        Digest::Monday => W::Monday,
        Digest::Tuesday => W::Tuesday,
        Digest::Wednesday => W::Wednesday,
        Digest::Thursday => W::Thursday,
        Digest::Friday => W::Friday,
        Digest::Saturday => W::Saturday,
        Digest::Sunday => W::Sunday,
    })
}

/// The amount of the charge before the one on `date`, if there was one in the year before.
fn previous_amount(series: &domain::Series<'_>, date: Date) -> Option<i64> {
    let from = date.checked_sub(400.days()).ok()?;
    let to = date.yesterday().ok()?;
    series.occurrences_between(from, to).last().map(|occurrence| occurrence.minor)
}

/// Whether a card expiring at the end of `expires` ("YYYY-MM") is no longer valid on `charge_on`.
fn card_expires_before(expires: Option<&str>, charge_on: Date) -> bool {
    let Some((year, month)) = expires.and_then(|e| e.split_once('-')) else { return false };
    let (Ok(year), Ok(month)) = (year.parse::<i16>(), month.parse::<i8>()) else { return false };
    Date::new(year, month, 1)
        .ok()
        .map(|first| first.last_of_month())
        .is_some_and(|last| last < charge_on)
}

/// The household's day a connection's bank consent ends on, when it has one.
fn consent_day(connection: &store::banks::ConnectionRow, household: &HouseholdRow) -> Option<Date> {
    let until = TimestampText::parse(connection.consent_until.as_deref()?)?;
    Some(clock::today_in(household, until.0))
}

/// A row that may be gone: `None` instead of `NotFound`.
fn found<T>(result: Result<T, StoreError>) -> Result<Option<T>, StoreError> {
    match result {
        Ok(row) => Ok(Some(row)),
        Err(StoreError::NotFound) => Ok(None),
        Err(err) => Err(err),
    }
}

/// What sending a planned message comes to at the moment it is sent.
pub(crate) enum Worded {
    Send(Box<Message>),
    /// Its reason went away: the subscription was paused, cancelled, deleted, moved or hidden.
    Obsolete,
    /// The charge it announced has passed (Exhale was down).
    Missed,
}

/// Where links in messages point: the public origin, else paths.
fn link(language: Language, origin: Option<&str>, label: Text, path: &str) -> Link {
    Link { label: i18n::say(language, &label), url: format!("{}{path}", origin.unwrap_or("")) }
}

/// "today", "tomorrow", "in 3 days" or "on Dec 24, 2026", from `today`.
fn when(language: Language, today: Date, on: Date) -> Text {
    match (on - today).get_days() {
        0 => Text::new("today"),
        1 => Text::new("tomorrow"),
        days @ 2..=6 => {
            Text::new("{days, plural, one {in # day} other {in # days}}").with("days", days)
        }
        _ => Text::new("on {date}").with("date", i18n::format::date(language, on)),
    }
}

/// Words a message for its member now.
pub(crate) fn word(
    db: &Db<'_>,
    row: &MessageRow,
    household: &HouseholdRow,
    now: Timestamp,
    origin: Option<&str>,
) -> Result<Worded, StoreError> {
    let about: About =
        serde_json::from_str(&row.payload).map_err(|err| StoreError::Corrupt(err.to_string()))?;
    let today = clock::today_in(household, now);
    let kind = about.kind();
    // A message is read by its member, in their language (else the household's).
    let member = found(store::households::get_member(db, household.id, row.member_id))?;
    let language =
        i18n::choose(member.as_ref().map(|m| m.language.as_str()), Some(&household.language), None);
    let say = |text: &Text| i18n::say(language, text);
    let money = |minor: i64, currency: domain::Currency| {
        let amount = views::amount(minor, currency);
        i18n::format::amount(language, amount.amount, amount.currency.currency())
    };
    let subscription = |id: i64| -> Result<Option<SubscriptionRow>, StoreError> {
        let found = found(store::subscriptions::get(db, household.id, Some(row.member_id), id))?;
        Ok(found.filter(|s| !(s.status == SubscriptionStatus::Cancelled && s.ends_on.is_none())))
    };
    let open = |id: i64| {
        let path = format!("/subscriptions/{id}");
        Some(link(language, origin, Text::new("Open in Exhale"), &path))
    };
    let message = match &about {
        About::Charge { subscription_id, charge_on, .. }
        | About::Price { subscription_id, charge_on }
        | About::Card { subscription_id, charge_on, .. } => {
            if *charge_on < today {
                return Ok(Worded::Missed);
            }
            let Some(subscription) = subscription(*subscription_id)? else {
                return Ok(Worded::Obsolete);
            };
            // Planned before the member's days changed (an Undo, the household's default).
            if let About::Charge { days_before, .. } = &about {
                let wanted = Preferences::read(household, rows::preferences(db, row.member_id)?);
                if !wanted.days_before.contains(days_before) {
                    return Ok(Worded::Obsolete);
                }
            }
            let parts = crate::series::SeriesParts::of(&subscription);
            let series = parts.series(&subscription);
            let Some(charge) =
                series.occurrences_between(*charge_on, *charge_on).into_iter().next()
            else {
                return Ok(Worded::Obsolete);
            };
            let amount = money(charge.minor, subscription.currency);
            let name = subscription.name.clone();
            let (title, mut lines) = match &about {
                About::Price { .. } => {
                    let Some(before) =
                        previous_amount(&series, *charge_on).filter(|b| *b < charge.minor)
                    else {
                        return Ok(Worded::Obsolete);
                    };
                    let title = Text::new("{name} goes up to {amount} {when}")
                        .with("name", &name)
                        .with("amount", &amount)
                        .with("when", say(&when(language, today, *charge_on)));
                    let line = Text::new("It was {before}.")
                        .with("before", money(before, subscription.currency));
                    (title, vec![say(&line)])
                }
                About::Card { payment_method_id, .. } => {
                    let method = found(store::organise::get_payment_method(
                        db,
                        household.id,
                        Some(row.member_id),
                        *payment_method_id,
                    ))?;
                    let Some(method) = method.filter(|m| {
                        subscription.payment_method_id == Some(m.id)
                            && card_expires_before(m.expires.as_deref(), *charge_on)
                    }) else {
                        return Ok(Worded::Obsolete);
                    };
                    let title = Text::new("{card} expires before {name} charges {amount} {when}")
                        .with("card", &method.name)
                        .with("name", &name)
                        .with("amount", &amount)
                        .with("when", say(&when(language, today, *charge_on)));
                    let line = Text::new(
                        "Update the card with {name}, or in Exhale when you have a new one.",
                    )
                    .with("name", &name);
                    (title, vec![say(&line)])
                }
                _ => {
                    let title = Text::new("{name} charges {amount} {when}")
                        .with("name", &name)
                        .with("amount", &amount)
                        .with("when", say(&when(language, today, *charge_on)));
                    (title, Vec::new())
                }
            };
            if let Some(method) = &subscription.payment_method_name {
                lines.push(say(&Text::new("Charged to {method}.").with("method", method)));
            }
            let data = json!({
                "subscription": {"id": subscription.id, "name": name},
                "charge_on": charge_on.to_string(),
                "amount": views::amount(charge.minor, subscription.currency),
                "payment_method": subscription.payment_method_name,
            });
            Message {
                kind,
                title: say(&title),
                lines,
                open: open(subscription.id),
                undo: None,
                batch: None,
                data,
            }
        }
        About::Trial { subscription_id, ends_on, .. } => {
            if *ends_on < today {
                return Ok(Worded::Missed);
            }
            let Some(subscription) = subscription(*subscription_id)? else {
                return Ok(Worded::Obsolete);
            };
            if subscription.status != SubscriptionStatus::Trial
                || subscription.trial_ends_on != Some(*ends_on)
            {
                return Ok(Worded::Obsolete);
            }
            let price = views::current_price(&subscription, *ends_on);
            let amount = money(price, subscription.currency);
            let title = Text::new("{name}'s free trial ends {when}")
                .with("name", &subscription.name)
                .with("when", say(&when(language, today, *ends_on)));
            let line = Text::new(
                "Then it charges {amount} {cycle}. Cancel before then if you do not want it.",
            )
            .with("amount", &amount)
            .with("cycle", say(&subscription.cycle.words()));
            Message {
                kind,
                title: say(&title),
                lines: vec![say(&line)],
                open: open(subscription.id),
                undo: None,
                batch: None,
                data: json!({
                    "subscription": {"id": subscription.id, "name": subscription.name},
                    "trial_ends_on": ends_on.to_string(),
                    "amount": views::amount(price, subscription.currency),
                }),
            }
        }
        About::Digest { from } => {
            let preferences = Preferences::read(household, rows::preferences(db, row.member_id)?);
            let to = from.checked_add(6.days()).unwrap_or(*from);
            let mut charges = Vec::new();
            for subscription in covered(db, household.id, row.member_id, preferences.covers)? {
                let parts = crate::series::SeriesParts::of(&subscription);
                for occurrence in parts.series(&subscription).occurrences_between(*from, to) {
                    charges.push((
                        occurrence.date,
                        views::projected_charge(&subscription, occurrence),
                    ));
                }
            }
            charges.sort_by_key(|(date, charge)| (*date, charge.subscription.id));
            let items: Vec<_> = charges.into_iter().map(|(_, charge)| charge).collect();
            let totals: Vec<String> = views::totals(&items)
                .into_iter()
                .map(|a| i18n::format::amount(language, a.amount, a.currency.currency()))
                .collect();
            let title = if items.is_empty() {
                Text::new("Nothing charges this week")
            } else {
                Text::new("This week: {count} charges, {total}")
                    .with("count", items.len())
                    .with("total", totals.join(" + "))
            };
            let lines = items
                .iter()
                .map(|item| {
                    say(&Text::new("{date}: {name}, {amount}")
                        .with("date", i18n::format::date(language, item.charge_on.date()))
                        .with("name", &item.subscription.name)
                        .with(
                            "amount",
                            i18n::format::amount(
                                language,
                                item.amount.amount,
                                item.amount.currency.currency(),
                            ),
                        ))
                })
                .collect();
            Message {
                kind,
                title: say(&title),
                lines,
                open: Some(link(language, origin, Text::new("Open in Exhale"), "/")),
                undo: None,
                batch: None,
                data: json!({"from": from.to_string(), "to": to.to_string(), "charges": items}),
            }
        }
        About::BankConsent { connection_id, ends_on } => {
            if *ends_on < today {
                return Ok(Worded::Missed);
            }
            let connection =
                store::banks::connection(db, household.id, row.member_id, *connection_id)?;
            // Renewed since (a new end), removed, or no longer the member's to see.
            let Some(connection) =
                connection.filter(|c| consent_day(c, household) == Some(*ends_on))
            else {
                return Ok(Worded::Obsolete);
            };
            let title = Text::new("The bank's consent for {name} ends {when}")
                .with("name", &connection.name)
                .with("when", say(&when(language, today, *ends_on)));
            let line = Text::new(
                "Connect the bank again in Settings → Banks before then to keep it syncing.",
            );
            Message {
                kind,
                title: say(&title),
                lines: vec![say(&line)],
                open: Some(link(language, origin, Text::new("Open in Exhale"), "/settings/banks")),
                undo: None,
                batch: None,
                data: json!({
                    "connection": {"id": connection.id, "name": connection.name},
                    "consent_ends_on": ends_on.to_string(),
                }),
            }
        }
        About::NewRecurring { proposal_id } => {
            let proposal = store::banks::proposal(db, household.id, row.member_id, *proposal_id)?;
            // Dismissed or added as a subscription since, or its account no longer the
            // member's to see.
            let subscriptions = store::subscriptions::list(db, household.id, Some(row.member_id))?;
            let Some(proposal) = proposal
                .filter(|p| !p.dismissed && !views::proposal_is_a_subscription(p, &subscriptions))
            else {
                return Ok(Worded::Obsolete);
            };
            let (Ok(currency), Some(cycle)) =
                (domain::Currency::parse(&proposal.currency), proposal.cycle())
            else {
                return Ok(Worded::Obsolete);
            };
            let title = Text::new("{name} looks like a new recurring charge on {account}")
                .with("name", &proposal.name)
                .with("account", &proposal.account_name);
            let line =
                Text::new("{amount}, {cycle}. Add it as a subscription, or dismiss it, in Exhale.")
                    .with("amount", money(proposal.amount_minor, currency))
                    .with_cycle("cycle", cycle);
            Message {
                kind,
                title: say(&title),
                lines: vec![say(&line)],
                open: Some(link(language, origin, Text::new("Open in Exhale"), "/")),
                undo: None,
                batch: None,
                data: json!({
                    "proposal_id": proposal.id,
                    "name": proposal.name,
                    "account": {"id": proposal.account_id, "name": proposal.account_name},
                    "amount": views::amount(proposal.amount_minor, currency),
                    "cycle": proposal.cycle,
                }),
            }
        }
        About::Change { batch_id, by, summaries, first_audit_id } => {
            // The summaries as the member reads them, from the batch's own entries (each a
            // `Text`); as they were written when the entries are gone.
            let entries = store::audit::batch(db, household.id, row.member_id, batch_id)?;
            let said: Vec<String> = entries
                .iter()
                .filter_map(|entry| serde_json::from_str::<Text>(&entry.summary).ok())
                .map(|text| say(&text))
                .collect();
            let summaries = if said.len() == summaries.len() { &said } else { summaries };
            let title = match summaries.as_slice() {
                [one] => Text::new("{by}: {change}").with("by", by).with("change", one),
                many => {
                    Text::new("{by} made {count} changes").with("by", by).with("count", many.len())
                }
            };
            let lines = if summaries.len() > 1 { summaries.clone() } else { Vec::new() };
            let undo = first_audit_id.map(|id| {
                let path = format!("/activity/{id}/undo?batch={batch_id}");
                link(language, origin, Text::new("Undo"), &path)
            });
            Message {
                kind,
                title: say(&title),
                lines,
                open: Some(link(language, origin, Text::new("See activity"), "/activity")),
                undo,
                batch: Some(batch_id.clone()),
                data: json!({"batch_id": batch_id, "by": by, "changes": summaries}),
            }
        }
        About::Test => Message {
            kind,
            title: say(&Text::new("Test message from Exhale")),
            lines: vec![say(&Text::new("If you can read this, reminders will reach you here."))],
            open: Some(link(language, origin, Text::new("Open in Exhale"), "/settings/reminders")),
            undo: None,
            batch: None,
            data: json!({}),
        },
    };
    Ok(Worded::Send(Box::new(message)))
}

/// Planned messages listed in the settings.
const UPCOMING_LISTED: usize = 5;

pub(crate) fn destination_view(row: &DestinationRow) -> Result<Destination, OpError> {
    let kind = DestinationKind::parse(&row.kind).ok_or(OpError::Internal)?;
    Ok(Destination {
        id: row.id,
        kind,
        name: row.name.clone(),
        address: address_hint(kind, &row.address),
        reminders: row.reminders,
        agent_changes: row.agent_changes,
        last_sent_at: row.last_sent_at.as_deref().and_then(TimestampText::parse),
        last_error: row.last_error.clone(),
        disabled: row.disabled_at.is_some(),
    })
}

/// Enough of an address to recognise it, never its secret part: an ntfy topic without access
/// control is its own password, and a webhook's path often holds a key (Home Assistant).
fn address_hint(kind: DestinationKind, address: &str) -> String {
    let (scheme, rest) = address.split_once("://").unwrap_or(("", address));
    // The host, and whether anything follows it: a path or a query may hold a key.
    let (host, path) = match rest.find(['/', '?', '#']) {
        Some(at) => (&rest[..at], rest[at..].trim_start_matches('/')),
        None => (rest, ""),
    };
    match kind {
        DestinationKind::Email => address.to_owned(),
        DestinationKind::Ntfy => {
            let start: String = path.chars().take(3).collect();
            format!("{host}/{start}…")
        }
        DestinationKind::Webhook if path.is_empty() => format!("{scheme}://{host}"),
        DestinationKind::Webhook => format!("{scheme}://{host}/…"),
        DestinationKind::Telegram | DestinationKind::Slack => Text::new("a chat").render(),
    }
}

/// The caller's reminders and destinations, as `get_settings` and the reminder ops show them.
pub(crate) fn settings_view(ctx: &Ctx<'_>) -> Result<ReminderSettings, OpError> {
    let me = ctx.me();
    let preferences =
        Preferences::read(&ctx.household, rows::preferences(ctx.db, me).or_internal()?);
    let destinations = rows::destinations(ctx.db, me).or_internal()?;
    let mut upcoming = Vec::new();
    for row in rows::pending_of(ctx.db, me, UPCOMING_LISTED).or_internal()? {
        // A payload this version cannot read is left out of the list, not the whole page.
        let Ok(about) = serde_json::from_str::<About>(&row.payload) else { continue };
        let subscription = match about {
            About::Charge { subscription_id, .. }
            | About::Trial { subscription_id, .. }
            | About::Card { subscription_id, .. }
            | About::Price { subscription_id, .. } => ctx
                .visible_subscriptions()?
                .iter()
                .find(|s| s.id == subscription_id)
                .map(|s| Ref { id: s.id, name: s.name.clone() }),
            _ => None,
        };
        upcoming.push(PlannedMessage {
            due_at: TimestampText::parse(&row.due_at).ok_or(OpError::Internal)?,
            kind: ops::channels::MessageKind::parse(&row.kind).ok_or(OpError::Internal)?,
            subscription,
            destination: destinations
                .iter()
                .find(|d| d.id == row.destination_id)
                .map(|d| d.name.clone())
                .unwrap_or_default(),
        });
    }
    let feed = rows::feed_of(ctx.db, me).or_internal()?;
    let server = rows::mail_server(ctx.db, ctx.household_id()).or_internal()?;
    let mail_server = match (&server, ctx.caller.is_owner()) {
        (Some(server), true) => Some(MailServer {
            host: server.host.clone(),
            port: server.port,
            security: MailSecurity::parse(&server.security).ok_or(OpError::Internal)?,
            username: server.username.clone(),
            password_saved: rows::mail_password(ctx.db, ctx.household_id())
                .or_internal()?
                .is_some(),
            from: server.from_address.clone(),
        }),
        _ => None,
    };
    Ok(ReminderSettings {
        days_before: preferences.days_before.clone(),
        time_of_day: preferences.time_of_day(),
        time_zone: ctx.household.time_zone.clone(),
        covers: preferences.covers,
        trial_endings: preferences.trial_endings,
        card_expiry: preferences.card_expiry,
        price_rises: preferences.price_rises,
        weekly_digest: preferences.digest,
        new_recurring: preferences.new_recurring,
        destinations: destinations.iter().map(destination_view).collect::<Result<_, _>>()?,
        upcoming,
        calendar_feed: feed
            .map(|feed| {
                Ok::<_, OpError>(CalendarFeed {
                    created_at: TimestampText::parse(&feed.created_at).ok_or(OpError::Internal)?,
                    show_amounts: feed.show_amounts,
                })
            })
            .transpose()?,
        email_available: server.is_some(),
        telegram: rows::bot(ctx.db, ctx.household_id(), "telegram").or_internal()?.map(|bot| {
            ChatBotStatus {
                webhook: bot.webhook,
                username: bot.username,
                last_error: bot.last_error,
            }
        }),
        slack: rows::bot(ctx.db, ctx.household_id(), "slack").or_internal()?.map(|bot| {
            ChatBotStatus { webhook: false, username: bot.username, last_error: bot.last_error }
        }),
        mail_server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn household(zone: &str) -> HouseholdRow {
        HouseholdRow {
            id: 1,
            name: "Home".into(),
            currency: domain::Currency::parse("EUR").unwrap(),
            time_zone: zone.into(),
            language: "en".into(),
            week_start: domain::entities::WeekStart::Monday,
            reminder_days_before: 3,
            trusted_apps: false,
            created_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn nine_in_the_morning_stays_nine_across_a_dst_change() {
        let preferences = Preferences::read(&household("Europe/Madrid"), None);
        let zone = TimeZone::get("Europe/Madrid").unwrap();
        // Madrid moves from +01:00 to +02:00 on 2026-03-29.
        let before = preferences.at(Date::new(2026, 3, 28).unwrap(), &zone).unwrap();
        let after = preferences.at(Date::new(2026, 3, 30).unwrap(), &zone).unwrap();
        assert_eq!(before.to_string(), "2026-03-28T08:00:00Z");
        assert_eq!(after.to_string(), "2026-03-30T07:00:00Z");
    }

    #[test]
    fn a_time_in_a_dst_gap_moves_past_it() {
        let mut preferences = Preferences::read(&household("America/New_York"), None);
        (preferences.hour, preferences.minute) = (2, 30);
        let zone = TimeZone::get("America/New_York").unwrap();
        // 02:30 does not exist on 2026-03-08 in New York: it is 03:30 EDT.
        let at = preferences.at(Date::new(2026, 3, 8).unwrap(), &zone).unwrap();
        assert_eq!(at.to_string(), "2026-03-08T07:30:00Z");
    }

    #[test]
    fn lord_howes_half_hour_dst_keeps_nine_on_the_wall() {
        let preferences = Preferences::read(&household("Australia/Lord_Howe"), None);
        let zone = TimeZone::get("Australia/Lord_Howe").unwrap();
        // Lord Howe moves from +10:30 to +11:00 on 2026-10-04.
        let before = preferences.at(Date::new(2026, 10, 3).unwrap(), &zone).unwrap();
        let after = preferences.at(Date::new(2026, 10, 5).unwrap(), &zone).unwrap();
        assert_eq!(before.to_string(), "2026-10-02T22:30:00Z");
        assert_eq!(after.to_string(), "2026-10-04T22:00:00Z");
    }

    #[test]
    fn a_day_a_zone_skipped_moves_the_reminder_past_it() {
        let preferences = Preferences::read(&household("Pacific/Apia"), None);
        let zone = TimeZone::get("Pacific/Apia").unwrap();
        // Samoa skipped 30 December 2011, going from -10:00 to +14:00: 09:00 that day is read
        // with the offset before the gap, which is 09:00 on the 31st on the wall.
        let at = preferences.at(Date::new(2011, 12, 30).unwrap(), &zone).unwrap();
        assert_eq!(at.to_string(), "2011-12-30T19:00:00Z");
        assert_eq!(at.to_zoned(zone).datetime().to_string(), "2011-12-31T09:00:00");
    }

    #[test]
    fn preferences_default_to_the_household_and_sort_days_largest_first() {
        let defaults = Preferences::read(&household("UTC"), None);
        assert_eq!(
            (defaults.days_before.clone(), defaults.time_of_day()),
            (vec![3], "09:00".into())
        );
        let row =
            PreferencesRow { days_before: Some("[1, 7, 1]".into()), ..PreferencesRow::default() };
        assert_eq!(Preferences::read(&household("UTC"), Some(row)).days_before, vec![7, 1]);
    }

    #[test]
    fn a_card_expires_at_the_end_of_its_month() {
        let on = |y, m, d| Date::new(y, m, d).unwrap();
        assert!(!card_expires_before(Some("2027-01"), on(2027, 1, 31)));
        assert!(card_expires_before(Some("2027-01"), on(2027, 2, 1)));
        assert!(!card_expires_before(None, on(2027, 2, 1)));
        assert!(!card_expires_before(Some("soon"), on(2027, 2, 1)));
    }

    #[test]
    fn when_says_today_tomorrow_days_or_a_date() {
        let today = Date::new(2026, 12, 1).unwrap();
        let said = |days: i64| {
            when(Language::English, today, today.checked_add(days.days()).unwrap()).render()
        };
        assert_eq!(
            [said(0), said(1), said(3), said(9)],
            ["today", "tomorrow", "in 3 days", "on Dec 10, 2026"].map(String::from)
        );
        let spanish = when(Language::Spanish, today, today.checked_add(9.days()).unwrap());
        assert_eq!(i18n::say(Language::Spanish, &spanish), "el 10 dic 2026");
    }
}
