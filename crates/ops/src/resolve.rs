//! Names where ids are, and dates relative to today, read while an op's input is deserialised.
//!
//! The invoker deserialises every input [`within`] a [`Directory`]: what the caller can see,
//! and today's date in the household's time zone. Then the id types here
//! ([`SubscriptionId`], [`CategoryId`], [`PaymentMethodId`], [`MemberId`], [`AccountId`],
//! [`LabelId`], [`BudgetId`], [`RuleId`]) take an id or a
//! name, [`IsoDate`] takes the phrases of `domain::relative` ("tomorrow", "fin de mes"), and
//! [`FutureDate`] refuses a day in the past with today's date and the likely intent. Each
//! records how it read what it was given as a [`Resolution`], which the result echoes (the
//! `resolved` field, declared in the output schema of every op whose input has a name or a
//! date), so the person sees it before confirming.
//! Outside a directory (a typed call from the web, a test) only ids and ISO dates are read.
//!
//! Why a thread-local: serde hands a `Deserialize` impl no context, and the alternative (every
//! handler resolving its own fields) would put the same rule in forty places. The directory is
//! set and cleared around one deserialisation on one thread, and nothing else reads it.

use std::{borrow::Cow, cell::RefCell, fmt};

use domain::{
    Date, Text,
    entities::EntityKind,
    names::{Pick, pick},
    relative, validate,
};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::{OpError, limits};

/// What an input schema's dates say besides their field's own description.
pub const DATE_FORMS: &str = "YYYY-MM-DD, or words (\"in 10 days\").";

/// The output field that echoes [`Reading::resolved`].
pub const RESOLVED: &str = "resolved";

/// What name resolution and relative dates need from the implementation.
pub trait Directory {
    /// Today, in the household's time zone.
    fn today(&self) -> Date;
    /// Every entity of this kind the caller can see, as (id, name). Never another
    /// household's, never another member's private item.
    fn visible(&self, kind: EntityKind) -> Result<Vec<(i64, String)>, OpError>;
    /// The payees of the latest [`limits::PAYEES_READ`] transactions the caller can see,
    /// each once.
    fn payees(&self) -> Result<Vec<Payee>, OpError> {
        Ok(Vec::new())
    }
    /// Whether the op reading the input changes something: a payee's refusal then leads with
    /// the writes that fit it rather than with the read.
    fn for_a_change(&self) -> bool {
        false
    }
    /// The subscriptions the caller sees that charge on `date`, as (id, name).
    fn charging_on(&self, _date: Date) -> Result<Vec<(i64, String)>, OpError> {
        Ok(Vec::new())
    }
}

/// A payee of the caller's latest transactions, with the ids of its transactions among them,
/// newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payee {
    pub name: String,
    pub transaction_ids: Vec<i64>,
}

/// How one value of the input was read: a name as the entity it names, or a phrase as a date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resolution {
    /// What the input said.
    pub given: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<EntityKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<IsoDate>,
}

/// What reading an input found besides its value.
#[derive(Debug, Default)]
pub struct Reading {
    /// Every name and phrase read, in the order they were read.
    pub resolved: Vec<Resolution>,
    /// Why a name or date was refused, when one was: the serde error only carries its text,
    /// this keeps its code (`not_found` for a name that matches nothing).
    pub failure: Option<OpError>,
}

struct Scope {
    directory: Box<dyn Directory>,
    /// Names per kind, loaded at most once per call.
    names: Vec<(EntityKind, Vec<(i64, String)>)>,
    reading: Reading,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Runs `read` (a deserialisation) with `directory` in reach of the types of this module.
pub fn within<R>(directory: Box<dyn Directory>, read: impl FnOnce() -> R) -> (R, Reading) {
    /// Puts back the scope that was there before, even if `read` panics.
    struct Restore(Option<Option<Scope>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(previous) = self.0.take() {
                SCOPE.with(|cell| *cell.borrow_mut() = previous);
            }
        }
    }
    let scope = Scope { directory, names: Vec::new(), reading: Reading::default() };
    let mut restore = Restore(Some(SCOPE.with(|cell| cell.replace(Some(scope)))));
    let value = read();
    let previous = restore.0.take().unwrap_or_default();
    let scope = SCOPE.with(|cell| cell.replace(previous));
    (value, scope.map(|scope| scope.reading).unwrap_or_default())
}

/// Runs `f` on the current scope; `None` outside [`within`].
fn with_scope<T>(f: impl FnOnce(&mut Scope) -> T) -> Option<T> {
    SCOPE.with(|cell| cell.try_borrow_mut().ok()?.as_mut().map(f))
}

/// Records why a value was refused and returns the serde error that stops deserialisation.
fn refuse<E: de::Error>(failure: OpError) -> E {
    let message = failure.text().render();
    with_scope(|scope| scope.reading.failure = Some(failure));
    E::custom(message)
}

