//! The forms of the money pages: accounts (add, record a balance, archive, delete), labels,
//! budgets (add, delete), rules (add, run over past transactions, delete) and transactions (add
//! one; categorise and label the ticked ones). Each form is an `Action` with a route of its
//! own, `/money/do/{op}`, and goes back to the page it came from (`back`); a destructive op
//! first shows its confirmation, built from its dry run, and running a rule first shows its own preview (what
//! it matches, a sample of what it changes). The pages themselves are drawn in `money.rs`.

use axum::{Router, extract::State, http::HeaderMap, response::Response, routing::post};
use ops::{
    Op, OpError, Text,
    accounts::SessionCaller,
    budgets::{BudgetPeriod, CreateBudget, CreateBudgetInput, DeleteBudget},
    common::{Change, CurrencyCode, IdInput, Patch, RecordId},
    entities::{AccountKind, ChangeAction, EntityKind, Visibility},
    ledger::{
        CategoriseTransactions, CategoriseTransactionsInput, CreateAccount, CreateAccountInput,
        CreateLabel, CreateLabelInput, CreateTransaction, CreateTransactionInput, DeleteAccount,
        RecordBalance, RecordBalanceInput, UpdateAccount, UpdateAccountInput,
    },
    resolve::{AccountId, BudgetId, CategoryId, IsoDate, LabelId, RuleId},
    rules::{ApplyRule, ApplyRuleInput, CreateRule, CreateRuleInput, DeleteRule, RuleFields},
};
use serde::Deserialize;

use crate::{
    pages::{
        Confirm, apply_form, asks_first, confirm_page, confirmation, confirmed,
        form::{self, Action, Asking},
        money::{self, Back},
        refused_form,
    },
    render::redirect_with_notice,
    session::Posted,
    state::Web,
};

/// What every money form posts besides its op's fields: where it goes back to, which form it
/// is (for the message beside it), whether the person confirmed, and the ticked boxes.
struct Fields(Vec<(String, String)>);

impl Fields {
    /// The first value of `name`, trimmed; empty when absent.
    fn one(&self, name: &str) -> &str {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim()).unwrap_or_default()
    }

    /// Every id posted under `name` (ticked boxes).
    fn ids(&self, name: &str) -> Vec<i64> {
        self.0.iter().filter(|(k, _)| k == name).filter_map(|(_, v)| form::id(v)).collect()
    }

    fn back(&self) -> Back {
        if self.one("back") == "transactions" {
            Back::Transactions(money::TransactionQuery::from_view(self.one("view")))
        } else {
            Back::Money
        }
    }
}

/// The money pages' routes: one per form, each the op its form runs.
pub(crate) fn routes() -> Router<Web> {
    fn action<A: Action>(router: Router<Web>) -> Router<Web> {
        router.route(&format!("/money/do/{}", A::Op::INFO.name), post(act::<A>))
    }
    let router =
        Router::new().route(&format!("/money/do/{}", ApplyRule::INFO.name), post(run_rule));
    [
        action::<CreateAccountForm>,
        action::<RecordBalanceForm>,
        action::<ArchiveAccountForm>,
        action::<DeleteAccountForm>,
        action::<CreateLabelForm>,
        action::<CreateBudgetForm>,
        action::<DeleteBudgetForm>,
        action::<CreateRuleForm>,
        action::<DeleteRuleForm>,
        action::<CreateTransactionForm>,
        action::<CategoriseTransactionsForm>,
    ]
    .into_iter()
    .fold(router, |router, add| add(router))
}

/// Runs the op of form `A`: a destructive one shows its confirmation first; a refusal the
/// person can put right is shown beside the form, on the page it came from.
async fn act<A: Action>(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form: pairs }: Posted<Vec<(String, String)>>,
) -> Response {
    let input = form::read::<A>(&pairs).and_then(A::Input::try_from);
    let fields = Fields(pairs);
    let on = Posting {
        web: &web,
        headers: &headers,
        person: &person,
        back: fields.back(),
        fields: &fields,
        op: A::Op::INFO.name,
    };
    match input {
        Ok(input) if asks_first::<A::Op>(&input, fields.one("confirmed") == "yes") => {
            on.ask_first::<A::Op>(input, A::asking()).await
        }
        input => on.apply::<A::Op>(input, A::done()).await,
    }
}

