//! Money beyond subscriptions: the money page (accounts with their balances, budgets with a
//! bar per period in progress, rules, cashflow and net worth drawn as SVG) and the transactions list
//! with its filters, one page of 100 at a time however many there are. Their forms post to
//! `money_actions.rs`, which draws a page again here when an op refuses a form.

use axum::{
    extract::{Query, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    OpError, Text,
    accounts::SessionCaller,
    budgets::{BudgetPeriod, ListBudgets},
    entities::AccountKind,
    household::{Empty, GetHousehold},
    ledger::{
        ListAccounts, ListAccountsInput, ListLabels, SearchTransactions, SearchTransactionsInput,
    },
    ledger_reports::{Cashflow, GetCashflow, GetNetWorth, NetWorth},
    organise::ListCategories,
    resolve::IsoDate,
    rules::{ListRules, Rule},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    chart,
    pages::{form, live_page},
    reader::say,
    render::{op_error, page_with_extra},
    session::SignedIn,
    state::Web,
};

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    match money_data(&web, &person).await {
        Ok(data) => live_page(&web, &headers, &person, "money.html", data).await,
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// What the money page shows, and what its forms choose from.
async fn money_data(web: &Web, person: &SessionCaller) -> Result<Value, OpError> {
    let (accounts, budgets, rules, cashflow, worth, categories, labels, household, banks) = tokio::join!(
        web.call::<ListAccounts>(person, ListAccountsInput { include_archived: Some(true) }),
        web.call::<ListBudgets>(person, Empty {}),
        web.call::<ListRules>(person, Empty {}),
        web.call::<GetCashflow>(person, Default::default()),
        web.call::<GetNetWorth>(person, Default::default()),
        web.call::<ListCategories>(person, Empty {}),
        web.call::<ListLabels>(person, Empty {}),
        web.call::<GetHousehold>(person, Empty {}),
        web.call::<ops::banks::ListBankConnections>(person, Empty {}),
    );
    let (cashflow, worth) = (cashflow?, worth?);
    Ok(json!({
        "nav": "money",
        "accounts": accounts?.items,
        "bank_connections": banks?.items,
        "budgets": budgets?.items,
        "rules": rules?.items.iter().map(|rule| {
            let mut shown = json!(rule);
            shown["summary"] = json!(rule_summary(rule));
            shown
        }).collect::<Vec<_>>(),
        "cashflow_chart": cashflow_chart(&cashflow),
        "cashflow": cashflow,
        "worth_chart": worth_chart(&worth),
        "worth": worth,
        "categories": categories?.items,
        "labels": labels?.items,
        "currency": household?.currency,
        "kinds": AccountKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "periods": BudgetPeriod::ALL.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
    }))
}

/// The page a money form came from, drawn again with `status` and the op's message at the
/// form (`extra` is `{"errors": {form: message}}`).
pub(crate) async fn page_again(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    back: &Back,
    status: StatusCode,
    extra: Value,
) -> Response {
    let (name, data) = match back {
        Back::Money => ("money.html", money_data(web, person).await),
        Back::Transactions(query) => {
            ("transactions.html", transactions_data(web, person, query).await)
        }
    };
    match data {
        Ok(data) => page_with_extra(web, headers, person, status, name, data, extra),
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// What a rule does, as a sentence: "When payee contains “cafe”, amount at most -1: sets the
/// category Eating out, adds the labels holiday".
fn rule_summary(rule: &Rule) -> String {
    let reader = crate::reader::reader();
    let mut conditions = Vec::new();
    if let Some(text) = &rule.payee_contains {
        conditions.push(say(&Text::new("payee contains “{text}”").with("text", text)));
    }
    if let Some(text) = &rule.description_contains {
        conditions.push(say(&Text::new("description contains “{text}”").with("text", text)));
    }
    if let Some(min) = &rule.min_amount {
        let amount = i18n::format::number(reader, min);
        conditions.push(say(&Text::new("amount at least {amount}").with("amount", amount)));
    }
    if let Some(max) = &rule.max_amount {
        let amount = i18n::format::number(reader, max);
        conditions.push(say(&Text::new("amount at most {amount}").with("amount", amount)));
    }
    if let Some(account) = &rule.account {
        conditions.push(say(&Text::new("on the account {name}").with("name", &account.name)));
    }
    let mut actions = Vec::new();
    if let Some(category) = &rule.set_category {
        actions.push(say(&Text::new("sets the category {name}").with("name", &category.name)));
    }
    if !rule.add_labels.is_empty() {
        let names: Vec<&str> = rule.add_labels.iter().map(|l| l.name.as_str()).collect();
        let text = Text::new("adds {count, plural, one {the label} other {the labels}} {names}")
            .with("count", names.len())
            .with("names", names.join(", "));
        actions.push(say(&text));
    }
    say(&Text::new("When {conditions}: {actions}")
        .with("conditions", conditions.join(", "))
        .with("actions", actions.join(", ")))
}

fn value(amount: &ops::common::Amount) -> f64 {
    amount.amount.to_f64()
}

/// A chart's month, as the reader's language writes it (`Dec 2026`, `dic 2026`).
fn month(day: &IsoDate) -> String {
    i18n::format::month(crate::reader::reader(), day.date())
}

fn cashflow_chart(cashflow: &Cashflow) -> String {
    let bars: Vec<chart::Bar> = cashflow
        .periods
        .iter()
        .rev()
        .map(|p| chart::Bar {
            label: month(&p.first_day),
            value: value(&p.expenses),
            shown: format!(
                "{} / {}",
                crate::reader::amount(&p.income),
                crate::reader::amount(&p.expenses)
            ),
        })
        .collect();
    chart::bars(&say(&Text::new("Money in and out by month (in / out)")), &bars)
}

fn worth_chart(worth: &NetWorth) -> String {
    let points: Vec<chart::Point> = worth
        .points
        .iter()
        .map(|p| chart::Point {
            label: month(&p.on),
            value: value(&p.total),
            shown: crate::reader::amount(&p.total),
        })
        .collect();
    chart::line(&say(&Text::new("Net worth at the end of each month")), &points)
}

/// The transactions list's filters and page, as its address holds them.
#[derive(Deserialize, Default)]
pub(crate) struct TransactionQuery {
    #[serde(default)]
    account: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    q: String,
    cursor: Option<String>,
}

impl TransactionQuery {
    fn input(&self) -> Result<SearchTransactionsInput, ops::OpError> {
        Ok(SearchTransactionsInput {
            // An id that is not a number matches nothing, as an unknown id does.
            account_id: form::text(&self.account)
                .map(|id| form::id(&id).unwrap_or(ops::resolve::AccountId(i64::MAX))),
            category_id: match self.category.as_str() {
                "" | "none" => None,
                id => Some(form::id(id).unwrap_or(ops::resolve::CategoryId(i64::MAX))),
            },
            uncategorised: (self.category == "none").then_some(true),
            label_ids: form::text(&self.label)
                .map(|id| form::id(&id).unwrap_or(ops::resolve::LabelId(i64::MAX)))
                .into_iter()
                .collect(),
            from: form::parsed::<IsoDate>("/from", &self.from)?,
            to: form::parsed::<IsoDate>("/to", &self.to)?,
            text: form::text(&self.q),
            limit: Some(100),
            cursor: self.cursor.clone(),
            ..Default::default()
        })
    }

    /// The query a form on the page posts back as `view` (see [`Self::link`]): its filters and
    /// its page.
    fn view(&self) -> String {
        let cursor = self
            .cursor
            .as_deref()
            .map(|cursor| format!("cursor={}", crate::session::encode(cursor)));
        [Some(self.kept()), cursor]
            .into_iter()
            .flatten()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The query a form posted as `view`; anything unreadable is the unfiltered first page.
    pub(crate) fn from_view(view: &str) -> Self {
        axum::http::Uri::try_from(format!("/transactions?{view}"))
            .ok()
            .and_then(|uri| Query::<Self>::try_from_uri(&uri).ok())
            .map(|Query(query)| query)
            .unwrap_or_default()
    }

    /// The address of this page of the list, written afresh from what was read, so nothing
    /// posted goes into a redirect as it came.
    pub(crate) fn link(&self) -> String {
        match self.view() {
            view if view.is_empty() => "/transactions".into(),
            view => format!("/transactions?{view}"),
        }
    }

    /// The filters as a query string, for the next page's link.
    fn kept(&self) -> String {
        let pairs = [
            ("account", &self.account),
            ("category", &self.category),
            ("label", &self.label),
            ("from", &self.from),
            ("to", &self.to),
            ("q", &self.q),
        ];
        pairs
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| format!("{name}={}", crate::session::encode(value)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

pub(crate) async fn transactions(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Query(query): Query<TransactionQuery>,
) -> Response {
    match transactions_data(&web, &person, &query).await {
        Ok(data) => live_page(&web, &headers, &person, "transactions.html", data).await,
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// What the transactions page shows for `query`, and what its forms choose from.
async fn transactions_data(
    web: &Web,
    person: &SessionCaller,
    query: &TransactionQuery,
) -> Result<Value, OpError> {
    let input = query.input()?;
    let (found, accounts, categories, labels) = tokio::join!(
        web.call::<SearchTransactions>(person, input),
        web.call::<ListAccounts>(person, ListAccountsInput { include_archived: Some(true) }),
        web.call::<ListCategories>(person, Empty {}),
        web.call::<ListLabels>(person, Empty {}),
    );
    Ok(json!({
        "nav": "transactions",
        "found": found?,
        "accounts": accounts?.items,
        "categories": categories?.items,
        "labels": labels?.items,
        "query": {"account": query.account, "category": query.category, "label": query.label,
                  "from": query.from, "to": query.to, "q": query.q},
        "kept": query.kept(),
        "view": query.view(),
    }))
}

/// Which page a form came from, and so where it goes back to: the transactions list with the
/// filters and page it showed.
pub(crate) enum Back {
    Money,
    Transactions(TransactionQuery),
}

impl Back {
    pub(crate) fn path(&self) -> String {
        match self {
            Self::Money => "/money".into(),
            Self::Transactions(query) => query.link(),
        }
    }
}
