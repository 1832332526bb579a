//! The built-in assistant as the adapters that carry it see it (the web's panel, later the
//! chat channels): a question in, a stream of text and then an answer with cards out
//! ([`Ask`]); and what the assistant needs kept for it (the provider settings, a member's
//! conversation and proposals, usage), which the catalog implementation stores
//! ([`AssistantStore`]).
//!
//! The loop itself lives in the `assistant` crate; the limits every channel shares live here,
//! so the web's form and the loop read the same numbers.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    BoxFuture, Caller, OpError, Text,
    common::{Ref, Timestamp},
    limits::assistant as limits,
    op::{Hints, Op, OpInfo},
};

/// What kind of document a person hands the assistant to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentKind {
    /// PNG, JPEG or WebP, with its media type.
    Picture(&'static str),
    Pdf,
    /// Text, such as a statement pasted from a bank's page.
    Text,
}

/// A document to read, its kind told by its first bytes and its size within the limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub kind: DocumentKind,
    pub bytes: Vec<u8>,
}

impl Document {
    /// Reads the kind from the bytes; a document over its kind's limit is refused, never cut.
    pub fn new(bytes: Vec<u8>) -> Result<Self, OpError> {
        let kind = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            DocumentKind::Picture("image/png")
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            DocumentKind::Picture("image/jpeg")
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            DocumentKind::Picture("image/webp")
        } else if bytes.starts_with(b"%PDF") {
            DocumentKind::Pdf
        } else if std::str::from_utf8(&bytes).is_ok() {
            DocumentKind::Text
        } else {
            return Err(OpError::invalid(
                "/document",
                Text::new(
                    "This file is not a picture (PNG, JPEG, WebP), a PDF or text. Export a CSV from the bank, or take a screenshot.",
                ),
            ));
        };
        let (limit, what) = match kind {
            DocumentKind::Picture(_) => (limits::PICTURE_BYTES, "A picture"),
            DocumentKind::Pdf => (limits::PDF_BYTES, "A PDF"),
            DocumentKind::Text => (limits::TEXT_BYTES, "Text"),
        };
        if bytes.len() > limit {
            return Err(OpError::invalid(
                "/document",
                Text::new("{what} sent to the model may be at most {max} KB; this one is {size} KB. Send a smaller one, or a part of it.")
                    .with("what", what)
                    .with("max", limit / 1024)
                    .with("size", bytes.len().div_ceil(1024)),
            ));
        }
        Ok(Self { kind, bytes })
    }
}

/// A recurring charge a model read in a document, as Exhale checked it: a bounded single-line
/// name, a positive decimal amount, a currency code, a known cycle and a real date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadCharge {
    pub name: String,
    /// Decimal string in major units, e.g. "12.99".
    pub amount: crate::common::UnsignedAmount,
    pub currency: crate::common::CurrencyCode,
    pub cycle: crate::CyclePreset,
    /// The latest charge the document shows.
    pub charged_on: crate::resolve::IsoDate,
}

/// What a model read in a document, checked: the items that passed, and one line for each
/// that did not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentReading {
    pub items: Vec<ReadCharge>,
    pub left_out: Vec<String>,
    /// The model that read it, to say so on the review page.
    pub model: String,
}

/// What a document sent for import was found to hold.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading {
    /// Read by Exhale: the transactions and the recurring candidates.
    Statement(crate::import::ParsedStatement),
    /// Read by the model: the charges it reported that passed Exhale's checks.
    Model(DocumentReading),
}

impl ReadCharge {
    /// The item as `import_subscriptions` takes it, with the one charge the document showed.
    pub fn import_item(&self) -> crate::import::ImportItem {
        crate::import::ImportItem {
            name: self.name.clone(),
            amount: self.amount,
            currency: Some(self.currency),
            cycle: crate::common::CycleInput::Preset(self.cycle),
            category_id: None,
            payment_method_id: None,
            charges: vec![crate::import::ImportCharge {
                date: self.charged_on,
                amount: self.amount,
            }],
        }
    }
}

