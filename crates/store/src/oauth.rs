//! OAuth rows: clients, authorization requests waiting for consent, codes, grants (rows of
//! `tokens` of kind `oauth`) and their access and refresh tokens. Secrets are stored as their
//! SHA-256, computed by the caller; which request, code or token is acceptable is decided in
//! `app`, not here.

use crate::{db::Row, value::params};

use crate::{Db, Result};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientRow {
    pub id: String,
    /// `registered` or `metadata_document`.
    pub kind: String,
    pub name: String,
    /// JSON array.
    pub redirect_uris: String,
    pub auth_method: String,
    pub secret_hash: Option<String>,
    /// JSON array.
    pub grant_types: String,
    pub application_type: Option<String>,
    pub registered_from: Option<String>,
    pub created_at: String,
}

fn client_from_row(row: &Row<'_>) -> Result<ClientRow> {
    Ok(ClientRow {
        id: row.get("id")?,
        kind: row.get("kind")?,
        name: row.get("name")?,
        redirect_uris: row.get("redirect_uris")?,
        auth_method: row.get("auth_method")?,
        secret_hash: row.get("secret_hash")?,
        grant_types: row.get("grant_types")?,
        application_type: row.get("application_type")?,
        registered_from: row.get("registered_from")?,
        created_at: row.get("created_at")?,
    })
}

pub fn insert_client(db: &Db<'_>, client: &ClientRow) -> Result<()> {
    write_client(db, client, "")
}

/// Keeps a client read from its metadata document: a new one, or the same one as its document
/// says now.
pub fn upsert_client(db: &Db<'_>, client: &ClientRow) -> Result<()> {
    write_client(
        db,
        client,
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
           grant_types = excluded.grant_types, application_type = excluded.application_type",
    )
}

fn write_client(db: &Db<'_>, client: &ClientRow, on_conflict: &str) -> Result<()> {
    db.execute(&format!(
            "INSERT INTO oauth_clients (id, kind, name, redirect_uris, auth_method, secret_hash, grant_types, application_type, registered_from, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) {on_conflict}"
        ), params![
            client.id,
            client.kind,
            client.name,
            client.redirect_uris,
            client.auth_method,
            client.secret_hash,
            client.grant_types,
            client.application_type,
            client.registered_from,
            client.created_at
        ])?;
    Ok(())
}

pub fn get_client(db: &Db<'_>, id: &str) -> Result<Option<ClientRow>> {
    db.query_opt("SELECT * FROM oauth_clients WHERE id = ?1", params![id], client_from_row)
}

pub fn count_clients(db: &Db<'_>) -> Result<i64> {
    db.query_row("SELECT count(*) FROM oauth_clients", params![], |row| row.get(0))
}

/// Deletes clients registered before `before` that were never granted anything: every fresh
/// connection of some clients registers anew.
pub fn delete_unused_clients(db: &Db<'_>, before: &str) -> Result<usize> {
    db.execute(
        "DELETE FROM oauth_clients WHERE created_at < ?1
           AND NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.client_id = oauth_clients.id)",
        params![before],
    )
}

/// A registered client never granted anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UngrantedClient {
    pub id: String,
    pub registered_from: Option<String>,
    pub created_at: String,
    /// Someone signed in is deciding on a request of it now.
    pub asked: bool,
}

/// Clients never granted anything, oldest first.
pub fn ungranted_clients(db: &Db<'_>) -> Result<Vec<UngrantedClient>> {
    let rows = db.query_map_once("SELECT id, registered_from, created_at,
                EXISTS (SELECT 1 FROM oauth_requests WHERE oauth_requests.client_id = oauth_clients.id)
           FROM oauth_clients
           WHERE kind = 'registered'
             AND NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.client_id = oauth_clients.id)
           ORDER BY created_at, id", params![], |row| {
            Ok(UngrantedClient {
                id: row.get(0)?,
                registered_from: row.get(1)?,
                created_at: row.get(2)?,
                asked: row.get(3)?,
            })
        })?;
    Ok(rows)
}

