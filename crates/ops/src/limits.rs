//! Limits every adapter shares, decided once: how long a name or a note may be, how many items
//! one call may take. Handlers enforce them, input schemas say them (`maxLength`, `maxItems`,
//! `maximum`), and the web's forms use them (`maxlength`), so no adapter keeps its own number.

use serde::Serialize;

/// A subscription's, a member's or a household's name, in characters.
pub const NAME: usize = 100;
/// The most a result handed to a model may take, in bytes of JSON (DESIGN section 4): MCP cuts
/// a list page to fit, and `get_context` lists less of a large household.
pub const MODEL_RESULT_BYTES: usize = 30_000;
/// What a tool's description says (its summary, then its description), in characters: what it
/// does, when to use it and what to call next. The rest belongs in the briefing.
pub const TOOL_DESCRIPTION: usize = 300;
/// The largest id: JavaScript's largest exact integer, so every client reads ids exactly.
pub const MAX_ID: i64 = 9_007_199_254_740_991;
/// Days a token may live.
pub const TOKEN_DAYS: u32 = 3650;
/// Days before a charge a reminder may go out.
pub const REMINDER_DAYS: u32 = 30;
/// Months of spending history one call may cover.
pub const HISTORY_MONTHS: u32 = 60;
/// A category's, a payment method's or a token's name, in characters.
pub const SHORT_NAME: usize = 60;
/// A note, in characters.
pub const NOTES: usize = 2000;
/// A web address, in characters.
pub const URL: usize = domain::validate::MAX_URL_CHARS;
/// One tag, in characters.
pub const TAG: usize = 40;
/// How many days apart a statement's row and a bank feed's transaction of the same amount may
/// be and still be one transaction (a bank books a card payment a day or two after it).
pub const STATEMENT_AND_FEED_DAYS: i64 = 3;
/// How many days after a pending bank transaction the booked one may come and still be it.
pub const PENDING_BOOKED_DAYS: i64 = 8;
/// How many days before a bank's consent ends it needs attention and its reminder goes.
pub const BANK_CONSENT_WARNING_DAYS: i64 = 7;
/// Tags on one subscription.
pub const TAGS: usize = 20;
/// A category's emoji, in characters (one emoji may take several).
pub const EMOJI: usize = 8;
/// Subscriptions one bulk update changes.
pub const BULK: usize = 500;
/// How many matches a transaction search counts before it stops and reports "at least": a
/// count over every match of 100,000 transactions reads them all, and a model needs only to
/// know that it should narrow the search or ask a report.
pub const COUNTED_TRANSACTIONS: u64 = 1000;
/// Periods one budget history shows (five years of months).
pub const BUDGET_PERIODS: u32 = 60;
/// Categories or labels one budget tracks.
pub const BUDGET_TRACKS: usize = 50;
/// Transactions one `apply_rule` changes; a call again takes the rest.
pub const RULE_CHANGES: u64 = 5000;
/// Parts one split transaction has.
pub const SPLIT_PARTS: usize = 20;
/// Subscriptions one import creates.
pub const IMPORT_ITEMS: usize = 200;
/// Charges one imported subscription may bring (years of weekly charges).
pub const IMPORT_CHARGES: usize = 1000;
/// How many years ahead a date that must be in the future may be (a pause's end, a trial's
/// end, the next charge); further is refused as a likely wrong year.
pub const FUTURE_YEARS: i64 = 5;
/// How many years back a date near today may be (a cancellation's last day, a pause's first);
/// further is refused as a likely wrong year.
pub const PAST_YEARS: i64 = 1;
/// How many days ahead upcoming charges are projected.
pub const UPCOMING_DAYS: u32 = 366;
/// Minutes a change waiting for the person's confirmation may be confirmed in (`confirm_change`'s
/// description says 10; an MCP client's elicitation state lives as long).
pub const CONFIRMATION_MINS: i64 = 10;