/// Today in the household's zone, inside [`within`].
pub fn today() -> Option<Date> {
    with_scope(|scope| scope.directory.today())
}

/// A phrase such as "in 10 days" as a date, recorded for the echo; `None` outside a directory
/// or for words that are not a date.
pub(crate) fn relative_date(given: &str) -> Option<Date> {
    let today = today()?;
    let date = relative::resolve(given, today)?;
    with_scope(|scope| {
        scope.reading.resolved.push(Resolution {
            given: given.to_owned(),
            kind: None,
            id: None,
            name: None,
            date: Some(IsoDate(date)),
        })
    });
    Some(date)
}

/// What one kind of id is called and where a model finds ids.
struct Noun {
    kind: EntityKind,
    /// "subscription"
    singular: &'static str,
    /// The op that lists ids and names.
    list_op: &'static str,
}

impl Noun {
    /// "a subscription", "an account".
    fn with_article(&self) -> String {
        let vowel = self.singular.starts_with(['a', 'e', 'i', 'o', 'u']);
        format!("{} {}", if vowel { "an" } else { "a" }, self.singular)
    }
}

/// What an unknown reference said.
enum Unknown<'a> {
    Id(i64),
    Name(&'a str),
}

/// How an id of `kind` the caller cannot see is refused by the op that looked for it (a
/// model's guess, most often): with the names they can see, `visible` as
/// [`Directory::visible`] gives them, so the next call can pass the right one without a list
/// call first.
pub fn unknown_id(kind: EntityKind, id: i64, visible: &[(i64, String)]) -> Text {
    match NOUNS.iter().find(|noun| noun.kind == kind) {
        Some(noun) => unknown(noun, Unknown::Id(id), visible, &[]),
        None => Text::new("No {kind} you can see has id {id}.").with("kind", kind).with("id", id),
    }
}

/// How a reference to nothing the caller can see is refused: the closest names when some are
/// close, else every name they can see (the first ten and a count past that), and never a
/// guess, since a name or id that matches nothing says nothing of which one the person meant.
fn unknown(
    noun: &Noun,
    given: Unknown<'_>,
    visible: &[(i64, String)],
    closest: &[&(i64, String)],
) -> Text {
    let mut all: Vec<&(i64, String)> = visible.iter().collect();
    all.sort_by_cached_key(|(id, name)| (domain::names::fold(name), *id));
    let text = match (&given, closest.is_empty(), all.len()) {
        (Unknown::Name(_), false, _) => Text::new(
            "No {noun} you can see is named \"{given}\". Closest: {closest}. Call this tool again with one of these ids or names; if the person did not say which one, ask them.",
        ),
        (_, _, 0) => match given {
            Unknown::Id(_) => {
                Text::new("No {noun} you can see has id {given}; there are none yet.")
            }
            Unknown::Name(_) => {
                Text::new("No {noun} you can see is named \"{given}\"; there are none yet.")
            }
        },
        (_, _, count) if count <= LISTED => match given {
            Unknown::Id(_) => Text::new(
                "No {noun} you can see has id {given}. The ones you can see: {names}. Call this tool again with one of these ids or names; if the person did not say which one, ask them.",
            ),
            Unknown::Name(_) => Text::new(
                "No {noun} you can see is named \"{given}\". The ones you can see: {names}. Call this tool again with one of these ids or names; if the person did not say which one, ask them.",
            ),
        },
        _ => match given {
            Unknown::Id(_) => Text::new(
                "No {noun} you can see has id {given}. Some you can see: {names}. Call this tool again with one of these, or {list_op} for the others; if the person did not say which one, ask them.",
            ),
            Unknown::Name(_) => Text::new(
                "No {noun} you can see is named \"{given}\". Some you can see: {names}. Call this tool again with one of these, or {list_op} for the others; if the person did not say which one, ask them.",
            ),
        },
    };
    let given = match given {
        Unknown::Id(id) => id.to_string(),
        Unknown::Name(name) => shorten(name),
    };
    text.with("noun", noun.singular)
        .with("given", given)
        .with("closest", listed(closest))
        .with("names", listed(&all))
        .with("list_op", noun.list_op)
}

/// What [`elsewhere`] found: another thing by its whole name, or by the start of a word of it
/// when it is the only one.
#[derive(Default)]
struct Elsewhere {
    whole: Option<Text>,
    partial: Option<Text>,
}

/// The op that reads transactions, where a payee's name leads.
const SEARCH_TRANSACTIONS: &str = "search_transactions";

/// The op that sets transactions' category (a small model put "the La Tagliatella payment
/// under Restaurants" through update_subscription).
const CATEGORISE_TRANSACTIONS: &str = "categorise_transactions";

/// The op that files a payee's transactions to come ("from now on, always put Lidl under
/// Groceries" went through update_subscription too).
const CREATE_RULE: &str = "create_rule";

