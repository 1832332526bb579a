//! What hostile PDFs cost the reader, and the heaviest PDFs its limits let through: each is
//! read in a process of its own (this program run again, with a minute and 8 GB of address
//! space), which reports how long `statement::read` took, its answer, and the process's peak
//! memory.
//! `cargo run --release -p statement --features test-pdfs --example pdf_limits [NAME]`.

#![expect(
    clippy::print_stdout,
    clippy::expect_used,
    reason = "a measuring program prints its figures and stops on any failure"
)]

use std::{process::Command, time::Instant};

use statement::test_pdfs;

/// Every case by name: the hostile ones, then the heaviest within the limits.
fn cases() -> Vec<test_pdfs::Case> {
    let mut cases: Vec<test_pdfs::Case> =
        test_pdfs::hostile().into_iter().map(|h| (h.name, h.pdf)).collect();
    cases.extend(test_pdfs::heaviest());
    cases
}

/// Reads one case and prints what it cost.
fn measure(pdf: &[u8]) {
    let started = Instant::now();
    let answer = statement::read(pdf, domain::money::Currency::parse("EUR").expect("EUR"));
    let took = started.elapsed();
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM")).map(str::to_owned))
        .unwrap_or_default();
    let answer = match answer {
        Ok(s) => format!("read, {} transactions", s.transactions.len()),
        Err(e) => format!("refused: {e}"),
    };
    println!(
        "{} KiB, {:.3} s, peak {}, {answer}",
        pdf.len() / 1024,
        took.as_secs_f64(),
        peak.trim_start_matches("VmHWM:").trim()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = cases();
    if let (Some("--one"), Some(index)) = (args.get(1).map(String::as_str), args.get(2)) {
        measure(&(cases[index.parse::<usize>().expect("an index")].1)());
        return;
    }
    let only = args.get(1);
    let exe = std::env::current_exe().expect("this program");
    for (index, (name, _)) in cases.iter().enumerate() {
        if only.is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let out = Command::new("prlimit")
            .args(["--as=8000000000", "timeout", "60"])
            .arg(&exe)
            .args(["--one", &index.to_string()])
            .output()
            .expect("prlimit and timeout, from util-linux and coreutils");
        if out.status.success() {
            println!("{name}: {}", String::from_utf8_lossy(&out.stdout).trim());
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            let last: String = err.lines().last().unwrap_or_default().chars().take(120).collect();
            println!("{name}: CRASHED ({}) {last}", out.status);
        }
    }
}
