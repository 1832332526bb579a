//! The `exhale` binary: command-line interface, configuration and wiring.
//!
//! Every command that reads or changes data goes through the op catalog, in-process, acting
//! as a member (the CLI is a person at the terminal, with their role's rights).

#![expect(clippy::print_stdout, clippy::print_stderr, reason = "a command-line program prints")]

mod config;
mod demo;
mod health;
mod import;
mod logging;
mod pdf_process;
mod serve;
mod telemetry;

use std::{io::Read as _, net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc};

use anyhow::{Context as _, anyhow};
use clap::{Parser, Subcommand};
use ops::{Catalog as _, Mode, Via};

use crate::config::{Config, Flags};

#[derive(Parser)]
#[command(
    name = "exhale",
    version,
    about = "Exhale: a self-hosted money app for households, with AI agents as first-class users"
)]
struct Cli {
    /// Configuration file (TOML). Default: $XDG_CONFIG_HOME/exhale/config.toml when present.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Where the database lives. Default: $XDG_DATA_HOME/exhale.
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Address to listen on. Default: 127.0.0.1:8080.
    #[arg(long, global = true)]
    listen: Option<SocketAddr>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the REST API and MCP at /mcp until SIGTERM or Ctrl-C.
    Serve,
    /// Serve MCP over stdin and stdout, acting with a token (for Claude Desktop, Cursor, …).
    Mcp {
        /// The API token; default: the EXHALE_TOKEN environment variable.
        #[arg(long)]
        token: Option<String>,
        /// Which tools to list: full, subscriptions (what keeping subscriptions takes, with
        /// find_tools and call_tool for the rest), or compact (the most used, for small
        /// models); default: the token's setting.
        #[arg(long)]
        tools: Option<String>,
    },
    /// List or describe ops.
    Ops {
        #[command(subcommand)]
        command: OpsCommand,
    },
    /// Call one op in-process, as a member, and print its JSON output.
    Op {
        /// The op name, e.g. list_subscriptions.
        name: String,
        /// The input as JSON, or - to read it from stdin.
        #[arg(long, default_value = "{}")]
        json: String,
        /// The member to act as (email). Default: the only owner.
        #[arg(long = "as")]
        as_member: Option<String>,
        /// Preview the change without applying it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Manage members.
    Member {
        #[command(subcommand)]
        command: MemberCommand,
    },
    /// Link, list and sync bank connections.
    Bank {
        #[command(subcommand)]
        command: BankCommand,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Read a bank export (CSV, OFX or PDF), show the recurring charges found, and with --apply
    /// import the new ones as subscriptions.
    Import {
        /// The export as the bank gave it (CSV in any common dialect and encoding, OFX/QFX, or a PDF with text).
        path: PathBuf,
        /// Import the ones marked + (otherwise only show the review list).
        #[arg(long)]
        apply: bool,
        /// Propose only candidates at least this confident (0 to 1); default 0.6.
        #[arg(long)]
        min_confidence: Option<f64>,
        /// The member to act as (email). Default: the only owner.
        #[arg(long = "as")]
        as_member: Option<String>,
    },
    /// Write a consistent copy of the database to PATH (safe while the server runs).
    Backup { path: PathBuf },
    /// Replace the database with a backup made by `exhale backup` or an automatic backup,
    /// sealed or not (stop `exhale serve` first). The backup is checked before anything is
    /// replaced.
    Restore {
        path: PathBuf,
        /// Read a sealed backup's passphrase from standard input (else EXHALE_BACKUP_PASSPHRASE
        /// or backup_passphrase in the configuration).
        #[arg(long)]
        passphrase_stdin: bool,
    },
    /// Check the database file and its references (after a crash or a power cut).
    Check,
    /// Ask the server running with this configuration whether it is up (its /healthz), as a
    /// container's health check does: exit 0 when it answers, 1 when it does not.
    Healthcheck,
    /// Copy the SQLite database in the data directory into an empty PostgreSQL database,
    /// every row and the history, in one transaction, and check the copy (stop `exhale serve`
    /// first).
    Migrate {
        /// The PostgreSQL URL, postgres://user:password@host:5432/database; default:
        /// EXHALE_DATABASE_URL (which keeps the password out of the process list).
        #[arg(long)]
        to: Option<String>,
    },
    /// Show the effective configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Create a demo household with realistic subscriptions and a year of charges.
    Demo {
        #[arg(long, default_value = "demo@example.com")]
        email: String,
    },
    /// Read one PDF statement from standard input, within limits, and print its rows as JSON
    /// (the server runs this for each PDF; see pdf_process.rs).
    #[command(hide = true)]
    ReadPdf,
}

#[derive(Subcommand)]
enum OpsCommand {
    /// One line per op: name, scope, flags, summary.
    List,
}

#[derive(Subcommand)]
enum MemberCommand {
    /// Create a household and its first owner.
    CreateOwner {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// Read the password from stdin (10 to 256 characters).
        #[arg(long, required = true)]
        password_stdin: bool,
        #[arg(long, default_value = "Home")]
        household: String,
        #[arg(long, default_value = "EUR")]
        currency: String,
        /// IANA time zone. Default: this machine's, or UTC.
        #[arg(long)]
        time_zone: Option<String>,
        #[arg(long, default_value = "en")]
        language: String,
    },
}

#[derive(Subcommand)]
enum BankCommand {
    /// Link banks through a provider; the credential is read from stdin, never an argument.
    Link {
        #[command(subcommand)]
        provider: BankProviderCommand,
    },
    /// List the bank connections a member sees: accounts, last sync, problems.
    List {
        /// The member (email). Default: the only owner.
        #[arg(long)]
        member: Option<String>,
    },
    /// Sync a bank connection now.
    Sync {
        /// The connection's id (from `exhale bank list`).
        id: i64,
        /// The member (email). Default: the only owner.
        #[arg(long)]
        member: Option<String>,
    },
}

#[derive(Subcommand)]
enum BankProviderCommand {
    /// SimpleFIN Bridge (US and Canada): paste the setup token from the Bridge on stdin.
    Simplefin {
        /// The member linking it (email). Default: the only owner.
        #[arg(long)]
        member: Option<String>,
        /// Only this member sees the connection and the accounts it brings.
        #[arg(long)]
        private: bool,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token for a member; prints the token alone on the last line.
    Create {
        /// The member's email.
        #[arg(long)]
        member: String,
        /// read, write or trusted.
        #[arg(long)]
        scope: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration as TOML.
    Show,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("exhale: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::ReadPdf = cli.command {
        // Nothing else first: no configuration, no log, no database.
        return Ok(pdf_process::read_one());
    }
    let config =
        Config::load(Flags { config: cli.config, data_dir: cli.data_dir, listen: cli.listen })?;
    logging::init(&config.log_filter(), config.collector()?);
    if let Command::Config { command: ConfigCommand::Show } = &cli.command {
        println!("{}", toml::to_string(&config)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Command::Healthcheck = &cli.command {
        return Ok(health::check(config.listen));
    }
    if let Command::Ops { command: OpsCommand::List } = &cli.command {
        for meta in ops::all() {
            let info = meta.info;
            let mut flags = vec![info.scope.as_str()];
            if info.hints.destructive {
                flags.push("destructive");
            }
            if info.financial {
                flags.push("financial");
            }
            if info.owner_only {
                flags.push("owner-only");
            }
            if let ops::Exposure::Excluded { .. } = info.exposure {
                flags.push("not-for-agents");
            }
            println!("{:<28} {:<40} {}", info.name, flags.join(","), info.summary);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async_main(cli.command, config))
}

fn op_error(err: ops::OpError) -> anyhow::Error {
    anyhow!("{} ({})", err.text().render(), err.code())
}

fn open(config: &Config) -> anyhow::Result<Arc<app::App>> {
    let location = config.location();
    if let store::Location::Sqlite(_) = location {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!("cannot create the data directory {}", config.data_dir.display())
        })?;
    }
    let app = app::App::open_at(&location, Arc::new(app::SystemClock))?;
    app.set_household_caps(config.household_caps());
    app.set_token_rate_limit((config.token_rate_per_second > 0).then_some(app::RateLimit {
        per_second: config.token_rate_per_second,
        burst: config.token_rate_burst.max(1),
    }));
    app.set_assistant_environment(Config::assistant_environment()?);
    app.set_pdf_reader(Arc::new(pdf_process::ChildReader::this_program()?));
    let feeds = match &config.bank_ca_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .with_context(|| format!("cannot read bank_ca_file {}", path.display()))?;
            banks::Feeds::with_pem_authorities(&pem)
                .map_err(|err| anyhow!("bank_ca_file {}: {err}", path.display()))?
        }
        None => banks::Feeds::new(&[])
            .map_err(|err| anyhow!("cannot set up bank connections: {err}"))?,
    };
    app.set_bank_feeds(Arc::new(feeds));
    Ok(app)
}

/// `exhale bank`: the bank ops, as a person at the command line.
async fn bank(app: &Arc<app::App>, command: BankCommand) -> anyhow::Result<()> {
    let person = |member: Option<String>| async move {
        match member {
            Some(email) => app.person(&email, Via::Cli).await,
            None => app.sole_owner(Via::Cli).await,
        }
        .map_err(op_error)
    };
    let catalog: &dyn ops::Catalog = app.as_ref();
    let output = match command {
        BankCommand::Link { provider: BankProviderCommand::Simplefin { member, private } } => {
            let caller = person(member).await?;
            eprintln!("Paste the setup token from the SimpleFIN Bridge, then press Ctrl-D:");
            let input = ops::banks::LinkSimplefinInput {
                setup_token: read_stdin()?.trim().to_owned(),
                visibility: private.then_some(ops::entities::Visibility::Private),
                connection_id: None,
            };
            let linked =
                ops::call::<ops::banks::LinkSimplefin>(catalog, &caller, &input, Mode::Apply)
                    .await
                    .map_err(op_error)?;
            eprintln!(
                "Linked {}: {} accounts, {} transactions added.",
                linked.connection.name,
                linked.connection.accounts.len(),
                linked.sync.added
            );
            serde_json::to_value(linked)?
        }
        BankCommand::List { member } => {
            let caller = person(member).await?;
            let empty = ops::household::Empty {};
            serde_json::to_value(
                ops::call::<ops::banks::ListBankConnections>(catalog, &caller, &empty, Mode::Apply)
                    .await
                    .map_err(op_error)?,
            )?
        }
        BankCommand::Sync { id, member } => {
            let caller = person(member).await?;
            let connection_id = ops::common::RecordId::new(id).ok_or_else(|| {
                anyhow!("{id} is not a connection id; `exhale bank list` shows them")
            })?;
            let input = ops::banks::SyncBankConnectionInput { connection_id };
            serde_json::to_value(
                ops::call::<ops::banks::SyncBankConnection>(catalog, &caller, &input, Mode::Apply)
                    .await
                    .map_err(op_error)?,
            )?
        }
    };
    println!("{}", serde_json::to_string_pretty(&output)?);
    Ok(())
}

fn read_stdin() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read stdin")?;
    Ok(text)
}

async fn async_main(command: Command, config: Config) -> anyhow::Result<ExitCode> {
    if let (Command::Backup { .. } | Command::Restore { .. }, Some(url)) =
        (&command, &config.database_url)
    {
        anyhow::bail!(
            "exhale backup and restore work on the SQLite file; {url} is PostgreSQL: back it up with pg_dump and restore it with pg_restore (docs/install/postgres.md)"
        );
    }
    if let Command::Migrate { to } = command {
        return migrate(&config, to).await;
    }
    // Before the database is opened, so a plan PostgreSQL cannot keep stops the start at once.
    if let Command::Serve = command {
        config.backup_plan()?;
    }
    let app = open(&config)?;
    match command {
        Command::Serve => {
            serve::run(config, app).await?;
        }
        Command::Mcp { token, tools } => {
            let token = token.or_else(Config::token_from_environment).ok_or_else(|| {
                anyhow!("give a token with --token or EXHALE_TOKEN (create one with `exhale token create`)")
            })?;
            let mut caller = app.authenticate_token(&token, Via::Mcp).await.map_err(op_error)?;
            if let Some(tools) = tools {
                let set = ops::ToolSet::parse(&tools).ok_or_else(|| {
                    anyhow!("--tools is full, subscriptions or compact, not {tools:?}")
                })?;
                caller = caller.with_tool_set(set);
            }
            let catalog: Arc<dyn ops::Catalog> = app;
            mcp::serve_stdio(catalog, caller).await?;
        }
        Command::Op { name, json, as_member, dry_run } => {
            let text = if json == "-" { read_stdin()? } else { json };
            let input: serde_json::Value =
                serde_json::from_str(&text).context("--json is not valid JSON")?;
            let caller = match as_member {
                Some(email) => app.person(&email, Via::Cli).await.map_err(op_error)?,
                None => app.sole_owner(Via::Cli).await.map_err(op_error)?,
            };
            let mode = if dry_run { Mode::DryRun } else { Mode::Apply };
            match app.call_json(&caller, &name, input, mode).await {
                Ok(output) => println!("{}", serde_json::to_string_pretty(&output)?),
                Err(err) => {
                    eprintln!("{}: {}", err.code(), err.text().render());
                    if let ops::OpError::InvalidInput { pointer, .. } = &err
                        && !pointer.is_empty()
                    {
                        eprintln!("at {pointer}");
                    }
                    return Ok(ExitCode::from(1));
                }
            }
        }
        Command::Import { path, apply, min_confidence, as_member } => {
            let caller = match as_member {
                Some(email) => app.person(&email, Via::Cli).await.map_err(op_error)?,
                None => app.sole_owner(Via::Cli).await.map_err(op_error)?,
            };
            return import::run(&app, &caller, &path, apply, min_confidence).await;
        }
        Command::Member {
            command:
                MemberCommand::CreateOwner {
                    email,
                    name,
                    password_stdin: _,
                    household,
                    currency,
                    time_zone,
                    language,
                },
        } => {
            let password = read_stdin()?.trim_end_matches(['\n', '\r']).to_owned();
            let time_zone = time_zone.unwrap_or_else(|| {
                jiff::tz::TimeZone::try_system()
                    .ok()
                    .and_then(|tz| tz.iana_name().map(str::to_owned))
                    .unwrap_or_else(|| "UTC".into())
            });
            let caller = app
                .create_household(app::NewHousehold {
                    household_name: household,
                    currency,
                    time_zone,
                    language,
                    owner_name: name,
                    email: email.clone(),
                    password,
                })
                .await
                .map_err(op_error)?;
            println!(
                "Created household {} with owner {email} (member {}).",
                caller.household_id, caller.member_id
            );
        }
        Command::Bank { command } => bank(&app, command).await?,
        Command::Token {
            command: TokenCommand::Create { member, scope, name, expires_in_days },
        } => {
            let caller = app.person(&member, Via::Cli).await.map_err(op_error)?;
            let input = serde_json::json!({"name": name, "scope": scope, "expires_in_days": expires_in_days});
            let output = app
                .call_json(&caller, "create_token", input, Mode::Apply)
                .await
                .map_err(op_error)?;
            let secret = output
                .get("secret")
                .and_then(|s| s.as_str())
                .ok_or_else(|| anyhow!("no token in the answer"))?;
            eprintln!("Token {name} ({scope}) created for {member}. It is shown once:");
            println!("{secret}");
        }
        Command::Backup { path } => {
            app.backup(&path).await.map_err(op_error)?;
            println!("Wrote a consistent copy of {} to {}", config.database_name(), path.display());
        }
        Command::Check => {
            let problems = app.check().await.map_err(op_error)?;
            if !problems.is_empty() {
                for problem in &problems {
                    println!("{problem}");
                }
                anyhow::bail!(
                    "{} has {} problem(s); restore a backup with `exhale restore`",
                    config.database_name(),
                    problems.len()
                );
            }
            println!("{} is sound.", config.database_name());
        }
        Command::Restore { path, passphrase_stdin } => {
            let passphrase = if passphrase_stdin {
                let typed = read_stdin()?.trim_end_matches(['\n', '\r']).to_owned();
                if typed.is_empty() {
                    anyhow::bail!("no passphrase on standard input; nothing was changed");
                }
                Some(app::Passphrase::new(typed))
            } else {
                config.backup_passphrase.as_ref().map(|p| p.0.clone())
            };
            app.restore_backup(&path, passphrase).await.map_err(|err| match err {
                app::RestoreError::Refused(ops::OpError::Internal) => {
                    anyhow!(
                        "{} is not a backup Exhale can restore; nothing was changed",
                        path.display()
                    )
                }
                app::RestoreError::Refused(other) => op_error(other),
                other => anyhow!("{other}; nothing was changed"),
            })?;
            println!("Restored {} from {}", config.database_name(), path.display());
        }
        Command::Demo { email } => {
            demo::create(&app, &email).await?;
        }
        Command::Config { .. }
        | Command::Healthcheck
        | Command::Ops { .. }
        | Command::ReadPdf
        | Command::Migrate { .. } => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `exhale migrate`: the SQLite file in the data directory, copied into PostgreSQL.
async fn migrate(config: &Config, to: Option<String>) -> anyhow::Result<ExitCode> {
    let target = to.map(config::DatabaseUrl::new).or_else(|| config.database_url.clone()).ok_or_else(|| {
        anyhow!("say where to copy to: --to postgres://user:password@host:5432/database, or EXHALE_DATABASE_URL")
    })?;
    let source = config.sqlite_path();
    if !source.is_file() {
        anyhow::bail!(
            "there is no SQLite database at {}: point --data-dir (or EXHALE_DATA_DIR) at the directory that holds exhale.db",
            source.display()
        );
    }
    let app =
        app::App::open_at(&store::Location::Sqlite(source.clone()), Arc::new(app::SystemClock))?;
    let migrated = app.migrate_to_postgres(target.secret()).await?;
    let rows: u64 = migrated.tables.iter().map(|(_, rows)| rows).sum();
    println!(
        "Copied {} to {target}: {} tables, {rows} rows; the exports of {} read the same from both.",
        source.display(),
        migrated.tables.len(),
        match migrated.members_checked {
            1 => "the 1 member".to_owned(),
            n => format!("{n} members"),
        },
    );
    println!(
        "Exhale uses PostgreSQL once EXHALE_DATABASE_URL (or database_url in the configuration file) is set to it; {} stays as it was.",
        source.display()
    );
    Ok(ExitCode::SUCCESS)
}
