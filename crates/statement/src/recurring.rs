//! Recurring charges in a list of transactions, from a statement or a bank feed: group outgoing
//! ones by merchant (a plan such as "AMAZON PRIME" is a merchant of its own; a standing order
//! by its payee) and by the product a utility names (its electricity apart from its water),
//! split a group's charges by amount when it bills several things, and report a group whose
//! gaps fit a cycle. Weekly cycles and groups of only two charges also need a steady amount.
//! A bill's charges that no steady amount explains, whose amount follows use (energy, water,
//! phone), are reported together with an estimated amount, marked as varying. Income and
//! refunds (money coming in), cash, transfers between one's own accounts, card repayments,
//! taxes and salary are never subscriptions; a household's recurring levy (a vehicle tax,
//! council tax) is proposed like any bill.

use std::collections::BTreeMap;

use domain::{CyclePreset, money::Currency};
use jiff::civil::Date;

use crate::{Transaction, merchant};

/// A cycle Exhale looks for and the gap in days it means, with the tolerance.
const CYCLES: &[(CyclePreset, f64, f64)] = &[
    (CyclePreset::Weekly, 7.0, 2.5),
    (CyclePreset::EveryTwoWeeks, 14.0, 3.5),
    (CyclePreset::Monthly, 30.44, 4.0),
    (CyclePreset::EveryTwoMonths, 60.9, 6.0),
    (CyclePreset::Quarterly, 91.3, 9.0),
    (CyclePreset::EverySixMonths, 182.6, 14.0),
    (CyclePreset::Yearly, 365.25, 20.0),
];

/// One charge of a candidate: the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge {
    pub line: usize,
    pub date: Date,
    /// Positive: what was paid.
    pub amount_minor: i64,
}

/// A price change seen in the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceChange {
    pub on: Date,
    pub from_minor: i64,
    pub to_minor: i64,
}

/// Something that looks like a subscription.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The grouping key (upper case merchant words).
    pub merchant: String,
    /// A readable name to suggest.
    pub name: String,
    /// One of the default categories, when the merchant is a known kind.
    pub category: Option<&'static str>,
    /// The latest price, positive, in minor units.
    pub amount_minor: i64,
    pub currency: Currency,
    pub cycle: CyclePreset,
    pub next_expected: Date,
    /// 0 to 1.
    pub confidence: f64,
    pub charges: Vec<Charge>,
    pub price_changes: Vec<PriceChange>,
    /// True for a bill whose amount follows use (energy, water, phone): `amount_minor` is then
    /// an estimate, the median of the last three charges, and there are no price changes.
    pub amount_varies: bool,
    /// False when the charges stopped: the last one is more than a cycle and a half before the
    /// statement's last day (probably cancelled).
    pub active: bool,
}

/// Whether amounts (oldest first, three or more) change at every charge or at most of them:
/// they follow use, not a price that changes now and then.
pub fn amounts_follow_use(amounts: &[i64]) -> bool {
    let changes = amounts.windows(2).filter(|pair| pair[0] != pair[1]).count();
    amounts.len() >= 3
        && (changes + 1 == amounts.len() || changes > 2 && changes * 2 > amounts.len())
}

/// Days from `a` to `b` (civil dates subtract to a span in days).
fn gap_days(a: Date, b: Date) -> f64 {
    f64::from((b - a).get_days())
}

/// Splits charges into clusters of similar amounts (within 30% of each other), so one
/// merchant billing two services gives two groups, while a price rise stays in one.
fn amount_clusters(mut charges: Vec<Charge>) -> Vec<Vec<Charge>> {
    charges.sort_by_key(|c| c.amount_minor);
    let mut clusters: Vec<Vec<Charge>> = Vec::new();
    for charge in charges {
        match clusters.last_mut() {
            Some(cluster)
                if (charge.amount_minor as f64) <= cluster[0].amount_minor as f64 * 1.3 =>
            {
                cluster.push(charge)
            }
            _ => clusters.push(vec![charge]),
        }
    }
    for cluster in &mut clusters {
        cluster.sort_by_key(|c| (c.date, c.line));
    }
    clusters
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}

