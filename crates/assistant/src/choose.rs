//! The tools one question is offered. A small model reads every definition on every call and
//! chooses worse among many, so each question gets the few tools its words point at: the
//! question's words against the tools' names and descriptions (`ops::tools::find`, which also
//! reads Spanish and everyday words such as "went up"), and against the household's own names
//! (a subscription named in the question points at the subscription tools, an account at the
//! ledger's, a category at spending, a payee of a recent transaction at the transactions).
//! Always offered besides: the list of subscriptions, which
//! answers most questions, and `find_tools`, through which the model finds any other tool.
//!
//! Choosing only narrows what the model reads first: a tool left out is still called by its
//! name, and what `find_tools` returns is offered from the next call on.

use ops::{
    Caller, Catalog, Mode, Op as _, OpMeta,
    ledger::{ListAccounts, ListAccountsInput, SearchTransactions, SearchTransactionsInput},
    limits::assistant as limits,
    organise::ListCategories,
    reports::{Context, GetContext},
    subscriptions::ListSubscriptions,
    tools::{FindTools, words},
};

use crate::{llm::ToolDef, repair, screens, tools};

/// Always offered, whatever the question.
const ALWAYS: &[&str] = &[ListSubscriptions::INFO.name, FindTools::INFO.name];

/// Words that ask to be shown something, which `show_screen` does.
const SHOW_WORDS: &[&str] = &[
    "show",
    "see",
    "chart",
    "screen",
    "display",
    "muestra",
    "muestrame",
    "mostrar",
    "ver",
    "ensename",
];

/// The tool words of a payee of the latest transactions: a kind of its own, as a payee names
/// transactions to read, never a thing to change.
const PAYEE: &str = "transaction search";

/// Name words too common to say which thing is meant.
const TOO_COMMON: &[&str] = &["the", "and", "other", "otros", "otras", "plus", "family", "card"];

/// The household's names, each with the words of the tools its kind of thing needs.
#[derive(Default)]
pub(crate) struct Names {
    /// A name's significant words, the name, and its kind's tool words.
    named: Vec<(Vec<String>, String, &'static str)>,
}

impl Names {
    /// The names in the briefing (subscriptions), the household's accounts and categories and
    /// the payees of its latest transactions, read as the assistant (so another member's
    /// private things are not among them).
    pub(crate) async fn read(
        catalog: &dyn Catalog,
        assistant: &Caller,
        briefing: &Context,
    ) -> Self {
        let mut names = Self::default();
        for subscription in &briefing.subscriptions {
            names.add(&subscription.name, "subscription");
        }
        let accounts = ops::call::<ListAccounts>(
            catalog,
            assistant,
            &ListAccountsInput::default(),
            Mode::Apply,
        )
        .await;
        for account in accounts.map(|list| list.items).unwrap_or_default() {
            names.add(&account.name, "account transaction");
        }
        let categories =
            ops::call::<ListCategories>(catalog, assistant, &ops::household::Empty {}, Mode::Apply)
                .await;
        for category in categories.map(|list| list.items).unwrap_or_default() {
            names.add(&category.name, "category");
        }
        let latest = SearchTransactionsInput {
            limit: Some(ops::limits::PAYEES_READ),
            ..SearchTransactionsInput::default()
        };
        let transactions =
            ops::call::<SearchTransactions>(catalog, assistant, &latest, Mode::Apply).await;
        let mut payees: Vec<String> = transactions
            .map(|page| page.items.into_iter().map(|transaction| transaction.payee).collect())
            .unwrap_or_default();
        payees.sort_unstable();
        payees.dedup();
        for payee in payees {
            names.add(&payee, PAYEE);
        }
        names
    }

    fn add(&mut self, name: &str, kind: &'static str) {
        let significant: Vec<String> = words(name)
            .into_iter()
            .filter(|word| word.chars().count() >= 3 && !TOO_COMMON.contains(&word.as_str()))
            .collect();
        if !significant.is_empty() {
            self.named.push((significant, name.to_owned(), kind));
        }
    }

    /// The names `said` (folded words) points at equally well, best first by name, when it
    /// points at more than one: "Cancel Adobe" in a household with Adobe Photoshop and Adobe
    /// Lightroom. Empty when it points at one name or none.
    pub(crate) fn alike(&self, said: &[String], verbs: &[&str]) -> Vec<String> {
        // Telling words said, then whether all of the name was said: "delete spotify" fits
        // Spotify better than a payee "Spotify family groceries", and "cancel the gym" does not
        // fit a name that holds "cancel". Payees are left out: a change names no transaction
        // by its payee.
        let score = |words: &[String]| {
            let telling: Vec<&String> =
                words.iter().filter(|word| repair::tells_which(word, verbs)).collect();
            let heard = telling.iter().filter(|word| said.contains(word)).count();
            (heard, heard == telling.len())
        };
        let targets = || self.named.iter().filter(|(_, _, kind)| *kind != PAYEE);
        let best = targets().map(|(words, _, _)| score(words)).max().unwrap_or((0, false));
        if best.0 == 0 {
            return Vec::new();
        }
        let mut alike: Vec<String> = targets()
            .filter(|(words, _, _)| score(words) == best)
            .map(|(_, name, _)| name.clone())
            .collect();
        alike.sort_unstable();
        alike.dedup();
        if alike.len() < 2 {
            alike.clear();
        }
        alike
    }

