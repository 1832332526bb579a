//! The audit log (activity). Messages to members are in `channels.rs`.

use crate::{
    db::Row,
    value::{Param, params},
};
use domain::entities::{ActorKind, ChangeAction, EntityKind};

use crate::{Db, Result, sql::parsed};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    pub id: i64,
    pub household_id: i64,
    pub at: String,
    pub actor_kind: ActorKind,
    pub member_id: Option<i64>,
    pub member_name: Option<String>,
    pub token_id: Option<i64>,
    pub token_name: Option<String>,
    pub client_name: Option<String>,
    pub via: String,
    pub op: String,
    pub entity: EntityKind,
    pub entity_id: i64,
    pub action: ChangeAction,
    /// A `Text` as JSON.
    pub summary: String,
    pub before_state: Option<String>,
    pub after_state: Option<String>,
    pub batch_id: String,
    pub private_to: Option<i64>,
    pub undone_by: Option<i64>,
    pub undo_of: Option<i64>,
}

fn from_row(row: &Row<'_>) -> Result<AuditRow> {
    Ok(AuditRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        at: row.get("at")?,
        actor_kind: parsed(row, "actor_kind", ActorKind::parse)?,
        member_id: row.get("member_id")?,
        member_name: row.get("member_name")?,
        token_id: row.get("token_id")?,
        token_name: row.get("token_name")?,
        client_name: row.get("client_name")?,
        via: row.get("via")?,
        op: row.get("op")?,
        entity: parsed(row, "entity", EntityKind::parse)?,
        entity_id: row.get("entity_id")?,
        action: parsed(row, "action", ChangeAction::parse)?,
        summary: row.get("summary")?,
        before_state: row.get("before_state")?,
        after_state: row.get("after_state")?,
        batch_id: row.get("batch_id")?,
        private_to: row.get("private_to")?,
        undone_by: row.get("undone_by")?,
        undo_of: row.get("undo_of")?,
    })
}

const SELECT: &str =
    "SELECT a.*, m.name AS member_name FROM audit a LEFT JOIN members m ON m.id = a.member_id";
const VISIBLE: &str = "a.household_id = ?1 AND (a.private_to IS NULL OR a.private_to = ?2)";

/// Writes an entry (its `id` and `member_name` are ignored) and returns its id.
pub fn insert(db: &Db<'_>, row: &AuditRow) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO audit (household_id, at, actor_kind, member_id, token_id, token_name, client_name, via, op,
             entity, entity_id, action, summary, before_state, after_state, batch_id, private_to, undo_of)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) RETURNING id",
        params![
            row.household_id,
            row.at,
            row.actor_kind.as_str(),
            row.member_id,
            row.token_id,
            row.token_name,
            row.client_name,
            row.via,
            row.op,
            row.entity.as_str(),
            row.entity_id,
            row.action.as_str(),
            row.summary,
            row.before_state,
            row.after_state,
            row.batch_id,
            row.private_to,
            row.undo_of,
        ],
        |row| row.get(0),
    )?;
    Ok(id)
}

#[derive(Clone, Debug, Default)]
pub struct AuditFilter {
    pub actor_kind: Option<ActorKind>,
    pub member_id: Option<i64>,
    pub op: Option<String>,
    pub entity: Option<EntityKind>,
    pub entity_id: Option<i64>,
    pub batch_id: Option<String>,
    /// Inclusive bounds on `at` (RFC 3339 strings compare in order).
    pub from: Option<String>,
    pub until: Option<String>,
}

/// A page of entries the viewer may see, newest first, and the total count.
pub fn list(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    filter: &AuditFilter,
    limit: u32,
    offset: u64,
) -> Result<(Vec<AuditRow>, u64)> {
    let condition = format!(
        "{VISIBLE} AND (?3 IS NULL OR a.actor_kind = ?3) AND (?4 IS NULL OR a.member_id = ?4)
         AND (?5 IS NULL OR a.op = ?5) AND (?6 IS NULL OR a.entity = ?6) AND (?7 IS NULL OR a.entity_id = ?7)
         AND (?8 IS NULL OR a.batch_id = ?8) AND (?9 IS NULL OR a.at >= ?9) AND (?10 IS NULL OR a.at < ?10)"
    );
    let args = params![
        household_id,
        viewer,
        filter.actor_kind.map(|kind| kind.as_str()),
        filter.member_id,
        filter.op,
        filter.entity.map(|kind| kind.as_str()),
        filter.entity_id,
        filter.batch_id,
        filter.from,
        filter.until,
    ];
    let total: i64 =
        db.query_row(&format!("SELECT count(*) FROM audit a WHERE {condition}"), args, |r| {
            r.get(0)
        })?;
    let page: Vec<&dyn Param> = args.iter().chain(params![limit, offset]).copied().collect();
    let sql = format!("{SELECT} WHERE {condition} ORDER BY a.id DESC LIMIT ?11 OFFSET ?12");
    let rows = db.query_map(&sql, &page, from_row)?;
    Ok((rows, total as u64))
}

/// The entries with these ids that the viewer may see.
pub fn get_many(db: &Db<'_>, household_id: i64, viewer: i64, ids: &[i64]) -> Result<Vec<AuditRow>> {
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        let sql = format!("{SELECT} WHERE {VISIBLE} AND a.id = ?3");
        if let Some(row) = db.query_opt(&sql, params![household_id, viewer, id], from_row)? {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The entries of one call that the viewer may see, or that the viewer made (a change of
/// theirs that touched someone's private item is still theirs to revert).
pub fn batch(db: &Db<'_>, household_id: i64, viewer: i64, batch_id: &str) -> Result<Vec<AuditRow>> {
    let rows = db.query_map(&format!(
        "{SELECT} WHERE a.household_id = ?1 AND (a.private_to IS NULL OR a.private_to = ?2 OR a.member_id = ?2)
         AND a.batch_id = ?3 ORDER BY a.id"
    ), params![household_id, viewer, batch_id], from_row)?;
    Ok(rows)
}

/// Hides the history of an entity (and of a subscription's charges) from everyone but `member`.
pub fn make_private(
    db: &Db<'_>,
    household_id: i64,
    entity: &str,
    entity_id: i64,
    member: i64,
) -> Result<()> {
    db.execute(
        "UPDATE audit SET private_to = ?4 WHERE household_id = ?1 AND private_to IS NULL
         AND ((entity = ?2 AND entity_id = ?3)
           OR (?2 = 'subscription' AND entity = 'charge'
               AND entity_id IN (SELECT id FROM charges WHERE subscription_id = ?3)))",
        params![household_id, entity, entity_id, member],
    )?;
    Ok(())
}

/// Clears `undone_by` of an entry whose undo was itself undone.
pub fn clear_undone(db: &Db<'_>, id: i64) -> Result<()> {
    db.execute("UPDATE audit SET undone_by = NULL WHERE id = ?1", params![id])?;
    Ok(())
}

pub fn mark_undone(db: &Db<'_>, id: i64, undone_by: i64) -> Result<()> {
    db.execute("UPDATE audit SET undone_by = ?2 WHERE id = ?1", params![id, undone_by])?;
    Ok(())
}
