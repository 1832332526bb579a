//! Where a PostgreSQL database is and how to reach it: the database URL in either of libpq's
//! forms (`postgres://user:password@host/db?…` or `host=… dbname=…`), and TLS as libpq's
//! `sslmode` and `sslrootcert` say, on rustls:
//!
//! - `disable`: never;
//! - `prefer` (the default, as libpq's): when the server offers it, its certificate unchecked;
//! - `require`: always, the certificate unchecked (encrypted, but not proof of whose server);
//! - `verify-ca`: always, the certificate signed by a trusted authority, any name;
//! - `verify-full`: always, a trusted certificate for the host named in the URL.
//!
//! The trusted authorities are those in the PEM file `sslrootcert` names, else the Mozilla
//! roots every browser trusts (enough for a managed server with a public certificate). A Unix
//! socket is never encrypted, as with libpq.

use std::{
    future::Future,
    io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use postgres::{
    Client, Socket,
    config::SslMode,
    tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream},
};
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::WebPkiSupportedAlgorithms,
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject as _},
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::{Result, StoreError};

/// A database to connect to: the server's address and credentials, and how to secure the
/// connection.
#[derive(Clone)]
pub(crate) struct Endpoint {
    config: postgres::Config,
    tls: Tls,
    /// The URL's `sslmode`, to say what was asked when a connection fails.
    mode: Mode,
}

/// libpq's `sslmode` values Exhale honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Result<Self> {
        Ok(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => {
                return Err(StoreError::Config(format!(
                    "the database URL's sslmode is {other:?}; write disable, prefer, require, verify-ca or verify-full (verify-full checks the server is the one named)"
                )));
            }
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    fn verifies(self) -> bool {
        matches!(self, Self::VerifyCa | Self::VerifyFull)
    }
}

impl Endpoint {
    /// Reads a database URL; refuses one PostgreSQL's client could not use, or whose
    /// `sslrootcert` cannot be read, saying what to write instead.
    pub(crate) fn parse(url: &str) -> Result<Self> {
        let (rest, ssl) = take_ssl_parameters(url)?;
        let mut config: postgres::Config = rest.parse().map_err(|err: postgres::Error| {
            StoreError::Config(format!(
                "the database URL is not a PostgreSQL URL ({err}); write it as postgres://user:password@host:5432/database"
            ))
        })?;
        let mode = ssl.mode.map(|m| Mode::parse(&m)).transpose()?.unwrap_or(Mode::Prefer);
        if ssl.root_cert.is_some() && !mode.verifies() {
            return Err(StoreError::Config(
                "the database URL names an sslrootcert but its sslmode does not check certificates; add sslmode=verify-full".into(),
            ));
        }
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        });
        let tls = Tls::new(mode, ssl.root_cert.as_deref())?;
        Ok(Self { config, tls, mode })
    }

    /// A new connection, ready for Exhale's statements.
    pub(crate) fn connect(&self) -> std::result::Result<Client, postgres::Error> {
        let mut client = self.config.connect(self.tls.clone())?;
        // Exhale's statements each read a page or a few rows: compiling one (JIT, on by
        // default since PostgreSQL 12, for plans the server estimates dear) took 211 ms for a
        // page the server then read in 0.8 ms.
        client.batch_execute("SET jit = off")?;
        Ok(client)
    }

    /// What to say at start when the server is on another machine and nothing checks that it
    /// is the server meant: the password and every household's data would go to whoever
    /// answers.
    pub(crate) fn unchecked_remote_server(&self) -> Option<String> {
        let remote: Vec<&str> = self
            .config
            .get_hosts()
            .iter()
            .filter_map(|host| match host {
                postgres::config::Host::Tcp(name)
                    if !matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1") =>
                {
                    Some(name.as_str())
                }
                _ => None,
            })
            .collect();
        (!remote.is_empty() && !self.mode.verifies()).then(|| {
            format!(
                "the connection to PostgreSQL at {} does not check the server's certificate (sslmode={}); add sslmode=verify-full to the database URL, with sslrootcert=/path/to/ca.pem unless a public authority signed it",
                remote.join(", "),
                self.mode.as_str()
            )
        })
    }

    /// Why a connection could not be made, with what to check.
    pub(crate) fn unreachable(&self, err: &postgres::Error) -> StoreError {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|host| match host {
                postgres::config::Host::Tcp(name) => name.clone(),
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let cause = err.as_db_error().map_or_else(
            || {
                // The TLS error is the source; postgres's own text says only "TLS handshake".
                let mut text = err.to_string();
                let mut source = std::error::Error::source(err);
                while let Some(inner) = source {
                    text = format!("{text}: {inner}");
                    source = inner.source();
                }
                text
            },
            |db| db.message().to_owned(),
        );
        let fix = if cause.contains("no encryption") {
            "the server takes only encrypted connections: set sslmode=verify-full (or require) in the database URL"
        } else if cause.contains("certificate") && self.mode.verifies() {
            "the server's certificate was not trusted: name the file of the authority that signed it with sslrootcert=/path/to/ca.pem in the database URL, and use the host name its certificate is for (or sslmode=verify-ca to check the authority alone)"
        } else if cause.contains("TLS") || cause.contains("SSL") {
            "the server and the URL's sslmode disagree on TLS: set ssl = on on the server, or change sslmode in the database URL"
        } else {
            "check that the server runs and that the database URL (EXHALE_DATABASE_URL) names the right host, user, password and database"
        };
        StoreError::Unavailable(format!(
            "cannot connect to PostgreSQL at {} ({cause}); {fix}",
            hosts.join(", ")
        ))
    }
}