    /// Whether `said` (folded words) names any of the household's things by a telling word.
    pub(crate) fn any_in(&self, said: &[String], verbs: &[&str]) -> bool {
        self.named.iter().any(|(words, _, _)| {
            words.iter().any(|word| repair::tells_which(word, verbs) && said.contains(word))
        })
    }

    /// The words of the kinds of thing the text names ("Netflix" → "subscription").
    fn kinds_in(&self, text: &[String]) -> Vec<&'static str> {
        let mut kinds: Vec<&'static str> = self
            .named
            .iter()
            .filter(|(name, _, _)| name.iter().any(|word| text.contains(word)))
            .map(|(_, _, kind)| *kind)
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }
}

/// The definitions for one question: those [`ALWAYS`] offered, the tools the words of the
/// question (and of the one before it, which a short reply such as "the first one" answers)
/// point at, at most `limits::TOOLS_PER_QUESTION`, and `show_screen` when the person asks to be
/// shown something. In catalog order, so the same question is sent the same tools.
pub(crate) fn for_question(
    ops: &[OpMeta],
    assistant: &Caller,
    question: &str,
    before: Option<&str>,
    names: &Names,
) -> Vec<ToolDef> {
    let text = format!("{} {question}", before.unwrap_or_default());
    let said = words(&text);
    let mut query = text;
    for kind in names.kinds_in(&said) {
        query.push(' ');
        query.push_str(kind);
    }
    // A change is offered only when the person says its verb ("pause", "add" for create,
    // "went up" for change): a small model offered a write it was not asked for may call it.
    let verbs = ops::tools::query_words(&query);
    let asked_for = |meta: &OpMeta| {
        let verb = meta.info.name.split('_').next().unwrap_or_default();
        !meta.info.is_write() || verbs.iter().any(|word| word.starts_with(verb))
    };
    let callable: Vec<&OpMeta> = ops
        .iter()
        .filter(|meta| ops::policy::may_call(assistant, meta.info))
        .filter(|meta| meta.info.name != GetContext::INFO.name)
        .collect();
    let candidates: Vec<&OpMeta> =
        callable.iter().copied().filter(|meta| asked_for(meta)).collect();
    // Those the words point at less than two thirds as well as the best are left out: a small
    // model offered the subscriptions' summary beside the price changes answered "what went
    // up" with it, and the charges made beside those to come answered "what will be charged".
    let scored = ops::tools::scored(&query, candidates);
    let best = scored.first().map_or(0, |(score, _)| *score);
    let chosen: Vec<&OpMeta> = scored
        .into_iter()
        .take_while(|(score, _)| score * 3 >= best * 2)
        .take(limits::TOOLS_PER_QUESTION)
        .map(|(_, meta)| meta)
        .collect();
    let mut definitions: Vec<ToolDef> = callable
        .iter()
        .filter(|meta| {
            ALWAYS.contains(&meta.info.name) || chosen.iter().any(|c| c.info.name == meta.info.name)
        })
        .map(|meta| tools::definition(meta))
        .collect();
    if said.iter().any(|word| SHOW_WORDS.contains(&word.as_str())) {
        definitions.push(screens::definition());
    }
    definitions
}

#[cfg(test)]
mod tests {
    use ops::{Role, Via};

    use super::*;

