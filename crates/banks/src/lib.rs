//! Bank connections' providers: `http` sends a request to a provider within the network
//! rules; `simplefin` is SimpleFIN Bridge's protocol and its two calls; `enable_banking` is
//! Enable Banking's (a signed token, the banks, a consent, a session's accounts); `feeds` is
//! [`ops::banks::BankFeeds`] over them, what `app` calls. What every provider gives Exhale
//! (accounts, balances, transactions and failures by who must act) is `ops::banks`. Providers
//! never touch the database, the clock or the scheduler: `app` calls them outside any
//! transaction and writes what they bring.
//!
//! Layers: `amounts`, `http` < `enable_banking`, `simplefin` < `feeds`.

mod amounts;
pub mod enable_banking;
pub mod feeds;
pub mod http;
pub mod simplefin;

pub use feeds::Feeds;
