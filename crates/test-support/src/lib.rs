//! Dev-only helpers for the integration tests: a temporary data directory, the real app on a
//! real database (SQLite, or PostgreSQL in the tests' PostgreSQL pass) with a fixed clock, households, members and tokens made through the
//! catalog, the HTTP server on 127.0.0.1:0, and a certificate authority of the tests' own for
//! local HTTPS servers.
//!
//! Nothing here fakes Exhale's own parts; it only sets them up.

#![expect(
    clippy::expect_used,
    reason = "test set-up fails loudly with a message; this crate is a dev-dependency only"
)]

pub mod banks;
pub mod channels;
pub mod database;
pub mod enable_banking;

pub use database::DataDir;
pub mod provider;
mod temp_dir;
mod tls;

pub use temp_dir::TempDir;
pub use tls::{TestAuthority, http_reply};

use std::{net::SocketAddr, sync::Arc};

use app::{App, FixedClock};
use domain::entities::Role;
use ops::{Caller, Catalog as _, Mode, OpError, Via};
use serde_json::{Value, json};

/// The password of every person the helpers create.
pub const PASSWORD: &str = "correct horse battery staple";

/// The instant every test starts at: 2026-11-29 10:00 UTC (11:00 in Madrid).
pub const START: &str = "2026-11-29T10:00:00Z";

/// The app on a fresh database (see [`database`]) with a fixed clock.
pub struct TestEnv {
    pub app: Arc<App>,
    pub clock: Arc<FixedClock>,
    /// Dropped after the app, so a PostgreSQL database goes once nothing uses it.
    pub database: database::TestDatabase,
    pub dir: TempDir,
}

impl TestEnv {
    pub fn new() -> Self {
        let dir = TempDir::new();
        let database = database::TestDatabase::new(dir.path());
        Self::on(dir, database)
    }

    /// [`TestEnv::new`] on an SQLite file whichever the pass: for a benchmark that sets the
    /// two stores side by side.
    pub fn on_sqlite() -> Self {
        let dir = TempDir::new();
        let database = database::TestDatabase::sqlite(dir.path());
        Self::on(dir, database)
    }

    fn on(dir: TempDir, database: database::TestDatabase) -> Self {
        let clock = Arc::new(FixedClock::new(START.parse().expect("a valid timestamp")));
        let app = App::open_at(database.location(), clock.clone()).expect("open the app");
        Self { app, clock, database, dir }
    }

    /// The app again on the same database, as a restarted server would open it.
    pub fn reopen(&self) -> Arc<App> {
        App::open_at(self.database.location(), self.clock.clone()).expect("open the app again")
    }

    /// Creates a household (EUR, Europe/Madrid) and returns its owner acting on the web.
    pub async fn household(&self, name: &str, email: &str) -> Caller {
        let owner = self
            .app
            .create_household(app::NewHousehold {
                household_name: name.into(),
                currency: "EUR".into(),
                time_zone: "Europe/Madrid".into(),
                language: "en".into(),
                owner_name: format!("{name} owner"),
                email: email.into(),
                password: PASSWORD.into(),
            })
            .await
            .expect("create a household");
        Caller { via: Via::Web, ..owner }
    }

    /// Invites a member into the owner's household and returns them as a person.
    pub async fn member(&self, owner: &Caller, name: &str, email: &str) -> Caller {
        let invited = self
            .call(owner, "invite_member", json!({"name": name, "email": email}))
            .await
            .expect("invite a member");
        let id = invited["member"]["id"].as_i64().expect("a member id");
        Caller::person(owner.household_id, id, Role::Member, Via::Web)
    }

    /// Creates a token for the person and returns it with the caller it authenticates as.
    pub async fn token(&self, person: &Caller, scope: &str) -> (String, Caller) {
        let created = self
            .call(person, "create_token", json!({"name": format!("{scope} token"), "scope": scope}))
            .await
            .expect("create a token");
        let secret = created["secret"].as_str().expect("a secret").to_owned();
        let caller =
            self.app.authenticate_token(&secret, Via::Rest).await.expect("the new token works");
        (secret, caller)
    }

    pub async fn call(&self, caller: &Caller, op: &str, input: Value) -> Result<Value, OpError> {
        self.app.call_json(caller, op, input, Mode::Apply).await
    }

    pub async fn dry_run(&self, caller: &Caller, op: &str, input: Value) -> Result<Value, OpError> {
        self.app.call_json(caller, op, input, Mode::DryRun).await
    }

    /// Every row of every table.
    pub async fn dump(&self) -> String {
        self.app.logical_dump().await.expect("dump the database")
    }

    /// Serves the web app, the REST API and `/mcp` on 127.0.0.1:0 until the returned server is
    /// dropped.
    pub async fn serve(&self) -> TestServer {
        self.serve_with_setup(None).await
    }

    /// [`TestEnv::serve`] with the web app's one-time setup link open at `/setup/{secret}`.
    pub async fn serve_with_setup(&self, setup_secret: Option<&str>) -> TestServer {
        self.serve_with(setup_secret, http::ServeConfig::default()).await
    }

