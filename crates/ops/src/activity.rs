//! Activity (the audit log) and undo.

use domain::entities::{ActorKind, ChangeAction, EntityKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{IsoDate, Page, Ref, Timestamp},
    op::{Hints, Op, OpInfo},
    registry::WriteOpName,
};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListActivityInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_kind: Option<ActorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<crate::resolve::MemberId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<WriteOpName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<crate::common::RecordId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// From this date, inclusive, in the household's time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// Until this date, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    /// Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

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

pub struct ListActivity;
impl Op for ListActivity {
    const INFO: OpInfo = OpInfo::read(
        "list_activity",
        "List changes: who changed what and when, newest first",
        "Each entry says who made it. Pass entry ids or a batch_id to undo.",
    );
    type Input = ListActivityInput;
    type Output = Page<ActivityEntry>;
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
        "Revert changes by their activity ids or batch id",
        "Newest first, in one transaction; a conflict when an entity changed since. Agents confirm it first and cannot undo changes to tokens or members.",
        Hints::destructive(false),
    )
    .financial();
    type Input = UndoInput;
    type Output = UndoResult;
}
