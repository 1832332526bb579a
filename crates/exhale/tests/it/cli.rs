//! The `exhale` binary as a person uses it: create an owner, make a token, call ops, back up,
//! and serve until SIGTERM.

use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Command, Output, Stdio},
};

use serde_json::{Value, json};
use test_support::{DataDir, TempDir};

/// Runs the real binary on a data directory (and its database), feeding `stdin`.
pub(crate) fn exhale(dir: &DataDir, args: &[&str], stdin: &str) -> Output {
    exhale_with_env(dir, args, stdin, &[])
}

/// [`exhale`] with more of the environment set.
pub(crate) fn exhale_with_env(
    dir: &DataDir,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(args)
        .env_remove("RUST_LOG")
        .env("HOME", dir.path())
        .envs(dir.env())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The standard output of a run that must have succeeded.
pub(crate) fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Ana, the first owner, created at the terminal with `password`.
pub(crate) fn create_owner(dir: &DataDir, password: &str) {
    stdout(&exhale(
        dir,
        &["member", "create-owner", "--email", "ana@a.test", "--name", "Ana", "--password-stdin"],
        &format!("{password}\n"),
    ));
}

/// Creates the owner ana@a.test and a token for her; returns the token.
pub(crate) fn owner_with_token(dir: &DataDir, scope: &str) -> String {
    create_owner(dir, "a long enough password");
    let token = stdout(&exhale(
        dir,
        &["token", "create", "--member", "ana@a.test", "--scope", scope, "--name", "t"],
        "",
    ));
    token.lines().last().unwrap().to_owned()
}

/// Netflix at 9.99 a month: the `create_subscription` input the terminal tests start from.
pub(crate) const NETFLIX: &str =
    r#"{"name": "Netflix", "amount": "9.99", "cycle": "monthly", "next_charge_on": "2026-12-01"}"#;

/// Runs `exhale op` with `args` (the op's name, then its flags), which must succeed, and reads
/// what it printed.
pub(crate) fn op(dir: &DataDir, args: &[&str]) -> Value {
    serde_json::from_str(&stdout(&exhale(dir, &[&["op"], args].concat(), ""))).unwrap()
}

/// Starts `exhale serve` on a free port; its first line of output says where.
pub(crate) fn spawn_serve(dir: &DataDir) -> std::process::Child {
    spawn_serve_with(dir, &[])
}

/// [`spawn_serve`] with more environment, e.g. `EXHALE_MAX_CONNECTIONS`.
pub(crate) fn spawn_serve_with(dir: &DataDir, env: &[(&str, &str)]) -> std::process::Child {
    spawn_serve_logging(dir, env, Stdio::null())
}

/// [`spawn_serve_with`], its log going to `log`.
pub(crate) fn spawn_serve_logging(
    dir: &DataDir,
    env: &[(&str, &str)],
    log: impl Into<Stdio>,
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("HOME", dir.path())
        .env_remove("RUST_LOG")
        .envs(dir.env())
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// The address a served binary printed on its first line. The rest of its output is read
/// and dropped, so the server never writes to a closed pipe.
pub(crate) fn listening_url(child: &mut std::process::Child) -> String {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    std::thread::spawn(move || lines.for_each(drop));
    first.strip_prefix("Exhale is listening on ").unwrap_or_else(|| panic!("{first}")).to_owned()
}

#[test]
fn a_person_sets_up_exhale_from_the_terminal() {
    let dir = DataDir::sqlite();
    // The version the health check and the web's footer say too (`rest.rs`).
    let version = stdout(&exhale(&dir, &["--version"], ""));
    assert_eq!(version.trim(), format!("exhale {}", env!("CARGO_PKG_VERSION")));
    let created = exhale(
        &dir,
        &[
            "member",
            "create-owner",
            "--email",
            "ana@a.test",
            "--name",
            "Ana",
            "--password-stdin",
            "--currency",
            "GBP",
            "--time-zone",
            "Europe/London",
        ],
        "a long enough password\n",
    );
    assert!(stdout(&created).contains("ana@a.test"));
    let short = exhale(
        &dir,
        &["member", "create-owner", "--email", "b@a.test", "--name", "B", "--password-stdin"],
        "short\n",
    );
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("10 to 256"));

    let token = stdout(&exhale(
        &dir,
        &["token", "create", "--member", "ana@a.test", "--scope", "write", "--name", "laptop"],
        "",
    ));
    let token = token.lines().last().unwrap();
    assert!(token.starts_with("exh_") && token.len() > 40, "{token}");

    let created = op(&dir, &["create_subscription", "--json", NETFLIX]);
    assert_eq!(created["price"]["display"], "£9.99");
    let from_stdin = stdout(&exhale(
        &dir,
        &["op", "list_subscriptions", "--json", "-", "--as", "ana@a.test"],
        r#"{"text": "net"}"#,
    ));
    assert_eq!(serde_json::from_str::<Value>(&from_stdin).unwrap()["total"], 1);
    let delete = json!({"id": created["id"]}).to_string();
    let dry = op(&dir, &["delete_subscription", "--dry-run", "--json", &delete]);
    assert_eq!(dry["dry_run"], true);
    let bad = exhale(
        &dir,
        &[
            "op",
            "create_subscription",
            "--json",
            r#"{"name": "X", "amount": "1", "cycle": "monthly", "next_charge_on": "2026-02-30"}"#,
        ],
        "",
    );
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("invalid_input") && stderr.contains("/next_charge_on"), "{stderr}");

    let list = stdout(&exhale(&dir, &["ops", "list"], ""));
    assert_eq!(list.lines().count(), ops::all().len());
    assert!(list.contains("delete_subscription") && list.contains("destructive"));
    let config = stdout(&exhale(&dir, &["config", "show"], ""));
    assert!(config.contains("data_dir") && config.contains("127.0.0.1:8080"));

    let copy = dir.path().join("backup.db");
    stdout(&exhale(&dir, &["backup", copy.to_str().unwrap()], ""));
    let other = DataDir::sqlite();
    std::fs::copy(&copy, other.path().join("exhale.db")).unwrap();
    assert_eq!(op(&other, &["list_subscriptions"])["total"], 1);

    // `exhale restore` brings the backup back into a data directory that changed since.
    op(&dir, &["delete_subscription", "--json", &delete]);
    assert_eq!(op(&dir, &["list_subscriptions"])["total"], 0);
    stdout(&exhale(&dir, &["restore", copy.to_str().unwrap()], ""));
    assert_eq!(op(&dir, &["list_subscriptions"])["total"], 1);
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"not a database").unwrap();
    let refused = exhale(&dir, &["restore", junk.to_str().unwrap()], "");
    assert!(!refused.status.success(), "a file that is not a backup is refused");
    assert_eq!(op(&dir, &["list_subscriptions"])["total"], 1, "and nothing was lost");
}

