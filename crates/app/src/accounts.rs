//! `ops::Accounts` for the web app: the first-run setup, sign-in and browser sessions.

use std::time::Duration;

use domain::Text;
use ops::{
    BoxFuture, Caller, OpError, Via,
    accounts::{Accounts, NewHousehold, NewSession, SessionCaller},
};

use crate::{App, clock, credentials, transactions};

/// How long a browser session lasts; signing in again starts a new one.
const SESSION_LIFETIME: Duration = Duration::from_secs(14 * 24 * 3600);

fn web(caller: Caller) -> Caller {
    Caller { via: Via::Web, ..caller }
}

fn signed_out() -> OpError {
    OpError::Unauthenticated { message: Text::new("Your session ended; sign in again.") }
}

impl Accounts for App {
    fn needs_setup(&self) -> BoxFuture<'_, Result<bool, OpError>> {
        Box::pin(async move { Ok(!self.has_members().await?) })
    }

    fn setup_link_opens<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<bool, OpError>> {
        Box::pin(async move {
            let hash = credentials::hash_token(secret);
            let store = self.store.clone();
            transactions::blocking(move || {
                transactions::read(&store, |db| {
                    Ok(store::access::setup_link_exists(db, &hash)
                        .map_err(transactions::internal)?
                        && !store::households::any_member(db).map_err(transactions::internal)?)
                })
            })
            .await
        })
    }

    fn set_up(&self, new: NewHousehold) -> BoxFuture<'_, Result<Caller, OpError>> {
        Box::pin(async move { self.create_first_household(new).await.map(web) })
    }

    fn sign_in<'a>(
        &'a self,
        email: &'a str,
        password: &'a str,
        client: Option<std::net::IpAddr>,
    ) -> BoxFuture<'a, Result<Caller, OpError>> {
        Box::pin(async move { self.sign_in(email, password, client, Via::Web).await })
    }

    fn start_session<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<NewSession, OpError>> {
        Box::pin(async move {
            let secret = credentials::new_secret("exs")?;
            let csrf = credentials::new_secret("csrf")?;
            let now = self.clock.now();
            let expires = now.checked_add(SESSION_LIFETIME).map_err(|_| OpError::Internal)?;
            let session = NewSession {
                secret: secret.clone(),
                csrf: csrf.clone(),
                expires_at: clock::timestamp_text(expires),
            };
            let (member_id, hash) = (caller.member_id, credentials::hash_token(&secret));
            let (now, expires_at) = (clock::timestamp_text(now), session.expires_at.clone());
            let store = self.store.clone();
            transactions::blocking_write(store, move |db| {
                store::access::delete_expired_sessions(db, &now).map_err(transactions::internal)?;
                store::access::insert_session(db, member_id, &hash, &csrf, &now, &expires_at)
                    .map_err(transactions::internal)
            })
            .await?;
            Ok(session)
        })
    }

    fn session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<SessionCaller, OpError>> {
        Box::pin(async move {
            let hash = credentials::hash_token(secret);
            let now = clock::timestamp_text(self.clock.now());
            let store = self.store.clone();
            let found = transactions::blocking(move || {
                transactions::read(&store, |db| {
                    let Some(found) = store::access::find_session(db, &hash, &now)
                        .map_err(transactions::internal)?
                    else {
                        return Ok(None);
                    };
                    let language = crate::views::reads_in(db, &found.member)
                        .map_err(transactions::internal)?;
                    Ok(Some((found, language)))
                })
            })
            .await?
            .ok_or_else(signed_out)?;
            let (found, language) = found;
            let member = found.member;
            Ok(SessionCaller {
                caller: Caller::person(member.household_id, member.id, member.role, Via::Web),
                name: member.name,
                language: language.map(|l| l.code().to_owned()).unwrap_or_default(),
                csrf: found.csrf,
            })
        })
    }

    fn end_session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let hash = credentials::hash_token(secret);
            let store = self.store.clone();
            transactions::blocking_write(store, move |db| {
                store::access::delete_session(db, &hash).map_err(transactions::internal)
            })
            .await
        })
    }

    fn invitation<'a>(&'a self, code: &'a str) -> BoxFuture<'a, Result<String, OpError>> {
        Box::pin(async move { Ok(self.invited(code).await?.name) })
    }

    fn accept_invitation<'a>(
        &'a self,
        code: &'a str,
        password: &'a str,
    ) -> BoxFuture<'a, Result<Caller, OpError>> {
        Box::pin(async move {
            let member = self.invited(code).await?;
            let hash = new_password_hash(password).await?;
            let store = self.store.clone();
            let id = member.id;
            transactions::blocking_write(store, move |db| {
                store::households::set_password(db, id, &hash).map_err(transactions::internal)
            })
            .await?;
            Ok(Caller::person(member.household_id, member.id, member.role, Via::Web))
        })
    }

    fn change_password<'a>(
        &'a self,
        caller: &'a Caller,
        current: &'a str,
        new: &'a str,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let store = self.store.clone();
            let id = caller.member_id;
            let stored = transactions::blocking(move || {
                transactions::read(&store, |db| {
                    store::households::password_hash(db, id).map_err(transactions::internal)
                })
            })
            .await?;
            let current = current.to_owned();
            let matches = match stored {
                Some(hash) => credentials::password_work(move || {
                    credentials::verify_password(&current, &hash)
                })
                .await
                .unwrap_or(false),
                None => false,
            };
            if !matches {
                return Err(OpError::invalid(
                    "/current_password",
                    Text::new("That is not your current password."),
                ));
            }
            let hash = new_password_hash(new).await?;
            let store = self.store.clone();
            transactions::blocking_write(store, move |db| {
                store::households::set_password(db, id, &hash).map_err(transactions::internal)?;
                store::access::delete_member_sessions(db, id).map_err(transactions::internal)
            })
            .await
        })
    }
}

/// Checks a new password and hashes it, off the async threads (argon2 is slow on purpose).
async fn new_password_hash(password: &str) -> Result<String, OpError> {
    credentials::check_password("/password", password)?;
    let password = password.to_owned();
    credentials::password_work(move || credentials::hash_password(&password)).await?
}

impl App {
    /// The member an unspent, unexpired invitation code belongs to.
    async fn invited(&self, code: &str) -> Result<store::households::MemberRow, OpError> {
        let hash = credentials::hash_token(code.trim());
        let now = clock::timestamp_text(self.clock.now());
        let store = self.store.clone();
        transactions::blocking(move || {
            transactions::read(&store, |db| {
                store::households::find_member_by_invite(db, &hash, &now).map_err(transactions::internal)
            })
        })
        .await?
        .ok_or_else(|| {
            OpError::not_found(Text::new(
                "This invitation is not valid: it was used already or it expired. Ask an owner of the household for a new one.",
            ))
        })
    }
}
