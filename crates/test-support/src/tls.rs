//! A certificate authority of a test's own, for local HTTPS (and TLS to PostgreSQL) that the
//! code under test trusts through it alone.

use std::{path::Path, sync::Arc};

/// A certificate authority made for one test, and a TLS acceptor for `localhost` it signed: a
/// local HTTPS server that the code under test trusts through this authority alone.
pub struct TestAuthority {
    /// The authority's certificate (DER), for the client to trust.
    pub der: Vec<u8>,
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// The server's certificate and its PKCS #8 key (DER), for a server of another program.
    pub server_der: Vec<u8>,
    pub server_key_der: Vec<u8>,
}

impl TestAuthority {
    pub fn for_localhost() -> Self {
        let authority_key = rcgen::KeyPair::generate().expect("an authority key");
        let mut params =
            rcgen::CertificateParams::new(Vec::<String>::new()).expect("authority parameters");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let authority =
            rcgen::CertifiedIssuer::self_signed(params, authority_key).expect("the authority");
        let key = rcgen::KeyPair::generate().expect("a server key");
        let certificate = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .expect("server parameters")
            .signed_by(&key, &authority)
            .expect("the server certificate");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![certificate.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("the server's TLS configuration");
        Self {
            der: authority.der().to_vec(),
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            server_der: certificate.der().to_vec(),
            server_key_der: key.serialize_der(),
        }
    }

    /// Writes the authority's certificate (`ca.pem`), the server's (`server.crt`) and its key
    /// (`server.key`) into `dir`, as PEM files.
    pub fn write_pem_files(&self, dir: &Path) {
        for (name, label, der) in [
            ("ca.pem", "CERTIFICATE", &self.der),
            ("server.crt", "CERTIFICATE", &self.server_der),
            ("server.key", "PRIVATE KEY", &self.server_key_der),
        ] {
            std::fs::write(dir.join(name), pem(label, der)).expect("write a PEM file");
        }
    }
}

/// `der` as a PEM block labelled `label`.
pub(crate) fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).expect("base64 is ASCII"))
        .collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

impl TestAuthority {
    /// An HTTPS server for `localhost`, on 127.0.0.1 at the port it returns: each
    /// connection's request (its head, and the body its Content-Length announces) goes to
    /// `answer`, whose reply is written back and the connection closed. `None` leaves the
    /// request unanswered, as a server that hangs.
    pub async fn serve<F, Fut>(&self, answer: F) -> (u16, tokio::task::JoinHandle<()>)
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Option<String>> + Send,
    {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("a local address").port();
        let (acceptor, answer) = (self.acceptor.clone(), Arc::new(answer));
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, answer) = (acceptor.clone(), answer.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    // And the body its Content-Length announces, after the head.
                    while head.len() < announced_length(&head) {
                        match tls.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let Some(reply) = answer(String::from_utf8_lossy(&head).into_owned()).await
                    else {
                        std::future::pending::<()>().await;
                        return;
                    };
                    let _ = tls.write_all(reply.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        (port, task)
    }
}

/// How long a request read so far is in all: its head and the body its Content-Length says.
fn announced_length(read: &[u8]) -> usize {
    let text = String::from_utf8_lossy(read);
    let Some(end) = text.find("\r\n\r\n") else { return usize::MAX };
    let length = text[..end]
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim().eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    end + 4 + length
}

/// An HTTP/1.1 reply that closes the connection: the status, the headers and the body.
pub fn http_reply(status: u16, headers: &[(&str, &str)], body: &str) -> String {
    let mut reply =
        format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (name, value) in headers {
        reply.push_str(&format!("{name}: {value}\r\n"));
    }
    reply.push_str("\r\n");
    reply.push_str(body);
    reply
}
