//! Configuration: built-in defaults, then a TOML file, then `EXHALE_*` environment variables,
//! then command-line flags. The only place that reads the environment.

use std::{net::SocketAddr, path::PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// Where the database lives.
    pub(crate) data_dir: PathBuf,
    /// A PostgreSQL database to use instead of the SQLite file in `data_dir`, as
    /// postgres://user:password@host:5432/database (see docs/install/postgres.md).
    pub(crate) database_url: Option<DatabaseUrl>,
    /// Connections to PostgreSQL this instance keeps at most.
    pub(crate) database_pool: usize,
    /// Address `serve` listens on.
    pub(crate) listen: SocketAddr,
    /// Log filter, as RUST_LOG.
    pub(crate) log: String,
    /// Largest request body accepted, in bytes.
    pub(crate) max_request_bytes: usize,
    /// Host header values `/mcp` accepts (DNS-rebinding protection); add your public host name.
    pub(crate) allowed_hosts: Vec<String>,
    /// Browser origins `/mcp` accepts, e.g. "https://exhale.example.net"; others are refused.
    pub(crate) allowed_origins: Vec<String>,
    /// Calls per second one API token may make on average (0 turns the limit off).
    pub(crate) token_rate_per_second: u32,
    /// Calls one API token may make at once.
    pub(crate) token_rate_burst: u32,
    /// Mark the web app's cookies Secure: set it when people reach Exhale over HTTPS.
    pub(crate) secure_cookies: bool,
    /// Connections served at once; when full, the one idle longest is closed for a new one.
    pub(crate) max_connections: usize,
    /// Seconds a client has to send a request's headers, also between requests; the longest
    /// pause while it sends a body.
    pub(crate) header_read_timeout_secs: u64,
    /// Seconds a response may take to start once the request has arrived.
    pub(crate) request_timeout_secs: u64,
    /// Addresses of reverse proxies whose X-Forwarded-For names the client.
    pub(crate) trusted_proxies: Vec<std::net::IpAddr>,
    /// The most one household may have of each thing.
    pub(crate) max_subscriptions: u32,
    pub(crate) max_categories: u32,
    pub(crate) max_payment_methods: u32,
    pub(crate) max_members: u32,
    pub(crate) max_tokens: u32,
    pub(crate) max_accounts: u32,
    pub(crate) max_labels: u32,
    pub(crate) max_transactions: u32,
    pub(crate) max_budgets: u32,
    pub(crate) max_rules: u32,
    /// The HTTPS origin people and remote agents reach Exhale at, e.g.
    /// "https://exhale.example.net" (behind a reverse proxy or tunnel). OAuth, which cloud
    /// assistants connect with, needs it; without it OAuth works only on this computer.
    pub(crate) public_origin: Option<String>,
    /// An OpenTelemetry collector for the assistant's spans, e.g. "http://127.0.0.1:4318";
    /// off by default, so nothing is sent anywhere unless it is set.
    pub(crate) otlp_endpoint: Option<String>,
    /// A PEM file of authorities trusted for bank providers besides the public ones: a
    /// self-hosted SimpleFIN bridge behind a private authority.
    pub(crate) bank_ca_file: Option<PathBuf>,
    /// Where `serve` writes automatic backups of the SQLite database (off when unset). It must
    /// exist: a disk that is not mounted is not filled in its place.
    pub(crate) backup_dir: Option<PathBuf>,
    /// How often: `30s`, `15m`, `6h`, `1d`.
    pub(crate) backup_every: Interval,
    /// How many backups are kept; the oldest beyond are removed once a new one is checked.
    pub(crate) backup_keep: usize,
    /// Seal each backup with this passphrase, in the age format (`age -d` opens it).
    pub(crate) backup_passphrase: Option<BackupPassphrase>,
}

/// A backup interval as the configuration writes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Interval(pub(crate) app::BackupInterval);

impl Serialize for Interval {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map(Self).map_err(serde::de::Error::custom)
    }
}

/// The backups' passphrase: shown and printed as `***`.
#[derive(Clone, Debug)]
pub(crate) struct BackupPassphrase(pub(crate) app::Passphrase);

impl Serialize for BackupPassphrase {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("***")
    }
}

impl<'de> Deserialize<'de> for BackupPassphrase {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self(app::Passphrase::new(String::deserialize(deserializer)?)))
    }
}

