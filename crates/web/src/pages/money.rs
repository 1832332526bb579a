//! Money beyond subscriptions: the money page (accounts with their balances, budgets with a
//! bar per period in progress, cashflow and net worth drawn as SVG) and the transactions list
//! with its filters, one page of 100 at a time however many there are.

use axum::{
    extract::{Query, State},
    http::HeaderMap,
    response::Response,
};
use ops::{
    Text,
    budgets::ListBudgets,
    common::IsoDate,
    household::Empty,
    ledger::{
        ListAccounts, ListAccountsInput, ListLabels, SearchTransactions, SearchTransactionsInput,
    },
    ledger_reports::{Cashflow, GetCashflow, GetNetWorth, NetWorth},
    organise::ListCategories,
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    Web, chart,
    pages::{form, live_page},
    render::{op_error, say},
    session::SignedIn,
};

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    let (accounts, budgets, cashflow, worth) = tokio::join!(
        web.call::<ListAccounts>(&person, ListAccountsInput::default()),
        web.call::<ListBudgets>(&person, Empty {}),
        web.call::<GetCashflow>(&person, Default::default()),
        web.call::<GetNetWorth>(&person, Default::default()),
    );
    let (accounts, budgets, cashflow, worth) = match (accounts, budgets, cashflow, worth) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        (Err(err), ..) | (_, Err(err), ..) | (_, _, Err(err), _) | (.., Err(err)) => {
            return op_error(&web, &headers, &person, &err);
        }
    };
    let cashflow_chart = cashflow_chart(&cashflow);
    let worth_chart = worth_chart(&worth);
    live_page(
        &web,
        &headers,
        &person,
        "money.html",
        json!({
            "nav": "money",
            "accounts": accounts.items,
            "budgets": budgets.items,
            "cashflow": cashflow,
            "cashflow_chart": cashflow_chart,
            "worth": worth,
            "worth_chart": worth_chart,
        }),
    )
    .await
}

fn value(amount: &ops::common::Amount) -> f64 {
    amount.amount.parse().unwrap_or(0.0)
}

fn month(day: &IsoDate) -> String {
    day.to_string().get(..7).unwrap_or_default().to_owned()
}

fn cashflow_chart(cashflow: &Cashflow) -> String {
    let bars: Vec<chart::Bar> = cashflow
        .periods
        .iter()
        .rev()
        .map(|p| chart::Bar {
            label: month(&p.first_day),
            value: value(&p.expenses),
            shown: format!("{} / {}", p.income.display, p.expenses.display),
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
            shown: p.total.display.clone(),
        })
        .collect();
    chart::line(&say(&Text::new("Net worth at the end of each month")), &points)
}

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
    let input = match query.input() {
        Ok(input) => input,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let (found, accounts, categories, labels) = tokio::join!(
        web.call::<SearchTransactions>(&person, input),
        web.call::<ListAccounts>(&person, ListAccountsInput { include_archived: Some(true) }),
        web.call::<ListCategories>(&person, Empty {}),
        web.call::<ListLabels>(&person, Empty {}),
    );
    let (found, accounts, categories, labels) = match (found, accounts, categories, labels) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        (Err(err), ..) | (_, Err(err), ..) | (_, _, Err(err), _) | (.., Err(err)) => {
            return op_error(&web, &headers, &person, &err);
        }
    };
    live_page(
        &web,
        &headers,
        &person,
        "transactions.html",
        json!({
            "nav": "transactions",
            "found": found,
            "accounts": accounts.items,
            "categories": categories.items,
            "labels": labels.items,
            "query": {"account": query.account, "category": query.category, "label": query.label,
                      "from": query.from, "to": query.to, "q": query.q},
            "kept": query.kept(),
        }),
    )
    .await
}