/// How many of a payee's transaction ids a refusal names.
const PAYEE_IDS: usize = 10;

/// Where else a name that is no `noun` is known: the name of one thing of another kind, or
/// one of the payees of the latest transactions, read once. A model passes a payee as a subscription ("our
/// last shop at Mercadona" read with get_subscription) or an account as a category; it is
/// told what the name is and what reads it, rather than shown the wrong kind's names.
fn elsewhere(noun: &Noun, given: &str) -> Result<Elsewhere, OpError> {
    let folded = domain::names::fold(given);
    let mut found = Elsewhere::default();
    let whole = |name: &str| domain::names::fold(name) == folded;
    let mut keep = |whole: bool, text: Text| {
        let slot = if whole { &mut found.whole } else { &mut found.partial };
        slot.get_or_insert(text);
    };
    for other in NOUNS.iter().filter(|other| other.kind != noun.kind) {
        let Some(names) = with_scope(|scope| scope.names(other.kind)) else { break };
        // One of that kind by its whole name or a word's start ("icloud" for iCloud+).
        if let Pick::One((id, name)) = pick(&names?, |(_, name)| name, given) {
            keep(
                whole(name),
                Text::new("\"{given}\" is not {a_noun}: it is the {other} {name} (id {id}). Use a tool that takes {a_other} ({list_op} shows them), or ask the person what they meant.")
                    .with("given", shorten(given))
                    .with("a_noun", noun.with_article())
                    .with("other", other.singular)
                    .with("a_other", other.with_article())
                    .with("name", name)
                    .with("id", *id)
                    .with("list_op", other.list_op),
            );
        }
    }
    let payees = with_scope(|scope| scope.directory.payees()).transpose()?.unwrap_or_default();
    let payee = match pick(&payees, |payee| &payee.name, given) {
        Pick::One(payee) => Some((whole(&payee.name), payee.name.as_str(), vec![payee])),
        // "Mercadona" for "MERCADONA MADRID" and "MERCADONA CENTRO": the search finds both.
        Pick::Several(many)
            if many.iter().all(|payee| domain::names::fold(&payee.name).starts_with(&folded)) =>
        {
            Some((false, given.trim(), many))
        }
        _ => None,
    };
    if let Some((whole, name, matched)) = payee {
        // The ids let a model categorise them at once, without a search first.
        let ids = matched
            .iter()
            .flat_map(|payee| &payee.transaction_ids)
            .take(PAYEE_IDS)
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        // A small model does what a refusal names first: the write it was after, or the read.
        let change = with_scope(|scope| scope.directory.for_a_change()).unwrap_or(false);
        let text = if change {
            Text::new(
                "\"{given}\" is not {a_noun}: it is a payee of your transactions (latest ids: {ids}). To set their category, call {categorise} with ids [{ids}] and the category_id; to file the ones to come, call {rule}; {search} with text \"{payee}\" reads them.",
            )
        } else {
            Text::new(
                "\"{given}\" is not {a_noun}: it is a payee of your transactions (latest ids: {ids}). Call {search} with text \"{payee}\" and no {noun} to read them; {categorise} with ids [{ids}] and a category_id sets their category; {rule} files the ones to come.",
            )
        };
        keep(
            whole,
            text.with("given", shorten(given))
                .with("noun", noun.singular)
                .with("a_noun", noun.with_article())
                .with("ids", ids)
                .with("search", SEARCH_TRANSACTIONS)
                .with("categorise", CATEGORISE_TRANSACTIONS)
                .with("rule", CREATE_RULE)
                .with("payee", name),
        );
    }
    Ok(found)
}

/// Reads an entity by name among what the caller can see.
fn read_name<E: de::Error>(noun: &Noun, given: &str) -> Result<i64, E> {
    let digits = given.trim();
    let as_id = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse::<i64>().ok())
        .flatten();
    let not_an_id = || {
        refuse(OpError::invalid(
            "",
            Text::new("\"{given}\" is not a {noun} id; pass the integer id (or the name) that {list_op} shows.")
                .with("given", shorten(given))
                .with("noun", noun.singular)
                .with("list_op", noun.list_op),
        ))
    };
    if given.chars().count() > limits::NAME {
        return Err(not_an_id());
    }
    let names = match with_scope(|scope| scope.names(noun.kind)) {
        None => return as_id.ok_or_else(not_an_id),
        Some(names) => names.map_err(refuse)?,
    };
    let picked = match as_id {
        // A number in a string is an id, unless something is named exactly that.
        Some(id) => match pick(&names, |(_, name)| name, given) {
            Pick::One(found) if domain::names::fold(&found.1) == domain::names::fold(given) => {
                found.clone()
            }
            _ => return Ok(id),
        },
        None => match pick(&names, |(_, name)| name, given) {
            Pick::One(found) => found.clone(),
            Pick::Several(found) => {
                return Err(refuse(OpError::invalid("", several(given, &found, noun.singular))));
            }
            Pick::None { closest } => {
                if let Some(date) = a_date(noun, given) {
                    return Err(refuse(charging_on(given, date)?));
                }
                // Another kind's whole name beats one of this kind a typo away or sharing a
                // word, which beats another kind's partial name.
                let known = elsewhere(noun, given).map_err(refuse)?;
                let partial = known.partial.filter(|_| closest.is_empty());
                let refusal = known
                    .whole
                    .or(partial)
                    .unwrap_or_else(|| unknown(noun, Unknown::Name(given), &names, &closest));
                return Err(refuse(OpError::not_found(refusal)));
            }
        },
    };
    let (id, name) = picked;
    with_scope(|scope| {
        scope.reading.resolved.push(Resolution {
            given: given.to_owned(),
            kind: Some(noun.kind),
            id: Some(id),
            name: Some(name),
            date: None,
        })
    });
    Ok(id)
}