/// The TLS parameters Exhale reads itself (PostgreSQL's Rust client knows neither
/// `verify-*` nor `sslrootcert`).
#[derive(Default)]
struct SslParameters {
    mode: Option<String>,
    root_cert: Option<String>,
}

/// The URL without `sslmode` and `sslrootcert`, and their values.
fn take_ssl_parameters(url: &str) -> Result<(String, SslParameters)> {
    let mut ssl = SslParameters::default();
    let mut keep = |key: &str, value: String| match key {
        "sslmode" => {
            ssl.mode = Some(value);
            false
        }
        "sslrootcert" => {
            ssl.root_cert = Some(value);
            false
        }
        _ => true,
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else { return Ok((url.to_owned(), ssl)) };
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                keep(key, percent_decoded(value))
            })
            .collect();
        if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) }
    } else {
        let mut kept = Vec::new();
        for (key, value, written) in key_values(url)? {
            if keep(&key, value) {
                kept.push(written);
            }
        }
        kept.join(" ")
    };
    Ok((rest, ssl))
}

/// `%XX` escapes decoded (a path in a URL's query may be written with them).
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// libpq's `key=value` form: each pair's key, value (unquoted, unescaped) and text as
/// written. Values may be quoted with `'`, and `\` escapes the next character.
fn key_values(text: &str) -> Result<Vec<(String, String, String)>> {
    let malformed = || {
        StoreError::Config(
            "the database URL is not a PostgreSQL URL (a key without = and a value); write it as postgres://user:password@host:5432/database".into(),
        )
    };
    let mut pairs = Vec::new();
    let mut chars = text.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else { break };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        chars.next_if(|(_, c)| *c == '=').ok_or_else(malformed)?;
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
        let mut value = String::new();
        let mut end = text.len();
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, c)| c)),
                '\'' if quoted => {
                    end = at + 1;
                    break;
                }
                c if c.is_whitespace() && !quoted => {
                    end = at;
                    break;
                }
                c => value.push(c),
            }
        }
        pairs.push((key, value, text[start..end].to_owned()));
    }
    Ok(pairs)
}

/// rustls, set up for one `sslmode`.
#[derive(Clone)]
struct Tls(Arc<ClientConfig>);

impl Tls {
    fn new(mode: Mode, root_cert: Option<&str>) -> Result<Self> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|err| StoreError::Config(format!("TLS cannot be set up: {err}")))?;
        let mut config = if mode.verifies() {
            let roots = Arc::new(trusted_roots(root_cert)?);
            let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|err| StoreError::Config(format!("TLS cannot be set up: {err}")))?;
            let verifier: Arc<dyn ServerCertVerifier> =
                if mode == Mode::VerifyFull { verifier } else { Arc::new(AnyName(verifier)) };
            builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth()
        } else {
            let algorithms = provider.signature_verification_algorithms;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(algorithms)))
                .with_no_client_auth()
        };
        // PostgreSQL 17 asks for it when a client goes straight to TLS; harmless before.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Self(Arc::new(config)))
    }
}

/// The authorities in the PEM file at `path`, else the Mozilla roots.
fn trusted_roots(path: Option<&str>) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let Some(path) = path else {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    };
    let unreadable = |why: String| {
        StoreError::Config(format!(
            "the database URL's sslrootcert {path} cannot be used ({why}); name a PEM file of the authority that signed the server's certificate"
        ))
    };
    let pem = std::fs::read(path).map_err(|err| unreadable(err.to_string()))?;
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|err| unreadable(err.to_string()))?;
        roots.add(cert).map_err(|err| unreadable(err.to_string()))?;
    }
    if roots.is_empty() {
        return Err(unreadable("it holds no certificate".into()));
    }
    Ok(roots)
}

