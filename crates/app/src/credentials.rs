//! Credentials: random secrets and their hashes, passwords (Argon2, on a bounded pool of
//! workers), emails as sign-in reads them, and the cache of checked tokens. Below `auth.rs`,
//! which signs people and tokens in with them.

use argon2::{
    Argon2,
    password_hash::{self, PasswordHash, SaltString},
};

use domain::Text;
use ops::{Caller, OpError};
use sha2::{Digest, Sha256};

/// A random secret with a readable prefix, e.g. `exh_3f9c…` (32 random bytes, hex).
pub(crate) fn new_secret(prefix: &str) -> Result<String, OpError> {
    Ok(format!("{prefix}_{}", crate::random::random_hex(32)?))
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
    pub(crate) fn get(
        &self,
        hash: &str,
        now: jiff::Timestamp,
    ) -> Option<(Caller, Option<String>, Option<String>)> {
        let cache = self.0.lock().ok()?;
        let entry = cache.get(hash)?;
        (now.duration_since(entry.cached_at) < TOKEN_CACHE_TTL)
            .then(|| (entry.caller.clone(), entry.expires_at.clone(), entry.last_used_at.clone()))
    }

    pub(crate) fn put(
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

    pub(crate) fn touched(&self, hash: &str, at: String) {
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