/// The wording of a deleted thing's confirmation.
fn deleting(title: Text, explanation: Text) -> Asking {
    Asking { title, explanation, confirm_label: Text::new("Yes, delete it") }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateAccountForm {
    name: String,
    kind: String,
    currency: String,
    visibility: String,
    balance: String,
}

impl TryFrom<CreateAccountForm> for CreateAccountInput {
    type Error = OpError;
    fn try_from(form: CreateAccountForm) -> Result<Self, OpError> {
        Ok(Self {
            name: form.name,
            kind: form::required::<AccountKind>("/kind", &form.kind)?,
            currency: form::parsed::<CurrencyCode>("/currency", &form.currency)?,
            visibility: form::parsed::<Visibility>("/visibility", &form.visibility)?,
            balance: form::optional_amount("/balance", &form.balance)?,
        })
    }
}

impl Action for CreateAccountForm {
    type Op = CreateAccount;
    type Input = CreateAccountInput;
    fn done() -> Text {
        Text::new("Added the account.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RecordBalanceForm {
    id: String,
    balance: String,
    on: String,
}

impl TryFrom<RecordBalanceForm> for RecordBalanceInput {
    type Error = OpError;
    fn try_from(form: RecordBalanceForm) -> Result<Self, OpError> {
        Ok(Self {
            account_id: form::id_or_zero(&form.id),
            balance: form::amount("/balance", &form.balance)?,
            on: form::parsed::<IsoDate>("/on", &form.on)?,
        })
    }
}

impl Action for RecordBalanceForm {
    type Op = RecordBalance;
    type Input = RecordBalanceInput;
    fn done() -> Text {
        Text::new("Recorded the balance.")
    }
}

/// Archives an account, or brings it back (`update_account` with `archived` alone).
#[derive(Default, Deserialize)]
#[serde(default)]
struct ArchiveAccountForm {
    id: String,
    archived: String,
}

impl TryFrom<ArchiveAccountForm> for UpdateAccountInput {
    type Error = OpError;
    fn try_from(form: ArchiveAccountForm) -> Result<Self, OpError> {
        Ok(Self {
            id: form::id_or_zero(&form.id),
            name: None,
            kind: None,
            visibility: None,
            archived: Some(form.archived == "true"),
        })
    }
}

impl Action for ArchiveAccountForm {
    type Op = UpdateAccount;
    type Input = UpdateAccountInput;
    fn done() -> Text {
        Text::new("Updated the account.")
    }
}

/// A form that names one thing by its id, to delete it.
#[derive(Default, Deserialize)]
#[serde(default)]
struct IdForm {
    id: String,
}

struct DeleteAccountForm(IdForm);
struct DeleteBudgetForm(IdForm);
struct DeleteRuleForm(IdForm);

/// A delete form's reading: its id, into the op's input.
macro_rules! delete_form {
    ($form:ident, $input:ty) => {
        impl<'de> Deserialize<'de> for $form {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                IdForm::deserialize(d).map(Self)
            }
        }

        impl TryFrom<$form> for $input {
            type Error = OpError;
            fn try_from(form: $form) -> Result<Self, OpError> {
                Ok(IdInput { id: form::id_or_zero(&form.0.id) })
            }
        }
    };
}

delete_form!(DeleteAccountForm, IdInput<AccountId>);
delete_form!(DeleteBudgetForm, IdInput<BudgetId>);
delete_form!(DeleteRuleForm, IdInput<RuleId>);

impl Action for DeleteAccountForm {
    type Op = DeleteAccount;
    type Input = IdInput<AccountId>;
    fn done() -> Text {
        Text::new("Deleted the account.")
    }
    fn asking() -> Asking {
        deleting(
            Text::new("Delete this account?"),
            Text::new("Its recorded balances go with it. You can undo this from Activity."),
        )
    }
}

impl Action for DeleteBudgetForm {
    type Op = DeleteBudget;
    type Input = IdInput<BudgetId>;
    fn done() -> Text {
        Text::new("Deleted the budget.")
    }
    fn asking() -> Asking {
        deleting(
            Text::new("Delete this budget?"),
            Text::new("Transactions stay as they are. You can undo this from Activity."),
        )
    }
}

impl Action for DeleteRuleForm {
    type Op = DeleteRule;
    type Input = IdInput<RuleId>;
    fn done() -> Text {
        Text::new("Deleted the rule.")
    }
    fn asking() -> Asking {
        deleting(
            Text::new("Delete this rule?"),
            Text::new("Transactions it changed stay as they are. You can undo this from Activity."),
        )
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateLabelForm {
    name: String,
}

impl TryFrom<CreateLabelForm> for CreateLabelInput {
    type Error = OpError;
    fn try_from(form: CreateLabelForm) -> Result<Self, OpError> {
        Ok(Self { name: form.name, colour: None })
    }
}

impl Action for CreateLabelForm {
    type Op = CreateLabel;
    type Input = CreateLabelInput;
    fn done() -> Text {
        Text::new("Added the label.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateBudgetForm {
    name: String,
    amount: String,
    period: String,
    start_day: String,
    starts_on: String,
    #[serde(deserialize_with = "form::many")]
    category_ids: Vec<String>,
    #[serde(deserialize_with = "form::many")]
    label_ids: Vec<String>,
    catch_all: String,
    rollover: String,
}

impl TryFrom<CreateBudgetForm> for CreateBudgetInput {
    type Error = OpError;
    fn try_from(form: CreateBudgetForm) -> Result<Self, OpError> {
        Ok(Self {
            name: form.name,
            amount: form::amount("/amount", &form.amount)?,
            period: form::required::<BudgetPeriod>("/period", &form.period)?,
            start_day: start_day(&form.start_day)?,
            starts_on: form::parsed::<IsoDate>("/starts_on", &form.starts_on)?,
            category_ids: form::ids(&form.category_ids),
            label_ids: form::ids(&form.label_ids),
            catch_all: (!form.catch_all.is_empty()).then_some(true),
            rollover: (!form.rollover.is_empty()).then_some(true),
        })
    }
}

impl Action for CreateBudgetForm {
    type Op = CreateBudget;
    type Input = CreateBudgetInput;
    fn done() -> Text {
        Text::new("Added the budget.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateRuleForm {
    name: String,
    payee_contains: String,
    description_contains: String,
    min_amount: String,
    max_amount: String,
    account_id: String,
    set_category_id: String,
    #[serde(deserialize_with = "form::many")]
    add_label_ids: Vec<String>,
}

impl TryFrom<CreateRuleForm> for CreateRuleInput {
    type Error = OpError;
    fn try_from(form: CreateRuleForm) -> Result<Self, OpError> {
        Ok(Self {
            name: form.name,
            fields: RuleFields {
                payee_contains: form::text(&form.payee_contains),
                description_contains: form::text(&form.description_contains),
                min_amount: form::optional_amount("/min_amount", &form.min_amount)?,
                max_amount: form::optional_amount("/max_amount", &form.max_amount)?,
                account_id: form::id(&form.account_id),
                set_category_id: form::id(&form.set_category_id),
                add_label_ids: form::ids(&form.add_label_ids),
            },
        })
    }
}

impl Action for CreateRuleForm {
    type Op = CreateRule;
    type Input = CreateRuleInput;
    fn done() -> Text {
        Text::new("Added the rule. Imports run it from now on.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateTransactionForm {
    account_id: String,
    on: String,
    amount: String,
    payee: String,
    notes: String,
    category_id: String,
    #[serde(deserialize_with = "form::many")]
    label_ids: Vec<String>,
}

impl TryFrom<CreateTransactionForm> for CreateTransactionInput {
    type Error = OpError;
    fn try_from(form: CreateTransactionForm) -> Result<Self, OpError> {
        Ok(Self {
            account_id: form::id(&form.account_id)
                .ok_or_else(|| OpError::invalid("/account_id", Text::new("Choose the account.")))?,
            on: form::required::<IsoDate>("/on", &form.on)?,
            amount: form::amount("/amount", &form.amount)?,
            payee: form.payee,
            description: None,
            notes: form::text(&form.notes),
            category_id: form::id(&form.category_id),
            label_ids: form::ids(&form.label_ids),
        })
    }
}

impl Action for CreateTransactionForm {
    type Op = CreateTransaction;
    type Input = CreateTransactionInput;
    fn done() -> Text {
        Text::new("Added the transaction.")
    }
}

/// Categorises and labels the ticked transactions: a category (or "none" to clear it) and
/// labels to add.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CategoriseTransactionsForm {
    #[serde(deserialize_with = "form::many")]
    ids: Vec<String>,
    category_id: String,
    #[serde(deserialize_with = "form::many")]
    add_label_id: Vec<String>,
}

impl TryFrom<CategoriseTransactionsForm> for CategoriseTransactionsInput {
    type Error = OpError;
    fn try_from(form: CategoriseTransactionsForm) -> Result<Self, OpError> {
        let category_id = match form.category_id.as_str() {
            "" => Patch::Keep,
            "none" => Patch::Clear,
            id => form::id::<CategoryId>(id).map_or(Patch::Keep, Patch::Set),
        };
        Ok(Self {
            ids: form::ids::<i64>(&form.ids).into_iter().filter_map(RecordId::new).collect(),
            category_id,
            add_label_ids: form::ids::<LabelId>(&form.add_label_id),
            remove_label_ids: Vec::new(),
        })
    }
}

impl Action for CategoriseTransactionsForm {
    type Op = CategoriseTransactions;
    type Input = CategoriseTransactionsInput;
    fn done() -> Text {
        Text::new("Changed the ticked transactions.")
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
    /// The op the form runs, for the message beside it and the confirmation's post.
    op: &'static str,
    back: Back,
}

impl Posting<'_> {
    /// Applies `O` and goes back with `done`, or draws the page again with the op's message
    /// at the form (its `form` field names which).
    async fn apply<O: Op>(&self, input: Result<O::Input, OpError>, done: Text) -> Response {
        let (web, headers, person, back) = (self.web, self.headers, self.person, &self.back);
        // The boxes that were ticked stay ticked on the page drawn again.
        let ticked = self.fields.ids("ids");
        let again = |status, mut extra: serde_json::Value| {
            extra["ticked"] = serde_json::json!(ticked);
            money::page_again(web, headers, person, back, status, extra)
        };
        let form = self.fields.one("form");
        let form = if form.is_empty() { self.op } else { form };
        apply_form::<O, _, _>(web, headers, person, input, &back.path(), form, done, again).await
    }

    /// A destructive op's confirmation page, from its dry run, which posts the same fields
    /// back with `confirmed`.
    async fn ask_first<O: Op>(&self, input: O::Input, asking: Asking) -> Response {
        let hidden = confirmed(self.fields.0.iter().cloned());
        confirm_page::<O>(self.web, self.headers, self.person, input, |_| Confirm {
            nav: "money",
            title: asking.title,
            explanation: asking.explanation,
            action: format!("/money/do/{}", self.op),
            confirm_label: asking.confirm_label,
            cancel: self.back.path(),
            hidden,
        })
        .await
    }
}

/// Runs a rule over past transactions: first its preview (how many it matches and changes,
/// with a sample as they are now), which posts back with `confirmed`; then applied.
async fn run_rule(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form: pairs }: Posted<Vec<(String, String)>>,
) -> Response {
    let fields = Fields(pairs);
    let (web, headers, person, back) = (&web, &headers, &person, &fields.back());
    let apply = (fields.one("confirmed") == "yes").then_some(true);
    let input = ApplyRuleInput { id: form::id_or_zero(fields.one("id")), apply };
    let run = match web.call::<ApplyRule>(person, input).await {
        Ok(run) => run,
        Err(err) => {
            let again =
                |status, errors| money::page_again(web, headers, person, back, status, errors);
            return refused_form(web, headers, person, &err, ApplyRule::INFO.name, again).await;
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
        action: format!("/money/do/{}", ApplyRule::INFO.name),
        confirm_label: Text::new("Yes, run it"),
        cancel: back.path(),
        hidden: confirmed(fields.0.iter().cloned()),
    };
    confirmation(web, headers, person, confirm, &sample)
}
