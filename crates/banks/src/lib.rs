//! Bank connections: money that arrives by itself. `provider` is what every provider gives
//! Exhale (accounts, balances, transactions and failures by who must act); `http` sends a
//! request to a provider within the network rules; `simplefin` is SimpleFIN Bridge's
//! protocol and its two calls. Providers never touch the database, the clock or the
//! scheduler: `app` calls them outside any transaction and writes what they bring.
//!
//! Layers: `provider` < `http` < `simplefin`.

pub mod http;
pub mod provider;
pub mod simplefin;