/// A PostgreSQL URL. It may hold a password, so it is shown, printed and logged without one.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub(crate) struct DatabaseUrl(String);

impl std::fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&without_password(&self.0))
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

impl Serialize for DatabaseUrl {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl DatabaseUrl {
    pub(crate) fn new(url: String) -> Self {
        Self(url)
    }

    /// The URL itself, password included: for connecting, never for showing.
    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

/// `url` with any password in it (`user:password@` or `password=…`) written `***`.
fn without_password(url: &str) -> String {
    let mut shown = url.to_owned();
    if let Some(scheme_end) = shown.find("://").map(|at| at + 3) {
        let authority_end =
            shown[scheme_end..].find(['/', '?']).map_or(shown.len(), |at| scheme_end + at);
        if let Some(at) = shown[scheme_end..authority_end].rfind('@').map(|at| scheme_end + at)
            && let Some(colon) = shown[scheme_end..at].find(':').map(|c| scheme_end + c)
        {
            shown.replace_range(colon + 1..at, "***");
        }
    }
    let mut from = 0;
    while let Some(found) = shown[from..].find("password=").map(|at| from + at + "password=".len())
    {
        let rest = &shown[found..];
        let end = if let Some(quoted) = rest.strip_prefix('\'') {
            quoted.find('\'').map_or(rest.len(), |q| q + 2)
        } else {
            rest.find(['&', ' ']).unwrap_or(rest.len())
        };
        shown.replace_range(found..found + end, "***");
        from = found + 3;
    }
    shown
}

/// The TOML file: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    database_url: Option<DatabaseUrl>,
    database_pool: Option<usize>,
    listen: Option<SocketAddr>,
    log: Option<String>,
    max_request_bytes: Option<usize>,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    token_rate_per_second: Option<u32>,
    token_rate_burst: Option<u32>,
    secure_cookies: Option<bool>,
    max_connections: Option<usize>,
    header_read_timeout_secs: Option<u64>,
    request_timeout_secs: Option<u64>,
    trusted_proxies: Option<Vec<std::net::IpAddr>>,
    max_subscriptions: Option<u32>,
    max_categories: Option<u32>,
    max_payment_methods: Option<u32>,
    max_members: Option<u32>,
    max_tokens: Option<u32>,
    max_accounts: Option<u32>,
    max_labels: Option<u32>,
    max_transactions: Option<u32>,
    max_budgets: Option<u32>,
    max_rules: Option<u32>,
    public_origin: Option<String>,
    otlp_endpoint: Option<String>,
    bank_ca_file: Option<PathBuf>,
    backup_dir: Option<PathBuf>,
    backup_every: Option<Interval>,
    backup_keep: Option<usize>,
    backup_passphrase: Option<BackupPassphrase>,
}

/// Values given on the command line.
pub(crate) struct Flags {
    pub(crate) config: Option<PathBuf>,
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) listen: Option<SocketAddr>,
}

#[expect(clippy::disallowed_methods, reason = "configuration is read here and only here")]
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// For each key, the file's value when it has one.
macro_rules! overlay {
    ($config:ident, $file:ident, $($key:ident),+) => {
        $(if let Some(value) = $file.$key {
            $config.$key = value;
        })+
    };
}

/// Sets `target` from the variable `name` when it is set; `what` says what it must be.
fn parse_env<T: std::str::FromStr>(name: &str, what: &str, target: &mut T) -> anyhow::Result<()>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    if let Some(value) = env(name) {
        *target = value.parse().with_context(|| format!("{name}={value} is not {what}"))?;
    }
    Ok(())
}

/// A public origin as OAuth needs it: `https://` and a host (a port may follow), nothing after;
/// plain `http://` only for this computer. A trailing slash is dropped.
fn checked_origin(origin: &str) -> anyhow::Result<String> {
    let origin = origin.trim().trim_end_matches('/');
    let (scheme, host) = origin.split_once("://").unwrap_or(("", origin));
    let host_only = !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']);
    let loopback = ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|h| host == *h || host.strip_prefix(h).is_some_and(|rest| rest.starts_with(':')));
    match scheme {
        "https" if host_only => Ok(origin.to_owned()),
        "http" if host_only && loopback => Ok(origin.to_owned()),
        _ => anyhow::bail!(
            "public_origin {origin} is not an origin such as https://exhale.example.net: https, a host and optionally a port, with no path (plain http only for 127.0.0.1 or localhost)"
        ),
    }
}

