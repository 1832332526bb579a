//! One HTTP POST to a member's ntfy server or webhook: the address checked against
//! `ops::network` after resolving (so a name that resolves to this machine is refused unless an
//! owner added it), connected to the address checked, a deadline, and the reply read within a
//! size cap. HTTP/1.1 on hyper's client, over rustls with ring and the Mozilla roots.

use std::{net::SocketAddr, time::Duration};

use http_body_util::Full;
use hyper::{
    Request,
    body::Bytes,
    header::{self, HeaderName, HeaderValue},
};
use hyper_util::rt::TokioIo;

/// The longest a service may take to answer.
const TIMEOUT: Duration = Duration::from_secs(15);
/// The most of a reply read.
const MAX_REPLY_BYTES: usize = 64 * 1024;

/// A request to send.
struct Outgoing {
    method: hyper::Method,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Vec<u8>,
    /// The most of the reply read.
    max_reply: usize,
}

pub(crate) use outbound::Reply;

/// Why a request got no answer, in words for Settings.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    /// The address can never work as it is (not a URL, a local address not allowed).
    #[error("{0}")]
    Refused(String),
    /// Nothing answered, or not in time: worth another try.
    #[error("{0}")]
    Unreachable(String),
}

/// The client every member-configured HTTP destination is sent through.
pub(crate) struct Http {
    tls: tokio_rustls::TlsConnector,
}

impl Http {
    /// A client that trusts the built-in roots and these authorities (DER, for tests).
    pub(crate) fn new(extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        let tls = outbound::tls_connector(extra_roots)?;
        Ok(Self { tls })
    }

    /// POSTs `body` to `url`; `allow_lan` lets it reach this machine and the local network.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        body: Vec<u8>,
        allow_lan: bool,
    ) -> Result<Reply, HttpError> {
        self.post_within(url, headers, body, allow_lan, TIMEOUT).await
    }

    /// [`Http::post`] with its own deadline (a long poll waits longer than a send).
    pub(crate) async fn post_within(
        &self,
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        body: Vec<u8>,
        allow_lan: bool,
        deadline: Duration,
    ) -> Result<Reply, HttpError> {
        let request =
            Outgoing { method: hyper::Method::POST, headers, body, max_reply: MAX_REPLY_BYTES };
        self.send_by(url, request, allow_lan, deadline).await
    }

    /// GETs a file of at most `max_bytes` (a larger one is refused, never cut), from a service
    /// Exhale trusts (a chat attachment).
    pub(crate) async fn download(
        &self,
        url: &str,
        max_bytes: usize,
        deadline: Duration,
    ) -> Result<Reply, HttpError> {
        let request = Outgoing {
            method: hyper::Method::GET,
            headers: Vec::new(),
            body: Vec::new(),
            max_reply: max_bytes,
        };
        let reply = self.send_by(url, request, true, deadline).await?;
        if reply.cut {
            return Err(HttpError::Refused(format!(
                "the file is larger than {} MB",
                max_bytes / 1_000_000
            )));
        }
        Ok(reply)
    }

    /// Sends `outgoing`, giving up when the whole exchange takes longer than `deadline`.
    async fn send_by(
        &self,
        url: &str,
        outgoing: Outgoing,
        allow_lan: bool,
        deadline: Duration,
    ) -> Result<Reply, HttpError> {
        tokio::time::timeout(deadline, self.send_within_time(url, outgoing, allow_lan))
            .await
            .map_err(|_| {
                HttpError::Unreachable(format!(
                    "{} did not answer within {} s",
                    host_of(url),
                    deadline.as_secs()
                ))
            })?
    }

    async fn send_within_time(
        &self,
        url: &str,
        outgoing: Outgoing,
        allow_lan: bool,
    ) -> Result<Reply, HttpError> {
        let Outgoing { method, headers, body, max_reply } = outgoing;
        // Read as the address was checked when it was saved.
        let parsed = ops::network::read_url(url)
            .ok_or_else(|| HttpError::Refused("the address is not a URL".into()))?;
        let https = match parsed.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(HttpError::Refused("the address is not an http(s) URL".into())),
        };
        let host = parsed
            .host_str()
            .ok_or_else(|| HttpError::Refused("the address has no host".into()))?
            .trim_matches(['[', ']'])
            .to_owned();
        let port = parsed.port_or_known_default().unwrap_or(if https { 443 } else { 80 });
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| HttpError::Unreachable(format!("{host} cannot be found (DNS)")))?
            .collect();
        let Some(address) =
            addresses.iter().find(|a| allow_lan || ops::network::may_connect(a.ip(), false))
        else {
            return Err(HttpError::Refused(format!(
                "{host} is on this machine or the local network; only an owner may add such an address"
            )));
        };
        let tcp = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|_| HttpError::Unreachable(format!("nothing answered at {host}:{port}")))?;
        let (path, authority) = outbound::request_target(&parsed);
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, authority)
            .header(header::USER_AGENT, "Exhale (reminders)");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| HttpError::Refused("a header of the request is not valid".into()))?;
        if https {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|_| HttpError::Refused(format!("{host} is not a valid host name")))?;
            let tls = self.tls.connect(name, tcp).await.map_err(|err| {
                HttpError::Unreachable(format!(
                    "{host}'s TLS certificate cannot be trusted ({err})"
                ))
            })?;
            exchange(TokioIo::new(tls), request, max_reply).await
        } else {
            exchange(TokioIo::new(tcp), request, max_reply).await
        }
    }
}