/// What an answer streams while the model writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Said {
    /// More of the model's text.
    Delta { text: String },
    /// The model called tools: what it wrote so far was its working; the answer starts again.
    Restart,
}

/// A finished answer. Cards and screens are drawn by Exhale; `text` is the model's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub text: String,
    pub cards: Vec<Card>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screens: Vec<Screen>,
    /// Why the answer stopped short (a limit, a refusal, a provider failure), in Exhale's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<Text>,
}

domain::named_enum! {
    /// Where a proposal stands.
    pub enum ProposalStatus("proposal status") {
        /// Waiting for the person.
        Pending => "pending",
        /// Confirmed and applied.
        Applied => "applied",
        /// The person said no.
        Discarded => "discarded",
        /// Applied, then undone.
        Undone => "undone",
    }
}

domain::named_enum! {
    /// What the person does with a proposal.
    pub enum ProposalAction("proposal action") {
        Confirm => "confirm",
        Discard => "discard",
        Undo => "undo",
    }
}

/// A change the model prepared, as the person is shown it: written by Exhale from the op, the
/// arguments as read and the dry run's result. The model's sentence is beside it, never in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// The confirmation that holds the exact call.
    pub id: String,
    pub op: String,
    /// The op's own summary.
    pub title: String,
    /// What the dry run said would change, one line per entity.
    pub lines: Vec<String>,
    /// The op can delete or end something.
    pub destructive: bool,
    /// What the model wrote when it prepared the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    pub status: ProposalStatus,
    /// RFC 3339; a pending proposal applies only before it.
    pub expires_at: String,
    /// Set once applied, for Undo.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit_ids: Vec<i64>,
}

/// What the model asked to show, read by Exhale from the database as the person asking: the
/// model chooses the kind and the records, never a word of what is drawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Screen {
    /// Some subscriptions, in the order asked.
    Subscriptions { items: Vec<crate::subscriptions::SubscriptionSummary> },
    /// Recorded charges over a period, newest first.
    Charges {
        from: crate::resolve::IsoDate,
        to: crate::resolve::IsoDate,
        items: Vec<crate::charges::Charge>,
    },
    /// What the household's subscriptions cost a month and a year, by category.
    Total { summary: Box<crate::reports::SpendingSummary> },
}

/// One question and its answer, text only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub question: String,
    pub answer: String,
}

/// What the assistant remembers of a member's conversation: the last turns, oldest first, and
/// the proposals of the last half hour (applied ones for a day), oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conversation {
    pub turns: Vec<Turn>,
    pub cards: Vec<Card>,
}

domain::named_enum! {
    /// Who serves the model. Local servers come first: nothing leaves the machine.
    pub enum Provider("assistant provider") {
        /// Ollama on this machine.
        Ollama => "ollama",
        /// LM Studio's server on this machine.
        LmStudio => "lm_studio" | "lmstudio",
        /// Any other server of OpenAI-compatible chat completions (vLLM, llama.cpp), at the
        /// base URL given.
        OpenAiCompatible => "openai_compatible" | "vllm" | "llama_cpp",
        OpenAi => "openai",
        Anthropic => "anthropic" | "claude",
        OpenRouter => "openrouter",
        Xai => "xai" | "grok",
        Mistral => "mistral",
        Gemini => "gemini" | "google",
    }
}

