//! What every outbound HTTPS call of Exhale's shares (a member's webhook or ntfy server, a chat
//! service, a model provider, a client metadata document, a bank): the TLS client, on rustls
//! with ring and the Mozilla roots built in (and, for a test, an authority of its own), the
//! request target and `Host` of a URL, and one HTTP/1.1 exchange with its answer read up to a
//! cap. Each caller keeps its own rules for where it may connect and what an answer means.

use std::sync::Arc;

use http_body_util::{BodyExt as _, Full};
use hyper::{HeaderMap, Request, StatusCode, body::Bytes, header};
use url::Url;

/// What a server answered.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The body was longer than what was read.
    pub cut: bool,
}

impl Reply {
    /// `Retry-After` in seconds, when given as a number.
    pub fn retry_after(&self) -> Option<u64> {
        self.headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
    }
}

/// Sends `request` over `io` (HTTP/1.1, one request) and reads the answer, at most `max_body`
/// bytes of its body: a longer one is cut, and says so; one that breaks off is an error.
pub async fn exchange<IO>(
    io: IO,
    request: Request<Full<Bytes>>,
    max_body: usize,
) -> Result<Reply, hyper::Error>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    let result = async {
        let response = sender.send_request(request).await?;
        let (parts, mut body) = response.into_parts();
        let mut read = Vec::new();
        let mut cut = false;
        while let Some(frame) = body.frame().await {
            let frame = frame?;
            if let Some(bytes) = frame.data_ref() {
                let room = max_body.saturating_sub(read.len());
                read.extend_from_slice(&bytes[..bytes.len().min(room)]);
                if bytes.len() > room {
                    cut = true;
                    break;
                }
            }
        }
        Ok(Reply { status: parts.status, headers: parts.headers, body: Bytes::from(read), cut })
    }
    .await;
    connection.abort();
    result
}

/// A TLS client that trusts the built-in roots and these authorities (DER, for tests).
pub fn tls_connector(extra_roots: &[Vec<u8>]) -> Result<tokio_rustls::TlsConnector, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for der in extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|err| format!("an extra root certificate is not valid: {err}"))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|err| format!("TLS cannot be set up: {err}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// What an HTTP/1.1 request to `url` names: its target (the path and query) and its `Host`
/// (the host, and the port when the URL gives one).
pub fn request_target(url: &Url) -> (String, String) {
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    (target, authority)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_its_target_and_host_as_the_url_wrote_them() {
        let url =
            Url::parse("https://bridge.example:8443/simplefin/accounts?start-date=1").unwrap();
        assert_eq!(
            request_target(&url),
            ("/simplefin/accounts?start-date=1".to_owned(), "bridge.example:8443".to_owned())
        );
        let url = Url::parse("https://[::1]/x").unwrap();
        assert_eq!(request_target(&url), ("/x".to_owned(), "[::1]".to_owned()));
    }

    #[test]
    fn an_extra_authority_must_be_a_certificate() {
        assert!(tls_connector(&[]).is_ok());
        assert!(tls_connector(&[b"not a certificate".to_vec()]).is_err());
    }
}
