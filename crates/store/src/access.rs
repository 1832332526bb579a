//! Tokens, confirmations, secrets and browser sessions.

use crate::{db::Row, value::params};

use crate::{Db, Result, households::MemberRow};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    pub name: String,
    pub prefix: String,
    pub scope: String,
    /// `full`, `subscriptions` or `compact` (`ops::ToolSet`).
    pub tools: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
}

fn token_from_row(row: &Row<'_>) -> Result<TokenRow> {
    Ok(TokenRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        member_id: row.get("member_id")?,
        name: row.get("name")?,
        prefix: row.get("prefix")?,
        scope: row.get("scope")?,
        tools: row.get("tools")?,
        created_at: row.get("created_at")?,
        last_used_at: row.get("last_used_at")?,
        expires_at: row.get("expires_at")?,
        revoked_at: row.get("revoked_at")?,
    })
}

pub struct NewToken<'a> {
    pub household_id: i64,
    pub member_id: i64,
    pub name: &'a str,
    pub prefix: &'a str,
    pub hash: &'a str,
    pub scope: &'a str,
    pub tools: &'a str,
    pub expires_at: Option<&'a str>,
}

pub fn insert_token(db: &Db<'_>, token: &NewToken<'_>, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO tokens (household_id, member_id, name, prefix, hash, scope, tools, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
        params![token.household_id, token.member_id, token.name, token.prefix, token.hash, token.scope, token.tools, now, token.expires_at],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn find_token_by_hash(db: &Db<'_>, hash: &str) -> Result<Option<TokenRow>> {
    db.query_opt(
        "SELECT * FROM tokens WHERE hash = ?1 AND kind = 'api'",
        params![hash],
        token_from_row,
    )
}

pub fn list_tokens(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<Vec<TokenRow>> {
    let rows =
        db.query_map(
            "SELECT * FROM tokens WHERE household_id = ?1 AND member_id = ?2 AND kind = 'api' ORDER BY id",
            params![household_id, member_id],
            token_from_row,
        )?;
    Ok(rows)
}

pub fn get_token(db: &Db<'_>, household_id: i64, member_id: i64, id: i64) -> Result<TokenRow> {
    db.query_row(
        "SELECT * FROM tokens WHERE household_id = ?1 AND member_id = ?2 AND id = ?3 AND kind = 'api'",
        params![household_id, member_id, id],
        token_from_row,
    )
}

pub fn revoke_token(db: &Db<'_>, id: i64, now: &str) -> Result<()> {
    db.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![id, now],
    )?;
    Ok(())
}

/// Sets which tools a row of `tokens` (an API token or a connected app's grant) lists.
pub fn set_token_tools(db: &Db<'_>, id: i64, tools: &str) -> Result<()> {
    db.execute("UPDATE tokens SET tools = ?2 WHERE id = ?1", params![id, tools])?;
    Ok(())
}

pub fn revoke_tokens_of(db: &Db<'_>, household_id: i64, member_id: i64, now: &str) -> Result<()> {
    db.execute(
        "UPDATE tokens SET revoked_at = ?3 WHERE household_id = ?1 AND member_id = ?2 AND revoked_at IS NULL",
        params![household_id, member_id, now],
    )?;
    Ok(())
}

/// Records use, at most once a minute per token so reads do not turn into writes.
pub fn touch_token(db: &Db<'_>, id: i64, now: &str, not_since: &str) -> Result<()> {
    db.execute(
        "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?3)",
        params![id, now, not_since],
    )?;
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfirmationRow {
    pub id: String,
    pub household_id: i64,
    pub member_id: i64,
    pub token_id: Option<i64>,
    pub op: String,
    pub input: String,
    pub created_at: String,
    pub expires_at: String,
    pub used_at: Option<String>,
    /// A proposal of the built-in assistant, which only the person applies.
    pub by_assistant: bool,
}

pub fn insert_confirmation(db: &Db<'_>, row: &ConfirmationRow) -> Result<()> {
    db.execute(
        "INSERT INTO confirmations (id, household_id, member_id, token_id, op, input, created_at, expires_at, by_assistant)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![row.id, row.household_id, row.member_id, row.token_id, row.op, row.input, row.created_at, row.expires_at, row.by_assistant],
    )?;
    Ok(())
}

pub fn get_confirmation(db: &Db<'_>, id: &str) -> Result<Option<ConfirmationRow>> {
    db.query_opt("SELECT * FROM confirmations WHERE id = ?1", params![id], |row| {
        Ok(ConfirmationRow {
            id: row.get("id")?,
            household_id: row.get("household_id")?,
            member_id: row.get("member_id")?,
            token_id: row.get("token_id")?,
            op: row.get("op")?,
            input: row.get("input")?,
            created_at: row.get("created_at")?,
            expires_at: row.get("expires_at")?,
            used_at: row.get("used_at")?,
            by_assistant: row.get("by_assistant")?,
        })
    })
}

/// Marks a confirmation used if it is still unused and unexpired; false otherwise.
pub fn use_confirmation(db: &Db<'_>, id: &str, now: &str) -> Result<bool> {
    let changed = db.execute(
        "UPDATE confirmations SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL AND expires_at >= ?2",
        params![id, now],
    )?;
    Ok(changed == 1)
}

/// Deletes confirmations that expired before `before`.
pub fn prune_confirmations(db: &Db<'_>, before: &str) -> Result<()> {
    db.execute("DELETE FROM confirmations WHERE expires_at < ?1", params![before])?;
    Ok(())
}

/// Keeps a setup link's hash (`setup_links`).
pub fn insert_setup_link(db: &Db<'_>, hash: &str, now: &str) -> Result<()> {
    db.execute(
        "INSERT INTO setup_links (hash, created_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![hash, now],
    )?;
    Ok(())
}

pub fn setup_link_exists(db: &Db<'_>, hash: &str) -> Result<bool> {
    db.exists("SELECT 1 FROM setup_links WHERE hash = ?1", params![hash])
}

/// Forgets every setup link: someone has an account now.
pub fn delete_setup_links(db: &Db<'_>) -> Result<()> {
    db.execute("DELETE FROM setup_links", params![])?;
    Ok(())
}

/// Names of the secrets a household has set; values never leave this crate through here.
pub fn secret_names(db: &Db<'_>, household_id: i64) -> Result<Vec<String>> {
    // A destination's secret belongs to one member; Settings lists the household's.
    let names = db.query_map(
        "SELECT name FROM secrets WHERE household_id = ?1 AND name NOT LIKE 'destination:%' AND name NOT LIKE 'bank:%' ORDER BY name",
        params![household_id],
        |r| r.get(0),
    )?;
    Ok(names)
}

/// A browser session with its member, as the web app resolves a cookie.
#[derive(Clone, Debug)]
pub struct SessionRow {
    pub member: MemberRow,
    pub csrf: String,
    pub expires_at: String,
}

pub fn insert_session(
    db: &Db<'_>,
    member_id: i64,
    secret_hash: &str,
    csrf: &str,
    now: &str,
    expires_at: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO sessions (member_id, secret_hash, csrf, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![member_id, secret_hash, csrf, now, expires_at],
    )?;
    Ok(())
}

/// The session with this secret hash, unless it expired before `now`.
pub fn find_session(db: &Db<'_>, secret_hash: &str, now: &str) -> Result<Option<SessionRow>> {
    let found: Option<(i64, i64, String, String)> = db.query_opt(
        "SELECT m.household_id, s.member_id, s.csrf, s.expires_at FROM sessions s
             JOIN members m ON m.id = s.member_id
             WHERE s.secret_hash = ?1 AND s.expires_at > ?2",
        params![secret_hash, now],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let Some((household_id, member_id, csrf, expires_at)) = found else { return Ok(None) };
    let member = crate::households::get_member(db, household_id, member_id)?;
    Ok(Some(SessionRow { member, csrf, expires_at }))
}

pub fn delete_session(db: &Db<'_>, secret_hash: &str) -> Result<()> {
    db.execute("DELETE FROM sessions WHERE secret_hash = ?1", params![secret_hash])?;
    Ok(())
}

/// Forgets sessions that expired before `now`.
pub fn delete_expired_sessions(db: &Db<'_>, now: &str) -> Result<usize> {
    db.execute("DELETE FROM sessions WHERE expires_at <= ?1", params![now])
}

/// Ends every session of a member (a new password signs out everywhere).
pub fn delete_member_sessions(db: &Db<'_>, member_id: i64) -> Result<()> {
    db.execute("DELETE FROM sessions WHERE member_id = ?1", params![member_id])?;
    Ok(())
}

/// A secret's value; read only where it is used (a provider call, a message sent).
pub(crate) fn secret(db: &Db<'_>, household_id: i64, name: &str) -> Result<Option<String>> {
    db.query_opt(
        "SELECT value FROM secrets WHERE household_id = ?1 AND name = ?2",
        params![household_id, name],
        |row| row.get(0),
    )
}

/// Saves a secret, or removes it with `None`.
pub(crate) fn set_secret(
    db: &Db<'_>,
    household_id: i64,
    name: &str,
    value: Option<&str>,
) -> Result<()> {
    match value {
        Some(value) => db.execute(
            "INSERT INTO secrets (household_id, name, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (household_id, name) DO UPDATE SET value = ?3",
            params![household_id, name, value],
        )?,
        None => db.execute(
            "DELETE FROM secrets WHERE household_id = ?1 AND name = ?2",
            params![household_id, name],
        )?,
    };
    Ok(())
}