/// A connection to a service, plain or over TLS, for a protocol of its own (Slack's Socket
/// Mode WebSocket).
pub(crate) enum Stream {
    Plain(tokio::net::TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
}

/// What a `Stream` holds underneath, plain or TLS: something to read from and write to.
trait Connection: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin {}

impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Connection for T {}

impl Stream {
    /// The connection underneath, which every read and write is passed on to.
    fn connection(self: std::pin::Pin<&mut Self>) -> std::pin::Pin<&mut dyn Connection> {
        match self.get_mut() {
            Self::Plain(stream) => std::pin::Pin::new(stream),
            Self::Tls(stream) => std::pin::Pin::new(stream.as_mut()),
        }
    }
}

impl tokio::io::AsyncRead for Stream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.connection().poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.connection().poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.connection().poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.connection().poll_shutdown(cx)
    }
}

impl Http {
    /// Opens a connection to a `wss://` (or, for a test, `ws://`) address given by a service
    /// Exhale trusts (not a member's).
    pub(crate) async fn open(&self, url: &str) -> Result<Stream, HttpError> {
        let parsed = url::Url::parse(url).map_err(|_| HttpError::Refused("not a URL".into()))?;
        let tls = match parsed.scheme() {
            "wss" | "https" => true,
            "ws" | "http" => false,
            _ => return Err(HttpError::Refused("not a WebSocket address".into())),
        };
        let host = parsed.host_str().unwrap_or_default().trim_matches(['[', ']']).to_owned();
        let port = parsed.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
        let tcp =
            tokio::time::timeout(TIMEOUT, tokio::net::TcpStream::connect((host.as_str(), port)))
                .await
                .map_err(|_| HttpError::Unreachable(format!("{host} did not answer in time")))?
                .map_err(|_| {
                    HttpError::Unreachable(format!("nothing answered at {host}:{port}"))
                })?;
        if !tls {
            return Ok(Stream::Plain(tcp));
        }
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|_| HttpError::Refused(format!("{host} is not a valid host name")))?;
        let stream = self.tls.connect(name, tcp).await.map_err(|err| {
            HttpError::Unreachable(format!("{host}'s TLS certificate cannot be trusted ({err})"))
        })?;
        Ok(Stream::Tls(Box::new(stream)))
    }
}

/// The host of a URL, for messages.
pub(crate) fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default()
}

async fn exchange<IO>(
    io: IO,
    request: Request<Full<Bytes>>,
    max_reply: usize,
) -> Result<Reply, HttpError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    // A reply larger than the cap is cut, and says so: only its start is shown in Settings,
    // and a download that was cut is refused.
    outbound::exchange(io, request, max_reply)
        .await
        .map_err(|err| HttpError::Unreachable(format!("the connection failed: {err}")))
}
