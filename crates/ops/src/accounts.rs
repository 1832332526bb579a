//! People's accounts, as the web app needs them: creating the first household, signing in,
//! and browser sessions. These are not ops (nobody calls them as a tool, and they run before
//! there is a caller); everything a signed-in person does afterwards goes through the catalog.

use crate::{BoxFuture, Caller, OpError};

/// What the first-run setup page collects.
#[derive(Clone, Debug)]
pub struct NewHousehold {
    pub household_name: String,
    pub currency: String,
    pub time_zone: String,
    pub language: String,
    pub owner_name: String,
    pub email: String,
    pub password: String,
}

/// A browser session just started: the secret goes into an HttpOnly cookie, the CSRF token
/// into every form.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub secret: String,
    pub csrf: String,
    /// RFC 3339.
    pub expires_at: String,
}

/// A live session's person and the CSRF token its forms must carry.
#[derive(Clone, Debug)]
pub struct SessionCaller {
    pub caller: Caller,
    /// The person's name, for the page header.
    pub name: String,
    /// The language their pages are written in (BCP 47, e.g. "es"): their own setting, else
    /// their household's; empty when Exhale speaks neither, and their browser decides.
    pub language: String,
    pub csrf: String,
}

/// The accounts service, as the web adapter sees it.
pub trait Accounts: Send + Sync {
    /// Whether nobody has an account yet, so the one-time setup page is open.
    fn needs_setup(&self) -> BoxFuture<'_, Result<bool, OpError>>;

    /// Whether `secret` is a setup link an instance printed (`exhale serve`, while nobody had
    /// an account) and nobody has an account yet: the one-time setup page opens for it on any
    /// instance.
    fn setup_link_opens<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<bool, OpError>>;

    /// Creates the household and its owner; fails once anyone has an account.
    fn set_up(&self, new: NewHousehold) -> BoxFuture<'_, Result<Caller, OpError>>;

    /// Checks an email and password; the same refusal for an unknown email and a wrong
    /// password, and `RateLimited` for an email with too many failures from `client` (the
    /// address the request came from) or from anywhere.
    fn sign_in<'a>(
        &'a self,
        email: &'a str,
        password: &'a str,
        client: Option<std::net::IpAddr>,
    ) -> BoxFuture<'a, Result<Caller, OpError>>;

    /// Starts a session for a person who just signed in.
    fn start_session<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<NewSession, OpError>>;

    /// The person behind a session cookie; `Unauthenticated` when it is unknown, signed out or
    /// expired.
    fn session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<SessionCaller, OpError>>;

    /// Signs a session out. Unknown secrets are ignored.
    fn end_session<'a>(&'a self, secret: &'a str) -> BoxFuture<'a, Result<(), OpError>>;

    /// The name of the person an invitation code is for; `NotFound` when it is unknown,
    /// used or expired.
    fn invitation<'a>(&'a self, code: &'a str) -> BoxFuture<'a, Result<String, OpError>>;

    /// Sets the invited person's password, which spends the code, and returns them.
    fn accept_invitation<'a>(
        &'a self,
        code: &'a str,
        password: &'a str,
    ) -> BoxFuture<'a, Result<Caller, OpError>>;

    /// Changes a person's password after checking the current one, and ends all their
    /// sessions (the caller starts a new one for the browser they are using).
    fn change_password<'a>(
        &'a self,
        caller: &'a Caller,
        current: &'a str,
        new: &'a str,
    ) -> BoxFuture<'a, Result<(), OpError>>;
}