/// The wire protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI's chat completions, as OpenAI, xAI, OpenRouter, Mistral, Gemini's compatible
    /// endpoint and the local servers (Ollama, LM Studio, llama-server, vLLM) serve it.
    OpenAiCompatible,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    pub fn protocol(self) -> Protocol {
        match self {
            Self::Anthropic => Protocol::Anthropic,
            _ => Protocol::OpenAiCompatible,
        }
    }

    /// Where its API is when no base URL is given; `None` for a server only the owner knows.
    pub fn default_base_url(self) -> Option<&'static str> {
        Some(match self {
            Self::Ollama => "http://127.0.0.1:11434/v1",
            Self::LmStudio => "http://127.0.0.1:1234/v1",
            Self::OpenAiCompatible => return None,
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenRouter => "https://openrouter.ai/api/v1",
            Self::Xai => "https://api.x.ai/v1",
            Self::Mistral => "https://api.mistral.ai/v1",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta/openai",
        })
    }

    /// Whether its models read a PDF sent as a file; local servers do not.
    pub fn reads_pdf(self) -> bool {
        matches!(self, Self::OpenAi | Self::Anthropic | Self::OpenRouter | Self::Gemini)
    }

    /// Whether it runs on the owner's own machines, so questions never leave them.
    pub fn is_local(self) -> bool {
        matches!(self, Self::Ollama | Self::LmStudio | Self::OpenAiCompatible)
    }

    /// The sampling temperature to ask for, or `None` for the provider's own default.
    pub fn temperature(self) -> Option<f32> {
        self.is_local().then_some(crate::limits::assistant::LOCAL_TEMPERATURE)
    }
}

/// A model's list prices, in millionths of a US dollar per million tokens ($3 per million input
/// tokens is `3_000_000`), so an integer holds every list price exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelPrice {
    pub model: String,
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

/// A provider's API key. It never prints, and no endpoint returns it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key, for the one place that sends it: the provider client's headers.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Where the assistant's questions go, as configured (the server's environment winning field
/// by field over what an owner saved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderSettings {
    pub provider: Provider,
    pub model: String,
    /// The API's base address, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub prices: Vec<ModelPrice>,
}

/// Provider fields, each set or not: what an owner saved, or the server's environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderFields {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<Secret>,
}

impl ProviderFields {
    /// These fields, and `saved`'s where these are not set.
    pub fn over(self, saved: ProviderFields) -> ProviderFields {
        ProviderFields {
            provider: self.provider.or(saved.provider),
            model: self.model.or(saved.model),
            base_url: self.base_url.or(saved.base_url),
            api_key: self.api_key.or(saved.api_key),
        }
    }

    /// The settings, once a provider and a model are known and the base URL is given or the
    /// provider's own; `None` means the assistant is off.
    pub fn settings(self, prices: Vec<ModelPrice>) -> Option<ProviderSettings> {
        let provider = self.provider?;
        let model = self.model.filter(|model| !model.trim().is_empty())?;
        let base_url = self
            .base_url
            .filter(|url| !url.trim().is_empty())
            .or_else(|| provider.default_base_url().map(str::to_owned))?;
        Some(ProviderSettings { provider, model, base_url, api_key: self.api_key, prices })
    }
}

/// One question's or document's use of a model, recorded without its words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Usage {
    pub purpose: UsagePurpose,
    pub provider: Provider,
    pub model: String,
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Millionths of a US dollar; `None` when the model has no price.
    pub cost_micro_usd: Option<u64>,
    /// The model's slips the loop mended (a call written as text, an answer asked for again).
    pub repairs: u32,
}

domain::named_enum! {
    /// What a model was used for.
    pub enum UsagePurpose("usage purpose") {
        Question => "question",
        Document => "document",
    }
}

