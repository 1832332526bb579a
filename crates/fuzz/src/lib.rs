//! A small mutation fuzzer that runs on stable Rust, inside ordinary tests: the parsers of
//! statements, amounts, cycles, dates, JSON-RPC framing and OAuth's requests each have a
//! `fuzz_*` test that feeds mutations of real inputs (seeds) to the parser and fails on a panic.
//!
//! It is not coverage-guided (that needs a nightly toolchain or an instrumenting compiler):
//! it mutates seeds and the inputs it made before, with byte flips, inserts and deletions,
//! splices of two inputs and the target's own tokens (delimiters, quotes, tags). Runs are
//! deterministic for a budget in iterations, so a CI failure reproduces.
//!
//! The budget: `FUZZ_SECONDS` (run for that long; for hours on demand), else `FUZZ_ITERATIONS`,
//! else [`DEFAULT_ITERATIONS`]. A crashing input is written to the crash directory the test
//! gives, and the test fails naming it. Here: the engine; the targets live with their crates'
//! tests. Nothing here is used by the product.

use std::{
    panic::{self, AssertUnwindSafe},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

/// Iterations per target when no budget is set: seconds each in a debug build, under a minute
/// for all targets.
pub const DEFAULT_ITERATIONS: u64 = 10_000;
/// The largest input made by mutation.
const MAX_INPUT: usize = 64 * 1024;
/// Inputs kept to mutate further.
const POOL: usize = 256;

/// What a run did.
#[derive(Debug)]
pub struct Report {
    pub target: String,
    pub executions: u64,
    pub elapsed: Duration,
    /// Files holding the inputs that panicked.
    pub crashes: Vec<PathBuf>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: {} executions in {:.1} s, {} crashes",
            self.target,
            self.executions,
            self.elapsed.as_secs_f64(),
            self.crashes.len()
        )
    }
}

enum Budget {
    Iterations(u64),
    Time(Duration),
}

#[expect(clippy::disallowed_methods, reason = "a test tool's own knob, not Exhale's configuration")]
fn budget() -> Budget {
    let read = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
    match (read("FUZZ_SECONDS"), read("FUZZ_ITERATIONS")) {
        (Some(seconds), _) => Budget::Time(Duration::from_secs(seconds)),
        (None, Some(iterations)) => Budget::Iterations(iterations),
        (None, None) => Budget::Iterations(DEFAULT_ITERATIONS),
    }
}

/// xorshift64*: small, fast and deterministic; good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that break parsers: delimiters, quotes, line ends, signs, decimal marks, markup, and
/// encodings' edges.
const GENERIC_TOKENS: &[&[u8]] = &[
    b",",
    b";",
    b"\t",
    b"\"",
    b"'",
    b"\n",
    b"\r\n",
    b"\r",
    b"-",
    b"+",
    b".",
    b"0",
    b"9",
    b"999999999999999999999",
    b"-0",
    b"1e308",
    b"<",
    b">",
    b"</",
    b"/>",
    b"&",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\xc3",
    b"\xe2\x80\x8b",
    b"%",
    b"$",
    b"\xe2\x82\xac",
    b" ",
    b"  ",
    b"2026-02-29",
    b"31/12/2026",
    b"null",
    b"true",
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8], tokens: &[&[u8]]) {
    let token = |rng: &mut Rng| -> &[u8] {
        if !tokens.is_empty() && rng.below(2) == 0 {
            tokens[rng.below(tokens.len())]
        } else {
            GENERIC_TOKENS[rng.below(GENERIC_TOKENS.len())]
        }
    };
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(8) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = rng.next() as u8;
            }
            2 => {
                let at = rng.below(len + 1);
                let piece = token(rng).to_vec();
                input.splice(at..at, piece);
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(64)).min(len);
                input.drain(start..end);
            }
            4 if len > 0 => {
                // Repeat a run: long fields, many rows, deep nesting.
                let start = rng.below(len);
                let end = (start + 1 + rng.below(256)).min(len);
                let run = input[start..end].to_vec();
                for _ in 0..=rng.below(8) {
                    let at = rng.below(input.len() + 1);
                    input.splice(at..at, run.iter().copied());
                }
            }
            5 if !other.is_empty() => {
                // Splice: the head of this input, the tail of another.
                let cut = rng.below(len + 1);
                let from = rng.below(other.len());
                input.truncate(cut);
                input.extend_from_slice(&other[from..]);
            }
            6 if len > 0 => {
                let at = rng.below(len);
                input.truncate(at);
            }
            _ => {
                let at = rng.below(len + 1);
                let piece = token(rng).to_vec();
                input.splice(at..at, piece);
            }
        }
    }
    input.truncate(MAX_INPUT);
}

