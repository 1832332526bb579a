//! Credentials: password hashing (argon2id), token secrets (random, stored as SHA-256), and
//! resolving a bearer token to its caller.

use argon2::{
    Argon2,
    password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
};
use std::net::IpAddr;

use domain::Text;
use ops::{Actor, Caller, OpError, Scope, Via};
use sha2::{Digest, Sha256};

use crate::{App, clock, transactions};

/// `bytes` random bytes as hex: secrets, batch ids and confirmation ids.
pub(crate) fn random_hex(bytes: usize) -> Result<String, OpError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|_| OpError::Internal)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// A random secret with a readable prefix, e.g. `exh_3f9c…` (32 random bytes, hex).
pub(crate) fn new_secret(prefix: &str) -> Result<String, OpError> {
    Ok(format!("{prefix}_{}", random_hex(32)?))
}

/// Tokens are long random secrets, so a fast hash is enough to store them safely.
pub(crate) fn hash_token(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn hash_password(password: &str) -> Result<String, OpError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|_| OpError::Internal)?;
    let salt = SaltString::encode_b64(&salt).map_err(|_| OpError::Internal)?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| OpError::Internal)
}

pub(crate) fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}

pub(crate) fn check_password(pointer: &str, password: &str) -> Result<(), OpError> {
    let length = password.chars().count();
    if !(10..=256).contains(&length) {
        return Err(OpError::invalid(pointer, Text::new("A password needs 10 to 256 characters.")));
    }
    Ok(())
}

/// An email as Exhale compares and stores it: trimmed and lower-cased.
pub(crate) fn normalise_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub(crate) fn clean_email(pointer: &str, email: &str) -> Result<String, OpError> {
    let email = normalise_email(email);
    let valid = email.len() <= 254
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
        })
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if !valid {
        return Err(OpError::invalid(
            pointer,
            Text::new("{email} is not an email address.").with("email", email),
        ));
    }
    Ok(email)
}

/// Recently resolved tokens, so a busy agent does not cost a database read per call. Entries
/// live a few seconds and the cache empties whenever a token or member changes in this
/// process; a revocation made by another process (the CLI) applies within `TOKEN_CACHE_TTL`.
#[derive(Default)]
pub(crate) struct TokenCache(std::sync::Mutex<std::collections::HashMap<String, CachedToken>>);

struct CachedToken {
    caller: Caller,
    expires_at: Option<String>,
    last_used_at: Option<String>,
    cached_at: jiff::Timestamp,
}

const TOKEN_CACHE_TTL: jiff::SignedDuration = jiff::SignedDuration::from_secs(5);

impl TokenCache {
    fn get(
        &self,
        hash: &str,
        now: jiff::Timestamp,
    ) -> Option<(Caller, Option<String>, Option<String>)> {
        let cache = self.0.lock().ok()?;
        let entry = cache.get(hash)?;
        (now.duration_since(entry.cached_at) < TOKEN_CACHE_TTL)
            .then(|| (entry.caller.clone(), entry.expires_at.clone(), entry.last_used_at.clone()))
    }

    fn put(
        &self,
        hash: String,
        caller: Caller,
        expires_at: Option<String>,
        last_used_at: Option<String>,
        now: jiff::Timestamp,
    ) {
        if let Ok(mut cache) = self.0.lock() {
            if cache.len() > 10_000 {
                cache.clear();
            }
            cache.insert(hash, CachedToken { caller, expires_at, last_used_at, cached_at: now });
        }
    }

    fn touched(&self, hash: &str, at: String) {
        if let Ok(mut cache) = self.0.lock()
            && let Some(entry) = cache.get_mut(hash)
        {
            entry.last_used_at = Some(at);
        }
    }

    pub(crate) fn clear(&self) {
        if let Ok(mut cache) = self.0.lock() {
            cache.clear();
        }
    }
}

fn refused() -> OpError {
    OpError::Unauthenticated {
        message: Text::new(
            "This token is not valid: it may be mistyped, revoked or expired. Create a new one in Settings or with `exhale token create`.",
        ),
    }
}

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
                        tools: ops::tools::ToolSet::parse(&row.tools).ok_or(OpError::Internal)?,
                    },
                    via,
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
        // Last use is recorded at most once a minute, so reads do not turn into writes.
        let minute_ago = clock::timestamp_text(
            now.checked_sub(jiff::SignedDuration::from_mins(1)).unwrap_or(now),
        );
        if last_used_at.as_deref().is_none_or(|at| at < minute_ago.as_str()) {
            let ops::Actor::Token { token_id, .. } = caller.actor else {
                return Err(OpError::Internal);
            };
            let store = self.store.clone();
            let touched_at = now_text.clone();
            transactions::blocking(move || {
                crate::transactions::write(
                    &store,
                    |_| true,
                    |db| {
                        store::access::touch_token(db, token_id, &touched_at, &minute_ago)
                            .map_err(transactions::internal)
                    },
                )
            })
            .await?;
            self.tokens.touched(&hash, now_text);
        }
        Ok(Caller { via, ..caller })
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
    /// [`crate::limits::SignInLimiter`]).
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
        client: Option<IpAddr>,
        via: Via,
    ) -> Result<Caller, OpError> {
        let key = normalise_email(email);
        self.sign_in_limit.check(&key, client, self.clock.now())?;
        let found = self.member_by_email(email).await?;
        let (member, hash) = match found {
            Some((member, Some(hash))) => (Some(member), hash),
            // Verifying against a hash of nothing takes as long as a real check, so the time
            // of the answer does not tell whether the email has an account.
            _ => (None, unknown_member_hash()?.to_owned()),
        };
        let password = password.to_owned();
        let ok = tokio::task::spawn_blocking(move || verify_password(&password, &hash))
            .await
            .unwrap_or(false);
        let Some(member) = member.filter(|_| ok) else {
            self.sign_in_limit.failed(&key, client, self.clock.now());
            return Err(OpError::Unauthenticated {
                message: Text::new("Wrong email or password."),
            });
        };
        self.sign_in_limit.succeeded(&key, client);
        Ok(Caller::person(member.household_id, member.id, member.role, via))
    }
}

/// A password hash no password matches (of random bytes nobody keeps), made once.
fn unknown_member_hash() -> Result<&'static str, OpError> {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(hash) = HASH.get() {
        return Ok(hash);
    }
    let hash = hash_password(&random_hex(32)?)?;
    Ok(HASH.get_or_init(|| hash))
}