fn default_data_dir() -> PathBuf {
    if let Some(dir) = env("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("exhale");
    }
    match env("HOME") {
        Some(home) => PathBuf::from(home).join(".local/share/exhale"),
        None => PathBuf::from("exhale-data"),
    }
}

fn default_config_file() -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("exhale/config.toml"))
}

impl Config {
    pub(crate) fn load(flags: Flags) -> anyhow::Result<Self> {
        let caps = app::HouseholdCaps::default();
        let mut config = Self {
            data_dir: default_data_dir(),
            database_url: None,
            database_pool: store::DEFAULT_MAX_CONNECTIONS,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            log: "info".into(),
            max_request_bytes: 1024 * 1024,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            token_rate_per_second: 20,
            token_rate_burst: 120,
            secure_cookies: false,
            max_connections: 512,
            header_read_timeout_secs: 10,
            request_timeout_secs: 30,
            trusted_proxies: Vec::new(),
            max_subscriptions: caps.subscriptions,
            max_categories: caps.categories,
            max_payment_methods: caps.payment_methods,
            max_members: caps.members,
            max_tokens: caps.tokens,
            max_accounts: caps.accounts,
            max_labels: caps.labels,
            max_transactions: caps.transactions,
            max_budgets: caps.budgets,
            max_rules: caps.rules,
            public_origin: None,
            otlp_endpoint: None,
            bank_ca_file: None,
            backup_dir: None,
            backup_every: Interval(app::BackupInterval::DAILY),
            backup_keep: 14,
            backup_passphrase: None,
        };
        let file = flags.config.clone().or_else(|| env("EXHALE_CONFIG").map(PathBuf::from));
        let (path, required) = match file {
            Some(path) => (Some(path), true),
            None => (default_config_file(), false),
        };
        if let Some(path) = path
            && (required || path.exists())
        {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read the config file {}", path.display()))?;
            // Only the parser's message and the line: its own report quotes the line, which
            // may hold a secret (a passphrase, a database URL's password).
            let file: FileConfig = toml::from_str(&text).map_err(|err| {
                let line = err.span().map_or(0, |span| text[..span.start].lines().count().max(1));
                anyhow::anyhow!(
                    "the config file {} is not valid at line {line}: {}",
                    path.display(),
                    err.message()
                )
            })?;
            // Every key the file sets replaces the default.
            overlay!(
                config,
                file,
                data_dir,
                database_pool,
                listen,
                log,
                max_request_bytes,
                allowed_hosts,
                allowed_origins,
                token_rate_per_second,
                token_rate_burst,
                secure_cookies,
                max_connections,
                header_read_timeout_secs,
                request_timeout_secs,
                trusted_proxies,
                max_subscriptions,
                max_categories,
                max_payment_methods,
                max_members,
                max_tokens,
                max_accounts,
                max_labels,
                max_transactions,
                max_budgets,
                max_rules,
                backup_every,
                backup_keep
            );
            if file.backup_dir.is_some() {
                config.backup_dir = file.backup_dir;
            }
            if file.backup_passphrase.is_some() {
                config.backup_passphrase = file.backup_passphrase;
            }
            if file.public_origin.is_some() {
                config.public_origin = file.public_origin;
            }
            if file.database_url.is_some() {
                config.database_url = file.database_url;
            }
            if file.otlp_endpoint.is_some() {
                config.otlp_endpoint = file.otlp_endpoint;
            }
            if file.bank_ca_file.is_some() {
                config.bank_ca_file = file.bank_ca_file;
            }
        }
        if let Some(path) = env("EXHALE_BANK_CA_FILE") {
            config.bank_ca_file = Some(path.into());
        }
        if let Some(dir) = env("EXHALE_DATA_DIR") {
            config.data_dir = dir.into();
        }
        if let Some(url) = env("EXHALE_DATABASE_URL") {
            config.database_url = Some(DatabaseUrl(url));
        }
        parse_env("EXHALE_DATABASE_POOL", "a whole number", &mut config.database_pool)?;
        if config.database_pool == 0 {
            anyhow::bail!("database_pool must be at least 1");
        }
        if let Some(listen) = env("EXHALE_LISTEN") {
            config.listen = listen.parse().with_context(|| {
                format!("EXHALE_LISTEN={listen} is not an address such as 127.0.0.1:8080")
            })?;
        }
        if let Some(log) = env("EXHALE_LOG") {
            config.log = log;
        }
        parse_env("EXHALE_MAX_REQUEST_BYTES", "a number of bytes", &mut config.max_request_bytes)?;
        if let Some(hosts) = env("EXHALE_ALLOWED_HOSTS") {
            config.allowed_hosts =
                hosts.split(',').map(|h| h.trim().to_owned()).filter(|h| !h.is_empty()).collect();
        }
        if let Some(origins) = env("EXHALE_ALLOWED_ORIGINS") {
            config.allowed_origins =
                origins.split(',').map(|o| o.trim().to_owned()).filter(|o| !o.is_empty()).collect();
        }
        parse_env(
            "EXHALE_TOKEN_RATE_PER_SECOND",
            "a whole number",
            &mut config.token_rate_per_second,
        )?;
        parse_env("EXHALE_TOKEN_RATE_BURST", "a whole number", &mut config.token_rate_burst)?;
        parse_env("EXHALE_SECURE_COOKIES", "true or false", &mut config.secure_cookies)?;
        parse_env("EXHALE_MAX_CONNECTIONS", "a whole number", &mut config.max_connections)?;
        parse_env(
            "EXHALE_HEADER_READ_TIMEOUT_SECS",
            "whole seconds",
            &mut config.header_read_timeout_secs,
        )?;
        parse_env(
            "EXHALE_REQUEST_TIMEOUT_SECS",
            "whole seconds",
            &mut config.request_timeout_secs,
        )?;
        parse_env("EXHALE_MAX_SUBSCRIPTIONS", "a whole number", &mut config.max_subscriptions)?;
        parse_env("EXHALE_MAX_CATEGORIES", "a whole number", &mut config.max_categories)?;
        parse_env("EXHALE_MAX_PAYMENT_METHODS", "a whole number", &mut config.max_payment_methods)?;
        parse_env("EXHALE_MAX_MEMBERS", "a whole number", &mut config.max_members)?;
        parse_env("EXHALE_MAX_TOKENS", "a whole number", &mut config.max_tokens)?;
        parse_env("EXHALE_MAX_ACCOUNTS", "a whole number", &mut config.max_accounts)?;
        parse_env("EXHALE_MAX_LABELS", "a whole number", &mut config.max_labels)?;
        parse_env("EXHALE_MAX_TRANSACTIONS", "a whole number", &mut config.max_transactions)?;
        parse_env("EXHALE_MAX_BUDGETS", "a whole number", &mut config.max_budgets)?;
        parse_env("EXHALE_MAX_RULES", "a whole number", &mut config.max_rules)?;
        if let Some(origin) = env("EXHALE_PUBLIC_ORIGIN") {
            config.public_origin = Some(origin);
        }
        if let Some(origin) = &config.public_origin {
            config.public_origin = Some(checked_origin(origin)?);
        }
        if let Some(endpoint) = env("EXHALE_OTLP_ENDPOINT") {
            config.otlp_endpoint = Some(endpoint);
        }
        if let Some(endpoint) = &config.otlp_endpoint {
            crate::telemetry::Collector::parse(endpoint).map_err(anyhow::Error::msg)?;
        }
        if let Some(proxies) = env("EXHALE_TRUSTED_PROXIES") {
            config.trusted_proxies = proxies
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    p.parse().with_context(|| {
                        format!("EXHALE_TRUSTED_PROXIES: {p} is not an IP address")
                    })
                })
                .collect::<anyhow::Result<_>>()?;
        }
        if let Some(dir) = env("EXHALE_BACKUP_DIR") {
            config.backup_dir = Some(dir.into());
        }
        if let Some(every) = env("EXHALE_BACKUP_EVERY") {
            config.backup_every =
                Interval(every.parse().with_context(|| format!("EXHALE_BACKUP_EVERY={every}"))?);
        }
        parse_env("EXHALE_BACKUP_KEEP", "a whole number", &mut config.backup_keep)?;
        if let Some(passphrase) = env("EXHALE_BACKUP_PASSPHRASE") {
            config.backup_passphrase = Some(BackupPassphrase(app::Passphrase::new(passphrase)));
        }
        if config.backup_passphrase.as_ref().is_some_and(|p| p.0.is_empty()) {
            anyhow::bail!(
                "backup_passphrase is empty: set a passphrase, or leave it out for backups that are not encrypted"
            );
        }
        if config.backup_keep == 0 {
            anyhow::bail!("backup_keep must be at least 1: the newest backup is always kept");
        }
        if config.max_connections == 0
            || config.header_read_timeout_secs == 0
            || config.request_timeout_secs == 0
        {
            anyhow::bail!(
                "max_connections, header_read_timeout_secs and request_timeout_secs must be at least 1"
            );
        }
        if let Some(dir) = flags.data_dir {
            config.data_dir = dir;
        }
        if let Some(listen) = flags.listen {
            config.listen = listen;
        }
        Ok(config)
    }

    /// Where OAuth clients reach Exhale, once it listens on `port`: the configured public
    /// origin, else this computer's own address when Exhale listens only on loopback, else
    /// none (OAuth is off: a remote client could not reach a loopback address anyway, and an
    /// origin taken from a request's Host header could be forged).
    pub(crate) fn oauth_origin(&self, port: u16) -> Option<ops::oauth::PublicOrigin> {
        let origin = match (&self.public_origin, self.listen.ip()) {
            (Some(origin), _) => origin.clone(),
            (None, std::net::IpAddr::V4(ip)) if ip.is_loopback() => format!("http://{ip}:{port}"),
            (None, std::net::IpAddr::V6(ip)) if ip.is_loopback() => format!("http://[{ip}]:{port}"),
            (None, _) => return None,
        };
        Some(ops::oauth::PublicOrigin { origin })
    }

    /// How large one household may grow.
    pub(crate) fn household_caps(&self) -> app::HouseholdCaps {
        app::HouseholdCaps {
            subscriptions: self.max_subscriptions,
            categories: self.max_categories,
            payment_methods: self.max_payment_methods,
            members: self.max_members,
            tokens: self.max_tokens,
            accounts: self.max_accounts,
            labels: self.max_labels,
            transactions: self.max_transactions,
            budgets: self.max_budgets,
            rules: self.max_rules,
        }
    }

    /// The server's connection limits and timeouts.
    pub(crate) fn serving(&self) -> http::ServeConfig {
        http::ServeConfig {
            max_connections: self.max_connections,
            header_read_timeout: std::time::Duration::from_secs(self.header_read_timeout_secs),
            request_timeout: std::time::Duration::from_secs(self.request_timeout_secs),
            trusted_proxies: self.trusted_proxies.clone(),
        }
    }

    /// Where the database is: PostgreSQL when `database_url` is set, else the SQLite file in
    /// `data_dir`.
    pub(crate) fn location(&self) -> store::Location {
        match &self.database_url {
            Some(url) => store::Location::Postgres {
                url: url.0.clone(),
                max_connections: self.database_pool,
            },
            None => store::Location::Sqlite(self.sqlite_path()),
        }
    }

    /// The automatic backups `serve` makes, when a directory is set. PostgreSQL is refused:
    /// its own tools back it up.
    pub(crate) fn backup_plan(&self) -> anyhow::Result<Option<app::BackupPlan>> {
        let Some(dir) = &self.backup_dir else { return Ok(None) };
        if let Some(url) = &self.database_url {
            anyhow::bail!(
                "backup_dir backs up the SQLite database; {url} is PostgreSQL: back it up with pg_dump (docs/install/postgres.md), and unset backup_dir"
            );
        }
        Ok(Some(app::BackupPlan {
            dir: dir.clone(),
            every: self.backup_every.0,
            keep: self.backup_keep,
            passphrase: self.backup_passphrase.as_ref().map(|p| p.0.clone()),
        }))
    }

    /// The SQLite file in `data_dir`: the database unless `database_url` is set, and what
    /// `exhale migrate` copies from.
    pub(crate) fn sqlite_path(&self) -> std::path::PathBuf {
        self.data_dir.join("exhale.db")
    }

    /// The database as people read its name: the SQLite file, or the PostgreSQL URL without
    /// its password.
    pub(crate) fn database_name(&self) -> String {
        match &self.database_url {
            Some(url) => url.to_string(),
            None => self.sqlite_path().display().to_string(),
        }
    }

    /// The built-in assistant's provider fields from `EXHALE_ASSISTANT_PROVIDER`, `_MODEL`,
    /// `_BASE_URL` and `_API_KEY`: each wins over what an owner saved. Kept out of [`Config`],
    /// which can be printed, because it holds a key.
    pub(crate) fn assistant_environment() -> anyhow::Result<ops::assistant::ProviderFields> {
        let provider = match env("EXHALE_ASSISTANT_PROVIDER") {
            Some(name) => Some(ops::assistant::Provider::parse(&name).with_context(|| {
                let names: Vec<&str> =
                    ops::assistant::Provider::ALL.iter().map(|p| p.as_str()).collect();
                format!("EXHALE_ASSISTANT_PROVIDER={name} is not one of {}", names.join(", "))
            })?),
            None => None,
        };
        Ok(ops::assistant::ProviderFields {
            provider,
            model: env("EXHALE_ASSISTANT_MODEL"),
            base_url: env("EXHALE_ASSISTANT_BASE_URL"),
            api_key: env("EXHALE_ASSISTANT_API_KEY").map(ops::assistant::Secret::new),
        })
    }

    /// Where the assistant's spans are exported, if anywhere (checked when loaded).
    pub(crate) fn collector(&self) -> anyhow::Result<Option<crate::telemetry::Collector>> {
        self.otlp_endpoint
            .as_deref()
            .map(|endpoint| {
                crate::telemetry::Collector::parse(endpoint).map_err(anyhow::Error::msg)
            })
            .transpose()
    }

    /// The token `exhale mcp` acts with when `--token` is not given.
    pub(crate) fn token_from_environment() -> Option<String> {
        env("EXHALE_TOKEN")
    }

    /// RUST_LOG wins over the configured filter when set.
    pub(crate) fn log_filter(&self) -> String {
        env("RUST_LOG").unwrap_or_else(|| self.log.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::{Config, Flags, checked_origin, without_password};

    #[test]
    fn a_config_file_the_parser_refuses_is_not_quoted_back() {
        let dir = std::env::temp_dir().join(format!("exhale-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        for text in
            ["backup_pasphrase = \"hunter2-secret\"\n", "backup_passphrase = hunter2-secret\n"]
        {
            std::fs::write(&path, text).unwrap();
            let flags = Flags { config: Some(path.clone()), data_dir: None, listen: None };
            let err = format!("{:#}", Config::load(flags).unwrap_err());
            assert!(!err.contains("hunter2"), "{err}");
            assert!(err.contains("line 1"), "{err}");
        }
        // An empty passphrase would seal backups that anyone opens.
        std::fs::write(&path, "backup_passphrase = \"\"\n").unwrap();
        let flags = Flags { config: Some(path), data_dir: None, listen: None };
        let empty = format!("{:#}", Config::load(flags).unwrap_err());
        assert!(empty.contains("backup_passphrase is empty"), "{empty}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_database_url_is_shown_without_its_password() {
        for (url, shown) in [
            (
                "postgres://exhale:s3cret@db.example:5432/exhale",
                "postgres://exhale:***@db.example:5432/exhale",
            ),
            (
                "postgresql://exhale:p@ss@db/exhale?sslmode=require",
                "postgresql://exhale:***@db/exhale?sslmode=require",
            ),
            (
                "postgres://exhale@db/exhale?password=s3cret&sslmode=require",
                "postgres://exhale@db/exhale?password=***&sslmode=require",
            ),
            (
                "host=/run/pg user=exhale password='a b' dbname=exhale",
                "host=/run/pg user=exhale password=*** dbname=exhale",
            ),
            ("postgres://db/exhale", "postgres://db/exhale"),
        ] {
            assert_eq!(without_password(url), shown);
        }
    }

    #[test]
    fn a_public_origin_is_https_and_a_host_or_http_on_this_computer() {
        for (given, read) in [
            ("https://exhale.example.net", "https://exhale.example.net"),
            ("https://exhale.example.net/", "https://exhale.example.net"),
            (" https://exhale.example.net:8443 ", "https://exhale.example.net:8443"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("http://localhost", "http://localhost"),
        ] {
            assert_eq!(checked_origin(given).unwrap(), read, "{given}");
        }
        for refused in [
            "http://exhale.example.net",
            "http://127.0.0.1.evil.example",
            "https://exhale.example.net/exhale",
            "https://user@exhale.example.net",
            "exhale.example.net",
            "https://",
        ] {
            let err = checked_origin(refused).unwrap_err().to_string();
            assert!(err.contains("is not an origin such as https://"), "{refused}: {err}");
        }
    }
}
