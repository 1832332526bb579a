//! Every real bank export in `tests/realworld/` is read, with the number of transactions
//! its source project counts (or ours, where `deviations.tsv` says why we differ) and the
//! money out and in that reading the file by eye gives.

#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

#[path = "fixtures/realworld.rs"]
mod realworld;

#[test]
fn every_real_export_is_read_with_its_transactions_and_totals() {
    let files = realworld::files();
    assert_eq!(files.len(), 39, "the manifest lists every file");
    let mut wrong = Vec::new();
    for file in &files {
        match realworld::read(file) {
            Ok(statement) => {
                let count = statement.transactions.len();
                let totals = realworld::totals(&statement);
                if count != file.expected || totals != file.totals {
                    wrong.push(format!(
                        "{}: {count} transactions (expected {}), out and in {totals:?} (expected {:?}); problems {:?}",
                        file.file, file.expected, file.totals, statement.problems
                    ));
                }
            }
            Err(err) => wrong.push(format!("{}: refused: {err}", file.file)),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_deviation_from_a_source_project_says_why() {
    for file in realworld::files() {
        if let Some((peer, reason)) = &file.deviation {
            assert_ne!(*peer, file.expected, "{}: a deviation that is not one", file.file);
            assert!(reason.len() > 40, "{}: give the reason", file.file);
        }
    }
}
