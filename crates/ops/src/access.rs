//! Tokens, settings, export and confirmations.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    caller::{Scope, ToolSet},
    charges::Charge,
    common::{Amount, IdInput, RecordId, Timestamp},
    household::{Empty, Household, Member},
    op::{Hints, Op, OpInfo},
    organise::{Category, PaymentMethod, Tag},
    resolve::IsoDate,
    subscriptions::SubscriptionDetail,
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Token {
    pub id: i64,
    pub name: String,
    /// The first characters, to recognise it.
    pub prefix: String,
    pub scope: Scope,
    /// Which tools its MCP client lists: every tool, the subscriptions set, or the compact set
    /// for small models.
    pub tools: ToolSet,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<Timestamp>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenList {
    pub items: Vec<Token>,
}

pub struct ListTokens;
impl Op for ListTokens {
    const INFO: OpInfo = OpInfo::read(
        "list_tokens",
        "List your API tokens",
        "Shows names, prefixes, scopes and last use; never the tokens themselves.",
    );
    type Input = Empty;
    type Output = TokenList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenInput {
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    pub scope: Scope,
    /// Which tools its MCP client lists; default subscriptions: what keeping subscriptions
    /// takes, with find_tools and call_tool for the rest; full: all of them; compact: the most
    /// used ones, for models with small context windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolSet>,
    /// 1 to 3650 days; default: no expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::limits::TOKEN_DAYS))]
    pub expires_in_days: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: Token,
    /// The secret, shown once.
    pub secret: String,
}

pub struct CreateToken;
impl Op for CreateToken {
    const INFO: OpInfo = OpInfo::write(
        "create_token",
        "Create an API token for yourself",
        "The secret is shown once; only a hash is kept.",
        Hints::write(false),
    )
    .excluded("it creates a credential; an agent must not mint its own access");
    type Input = CreateTokenInput;
    type Output = CreatedToken;
}

pub struct RevokeToken;
impl Op for RevokeToken {
    const INFO: OpInfo = OpInfo::write(
        "revoke_token",
        "Revoke one of your API tokens",
        "The token stops working at once.",
        Hints::destructive(true),
    );
    type Input = IdInput;
    type Output = Token;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetTokenToolsInput {
    /// A token's id (list_tokens) or a connected app's (list_connected_apps).
    pub id: RecordId,
    pub tools: ToolSet,
}

/// A token's or connected app's tool set, as it is now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenTools {
    pub id: i64,
    pub name: String,
    pub tools: ToolSet,
}

pub struct SetTokenTools;
impl Op for SetTokenTools {
    const INFO: OpInfo = OpInfo::write(
        "set_token_tools",
        "Choose which tools a token or connected app lists",
        "full, subscriptions (find_tools and call_tool reach the rest) or compact, for small models. Its client sees it at its next tools/list; over stdio, once restarted.",
        Hints::write(true),
    );
    type Input = SetTokenToolsInput;
    type Output = TokenTools;
}

/// An app connected with OAuth (a person's consent to it), e.g. ChatGPT or Claude.ai.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectedApp {
    pub id: i64,
    /// The name the app gave itself when it registered; not verified.
    pub name: String,
    pub scope: Scope,
    /// Which tools its MCP client lists.
    pub tools: ToolSet,
    /// When the person allowed it.
    pub connected_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<Timestamp>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectedAppList {
    pub items: Vec<ConnectedApp>,
}

pub struct ListConnectedApps;
impl Op for ListConnectedApps {
    const INFO: OpInfo = OpInfo::read(
        "list_connected_apps",
        "List the apps you connected with OAuth",
        "Apps you allowed to act as you (ChatGPT, Claude.ai…), with scope and last use. API tokens: list_tokens.",
    );
    type Input = Empty;
    type Output = ConnectedAppList;
}

pub struct RevokeConnectedApp;
impl Op for RevokeConnectedApp {
    const INFO: OpInfo = OpInfo::write(
        "revoke_connected_app",
        "Disconnect an app you connected with OAuth",
        "It loses access at once. Ids come from list_connected_apps.",
        Hints::destructive(true),
    );
    type Input = IdInput;
    type Output = ConnectedApp;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretSetting {
    pub name: String,
    /// Whether it is set; the value is never returned.
    pub is_set: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    /// Per currency, how much one unit is worth in the main currency, as a decimal string.
    pub exchange_rates: BTreeMap<crate::common::CurrencyCode, crate::common::ExchangeRate>,
    /// Days before a charge that reminders go out.
    pub reminder_days_before: u32,
    pub secrets: Vec<SecretSetting>,
    /// Whether apps connected with OAuth may be given the trusted scope, whose writes wait for
    /// a person only when destructive. Off unless an owner turns it on (allow_trusted_apps).
    pub trusted_apps: bool,
    /// The caller's own reminders and where their messages go.
    pub reminders: crate::channels::ReminderSettings,
}

pub struct GetSettings;
impl Op for GetSettings {
    const INFO: OpInfo = OpInfo::read(
        "get_settings",
        "Get the household's settings and your reminders",
        "Secrets are listed by name, never their values.",
    );
    type Input = Empty;
    type Output = Settings;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSettingsInput {
    /// Currency code to rate (a decimal string, units of the main currency per unit), or null
    /// to remove the rate.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exchange_rates: BTreeMap<crate::common::CurrencyCode, Option<crate::common::ExchangeRate>>,
    /// 0 to 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = crate::limits::REMINDER_DAYS))]
    pub reminder_days_before: Option<u32>,
}

pub struct UpdateSettings;
impl Op for UpdateSettings {
    const INFO: OpInfo = OpInfo::write(
        "update_settings",
        "Set exchange rates or reminder timing",
        "Owners only. Exchange rates convert totals to the main currency; without one, a currency's amounts are shown apart.",
        Hints::write(true),
    )
    .owner_only();
    type Input = UpdateSettingsInput;
    type Output = Settings;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllowTrustedAppsInput {
    pub allowed: bool,
}

pub struct AllowTrustedApps;
impl Op for AllowTrustedApps {
    const INFO: OpInfo = OpInfo::write(
        "allow_trusted_apps",
        "Let connected apps be trusted, or stop them",
        "Owners only. When allowed, the consent page also offers apps the trusted scope (unchecked); when not, trusted apps act as read and write.",
        Hints::write(true),
    )
    .owner_only()
    .excluded("it widens what agents may be given; an owner decides it in the web app or CLI");
    type Input = AllowTrustedAppsInput;
    type Output = Settings;
}

/// Everything the caller can see, as one document.
///
/// Its JSON Schema names the parts and the op whose output shape each part has, rather than
/// spelling out every shape again: those ops' schemas already do, and `tools/list` stays small.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Export {
    pub exported_at: Timestamp,
    pub household: Household,
    pub members: Vec<Member>,
    pub settings: Settings,
    pub categories: Vec<Category>,
    pub payment_methods: Vec<PaymentMethod>,
    pub tags: Vec<Tag>,
    /// Each with its price history, pauses, recent and next charges.
    pub subscriptions: Vec<SubscriptionDetail>,
    /// Every recorded charge, newest first.
    pub charges: Vec<Charge>,
    /// Archived ones too.
    pub accounts: Vec<crate::ledger::Account>,
    /// Every recorded balance, by account then day.
    pub balances: Vec<BalanceRecord>,
    pub labels: Vec<crate::ledger::Label>,
    /// Every transaction, newest first.
    pub transactions: Vec<crate::ledger::Transaction>,
    pub budgets: Vec<crate::budgets::Budget>,
    pub rules: Vec<crate::rules::Rule>,
}

/// What an account held at the end of a day.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BalanceRecord {
    pub account_id: i64,
    pub on: IsoDate,
    pub balance: Amount,
}

impl JsonSchema for Export {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Export".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let part =
            |description: &str| serde_json::json!({"type": "object", "description": description});
        let list = |description: &str| serde_json::json!({"type": "array", "items": {"type": "object"}, "description": description});
        schemars::json_schema!({
            "type": "object",
            "description": "Everything the caller can see, as one document.",
            "properties": {
                "exported_at": {"type": "string", "format": "date-time"},
                "household": part("As get_household returns it."),
                "members": list("As list_members returns them."),
                "settings": part("As get_settings returns them."),
                "categories": list("As list_categories returns them."),
                "payment_methods": list("As list_payment_methods returns them."),
                "tags": list("As list_tags returns them."),
                "subscriptions": list("Each as get_subscription returns it."),
                "charges": list("Every recorded charge, newest first, as list_charges returns them."),
                "accounts": list("As list_accounts returns them, archived ones too."),
                "balances": list("Every recorded balance: account_id, on, balance."),
                "labels": list("As list_labels returns them."),
                "transactions": list("Every transaction, newest first, as search_transactions returns them."),
                "budgets": list("As list_budgets returns them."),
                "rules": list("As list_rules returns them."),
            },
            "required": ["exported_at", "household", "members", "settings", "categories", "payment_methods", "tags", "subscriptions", "charges", "accounts", "balances", "labels", "transactions", "budgets", "rules"],
        })
    }
}

pub struct ExportData;
impl Op for ExportData {
    const INFO: OpInfo = OpInfo::read(
        "export_data",
        "Export everything you can see as one JSON document",
        "Household, members, subscriptions, charges, categories, payment methods, settings, accounts, transactions, budgets and rules. Large: prefer the list ops for questions.",
    )
    .not_for_assistant("one huge result that would fill a model's context; the assistant answers from the list ops");
    type Input = Empty;
    type Output = Export;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmChangeInput {
    /// From the confirmation_required answer.
    pub confirmation_id: String,
}

pub struct ConfirmChange;
impl Op for ConfirmChange {
    const INFO: OpInfo = OpInfo::write(
        "confirm_change",
        "Apply a change the person has confirmed",
        "Only after showing the person the preview from confirmation_required and hearing yes. Applies exactly that call, once, within 10 minutes, with the same token.",
        Hints::write(false),
    );
    type Input = ConfirmChangeInput;
    type Output = Value;
}
