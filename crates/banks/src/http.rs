//! One request to a bank provider: the address checked against `ops::network` after
//! resolving, and again at every redirect (at most [`MAX_REDIRECTS`], never from https to
//! http, the credentials dropped when the host changes), connected to the address checked, a
//! deadline for the whole exchange, and the answer read within a size cap. HTTP/1.1 on
//! hyper's client over rustls with ring and the Mozilla roots, as Exhale's other outbound
//! calls.

use std::{net::SocketAddr, time::Duration};

use http_body_util::Full;
use hyper::{Request, body::Bytes, header};
use hyper_util::rt::TokioIo;
use url::Url;

use ops::banks::Failure;

/// The longest a provider may take to answer a request (a bank behind a bridge is slow).
const TIMEOUT: Duration = Duration::from_secs(60);
/// The most of an answer read: 90 days of several accounts' transactions fit many times.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 3;
/// The longest one of a name's addresses may take to accept, before the next is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a request may go: a provider on the internet, or also this machine and the local
/// network, which only an owner may allow (a bridge of their own, a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Internet,
    AlsoLocal,
}

/// A request to send.
pub struct Outgoing {
    pub method: hyper::Method,
    pub url: Url,
    /// The `Authorization` header, sent only to the host first asked.
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

/// What a provider answered.
pub use outbound::Reply as Answer;

/// The client every provider request is sent through.
pub struct Http {
    tls: tokio_rustls::TlsConnector,
}

impl Http {
    /// A client that trusts the built-in roots and these authorities (DER, for tests).
    pub fn new(extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        let tls = outbound::tls_connector(extra_roots)?;
        Ok(Self { tls })
    }

    /// Sends `outgoing`, following redirects, within the deadline.
    pub async fn send(&self, outgoing: Outgoing, reach: Reach) -> Result<Answer, Failure> {
        let host = outgoing.url.host_str().unwrap_or_default().to_owned();
        tokio::time::timeout(TIMEOUT, self.follow(outgoing, reach)).await.map_err(|_| {
            Failure::TryLater {
                detail: format!("{host} did not answer within {} s", TIMEOUT.as_secs()),
            }
        })?
    }

    async fn follow(&self, mut outgoing: Outgoing, mut reach: Reach) -> Result<Answer, Failure> {
        for _ in 0..=MAX_REDIRECTS {
            let (answer, local) = self.once(&outgoing, reach).await?;
            if !answer.status.is_redirection() {
                return Ok(answer);
            }
            if !local {
                // An owner's leave to reach the local network is for the service they named
                // there: a service on the internet may not send Exhale into it.
                reach = Reach::Internet;
            }
            let location =
                answer.headers.get(header::LOCATION).and_then(|value| value.to_str().ok());
            let (url, authorization) = next_hop(&outgoing.url, location, outgoing.authorization)?;
            outgoing.url = url;
            outgoing.authorization = authorization;
        }
        Err(Failure::Protocol { detail: format!("more than {MAX_REDIRECTS} redirects") })
    }

