//! [`BankFeeds`] over the providers' protocols: the calls `app` makes, set at start-up.

use jiff::{Timestamp, civil::Date};
use ops::{
    BoxFuture,
    banks::{
        BankChoice, BankFeeds, BankProvider, ConsentGiven, ConsentStarted, Credentials,
        EnableBankingApp, Failure, Fetched, bounded,
    },
};
use url::Url;

use crate::{
    enable_banking::{self, Application},
    http::{Http, Reach},
    simplefin::{self, AccessUrl},
};

/// Every provider Exhale speaks, over one client.
pub struct Feeds {
    http: Http,
    /// Enable Banking's API, and whether it may be on this machine (a test's fake).
    enable_banking: (Url, Reach),
}

impl Feeds {
    /// The providers, trusting the built-in roots and these authorities (DER, for tests).
    pub fn new(extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        let root = Url::parse(enable_banking::API_ROOT).map_err(|err| err.to_string())?;
        Ok(Self { http: Http::new(extra_roots)?, enable_banking: (root, Reach::Internet) })
    }

    /// These providers with Enable Banking's API at `root` (a test's fake on this machine).
    pub fn with_enable_banking_root(self, root: Url) -> Self {
        let reach =
            if ops::network::is_local_url(&root) { Reach::AlsoLocal } else { Reach::Internet };
        Self { enable_banking: (root, reach), ..self }
    }

    fn application(&self, app: &EnableBankingApp) -> Result<Application, Failure> {
        Application::new(&app.id, &app.private_key, self.enable_banking.0.clone())
    }

    /// The providers, trusting the built-in roots and the authorities of a PEM file (a
    /// self-hosted bridge's private authority: `bank_ca_file`).
    pub fn with_pem_authorities(pem: &[u8]) -> Result<Self, String> {
        use rustls::pki_types::{CertificateDer, pem::PemObject as _};
        let roots: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(pem)
            .map(|cert| cert.map(|cert| cert.to_vec()))
            .collect::<Result<_, _>>()
            .map_err(|err| format!("it is not a PEM file of certificates ({err})"))?;
        if roots.is_empty() {
            return Err("it holds no certificate".into());
        }
        Self::new(&roots)
    }
}

fn reach(local: bool) -> Reach {
    if local { Reach::AlsoLocal } else { Reach::Internet }
}

impl BankFeeds for Feeds {
    fn check_simplefin_token(&self, token: &str, local: bool) -> Result<(), Failure> {
        let url = simplefin::claim_url(token, local)
            .map_err(|err| Failure::Config { detail: err.to_string() })?;
        // The name as written; the addresses it resolves to are checked when it is claimed.
        if !local && ops::network::is_local_url(&url) {
            return Err(Failure::Config {
                detail: "the token names this machine or the local network, which only an owner may link".into(),
            });
        }
        Ok(())
    }

    fn claim_simplefin<'a>(
        &'a self,
        token: &'a str,
        local: bool,
    ) -> BoxFuture<'a, Result<String, Failure>> {
        Box::pin(async move {
            self.check_simplefin_token(token, local)?;
            let access = simplefin::claim(&self.http, token, reach(local)).await?;
            Ok(access.secret())
        })
    }

    fn fetch<'a>(
        &'a self,
        provider: BankProvider,
        credentials: &'a Credentials,
        from: Date,
        now: Timestamp,
        local: bool,
    ) -> BoxFuture<'a, Result<(Fetched, Option<Timestamp>), Failure>> {
        Box::pin(async move {
            let today_utc = now.to_zoned(jiff::tz::TimeZone::UTC).date();
            match provider {
                BankProvider::SimpleFin => {
                    let access = AccessUrl::parse(&credentials.secret, local)
                        .map_err(|err| Failure::Config { detail: err.to_string() })?;
                    // One request: the newest window, which a sync's `from` fits in.
                    let window = simplefin::windows(from, today_utc)
                        .first()
                        .copied()
                        .unwrap_or(simplefin::Window { start: from, end: None });
                    let fetched =
                        simplefin::fetch(&self.http, &access, window, reach(local)).await?;
                    Ok((fetched, None))
                }
                BankProvider::EnableBanking => {
                    let app = credentials.application.as_ref().ok_or_else(|| Failure::Config {
                        detail: "the household has no Enable Banking application set".into(),
                    })?;
                    let app = self.application(app)?;
                    let (seconds, reach) = (now.as_second(), self.enable_banking.1);
                    let secret = &credentials.secret;
                    enable_banking::fetch(&self.http, &app, secret, from, today_utc, seconds, reach)
                        .await
                }
            }
        })
    }

    fn list_banks<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        country: &'a str,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Vec<BankChoice>, Failure>> {
        Box::pin(async move {
            let app = self.application(application)?;
            let (seconds, reach) = (now.as_second(), self.enable_banking.1);
            let banks = enable_banking::banks(&self.http, &app, country, seconds, reach).await?;
            Ok(banks
                .into_iter()
                .map(|bank| BankChoice {
                    name: bounded(&bank.name),
                    country: bounded(&bank.country).to_ascii_uppercase(),
                    consent_days: bank
                        .maximum_consent_validity
                        .and_then(|seconds| u32::try_from(seconds / 86_400).ok()),
                })
                .collect())
        })
    }

    fn close_session<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        session_id: &'a str,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<(), Failure>> {
        Box::pin(async move {
            let app = self.application(application)?;
            let (seconds, reach) = (now.as_second(), self.enable_banking.1);
            enable_banking::close_session(&self.http, &app, session_id, seconds, reach).await
        })
    }

    fn check_enable_banking(&self, application: &EnableBankingApp) -> Result<(), Failure> {
        self.application(application).map(|_| ())
    }

    fn start_consent<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        country: &'a str,
        bank: &'a str,
        state: &'a str,
        redirect_url: &'a str,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<ConsentStarted, Failure>> {
        Box::pin(async move {
            let app = self.application(application)?;
            let (seconds, reach) = (now.as_second(), self.enable_banking.1);
            let banks = enable_banking::banks(&self.http, &app, country, seconds, reach).await?;
            let folded = bank.trim().to_lowercase();
            let Some(found) = banks.iter().find(|b| b.name.to_lowercase() == folded) else {
                let names: Vec<&str> = banks.iter().take(10).map(|b| b.name.as_str()).collect();
                return Err(Failure::Config {
                    detail: format!(
                        "Enable Banking lists no bank named {bank} in {country}; it lists {}",
                        names.join(", ")
                    ),
                });
            };
            let valid_until = enable_banking::consent_until(found, now);
            let url = enable_banking::start_authorization(
                &self.http,
                &app,
                found,
                valid_until,
                state,
                redirect_url,
                seconds,
                reach,
            )
            .await?;
            Ok(ConsentStarted { bank: found.name.clone(), url: url.to_string(), valid_until })
        })
    }

    fn complete_consent<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        code: &'a str,
        from: Date,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<ConsentGiven, Failure>> {
        Box::pin(async move {
            let app = self.application(application)?;
            let (seconds, reach) = (now.as_second(), self.enable_banking.1);
            let session =
                enable_banking::authorize_session(&self.http, &app, code, seconds, reach).await?;
            let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
            let fetched =
                enable_banking::fetch(&self.http, &app, &session.id, from, today, seconds, reach)
                    .await;
            let valid_until =
                fetched.as_ref().ok().and_then(|(_, until)| *until).or(session.valid_until);
            Ok(ConsentGiven {
                session_id: session.id,
                valid_until,
                fetched: fetched.map(|(fetched, _)| fetched),
            })
        })
    }
}