/// The built-in assistant, as a channel calls it.
pub trait Ask: Send + Sync {
    /// Answers `question` for the person `caller`, handing the text to `said` as it is written.
    fn ask<'a>(
        &'a self,
        caller: &'a Caller,
        question: &'a str,
        said: &'a mut (dyn FnMut(Said) + Send),
    ) -> BoxFuture<'a, Result<Answer, OpError>>;

    /// Confirms, discards or undoes one of the person's proposals; the card as it now stands.
    fn act<'a>(
        &'a self,
        caller: &'a Caller,
        proposal_id: &'a str,
        action: ProposalAction,
    ) -> BoxFuture<'a, Result<Card, OpError>>;

    /// The person's conversation as the assistant remembers it, to draw the panel again.
    fn conversation<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Conversation, OpError>>;

    /// Whether an owner has configured it; while off, nothing is sent anywhere.
    fn is_on<'a>(&'a self, caller: &'a Caller) -> BoxFuture<'a, Result<bool, OpError>>;

    /// Reads the recurring charges in a statement or a screenshot for the person's review:
    /// the model gets one tool with a fixed schema and none of the catalog.
    fn read_statement<'a>(
        &'a self,
        caller: &'a Caller,
        document: Document,
    ) -> BoxFuture<'a, Result<DocumentReading, OpError>>;

    /// Reads a file someone sent for import, as the web's upload and a chat's attachment both
    /// do: a bank export or a PDF with text is read by Exhale (`parse_statement`; with the
    /// assistant on, the merchants' names are tidied by the model); a picture, or a document
    /// Exhale finds nothing recurring in, is read by the model when the assistant is on. A
    /// picture while it is off is refused with what to do instead.
    fn read_document<'a>(
        &'a self,
        caller: &'a Caller,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<Reading, OpError>>;

    /// Tidier names for merchants as a bank wrote them ("NETFLIX.COM 866-579" → "Netflix"), in
    /// the same order; the model is sent the descriptions only, no amounts and no dates. An
    /// error means: keep Exhale's own names.
    fn tidy_names<'a>(
        &'a self,
        caller: &'a Caller,
        merchants: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<String>, OpError>>;
}

/// What the assistant keeps in the database, through the catalog implementation.
pub trait AssistantStore: Send + Sync {
    /// Where the household's questions go; `None` while the assistant is off.
    fn provider(
        &self,
        household_id: i64,
    ) -> BoxFuture<'_, Result<Option<ProviderSettings>, OpError>>;

    /// Counts one message of the member at the assistant's pace ([`limits::BURST`], then one
    /// every [`limits::REFILL_SECS`]), alike on every instance; `Err` holds the whole seconds
    /// until one is let through.
    fn take_message<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Result<(), u64>, OpError>>;

    /// The member's conversation, after removing what has expired.
    fn conversation<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Conversation, OpError>>;

    /// Keeps a finished turn and the cards it made.
    fn remember<'a>(
        &'a self,
        caller: &'a Caller,
        turn: Turn,
        cards: &'a [Card],
    ) -> BoxFuture<'a, Result<(), OpError>>;

    /// Stores a card's new status (and its audit ids once applied).
    fn update_card<'a>(
        &'a self,
        caller: &'a Caller,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), OpError>>;

    /// Applies the proposal `id` once, as the assistant acting for `caller` (who must be the
    /// member it was made for), within its time; the write's output and receipt.
    fn apply_proposal<'a>(
        &'a self,
        caller: &'a Caller,
        id: &'a str,
    ) -> BoxFuture<'a, Result<serde_json::Value, OpError>>;

    /// Closes the proposal `id` without applying it.
    fn discard_proposal<'a>(
        &'a self,
        caller: &'a Caller,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), OpError>>;

    /// Records what one question or document cost; kept 400 days.
    fn record_usage<'a>(
        &'a self,
        caller: &'a Caller,
        usage: Usage,
    ) -> BoxFuture<'a, Result<(), OpError>>;
}

domain::named_enum! {
    /// A field of the assistant's provider settings.
    pub enum ProviderField("provider setting") {
        Provider => "provider",
        Model => "model",
        BaseUrl => "base_url",
        ApiKey => "api_key",
    }
}

/// A model's price as an owner writes it: US dollars per million tokens, as decimal strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceInput {
    #[schemars(length(min = 1, max = MODEL_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub model: String,
    /// Dollars per million input tokens, as a decimal.
    pub input: DollarsPerMillion,
    /// Dollars per million output tokens.
    pub output: DollarsPerMillion,
}