/// How steady the amounts are: the largest deviation from the median, as a fraction of it.
fn amount_spread(charges: &[Charge]) -> f64 {
    let amounts: Vec<f64> = charges.iter().map(|c| c.amount_minor as f64).collect();
    let middle = median(amounts.clone());
    amounts.iter().map(|a| (a - middle).abs() / middle.max(1.0)).fold(0.0, f64::max)
}

/// The candidate a group of charges makes, if any. `bill` allows amounts that follow use (a
/// bill of a known kind), proposed as varying when the dates fit a monthly to quarterly cycle.
fn candidate(
    merchant: &str,
    name: String,
    currency: Currency,
    charges: Vec<Charge>,
    statement_end: Date,
    bill: bool,
) -> Option<Candidate> {
    if charges.len() < 2 {
        return None;
    }
    let gaps: Vec<f64> =
        charges.windows(2).map(|pair| gap_days(pair[0].date, pair[1].date)).collect();
    let typical = median(gaps.clone());
    let &(cycle, expected, tolerance) =
        CYCLES.iter().find(|(_, expected, tolerance)| (typical - expected).abs() <= *tolerance)?;
    // Most gaps must fit; one missed or doubled charge may stay unexplained.
    let fitting = gaps.iter().filter(|gap| (*gap - expected).abs() <= tolerance).count();
    let misfits = gaps.len() - fitting;
    if misfits > gaps.len() / 4 {
        return None;
    }
    let spread = amount_spread(&charges);
    let steady = spread <= 0.02;
    // Monthly-ish things need three charges; two are enough for quarterly and longer.
    if charges.len() < 3 && expected < 80.0 {
        return None;
    }
    let last = charges.last()?;
    let next_expected = cycle.cycle().nth(last.date, 1)?;
    let active = gap_days(last.date, statement_end) <= expected * 1.5 + tolerance;
    let regularity = 1.0 - (misfits as f64 / gaps.len() as f64);
    let evidence = (charges.len() as f64 / 6.0).min(1.0);
    if (cycle == CyclePreset::Weekly || charges.len() == 2) && !steady {
        return None;
    }
    let mut price_changes = Vec::new();
    for pair in charges.windows(2) {
        if pair[0].amount_minor != pair[1].amount_minor {
            price_changes.push(PriceChange {
                on: pair[1].date,
                from_minor: pair[0].amount_minor,
                to_minor: pair[1].amount_minor,
            });
        }
    }
    // Amounts that change every time, or more often than now and then, are usage, not a
    // price: not a subscription, unless it is a bill (and then an estimate).
    let amounts: Vec<i64> = charges.iter().map(|c| c.amount_minor).collect();
    let usage = amounts_follow_use(&amounts);
    let varying_cycle = matches!(
        cycle,
        CyclePreset::Monthly | CyclePreset::EveryTwoMonths | CyclePreset::Quarterly
    );
    let (amount_minor, amount_varies, confidence) = if !usage {
        let confidence = 0.45
            + 0.3 * regularity * evidence
            + 0.15 * f64::from(u8::from(steady))
            + 0.1 * evidence;
        (last.amount_minor, false, confidence)
    } else if bill && varying_cycle && charges.len() >= 3 {
        price_changes.clear();
        let recent: Vec<f64> =
            charges.iter().rev().take(3).map(|c| c.amount_minor as f64).collect();
        (median(recent).round() as i64, true, 0.45 + 0.3 * regularity * evidence + 0.1 * evidence)
    } else {
        return None;
    };
    Some(Candidate {
        merchant: merchant.to_owned(),
        category: merchant::category_of(merchant),
        name,
        amount_minor,
        currency,
        cycle,
        next_expected,
        confidence: (confidence.min(0.99) * 100.0).round() / 100.0,
        charges,
        price_changes,
        amount_varies,
        active,
    })
}