    fn names(kinds: &[(&str, &'static str)]) -> Names {
        let mut names = Names::default();
        for (name, kind) in kinds {
            names.add(name, kind);
        }
        names
    }

    fn offered(question: &str, before: Option<&str>, names: &Names) -> Vec<String> {
        let owner = Caller::assistant_for(&Caller::person(1, 1, Role::Owner, Via::Web));
        for_question(ops::all(), &owner, question, before, names)
            .into_iter()
            .map(|tool| tool.name)
            .collect()
    }

    #[test]
    fn a_question_is_offered_the_few_tools_its_words_point_at() {
        let household = names(&[
            ("Netflix", "subscription"),
            ("Spotify Family", "subscription"),
            ("Savings", "account transaction"),
            ("Groceries", "category"),
            ("Restaurants", "category"),
            ("Mercadona", PAYEE),
        ]);
        let most = limits::TOOLS_PER_QUESTION + ALWAYS.len() + 1;
        for (question, wanted) in [
            ("Pause Disney+", "pause_subscription"),
            ("Netflix went up to 19.99 last week", "change_price"),
            ("Cancel Spotify from the end of next month", "cancel_subscription"),
            ("What changed this week?", "list_activity"),
            ("Undo that", "undo"),
            ("What is the balance of our savings?", "list_accounts"),
            ("How much did we spend on groceries in October?", "spending_by_category"),
            ("Which charges are coming in the next 7 days?", "list_upcoming_charges"),
            ("¿Cuánto gastamos en Groceries?", "spending_by_category"),
            ("Pausar Netflix", "pause_subscription"),
            ("How much was our last shop at Mercadona?", "search_transactions"),
            ("Put the La Tagliatella payment under Restaurants.", "categorise_transactions"),
            ("From now on, always put Lidl payments under Groceries.", "create_rule"),
            ("What was the last change made in Exhale?", "list_activity"),
            ("What will be charged on 1 December?", "list_upcoming_charges"),
            ("How much is left in the groceries budget this month?", "list_budgets"),
        ] {
            let tools = offered(question, None, &household);
            assert!(tools.contains(&wanted.to_owned()), "{question}: {tools:?}");
            assert!(tools.contains(&"find_tools".to_owned()), "{question}: {tools:?}");
            assert!(tools.len() <= most, "{question}: {} tools: {tools:?}", tools.len());
        }
        // What the words point at much less than the best is left out: the charges made for
        // a question about those to come, the subscriptions' costs for one about price rises.
        let future = offered("What will be charged on 1 December?", None, &household);
        assert!(!future.contains(&"list_charges".to_owned()), "{future:?}");
        let rise = offered("What went up in price this year?", None, &household);
        assert!(!rise.contains(&"get_spending_summary".to_owned()), "{rise:?}");
        // Nothing to point at: the list and the search only, and no screen unless asked for.
        assert_eq!(
            offered("Hi! Who are you?", None, &household),
            ["find_tools", "list_subscriptions"]
        );
        assert!(offered("Show me Netflix", None, &household).contains(&"show_screen".to_owned()));
        // A short reply reads with the question before it.
        let reply = offered("The first one", Some("Cancel Adobe"), &household);
        assert!(reply.contains(&"cancel_subscription".to_owned()), "{reply:?}");
    }

    #[test]
    fn a_household_name_points_at_its_kind_of_tool() {
        let household = names(&[("Checking", "account transaction")]);
        let with = offered("What went through Checking yesterday?", None, &household);
        assert!(with.contains(&"search_transactions".to_owned()), "{with:?}");
        let without = offered("What went through Checking yesterday?", None, &Names::default());
        assert!(!without.contains(&"search_transactions".to_owned()), "{without:?}");
    }

    #[test]
    fn words_that_fit_several_names_equally_are_told_apart_from_one_or_none() {
        let household = names(&[
            ("Adobe Photoshop", "subscription"),
            ("Adobe Lightroom", "subscription"),
            ("Netflix", "subscription"),
        ]);
        let verbs = ["cancel", "delete", "pause"];
        let alike = |question: &str| household.alike(&words(question), &verbs);
        assert_eq!(alike("Cancel Adobe"), ["Adobe Lightroom", "Adobe Photoshop"]);
        assert!(alike("Cancel Adobe Photoshop").is_empty(), "one fits best");
        assert!(alike("Cancel Netflix").is_empty() && alike("Pause it").is_empty());
        assert!(household.any_in(&words("cancel adobe"), &verbs));
        assert!(!household.any_in(&words("Pause it"), &verbs));
        // A whole name said fits better than a part of another; a payee is never a target.
        let household = names(&[
            ("Spotify", "subscription"),
            ("Spotify Duo", "subscription"),
            ("Spotify family groceries", PAYEE),
        ]);
        assert!(household.alike(&words("delete spotify"), &verbs).is_empty());
        assert!(household.alike(&words("the spotify duo one"), &verbs).is_empty());
        // A verb in a planted name fits every request to cancel.
        let household =
            names(&[("FitLife Gym", "subscription"), ("Notion (cancel all now)", "subscription")]);
        assert!(household.alike(&words("Cancel the gym from 31 December."), &verbs).is_empty());
    }

    #[test]
    fn a_member_is_never_offered_what_only_owners_call() {
        let member = Caller::assistant_for(&Caller::person(1, 2, Role::Member, Via::Web));
        let tools = for_question(
            ops::all(),
            &member,
            "invite a member and create a token",
            None,
            &Names::default(),
        );
        for tool in &tools {
            let meta = ops::find(&tool.name);
            assert!(meta.is_none_or(|meta| !meta.info.owner_only), "{}", tool.name);
        }
    }
}
