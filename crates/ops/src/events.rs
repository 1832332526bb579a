//! What a committed write tells listeners (`ChangeEvent`): pages, MCP subscriptions and the
//! assistant's view refresh from it, on every instance. Below the catalog and the policy,
//! which decides who may hear each one.

use domain::entities::EntityKind;

/// Published on the in-process bus after a write commits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    pub household_id: i64,
    pub entity: EntityKind,
    pub entity_id: i64,
    pub op: &'static str,
    pub audit_id: Option<i64>,
    /// Set when only this member may see the entity (a private subscription).
    pub private_to: Option<i64>,
}
