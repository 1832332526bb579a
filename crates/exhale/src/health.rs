//! `exhale healthcheck`: asks the server on this configuration's address for `/healthz`, by
//! hand over a plain TCP connection, for a container's health check (its image has no curl,
//! no shell, nothing but Exhale). Never opens the database.

use std::{
    io::{Read, Write},
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream},
    process::ExitCode,
    time::Duration,
};

/// How long the server has to answer: a health check's own timeout is longer.
const WAIT: Duration = Duration::from_secs(3);

/// 0 when the server listening on `listen` answers `/healthz` with 200, 1 otherwise (what it
/// said, or why it could not be asked, on standard error).
pub(crate) fn check(listen: SocketAddr) -> ExitCode {
    match ask(reachable(listen)) {
        Ok(status) if status.starts_with("HTTP/1.1 200") => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!("exhale: /healthz answered {status}");
            ExitCode::from(1)
        }
        Err(err) => {
            eprintln!("exhale: cannot ask {listen} for /healthz: {err}");
            ExitCode::from(1)
        }
    }
}

/// Where to reach a server listening on `listen`: on every address means on loopback too.
fn reachable(listen: SocketAddr) -> SocketAddr {
    match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, listen.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, listen.port()).into(),
        _ => listen,
    }
}

/// The status line of the answer to `GET /healthz`.
fn ask(address: SocketAddr) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&address, WAIT)?;
    stream.set_read_timeout(Some(WAIT))?;
    stream.set_write_timeout(Some(WAIT))?;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut answer = Vec::new();
    stream.take(4096).read_to_end(&mut answer)?;
    let text = String::from_utf8_lossy(&answer);
    Ok(text.lines().next().unwrap_or_default().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_is_asked_on_loopback() {
        let port = 8080;
        assert_eq!(reachable(([0, 0, 0, 0], port).into()), ([127, 0, 0, 1], port).into());
        assert_eq!(reachable("[::]:8080".parse().unwrap()), "[::1]:8080".parse().unwrap());
        assert_eq!(reachable(([10, 0, 0, 2], port).into()), ([10, 0, 0, 2], port).into());
    }
}
