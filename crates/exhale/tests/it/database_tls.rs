//! TLS to PostgreSQL, as libpq's `sslmode` says: `exhale check` against a cluster of the
//! test's own that takes connections on localhost only over TLS, with a certificate for
//! `localhost` from an authority the test made. These run on PostgreSQL in both passes.

use test_support::{DataDir, TestAuthority};

use crate::cli::check_at;

#[test]
fn exhale_reaches_postgres_over_tls_as_sslmode_says_and_refuses_a_server_it_cannot_trust() {
    let authority = TestAuthority::for_localhost();
    let (dir, url) = DataDir::postgres_over_tls(&authority);
    let ca = dir.path().join("ca.pem");
    let ca = ca.display();
    let connects = |url: &str| {
        let (code, said) = check_at(&dir, url);
        assert_eq!(code, Some(0), "{url}: {said}");
    };
    let refused = |url: &str| {
        let (code, said) = check_at(&dir, url);
        assert_ne!(code, Some(0), "{url} connected");
        said
    };

    // The server takes nothing in the clear.
    let said = refused(&format!("{url} sslmode=disable"));
    assert!(said.contains("no pg_hba.conf entry") && said.contains("no encryption"), "{said}");
    assert!(said.contains("sslmode=verify-full"), "{said}");

    // Checked against the authority, for the host named: in both forms of the URL.
    connects(&format!("{url} sslmode=verify-full sslrootcert={ca}"));
    let (port, name) = (field(&url, "port"), field(&url, "dbname"));
    let user = test_support::database::ROLE;
    let encoded = ca.to_string().replace('/', "%2F");
    connects(&format!(
        "postgres://{user}@localhost:{port}/{name}?sslmode=verify-full&sslrootcert={encoded}"
    ));

    // Without the authority, the Mozilla roots do not vouch for the certificate: refused,
    // with what to add.
    let said = refused(&format!("{url} sslmode=verify-full"));
    assert!(said.contains("certificate") && said.contains("sslrootcert="), "{said}");

    // The certificate is for localhost, not for 127.0.0.1: verify-full refuses the name,
    // verify-ca checks the authority alone.
    let by_address = url.replace("host=localhost", "host=127.0.0.1");
    let said = refused(&format!("{by_address} sslmode=verify-full sslrootcert={ca}"));
    assert!(said.contains("certificate"), "{said}");
    connects(&format!("{by_address} sslmode=verify-ca sslrootcert={ca}"));

    // require and prefer (the default) encrypt without checking whose certificate it is, as
    // libpq does; this server refuses anything unencrypted, so connecting shows they did.
    connects(&format!("{url} sslmode=require"));
    connects(&url);

    // A mode libpq does not have, and an authority file that is not one, say what to write.
    let said = refused(&format!("{url} sslmode=verify"));
    assert!(said.contains("verify-full"), "{said}");
    let said = refused(&format!(
        "{url} sslmode=verify-full sslrootcert={}/server.key",
        dir.path().display()
    ));
    assert!(said.contains("server.key") && said.contains("PEM"), "{said}");
}

/// The value of `key` in a `key=value` connection string.
fn field<'a>(url: &'a str, key: &str) -> &'a str {
    url.split_whitespace()
        .find_map(|pair| pair.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {url}"))
}
