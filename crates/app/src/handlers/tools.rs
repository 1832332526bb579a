//! `find_tools`: the catalog searched by words, for clients offered the compact tool set
//! (`ops::tools`). Only ops the caller may call are found.

use domain::Text;
use ops::{
    OpError, OpMeta,
    tools::{DEFAULT_FOUND, FindToolsInput, FoundTools, MAX_FOUND, MAX_QUERY, ToolDefinition},
};

use crate::{ctx::Ctx, input};

pub(crate) fn find_tools(ctx: &mut Ctx<'_>, input: FindToolsInput) -> Result<FoundTools, OpError> {
    let query = input::clean_name("/query", &input.query, MAX_QUERY)?;
    let limit = input.limit.unwrap_or(DEFAULT_FOUND);
    if !(1..=MAX_FOUND).contains(&limit) {
        return Err(OpError::invalid(
            "/limit",
            Text::new("limit must be between 1 and {max}.").with("max", MAX_FOUND),
        ));
    }
    let callable = ops::all().iter().filter(|meta| ops::policy::may_call(ctx.caller, meta.info));
    let found = ops::tools::find(&query, callable, limit as usize);
    Ok(FoundTools { tools: found.into_iter().map(definition).collect() })
}

fn definition(meta: &OpMeta) -> ToolDefinition {
    let info = meta.info;
    ToolDefinition {
        name: info.name.to_owned(),
        title: info.summary.to_owned(),
        description: info.description.to_owned(),
        input_schema: ops::tools::model_input_schema(meta),
        read_only: info.hints.read_only,
        destructive: info.hints.destructive,
    }
}
