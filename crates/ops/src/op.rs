//! The `Op` trait and the metadata every adapter renders from.

use std::{
    collections::HashMap,
    sync::{LazyLock, Mutex},
};

use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::{caller::Scope, schema};

/// What the async traits of ops return (the catalog, the assistant, accounts, OAuth): a boxed
/// future that may move between threads.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// MCP's four tool annotations, always explicit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    /// A read: no side effects, safe to repeat.
    pub const READ: Self =
        Self { read_only: true, destructive: false, idempotent: true, open_world: false };

    /// A write that adds or changes without losing anything.
    pub const fn write(idempotent: bool) -> Self {
        Self { read_only: false, destructive: false, idempotent, open_world: false }
    }

    /// A write that removes or overwrites something.
    pub const fn destructive(idempotent: bool) -> Self {
        Self { read_only: false, destructive: true, idempotent, open_world: false }
    }
}

/// Whether agents (MCP, REST tokens, the assistant) may call an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    Agents,
    /// For agents over MCP and REST, but not for the built-in assistant.
    NotAssistant {
        reason: &'static str,
    },
    Excluded {
        reason: &'static str,
    },
}

/// Everything an op declares about itself, once.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// snake_case verb_noun, `^[a-z][a-z0-9_]{0,47}$`; the MCP tool name and REST path segment.
    pub name: &'static str,
    /// One line, no trailing period.
    pub summary: &'static str,
    /// For people and models: what it does, when to use it, what to call next.
    pub description: &'static str,
    pub scope: Scope,
    pub hints: Hints,
    /// It changes an amount, a charge or what money is expected to leave.
    pub financial: bool,
    /// Only owners of the household may call it.
    pub owner_only: bool,
    pub exposure: Exposure,
    /// The largest request that may carry its input, in bytes, when it is larger than the
    /// server's `max_request_bytes` (a statement file); `None`: the server's limit.
    pub max_input_bytes: Option<usize>,
}

impl OpInfo {
    /// Defaults for a read op available to agents.
    pub const fn read(
        name: &'static str,
        summary: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            name,
            summary,
            description,
            scope: Scope::Read,
            hints: Hints::READ,
            financial: false,
            owner_only: false,
            exposure: Exposure::Agents,
            max_input_bytes: None,
        }
    }

    /// Defaults for a write op available to agents.
    pub const fn write(
        name: &'static str,
        summary: &'static str,
        description: &'static str,
        hints: Hints,
    ) -> Self {
        Self {
            name,
            summary,
            description,
            scope: Scope::Write,
            hints,
            financial: false,
            owner_only: false,
            exposure: Exposure::Agents,
            max_input_bytes: None,
        }
    }

    pub const fn financial(mut self) -> Self {
        self.financial = true;
        self
    }

    /// Requests carrying this op's input may be up to `bytes`, above the server's limit for
    /// every other request.
    pub const fn takes_large_input(mut self, bytes: usize) -> Self {
        self.max_input_bytes = Some(bytes);
        self
    }

    /// The largest request this op's input may come in, given the server's limit for others.
    pub fn request_limit(&self, max_request_bytes: usize) -> usize {
        self.max_input_bytes.map_or(max_request_bytes, |bytes| bytes.max(max_request_bytes))
    }

    /// It asks a service outside Exhale (a bank).
    pub const fn open_world(mut self) -> Self {
        self.hints.open_world = true;
        self
    }

    pub const fn owner_only(mut self) -> Self {
        self.owner_only = true;
        self
    }

    pub const fn not_for_assistant(mut self, reason: &'static str) -> Self {
        self.exposure = Exposure::NotAssistant { reason };
        self
    }

    pub const fn excluded(mut self, reason: &'static str) -> Self {
        self.exposure = Exposure::Excluded { reason };
        self
    }

    pub fn is_write(&self) -> bool {
        !self.hints.read_only
    }
}

/// One operation of the catalog.
pub trait Op: 'static {
    const INFO: OpInfo;
    type Input: DeserializeOwned + Serialize + JsonSchema + Send + 'static;
    type Output: DeserializeOwned + Serialize + JsonSchema + Send + 'static;

    /// Whether this call destroys something, for a page to ask the person first: the op's
    /// `destructive` hint, unless the op destroys only with some inputs (a bulk change that
    /// deletes; its hint says it may, as MCP's destructiveHint means).
    fn destroys(input: &Self::Input) -> bool {
        let _ = input;
        Self::INFO.hints.destructive
    }
}

/// An op's metadata with its schemas, as adapters see it.
#[derive(Clone, Copy, Debug)]
pub struct OpMeta {
    pub info: &'static OpInfo,
    input_schema: fn() -> Value,
    output_schema: fn() -> Value,
}

impl OpMeta {
    pub fn of<O: Op>() -> Self {
        Self {
            info: &O::INFO,
            input_schema: schema::input_schema_of::<O::Input>,
            output_schema: schema::schema_of::<O::Output>,
        }
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// JSON Schema (2020-12, subschemas inlined) of the input, as the op accepts it.
    pub fn input_schema(&self) -> Value {
        self.schemas().0.clone()
    }

    /// JSON Schema of the output. Writes also report `batch_id`, `audit_ids`, `dry_run`, `changes`.
    pub fn output_schema(&self) -> Value {
        self.schemas().1.clone()
    }

    /// Both schemas, generated once per op: REST reads the input schema on every GET, and
    /// `tools/list` and `openapi.json` render them all.
    pub fn schemas(&self) -> &'static (Value, Value) {
        static CACHE: LazyLock<Mutex<HashMap<&'static str, &'static (Value, Value)>>> =
            LazyLock::new(Default::default);
        let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.entry(self.info.name).or_insert_with(|| {
            let input = (self.input_schema)();
            let output = self.generate_output_schema(&input);
            Box::leak(Box::new((input, output)))
        })
    }

    fn generate_output_schema(&self, input: &Value) -> Value {
        schema::output_schema((self.output_schema)(), input, self.info.is_write())
    }
}