#[test]
fn restore_is_refused_while_an_exhale_has_the_database_open() {
    let dir = DataDir::sqlite();
    create_owner(&dir, "a long enough password");
    let copy = dir.path().join("backup.db");
    stdout(&exhale(&dir, &["backup", copy.to_str().unwrap()], ""));
    let mut server = spawn_serve(&dir);
    listening_url(&mut server);
    // Written after the backup, while the server runs: a restore now would take it away
    // under the server, which would carry on with what it had.
    let input =
        r#"{"name": "Kept", "amount": "5.00", "cycle": "monthly", "next_charge_on": "2026-12-01"}"#;
    stdout(&exhale(&dir, &["op", "create_subscription", "--json", input], ""));
    let refused = exhale(&dir, &["restore", copy.to_str().unwrap()], "");
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is open in another Exhale") && said.contains("stop it"), "{said}");
    assert_eq!(op(&dir, &["list_subscriptions"])["total"], 1, "nothing was replaced");

    // Once the server has stopped, the backup comes back.
    server.kill().unwrap();
    server.wait().unwrap();
    stdout(&exhale(&dir, &["restore", copy.to_str().unwrap()], ""));
    assert_eq!(op(&dir, &["list_subscriptions"])["total"], 0);
}

#[tokio::test]
async fn secrets_in_paths_never_reach_the_debug_log() {
    let dir = DataDir::new();
    create_owner(&dir, "a long enough password");
    let as_ana = |name: &str, input: &str| op(&dir, &[name, "--json", input, "--as", "ana@a.test"]);
    let feed = as_ana("create_calendar_feed", "{}")["path"].as_str().unwrap().to_owned();
    let invited = as_ana("invite_member", r#"{"name": "Bob", "email": "bob@a.test"}"#);
    let code = invited["invite_code"].as_str().unwrap().to_owned();
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut server = spawn_serve_logging(&dir, &[("RUST_LOG", "debug")], log);
    let url = listening_url(&mut server);
    let client =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let feed_secret = feed.trim_start_matches("/cal/").trim_end_matches(".ics").to_owned();
    assert_eq!(client.get(format!("{url}{feed}")).send().await.unwrap().status(), 200);
    for path in [
        format!("/invite/{code}"),
        format!("/sign-in?next=/invite/{code}"),
        "/setup/a-setup-secret-guessed".to_owned(),
    ] {
        client.get(format!("{url}{path}")).send().await.unwrap();
    }
    std::process::Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    server.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    for shown in ["uri=/cal/…", "uri=/invite/…", "uri=/sign-in?…", "uri=/setup/…"] {
        assert!(log.contains(shown), "{shown} is not in the log: {log}");
    }
    for secret in [feed_secret.as_str(), code.as_str(), "a-setup-secret-guessed"] {
        assert!(!log.contains(secret), "{secret} is in the log");
    }
}

#[test]
fn demo_data_gives_a_living_household() {
    let dir = DataDir::new();
    let out = stdout(&exhale(&dir, &["demo"], ""));
    assert!(out.contains("recorded charges"), "{out}");
    let summary = op(&dir, &["get_spending_summary"]);
    assert!(summary["subscription_count"].as_u64().unwrap() >= 10);
    let history = op(&dir, &["get_spending_history"]);
    assert!(
        history["months"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["charge_count"].as_u64().unwrap() > 0)
    );

    // And the money around them, so every ledger page and tool shows something.
    assert!(out.contains("4 accounts"), "{out}");
    assert_eq!(op(&dir, &["list_accounts"])["items"].as_array().unwrap().len(), 4);
    let all = op(&dir, &["search_transactions", "--json", r#"{"limit": 100}"#]);
    assert!(all["total"].as_u64().unwrap() > 250, "{}", all["total"]);
    let paying = |text: &str| {
        let found =
            op(&dir, &["search_transactions", "--json", &json!({"text": text}).to_string()]);
        found["items"].as_array().unwrap().clone()
    };
    let netflix = paying("NETFLIX");
    assert!(netflix.len() >= 10 && netflix.iter().all(|t| t["charge_id"].is_i64()), "{netflix:?}");
    assert!(netflix.iter().all(|t| t["category"]["name"] == "Streaming"), "{netflix:?}");
    let bills = paying("Visa bill");
    assert!(bills.len() >= 10 && bills.iter().all(|t| t["transfer_id"].is_i64()), "{bills:?}");
    assert_eq!(paying("ZALANDO").len(), 2, "a purchase and its refund");
    let holiday = paying("AIRBNB");
    assert_eq!(holiday[0]["labels"][0]["name"], "holiday", "{holiday:?}");
    assert!(op(&dir, &["list_rules"])["items"].as_array().unwrap().len() >= 8);

    // One budget over this period, one under.
    let budgets = op(&dir, &["list_budgets"]);
    let remaining: Vec<f64> = budgets["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["current"]["remaining"]["amount"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        remaining.iter().any(|r| *r < 0.0) && remaining.iter().any(|r| *r > 0.0),
        "{remaining:?}"
    );

    // The reports: last month's spending all sorted, income above expenses, a year of worth.
    let today: jiff::civil::Date =
        op(&dir, &["get_household"])["today"].as_str().unwrap().parse().unwrap();
    let month_ago = today.checked_sub(jiff::Span::new().months(1)).unwrap();
    let (from, to) = (month_ago.first_of_month(), month_ago.last_of_month());
    let window = json!({"from": from.to_string(), "to": to.to_string()}).to_string();
    let spending = op(&dir, &["spending_by_category", "--json", &window]);
    let categories = spending["categories"].as_array().unwrap();
    assert!(
        categories.len() >= 8 && categories.iter().all(|c| c["category"].is_object()),
        "{spending}"
    );
    let year = json!({"from": today.checked_sub(jiff::Span::new().years(1)).unwrap().to_string(),
        "to": today.to_string(), "interval": "month"})
    .to_string();
    let cashflow = op(&dir, &["get_cashflow", "--json", &year]);
    let amount = |v: &Value| v["amount"].as_str().unwrap().parse::<f64>().unwrap();
    assert!(amount(&cashflow["income"]) > amount(&cashflow["expenses"]), "{cashflow}");
    assert!(amount(&cashflow["expenses"]) > 0.0, "{cashflow}");
    let worth = op(&dir, &["get_net_worth", "--json", &year]);
    let points = worth["points"].as_array().unwrap();
    assert!(points.len() >= 12 && points.iter().all(|p| amount(&p["total"]) > 0.0), "{worth}");
}

#[tokio::test]
async fn the_demo_fills_every_page_a_person_opens() {
    let dir = DataDir::new();
    let out = stdout(&exhale(&dir, &["demo"], ""));
    let password = out.split("Password (shown once): ").nth(1).unwrap().trim().to_owned();
    let mut server = spawn_serve(&dir);
    let url = listening_url(&mut server);
    let mut alex = crate::web::Visitor::at(&url);
    alex.sign_in("demo@example.com", &password).await;
    let pages = [
        ("/", vec!["data-testid=\"monthly-total\"", "Netflix"]),
        ("/subscriptions", vec!["Spotify Family", "Gym membership"]),
        (
            "/money",
            vec!["Joint checking", "Savings", "over by", "left", "Supermarkets", "holiday", "<svg"],
        ),
        ("/transactions", vec!["Mercadona", "Visa bill", "Eating out"]),
    ];
    for (path, shown) in pages {
        let page = alex.get(path).await;
        assert_eq!(page.status, reqwest::StatusCode::OK, "{path}");
        let body = crate::web::unescape(&page.body);
        for text in shown {
            assert!(body.contains(text), "{path} does not show {text}");
        }
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test]
async fn serve_answers_until_sigterm_then_exits_cleanly() {
    let dir = DataDir::new();
    let token = owner_with_token(&dir, "read");
    let mut child = spawn_serve(&dir);
    let url = listening_url(&mut child);
    let response = reqwest::Client::new()
        .post(format!("{url}/api/v1/ops/get_household"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap()["currency"], "EUR");
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn configuration_layers_defaults_file_environment_and_flags() {
    let dir = TempDir::new();
    let file = dir.path().join("exhale.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:9001\"\nlog = \"debug\"\n").unwrap();
    let show = |extra_env: &[(&str, &str)], extra_args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_exhale"));
        command.env("HOME", dir.path()).env_remove("EXHALE_LISTEN").env_remove("EXHALE_DATA_DIR");
        for (key, value) in extra_env {
            command.env(key, value);
        }
        let output = command
            .args(["--config", file.to_str().unwrap()])
            .args(extra_args)
            .args(["config", "show"])
            .output()
            .unwrap();
        stdout(&output)
    };
    let from_file = show(&[], &[]);
    assert!(from_file.contains("127.0.0.1:9001") && from_file.contains("debug"), "{from_file}");
    assert!(from_file.contains(".local/share/exhale"), "the default data directory: {from_file}");
    let from_env =
        show(&[("EXHALE_LISTEN", "127.0.0.1:9002"), ("EXHALE_DATA_DIR", "/tmp/exhale-env")], &[]);
    assert!(
        from_env.contains("127.0.0.1:9002") && from_env.contains("/tmp/exhale-env"),
        "{from_env}"
    );
    let from_flag = show(&[("EXHALE_LISTEN", "127.0.0.1:9002")], &["--listen", "127.0.0.1:9003"]);
    assert!(from_flag.contains("127.0.0.1:9003"), "{from_flag}");
    std::fs::write(&file, "listen = \"127.0.0.1:9001\"\nsurprise = 1\n").unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_exhale"))
        .env("HOME", dir.path())
        .args(["--config", file.to_str().unwrap(), "config", "show"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("surprise"));
}

#[tokio::test]
async fn serve_prints_a_setup_link_that_opens_the_first_run_page() {
    let dir = DataDir::new();
    let mut child = spawn_serve(&dir);
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines {
        let line = line.unwrap();
        let done = line.contains("member create-owner");
        seen.push(line);
        if done {
            break;
        }
    }
    let link = seen
        .iter()
        .find_map(|l| l.trim().strip_prefix("http://").filter(|l| l.contains("/setup/")))
        .unwrap_or_else(|| panic!("no setup link in {seen:?}"));
    let page = reqwest::get(format!("http://{link}")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Create household"));
    let guessed = link.rsplit_once('/').unwrap().0.to_owned() + "/0123456789abcdef0123456789abcdef";
    assert_eq!(reqwest::get(format!("http://{guessed}")).await.unwrap().status(), 404);
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn exhale_import_shows_the_review_list_and_imports_only_with_apply() {
    let dir = DataDir::new();
    owner_with_token(&dir, "read");
    // A German export in Windows-1252: semicolons, decimal commas, account lines on top.
    let mut export = String::from("Konto;DE12\n\nBuchungstag;Empfänger;Betrag\n");
    for month in 1..=5 {
        export.push_str(&format!("0{month}.0{month}.2026;NETFLIX.COM 86{month}5;-13,99\n"));
        export
            .push_str(&format!("1{month}.0{month}.2026;REWE {month}1{month};-{month}3,1{month}\n"));
    }
    let bytes: Vec<u8> = export.chars().map(|c| if c == 'ä' { 0xE4 } else { c as u8 }).collect();
    let file = dir.path().join("umsaetze.csv");
    std::fs::write(&file, bytes).unwrap();
    let path = file.to_str().unwrap();

    let review = stdout(&exhale(&dir, &["import", path], ""));
    assert!(review.contains("Read 10 transactions (Windows-1252, semicolon-separated"), "{review}");
    assert!(review.contains(" + Netflix") && review.contains("Run again with --apply"), "{review}");
    let listed = stdout(&exhale(&dir, &["op", "list_subscriptions"], ""));
    assert!(!listed.contains("Netflix"), "showing the list imports nothing");

    let applied = stdout(&exhale(&dir, &["import", path, "--apply"], ""));
    assert!(applied.contains("Imported 1: Netflix."), "{applied}");
    let again = stdout(&exhale(&dir, &["import", path, "--apply"], ""));
    assert!(
        again.contains("already: Netflix") && again.contains("Nothing new to import."),
        "{again}"
    );

    // A file too large is refused by its size, before it is read.
    let huge = dir.path().join("huge.csv");
    std::fs::File::create(&huge).unwrap().set_len(2 * 1024 * 1024 * 1024).unwrap();
    let refused = exhale(&dir, &["import", huge.to_str().unwrap()], "");
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Export a shorter period"));
}

#[test]
fn a_wrong_collector_or_assistant_provider_stops_the_start_with_what_to_write() {
    let dir = DataDir::new();
    let config = dir.path().join(".config/exhale");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "otlp_endpoint = \"https://collector.example\"\n")
        .unwrap();
    let refused = exhale(&dir, &["config", "show"], "");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("must start with http://"));

    std::fs::write(config.join("config.toml"), "otlp_endpoint = \"http://127.0.0.1:4318\"\n")
        .unwrap();
    let shown = stdout(&exhale(&dir, &["config", "show"], ""));
    assert!(shown.contains("otlp_endpoint = \"http://127.0.0.1:4318\""), "{shown}");

    let output = Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(dir.path())
        .arg("check")
        .env("HOME", dir.path())
        .env("EXHALE_ASSISTANT_PROVIDER", "skynet")
        .env("EXHALE_ASSISTANT_API_KEY", "sk-never-printed")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("EXHALE_ASSISTANT_PROVIDER=skynet is not one of ollama, lm_studio"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-never-printed") && !shown.contains("sk-never"));
}

/// Every route whose path holds a secret (a parameter named for one) is one the log leaves out
/// (`SECRET_PATHS`): a new such route fails here until it is added.
#[test]
fn every_route_with_a_secret_in_its_path_is_kept_out_of_the_log() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let secret_paths: Vec<&str> =
        web::SECRET_PATHS.iter().chain(channels::SECRET_PATHS).copied().collect();
    let mut checked = 0;
    for source in
        ["crates/web/src/lib.rs", "crates/channels/src/feed.rs", "crates/channels/src/lib.rs"]
    {
        let text = std::fs::read_to_string(root.join(source)).unwrap();
        for route in text.split(".route(\"").skip(1) {
            let path = route.split('"').next().unwrap();
            if ["{secret}", "{code}", "{file}", "{token}"].iter().any(|p| path.contains(p)) {
                checked += 1;
                assert!(
                    secret_paths.iter().any(|prefix| path.starts_with(prefix)),
                    "{path} in {source} holds a secret the log would show: add it to SECRET_PATHS"
                );
            }
        }
    }
    assert_eq!(checked, 3, "the setup link, invitations and calendar feeds");
}

/// Runs the binary with `EXHALE_DATABASE_URL` set to `url`.
fn with_database_url(dir: &TempDir, url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_exhale"))
        .args(["--data-dir", dir.path().to_str().unwrap()])
        .args(args)
        .env("HOME", dir.path())
        .env_remove("RUST_LOG")
        .env("EXHALE_DATABASE_URL", url)
        .output()
        .unwrap()
}

#[test]
fn a_database_url_that_cannot_work_is_refused_at_start_with_the_fix_and_its_password_never_shown() {
    let dir = TempDir::new();
    let stderr = |output: &Output| {
        assert!(!output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let malformed = stderr(&with_database_url(
        &dir,
        "postgres://exhale:pw@db:notaport/x",
        &["op", "list_subscriptions"],
    ));
    assert!(
        malformed.contains("not a PostgreSQL URL")
            && malformed.contains("postgres://user:password@host:5432/database"),
        "{malformed}"
    );
    // A socket directory where no server listens.
    let nowhere = dir.path().join("no-server");
    std::fs::create_dir(&nowhere).unwrap();
    let url = format!("host={} user=exhale password=s3cret-pw dbname=exhale", nowhere.display());
    let unreachable = stderr(&with_database_url(&dir, &url, &["op", "list_subscriptions"]));
    assert!(
        unreachable.contains("cannot connect to PostgreSQL at")
            && unreachable.contains("check that the server runs"),
        "{unreachable}"
    );
    assert!(!unreachable.contains("s3cret-pw"), "{unreachable}");
    assert!(!dir.path().join("exhale.db").exists(), "nothing fell back to SQLite");
    // Backups are PostgreSQL's own tools' work; nothing is opened to say so.
    let backup = stderr(&with_database_url(&dir, &url, &["backup", "/tmp/never.db"]));
    assert!(backup.contains("pg_dump") && backup.contains("pg_restore"), "{backup}");
    assert!(!backup.contains("s3cret-pw"), "{backup}");
    let restore = stderr(&with_database_url(&dir, &url, &["restore", "/tmp/never.db"]));
    assert!(restore.contains("pg_restore"), "{restore}");
    let shown = stdout(&with_database_url(
        &dir,
        "postgres://exhale:s3cret-pw@db.example/exhale",
        &["config", "show"],
    ));
    assert!(shown.contains("postgres://exhale:***@db.example/exhale"), "{shown}");
    assert!(!shown.contains("s3cret-pw"), "{shown}");
}

/// `exhale check` on the database at `url`, as a person would run it.
pub(crate) fn check_at(dir: &DataDir, url: &str) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_exhale"))
        .arg("--data-dir")
        .arg(dir.path())
        .arg("check")
        .env("HOME", dir.path())
        .env_remove("RUST_LOG")
        .env("EXHALE_DATABASE_URL", url)
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}