/// Deletes a client never granted anything (its waiting requests go with it).
pub fn delete_ungranted_client(db: &Db<'_>, id: &str) -> Result<bool> {
    Ok(db.execute(
        "DELETE FROM oauth_clients WHERE id = ?1
           AND NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.client_id = oauth_clients.id)",
        params![id],
    )? == 1)
}

/// An authorization request checked and waiting for the person's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRow {
    pub id_hash: String,
    pub client_id: String,
    pub member_id: i64,
    pub redirect_uri: String,
    pub redirect_explicit: bool,
    pub state: Option<String>,
    pub code_challenge: String,
    pub scope: String,
    pub resource: String,
    pub expires_at: String,
}

pub fn insert_request(db: &Db<'_>, request: &RequestRow) -> Result<()> {
    db.execute(
        "INSERT INTO oauth_requests (id_hash, client_id, member_id, redirect_uri, redirect_explicit, state, code_challenge, scope, resource, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            request.id_hash,
            request.client_id,
            request.member_id,
            request.redirect_uri,
            request.redirect_explicit,
            request.state,
            request.code_challenge,
            request.scope,
            request.resource,
            request.expires_at
        ],
    )?;
    Ok(())
}

/// Removes and returns a waiting request: a decision is taken once.
pub fn take_request(db: &Db<'_>, id_hash: &str) -> Result<Option<RequestRow>> {
    db.query_opt(
        "DELETE FROM oauth_requests WHERE id_hash = ?1 RETURNING *",
        params![id_hash],
        |row| {
            Ok(RequestRow {
                id_hash: row.get("id_hash")?,
                client_id: row.get("client_id")?,
                member_id: row.get("member_id")?,
                redirect_uri: row.get("redirect_uri")?,
                redirect_explicit: row.get("redirect_explicit")?,
                state: row.get("state")?,
                code_challenge: row.get("code_challenge")?,
                scope: row.get("scope")?,
                resource: row.get("resource")?,
                expires_at: row.get("expires_at")?,
            })
        },
    )
}

pub fn prune_requests(db: &Db<'_>, now: &str) -> Result<()> {
    db.execute("DELETE FROM oauth_requests WHERE expires_at <= ?1", params![now])?;
    db.execute(
        "DELETE FROM oauth_codes WHERE expires_at <= ?1 AND consumed_at IS NULL",
        params![now],
    )?;
    Ok(())
}

/// Deletes all but the `keep` newest authorization requests waiting on `member_id`: a page that
/// makes the person's browser open `/authorize` again and again cannot fill the table.
pub fn keep_newest_requests(db: &Db<'_>, member_id: i64, keep: u32) -> Result<()> {
    db.execute(
        db.pick(
            "DELETE FROM oauth_requests WHERE member_id = ?1 AND id_hash NOT IN
               (SELECT id_hash FROM oauth_requests WHERE member_id = ?1
                ORDER BY expires_at DESC, rowid DESC LIMIT ?2)",
            "DELETE FROM oauth_requests WHERE member_id = ?1 AND id_hash NOT IN
               (SELECT id_hash FROM oauth_requests WHERE member_id = ?1
                ORDER BY expires_at DESC, seq DESC LIMIT ?2)",
        ),
        params![member_id, keep],
    )?;
    Ok(())
}

/// A person's consent to a client: a row of `tokens` of kind `oauth`.
pub struct NewGrant<'a> {
    pub household_id: i64,
    pub member_id: i64,
    pub client_id: &'a str,
    pub name: &'a str,
    pub scope: &'a str,
    pub resource: &'a str,
    /// Which tools its MCP client lists (`ops::ToolSet`).
    pub tools: &'a str,
}

pub fn insert_grant(db: &Db<'_>, grant: &NewGrant<'_>, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO tokens (household_id, member_id, kind, name, prefix, scope, created_at, client_id, resource, tools)
         VALUES (?1, ?2, 'oauth', ?3, '', ?4, ?5, ?6, ?7, ?8) RETURNING id",
        params![grant.household_id, grant.member_id, grant.name, grant.scope, now, grant.client_id, grant.resource, grant.tools],
        |row| row.get(0),
    )?;
    Ok(id)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantRow {
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    pub client_id: String,
    /// The client's name when the grant was given.
    pub name: String,
    pub scope: String,
    pub resource: String,
    /// Which tools its MCP client lists.
    pub tools: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
}