/// The limits a form shows, by name, for templates.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FormLimits {
    pub name: usize,
    pub short_name: usize,
    pub notes: usize,
    pub url: usize,
    pub tag: usize,
    pub emoji: usize,
    /// A question to the built-in assistant, in bytes.
    pub assistant_message: usize,
}

pub const FORMS: FormLimits = FormLimits {
    name: NAME,
    short_name: SHORT_NAME,
    notes: NOTES,
    url: URL,
    tag: TAG,
    emoji: EMOJI,
    assistant_message: assistant::MESSAGE_BYTES,
};

/// The subscriptions a spending summary names as the ones that cost the most.
pub const MOST_EXPENSIVE: usize = 10;

/// The page `list_activity` gives without a `limit`, where other lists give 100
/// (`DEFAULT_PAGE`): the log is long and each entry wordy, and asked "what was
/// the last change", Qwen2.5-Coder-1.5B read a page of 31 entries and named another entry than
/// the first in 6 of 6 replays, and the first of a page of ten in 6 of 6.
pub const ACTIVITY_PAGE: u32 = 10;

/// The latest changes listed, with their ids, where an undo names a change that is not one:
/// the refusal of an unknown id, and the assistant's of a guessed one.
pub const LATEST_CHANGES: u32 = 5;

/// The latest transactions whose payees are known as names: a question to the assistant that
/// says one points at the transaction tools ("our last shop at Mercadona"), and a name passed
/// where an id is asked that is one is refused with how to read its transactions.
pub const PAYEES_READ: u32 = 100;

/// Limits of one question, from seed 000's part B.
pub mod assistant {
    /// Model calls per message.
    pub const CALLS: usize = 6;
    /// Tools a question's words choose for the model, besides the list of subscriptions and
    /// find_tools (`assistant::choose`).
    pub const TOOLS_PER_QUESTION: usize = 5;
    /// Changes prepared per message.
    pub const PROPOSALS: usize = 5;
    /// Tokens per call, answer and reasoning together.
    pub const TOKENS_PER_CALL: u32 = 8192;
    /// The sampling temperature asked of a model on the owner's own machine: greedy, since a
    /// small model at a server's default (llama-server, Ollama and LM Studio use 0.8) made up
    /// ids and years it does not make at 0. Cloud models keep their provider's default.
    pub const LOCAL_TEMPERATURE: f32 = 0.0;
    /// Seconds per call, and per message.
    pub const CALL_SECS: u64 = 60;
    pub const MESSAGE_SECS: u64 = 150;
    /// Bytes of a person's message.
    pub const MESSAGE_BYTES: usize = 4000;
    /// Bytes of a tool result handed to the model.
    pub const TOOL_RESULT_BYTES: usize = super::MODEL_RESULT_BYTES;
    /// Per member: a burst of this many messages, then one every `REFILL_SECS`.
    pub const BURST: u32 = 12;
    pub const REFILL_SECS: u64 = 15;
    /// Turns of a conversation the model is sent again (text only).
    pub const REMEMBERED_TURNS: usize = 6;
    /// Minutes a conversation and its pending proposals are kept; an applied change is kept a
    /// day, as long as its Undo.
    pub const MEMORY_MINS: i64 = 30;
    pub const APPLIED_HOURS: i64 = 24;
    /// Screens one answer may show, and what one screen may hold.
    pub const SCREENS: usize = 3;
    pub const SCREEN_SUBSCRIPTIONS: usize = 20;
    pub const SCREEN_CHARGES: usize = 50;
    /// The longest period a charges screen covers, in days.
    pub const SCREEN_DAYS: i32 = 366;
    /// Tokens per call when reading a document.
    pub const DOCUMENT_TOKENS: u32 = 16_000;
    /// What may be sent to a model to read: larger is refused, never cut.
    pub const PICTURE_BYTES: usize = 5 * 1024 * 1024;
    pub const PDF_BYTES: usize = 20 * 1024 * 1024;
    pub const TEXT_BYTES: usize = 200 * 1024;
    /// Recurring charges one document may report.
    pub const DOCUMENT_ITEMS: usize = 50;
}
