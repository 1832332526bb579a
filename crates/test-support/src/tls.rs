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
        use base64::Engine as _;
        let pem = |label: &str, der: &[u8]| {
            let text = base64::engine::general_purpose::STANDARD.encode(der);
            let lines: Vec<&str> = text
                .as_bytes()
                .chunks(64)
                .map(|line| std::str::from_utf8(line).expect("base64 is ASCII"))
                .collect();
            format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
        };
        for (name, label, der) in [
            ("ca.pem", "CERTIFICATE", &self.der),
            ("server.crt", "CERTIFICATE", &self.server_der),
            ("server.key", "PRIVATE KEY", &self.server_key_der),
        ] {
            std::fs::write(dir.join(name), pem(label, der)).expect("write a PEM file");
        }
    }
}
