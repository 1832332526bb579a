//! What every handler shares (`Web`: the catalog, the accounts and OAuth services, the
//! assistant, the backups, the configuration and the templates) and what the web app is configured with.

use std::sync::Arc;

use ops::{Catalog, accounts::Accounts, oauth::OAuthServer};

use crate::templates::Templates;

/// What the web app is configured with.
#[derive(Clone, Debug, Default)]
pub struct WebConfig {
    /// Mark cookies `Secure` (Exhale is served over HTTPS, directly or behind a proxy).
    pub secure_cookies: bool,
    /// The command and arguments that start `exhale mcp` on this machine, for the stdio
    /// configurations "Connect an agent" shows.
    pub mcp_command: Option<(String, Vec<String>)>,
    /// The largest form a page may post (`max_request_bytes`, as for the API and `/mcp`); a
    /// statement upload has the catalog's own, larger limit.
    pub max_request_bytes: usize,
}

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct Web {
    pub(crate) catalog: Arc<dyn Catalog>,
    pub(crate) accounts: Arc<dyn Accounts>,
    pub(crate) oauth: Arc<dyn OAuthServer>,
    /// The built-in assistant ("Ask Exhale").
    pub(crate) assistant: Arc<dyn ops::assistant::Ask>,
    /// Automatic backups, for owners (Settings → Backups).
    pub(crate) backups: Arc<dyn ops::backups::Backups>,
    pub(crate) config: Arc<WebConfig>,
    pub(crate) templates: Arc<Templates>,
}
