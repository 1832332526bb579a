//! The real bank exports of `tests/realworld/` (files read, transactions read against
//! expected), then precision and recall of recurring-charge detection on the generated bank
//! exports, and what was missed or invented, per style. `--write DIR` also writes the
//! generated files out.
//!
//! Run: `cargo run -p statement --example eval [-- --households N] [--show N] [--write DIR]
//! [--file NAME]]`; `--file` lists the transactions read from the real files whose names
//! contain NAME.

#![expect(clippy::print_stdout, clippy::unwrap_used, reason = "a command-line report")]

#[path = "../tests/fixtures/mod.rs"]
mod fixtures;
#[path = "../tests/fixtures/realworld.rs"]
mod realworld;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().skip_while(|a| *a != flag).nth(1).cloned();
    let households: u64 = value("--households").and_then(|n| n.parse().ok()).unwrap_or(10);
    if let Some(dir) = value("--write") {
        std::fs::create_dir_all(&dir).unwrap();
        let (rows, truth) = fixtures::household(1);
        for style in fixtures::STYLES {
            std::fs::write(format!("{dir}/statement-{style}.csv"), fixtures::export(style, &rows))
                .unwrap();
        }
        let truth: Vec<String> = truth
            .iter()
            .map(|t| format!("{}\t{}\t{}", t.merchant, t.cycle, t.amount_minor))
            .collect();
        std::fs::write(format!("{dir}/truth.tsv"), truth.join("\n") + "\n").unwrap();
        println!("wrote {} files and truth.tsv to {dir}", fixtures::STYLES.len());
    }
    real_files(value("--file").as_deref());
    let eur = domain::money::Currency::parse("EUR").unwrap();
    let show: u64 = value("--show").and_then(|n| n.parse().ok()).unwrap_or(1);
    for (seed, style) in
        (1..=show).flat_map(|seed| fixtures::STYLES.iter().map(move |style| (seed, style)))
    {
        let (rows, truth) = fixtures::household(seed);
        let statement = statement::read(&fixtures::export(style, &rows), eur).unwrap();
        let found: Vec<_> = statement::recurring::detect(&statement.transactions)
            .into_iter()
            .filter(|c| c.active)
            .collect();
        let missed: Vec<String> = truth
            .iter()
            .filter(|t| !found.iter().any(|c| t.matches(c)))
            .map(|t| format!("{} {} {}", t.merchant, t.cycle, t.amount_minor))
            .collect();
        let invented: Vec<String> = found
            .iter()
            .filter(|c| !truth.iter().any(|t| t.matches(c)))
            .map(|c| {
                let varies = if c.amount_varies { " (varies)" } else { "" };
                format!("{} {} {}{varies}", c.merchant, c.cycle, c.amount_minor)
            })
            .collect();
        println!(
            "household {seed} {style:<14} {} transactions, {} problems; missed {missed:?}; invented {invented:?}",
            statement.transactions.len(),
            statement.problems.len()
        );
    }
    let (hits, reported, expected) = fixtures::evaluate(households);
    println!(
        "\n{households} households x {} styles: precision {:.3} ({hits}/{reported}), recall {:.3} ({hits}/{expected})",
        fixtures::STYLES.len(),
        hits as f64 / reported.max(1) as f64,
        hits as f64 / expected as f64
    );
}

/// Each real file: transactions read against expected, problems and how it was read.
fn real_files(show: Option<&str>) {
    let files = realworld::files();
    let (mut exact, mut read, mut expected) = (0, 0, 0);
    for file in &files {
        expected += file.expected;
        match realworld::read(file) {
            Ok(statement) => {
                let count = statement.transactions.len();
                let totals_ok = realworld::totals(&statement) == file.totals;
                read += count;
                let right = count == file.expected && totals_ok;
                exact += usize::from(right);
                if show.is_some_and(|name| file.file.contains(name)) {
                    for t in &statement.transactions {
                        println!(
                            "    line {:>3} {} {:>10} {} {}",
                            t.line,
                            t.date,
                            t.amount_minor,
                            t.currency.code(),
                            t.description
                        );
                    }
                    for p in &statement.problems {
                        println!("    line {:>3} problem: {}", p.line, p.message);
                    }
                }
                let mark = if right { "ok " } else { "BAD" };
                let deviation = file
                    .deviation
                    .as_ref()
                    .map_or(String::new(), |(peer, _)| format!(" (source project: {peer})"));
                println!(
                    "{mark} {:<48} {count:>3}/{:<3} {} problems; {}{deviation}",
                    file.file,
                    file.expected,
                    statement.problems.len(),
                    statement.notes.join("; ")
                );
            }
            Err(err) => println!("BAD {:<48}   -/{:<3} refused: {err}", file.file, file.expected),
        }
    }
    println!(
        "\nreal files: {exact} of {} read with the expected transactions and totals; {read} transactions read, {expected} expected\n",
        files.len()
    );
}
