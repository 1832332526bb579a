//! The tools the model is offered: the catalog's ops the member may call through the
//! assistant (the one policy, `ops::policy::may_call`, on the assistant's caller: never above
//! `write`, never `export_data` or `confirm_change`), of a tool set (compact by default, the
//! rest reachable through `find_tools`), with their schemas written compactly and no `dry_run`:
//! whether a write applies is not the model's to say.

use ops::{Caller, Catalog, Op as _, OpError, OpMeta, ToolSet, reports::GetContext};
use serde_json::Value;

use crate::llm::ToolDef;

/// The definitions for the model, in catalog order. `get_context` is left out: its briefing is
/// already in the person's turn, and a small model that calls it again only doubles its prompt
/// (measured: the eval's no-tool questions then ran past the 60 s a call may take).
pub fn definitions(catalog: &dyn Catalog, assistant: &Caller, set: ToolSet) -> Vec<ToolDef> {
    catalog
        .ops()
        .iter()
        .filter(|meta| ops::policy::may_call(assistant, meta.info))
        .filter(|meta| ops::tools::offered(set, ops::tools::Kept::SUBSCRIPTIONS, meta.info))
        .filter(|meta| meta.info.name != GetContext::INFO.name)
        .map(definition)
        .collect()
}

/// One op as the model is shown it.
pub(crate) fn definition(meta: &OpMeta) -> ToolDef {
    let info = meta.info;
    ToolDef {
        name: info.name.to_owned(),
        description: format!("{}. {}", info.summary, info.description),
        parameters: ops::tools::model_input_schema(meta),
    }
}

/// The op a tool call names, if the assistant may call it (listed or found with find_tools).
pub(crate) fn callable<'a>(
    ops: &'a [OpMeta],
    assistant: &Caller,
    name: &str,
) -> Option<&'a OpMeta> {
    ops.iter().find(|meta| meta.name() == name && ops::policy::may_call(assistant, meta.info))
}

/// A call of `call_tool` as the call of the tool it names (any other call as it is): the name
/// of the op and its arguments.
pub(crate) fn through_call_tool<'a>(
    catalog: &'a dyn Catalog,
    name: &'a str,
    arguments: Value,
) -> Result<(&'a str, Value), OpError> {
    if name != ops::tools::CALL_TOOL.name {
        return Ok((name, arguments));
    }
    let arguments = match arguments {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let (meta, arguments) = ops::tools::called_by_name(catalog.ops(), arguments)?;
    Ok((meta.info.name, Value::Object(arguments)))
}

/// The writes the assistant may call that would apply without the person: there must be none,
/// or a model could change data with no card. `Assistant::new` refuses to start otherwise.
pub(crate) fn writes_without_a_card<'a>(ops: &'a [OpMeta], assistant: &Caller) -> Vec<&'a str> {
    ops.iter()
        .filter(|meta| meta.info.is_write() && ops::policy::may_call(assistant, meta.info))
        .filter(|meta| !ops::policy::needs_confirmation(assistant, meta.info))
        .map(OpMeta::name)
        .collect()
}

#[cfg(test)]
mod tests {
    use ops::{Role, Via};

    use super::*;

    #[test]
    fn every_write_the_assistant_may_call_waits_for_the_persons_tap() {
        for role in [Role::Owner, Role::Member] {
            let assistant = Caller::assistant_for(&Caller::person(1, 1, role, Via::Web));
            assert_eq!(writes_without_a_card(ops::all(), &assistant), Vec::<&str>::new());
            let writes = ops::all()
                .iter()
                .filter(|meta| meta.info.is_write() && ops::policy::may_call(&assistant, meta.info))
                .count();
            assert!(writes > 10, "the assistant can prepare changes ({writes} writes)");
        }
        // And the check can fail: Exhale itself (a background job) applies its writes at once.
        let trusted =
            Caller { actor: ops::Actor::System, ..Caller::person(1, 1, Role::Owner, Via::Web) };
        assert!(!writes_without_a_card(ops::all(), &trusted).is_empty());
    }
}
