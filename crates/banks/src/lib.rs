//! Bank connections' providers: `http` sends a request to a provider within the network
//! rules; `simplefin` is SimpleFIN Bridge's protocol and its two calls; `feeds` is
//! [`ops::banks::BankFeeds`] over them, what `app` calls. What every provider gives Exhale
//! (accounts, balances, transactions and failures by who must act) is `ops::banks`. Providers
//! never touch the database, the clock or the scheduler: `app` calls them outside any
//! transaction and writes what they bring.
//!
//! Layers: `http` < `simplefin` < `feeds`.

pub mod feeds;
pub mod http;
pub mod simplefin;

pub use feeds::Feeds;