/// The day `given` names when it is a date where a subscription is expected ("cancel
/// whatever charges us on 1 December" arrived as `"id": "2026-12-01"`).
fn a_date(noun: &Noun, given: &str) -> Option<Date> {
    if noun.kind != EntityKind::Subscription {
        return None;
    }
    match given.trim().parse::<IsoDate>() {
        Ok(date) => Some(date.date()),
        Err(_) => relative::resolve(given, today()?),
    }
}

/// The refusal of a date given as a subscription: the subscriptions charging that day, so the
/// next call names one of them.
fn charging_on<E: de::Error>(given: &str, date: Date) -> Result<OpError, E> {
    let charged = with_scope(|scope| scope.directory.charging_on(date))
        .transpose()
        .map_err(refuse)?
        .unwrap_or_default();
    let charged: Vec<&(i64, String)> = charged.iter().collect();
    let text = if charged.is_empty() {
        Text::new(
            "\"{given}\" is a date, not a subscription, and nothing you can see is charged on {date}. list_upcoming_charges shows what is charged when.",
        )
    } else {
        Text::new(
            "\"{given}\" is a date, not a subscription. Charged on {date}: {names}. Call this tool again with the id of the one the person means, once for each if they meant all.",
        )
    };
    Ok(OpError::not_found(
        text.with("given", shorten(given))
            .with("date", IsoDate(date))
            .with("names", listed(&charged)),
    ))
}

impl Scope {
    fn names(&mut self, kind: EntityKind) -> Result<Vec<(i64, String)>, OpError> {
        if let Some((_, names)) = self.names.iter().find(|(k, _)| *k == kind) {
            return Ok(names.clone());
        }
        let names = self.directory.visible(kind)?;
        self.names.push((kind, names.clone()));
        Ok(names)
    }
}

/// How a name that matches several things is refused: one text, so the assistant tells it
/// from other refusals and asks the person which they mean ([`several_match`]). It gives the
/// question to say, as a waiting change gives its words: a small model told only to ask the
/// person called the tool again with the first of the names.
fn several(given: &str, found: &[&(i64, String)], noun: &str) -> Text {
    let names: Vec<&str> = found.iter().take(LISTED).map(|(_, name)| name.as_str()).collect();
    let question = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    };
    Text::new("\"{given}\" matches {count} {noun}s: {candidates}. Nothing was done: do not choose one yourself. Say to them: \"Which one do you mean: {question}?\" Then call this tool again with the id of the one they name.")
        .with("given", shorten(given))
        .with("count", found.len())
        .with("noun", noun)
        .with("candidates", listed(found))
        .with("question", question)
}

/// The things a name matched, as the refusal lists them, when `err` refuses a name because it
/// matched several.
pub fn several_match(err: &OpError) -> Option<String> {
    let text = err.text();
    if text.key != several("", &[], "").key {
        return None;
    }
    text.arg("candidates").map(str::to_owned)
}

/// How many things a refusal names before it says how many more there are.
const LISTED: usize = 10;

/// "Netflix (id 3), Netflix Kids (id 9)", at most [`LISTED`] and a count of the others.
fn listed(found: &[&(i64, String)]) -> String {
    let mut out: Vec<String> =
        found.iter().take(LISTED).map(|(id, name)| format!("{name} (id {id})")).collect();
    if found.len() > LISTED {
        out.push(format!("and {} more", found.len() - LISTED));
    }
    out.join(", ")
}

/// What a message repeats of the input: at most 60 characters.
fn shorten(given: &str) -> String {
    domain::validate::shorten(given, 60)
}

/// A number that is not an id: a fraction, or too large for one (whole numbers such as `939.0`
/// arrive as integers: the invoker reads them so).
fn not_an_id<E: de::Error>(noun: &Noun, value: f64) -> E {
    E::custom(format_args!(
        "{value} is not a {} id; ids are positive whole numbers (see {})",
        noun.singular, noun.list_op
    ))
}

