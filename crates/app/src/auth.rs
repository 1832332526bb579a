//! Signing in: a bearer token resolved to its caller (through the cache of checked tokens),
//! and a person's email and password checked within the sign-in limits. The credentials
//! themselves (secrets, hashes, passwords) are `credentials.rs`.

use std::net::IpAddr;

use domain::Text;
use ops::{Actor, Caller, OpError, Scope, Via};

use crate::{
    App, clock,
    credentials::{
        clean_email, hash_password, hash_token, normalise_email, password_work, refused,
        verify_password,
    },
    transactions,
};

impl App {
    pub(crate) async fn authenticate(&self, token: &str, via: Via) -> Result<Caller, OpError> {
        let hash = hash_token(token.trim());
        let now = self.clock.now();
        let now_text = clock::timestamp_text(now);
        let cached = self.tokens.get(&hash, now);
        let (caller, expires_at, last_used_at) = match cached {
            Some(entry) => entry,
            None => {
                let store = self.store.clone();
                let lookup = hash.clone();
                let found = transactions::blocking(move || {
                    crate::transactions::read(&store, |db| {
                        let Some(row) = store::access::find_token_by_hash(db, &lookup)
                            .map_err(transactions::internal)?
                        else {
                            return Ok(None);
                        };
                        let member =
                            store::households::get_member(db, row.household_id, row.member_id)
                                .map_err(transactions::internal)?;
                        Ok::<_, OpError>(Some((row, member)))
                    })
                })
                .await?;
                let Some((row, member)) = found else { return Err(refused()) };
                if row.revoked_at.is_some() {
                    return Err(refused());
                }
                let caller = Caller {
                    household_id: row.household_id,
                    member_id: row.member_id,
                    role: member.role,
                    scope: Scope::parse(&row.scope).ok_or(OpError::Internal)?,
                    actor: Actor::Token {
                        token_id: row.id,
                        token_name: row.name,
                        client_name: None,
                        tools: ops::ToolSet::parse(&row.tools).ok_or(OpError::Internal)?,
                        credential: ops::Credential::ApiToken,
                    },
                    via,
                    language: domain::Language::English,
                };
                self.tokens.put(
                    hash.clone(),
                    caller.clone(),
                    row.expires_at.clone(),
                    row.last_used_at.clone(),
                    now,
                );
                (caller, row.expires_at, row.last_used_at)
            }
        };
        if expires_at.as_deref().is_some_and(|at| at <= now_text.as_str()) {
            return Err(refused());
        }
        let ops::Actor::Token { token_id, .. } = caller.actor else {
            return Err(OpError::Internal);
        };
        if self.record_use(token_id, last_used_at.as_deref(), now).await? {
            self.tokens.touched(&hash, now_text);
        }
        Ok(Caller { via, ..caller })
    }

    /// Records that a token (or an OAuth grant) was used now, at most once a minute so reads
    /// do not turn into writes; whether it wrote.
    pub(crate) async fn record_use(
        &self,
        token_id: i64,
        last_used_at: Option<&str>,
        now: jiff::Timestamp,
    ) -> Result<bool, OpError> {
        let minute_ago = clock::timestamp_text(
            now.checked_sub(jiff::SignedDuration::from_mins(1)).unwrap_or(now),
        );
        if last_used_at.is_some_and(|at| at >= minute_ago.as_str()) {
            return Ok(false);
        }
        let store = self.store.clone();
        let touched_at = clock::timestamp_text(now);
        // Noted on a token's first call each minute: apart from the writes, so that a call
        // never waits for the background work that spans every household.
        transactions::blocking(move || {
            store
                .write_apart(|db| {
                    store::access::touch_token(db, token_id, &touched_at, &minute_ago)
                })
                .map_err(transactions::internal)
        })
        .await?;
        Ok(true)
    }

    /// The member with this email and their password hash.
    async fn member_by_email(
        &self,
        email: &str,
    ) -> Result<Option<(store::households::MemberRow, Option<String>)>, OpError> {
        let email = clean_email("/email", email)?;
        let store = self.store.clone();
        transactions::blocking(move || {
            transactions::read(&store, |db| {
                store::households::find_member_by_email(db, &email).map_err(transactions::internal)
            })
        })
        .await
    }

    /// The person with this email, acting through `via` (CLI); fails for unknown emails.
    pub async fn person(&self, email: &str, via: Via) -> Result<Caller, OpError> {
        let found = self.member_by_email(email).await?;
        let (member, _) = found.ok_or_else(|| {
            OpError::not_found(Text::new(
                "No member with this email. `exhale member create-owner` creates the first one.",
            ))
        })?;
        Ok(Caller::person(member.household_id, member.id, member.role, via))
    }

    /// Checks a password for sign-in; the same answer, after the same work, for an unknown
    /// email and a wrong password. Failures are limited by email and `client` address (see
    /// [`crate::limits::sign_in`]).
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
        client: Option<IpAddr>,
        via: Via,
    ) -> Result<Caller, OpError> {
        let key = normalise_email(email);
        let (checked, now) = (key.clone(), self.clock.now());
        self.limited(move |db| crate::limits::sign_in::check(db, &checked, client, now)).await?;
        let found = self.member_by_email(email).await?;
        let (member, hash) = match found {
            Some((member, Some(hash))) => (Some(member), hash),
            // Verifying against a hash of nothing takes as long as a real check, so the time
            // of the answer does not tell whether the email has an account.
            _ => (None, unknown_member_hash().await?.to_owned()),
        };
        let password = password.to_owned();
        let ok = password_work(move || verify_password(&password, &hash)).await.unwrap_or(false);
        let Some(member) = member.filter(|_| ok) else {
            let now = self.clock.now();
            self.limited(move |db| crate::limits::sign_in::failed(db, &key, client, now)).await?;
            return Err(OpError::Unauthenticated {
                message: Text::new("Wrong email or password."),
            });
        };
        self.limited(move |db| crate::limits::sign_in::succeeded(db, &key, client)).await?;
        Ok(Caller::person(member.household_id, member.id, member.role, via))
    }
}

/// A password hash no password matches (of random bytes nobody keeps), made once.
async fn unknown_member_hash() -> Result<&'static str, OpError> {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(hash) = HASH.get() {
        return Ok(hash);
    }
    let secret = crate::random::random_hex(32)?;
    let hash = password_work(move || hash_password(&secret)).await??;
    Ok(HASH.get_or_init(|| hash))
}