/// One merchant's charges in one currency (of one product, where the merchant bills several
/// separately), with some of its descriptions.
struct Group<'a> {
    name: String,
    currency: Currency,
    charges: Vec<Charge>,
    descriptions: Vec<&'a str>,
    /// The word the descriptions name the product with ("LUZ"), when they name one.
    product: Option<&'static str>,
}

/// The recurring charges in `transactions`, most confident first. Money the description says
/// is cash, a transfer between one's own accounts, a card repayment, a tax (other than a
/// household's recurring levy) or a salary is never one.
pub fn detect(transactions: &[Transaction]) -> Vec<Candidate> {
    let Some(statement_end) = transactions.iter().map(|t| t.date).max() else { return Vec::new() };
    // By merchant, currency and product: a utility's electricity and its water are two series.
    let mut groups: BTreeMap<(String, &'static str, Option<&'static str>), Group<'_>> =
        BTreeMap::new();
    let spending = transactions
        .iter()
        .filter(|t| t.amount_minor < 0 && merchant::not_a_subscription(&t.description).is_none());
    for transaction in spending {
        let key = merchant::key(&transaction.description);
        if key.is_empty() {
            continue; // nothing names what it was for
        }
        let product = merchant::product(&transaction.description);
        let group_key = (key, transaction.currency.code(), product.map(|(kind, _)| kind));
        let entry = groups.entry(group_key).or_insert_with(|| Group {
            name: merchant::display_name(&transaction.description),
            currency: transaction.currency,
            charges: Vec::new(),
            descriptions: Vec::new(),
            product: product.map(|(_, word)| word),
        });
        entry.charges.push(Charge {
            line: transaction.line,
            date: transaction.date,
            amount_minor: -transaction.amount_minor,
        });
        if entry.descriptions.len() < 12 {
            entry.descriptions.push(&transaction.description);
        }
    }
    // A merchant billing several products: each series is named after its product.
    let mut products: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    for (merchant, currency, _) in groups.keys() {
        *products.entry((merchant.clone(), currency)).or_default() += 1;
    }
    let mut candidates: Vec<Candidate> = groups
        .into_iter()
        .flat_map(|((merchant, currency, _), mut group)| {
            if let Some(word) = group.product
                && products.get(&(merchant.clone(), currency)).is_some_and(|&count| count > 1)
            {
                group.name = format!("{} ({})", group.name, merchant::title_case(word));
            }
            candidates_of(&merchant, group, statement_end)
        })
        .collect();
    candidates
        .sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then_with(|| a.name.cmp(&b.name)));
    candidates
}