macro_rules! entity_id {
    ($(#[$meta:meta])* $name:ident, $kind:ident, $singular:literal, $list_op:literal) => {
        $(#[$meta])*
        ///
        /// Written as the id (an integer) or the name, case and accents ignored, among what the
        /// caller can see; its JSON Schema is `oneOf` the two.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub i64);

        impl $name {
            const NOUN: Noun = Noun {
                kind: EntityKind::$kind,
                singular: $singular,
                list_op: $list_op,
            };

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                Self(id)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_i64(self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl de::Visitor<'_> for Visitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a {} id (an integer) or its name", $singular)
                    }
                    fn visit_i64<E: de::Error>(self, id: i64) -> Result<$name, E> {
                        if !(1..=limits::MAX_ID).contains(&id) {
                            return Err(E::custom(format_args!(
                                "{id} is not a {} id; ids are whole numbers from 1 to {} (see {})",
                                $singular, limits::MAX_ID, $list_op
                            )));
                        }
                        Ok($name(id))
                    }
                    fn visit_u64<E: de::Error>(self, id: u64) -> Result<$name, E> {
                        let id = i64::try_from(id).map_err(|_| {
                            E::custom(format_args!("{id} is not a {} id", $singular))
                        })?;
                        self.visit_i64(id)
                    }
                    fn visit_f64<E: de::Error>(self, value: f64) -> Result<$name, E> {
                        Err(not_an_id(&$name::NOUN, value))
                    }
                    fn visit_str<E: de::Error>(self, given: &str) -> Result<$name, E> {
                        read_name(&$name::NOUN, given).map($name)
                    }
                }
                deserializer.deserialize_any(Visitor)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "oneOf": [
                        {"type": "integer", "minimum": 1, "maximum": limits::MAX_ID},
                        {"type": "string", "minLength": 1, "maxLength": limits::NAME}
                    ],
                    "description": "Id or name."
                })
            }
        }
    };
}

entity_id!(
    /// A subscription, by id or name.
    SubscriptionId,
    Subscription,
    "subscription",
    "list_subscriptions"
);
entity_id!(
    /// A category, by id or name.
    CategoryId,
    Category,
    "category",
    "list_categories"
);
entity_id!(
    /// A payment method, by id or name.
    PaymentMethodId,
    PaymentMethod,
    "payment method",
    "list_payment_methods"
);
entity_id!(
    /// An account, by id or name.
    AccountId,
    Account,
    "account",
    "list_accounts"
);
entity_id!(
    /// A label on transactions, by id or name.
    LabelId,
    Label,
    "label",
    "list_labels"
);
entity_id!(
    /// A rule, by id or name.
    RuleId,
    Rule,
    "rule",
    "list_rules"
);
entity_id!(
    /// A budget, by id or name.
    BudgetId,
    Budget,
    "budget",
    "list_budgets"
);
entity_id!(
    /// A member of the household, by id or name (never by email).
    MemberId,
    Member,
    "member",
    "list_members"
);

/// Every kind an id type above reads, for the refusals of ids the handlers look up.
const NOUNS: [Noun; 8] = [
    SubscriptionId::NOUN,
    CategoryId::NOUN,
    PaymentMethodId::NOUN,
    AccountId::NOUN,
    LabelId::NOUN,
    RuleId::NOUN,
    BudgetId::NOUN,
    MemberId::NOUN,
];

/// Which days around today a date field takes; a date outside is most likely a wrong year.
#[derive(Clone, Copy)]
enum Window {
    /// Today to [`limits::FUTURE_YEARS`] years ahead.
    FromToday,
    /// [`limits::PAST_YEARS`] back to [`limits::FUTURE_YEARS`] ahead.
    AroundToday,
}

/// Checks a date read inside [`within`] against its window, refusing it with today's date and
/// the date most likely meant (the same day in the likely year).
fn in_window(date: Date, window: Window) -> Result<Date, OpError> {
    let Some(today) = today() else { return Ok(date) };
    let horizon = relative::add_years(today, limits::FUTURE_YEARS);
    let (message, likely) = match window {
        Window::FromToday if date < today => (
            Text::new(
                "{date} is in the past; today is {today}. Did you mean {likely}? Write a date from today on, or a phrase such as \"in 10 days\".",
            ),
            relative::same_day_from(date, today),
        ),
        Window::AroundToday
            if relative::add_years(today, -limits::PAST_YEARS)
                .is_some_and(|start| date < start) =>
        {
            (
                Text::new(
                    "{date} is more than {past} year ago; today is {today}. Did you mean {likely}? Phrases such as \"end of month\" work too.",
                ),
                relative::same_day_nearest(date, today),
            )
        }
        _ if horizon.is_some_and(|horizon| date > horizon) => (
            Text::new(
                "{date} is more than {years} years away; today is {today}. Did you mean {likely}?",
            ),
            relative::same_day_from(date, today),
        ),
        _ => return Ok(date),
    };
    Err(OpError::invalid(
        "",
        message
            .with("date", IsoDate(date))
            .with("today", IsoDate(today))
            .with("past", limits::PAST_YEARS)
            .with("years", limits::FUTURE_YEARS)
            .with("likely", IsoDate(likely)),
    ))
}