fn grant_from_row(row: &Row<'_>) -> Result<GrantRow> {
    Ok(GrantRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        member_id: row.get("member_id")?,
        client_id: row.get("client_id")?,
        name: row.get("name")?,
        scope: row.get("scope")?,
        resource: row.get("resource")?,
        tools: row.get("tools")?,
        created_at: row.get("created_at")?,
        last_used_at: row.get("last_used_at")?,
        revoked_at: row.get("revoked_at")?,
    })
}

pub fn get_grant(db: &Db<'_>, id: i64) -> Result<Option<GrantRow>> {
    db.query_opt(
        "SELECT * FROM tokens WHERE id = ?1 AND kind = 'oauth'",
        params![id],
        grant_from_row,
    )
}

/// The member's grants that are not revoked, newest first.
pub fn list_grants(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<Vec<GrantRow>> {
    db.query_map(
        "SELECT * FROM tokens WHERE household_id = ?1 AND member_id = ?2 AND kind = 'oauth'
           AND revoked_at IS NULL ORDER BY id DESC",
        params![household_id, member_id],
        grant_from_row,
    )
}

/// Revokes a grant and every token issued under it.
pub fn revoke_grant(db: &Db<'_>, grant_id: i64, now: &str) -> Result<()> {
    db.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND kind = 'oauth' AND revoked_at IS NULL",
        params![grant_id, now],
    )?;
    db.execute(
        "UPDATE oauth_tokens SET revoked_at = ?2 WHERE grant_id = ?1 AND revoked_at IS NULL",
        params![grant_id, now],
    )?;
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRow {
    pub hash: String,
    pub grant_id: i64,
    pub redirect_uri: String,
    pub redirect_explicit: bool,
    pub code_challenge: String,
    pub expires_at: String,
    pub consumed_at: Option<String>,
}

pub fn insert_code(db: &Db<'_>, code: &CodeRow) -> Result<()> {
    db.execute(
        "INSERT INTO oauth_codes (hash, grant_id, redirect_uri, redirect_explicit, code_challenge, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            code.hash,
            code.grant_id,
            code.redirect_uri,
            code.redirect_explicit,
            code.code_challenge,
            code.expires_at
        ],
    )?;
    Ok(())
}

/// Marks a code used and returns it as it was before: whatever happens next, a code is
/// presented once.
pub fn consume_code(db: &Db<'_>, hash: &str, now: &str) -> Result<Option<CodeRow>> {
    let found =
        db.query_opt("SELECT * FROM oauth_codes WHERE hash = ?1", params![hash], |row| {
            Ok(CodeRow {
                hash: row.get("hash")?,
                grant_id: row.get("grant_id")?,
                redirect_uri: row.get("redirect_uri")?,
                redirect_explicit: row.get("redirect_explicit")?,
                code_challenge: row.get("code_challenge")?,
                expires_at: row.get("expires_at")?,
                consumed_at: row.get("consumed_at")?,
            })
        })?;
    if found.as_ref().is_some_and(|code| code.consumed_at.is_none()) {
        db.execute(
            "UPDATE oauth_codes SET consumed_at = ?2 WHERE hash = ?1 AND consumed_at IS NULL",
            params![hash, now],
        )?;
    }
    Ok(found)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    pub hash: String,
    /// `access` or `refresh`.
    pub kind: String,
    pub grant_id: i64,
    pub family: String,
    pub scope: String,
    pub created_at: String,
    pub expires_at: String,
    pub rotated_at: Option<String>,
    pub successor: Option<String>,
    pub revoked_at: Option<String>,
}

pub fn insert_token(db: &Db<'_>, token: &TokenRow) -> Result<()> {
    db.execute(
        "INSERT INTO oauth_tokens (hash, kind, grant_id, family, scope, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            token.hash,
            token.kind,
            token.grant_id,
            token.family,
            token.scope,
            token.created_at,
            token.expires_at
        ],
    )?;
    Ok(())
}

