//! Credentials: password hashing (argon2id), token secrets (random, stored as SHA-256), and
//! resolving a bearer token to its caller.

use argon2::{
    Argon2,
    password_hash::{self, PasswordHash, SaltString},
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

/// Password hashes computed at once. Each argon2 hash takes 19 MiB and a core for tens of
/// milliseconds: a burst of sign-ins waits here instead of taking the machine's memory.
const PASSWORD_WORKERS: usize = 2;
static PASSWORD_WORK: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(PASSWORD_WORKERS);

/// Runs password hashing or checking off the async threads, at most [`PASSWORD_WORKERS`] at
/// once.
pub(crate) async fn password_work<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, OpError> {
    let _permit = PASSWORD_WORK.acquire().await.map_err(|_| OpError::Internal)?;
    tokio::task::spawn_blocking(work).await.map_err(|_| OpError::Internal)
}

/// Argon2's 19 MiB work areas, kept for reuse: allocated per hash, glibc keeps each freed
/// area in the calling thread's arena (16 concurrent sign-ins grew the server to 1.3 GB). At
/// most [`PASSWORD_WORKERS`] exist, as only that many hashes run at once.
static WORK_AREAS: std::sync::Mutex<Vec<Vec<argon2::Block>>> = std::sync::Mutex::new(Vec::new());

/// `password` hashed with `params` and `salt` into an output of `len` bytes, in a reused work
/// area.
fn argon2_output(
    argon2: &Argon2<'_>,
    blocks: usize,
    len: usize,
    password: &str,
    salt: &[u8],
) -> Result<password_hash::Output, OpError> {
    let areas = || crate::limits::locked(&WORK_AREAS);
    let mut area = areas().pop().unwrap_or_default();
    if area.len() < blocks {
        area.resize(blocks, argon2::Block::default());
    }
    let output = password_hash::Output::init_with(len, |out| {
        argon2
            .hash_password_into_with_memory(password.as_bytes(), salt, out, &mut area[..blocks])
            .map_err(|_| password_hash::Error::Crypto)
    });
    areas().push(area);
    output.map_err(|_| OpError::Internal)
}

pub(crate) fn hash_password(password: &str) -> Result<String, OpError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|_| OpError::Internal)?;
    let encoded = SaltString::encode_b64(&salt).map_err(|_| OpError::Internal)?;
    let params = argon2::Params::default();
    let argon2 = Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params.clone());
    let len = params.output_len().unwrap_or(argon2::Params::DEFAULT_OUTPUT_LEN);
    let output = argon2_output(&argon2, params.block_count(), len, password, &salt)?;
    let hash = PasswordHash {
        algorithm: argon2::Algorithm::Argon2id.ident(),
        version: Some(argon2::Version::V0x13.into()),
        params: argon2::password_hash::ParamsString::try_from(&params)
            .map_err(|_| OpError::Internal)?,
        salt: Some(encoded.as_salt()),
        hash: Some(output),
    };
    Ok(hash.to_string())
}

/// Whether `password` matches a stored PHC hash, with the parameters the hash names.
pub(crate) fn verify_password(password: &str, hash: &str) -> bool {
    let check = || -> Option<bool> {
        let parsed = PasswordHash::new(hash).ok()?;
        let expected = parsed.hash?;
        let algorithm = argon2::Algorithm::try_from(parsed.algorithm).ok()?;
        let version = match parsed.version {
            Some(version) => argon2::Version::try_from(version).ok()?,
            None => argon2::Version::default(),
        };
        let params = argon2::Params::try_from(&parsed).ok()?;
        let mut salt = [0u8; 64];
        let salt = parsed.salt?.decode_b64(&mut salt).ok()?;
        let argon2 = Argon2::new(algorithm, version, params.clone());
        let output =
            argon2_output(&argon2, params.block_count(), expected.len(), password, salt).ok()?;
        // Output's comparison is constant-time.
        Some(output == expected)
    };
    check().unwrap_or(false)
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

pub(crate) fn refused() -> OpError {
    OpError::Unauthenticated {
        message: Text::new(
            "This token is not valid: it may be mistyped, revoked or expired. Create a new one in Settings or with `exhale token create`; an app connected with OAuth refreshes its token or connects again.",
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
    let secret = random_hex(32)?;
    let hash = password_work(move || hash_password(&secret)).await??;
    Ok(HASH.get_or_init(|| hash))
}

#[cfg(test)]
mod tests {
    use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};

    use super::*;

    #[test]
    fn hashes_made_by_either_side_verify_on_the_other() {
        let ours = hash_password("correct horse battery").unwrap();
        assert!(verify_password("correct horse battery", &ours));
        assert!(!verify_password("correct horse batterY", &ours));
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(Argon2::default().verify_password(b"correct horse battery", &parsed).is_ok());
        // Hashes stored before work areas were reused, by the library's own hasher.
        let salt = SaltString::encode_b64(&[7u8; 16]).unwrap();
        let theirs = Argon2::default().hash_password(b"an older password", &salt).unwrap();
        assert!(verify_password("an older password", &theirs.to_string()));
        assert!(!verify_password("another password", &theirs.to_string()));
        assert!(!verify_password("x", "not a hash"));
        // At most one work area per hash that ran at once.
        assert!(WORK_AREAS.lock().unwrap().len() <= PASSWORD_WORKERS);
    }
}
