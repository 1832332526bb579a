//! The catalog implementation: one handler per op, the invoker every call goes through, audit
//! and undo, confirmations, the outbox, change events and the background job.
//!
//! Adapters never see this crate: they hold an `Arc<dyn ops::Catalog>` built by [`App::open`].
//! Only the binary (`exhale`) and `test-support` depend on it.

mod accounts;
mod age;
mod assistant;
mod auth;
mod backup_files;
mod backups;
mod bank_calls;
mod briefing;
mod budget_periods;
mod charge_matching;
mod chats;
mod clock;
mod confirmations;
mod converter;
mod credentials;
mod ctx;
mod directory;
mod handlers;
mod input;
mod instances;
mod invoke;
mod jobs;
mod limits;
mod migrate;
mod oauth;
mod oauth_state;
mod outbox;
mod random;
mod refs;
mod reminders;
mod rules;
mod series;
mod setup;
mod statements;
mod subscription_rules;
mod transactions;
mod views;

use std::{path::Path, sync::Arc};

use ops::{OpError, OpMeta};
use store::{Db, Store};
use tokio::sync::broadcast;

pub use backup_files::{BackupInterval, BackupPlan, Passphrase};
pub use backups::RestoreError;
pub use clock::{Clock, FixedClock, SystemClock};
pub use limits::{HouseholdCaps, RateLimit};
pub use migrate::{MigrateError, Migrated};
pub use ops::accounts::NewHousehold;

/// Exhale's core: the store, the handlers, the clock and the event bus.
pub struct App {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    handlers: handlers::Registry,
    events: broadcast::Sender<ops::ChangeEvent>,
    /// Woken after every commit so the outbox worker delivers without polling.
    outbox_wake: Arc<tokio::sync::Notify>,
    limiter: limits::Limiter,
    /// Paces: tokens' calls and the assistant's messages (`limits.rs`).
    paces: limits::Paces,
    tokens: credentials::TokenCache,
    caps: std::sync::Mutex<limits::HouseholdCaps>,
    oauth: oauth_state::OAuthState,
    /// The assistant's provider fields from the server's environment.
    assistant_env: std::sync::Mutex<ops::assistant::ProviderFields>,
    /// What reads a statement's PDF (this process until the server sets one).
    pdf_reader: std::sync::Mutex<Arc<dyn statement::PdfReader>>,
    /// The bank providers' calls (none until the server sets them).
    bank_feeds: std::sync::Mutex<Option<Arc<dyn ops::banks::BankFeeds>>>,
    /// This instance among those on one database (`instances.rs`): random, for this process.
    instance: String,
    /// Automatic backups, when the server was given a plan (`backups.rs`).
    backup_plan: std::sync::Mutex<Option<BackupPlan>>,
    /// How the last automatic backup went, for Settings (`backups.rs`).
    backup_state: std::sync::Mutex<backup_files::BackupState>,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("op {0} has no handler")]
    MissingHandler(&'static str),
    #[error("the operating system gave no random bytes")]
    NoRandomness,
}

impl App {
    /// Opens an SQLite database file (creating and migrating it as needed).
    pub fn open(database: &Path, clock: Arc<dyn Clock>) -> Result<Arc<Self>, OpenError> {
        Self::open_at(&store::Location::Sqlite(database.to_owned()), clock)
    }

    /// Opens the database at `location` (creating and migrating it as needed).
    pub fn open_at(
        location: &store::Location,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<Self>, OpenError> {
        let store = Arc::new(Store::open_at(location)?);
        let handlers = handlers::registry();
        if let Some(meta) = ops::all().iter().find(|meta| !handlers.contains(meta.name())) {
            return Err(OpenError::MissingHandler(meta.name()));
        }
        let (events, _) = broadcast::channel(1024);
        let paces = limits::Paces::for_store(&store);
        Ok(Arc::new(Self {
            store,
            clock,
            handlers,
            events,
            outbox_wake: Arc::new(tokio::sync::Notify::new()),
            limiter: limits::Limiter::new(Some(RateLimit::default())),
            paces,
            tokens: credentials::TokenCache::default(),
            caps: std::sync::Mutex::new(limits::HouseholdCaps::default()),
            oauth: oauth_state::OAuthState::default(),
            assistant_env: std::sync::Mutex::default(),
            pdf_reader: std::sync::Mutex::new(Arc::new(statement::InProcess)),
            bank_feeds: std::sync::Mutex::default(),
            instance: crate::random::random_hex(8).map_err(|_| OpenError::NoRandomness)?,
            backup_plan: std::sync::Mutex::default(),
            backup_state: std::sync::Mutex::default(),
        }))
    }

    /// Runs `f` over the limits' counts, in a write of its own: a count is kept whatever
    /// becomes of what it counted.
    pub(crate) async fn limited<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Db<'_>) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, OpError> {
        let store = self.store.clone();
        crate::transactions::blocking_write(store, f).await
    }

    /// Sets what reads statements' PDFs (`exhale` runs each in a process of its own); this
    /// process reads them until then.
    pub fn set_pdf_reader(&self, reader: Arc<dyn statement::PdfReader>) {
        *limits::locked(&self.pdf_reader) = reader;
    }

    pub(crate) fn pdf_reader(&self) -> Arc<dyn statement::PdfReader> {
        limits::locked(&self.pdf_reader).clone()
    }

