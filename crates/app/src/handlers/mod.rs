//! One handler per op, registered by op type so the input and output types cannot drift from
//! the contract. Handlers are synchronous functions over the transaction in `Ctx`.

mod access;
mod activity;
mod assistant;
mod banks;
mod budgets;
mod channels;
mod charges;
pub(crate) mod household;
mod import;
mod ledger;
mod ledger_reports;
mod organise;
mod reports;
mod rules;
mod subscriptions;
mod tools;

use std::{collections::HashMap, sync::Arc};

use domain::Text;
use ops::{Op, OpError, op::OpInfo};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ctx::Ctx;

/// An op's handler as the invoker calls it: the input as JSON, the output encoded.
pub(crate) type Handler =
    Box<dyn Fn(&mut Ctx<'_>, Value, Encoding) -> Result<Encoded, OpError> + Send + Sync>;

/// How the caller wants an op's output: as a JSON value, or already serialised (REST sends
/// it on as text, which skips building a tree of maps for a 500-row list).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Value,
    Text,
}

pub(crate) enum Encoded {
    Value(Value),
    Text(String),
}

impl Encoded {
    pub(crate) fn into_value(self) -> Result<Value, OpError> {
        match self {
            Self::Value(value) => Ok(value),
            Self::Text(text) => serde_json::from_str(&text).map_err(|_| OpError::Internal),
        }
    }

    /// The output with one more top-level field (outputs are objects; anything else is left
    /// as it is).
    fn with_field(self, name: &str, value: Value) -> Self {
        match self {
            Self::Value(Value::Object(mut map)) => {
                map.insert(name.to_owned(), value);
                Self::Value(Value::Object(map))
            }
            Self::Text(text) if text.starts_with('{') => {
                let field = format!("{}:{value}", Value::String(name.to_owned()));
                let rest = &text[1..];
                let joiner = if rest.trim_start().starts_with('}') { "" } else { "," };
                Self::Text(format!("{{{field}{joiner}{rest}"))
            }
            other => other,
        }
    }

    pub(crate) fn into_text(self) -> Result<String, OpError> {
        match self {
            Self::Value(value) => serde_json::to_string(&value).map_err(|_| OpError::Internal),
            Self::Text(text) => Ok(text),
        }
    }
}

/// How the invoker serves an op.
#[derive(Clone)]
pub(crate) enum Route {
    /// A handler over the call's transaction.
    Handler(Arc<Handler>),
    /// `confirm_change`: the invoker applies the stored call, which runs another op's handler.
    Confirmation,
}

/// Every op's contract and route, by name, found once per call; `App::open` checks that the
/// catalog has no op without one.
pub(crate) struct Registry(HashMap<&'static str, (&'static OpInfo, Route)>);