/// A token by the hash of its secret, with its grant.
pub fn find_token(db: &Db<'_>, hash: &str) -> Result<Option<(TokenRow, GrantRow)>> {
    db.query_opt(
        "SELECT t.hash AS t_hash, t.kind AS t_kind, t.grant_id AS t_grant_id, t.family AS t_family,
                    t.scope AS t_scope, t.created_at AS t_created_at, t.expires_at AS t_expires_at,
                    t.rotated_at AS t_rotated_at, t.successor AS t_successor,
                    t.revoked_at AS t_revoked_at, g.*
             FROM oauth_tokens t JOIN tokens g ON g.id = t.grant_id AND g.kind = 'oauth'
             WHERE t.hash = ?1",
        params![hash],
        |row| {
            let token = TokenRow {
                hash: row.get("t_hash")?,
                kind: row.get("t_kind")?,
                grant_id: row.get("t_grant_id")?,
                family: row.get("t_family")?,
                scope: row.get("t_scope")?,
                created_at: row.get("t_created_at")?,
                expires_at: row.get("t_expires_at")?,
                rotated_at: row.get("t_rotated_at")?,
                successor: row.get("t_successor")?,
                revoked_at: row.get("t_revoked_at")?,
            };
            Ok((token, grant_from_row(row)?))
        },
    )
}

/// Marks a refresh token exchanged for `successor`; false when another exchange got there
/// first (two refreshes of one token at once: one wins).
pub fn rotate_refresh_token(db: &Db<'_>, hash: &str, successor: &str, now: &str) -> Result<bool> {
    Ok(db.execute(
        "UPDATE oauth_tokens SET rotated_at = ?3, successor = ?2
         WHERE hash = ?1 AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL",
        params![hash, successor, now],
    )? == 1)
}

/// Keeps the sealed pair a refresh issued with the refresh token it replaced (`retry_pair`).
pub fn set_retry_pair(db: &Db<'_>, hash: &str, sealed: &str) -> Result<()> {
    db.execute("UPDATE oauth_tokens SET retry_pair = ?2 WHERE hash = ?1", params![hash, sealed])?;
    Ok(())
}

/// The sealed pair kept with a rotated refresh token, if any.
pub fn retry_pair(db: &Db<'_>, hash: &str) -> Result<Option<String>> {
    Ok(db
        .query_opt("SELECT retry_pair FROM oauth_tokens WHERE hash = ?1", params![hash], |row| {
            row.get::<Option<String>>(0)
        })?
        .flatten())
}

/// Revokes every token of a family: a refresh token presented again after its retry window
/// means it leaked.
pub fn revoke_family(db: &Db<'_>, family: &str, now: &str) -> Result<()> {
    db.execute(
        "UPDATE oauth_tokens SET revoked_at = ?2 WHERE family = ?1 AND revoked_at IS NULL",
        params![family, now],
    )?;
    Ok(())
}

/// Revokes one token (RFC 7009). Revoking a refresh token ends the grant: the client gave up
/// its way back, so the connection goes from the person's list of connected apps.
pub fn revoke_token(db: &Db<'_>, hash: &str, now: &str) -> Result<()> {
    let found: Option<(String, i64)> = db.query_opt(
        "SELECT kind, grant_id FROM oauth_tokens WHERE hash = ?1",
        params![hash],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    match found {
        Some((kind, grant_id)) if kind == "refresh" => revoke_grant(db, grant_id, now),
        Some(_) => {
            db.execute(
                "UPDATE oauth_tokens SET revoked_at = ?2 WHERE hash = ?1 AND revoked_at IS NULL",
                params![hash, now],
            )?;
            Ok(())
        }
        None => Ok(()),
    }
}

/// Deletes tokens expired before `before`, so the table holds live tokens and recent history.
pub fn prune_tokens(db: &Db<'_>, before: &str) -> Result<()> {
    db.execute("DELETE FROM oauth_tokens WHERE expires_at < ?1", params![before])?;
    db.execute("DELETE FROM oauth_codes WHERE expires_at < ?1", params![before])?;
    Ok(())
}