    /// [`TestEnv::serve`] as if behind a reverse proxy on 127.0.0.1: a request's
    /// `X-Forwarded-For` is its client's address, as per-address limits count it.
    pub async fn serve_behind_proxy(&self) -> TestServer {
        let config = http::ServeConfig {
            trusted_proxies: vec![std::net::Ipv4Addr::LOCALHOST.into()],
            ..http::ServeConfig::default()
        };
        self.serve_with(None, config).await
    }

    /// [`TestEnv::serve`] with the server's own limits (a shorter request limit, say).
    pub async fn serve_with_limits(&self, config: http::ServeConfig) -> TestServer {
        self.serve_with(None, config).await
    }

    async fn serve_with(
        &self,
        setup_secret: Option<&str>,
        config: http::ServeConfig,
    ) -> TestServer {
        if let Some(secret) = setup_secret {
            self.app.open_setup_link(secret).await.expect("keep the setup link");
        }
        serve_app(&self.app, config, None, ::channels::ChannelsConfig::default()).await
    }

    /// A second instance on the same database (and clock), answering as the same public
    /// origin as `first`, as two instances behind one load balancer do.
    pub async fn serve_another_instance(&self, first: &TestServer) -> TestServer {
        let origin = ops::oauth::PublicOrigin { origin: first.url("") };
        serve_app(&self.reopen(), http::ServeConfig::default(), Some(origin), Default::default())
            .await
    }
}

/// An instance of the whole server on `app` (an app on the same database as another, say),
/// answering as `origin`, its channels talking to the services `channels` names (the fakes).
pub async fn serve_instance(
    app: &Arc<App>,
    origin: ops::oauth::PublicOrigin,
    channels: ::channels::ChannelsConfig,
) -> TestServer {
    serve_app(app, http::ServeConfig::default(), Some(origin), channels).await
}

/// Serves `app` as `exhale serve` does (`server::build`), on 127.0.0.1:0, answering as `origin`
/// or else as its own loopback address.
async fn serve_app(
    app: &Arc<App>,
    config: http::ServeConfig,
    origin: Option<ops::oauth::PublicOrigin>,
    channels: ::channels::ChannelsConfig,
) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("a local address").port();
    // Unless given one, as `exhale serve` on loopback with no public origin configured.
    let origin = origin
        .unwrap_or_else(|| ops::oauth::PublicOrigin { origin: format!("http://127.0.0.1:{port}") });
    let assistant = assistant::Assistant::new(
        app.clone(),
        app.clone(),
        Arc::new(assistant::Providers::default()),
    )
    .expect("start the assistant");
    let channels = ::channels::Channels::new(app.clone(), channels).expect("set up the channels");
    let parts = server::Parts {
        app: app.clone(),
        assistant: Arc::new(assistant),
        channels: Arc::new(channels),
    };
    let settings = server::Settings {
        port,
        public_origin: Some(origin),
        allowed_hosts: vec!["localhost".into(), "127.0.0.1".into()],
        allowed_origins: vec!["http://localhost:3000".into()],
        max_request_bytes: 1024 * 1024,
        secure_cookies: false,
        mcp_command: None,
    };
    let router = server::build(&parts, &settings).expect("put the application together");
    serve_router_with(listener, router, config)
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// Serves only `/mcp`, acting for `caller` without authentication, for third-party tools
    /// that cannot send a bearer header (the conformance suite).
    pub async fn serve_mcp_as(&self, caller: Caller) -> TestServer {
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("a local address").port();
        let catalog: Arc<dyn ops::Catalog> = self.app.clone();
        let router = mcp::router_for_caller(catalog, &loopback_mcp_config(port), caller)
            .expect("set up /mcp");
        serve_router(listener, router)
    }
}

/// `/mcp` transport settings for a server on 127.0.0.1:`port`: loopback hosts and the
/// server's own origins only.
pub fn loopback_mcp_config(port: u16) -> mcp::HttpConfig {
    mcp::HttpConfig {
        allowed_hosts: vec!["localhost".into(), "127.0.0.1".into()],
        allowed_origins: Vec::new(),
        max_request_bytes: 1024 * 1024,
        oauth: None,
    }
    .with_own_origins(port)
}

/// Serves `router` on `listener` until the returned server is dropped.
pub fn serve_router(listener: tokio::net::TcpListener, router: axum::Router) -> TestServer {
    serve_router_with(listener, router, http::ServeConfig::default())
}

fn serve_router_with(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    config: http::ServeConfig,
) -> TestServer {
    let addr = listener.local_addr().expect("a local address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        http::serve(listener, router, config, async {
            let _ = stopped.await;
        })
        .await;
    });
    TestServer { addr, stop: Some(stop), task }
}

/// A running server; stops when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

/// The code of an op error, or "ok".
pub fn code<T>(result: &Result<T, OpError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(err) => err.code(),
    }
}

/// A process's resident memory now and at its peak (`VmRSS` and `VmHWM`), in bytes.
pub fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("a live process");
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
            .expect("a memory figure in /proc")
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}