/// Feeds `target` the seeds, then mutations of them, within the budget; an input that panics
/// is written to `crash_dir`. `tokens` are the target's own interesting bytes.
pub fn run(
    name: &str,
    seeds: &[Vec<u8>],
    tokens: &[&[u8]],
    crash_dir: &Path,
    target: impl Fn(&[u8]),
) -> Report {
    let budget = budget();
    let started = Instant::now();
    // Seeded from the name, so each target explores its own way and reruns the same.
    let mut rng = Rng(name
        .bytes()
        .fold(0x9E37_79B9_7F4A_7C15, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)));
    let mut pool: Vec<Vec<u8>> = if seeds.is_empty() { vec![Vec::new()] } else { seeds.to_vec() };
    let mut crashes = Vec::new();
    let mut executions = 0u64;
    // Panics are caught and reported here; the default hook would print each one.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    loop {
        let done = match budget {
            Budget::Iterations(n) => executions >= n,
            Budget::Time(limit) => started.elapsed() >= limit,
        };
        if done {
            break;
        }
        let input = if (executions as usize) < seeds.len() {
            seeds[executions as usize].clone()
        } else {
            let mut input = pool[rng.below(pool.len())].clone();
            let other = &pool[rng.below(pool.len())];
            mutate(&mut rng, &mut input, other, tokens);
            input
        };
        executions += 1;
        if panic::catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let path = crash_dir.join(format!("{name}-crash-{}.bin", crashes.len()));
            let _ = std::fs::create_dir_all(crash_dir);
            let _ = std::fs::write(&path, &input);
            crashes.push(path);
            if crashes.len() >= 10 {
                break;
            }
            continue;
        }
        if pool.len() < POOL {
            pool.push(input);
        } else {
            let slot = rng.below(POOL);
            pool[slot] = input;
        }
    }
    panic::set_hook(hook);
    Report { target: name.to_owned(), executions, elapsed: started.elapsed(), crashes }
}

/// [`run`], printing the report and failing the test on any crash.
#[expect(clippy::print_stdout, reason = "the report is what a test run shows")]
pub fn check(
    name: &str,
    seeds: &[Vec<u8>],
    tokens: &[&[u8]],
    crash_dir: &Path,
    target: impl Fn(&[u8]),
) {
    let report = run(name, seeds, tokens, crash_dir, target);
    println!("{report}");
    assert!(
        report.crashes.is_empty(),
        "{report}; the inputs are in {:?}: replay one with the target on std::fs::read(path)",
        report.crashes
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_input_is_found_and_kept() {
        let dir = std::env::temp_dir().join(format!("fuzz-self-test-{}", std::process::id()));
        // Panics on any input holding a semicolon, which the seeds do not.
        let report = run("self", &[b"a,b,c".to_vec()], &[b";"], &dir, |input| {
            assert!(!input.contains(&b';'), "found it");
        });
        assert!(!report.crashes.is_empty(), "{report}");
        assert!(std::fs::read(&report.crashes[0]).unwrap().contains(&b';'));
        let _ = std::fs::remove_dir_all(dir);
    }
}
