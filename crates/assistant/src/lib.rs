//! The built-in assistant, an adapter over the catalog like MCP: people ask in plain words and a
//! model answers with the catalog's tools. Channels (the web's panel, chat) call it through
//! `ops::assistant::Ask`: a question in, streamed text and an answer with cards out.
//!
//! - `llm`: the provider clients (OpenAI-compatible chat completions, the Anthropic Messages
//!   API), streaming, with a provider-neutral message model.
//! - `answer.rs`: the tool loop for one question, its limits, and what the person does with a
//!   proposal (confirm, discard, undo).
//! - `documents.rs`: reading a statement or a screenshot with one fixed-schema tool, and
//!   tidying a CSV's merchant names.
//! - `tools.rs`: which ops the model is offered (the catalog's one policy decides).
//! - `prompt.rs`: the static rules, and the data blocks with their brackets neutralised.
//! - `cards.rs`: the card a person confirms, written by Exhale from the dry run.
//! - `screens.rs`: `show_screen`, whose screens Exhale draws from the database.
//! - `scripted`: a provider that replays a script and records what it was sent, for tests.
//!
//! What the assistant keeps (settings, conversation, proposals, usage, the member's pace of
//! messages) is stored by the catalog
//! implementation through `ops::assistant::AssistantStore`; this crate never touches a database.

mod answer;
mod cards;
mod choose;
mod documents;
pub mod llm;
mod prompt;
mod repair;
mod screens;
pub mod scripted;
mod tools;

pub use tools::definitions as tool_definitions;

use std::sync::Arc;

use ops::{
    Caller, Catalog, Role, Scope, ToolSet, Via,
    assistant::{AssistantStore, ProviderSettings},
};

use crate::llm::{Endpoint, LlmError, Provider, Timeouts};

/// Makes the provider for a household's settings: the real clients, or a scripted one in tests.
pub trait Connect: Send + Sync {
    fn connect(&self, settings: &ProviderSettings) -> Result<Arc<dyn Provider>, LlmError>;
}

/// The real provider clients, trusting the Mozilla roots (and, in tests, a test authority).
#[derive(Clone, Debug, Default)]
pub struct Providers {
    extra_roots: Vec<Vec<u8>>,
}

impl Providers {
    /// Also trusts these DER certificates (a local HTTPS fake's authority in tests).
    pub fn trusting(extra_roots: Vec<Vec<u8>>) -> Self {
        Self { extra_roots }
    }
}

impl Connect for Providers {
    fn connect(&self, settings: &ProviderSettings) -> Result<Arc<dyn Provider>, LlmError> {
        let endpoint = Endpoint {
            protocol: settings.provider.protocol(),
            base_url: settings.base_url.clone(),
            api_key: settings.api_key.clone(),
            timeouts: Timeouts::default(),
        };
        Ok(Arc::new(llm::Client::trusting(endpoint, &self.extra_roots)?))
    }
}

/// Why the assistant cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A write the assistant may call would apply without a card: the catalog's policy must
    /// ask the person for every write of the assistant.
    #[error("these writes would apply without the person's confirmation: {0:?}")]
    WritesWithoutACard(Vec<&'static str>),
}

/// The built-in assistant over a catalog.
pub struct Assistant {
    catalog: Arc<dyn Catalog>,
    store: Arc<dyn AssistantStore>,
    connect: Arc<dyn Connect>,
    /// A fixed tool set for every question, or `None`: the tools each question's words point
    /// at (`choose.rs`).
    tool_set: Option<ToolSet>,
}

impl Assistant {
    /// Refuses to start when any write it could call would apply without a card.
    pub fn new(
        catalog: Arc<dyn Catalog>,
        store: Arc<dyn AssistantStore>,
        connect: Arc<dyn Connect>,
    ) -> Result<Self, StartError> {
        // An owner may call the most; what holds for them holds for every member.
        let owner = Caller::person(0, 0, Role::Owner, Via::Web);
        let assistant = Caller::assistant_for(&owner);
        debug_assert!(assistant.scope <= Scope::Write);
        let unguarded: Vec<&'static str> = tools::writes_without_a_card(catalog.ops(), &assistant)
            .into_iter()
            .filter_map(|name| ops::find(name).map(|meta| meta.info.name))
            .collect();
        if !unguarded.is_empty() {
            return Err(StartError::WritesWithoutACard(unguarded));
        }
        Ok(Self { catalog, store, connect, tool_set: None })
    }

    /// Offers the model this tool set for every question, instead of the tools each question
    /// points at (the eval compares the two).
    #[must_use]
    pub fn with_tool_set(mut self, set: ToolSet) -> Self {
        self.tool_set = Some(set);
        self
    }
}
