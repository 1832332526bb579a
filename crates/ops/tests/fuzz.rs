//! Fuzz targets of what models and people type: amounts, exchange rates, billing cycles and
//! dates (ISO and phrases such as "in 10 days" or "el próximo lunes"). Each parser must answer
//! with a value or a refusal, never panic; see the `fuzz` crate for budgets.

use std::path::PathBuf;

use domain::{
    cycle::Cycle,
    money::{Currency, Money, parse_rate},
};
use ops::{
    assistant::DollarsPerMillion,
    common::{ExchangeRate, SignedAmount, UnsignedAmount},
};

fn crashes() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/fuzz-crashes"))
}

fn strings(texts: &[&str]) -> Vec<Vec<u8>> {
    texts.iter().map(|t| t.as_bytes().to_vec()).collect()
}

#[test]
fn fuzz_amounts() {
    let seeds = strings(&[
        "12.99",
        "-1,234.56",
        "1.234,56",
        "€12,99",
        "(7.50)",
        "0",
        "1e3",
        " 5 ",
        "1000000000.0000",
        "0.000001",
        "999999.999999",
        "-0.00",
    ]);
    let currencies: Vec<Currency> = ["EUR", "JPY", "KWD", "USD"]
        .iter()
        .map(|code| Currency::parse(code).unwrap_or_else(|_| unreachable!("{code} is a currency")))
        .collect();
    let pattern = |pattern: &str| regex::Regex::new(pattern).unwrap_or_else(|err| panic!("{err}"));
    let (signed, unsigned, rate) = (
        pattern(ops::common::SIGNED_AMOUNT_PATTERN),
        pattern(ops::common::AMOUNT_PATTERN),
        pattern(ops::common::RATE_PATTERN),
    );
    let price = pattern(ops::assistant::PRICE_PATTERN);
    fuzz::check("amounts", &seeds, &[b",", b".", b"'", b"\xc2\xa0", b"-0"], &crashes(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        // A schema's pattern says exactly what its type reads (which also reads the value with
        // spaces around it).
        if text.trim() == text {
            let said = |pattern: &regex::Regex| pattern.is_match(&text);
            assert_eq!(said(&signed), text.parse::<SignedAmount>().is_ok(), "{text}");
            assert_eq!(said(&unsigned), text.parse::<UnsignedAmount>().is_ok(), "{text}");
            assert_eq!(said(&rate), text.parse::<ExchangeRate>().is_ok(), "{text}");
            assert_eq!(said(&price), text.parse::<DollarsPerMillion>().is_ok(), "{text}");
        }
        for currency in &currencies {
            if let Ok(money) = Money::parse(&text, *currency) {
                // What parses, formats: an amount shown back to a person never panics.
                let _ = money.display();
            }
        }
        if let Ok(rate) = parse_rate(&text) {
            let _ = domain::money::format_rate(rate);
        }
    });
}

#[test]
fn fuzz_cycles() {
    let seeds = strings(&[
        r#""monthly""#,
        r#""Bi-weekly""#,
        r#"{"every": 3, "unit": "month"}"#,
        r#"{"every": 366, "unit": "day"}"#,
        r#"{"every": 1.0, "unit": "YEAR"}"#,
    ]);
    fuzz::check(
        "cycles",
        &seeds,
        &[b"\"every\"", b"\"unit\"", b"week", b"-1", b"65536"],
        &crashes(),
        |bytes| {
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else { return };
            let cycle = match serde_json::from_value::<ops::common::CycleInput>(value) {
                Ok(ops::common::CycleInput::Preset(preset)) => Ok(preset.cycle()),
                Ok(ops::common::CycleInput::Custom { every, unit }) => Cycle::new(every, unit),
                Err(_) => return,
            };
            if let Ok(cycle) = cycle {
                let _ = cycle.describe();
                let anchor = jiff::civil::date(2026, 1, 31);
                for n in [0, 1, 12, 10_000] {
                    let _ = cycle.nth(anchor, n);
                }
                let _ = cycle.yearly_minor(i64::MAX);
                let _ = cycle.monthly_minor(i64::MIN);
            }
        },
    );
}

#[test]
fn fuzz_dates() {
    let seeds = strings(&[
        "2026-12-01",
        "2026-02-29",
        "in 10 days",
        "next monday",
        "el próximo lunes",
        "dentro de 3 semanas",
        "end of month",
        "tomorrow",
    ]);
    let today = jiff::civil::date(2026, 12, 1);
    fuzz::check(
        "dates",
        &seeds,
        &[b"in ", b" days", b"next ", b"9999999999", b"-"],
        &crashes(),
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            let _ = domain::relative::resolve(&text, today);
            let _ = serde_json::from_value::<ops::resolve::IsoDate>(serde_json::json!(text));
        },
    );
}