impl Registry {
    fn add<O: Op>(&mut self, handler: fn(&mut Ctx<'_>, O::Input) -> Result<O::Output, OpError>) {
        let boxed: Handler = Box::new(move |ctx, input, encoding| {
            let (input, resolved) =
                read_input::<O::Input>(ctx.directory(O::INFO.is_write()), O::INFO.name, input)?;
            let failed = |err: serde_json::Error| {
                tracing::error!(error = %err, op = O::INFO.name, "input or output did not serialise");
                OpError::Internal
            };
            if !resolved.is_empty() {
                ctx.resolved_input = Some(serde_json::to_value(&input).map_err(failed)?);
            }
            let output = handler(ctx, input)?;
            let encoded = match encoding {
                Encoding::Value => serde_json::to_value(output).map(Encoded::Value),
                Encoding::Text => serde_json::to_string(&output).map(Encoded::Text),
            };
            let encoded = encoded.map_err(failed)?;
            if resolved.is_empty() {
                return Ok(encoded);
            }
            let resolved = serde_json::to_value(&resolved).map_err(failed)?;
            Ok(encoded.with_field(ops::resolve::RESOLVED, resolved))
        });
        self.insert::<O>(Route::Handler(Arc::new(boxed)));
    }

    fn insert<O: Op>(&mut self, route: Route) {
        // The catalog's own copy of the contract, which lives as long as the program.
        if let Some(meta) = ops::find(O::INFO.name) {
            self.0.insert(O::INFO.name, (meta.info, route));
        }
    }

    /// An op the invoker serves itself, by applying a stored confirmation.
    fn confirmation<O: Op>(&mut self) {
        self.insert::<O>(Route::Confirmation);
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.0.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// The op of this name: its contract and how it runs.
    pub(crate) fn resolve(&self, name: &str) -> Option<(&'static OpInfo, Route)> {
        self.0.get(name).cloned()
    }

    /// The contract and handler of a write applied from a stored call (a confirmation, a
    /// proposal): `None` when no op of that name has a handler.
    pub(crate) fn handled(&self, name: &str) -> Option<(&'static OpInfo, Arc<Handler>)> {
        match self.resolve(name)? {
            (info, Route::Handler(handler)) => Some((info, handler)),
            (_, Route::Confirmation) => None,
        }
    }
}

/// Deserialises the input of the op `op` within the caller's directory, so names and relative
/// dates are read (`ops::resolve`); returns the input and how its names and phrases were read.
pub(crate) fn read_input<T: DeserializeOwned>(
    directory: Box<dyn ops::resolve::Directory>,
    op: &str,
    input: Value,
) -> Result<(T, Vec<ops::resolve::Resolution>), OpError> {
    let (result, reading) = ops::resolve::within(directory, || parse_input::<T>(input));
    match result {
        Ok(input) => Ok((input, reading.resolved)),
        // A refused name or date keeps its own code and message, at the field's pointer.
        Err(err) => Err(match (reading.failure, err) {
            (
                Some(OpError::InvalidInput { message, .. }),
                OpError::InvalidInput { pointer, .. },
            ) => OpError::invalid(pointer, message),
            (Some(failure), _) => failure,
            (None, OpError::InvalidInput { pointer, message }) => match fields_of(op) {
                Some(fields) => OpError::invalid(
                    pointer,
                    Text::new("{unfit} {op} takes: {fields}.")
                        .with_text("unfit", &message)
                        .with("op", op)
                        .with("fields", fields),
                ),
                None => OpError::invalid(pointer, message),
            },
            (None, err) => err,
        }),
    }
}

/// The top-level fields of an op's input, the required ones marked, for the refusal of input
/// that does not fit it: a model calling an op through `call_tool` has not seen its schema
/// (one sent create_rule `category_ids` and no name three times, told only to check it).
fn fields_of(op: &str) -> Option<String> {
    let schema = ops::find(op)?.input_schema();
    let properties = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .keys()
        .map(|name| {
            if required.contains(&name.as_str()) {
                format!("{name} (required)")
            } else {
                name.clone()
            }
        })
        .collect();
    (!fields.is_empty()).then(|| fields.join(", "))
}

/// JSON Schema's `integer` is any whole number, `939.0` too, and some clients write every
/// number as a float: such numbers become integers, so every integer field takes them.
fn whole_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            // 2^63 is exactly representable as f64, so this range check is exact.
            if let Some(float) = number.as_f64().filter(|_| number.is_f64())
                && float.fract() == 0.0
                && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&float)
            {
                *number = serde_json::Number::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Deserialises an op's input, turning serde's complaint into `invalid_input` with a JSON
/// pointer to the field.
pub(crate) fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T, OpError> {
    let mut input = if input.is_null() { Value::Object(Default::default()) } else { input };
    whole_numbers_as_integers(&mut input);
    if !input.is_object() {
        return Err(OpError::invalid(
            "",
            Text::new("The input must be a JSON object of named fields."),
        ));
    }
    serde_path_to_error::deserialize(input).map_err(|err| {
        let mut pointer = String::new();
        for segment in err.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => {
                    pointer.push_str(&format!("/{index}"))
                }
                serde_path_to_error::Segment::Map { key } => {
                    pointer.push('/');
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        let detail = err.inner().to_string();
        OpError::invalid(
            pointer,
            Text::new("The input does not fit this op: {detail}.").with("detail", detail),
        )
    })
}

pub(crate) fn registry() -> Registry {
    use ops::{
        access as a, activity as act, charges as c, household as h, import as i, organise as o,
        reports as r, subscriptions as s,
    };
    let mut reg = Registry(HashMap::new());
    reg.add::<r::GetContext>(reports::get_context);
    reg.add::<ops::tools::FindTools>(tools::find_tools);
    reg.add::<h::GetHousehold>(household::get_household);
    reg.add::<h::UpdateHousehold>(household::update_household);
    reg.add::<h::ListMembers>(household::list_members);
    reg.add::<h::UpdateMember>(household::update_member);
    reg.add::<h::InviteMember>(household::invite_member);
    reg.add::<h::RemoveMember>(household::remove_member);
    reg.add::<s::ListSubscriptions>(subscriptions::list);
    reg.add::<s::GetSubscription>(subscriptions::get);
    reg.add::<s::CreateSubscription>(subscriptions::create);
    reg.add::<s::UpdateSubscription>(subscriptions::update);
    reg.add::<s::RescheduleSubscription>(subscriptions::reschedule);
    reg.add::<s::ChangePrice>(subscriptions::change_price);
    reg.add::<s::PauseSubscription>(subscriptions::pause);
    reg.add::<s::ResumeSubscription>(subscriptions::resume);
    reg.add::<s::CancelSubscription>(subscriptions::cancel);
    reg.add::<s::DeleteSubscription>(subscriptions::delete);
    reg.add::<s::BulkUpdateSubscriptions>(subscriptions::bulk_update);
    reg.add::<c::ListCharges>(charges::list);
    reg.add::<c::GetCharge>(charges::get);
    reg.add::<c::ListUpcomingCharges>(charges::upcoming);
    reg.add::<c::UpdateCharge>(charges::update);
    reg.add::<o::ListCategories>(organise::list_categories);
    reg.add::<o::CreateCategory>(organise::create_category);
    reg.add::<o::UpdateCategory>(organise::update_category);
    reg.add::<o::DeleteCategory>(organise::delete_category);
    reg.add::<o::MergeCategories>(organise::merge_categories);
    reg.add::<o::ListPaymentMethods>(organise::list_payment_methods);
    reg.add::<o::CreatePaymentMethod>(organise::create_payment_method);
    reg.add::<o::UpdatePaymentMethod>(organise::update_payment_method);
    reg.add::<o::DeletePaymentMethod>(organise::delete_payment_method);
    reg.add::<o::ListTags>(organise::list_tags);
    reg.add::<o::RenameTag>(organise::rename_tag);
    reg.add::<o::DeleteTag>(organise::delete_tag);
    {
        use ops::ledger as l;
        reg.add::<l::ListAccounts>(ledger::list_accounts);
        reg.add::<l::CreateAccount>(ledger::create_account);
        reg.add::<l::UpdateAccount>(ledger::update_account);
        reg.add::<l::DeleteAccount>(ledger::delete_account);
        reg.add::<l::RecordBalance>(ledger::record_balance);
        reg.add::<l::SearchTransactions>(ledger::search_transactions);
        reg.add::<l::CreateTransaction>(ledger::create_transaction);
        reg.add::<l::UpdateTransaction>(ledger::update_transaction);
        reg.add::<l::CategoriseTransactions>(ledger::categorise_transactions);
        reg.add::<l::SplitTransaction>(ledger::split_transaction);
        reg.add::<l::PairTransfer>(ledger::pair_transfer);
        reg.add::<l::MatchCharge>(ledger::match_charge);
        reg.add::<l::DeleteTransaction>(ledger::delete_transaction);
        reg.add::<l::ListLabels>(ledger::list_labels);
        reg.add::<l::CreateLabel>(ledger::create_label);
        reg.add::<l::UpdateLabel>(ledger::update_label);
        reg.add::<l::DeleteLabel>(ledger::delete_label);
        reg.add::<i::ImportTransactions>(ledger::import_transactions);
        use ops::banks as bk;
        reg.add::<bk::ListBankConnections>(banks::list_bank_connections);
        reg.add::<bk::SyncBankConnection>(banks::sync_bank_connection);
        reg.add::<bk::LinkSimplefin>(banks::link_simplefin);
        reg.add::<bk::SetBankAccountTarget>(banks::set_bank_account_target);
        reg.add::<bk::RemoveBankConnection>(banks::remove_bank_connection);
        reg.add::<bk::DismissRecurringProposal>(banks::dismiss_recurring_proposal);
        reg.add::<bk::SetEnableBanking>(banks::set_enable_banking);
        reg.add::<bk::ListBanks>(banks::list_banks);
        reg.add::<bk::StartBankConsent>(banks::start_bank_consent);
        reg.add::<bk::CompleteBankConsent>(banks::complete_bank_consent);
        use ops::budgets as b;
        reg.add::<b::ListBudgets>(budgets::list_budgets);
        reg.add::<b::GetBudget>(budgets::get_budget);
        reg.add::<b::CreateBudget>(budgets::create_budget);
        reg.add::<b::UpdateBudget>(budgets::update_budget);
        reg.add::<b::DeleteBudget>(budgets::delete_budget);
        use ops::rules as ru;
        reg.add::<ru::ListRules>(rules::list_rules);
        reg.add::<ru::CreateRule>(rules::create_rule);
        reg.add::<ru::UpdateRule>(rules::update_rule);
        reg.add::<ru::DeleteRule>(rules::delete_rule);
        reg.add::<ru::ApplyRule>(rules::apply_rule);
        use ops::ledger_reports as lr;
        reg.add::<lr::SpendingByCategory>(ledger_reports::spending_by_category);
        reg.add::<lr::GetCashflow>(ledger_reports::get_cashflow);
        reg.add::<lr::GetNetWorth>(ledger_reports::get_net_worth);
    }
    reg.add::<r::GetSpendingSummary>(reports::spending_summary);
    reg.add::<r::GetSpendingHistory>(reports::spending_history);
    reg.add::<r::ListPriceChanges>(reports::price_changes);
    reg.add::<r::FindSavings>(reports::find_savings);
    reg.add::<i::ParseStatement>(import::parse_statement);
    reg.add::<i::ImportSubscriptions>(import::import_subscriptions);
    reg.add::<r::ListAttentionItems>(reports::attention_items);
    reg.add::<ops::registry::ListActivity>(activity::list);
    reg.add::<act::Undo>(activity::undo);
    reg.add::<a::ListTokens>(access::list_tokens);
    reg.add::<a::CreateToken>(access::create_token);
    reg.add::<a::RevokeToken>(access::revoke_token);
    reg.add::<a::ListConnectedApps>(access::list_connected_apps);
    reg.add::<a::RevokeConnectedApp>(access::revoke_connected_app);
    reg.add::<a::SetTokenTools>(access::set_token_tools);
    reg.add::<a::GetSettings>(access::get_settings);
    reg.add::<a::UpdateSettings>(access::update_settings);
    reg.add::<a::AllowTrustedApps>(access::allow_trusted_apps);
    reg.add::<ops::assistant::GetAssistantSettings>(assistant::get_assistant_settings);
    reg.add::<ops::assistant::SetAssistantSettings>(assistant::set_assistant_settings);
    reg.add::<ops::assistant::ListAssistantUsage>(assistant::list_assistant_usage);
    {
        use ops::channels as ch;
        reg.add::<ch::UpdateReminderSettings>(channels::update_reminder_settings);
        reg.add::<ch::AddDestination>(channels::add_destination);
        reg.add::<ch::RemoveDestination>(channels::remove_destination);
        reg.add::<ch::SendTestMessage>(channels::send_test_message);
        reg.add::<ch::CreateCalendarFeed>(channels::create_calendar_feed);
        reg.add::<ch::RevokeCalendarFeed>(channels::revoke_calendar_feed);
        reg.add::<ch::SetChannelSettings>(channels::set_channel_settings);
        reg.add::<ch::CreateChatLink>(channels::create_chat_link);
    }
    reg.add::<a::ExportData>(access::export_data);
    reg.confirmation::<a::ConfirmChange>();
    reg
}