    /// One request, and whether the address it went to is on this machine or the local
    /// network.
    async fn once(&self, outgoing: &Outgoing, reach: Reach) -> Result<(Answer, bool), Failure> {
        let url = &outgoing.url;
        let https = match url.scheme() {
            "https" => true,
            "http" if reach == Reach::AlsoLocal => false,
            _ => {
                return Err(Failure::Config {
                    detail: format!("{} is not an https address", host_of(url)),
                });
            }
        };
        let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']).to_owned();
        let port = url.port_or_known_default().unwrap_or(if https { 443 } else { 80 });
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| Failure::TryLater { detail: format!("{host} cannot be found (DNS)") })?
            .collect();
        let public = |address: &SocketAddr| ops::network::may_connect(address.ip(), false);
        let allowed: Vec<&SocketAddr> =
            addresses.iter().filter(|a| reach == Reach::AlsoLocal || public(a)).collect();
        if allowed.is_empty() {
            return Err(Failure::Config {
                detail: format!(
                    "{host} is on this machine or the local network; only an owner may link a bank service there"
                ),
            });
        }
        let local = !allowed.iter().any(|address| public(address));
        if !https && !local {
            // Credentials never cross the internet in the clear.
            return Err(Failure::Config {
                detail: format!(
                    "{host} is on the internet: its address must be https (http is for a bank service on this machine or the local network)"
                ),
            });
        }
        // Each address of the name that passed, in turn, until one answers.
        let mut tcp = None;
        for address in allowed {
            let attempt =
                tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(address));
            if let Ok(Ok(stream)) = attempt.await {
                tcp = Some(stream);
                break;
            }
        }
        let tcp = tcp.ok_or_else(|| Failure::TryLater {
            detail: format!("nothing answered at {host}:{port}"),
        })?;
        let (path, authority) = outbound::request_target(url);
        let mut request = Request::builder()
            .method(outgoing.method.clone())
            .uri(path)
            .header(header::HOST, authority)
            .header(header::USER_AGENT, "Exhale (bank sync)")
            .header(header::ACCEPT, "application/json")
            .header(header::CONTENT_LENGTH, outgoing.body.len());
        if let Some(authorization) = &outgoing.authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        if !outgoing.body.is_empty() {
            // Every body a provider is sent is JSON (SimpleFIN's claim has none).
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(outgoing.body.clone())))
            .map_err(|_| Failure::Config { detail: "the request cannot be written".into() })?;
        if !https {
            return Ok((exchange(TokioIo::new(tcp), request).await?, local));
        }
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|_| Failure::Config { detail: format!("{host} is not a valid host name") })?;
        let tls = self.tls.connect(name, tcp).await.map_err(|err| {
            // A certificate Exhale cannot trust is set up wrongly; a broken handshake is
            // worth another try.
            if err.kind() == std::io::ErrorKind::InvalidData {
                Failure::Config {
                    detail: format!("{host}'s TLS certificate cannot be trusted ({err})"),
                }
            } else {
                Failure::TryLater {
                    detail: format!("the TLS handshake with {host} failed ({err})"),
                }
            }
        })?;
        Ok((exchange(TokioIo::new(tls), request).await?, local))
    }
}

/// Where a redirect from `from` to `location` goes, and the credentials that go with it:
/// none when it leaves their origin. Never from https to another scheme.
fn next_hop(
    from: &Url,
    location: Option<&str>,
    authorization: Option<String>,
) -> Result<(Url, Option<String>), Failure> {
    let to = location
        .and_then(|location| from.join(location).ok())
        .ok_or_else(|| Failure::Protocol { detail: "a redirect without a place to go".into() })?;
    if from.scheme() == "https" && to.scheme() != "https" {
        return Err(Failure::Config {
            detail: format!("{} redirected to an address without https", host_of(from)),
        });
    }
    // Credentials are for the origin they were given for.
    let authorization = authorization.filter(|_| to.origin() == from.origin());
    Ok((to, authorization))
}

/// The host of a URL, for messages (never its credentials).
fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_owned()
}

async fn exchange<IO>(io: IO, request: Request<Full<Bytes>>) -> Result<Answer, Failure>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let reply = outbound::exchange(io, request, MAX_ANSWER_BYTES)
        .await
        .map_err(|err| Failure::TryLater { detail: format!("the connection failed: {err}") })?;
    if reply.cut {
        return Err(Failure::Protocol {
            detail: format!("the answer is larger than {} MB", MAX_ANSWER_BYTES >> 20),
        });
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_keeps_the_credentials_only_within_their_origin() {
        let from = Url::parse("https://bridge.example/simplefin/accounts?x=1").unwrap();
        for (location, to, kept) in [
            ("/simplefin/accounts2", "https://bridge.example/simplefin/accounts2", true),
            ("https://other.example/a", "https://other.example/a", false),
            // Another port is another origin.
            ("https://bridge.example:8443/a", "https://bridge.example:8443/a", false),
        ] {
            let hop = next_hop(&from, Some(location), Some("Basic xyz".into())).unwrap();
            assert_eq!((hop.0.as_str(), hop.1.is_some()), (to, kept), "{location}");
        }
        let downgrade = next_hop(&from, Some("http://bridge.example/a"), None);
        assert!(matches!(downgrade, Err(Failure::Config { .. })));
        assert!(matches!(next_hop(&from, None, None), Err(Failure::Protocol { .. })));
    }
}