/// `verify-ca`: a certificate a trusted authority signed, for whatever name.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require`: any certificate, as libpq; the handshake's signatures are still
/// checked, so the connection is encrypted to whoever holds the certificate's key.
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

impl MakeTlsConnect<Socket> for Tls {
    type Stream = Encrypted;
    type TlsConnect = Handshake;
    type Error = std::convert::Infallible;

    fn make_tls_connect(&mut self, host: &str) -> std::result::Result<Handshake, Self::Error> {
        // Asked for every host, a Unix socket's directory too, which is never encrypted: a
        // host that is not a name fails only if a handshake is attempted with it.
        let name = ServerName::try_from(host.to_owned()).ok();
        Ok(Handshake { config: self.0.clone(), name })
    }
}

/// The TLS handshake with one host.
pub(crate) struct Handshake {
    config: Arc<ClientConfig>,
    name: Option<ServerName<'static>>,
}

impl TlsConnect<Socket> for Handshake {
    type Stream = Encrypted;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Encrypted>> + Send>>;

    fn connect(self, socket: Socket) -> Self::Future {
        let connector = tokio_rustls::TlsConnector::from(self.config);
        Box::pin(async move {
            let name = self.name.ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "the host is not a name TLS can check")
            })?;
            connector.connect(name, socket).await.map(Encrypted)
        })
    }
}

/// A connection to the server, encrypted.
pub(crate) struct Encrypted(tokio_rustls::client::TlsStream<Socket>);

impl TlsStream for Encrypted {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM without channel binding, as a client that cannot bind: the server accepts it
        // unless told to require binding.
        ChannelBinding::none()
    }
}

impl AsyncRead for Encrypted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Encrypted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(url: &str) -> (String, Option<String>, Option<String>) {
        let (rest, ssl) = take_ssl_parameters(url).unwrap();
        (rest, ssl.mode, ssl.root_cert)
    }

    #[test]
    fn the_tls_parameters_are_taken_from_either_form_and_the_rest_is_left_as_written() {
        assert_eq!(
            taken(
                "postgres://u:p@db:5432/x?sslmode=verify-full&application_name=a&sslrootcert=%2Fetc%2Fca%20one.pem"
            ),
            (
                "postgres://u:p@db:5432/x?application_name=a".into(),
                Some("verify-full".into()),
                Some("/etc/ca one.pem".into())
            )
        );
        assert_eq!(
            taken("postgresql://db/x?sslmode=require"),
            ("postgresql://db/x".into(), Some("require".into()), None)
        );
        assert_eq!(taken("postgres://db/x"), ("postgres://db/x".into(), None, None));
        assert_eq!(
            taken(
                "host=db  password='a b\\'c' sslmode = verify-ca sslrootcert='/a b/ca.pem' dbname=x"
            ),
            (
                "host=db password='a b\\'c' dbname=x".into(),
                Some("verify-ca".into()),
                Some("/a b/ca.pem".into())
            )
        );
        assert!(take_ssl_parameters("host=db dbname").is_err());
    }

    #[test]
    fn an_unknown_sslmode_or_a_root_without_checking_is_refused_with_what_to_write() {
        let Err(StoreError::Config(message)) = Endpoint::parse("postgres://db/x?sslmode=verify")
        else {
            panic!("refused")
        };
        assert!(message.contains("verify-full"), "{message}");
        let Err(StoreError::Config(message)) =
            Endpoint::parse("postgres://db/x?sslmode=require&sslrootcert=/ca.pem")
        else {
            panic!("refused")
        };
        assert!(message.contains("sslmode=verify-full"), "{message}");
        let Err(StoreError::Config(message)) =
            Endpoint::parse("postgres://db/x?sslmode=verify-full&sslrootcert=/no/such/ca.pem")
        else {
            panic!("refused")
        };
        assert!(message.contains("/no/such/ca.pem"), "{message}");
        assert!(Endpoint::parse("postgres://db/x?sslmode=verify-full").is_ok());
    }

    #[test]
    fn a_server_on_another_machine_unchecked_is_warned_of() {
        let warning = |url: &str| Endpoint::parse(url).unwrap().unchecked_remote_server();
        let said = warning("postgres://db.example.net/x").unwrap();
        assert!(said.contains("db.example.net") && said.contains("sslmode=prefer"), "{said}");
        assert!(warning("postgres://db.example.net/x?sslmode=require").is_some());
        assert_eq!(warning("postgres://db.example.net/x?sslmode=verify-full"), None);
        assert_eq!(warning("postgres://localhost/x"), None);
        assert_eq!(warning("host=/run/postgresql dbname=x"), None);
    }
}