/// A list price in US dollars per million tokens as an owner writes it ("3", "0.15"), read
/// into millionths of a dollar ($3 is 3,000,000): at most six decimals, refused where it is
/// read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DollarsPerMillion(u64);

impl DollarsPerMillion {
    /// The price in millionths of a US dollar per million tokens.
    pub fn micros(self) -> u64 {
        self.0
    }
}

/// Why a text is not a price.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} is not a price in dollars per million tokens, such as 3 or 0.15 (at most six decimals)"
)]
pub struct NotAPrice(String);

impl std::str::FromStr for DollarsPerMillion {
    type Err = NotAPrice;

    fn from_str(text: &str) -> Result<Self, NotAPrice> {
        let refuse = || NotAPrice(domain::validate::shorten(text, 40));
        let trimmed = text.trim();
        let (whole, fraction) = trimmed.split_once('.').unwrap_or((trimmed, ""));
        if whole.is_empty() && fraction.is_empty()
            || fraction.len() > 6
            || whole.trim_start_matches('0').len() > 13
            || !whole.chars().chain(fraction.chars()).all(|c| c.is_ascii_digit())
        {
            return Err(refuse());
        }
        let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| refuse())? };
        let fraction: u64 = format!("{fraction:0<6}").parse().map_err(|_| refuse())?;
        whole
            .checked_mul(1_000_000)
            .and_then(|whole| whole.checked_add(fraction))
            .map(Self)
            .ok_or_else(refuse)
    }
}

impl From<u64> for DollarsPerMillion {
    /// A price kept in millionths of a dollar.
    fn from(micros: u64) -> Self {
        Self(micros)
    }
}

impl fmt::Display for DollarsPerMillion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&dollars(self.0))
    }
}

/// Millionths of a US dollar as dollars with at least two decimals and no trailing zeros past
/// them: "3.00", "0.15", "1.2345", "0.000001".
pub fn dollars(micros: u64) -> String {
    let text = format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000);
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.len() - trimmed.find('.').unwrap_or(trimmed.len()) - 1;
    if decimals < 2 { format!("{trimmed}{}", "0".repeat(2 - decimals)) } else { trimmed.to_owned() }
}

crate::common::as_text!(DollarsPerMillion, "DollarsPerMillion", PRICE_PATTERN);

/// What a price looks like: whole dollars that fit once counted in millionths, and at most
/// six decimals.
pub const PRICE_PATTERN: &str = "^(0*[0-9]{1,13}([.][0-9]{0,6})?|[.][0-9]{1,6})$";

/// The longest model name.
pub const MODEL_NAME: usize = 200;
/// The most prices an owner may set.
pub const PRICES: usize = 50;

/// The assistant's settings as an owner sees them: never the key, only whether one is saved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AssistantSettings {
    /// Whether questions can be asked: a provider and a model are known.
    pub on: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where questions are sent: the base URL given, or the provider's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub api_key_saved: bool,
    /// Whether questions stay on the owner's machines (a local server).
    pub local: bool,
    /// Fields the server's environment sets (EXHALE_ASSISTANT_*): they win over saved ones.
    pub from_environment: Vec<ProviderField>,
    /// Prices per million tokens, in US dollars, for the cost estimates.
    pub prices: Vec<PriceInput>,
    /// This calendar month (UTC) so far.
    pub this_month: UsageTotal,
}

/// What questions and documents used over a period.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageTotal {
    pub questions: u64,
    pub documents: u64,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Estimated, in US dollars, from the calls with a price.
    pub cost_usd: String,
    /// Calls of models without a price, whose cost is not counted.
    pub unpriced: u64,
}

