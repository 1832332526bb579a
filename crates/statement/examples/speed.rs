//! Reading and analysing 100,000 transactions (DESIGN section 9: under 1 s): the generated
//! households' rows, concatenated into one UK-style CSV; median of five runs.
//!
//! Run: `cargo run --release -p statement --example speed`.

#![expect(clippy::print_stdout, clippy::unwrap_used, reason = "a benchmark prints its figures")]

use std::time::{Duration, Instant};

#[allow(dead_code, reason = "the benchmark uses the generator, not the evaluation")]
#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

fn main() {
    let mut rows = Vec::new();
    let mut seed = 1;
    while rows.len() < 100_000 {
        let (household, _) = fixtures::household(seed);
        // Each household's merchants stay its own, as in a shared export of many accounts: a
        // short letters-only prefix ("ZAB") that merchant names keep.
        let letters: String = [b'A' + (seed / 26 % 26) as u8, b'A' + (seed % 26) as u8]
            .iter()
            .map(|&b| b as char)
            .collect();
        rows.extend(
            household
                .into_iter()
                .map(|(day, text, minor)| (day, format!("Z{letters} {text}"), minor)),
        );
        seed += 1;
    }
    rows.truncate(100_000);
    let file = fixtures::export("uk", &rows);
    let eur = domain::money::Currency::parse("EUR").unwrap();
    let mut times: Vec<Duration> = Vec::new();
    let mut found = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let statement = statement::read(&file, eur).unwrap();
        found = statement::recurring::detect(&statement.transactions).len();
        times.push(start.elapsed());
        assert_eq!(statement.transactions.len(), 100_000);
    }
    times.sort();
    println!(
        "100,000 transactions ({} bytes of CSV) read and analysed: median {:.0} ms, slowest {:.0} ms; {found} candidates",
        file.len(),
        times[2].as_secs_f64() * 1000.0,
        times[4].as_secs_f64() * 1000.0
    );
}
