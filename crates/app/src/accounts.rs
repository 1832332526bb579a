//! `ops::Accounts` for the web app: the first-run setup, sign-in and browser sessions.

use std::time::Duration;

use domain::Text;
use ops::{
    BoxFuture, Caller, OpError, Via,
    accounts::{Accounts, NewHousehold, NewSession, SessionCaller},
};

use crate::{App, auth, invoke};

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

    fn set_up(&self, new: NewHousehold) -> BoxFuture<'_, Result<Caller, OpError>> {
        Box::pin(async move { self.create_first_household(new).await.map(web) })
    }

    fn sign_in<'a>(
        &'a self,
        email: &'a str,
        password: &'a str,
    ) -> BoxFuture<'a, Result<Caller, OpError>> {
        Box::pin(async move { self.sign_in(email, password, Via::Web).await })
    }

    fn start_session<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<NewSession, OpError>> {
        Box::pin(async move {
            let secret = auth::new_secret("exs")?;
            let csrf = auth::new_secret("csrf")?;
            let now = self.clock.now();
            let expires = now.checked_add(SESSION_LIFETIME).map_err(|_| OpError::Internal)?;
            let session = NewSession {
                secret: secret.clone(),
                csrf: csrf.clone(),
                expires_at: invoke::timestamp_text(expires),
            };
            let (member_id, hash) = (caller.member_id, auth::hash_token(&secret));
            let (now, expires_at) = (invoke::timestamp_text(now), session.expires_at.clone());
            let store = self.store.clone();
            invoke::blocking(move || {
                invoke::write(
                    &store,
                    |_| true,
                    |db| {
                        store::access::delete_expired_sessions(db, &now)
                            .map_err(invoke::internal)?;
                        store::access::insert_session(
                            db,
                            member_id,
                            &hash,
                            &csrf,
                            &now,
                            &expires_at,
                        )
                        .map_err(invoke::internal)
                    },
                )
            })
            .await?;
            Ok(session)
        })
    }

    fn session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<SessionCaller, OpError>> {
        Box::pin(async move {
            let hash = auth::hash_token(secret);
            let now = invoke::timestamp_text(self.clock.now());
            let store = self.store.clone();
            let found = invoke::blocking(move || {
                invoke::read(&store, |db| {
                    store::access::find_session(db, &hash, &now).map_err(invoke::internal)
                })
            })
            .await?
            .ok_or_else(signed_out)?;
            let member = found.member;
            Ok(SessionCaller {
                caller: Caller::person(member.household_id, member.id, member.role, Via::Web),
                name: member.name,
                csrf: found.csrf,
            })
        })
    }

    fn end_session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let hash = auth::hash_token(secret);
            let store = self.store.clone();
            invoke::blocking(move || {
                invoke::write(
                    &store,
                    |_| true,
                    |db| store::access::delete_session(db, &hash).map_err(invoke::internal),
                )
            })
            .await
        })
    }
}