pub struct GetAssistantSettings;
impl Op for GetAssistantSettings {
    const INFO: OpInfo = OpInfo::read(
        "get_assistant_settings",
        "Get the built-in assistant's provider, model and month's use",
        "Owners only; never shows the API key.",
    )
    .owner_only();
    type Input = crate::household::Empty;
    type Output = AssistantSettings;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAssistantSettingsInput {
    /// Who serves the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// The model's name as the provider writes it, e.g. "qwen2.5:7b"; empty turns the
    /// assistant off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MODEL_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub model: Option<String>,
    /// Empty for the provider's own address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::URL))]
    pub base_url: Option<String>,
    /// Saved and never shown again; empty removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub api_key: Option<String>,
    /// Replaces every price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = PRICES))]
    pub prices: Option<Vec<PriceInput>>,
}

pub struct SetAssistantSettings;
impl Op for SetAssistantSettings {
    const INFO: OpInfo = OpInfo::write(
        "set_assistant_settings",
        "Choose the built-in assistant's provider, model, address, API key and prices",
        "Owners only. Fields left out stay as they are. The key is saved as a secret no op returns.",
        Hints::write(true),
    )
    .owner_only()
    .excluded("it decides where the household's data is sent and holds an API key; an owner sets it in the web app or CLI");
    type Input = SetAssistantSettingsInput;
    type Output = AssistantSettings;
}

/// One question or document read with a model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageEntry {
    pub at: Timestamp,
    /// Who asked (absent once they left the household).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Ref>,
    /// Where it was asked: web, chat.
    pub via: String,
    pub purpose: UsagePurpose,
    pub provider: Provider,
    pub model: String,
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Estimated, in US dollars; absent when the model has no price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<String>,
    /// The model's slips the assistant's loop mended: a tool call written as text, an answer
    /// asked for again.
    pub repairs: u32,
}

/// How many uses `list_assistant_usage` returns, newest first.
pub const USAGE_LISTED: u32 = 100;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AssistantUsage {
    /// The newest 100: everyone's for an owner, one's own for a member.
    pub items: Vec<UsageEntry>,
}

pub struct ListAssistantUsage;
impl Op for ListAssistantUsage {
    const INFO: OpInfo = OpInfo::read(
        "list_assistant_usage",
        "List the built-in assistant's use: who, model, tokens, cost",
        "Never the words. Owners see everyone's, members their own.",
    );
    type Input = crate::household::Empty;
    type Output = AssistantUsage;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_read_in_millionths_of_a_dollar_and_written_back() {
        let read =
            |text: &str| text.parse::<DollarsPerMillion>().ok().map(DollarsPerMillion::micros);
        assert_eq!(read("3"), Some(3_000_000));
        assert_eq!(read("0.15"), Some(150_000));
        assert_eq!(read(".5"), Some(500_000));
        assert_eq!(read(" 2.5 "), Some(2_500_000));
        for bad in ["", ".", "1.2345678", "-1", "1e3", "3 USD", "99999999999999999999"] {
            assert!(read(bad).is_none(), "{bad}");
        }
        for text in ["3.00", "0.15", "12.000001", "1.2345"] {
            let price: DollarsPerMillion = text.parse().unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(price.to_string(), text);
        }
        assert_eq!(dollars(0), "0.00");
        assert_eq!(dollars(1), "0.000001");
    }

    #[test]
    fn only_models_on_the_owners_machines_are_asked_for_a_temperature() {
        for provider in [Provider::Ollama, Provider::LmStudio, Provider::OpenAiCompatible] {
            assert_eq!(provider.temperature(), Some(0.0), "{provider:?}");
        }
        // Cloud models keep their default: some refuse the field (OpenAI's reasoning models),
        // and Anthropic's thinking wants its own.
        for provider in
            [Provider::OpenAi, Provider::Anthropic, Provider::OpenRouter, Provider::Gemini]
        {
            assert_eq!(provider.temperature(), None, "{provider:?}");
        }
    }
}
