//! The built-in assistant's rows: a household's provider settings and API key, a member's
//! conversation memory (turns and proposal cards, as JSON bodies), and usage per question.

use crate::value::params;

use crate::{Db, Result};

/// The name of the assistant's API key in `secrets`.
const API_KEY: &str = "assistant_api_key";

/// What an owner saved; `None` fields were never set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsRow {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// JSON array.
    pub prices: String,
}

pub fn get_settings(db: &Db<'_>, household_id: i64) -> Result<Option<SettingsRow>> {
    db.query_opt(
        "SELECT provider, model, base_url, prices FROM assistant_settings WHERE household_id = ?1",
        params![household_id],
        |row| {
            Ok(SettingsRow {
                provider: row.get(0)?,
                model: row.get(1)?,
                base_url: row.get(2)?,
                prices: row.get(3)?,
            })
        },
    )
}

pub fn put_settings(db: &Db<'_>, household_id: i64, row: &SettingsRow, now: &str) -> Result<()> {
    db.execute(
        "INSERT INTO assistant_settings (household_id, provider, model, base_url, prices, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (household_id) DO UPDATE SET provider = ?2, model = ?3, base_url = ?4, prices = ?5, updated_at = ?6",
        params![household_id, row.provider, row.model, row.base_url, row.prices, now],
    )?;
    Ok(())
}

/// The saved API key; read only to call the provider.
pub fn api_key(db: &Db<'_>, household_id: i64) -> Result<Option<String>> {
    crate::access::secret(db, household_id, API_KEY)
}

/// Saves the API key, or removes it with `None`.
pub fn set_api_key(db: &Db<'_>, household_id: i64, key: Option<&str>) -> Result<()> {
    crate::access::set_secret(db, household_id, API_KEY, key)
}

/// A row of a member's conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRow {
    /// `turn` or `proposal`.
    pub kind: String,
    pub proposal_id: Option<String>,
    /// JSON.
    pub body: String,
    pub expires_at: String,
}

/// Removes every memory row of the household that expired before `now`.
pub fn prune_memory(db: &Db<'_>, household_id: i64, now: &str) -> Result<()> {
    db.execute(
        "DELETE FROM assistant_memory WHERE household_id = ?1 AND expires_at < ?2",
        params![household_id, now],
    )?;
    Ok(())
}

/// The member's memory rows, oldest first.
pub fn memory(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<Vec<MemoryRow>> {
    let rows = db.query_map(
        "SELECT kind, proposal_id, body, expires_at FROM assistant_memory
         WHERE household_id = ?1 AND member_id = ?2 ORDER BY id",
        params![household_id, member_id],
        |row| {
            Ok(MemoryRow {
                kind: row.get(0)?,
                proposal_id: row.get(1)?,
                body: row.get(2)?,
                expires_at: row.get(3)?,
            })
        },
    )?;
    Ok(rows)
}

pub fn insert_memory(
    db: &Db<'_>,
    household_id: i64,
    member_id: i64,
    row: &MemoryRow,
    now: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO assistant_memory (household_id, member_id, kind, proposal_id, body, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![household_id, member_id, row.kind, row.proposal_id, row.body, now, row.expires_at],
    )?;
    Ok(())
}

/// Replaces a proposal's body and expiry; false when the member has no such proposal.
pub fn update_proposal(
    db: &Db<'_>,
    household_id: i64,
    member_id: i64,
    proposal_id: &str,
    body: &str,
    expires_at: &str,
) -> Result<bool> {
    let changed = db.execute(
        "UPDATE assistant_memory SET body = ?4, expires_at = ?5
         WHERE household_id = ?1 AND member_id = ?2 AND proposal_id = ?3",
        params![household_id, member_id, proposal_id, body, expires_at],
    )?;
    Ok(changed == 1)
}

/// Removes all but the newest `keep` turns of a member.
pub fn trim_turns(db: &Db<'_>, household_id: i64, member_id: i64, keep: usize) -> Result<()> {
    db.execute(
        "DELETE FROM assistant_memory WHERE household_id = ?1 AND member_id = ?2 AND kind = 'turn'
         AND id NOT IN (SELECT id FROM assistant_memory WHERE household_id = ?1 AND member_id = ?2
                        AND kind = 'turn' ORDER BY id DESC LIMIT ?3)",
        params![household_id, member_id, i64::try_from(keep).unwrap_or(i64::MAX)],
    )?;
    Ok(())
}

/// One question's or document's use of a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageRow {
    pub household_id: i64,
    pub member_id: Option<i64>,
    pub at: String,
    pub via: String,
    pub purpose: String,
    pub provider: String,
    pub model: String,
    pub calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_micro_usd: Option<i64>,
    /// The slips of the model the assistant's loop mended.
    pub repairs: i64,
}

/// Records a use and removes the household's uses older than `kept_since`.
pub fn insert_usage(db: &Db<'_>, row: &UsageRow, kept_since: &str) -> Result<()> {
    db.execute(
        "INSERT INTO assistant_usage (household_id, member_id, at, via, purpose, provider, model, calls, input_tokens, output_tokens, cost_micro_usd, repairs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            row.household_id,
            row.member_id,
            row.at,
            row.via,
            row.purpose,
            row.provider,
            row.model,
            row.calls,
            row.input_tokens,
            row.output_tokens,
            row.cost_micro_usd,
            row.repairs
        ],
    )?;
    db.execute(
        "DELETE FROM assistant_usage WHERE household_id = ?1 AND at < ?2",
        params![row.household_id, kept_since],
    )?;
    Ok(())
}

/// The household's uses at or after `since`, newest first; only `member_id`'s when given.
pub fn usage(
    db: &Db<'_>,
    household_id: i64,
    member_id: Option<i64>,
    since: &str,
    limit: u32,
) -> Result<Vec<UsageRow>> {
    let rows = db.query_map(
        "SELECT household_id, member_id, at, via, purpose, provider, model, calls, input_tokens, output_tokens, cost_micro_usd, repairs
         FROM assistant_usage WHERE household_id = ?1 AND (?2 IS NULL OR member_id = ?2) AND at >= ?3
         ORDER BY at DESC, id DESC LIMIT ?4",
        params![household_id, member_id, since, limit],
        |row| {
            Ok(UsageRow {
                household_id: row.get(0)?,
                member_id: row.get(1)?,
                at: row.get(2)?,
                via: row.get(3)?,
                purpose: row.get(4)?,
                provider: row.get(5)?,
                model: row.get(6)?,
                calls: row.get(7)?,
                input_tokens: row.get(8)?,
                output_tokens: row.get(9)?,
                cost_micro_usd: row.get(10)?,
                repairs: row.get(11)?,
            })
        },
    )?;
    Ok(rows)
}
