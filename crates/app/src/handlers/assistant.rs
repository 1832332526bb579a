//! The built-in assistant's settings and usage: `get_assistant_settings`,
//! `set_assistant_settings` (the key saved as a secret, never returned; audited as a change to
//! the household, whose snapshot holds the settings row, so Undo restores them) and
//! `list_assistant_usage`.

use domain::{Text, entities::EntityKind};
use ops::{
    OpError,
    assistant::{
        AssistantSettings, AssistantUsage, MODEL_NAME, ModelPrice, PriceInput, Provider,
        ProviderField, ProviderFields, SetAssistantSettingsInput, UsageEntry, UsagePurpose,
        UsageTotal,
    },
    common::{Ref, Timestamp},
    household::Empty,
};
use store::assistant::{self as rows, SettingsRow};

use crate::{ctx::Ctx, input, transactions::StoreExt, views};

fn saved_prices(row: &SettingsRow) -> Result<Vec<ModelPrice>, OpError> {
    if row.prices.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(&row.prices).map_err(|_| OpError::Internal)
}

fn view(ctx: &Ctx<'_>) -> Result<AssistantSettings, OpError> {
    let household = ctx.household_id();
    let row = rows::get_settings(ctx.db, household).or_internal()?.unwrap_or_default();
    let key_saved = rows::api_key(ctx.db, household).or_internal()?.is_some();
    let prices = saved_prices(&row)?;
    let environment = &ctx.assistant_env;
    let mut from_environment = Vec::new();
    if environment.provider.is_some() {
        from_environment.push(ProviderField::Provider);
    }
    if environment.model.is_some() {
        from_environment.push(ProviderField::Model);
    }
    if environment.base_url.is_some() {
        from_environment.push(ProviderField::BaseUrl);
    }
    if environment.api_key.is_some() {
        from_environment.push(ProviderField::ApiKey);
    }
    let saved = ProviderFields {
        provider: row.provider.as_deref().and_then(Provider::parse),
        model: row.model.clone(),
        base_url: row.base_url,
        api_key: None,
    };
    let fields = environment.clone().over(saved);
    let settings = fields.clone().settings(Vec::new());
    let base_url = settings
        .as_ref()
        .map(|s| s.base_url.clone())
        .or_else(|| fields.provider.and_then(Provider::default_base_url).map(str::to_owned));
    Ok(AssistantSettings {
        on: settings.is_some(),
        provider: fields.provider,
        model: fields.model.filter(|m| !m.is_empty()),
        local: base_url.as_deref().is_some_and(views::is_loopback_url),
        base_url,
        api_key_saved: key_saved || environment.api_key.is_some(),
        from_environment,
        prices: prices
            .iter()
            .map(|p| PriceInput {
                model: p.model.clone(),
                input: p.input.into(),
                output: p.output.into(),
            })
            .collect(),
        this_month: month_total(ctx)?,
    })
}

fn month_total(ctx: &Ctx<'_>) -> Result<UsageTotal, OpError> {
    let now = Timestamp(ctx.now).text();
    let since = format!("{}-01T00:00:00Z", &now[..7.min(now.len())]);
    let member = (!ctx.caller.is_owner()).then_some(ctx.me());
    let uses = rows::usage(ctx.db, ctx.household_id(), member, &since, u32::MAX).or_internal()?;
    let mut total = UsageTotal::default();
    let mut cost = 0u64;
    for used in &uses {
        match used.purpose.as_str() {
            "document" => total.documents += 1,
            _ => total.questions += 1,
        }
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        total.calls += count(used.calls);
        total.input_tokens += count(used.input_tokens);
        total.output_tokens += count(used.output_tokens);
        match used.cost_micro_usd {
            Some(micros) => cost = cost.saturating_add(count(micros)),
            None => total.unpriced += count(used.calls),
        }
    }
    total.cost_usd = ops::assistant::dollars(cost);
    Ok(total)
}

pub(crate) fn get_assistant_settings(
    ctx: &mut Ctx<'_>,
    _: Empty,
) -> Result<AssistantSettings, OpError> {
    view(ctx)
}