    /// Sets the bank providers' calls (`banks::Feeds`); without them, linking and syncing a
    /// bank connection is refused.
    pub fn set_bank_feeds(&self, feeds: Arc<dyn ops::banks::BankFeeds>) {
        *limits::locked(&self.bank_feeds) = Some(feeds);
    }

    pub(crate) fn bank_feeds(&self) -> Option<Arc<dyn ops::banks::BankFeeds>> {
        limits::locked(&self.bank_feeds).clone()
    }

    /// Sets how large a household may grow; the defaults apply until then.
    pub fn set_household_caps(&self, caps: HouseholdCaps) {
        *limits::locked(&self.caps) = caps;
    }

    pub(crate) fn household_caps(&self) -> HouseholdCaps {
        *limits::locked(&self.caps)
    }

    /// Sets the per-token rate limit (`None` turns it off, e.g. for load tests); the default
    /// applies until then.
    pub fn set_token_rate_limit(&self, limit: Option<RateLimit>) {
        self.limiter.set(limit);
    }

    /// Every op name that has a handler (the catalog test compares this with `ops::all()`).
    pub fn handled_ops(&self) -> Vec<&'static str> {
        self.handlers.names()
    }

    /// Writes a consistent copy of the database while the app runs.
    pub async fn backup(&self, target: &Path) -> Result<(), OpError> {
        let store = self.store.clone();
        let target = target.to_owned();
        transactions::blocking(move || store.backup(&target).map_err(transactions::internal)).await
    }

    /// What SQLite's integrity and reference checks found in the database; empty when sound.
    pub async fn check(&self) -> Result<Vec<String>, OpError> {
        let store = self.store.clone();
        transactions::blocking(move || store.check().map_err(transactions::internal)).await
    }

    /// Replaces the database's content with a backup. Stop `exhale serve` first: a running
    /// server keeps caches of what it read.
    pub async fn restore(&self, source: &Path) -> Result<(), OpError> {
        let store = self.store.clone();
        let source = source.to_owned();
        transactions::blocking(move || {
            store.restore(&source).map_err(|err| match err {
                store::StoreError::InUse { path } => OpError::conflict(
                    domain::Text::new(
                        "{database} is open in another Exhale (exhale serve, or exhale mcp for an agent): stop it, then restore again. Nothing was changed.",
                    )
                    .with("database", path.display().to_string()),
                ),
                err @ (store::StoreError::Corrupt(_) | store::StoreError::NewerSchema { .. }) => {
                    OpError::conflict(
                        domain::Text::new("{problem}. Nothing was changed.")
                            .with("problem", err.to_string()),
                    )
                }
                err @ store::StoreError::Lock { .. } => OpError::conflict(
                    domain::Text::new("{problem}. Nothing was changed.")
                        .with("problem", err.to_string()),
                ),
                other => transactions::internal(other),
            })
        })
        .await?;
        self.tokens.clear();
        Ok(())
    }

    /// A full logical dump of the database content, for tests that check a dry run changed
    /// nothing.
    pub async fn logical_dump(&self) -> Result<String, OpError> {
        let store = self.store.clone();
        transactions::blocking(move || {
            crate::transactions::read(&store, |db| {
                db.logical_dump().map_err(transactions::internal)
            })
        })
        .await
    }
}

impl ops::Catalog for App {
    fn ops(&self) -> &[OpMeta] {
        ops::all()
    }

    fn call_json<'a>(
        &'a self,
        caller: &'a ops::Caller,
        op: &'a str,
        input: serde_json::Value,
        mode: ops::Mode,
    ) -> ops::BoxFuture<'a, Result<serde_json::Value, OpError>> {
        Box::pin(async move {
            self.invoke(caller, op, input, mode, handlers::Encoding::Value).await?.into_value()
        })
    }

    fn call_json_text<'a>(
        &'a self,
        caller: &'a ops::Caller,
        op: &'a str,
        input: serde_json::Value,
        mode: ops::Mode,
    ) -> ops::BoxFuture<'a, Result<String, OpError>> {
        Box::pin(async move {
            self.invoke(caller, op, input, mode, handlers::Encoding::Text).await?.into_text()
        })
    }

    fn authenticate_token<'a>(
        &'a self,
        token: &'a str,
        via: ops::Via,
    ) -> ops::BoxFuture<'a, Result<ops::Caller, OpError>> {
        if App::is_access_token(token.trim()) {
            Box::pin(self.authenticate_access_token(token, via))
        } else {
            Box::pin(self.authenticate(token, via))
        }
    }

    fn person_reads<'a>(
        &'a self,
        caller: &'a ops::Caller,
    ) -> ops::BoxFuture<'a, Result<Option<domain::Language>, OpError>> {
        let store = self.store.clone();
        let (household_id, member_id) = (caller.household_id, caller.member_id);
        Box::pin(transactions::blocking(move || {
            transactions::read(&store, |db| {
                let member = store::households::get_member(db, household_id, member_id)
                    .map_err(transactions::internal)?;
                views::reads_in(db, &member).map_err(transactions::internal)
            })
        }))
    }

    fn subscribe_unbound(&self) -> ops::UnboundFeed {
        ops::UnboundFeed::new(self.events.subscribe())
    }
}
