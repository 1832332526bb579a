//! The forms of the money pages: accounts (add, record a balance, archive, delete), labels,
//! budgets (add, delete), rules (add, run over past transactions, delete) and transactions (add
//! one; categorise and label the ticked ones). Each posts to `/money/do/{op}` with the op's
//! fields and goes back to the page it came from (`back`); a destructive op first shows its
//! confirmation, built from its dry run, and running a rule first shows its own preview (what
//! it matches, a sample of what it changes). The pages themselves are drawn in `money.rs`.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    Op, OpError, Text,
    accounts::SessionCaller,
    budgets::{BudgetPeriod, CreateBudget, CreateBudgetInput, DeleteBudget},
    common::{Change, IdInput, Patch, RecordId},
    entities::{AccountKind, ChangeAction, EntityKind, Visibility},
    ledger::{
        CategoriseTransactions, CategoriseTransactionsInput, CreateAccount, CreateAccountInput,
        CreateLabel, CreateLabelInput, CreateTransaction, CreateTransactionInput, DeleteAccount,
        RecordBalance, RecordBalanceInput, UpdateAccount, UpdateAccountInput,
    },
    resolve::{CategoryId, IsoDate, LabelId},
    rules::{ApplyRule, ApplyRuleInput, CreateRule, CreateRuleInput, DeleteRule, RuleFields},
};

use crate::{
    pages::{
        Confirm, apply_form, confirm_page, confirmation, confirmed, form,
        money::{self, Back},
        refused_form,
    },
    render::redirect_with_notice,
    session::Posted,
    state::Web,
};

/// A posted form: its fields in order, a name repeated for each ticked box or chosen option.
struct Fields(Vec<(String, String)>);

impl Fields {
    /// The first value of `name`, trimmed; empty when absent.
    fn one(&self, name: &str) -> &str {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim()).unwrap_or_default()
    }

    /// Every id posted under `name` (ticked boxes, a multiple select).
    fn ids<T: From<i64>>(&self, name: &str) -> Vec<T> {
        self.0.iter().filter(|(k, _)| k == name).filter_map(|(_, v)| form::id(v)).collect()
    }

    /// A checkbox: ticked or not.
    fn ticked(&self, name: &str) -> bool {
        !self.one(name).is_empty()
    }
}

pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(op): Path<String>,
    Posted { person, form: fields }: Posted<Vec<(String, String)>>,
) -> Response {
    let fields = Fields(fields);
    let back = if fields.one("back") == "transactions" {
        Back::Transactions(money::TransactionQuery::from_view(fields.one("view")))
    } else {
        Back::Money
    };
    let on =
        Posting { web: &web, headers: &headers, person: &person, fields: &fields, op: &op, back };
    let id = || form::id::<i64>(fields.one("id")).unwrap_or_default();
    match op.as_str() {
        "create_account" => {
            let input = (|| {
                Ok(CreateAccountInput {
                    name: fields.one("name").to_owned(),
                    kind: form::required::<AccountKind>("/kind", fields.one("kind"))?,
                    currency: form::text(fields.one("currency")),
                    visibility: form::parsed::<Visibility>(
                        "/visibility",
                        fields.one("visibility"),
                    )?,
                    balance: form::text(fields.one("balance")).map(|b| form::amount(&b)),
                })
            })();
            on.apply::<CreateAccount>(input, Text::new("Added the account.")).await
        }
        "record_balance" => {
            let input = (|| {
                Ok(RecordBalanceInput {
                    account_id: id().into(),
                    balance: form::amount(fields.one("balance")),
                    on: form::parsed::<IsoDate>("/on", fields.one("on"))?,
                })
            })();
            on.apply::<RecordBalance>(input, Text::new("Recorded the balance.")).await
        }
        "update_account" => {
            let input = UpdateAccountInput {
                id: id().into(),
                name: None,
                kind: None,
                visibility: None,
                archived: Some(fields.one("archived") == "true"),
            };
            on.apply::<UpdateAccount>(Ok(input), Text::new("Updated the account.")).await
        }
        "delete_account" => {
            on.confirm_or_apply::<DeleteAccount>(
                IdInput { id: id().into() },
                Text::new("Delete this account?"),
                Text::new("Its recorded balances go with it. You can undo this from Activity."),
                Text::new("Deleted the account."),
            )
            .await
        }
        "create_label" => {
            let input = CreateLabelInput { name: fields.one("name").to_owned(), colour: None };
            on.apply::<CreateLabel>(Ok(input), Text::new("Added the label.")).await
        }
        "create_budget" => {
            let input = (|| {
                Ok(CreateBudgetInput {
                    name: fields.one("name").to_owned(),
                    amount: form::amount(fields.one("amount")),
                    period: form::required::<BudgetPeriod>("/period", fields.one("period"))?,
                    start_day: start_day(fields.one("start_day"))?,
                    starts_on: form::parsed::<IsoDate>("/starts_on", fields.one("starts_on"))?,
                    category_ids: fields.ids("category_ids"),
                    label_ids: fields.ids("label_ids"),
                    catch_all: fields.ticked("catch_all").then_some(true),
                    rollover: fields.ticked("rollover").then_some(true),
                })
            })();
            on.apply::<CreateBudget>(input, Text::new("Added the budget.")).await
        }
        "delete_budget" => {
            on.confirm_or_apply::<DeleteBudget>(
                IdInput { id: id().into() },
                Text::new("Delete this budget?"),
                Text::new("Transactions stay as they are. You can undo this from Activity."),
                Text::new("Deleted the budget."),
            )
            .await
        }
        "create_rule" => {
            let input = CreateRuleInput {
                name: fields.one("name").to_owned(),
                fields: RuleFields {
                    payee_contains: form::text(fields.one("payee_contains")),
                    description_contains: form::text(fields.one("description_contains")),
                    min_amount: form::text(fields.one("min_amount")).map(|m| form::amount(&m)),
                    max_amount: form::text(fields.one("max_amount")).map(|m| form::amount(&m)),
                    account_id: form::id(fields.one("account_id")),
                    set_category_id: form::id(fields.one("set_category_id")),
                    add_label_ids: fields.ids("add_label_ids"),
                },
            };
            on.apply::<CreateRule>(
                Ok(input),
                Text::new("Added the rule. Imports run it from now on."),
            )
            .await
        }
        "apply_rule" => on.run_rule(id()).await,
        "delete_rule" => {
            on.confirm_or_apply::<DeleteRule>(
                IdInput { id: id().into() },
                Text::new("Delete this rule?"),
                Text::new(
                    "Transactions it changed stay as they are. You can undo this from Activity.",
                ),
                Text::new("Deleted the rule."),
            )
            .await
        }
        "create_transaction" => {
            let input = (|| {
                Ok(CreateTransactionInput {
                    account_id: form::id(fields.one("account_id")).ok_or_else(|| {
                        OpError::invalid("/account_id", Text::new("Choose the account."))
                    })?,
                    on: form::required::<IsoDate>("/on", fields.one("on"))?,
                    amount: form::amount(fields.one("amount")),
                    payee: fields.one("payee").to_owned(),
                    description: None,
                    notes: form::text(fields.one("notes")),
                    category_id: form::id(fields.one("category_id")),
                    label_ids: fields.ids("label_ids"),
                })
            })();
            on.apply::<CreateTransaction>(input, Text::new("Added the transaction.")).await
        }
        "categorise_transactions" => {
            let category_id = match fields.one("category_id") {
                "" => Patch::Keep,
                "none" => Patch::Clear,
                id => form::id::<CategoryId>(id).map_or(Patch::Keep, Patch::Set),
            };
            let input = CategoriseTransactionsInput {
                ids: fields.ids::<i64>("ids").into_iter().filter_map(RecordId::new).collect(),
                category_id,
                add_label_ids: fields.ids::<LabelId>("add_label_id"),
                remove_label_ids: Vec::new(),
            };
            on.apply::<CategoriseTransactions>(
                Ok(input),
                Text::new("Changed the ticked transactions."),
            )
            .await
        }
        _ => web.templates.refusal(StatusCode::NOT_FOUND, &Text::new("There is no such action.")),
    }
}

/// A budget's start day as typed: empty for the period's usual start.
fn start_day(value: &str) -> Result<Option<i64>, OpError> {
    form::text(value)
        .map(|day| {
            day.parse().map_err(|_| {
                OpError::invalid(
                    "/start_day",
                    Text::new("Write the start day as a number, such as 1 or 15."),
                )
            })
        })
        .transpose()
}

/// One posted form and what answering it needs.
struct Posting<'a> {
    web: &'a Web,
    headers: &'a HeaderMap,
    person: &'a SessionCaller,
    fields: &'a Fields,
    op: &'a str,
    back: Back,
}