pub(crate) fn set_assistant_settings(
    ctx: &mut Ctx<'_>,
    input: SetAssistantSettingsInput,
) -> Result<AssistantSettings, OpError> {
    let household = ctx.household_id();
    let before = ctx.snapshot(EntityKind::Household, household)?;
    let mut row = rows::get_settings(ctx.db, household).or_internal()?.unwrap_or_default();
    if let Some(provider) = input.provider {
        row.provider = Some(provider.as_str().to_owned());
    }
    if let Some(model) = &input.model {
        let model = model.trim();
        row.model = if model.is_empty() {
            None
        } else {
            Some(input::clean_name("/model", model, MODEL_NAME)?)
        };
    }
    if let Some(url) = &input.base_url {
        let url = url.trim().trim_end_matches('/');
        row.base_url = if url.is_empty() { None } else { Some(checked_base_url(url)?) };
    }
    if let Some(prices) = &input.prices {
        let mut checked = Vec::with_capacity(prices.len());
        for (index, price) in prices.iter().enumerate() {
            let at = |field: &str| format!("/prices/{index}/{field}");
            checked.push(ModelPrice {
                model: input::clean_name(&at("model"), &price.model, MODEL_NAME)?,
                input: price.input.micros(),
                output: price.output.micros(),
                cache_read: 0,
                cache_write: 0,
            });
        }
        row.prices = serde_json::to_string(&checked).map_err(|_| OpError::Internal)?;
    }
    if row.prices.is_empty() {
        row.prices = "[]".into();
    }
    rows::put_settings(ctx.db, household, &row, &ctx.now_text()).or_internal()?;
    if let Some(key) = &input.api_key {
        let key = key.trim();
        if key.chars().any(char::is_control) || key.contains(' ') {
            return Err(OpError::invalid(
                "/api_key",
                Text::new("An API key is one line without spaces; paste it again."),
            ));
        }
        rows::set_api_key(ctx.db, household, (!key.is_empty()).then_some(key)).or_internal()?;
    }
    ctx.record(
        EntityKind::Household,
        household,
        before,
        Text::new("Updated the built-in assistant's settings"),
    )?;
    view(ctx)
}

/// An http(s) address with a host and no query or fragment.
fn checked_base_url(url: &str) -> Result<String, OpError> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let host = rest.split('/').next().unwrap_or_default();
    if !matches!(scheme, "http" | "https")
        || host.is_empty()
        || url.contains(['?', '#', ' '])
        || url.len() > ops::limits::URL
    {
        return Err(OpError::invalid(
            "/base_url",
            Text::new("{url} is not an API address such as http://127.0.0.1:11434/v1 or https://api.openai.com/v1.")
                .with("url", url),
        ));
    }
    Ok(url.to_owned())
}

pub(crate) fn list_assistant_usage(ctx: &mut Ctx<'_>, _: Empty) -> Result<AssistantUsage, OpError> {
    let limit = ops::assistant::USAGE_LISTED;
    let member = (!ctx.caller.is_owner()).then_some(ctx.me());
    let uses = rows::usage(ctx.db, ctx.household_id(), member, "0000", limit).or_internal()?;
    let members = store::households::list_members(ctx.db, ctx.household_id()).or_internal()?;
    let items = uses
        .into_iter()
        .map(|used| {
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            Ok(UsageEntry {
                at: used.at.parse().map(Timestamp).map_err(|_| OpError::Internal)?,
                member: used.member_id.and_then(|id| {
                    members.iter().find(|m| m.id == id).map(|m| Ref { id, name: m.name.clone() })
                }),
                via: used.via,
                purpose: UsagePurpose::parse(&used.purpose).ok_or(OpError::Internal)?,
                provider: Provider::parse(&used.provider).ok_or(OpError::Internal)?,
                model: used.model,
                calls: u32::try_from(used.calls).unwrap_or(0),
                input_tokens: count(used.input_tokens),
                output_tokens: count(used.output_tokens),
                cost_usd: used.cost_micro_usd.map(|micros| ops::assistant::dollars(count(micros))),
                repairs: u32::try_from(used.repairs).unwrap_or(0),
            })
        })
        .collect::<Result<_, OpError>>()?;
    Ok(AssistantUsage { items })
}
