//! [`BankFeeds`] over the providers' protocols: the calls `app` makes, set at start-up.

use jiff::civil::Date;
use ops::{
    BoxFuture,
    banks::{BankFeeds, BankProvider, Failure, Fetched},
};

use crate::{
    http::{Http, Reach},
    simplefin::{self, AccessUrl},
};

/// Every provider Exhale speaks, over one client.
pub struct Feeds {
    http: Http,
}

impl Feeds {
    /// The providers, trusting the built-in roots and these authorities (DER, for tests).
    pub fn new(extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        Ok(Self { http: Http::new(extra_roots)? })
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
        secret: &'a str,
        from: Date,
        today_utc: Date,
        local: bool,
    ) -> BoxFuture<'a, Result<Fetched, Failure>> {
        Box::pin(async move {
            match provider {
                BankProvider::SimpleFin => {
                    let access = AccessUrl::parse(secret, local)
                        .map_err(|err| Failure::Config { detail: err.to_string() })?;
                    // One request: the newest window, which a sync's `from` fits in.
                    let window = simplefin::windows(from, today_utc)
                        .first()
                        .copied()
                        .unwrap_or(simplefin::Window { start: from, end: None });
                    simplefin::fetch(&self.http, &access, window, reach(local)).await
                }
                BankProvider::EnableBanking => Err(Failure::Config {
                    detail: "Enable Banking is not available in this version of Exhale".into(),
                }),
            }
        })
    }
}