impl Posting<'_> {
    /// Applies `O` and goes back with `done`, or draws the page again with the op's message
    /// at the form (its `form` field names which).
    async fn apply<O: Op>(&self, input: Result<O::Input, OpError>, done: Text) -> Response {
        let (web, headers, person, back) = (self.web, self.headers, self.person, &self.back);
        // The boxes that were ticked stay ticked on the page drawn again.
        let ticked: Vec<i64> = self.fields.ids("ids");
        let again = |status, mut extra: serde_json::Value| {
            extra["ticked"] = serde_json::json!(ticked);
            money::page_again(web, headers, person, back, status, extra)
        };
        let form = self.fields.one("form");
        let form = if form.is_empty() { self.op } else { form };
        apply_form::<O, _, _>(web, headers, person, input, &back.path(), form, done, again).await
    }

    /// Runs a rule over past transactions: first its preview (how many it matches and changes,
    /// with a sample as they are now), which posts back with `confirmed`; then applied.
    async fn run_rule(&self, id: i64) -> Response {
        let (web, headers, person, back) = (self.web, self.headers, self.person, &self.back);
        let apply = (self.fields.one("confirmed") == "yes").then_some(true);
        let run = match web.call::<ApplyRule>(person, ApplyRuleInput { id: id.into(), apply }).await
        {
            Ok(run) => run,
            Err(err) => {
                let again =
                    |status, errors| money::page_again(web, headers, person, back, status, errors);
                return refused_form(web, headers, person, &err, self.op, again).await;
            }
        };
        if run.applied {
            let done = run.affected - run.remaining;
            let ran = if run.remaining > 0 {
                Text::new("The rule changed {done, plural, one {# transaction} other {# transactions}}; {remaining} are left: run it again for them. You can undo this from Activity.")
                    .with("remaining", run.remaining)
            } else {
                Text::new(
                    "The rule changed {done, plural, one {# transaction} other {# transactions}}. You can undo this from Activity.",
                )
            };
            return redirect_with_notice(web, &back.path(), &ran.with("done", done));
        }
        if run.affected == 0 {
            let nothing = Text::new(
                "The rule {name} matches {matched} of your transactions and would change none of them.",
            )
            .with("matched", run.matched)
            .with("name", &run.rule.name);
            return redirect_with_notice(web, &back.path(), &nothing);
        }
        let mut explanation = Text::new("It matches {matched} of your transactions and changes {affected}. You can undo this from Activity. Some of them, as they are now:")
            .with("matched", run.matched)
            .with("affected", run.affected);
        if run.remaining > 0 {
            explanation = Text::new("It matches {matched} of your transactions and changes {affected}: {done} now, the rest when you run it again. You can undo this from Activity. Some of them, as they are now:")
                .with("matched", run.matched)
                .with("affected", run.affected)
                .with("done", run.affected - run.remaining);
        }
        let sample: Vec<Change> = run
            .sample
            .iter()
            .map(|t| Change {
                audit_id: None,
                entity: EntityKind::Transaction,
                entity_id: t.id,
                action: ChangeAction::Updated,
                summary: format!(
                    "{} · {} · {}",
                    crate::reader::day(t.on),
                    t.payee,
                    crate::reader::amount(&t.amount)
                ),
            })
            .collect();
        let confirm = Confirm {
            nav: "money",
            title: Text::new("Run the rule {name} over past transactions?")
                .with("name", &run.rule.name),
            explanation,
            action: "/money/do/apply_rule".into(),
            confirm_label: Text::new("Yes, run it"),
            cancel: back.path(),
            hidden: confirmed(self.fields.0.iter().cloned()),
        };
        confirmation(web, headers, person, confirm, &sample)
    }

    /// A destructive op: its confirmation page first, from the dry run, which posts the same
    /// fields back with `confirmed`; then applied.
    async fn confirm_or_apply<O>(
        &self,
        input: O::Input,
        title: Text,
        explanation: Text,
        done: Text,
    ) -> Response
    where
        O: Op,
    {
        if self.fields.one("confirmed") == "yes" {
            return self.apply::<O>(Ok(input), done).await;
        }
        let hidden = confirmed(self.fields.0.iter().cloned());
        confirm_page::<O>(self.web, self.headers, self.person, input, |_| Confirm {
            nav: "money",
            title,
            explanation,
            action: format!("/money/do/{}", self.op),
            confirm_label: Text::new("Yes, delete it"),
            cancel: self.back.path(),
            hidden,
        })
        .await
    }
}
