//! What hostile statements cost the real server (issue 36): `exhale serve` with a read token
//! is sent the outside test's PDF (a mebibyte whose content unpacks to a gibibyte of zeros),
//! first alone, then four at once while another client asks `/healthz` over and over. It
//! prints how long each refusal took, `/healthz`'s latencies during the four, and the
//! server's memory at idle and at its peak.
//!
//! Run: `cargo bench -p exhale --bench hostile`.

#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark prints its figures and stops on any failure"
)]

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::json;

/// The server's resident memory now and at its peak, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let (now, peak) = test_support::memory_of(pid);
    (now as f64 / f64::from(1 << 20), peak as f64 / f64::from(1 << 20))
}

fn exhale(dir: &std::path::Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let dir = tempfile_dir();
    exhale(
        &dir,
        &["member", "create-owner", "--email", "a@b.test", "--name", "A", "--password-stdin"],
        "a long enough password\n",
    );
    let created = exhale(
        &dir,
        &["token", "create", "--member", "a@b.test", "--scope", "read", "--name", "bench"],
        "",
    );
    let token = created.lines().last().unwrap().to_owned();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(&dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    std::thread::spawn(move || lines.for_each(drop));
    let url = first.rsplit(' ').next().unwrap().trim_end_matches('/').to_owned();
    let pid = child.id();

    let client = reqwest::Client::new();
    let healthz = format!("{url}/healthz");
    for _ in 0..20 {
        client.get(&healthz).send().await.unwrap();
    }
    let (idle, _) = memory(pid);
    let pdf = statement::test_pdfs::gibibyte_of_zeros();
    println!("the outside test's PDF: {} KiB, unpacking to 1 GiB", pdf.len() / 1024);
    let body = json!({"content_base64": ops::import::encode_base64(&pdf)}).to_string();
    let bomb = |client: reqwest::Client| {
        let (url, token, body) = (url.clone(), token.clone(), body.clone());
        async move {
            let started = Instant::now();
            let answer = client
                .post(format!("{url}/api/v1/ops/parse_statement"))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 400);
            let text = answer.text().await.unwrap();
            assert!(text.contains("unpacks to more than"), "{text}");
            started.elapsed()
        }
    };

    let mut alone = Vec::new();
    for _ in 0..5 {
        alone.push(bomb(client.clone()).await);
    }
    alone.sort();
    println!("alone: refused in {} (median of 5; slowest {})", ms(alone[2]), ms(alone[4]));

    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let (client, healthz, done) = (client.clone(), healthz.clone(), done.clone());
        tokio::spawn(async move {
            let mut times = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let started = Instant::now();
                client.get(&healthz).send().await.unwrap();
                times.push(started.elapsed());
            }
            times
        })
    };
    let mut four = Vec::new();
    for _ in 0..5 {
        let rounds = futures_util::future::join_all((0..4).map(|_| bomb(client.clone()))).await;
        four.extend(rounds);
    }
    done.store(true, Ordering::Relaxed);
    let mut times = poller.await.unwrap();
    times.sort();
    four.sort();
    let percentile = |sorted: &[Duration], p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
    println!(
        "four at once, five rounds: each refused in {} median, {} slowest",
        ms(percentile(&four, 0.5)),
        ms(*four.last().unwrap())
    );
    println!(
        "/healthz meanwhile: {} answers, p50 {}, p99 {}, slowest {}",
        times.len(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap())
    );
    let (now, peak) = memory(pid);
    println!(
        "server memory: idle {idle:.1} MiB, peak {peak:.1} MiB ({:.1} MiB above idle), now {now:.1} MiB",
        peak - idle
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh data directory under the system's temporary one.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("exhale-hostile-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