/// The candidates one group makes: a series for each amount it charges steadily and, for a
/// bill, one whose amount follows use from the charges those leave.
fn candidates_of(merchant: &str, group: Group<'_>, statement_end: Date) -> Vec<Candidate> {
    let Group { name, currency, charges, descriptions, .. } = group;
    let total = charges.len();
    let mut rest = charges.clone();
    let clusters = amount_clusters(charges);
    let several = clusters.len() > 1;
    let mut found: Vec<Candidate> = clusters
        .into_iter()
        .filter_map(|cluster| {
            // A few same-priced charges among a shop's many are chance, not a subscription.
            if cluster.len() < 4 && cluster.len() * 4 < total {
                return None;
            }
            let mut found =
                candidate(merchant, name.clone(), currency, cluster, statement_end, false)?;
            if several {
                // "Apple (0.99)" and "Apple (9.99)": the person tells them apart.
                found.name = format!(
                    "{} ({})",
                    found.name,
                    domain::money::Money::new(found.amount_minor, currency).display()
                );
            }
            Some(found)
        })
        .collect();
    if !merchant::is_bill(merchant, &descriptions) {
        return found;
    }
    // A bill's amount follows use: the charges no steady series explains are taken together
    // (all of them, when there is no steady series).
    let explained: Vec<usize> =
        found.iter().flat_map(|c| c.charges.iter().map(|charge| charge.line)).collect();
    rest.retain(|charge| !explained.contains(&charge.line));
    rest.sort_by_key(|c| (c.date, c.line));
    let steady_found = !found.is_empty();
    let varying = candidate(merchant, name, currency, rest, statement_end, true)
        .filter(|candidate| !steady_found || candidate.amount_varies);
    found.extend(varying);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn charge(line: usize, date: &str, minor: i64, description: &str) -> Transaction {
        Transaction {
            line,
            date: date.parse().unwrap(),
            amount_minor: minor,
            currency: eur(),
            description: description.into(),
        }
    }

    fn monthly(description: &str, minor: i64, months: u32) -> Vec<Transaction> {
        (0..months)
            .map(|m| {
                let date = jiff::civil::date(2026, 1, 15)
                    .checked_add(jiff::Span::new().months(m))
                    .unwrap();
                charge(m as usize + 1, &date.to_string(), -minor, description)
            })
            .collect()
    }

    #[test]
    fn a_monthly_charge_with_a_price_rise_is_one_subscription() {
        let mut transactions = monthly("NETFLIX.COM 8665797172", 1399, 4);
        transactions.extend(monthly("NETFLIX.COM 8665797172", 1599, 8).into_iter().map(|mut t| {
            t.date = t.date.checked_add(jiff::Span::new().months(4)).unwrap();
            t
        }));
        let found = detect(&transactions);
        assert_eq!(found.len(), 1, "{found:#?}");
        let netflix = &found[0];
        assert_eq!(
            (netflix.name.as_str(), netflix.cycle, netflix.amount_minor),
            ("Netflix", CyclePreset::Monthly, 1599)
        );
        assert_eq!(netflix.category, Some("Streaming"));
        assert_eq!(netflix.price_changes.len(), 1);
        assert_eq!(netflix.next_expected, jiff::civil::date(2027, 1, 15));
        assert!(netflix.active && netflix.confidence > 0.8, "{netflix:?}");
    }

    #[test]
    fn groceries_income_and_two_services_of_one_merchant() {
        let mut transactions = monthly("APPLE.COM/BILL", 99, 6);
        transactions.extend(monthly("APPLE.COM/BILL", 999, 6));
        transactions.extend(monthly("SALARY ACME", -250_000, 6)); // money in
        // Groceries: irregular days and amounts.
        for (i, (day, amount)) in
            [(3, 4512_i64), (9, 2300), (11, 8810), (20, 1299), (27, 6400), (33, 2210), (40, 5120)]
                .iter()
                .enumerate()
        {
            let date =
                jiff::civil::date(2026, 1, 1).checked_add(jiff::Span::new().days(*day)).unwrap();
            transactions.push(charge(
                100 + i,
                &date.to_string(),
                -amount,
                "REWE MARKT 4411 BERLIN",
            ));
        }
        let found = detect(&transactions);
        let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(found.len(), 2, "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("Apple (")), "{names:?}");
    }

    #[test]
    fn a_shop_visited_monthly_with_a_different_amount_each_time_is_not_a_subscription() {
        let shop: Vec<Transaction> = (0..5)
            .map(|m| {
                let date = jiff::civil::date(2026, 1, 11)
                    .checked_add(jiff::Span::new().months(m))
                    .unwrap();
                charge(m as usize, &date.to_string(), -(2341 + 301 * m), "TESCO STORES 21")
            })
            .collect();
        assert!(detect(&shop).is_empty(), "{:?}", detect(&shop));
    }

    #[test]
    fn weekly_needs_a_steady_amount_and_two_charges_need_a_long_cycle() {
        let weekly: Vec<Transaction> = (0..8)
            .map(|w| {
                let date =
                    jiff::civil::date(2026, 1, 5).checked_add(jiff::Span::new().weeks(w)).unwrap();
                charge(w as usize, &date.to_string(), -(500 + 37 * w), "BAKERY")
            })
            .collect();
        assert!(detect(&weekly).is_empty(), "a weekly charge whose amount moves is shopping");
        let yearly = vec![
            charge(1, "2025-03-01", -1200, "DOMAIN REGISTRAR"),
            charge(2, "2026-03-02", -1200, "DOMAIN REGISTRAR"),
        ];
        assert_eq!(detect(&yearly)[0].cycle, CyclePreset::Yearly);
        let two_monthly =
            vec![charge(1, "2026-01-01", -900, "X"), charge(2, "2026-02-01", -900, "X")];
        assert!(detect(&two_monthly).is_empty(), "two monthly charges are not enough");
    }

    #[test]
    fn a_variable_bill_is_proposed_with_an_estimate() {
        let amounts: [i64; 8] = [6120, 5840, 4310, 3990, 4475, 5230, 7010, 8890];
        let bill: Vec<Transaction> = amounts
            .iter()
            .enumerate()
            .map(|(m, minor)| {
                let date = jiff::civil::date(2026, 1, 4)
                    .checked_add(jiff::Span::new().months(m as i64))
                    .unwrap();
                charge(m, &date.to_string(), -minor, &format!("IBERDROLA CLIENTES {m}8812"))
            })
            .collect();
        let found = detect(&bill);
        assert_eq!(found.len(), 1, "{found:#?}");
        let electricity = &found[0];
        assert!(electricity.amount_varies);
        assert_eq!((electricity.cycle, electricity.amount_minor), (CyclePreset::Monthly, 7010));
        assert!(electricity.price_changes.is_empty());
        assert!(electricity.confidence >= 0.6, "{electricity:?}");
        // The same amounts from a shop are shopping.
        let shop: Vec<Transaction> = bill
            .into_iter()
            .map(|mut t| {
                t.description = "TESCO STORES 21".into();
                t
            })
            .collect();
        assert!(detect(&shop).is_empty());
    }

    #[test]
    fn a_yearly_plan_among_the_shops_purchases() {
        let mut transactions = vec![
            charge(1, "2025-02-03", -8990, "AMAZON PRIME*2X4AB1234"),
            charge(2, "2026-02-03", -8990, "AMAZON PRIME*7Q9ZZ0001"),
        ];
        for (i, minor) in [8990_i64, 2399, 8990, 1250, 9120, 3100, 8800, 450].iter().enumerate() {
            let date = jiff::civil::date(2025, 2, 10)
                .checked_add(jiff::Span::new().days(41 * i as i64))
                .unwrap();
            transactions.push(charge(10 + i, &date.to_string(), -minor, "AMAZON MKTPLACE 12"));
        }
        let found = detect(&transactions);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].name.as_str(), found[0].cycle), ("Amazon Prime", CyclePreset::Yearly));
    }

    #[test]
    fn cash_transfers_card_repayments_taxes_and_salary_are_never_proposed() {
        for description in [
            "ATM WITHDRAWAL 0042",
            "TRANSFER TO SAVINGS",
            "Payment to Chase card ending in 1234",
            "FINANZAMT EST-VORAUSZAHLUNG",
            "SALARY NANNY",
        ] {
            let transactions = monthly(description, 20_000, 12);
            assert!(detect(&transactions).is_empty(), "{description}");
        }
        assert!(detect(&monthly("  ", 999, 6)).is_empty(), "nothing names what it was for");
    }

    #[test]
    fn charges_that_stopped_are_reported_as_ended() {
        let mut transactions = monthly("GYMPOWER LTD", 2990, 4);
        transactions.push(charge(99, "2026-12-20", -500, "COFFEE"));
        let gym = &detect(&transactions)[0];
        assert!(!gym.active, "{gym:?}");
    }

    /// Dated `day` of each month from January 2026, one charge per amount.
    fn monthly_amounts(day: i8, amounts: &[i64], description: &str) -> Vec<Transaction> {
        (0..amounts.len())
            .map(|m| {
                let date = jiff::civil::date(2026, 1, day)
                    .checked_add(jiff::Span::new().months(m as i64))
                    .unwrap();
                charge(100 + m, &date.to_string(), -amounts[m], description)
            })
            .collect()
    }

    #[test]
    fn a_utility_billing_two_products_gives_a_series_of_each() {
        // Electricity by use every month, water at a fixed price every quarter, each named.
        let use_: [i64; 9] = [6120, 5840, 4310, 3990, 4475, 5230, 7010, 8890, 6600];
        let mut transactions = monthly_amounts(4, &use_, "IBERDROLA CLIENTES LUZ 0455");
        for (q, date) in ["2026-01-20", "2026-04-20", "2026-07-20"].iter().enumerate() {
            transactions.push(charge(q, date, -2990, "IBERDROLA CLIENTES AGUA 0455"));
        }
        let found = detect(&transactions);
        let mut series: Vec<(&str, CyclePreset, bool)> =
            found.iter().map(|c| (c.name.as_str(), c.cycle, c.amount_varies)).collect();
        series.sort_by_key(|(name, ..)| *name);
        assert_eq!(
            series,
            [
                ("Iberdrola (Agua)", CyclePreset::Quarterly, false),
                ("Iberdrola (Luz)", CyclePreset::Monthly, true),
            ],
            "{found:#?}"
        );

        // The same bills under one description: the steady series, and the rest by use.
        let mut transactions = monthly_amounts(4, &use_, "IBERDROLA CLIENTES 0455");
        for (q, date) in ["2026-01-20", "2026-04-20", "2026-07-20"].iter().enumerate() {
            transactions.push(charge(q, date, -2990, "IBERDROLA CLIENTES 0455"));
        }
        let found = detect(&transactions);
        let fixed = found.iter().find(|c| !c.amount_varies).expect("the fixed series");
        let varying = found.iter().find(|c| c.amount_varies).expect("the series by use");
        assert_eq!(
            (found.len(), fixed.cycle, fixed.amount_minor),
            (2, CyclePreset::Quarterly, 2990)
        );
        assert_eq!(varying.cycle, CyclePreset::Monthly);
        assert_eq!(varying.charges.len(), use_.len(), "{varying:?}");
    }

    #[test]
    fn standing_orders_to_different_payees_are_different_series() {
        let mut transactions = monthly("STANDING ORDER TO J SMITH RENT", 95_000, 6);
        transactions.extend(monthly("STANDING ORDER TO GREENFIELD INSURANCE", 2300, 6));
        let mut names: Vec<String> = detect(&transactions).into_iter().map(|c| c.name).collect();
        names.sort();
        assert_eq!(names, ["Greenfield", "J Smith"]);
    }

    #[test]
    fn a_vehicle_tax_every_six_months_is_proposed_as_a_bill() {
        let transactions = vec![
            charge(1, "2025-09-01", -9250, "DVLA VEHICLE TAX AB12CDE"),
            charge(2, "2026-03-02", -9250, "DVLA VEHICLE TAX AB12CDE"),
            charge(3, "2026-03-10", -1250, "COFFEE"),
        ];
        let found = detect(&transactions);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].cycle, found[0].amount_minor), (CyclePreset::EverySixMonths, 9250));
        // An income tax paid the same way is still never proposed.
        let income_tax: Vec<Transaction> = transactions
            .into_iter()
            .map(|mut t| {
                t.description = t.description.replace("DVLA VEHICLE TAX", "HMRC SELF ASSESSMENT");
                t
            })
            .collect();
        assert!(detect(&income_tax).is_empty());
    }
}
