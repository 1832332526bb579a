//! What OAuth keeps in this process: the public origin and the fetcher of client metadata
//! documents (configuration), and the documents read recently (a cache). Below `oauth.rs`,
//! whose authorization server uses it, and `App`, which holds it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, RwLock},
};

use jiff::Timestamp;
use ops::oauth::{MetadataDocuments, PublicOrigin};

/// What the authorization server keeps in memory: configuration, and a cache of metadata
/// documents each instance may keep for itself. Everything a client's next request may need
/// on another instance (requests, codes, tokens, a refresh's retry pair, the per-network
/// counts) is in the database.
#[derive(Default)]
pub(crate) struct OAuthState {
    pub(crate) origin: RwLock<Option<PublicOrigin>>,
    pub(crate) documents: RwLock<Option<Arc<dyn MetadataDocuments>>>,
    /// Clients read from their metadata documents, until the documents may be fetched again.
    pub(crate) described: Mutex<HashMap<String, (store::oauth::ClientRow, Timestamp)>>,
}
