//! Activity (the audit log) and undo: what an entry shows, and `undo`. `list_activity` is in
//! `registry.rs`, as its filter names an op that writes (`WriteOpName`), which takes the list of
//! every op.

use domain::entities::{ActorKind, ChangeAction, EntityKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Ref, Timestamp},
    op::{Hints, Op, OpInfo},
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActorView {
    pub kind: ActorKind,
    /// The member it acted as or for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Ref>,
    /// For reading, with the token's and the client's names for an agent, e.g. "Claude Desktop
    /// (token laptop) for Ana".
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityEntry {
    pub id: i64,
    pub at: Timestamp,
    pub actor: ActorView,
    /// The op that made the change (ops of older versions keep their names here).
    pub op: String,
    pub entity: EntityKind,
    pub entity_id: i64,
    pub action: ChangeAction,
    pub summary: String,
    pub batch_id: String,
    /// The undo entry that reverted this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<i64>,
}

/// One page of activity, newest first. Lists have a stable order; pass `next_cursor` as
/// `cursor` for more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityPage {
    /// When the filters matched nothing: which filters, and the latest changes without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub items: Vec<ActivityEntry>,
    /// How many entries match the filters, over all pages.
    pub total: u64,
    /// Present when there are more entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoInput {
    /// Activity entry ids to revert.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::BULK))]
    pub audit_ids: Vec<crate::common::RecordId>,
    /// Revert every change of one call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UndoResult {
    /// The entries reverted, newest first.
    pub reverted: Vec<i64>,
}

pub struct Undo;
impl Op for Undo {
    const INFO: OpInfo = OpInfo::write(
        "undo",
        "Revert changes by activity ids or batch id, or the latest change",
        "With neither, the latest change. In one transaction; a conflict if something changed since. Agents cannot undo tokens or members.",
        Hints::destructive(false),
    )
    .financial();
    type Input = UndoInput;
    type Output = UndoResult;
}
