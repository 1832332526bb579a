//! The one policy: who may call an op, who must confirm a write first, and who may hear about
//! a change.
//!
//! The invoker enforces these answers on every call, and every adapter asks the same functions
//! before showing anything (MCP `tools/list`, the assistant's tool definitions, the web's
//! live updates), so what a caller is offered is exactly what the catalog accepts. Nothing
//! here does IO; the rules are pure functions of the caller and the op's declaration.

use domain::Text;

use crate::{
    Op as _,
    access::ConfirmChange,
    caller::{Actor, Caller},
    error::OpError,
    events::ChangeEvent,
    op::{Exposure, OpInfo},
};

/// Why `caller` may not call the op at all, or `None` when they may: exposure (agents, the
/// assistant), the scope of the credential, and owner-only ops.
pub fn refusal(caller: &Caller, info: &OpInfo) -> Option<OpError> {
    let agent = matches!(caller.actor, Actor::Token { .. } | Actor::Assistant);
    if caller.actor == Actor::Assistant {
        if let Exposure::NotAssistant { reason } = info.exposure {
            return Some(OpError::forbidden(
                Text::new("{op} is not available to the assistant: {reason}.")
                    .with("op", info.name)
                    .with("reason", reason),
            ));
        }
        // The assistant's proposals are applied by the person tapping the card Exhale wrote,
        // never by the model.
        if info.name == ConfirmChange::INFO.name {
            return Some(OpError::forbidden(Text::new(
                "Only the person can confirm the assistant's proposals.",
            )));
        }
    }
    if let Exposure::Excluded { reason } = info.exposure
        && agent
    {
        return Some(OpError::forbidden(
            Text::new("{op} is not available to agents: {reason}. Ask the person to do it in the Exhale web app or CLI.")
                .with("op", info.name)
                .with("reason", reason),
        ));
    }
    if !caller.scope.allows(info.scope) {
        return Some(OpError::Forbidden {
            message: Text::new("{op} needs a token with the {scope} scope; this one has {have}. Use a read op, or ask the person for a token with more rights.")
                .with("op", info.name)
                .with("scope", info.scope.as_str())
                .with("have", caller.scope.as_str()),
            needed: Some(info.scope),
        });
    }
    if info.owner_only && !caller.is_owner() {
        return Some(OpError::forbidden(
            Text::new("Only an owner of the household can call {op}.").with("op", info.name),
        ));
    }
    None
}

/// Whether `caller` may call the op: what MCP lists as a tool and the assistant offers a
/// model, and exactly what the invoker accepts.
pub fn may_call(caller: &Caller, info: &OpInfo) -> bool {
    refusal(caller, info).is_none()
}

/// Whether a write by `caller` needs a person's confirmation before it applies.
///
/// A `write` token confirms destructive and financial writes, a `trusted` token destructive
/// ones only, the assistant every write, and people never (they are the ones confirming).
/// `confirm_change` itself is the confirmation.
pub fn needs_confirmation(caller: &Caller, info: &OpInfo) -> bool {
    if info.hints.read_only || info.name == ConfirmChange::INFO.name {
        return false;
    }
    match caller.actor {
        Actor::Person | Actor::System => false,
        Actor::Assistant => true,
        Actor::Token { .. } => match caller.scope {
            crate::Scope::Trusted => info.hints.destructive,
            _ => info.hints.destructive || info.financial,
        },
    }
}

/// Whether `caller` may hear about a change: never across households, and a change to a
/// private item only by the member it belongs to.
pub fn may_see(caller: &Caller, event: &ChangeEvent) -> bool {
    event.household_id == caller.household_id
        && event.private_to.is_none_or(|member| member == caller.member_id)
}
