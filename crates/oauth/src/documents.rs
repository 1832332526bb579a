//! Client ID Metadata Documents: when an app's `client_id` is an HTTPS URL, the document there
//! describes it (its name and redirect URIs), and this module fetches it for the authorization
//! server, guarded against being turned on the network Exhale runs in (SSRF): HTTPS only, no
//! redirects followed, no proxy, a time limit and a size cap, and every address a name resolves
//! to checked before connecting, the connection pinned to the addresses that passed. What the
//! document must say is decided in `app`, not here. The request is made by hand on hyper and
//! rustls, so nothing (a proxy setting, a redirect policy, a resolver) can be configured
//! around the checks.

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use ops::{
    BoxFuture,
    oauth::{FetchedDocument, MetadataDocuments},
};

/// The largest document read (the draft recommends 5 KB).
const MAX_DOCUMENT_BYTES: usize = 5 * 1024;

/// How the fetcher is set up.
#[derive(Clone, Debug)]
pub struct DocumentsConfig {
    /// Loopback addresses may be fetched: only when Exhale itself is reached on loopback, so a
    /// document on the same computer is no further inside than Exhale is.
    pub allow_loopback: bool,
    /// Certificates (DER) trusted besides the built-in roots: a test's own authority.
    pub extra_roots: Vec<Vec<u8>>,
    /// The whole fetch, from resolving to the last byte.
    pub timeout: Duration,
}

impl Default for DocumentsConfig {
    fn default() -> Self {
        Self { allow_loopback: false, extra_roots: Vec::new(), timeout: Duration::from_secs(5) }
    }
}

/// Fetches client metadata documents.
pub struct Documents {
    tls: tokio_rustls::TlsConnector,
    allow_loopback: bool,
    timeout: Duration,
    /// Fetches in flight, at most [`FETCHES_AT_ONCE`]; one more is refused at once.
    in_flight: tokio::sync::Semaphore,
}

/// Documents fetched at the same time, at most: a flood of authorization requests naming
/// documents cannot make Exhale open connections without end.
const FETCHES_AT_ONCE: usize = 4;

impl Documents {
    pub fn new(config: DocumentsConfig) -> Result<Self, String> {
        let tls = outbound::tls_connector(&config.extra_roots)?;
        Ok(Self {
            tls,
            allow_loopback: config.allow_loopback,
            timeout: config.timeout,
            in_flight: tokio::sync::Semaphore::new(FETCHES_AT_ONCE),
        })
    }

    /// One GET over HTTP/1.1 and TLS, to an address that passed [`allowed`]: nothing else is
    /// connected to, no proxy is asked, and a redirect is an answer, not followed.
    async fn get(&self, url: &str) -> Result<FetchedDocument, String> {
        let parsed = ops::network::read_url(url).ok_or_else(|| "it is not a URL".to_owned())?;
        if parsed.scheme() != "https" {
            return Err("it is not https".into());
        }
        let host = parsed.host().ok_or_else(|| "it has no host".to_owned())?;
        let port = parsed.port_or_known_default().unwrap_or(443);
        let (server_name, addresses) = match host {
            url::Host::Ipv4(ip) => (ip.to_string(), vec![SocketAddr::new(IpAddr::V4(ip), port)]),
            url::Host::Ipv6(ip) => (ip.to_string(), vec![SocketAddr::new(IpAddr::V6(ip), port)]),
            url::Host::Domain(name) => {
                let found: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
                    .await
                    .map_err(|_| format!("{name} does not resolve"))?
                    .collect();
                (name.to_owned(), found)
            }
        };
        // Every address is checked, and only those that pass are connected to: a name that
        // also resolves to a private address (or does on a second lookup) cannot lead there.
        let vetted: Vec<SocketAddr> = addresses
            .into_iter()
            .filter(|a| ops::network::may_connect(a.ip(), self.allow_loopback))
            .collect();
        if vetted.is_empty() {
            return Err(format!(
                "{server_name} is, or resolves only to, a private or special-use address"
            ));
        }
        let tcp = tokio::net::TcpStream::connect(&vetted[..])
            .await
            .map_err(|_| "it could not be reached".to_owned())?;
        let name = rustls::pki_types::ServerName::try_from(server_name.clone())
            .map_err(|_| "its host is not a valid name".to_owned())?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|err| format!("its TLS certificate cannot be trusted ({err})"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|_| "it could not be read".to_owned())?;
        let driver = tokio::spawn(connection);
        let (path, authority) = outbound::request_target(&parsed);
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, authority)
            .header(hyper::header::ACCEPT, "application/json")
            .header(hyper::header::USER_AGENT, "Exhale (client metadata document fetcher)")
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .map_err(|_| "it could not be asked for".to_owned())?;
        let response =
            sender.send_request(request).await.map_err(|_| "it could not be read".to_owned());
        let result = match response {
            Ok(response) => read_document(response).await,
            Err(err) => Err(err),
        };
        driver.abort();
        result
    }
}

/// The document in a response: a 200 whose body fits in [`MAX_DOCUMENT_BYTES`].
async fn read_document(
    response: hyper::Response<hyper::body::Incoming>,
) -> Result<FetchedDocument, String> {
    use http_body_util::BodyExt as _;
    let status = response.status();
    if status.is_redirection() {
        return Err(format!("it answered {status}, a redirect, which Exhale does not follow"));
    }
    if status != hyper::StatusCode::OK {
        return Err(format!("it answered {status}"));
    }
    let max_age_secs = response
        .headers()
        .get(hyper::header::CACHE_CONTROL)
        .and_then(|value| value.to_str().ok())
        .and_then(max_age);
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| "it could not be read".to_owned())?;
        if let Some(chunk) = frame.data_ref() {
            if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            bytes.extend_from_slice(chunk);
        }
    }
    Ok(FetchedDocument { body: bytes, max_age_secs })
}

/// `max-age` of a `Cache-Control` value.
fn max_age(value: &str) -> Option<u64> {
    value.split(',').find_map(|directive| {
        let (name, seconds) = directive.trim().split_once('=')?;
        name.trim().eq_ignore_ascii_case("max-age").then(|| seconds.trim().parse().ok())?
    })
}

impl MetadataDocuments for Documents {
    fn fetch<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<FetchedDocument, String>> {
        Box::pin(async move {
            let Ok(_turn) = self.in_flight.try_acquire() else {
                return Err(format!(
                    "Exhale is already fetching {FETCHES_AT_ONCE} app descriptions; try again in a few seconds"
                ));
            };
            tokio::time::timeout(self.timeout, self.get(url))
                .await
                .unwrap_or_else(|_| Err("it did not answer in time".into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_written_as_numbers_are_read_as_addresses() {
        for (written, address) in [
            ("https://2130706433/x", "127.0.0.1"),
            ("https://0177.0.0.1/x", "127.0.0.1"),
            ("https://0x7f.1/x", "127.0.0.1"),
        ] {
            let url = url::Url::parse(written).unwrap();
            assert_eq!(url.host(), Some(url::Host::Ipv4(address.parse().unwrap())), "{written}");
        }
    }

    #[test]
    fn max_age_is_read_from_cache_control() {
        assert_eq!(max_age("public, max-age=600"), Some(600));
        assert_eq!(max_age("MAX-AGE = 60"), Some(60));
        assert_eq!(max_age("no-store"), None);
        assert_eq!(max_age("max-age=soon"), None);
    }
}