macro_rules! windowed_date {
    ($(#[$meta:meta])* $name:ident, $window:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub IsoDate);

        impl $name {
            pub fn date(self) -> Date {
                self.0.date()
            }
        }

        impl From<Date> for $name {
            fn from(date: Date) -> Self {
                Self(IsoDate(date))
            }
        }

        impl std::str::FromStr for $name {
            type Err = domain::validate::DateError;

            /// `YYYY-MM-DD`; its window around today is checked when the invoker reads the
            /// input.
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                text.parse().map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(serializer)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let date = IsoDate::deserialize(deserializer)?.date();
                in_window(date, $window).map($name::from).map_err(refuse)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                IsoDate::json_schema(generator)
            }
        }
    };
}

windowed_date!(
    /// A date that only makes sense from today on (a pause's end, a trial's end, the next
    /// charge): one in the past, or more than [`limits::FUTURE_YEARS`] years ahead, is refused
    /// with today's date and the date most likely meant. Written like [`IsoDate`], phrases
    /// included.
    FutureDate,
    Window::FromToday
);
windowed_date!(
    /// A date near today (a cancellation's last day, a pause's first): more than
    /// [`limits::PAST_YEARS`] back or [`limits::FUTURE_YEARS`] ahead is refused with today's
    /// date and the date most likely meant.
    NearDate,
    Window::AroundToday
);

/// A calendar date in the household's time zone, written `YYYY-MM-DD` (years 1900 to 2200).
///
/// Its JSON Schema says `"format": "date"`; a wrong value is refused with what to write. In an
/// op's input it may also be a phrase relative to today ("in 10 days", "fin de mes"), which the
/// invoker reads in the household's time zone (below).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IsoDate(pub domain::Date);

impl IsoDate {
    pub fn date(self) -> domain::Date {
        self.0
    }

    /// Ten ASCII bytes, written without the general date formatter (which shows in list
    /// profiles: a 500-row page writes thousands of dates).
    fn text(&self) -> DateText {
        let digits = |value: i32, out: &mut [u8]| {
            let mut value = value;
            for slot in out.iter_mut().rev() {
                *slot = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        let mut out = *b"0000-00-00";
        digits(i32::from(self.0.year()), &mut out[0..4]);
        digits(i32::from(self.0.month()), &mut out[5..7]);
        digits(i32::from(self.0.day()), &mut out[8..10]);
        DateText(out)
    }
}

impl From<domain::Date> for IsoDate {
    fn from(date: domain::Date) -> Self {
        Self(date)
    }
}

impl std::str::FromStr for IsoDate {
    type Err = validate::DateError;

    /// `YYYY-MM-DD`, years 1900 to 2200.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        validate::parse_date(text).map(IsoDate)
    }
}

impl fmt::Display for IsoDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

/// A date's ten ASCII bytes.
struct DateText([u8; 10]);

impl DateText {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl Serialize for IsoDate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text().as_str())
    }
}

impl<'de> Deserialize<'de> for IsoDate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = IsoDate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a date written YYYY-MM-DD")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<IsoDate, E> {
                match text.parse() {
                    Ok(date) => Ok(date),
                    // Inside the invoker, phrases such as "tomorrow" are dates too.
                    Err(err) => match relative_date(text) {
                        Some(date) => Ok(IsoDate(date)),
                        None => match today() {
                            Some(today) if matches!(err, validate::DateError::Malformed(_)) => {
                                Err(E::custom(format_args!(
                                    "{err}, or as a phrase such as tomorrow, in 10 days, next friday or end of next month (today is {})",
                                    IsoDate(today)
                                )))
                            }
                            _ => Err(E::custom(err)),
                        },
                    },
                }
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl JsonSchema for IsoDate {
    fn schema_name() -> Cow<'static, str> {
        "IsoDate".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date", "pattern": ISO_DATE_PATTERN})
    }
}

