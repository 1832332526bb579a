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

use crate::provider::Failure;

/// The longest a provider may take to answer a request (a bank behind a bridge is slow).
const TIMEOUT: Duration = Duration::from_secs(60);
/// The most of an answer read: 90 days of several accounts' transactions fit many times.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 3;

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

    async fn follow(&self, mut outgoing: Outgoing, reach: Reach) -> Result<Answer, Failure> {
        for _ in 0..=MAX_REDIRECTS {
            let answer = self.once(&outgoing, reach).await?;
            if !answer.status.is_redirection() {
                return Ok(answer);
            }
            let location = answer
                .headers
                .get(header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|location| outgoing.url.join(location).ok())
                .ok_or_else(|| Failure::Protocol {
                    detail: "a redirect without a place to go".into(),
                })?;
            if outgoing.url.scheme() == "https" && location.scheme() != "https" {
                return Err(Failure::Config {
                    detail: format!(
                        "{} redirected to an address without https",
                        host_of(&outgoing.url)
                    ),
                });
            }
            if location.origin() != outgoing.url.origin() {
                // Credentials are for the host they were given for.
                outgoing.authorization = None;
            }
            outgoing.url = location;
        }
        Err(Failure::Protocol { detail: format!("more than {MAX_REDIRECTS} redirects") })
    }

    async fn once(&self, outgoing: &Outgoing, reach: Reach) -> Result<Answer, Failure> {
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
        let allowed = |address: &&SocketAddr| {
            reach == Reach::AlsoLocal || ops::network::may_connect(address.ip(), false)
        };
        let allowed: Vec<&SocketAddr> = addresses.iter().filter(allowed).collect();
        if allowed.is_empty() {
            return Err(Failure::Config {
                detail: format!(
                    "{host} is on this machine or the local network; only an owner may link a bank service there"
                ),
            });
        }
        // Each address of the name that passed, in turn, until one answers.
        let mut tcp = None;
        for address in allowed {
            if let Ok(stream) = tokio::net::TcpStream::connect(address).await {
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
        let request = request
            .body(Full::new(Bytes::from(outgoing.body.clone())))
            .map_err(|_| Failure::Config { detail: "the request cannot be written".into() })?;
        if !https {
            return exchange(TokioIo::new(tcp), request).await;
        }
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|_| Failure::Config { detail: format!("{host} is not a valid host name") })?;
        let tls = self.tls.connect(name, tcp).await.map_err(|err| Failure::Config {
            detail: format!("{host}'s TLS certificate cannot be trusted ({err})"),
        })?;
        exchange(TokioIo::new(tls), request).await
    }
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
