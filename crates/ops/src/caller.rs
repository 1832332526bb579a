//! Who is calling: the member, their household, the scope of the credential and the actor kind.
//!
//! A `Caller` is built by an adapter from a session or a token (through
//! [`crate::Catalog::authenticate_token`]) and checked by the invoker on every call.

use domain::{Language, entities::Role};

domain::named_enum! {
    /// The rights of a credential. Ordered: `Read` < `Write` < `Trusted`.
    #[derive(PartialOrd, Ord)]
    pub enum Scope("scope") {
        /// Read ops only.
        Read => "read",
        /// Reads and writes; destructive or financial writes need a confirmation.
        Write => "write",
        /// Reads and writes; only destructive writes need a confirmation.
        Trusted => "trusted",
    }
}

impl Scope {
    /// Whether this scope grants what `needed` asks for.
    pub fn allows(self, needed: Self) -> bool {
        self >= needed
    }
}

/// Which adapter the call came through; recorded in spans and audit entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    Cli,
    Rest,
    Mcp,
    Web,
    Chat,
    Assistant,
    /// A calendar app reading a member's feed.
    Calendar,
    System,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Rest => "rest",
            Self::Mcp => "mcp",
            Self::Web => "web",
            Self::Chat => "chat",
            Self::Assistant => "assistant",
            Self::Calendar => "calendar",
            Self::System => "system",
        }
    }
}

/// Who acts. People act with their role's rights; tokens with their scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// A person signed in (web, chat) or at the terminal (CLI).
    Person,
    /// An agent holding an API token (REST or MCP).
    Token {
        token_id: i64,
        token_name: String,
        /// The client's own name when it told us (MCP `clientInfo.name`), e.g. "Claude Desktop".
        client_name: Option<String>,
        /// Which tools its client lists unless the client asks otherwise.
        tools: ToolSet,
        /// How the person handed the agent its rights.
        credential: Credential,
    },
    /// The built-in assistant acting for the member.
    Assistant,
    /// Exhale itself (background jobs).
    System,
}

/// How an agent came by its token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credential {
    /// An API token a person created and gave the agent; its scope is fixed.
    ApiToken,
    /// An OAuth grant a person approved on the consent page (a connected app). Its client can
    /// ask for more scope by sending the person back to that page (MCP's step-up).
    ConnectedApp,
}

/// The identity and rights of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub household_id: i64,
    pub member_id: i64,
    pub role: Role,
    pub scope: Scope,
    pub actor: Actor,
    pub via: Via,
    /// The language the sentences of this call's output are written in (summaries of changes,
    /// activity, attention items): the reader's on the web and in chat, English for agents,
    /// the API and the CLI, whose readers are models and scripts.
    pub language: Language,
}

impl Caller {
    /// A person acting with their role's rights (web session, CLI), read in English until an
    /// edge that knows their language says otherwise ([`Caller::reading`]).
    pub fn person(household_id: i64, member_id: i64, role: Role, via: Via) -> Self {
        Self {
            household_id,
            member_id,
            role,
            scope: Scope::Trusted,
            actor: Actor::Person,
            via,
            language: Language::English,
        }
    }

    /// This caller, whose output is read in `language`.
    pub fn reading(self, language: Language) -> Self {
        Self { language, ..self }
    }

    /// The built-in assistant acting for this person: their household, member and role, never
    /// above `write` (so every write waits for their tap), through the assistant.
    pub fn assistant_for(person: &Caller) -> Self {
        Self {
            household_id: person.household_id,
            member_id: person.member_id,
            role: person.role,
            scope: person.scope.min(Scope::Write),
            actor: Actor::Assistant,
            via: Via::Assistant,
            // What a model reads is English, the models' common language.
            language: Language::English,
        }
    }

    pub fn is_owner(&self) -> bool {
        self.role == Role::Owner
    }

    /// The token the caller acts with; `None` for people, the assistant and the system.
    pub fn token_id(&self) -> Option<i64> {
        match &self.actor {
            Actor::Token { token_id, .. } => Some(*token_id),
            _ => None,
        }
    }

    /// Whether the caller is an app connected through OAuth, which may ask the person for more
    /// scope, rather than an agent with a fixed API token.
    pub fn is_connected_app(&self) -> bool {
        matches!(self.actor, Actor::Token { credential: Credential::ConnectedApp, .. })
    }

    /// Which tools the caller's client lists by default: its token's setting (people and the
    /// assistant: every tool).
    pub fn tool_set(&self) -> ToolSet {
        match &self.actor {
            Actor::Token { tools, .. } => *tools,
            _ => ToolSet::Full,
        }
    }

    /// The same token caller listing another tool set (`exhale mcp --tools`).
    pub fn with_tool_set(mut self, set: ToolSet) -> Self {
        if let Actor::Token { tools, .. } = &mut self.actor {
            *tools = set;
        }
        self
    }

    /// The same caller seen through another adapter, e.g. an MCP client that named itself.
    pub fn with_client_name(mut self, name: Option<String>) -> Self {
        if let Actor::Token { client_name, .. } = &mut self.actor {
            *client_name = name;
        }
        self
    }
}

domain::named_enum! {
    /// Which tools a client lists: a token's setting, or the client's hint.
    pub enum ToolSet("tool set") {
        /// Every op the caller may call.
        Full => "full" | "all",
        /// Subscriptions, their charges, categories, payment methods and tags, the reports on
        /// them, activity and undo, and find_tools and call_tool for the rest (accounts,
        /// transactions, budgets, rules, the household's settings).
        Subscriptions => "subscriptions",
        /// The ops used most, and find_tools and call_tool for the rest: for small context
        /// windows.
        Compact => "compact" | "small",
    }
}

impl ToolSet {
    /// What a new token or connected app lists unless told otherwise: the subscriptions set,
    /// under 24 KB for a model to read (all 86 tools are 44.8 KB), with `find_tools` and
    /// [`crate::tools::CALL_TOOL`] for the rest, which stays callable whatever the client does with a
    /// changed list.
    pub const DEFAULT: Self = Self::Subscriptions;
}