/// `format: date` does not bound the year: this says 1900 to 2200
/// ([`domain::validate::MIN_YEAR`] to [`domain::validate::MAX_YEAR`]).
pub const ISO_DATE_PATTERN: &str = "^(19[0-9]{2}|2[01][0-9]{2}|2200)-[0-9]{2}-[0-9]{2}$";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn date(year: i16, month: i8, day: i8) -> Date {
        Date::new(year, month, day).unwrap()
    }

    #[test]
    fn a_noun_is_written_with_the_article_its_sound_takes() {
        // "is not a account" was what a model read.
        assert_eq!(AccountId::NOUN.with_article(), "an account");
        assert_eq!(SubscriptionId::NOUN.with_article(), "a subscription");
    }

    struct Fixed;
    impl Directory for Fixed {
        fn today(&self) -> Date {
            date(2026, 12, 1)
        }
        fn visible(&self, kind: EntityKind) -> Result<Vec<(i64, String)>, OpError> {
            Ok(match kind {
                EntityKind::Subscription => {
                    vec![(3, "Spotify".into()), (4, "Netflix".into()), (5, "Netflix Kids".into())]
                }
                _ => vec![(7, "Café".into())],
            })
        }
        fn payees(&self) -> Result<Vec<Payee>, OpError> {
            let payee = |name: &str, ids: &[i64]| Payee {
                name: name.into(),
                transaction_ids: ids.to_vec(),
            };
            Ok(vec![payee("MERCADONA", &[41, 17]), payee("Lidl", &[12])])
        }
    }

    #[derive(Debug, Deserialize)]
    struct Input {
        id: SubscriptionId,
        #[serde(default)]
        ends_on: Option<NearDate>,
        #[serde(default)]
        category: Option<CategoryId>,
        #[serde(default)]
        until: Option<FutureDate>,
        #[serde(default)]
        from: Option<IsoDate>,
    }

    fn read(value: serde_json::Value) -> (Result<Input, serde_json::Error>, Reading) {
        within(Box::new(Fixed), || serde_json::from_value::<Input>(value))
    }

    #[test]
    fn names_and_phrases_resolve_and_are_recorded() {
        let (input, reading) = read(
            json!({"id": "spotify", "category": "cafe", "until": "in 10 days", "from": "2026-01-01"}),
        );
        let input = input.unwrap();
        assert_eq!(input.id, SubscriptionId(3));
        assert_eq!(input.category, Some(CategoryId(7)));
        assert_eq!(input.until.unwrap().date(), date(2026, 12, 11));
        assert_eq!(input.from.unwrap().date(), date(2026, 1, 1));
        let echo = serde_json::to_value(&reading.resolved).unwrap();
        assert_eq!(
            echo,
            json!([
                {"given": "cafe", "kind": "category", "id": 7, "name": "Café"},
                {"given": "spotify", "kind": "subscription", "id": 3, "name": "Spotify"},
                {"given": "in 10 days", "date": "2026-12-11"},
            ])
        );
        assert!(reading.failure.is_none());
    }

    #[test]
    fn ids_stay_ids() {
        for id in [json!(4), json!("4")] {
            let (input, reading) = read(json!({"id": id}));
            assert_eq!(input.unwrap().id, SubscriptionId(4));
            assert!(reading.resolved.is_empty());
        }
        for bad in [json!(0), json!(-2), json!(4.5), json!(true)] {
            assert!(read(json!({"id": bad})).0.is_err(), "{bad}");
        }
    }

    #[test]
    fn ambiguous_and_unknown_names_say_what_to_do() {
        let (input, reading) = read(json!({"id": "netf"}));
        assert!(input.is_err());
        let failure = reading.failure.unwrap();
        assert_eq!(failure.code(), "invalid_input");
        assert_eq!(
            failure.text().render(),
            "\"netf\" matches 2 subscriptions: Netflix (id 4), Netflix Kids (id 5). Nothing was done: do not choose one yourself. Say to them: \"Which one do you mean: Netflix or Netflix Kids?\" Then call this tool again with the id of the one they name."
        );
        let (_, reading) = read(json!({"id": "Spotfy"}));
        let failure = reading.failure.unwrap();
        assert_eq!(failure.code(), "not_found");
        assert_eq!(
            failure.text().render(),
            "No subscription you can see is named \"Spotfy\". Closest: Spotify (id 3). Call this tool again with one of these ids or names; if the person did not say which one, ask them."
        );
        // Nothing close: every name the caller can see, sorted as a person reads them.
        let (_, reading) = read(json!({"id": "hulu"}));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "No subscription you can see is named \"hulu\". The ones you can see: Netflix (id 4), Netflix Kids (id 5), Spotify (id 3). Call this tool again with one of these ids or names; if the person did not say which one, ask them."
        );
    }

    #[test]
    fn a_name_of_another_kind_or_a_payee_says_what_it_is_and_what_reads_it() {
        let (input, reading) = read(json!({"id": "cafe"}));
        assert!(input.is_err());
        let failure = reading.failure.unwrap();
        assert_eq!(failure.code(), "not_found");
        assert_eq!(
            failure.text().render(),
            "\"cafe\" is not a subscription: it is the category Café (id 7). Use a tool that takes a category (list_categories shows them), or ask the person what they meant."
        );
        let (_, reading) = read(json!({"id": "Mercadona"}));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "\"Mercadona\" is not a subscription: it is a payee of your transactions (latest ids: 41, 17). Call search_transactions with text \"MERCADONA\" and no subscription to read them; categorise_transactions with ids [41, 17] and a category_id sets their category; create_rule files the ones to come."
        );
        assert_eq!(
            SEARCH_TRANSACTIONS,
            <crate::ledger::SearchTransactions as crate::op::Op>::INFO.name
        );
        assert_eq!(
            CATEGORISE_TRANSACTIONS,
            <crate::ledger::CategoriseTransactions as crate::op::Op>::INFO.name
        );
        assert_eq!(CREATE_RULE, <crate::rules::CreateRule as crate::op::Op>::INFO.name);
        // Read for a change, the refusal leads with the writes that fit a payee.
        struct ForAChange;
        impl Directory for ForAChange {
            fn today(&self) -> Date {
                Fixed.today()
            }
            fn visible(&self, kind: EntityKind) -> Result<Vec<(i64, String)>, OpError> {
                Fixed.visible(kind)
            }
            fn payees(&self) -> Result<Vec<Payee>, OpError> {
                Fixed.payees()
            }
            fn for_a_change(&self) -> bool {
                true
            }
        }
        let (_, reading) =
            within(Box::new(ForAChange), || serde_json::from_value::<Input>(json!({"id": "lidl"})));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "\"lidl\" is not a subscription: it is a payee of your transactions (latest ids: 12). To set their category, call categorise_transactions with ids [12] and the category_id; to file the ones to come, call create_rule; search_transactions with text \"Lidl\" reads them."
        );
    }

    #[test]
    fn an_unknown_id_is_refused_with_the_names_instead() {
        let names: Vec<(i64, String)> =
            ["Zeta", "alpha", "Beta"].iter().zip(1..).map(|(n, id)| (id, (*n).into())).collect();
        assert_eq!(
            unknown_id(EntityKind::Category, 12345, &names).render(),
            "No category you can see has id 12345. The ones you can see: alpha (id 2), Beta (id 3), Zeta (id 1). Call this tool again with one of these ids or names; if the person did not say which one, ask them."
        );
        assert_eq!(
            unknown_id(EntityKind::Budget, 9, &[]).render(),
            "No budget you can see has id 9; there are none yet."
        );
        let many: Vec<(i64, String)> = (1..=12).map(|id| (id, format!("Rule {id:02}"))).collect();
        assert_eq!(
            unknown_id(EntityKind::Rule, 99, &many).render(),
            "No rule you can see has id 99. Some you can see: Rule 01 (id 1), Rule 02 (id 2), Rule 03 (id 3), Rule 04 (id 4), Rule 05 (id 5), Rule 06 (id 6), Rule 07 (id 7), Rule 08 (id 8), Rule 09 (id 9), Rule 10 (id 10), and 2 more. Call this tool again with one of these, or list_rules for the others; if the person did not say which one, ask them."
        );
    }

    #[test]
    fn past_and_far_dates_orient_the_model() {
        let (_, reading) = read(json!({"id": 3, "until": "2023-04-01"}));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "2023-04-01 is in the past; today is 2026-12-01. Did you mean 2027-04-01? Write a date from today on, or a phrase such as \"in 10 days\"."
        );
        let (_, reading) = read(json!({"id": 3, "until": "2023-12-25"}));
        assert!(reading.failure.unwrap().text().render().contains("Did you mean 2026-12-25?"));
        let (_, reading) = read(json!({"id": 3, "until": "2040-01-01"}));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "2040-01-01 is more than 5 years away; today is 2026-12-01. Did you mean 2027-01-01?"
        );
        let (input, _) = read(json!({"id": 3, "until": "today"}));
        assert_eq!(input.unwrap().until.unwrap().date(), date(2026, 12, 1));
        // Near today: up to a year back.
        let (input, _) = read(json!({"id": 3, "ends_on": "2026-01-15"}));
        assert_eq!(input.unwrap().ends_on.unwrap().date(), date(2026, 1, 15));
        let (_, reading) = read(json!({"id": 3, "ends_on": "2023-12-31"}));
        assert_eq!(
            reading.failure.unwrap().text().render(),
            "2023-12-31 is more than 1 year ago; today is 2026-12-01. Did you mean 2026-12-31? Phrases such as \"end of month\" work too."
        );
        let (_, reading) = read(json!({"id": 3, "ends_on": "2035-01-01"}));
        assert!(reading.failure.unwrap().text().render().contains("more than 5 years away"));
    }

    #[test]
    fn outside_a_directory_only_ids_and_iso_dates() {
        let value = json!({"id": "3", "from": "2026-01-01"});
        let input: Input = serde_json::from_value(value).unwrap();
        assert_eq!(input.id, SubscriptionId(3));
        assert!(serde_json::from_value::<Input>(json!({"id": "Spotify"})).is_err());
        assert!(serde_json::from_value::<Input>(json!({"id": 3, "from": "tomorrow"})).is_err());
        // The scope is gone after `within`.
        assert!(today().is_none());
    }
}
