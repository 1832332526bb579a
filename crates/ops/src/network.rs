//! Which network addresses Exhale connects to on someone's behalf: the one rule behind the
//! client metadata fetcher (`oauth`) and the senders of members' webhooks and ntfy messages
//! (`channels`), so a URL someone typed cannot reach this machine or its network unless an
//! owner allowed it. A URL is read once, the way the senders read it (`read_url`), so what is
//! checked when an address is saved is what is connected to when a message is sent: a host
//! written `0177.0.0.1`, `127.1`, `0x7f.1`, `127.0.0.1%2e` or in full-width digits is
//! `127.0.0.1` both times.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether Exhale may connect to `ip` on someone's behalf (a client metadata document, a
/// member's webhook or ntfy server): a public unicast address (RFC 6890's special-use ranges
/// refused, IPv4 inside IPv6 unwrapped), or loopback when allowed.
pub fn may_connect(ip: IpAddr, allow_loopback: bool) -> bool {
    if ip.is_loopback() {
        return allow_loopback;
    }
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return may_connect(IpAddr::V4(v4), allow_loopback);
            }
            public_v6(v6)
        }
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 192 && b == 168)
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224;
    !special
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        // IPv4-translated (64:ff9b::/96, 64:ff9b:1::/48, and SIIT's ::ffff:0:a.b.c.d in
        // ::ffff:0:0:0/96): an IPv4 address in disguise. (IPv4-mapped ::ffff:a.b.c.d is read
        // as its IPv4 address above.)
        || (s[0] == 0x64 && s[1] == 0xff9b && (s[2..6] == [0; 4] || s[2] == 1))
        || (s[0..4] == [0; 4] && s[4] == 0xffff && s[5] == 0)
        || (s[0] == 0x100 && s[1..4] == [0; 3])
        || (s[0] == 0x2001 && s[1] < 0x200)
        || (s[0] == 0x2001 && s[1] == 0xdb8)
        // 6to4 (2002::/16) carries an IPv4 address too.
        || s[0] == 0x2002
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        // Site-local (fec0::/10): deprecated, but still routed inside some networks.
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] & 0xff00) == 0xff00
        // IPv4-compatible (::a.b.c.d), long deprecated.
        || s[0..6] == [0; 6];
    !special
}

/// A URL as Exhale's senders read it to connect (the WHATWG URL standard, which browsers
/// follow too): the one reading behind checking an address when it is saved and connecting to
/// it when it is used. `None` when it cannot be read.
pub fn read_url(text: &str) -> Option<url::Url> {
    url::Url::parse(text).ok()
}

/// Whether a URL's host, as [`read_url`] reads it, names this machine or the local network: an
/// address [`may_connect`] refuses, in whichever form the URL wrote it; `localhost`, a name
/// without a dot, or a local-only suffix; or no host at all.
pub fn is_local_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => !may_connect(IpAddr::V4(ip), false),
        Some(url::Host::Ipv6(ip)) => !may_connect(IpAddr::V6(ip), false),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !name.contains('.')
                || [".localhost", ".local", ".lan", ".home.arpa", ".internal", ".localdomain"]
                    .iter()
                    .any(|suffix| name.ends_with(suffix))
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn special_use_addresses_are_refused_in_every_disguise() {
        for refused in [
            "0.0.0.0",
            "10.0.0.1",
            "100.64.0.1",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "2002:7f00:1::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::127.0.0.1",
        ] {
            assert!(!may_connect(ip(refused), false), "{refused}");
        }
        for public in ["93.184.215.14", "160.79.104.10", "2606:4700::6810:85e5", "::ffff:8.8.8.8"] {
            assert!(may_connect(ip(public), false), "{public}");
        }
        assert!(may_connect(ip("127.0.0.1"), true) && may_connect(ip("::1"), true));
        assert!(!may_connect(ip("10.0.0.1"), true), "the loopback carve-out is loopback only");
    }

    #[test]
    fn local_names_and_addresses_are_local() {
        for local in [
            "localhost",
            "homeassistant.local",
            "nas",
            "[::1]",
            "192.168.1.20",
            "box.home.arpa",
            "LOCALHOST.",
        ] {
            let url = read_url(&format!("https://{local}/x")).unwrap();
            assert!(is_local_url(&url), "{local}");
        }
        for public in ["ntfy.sh", "hooks.example.net", "93.184.215.14"] {
            let url = read_url(&format!("https://{public}/x")).unwrap();
            assert!(!is_local_url(&url), "{public}");
        }
    }

    /// The forms a URL may write an IPv4 address in: dotted decimal, fewer parts, octal parts
    /// (a leading zero, as many as wanted) and hexadecimal ones, one number, a trailing dot
    /// plain or percent-encoded, and full-width digits.
    fn written_forms(ip: Ipv4Addr) -> Vec<String> {
        let [a, b, c, d] = ip.octets();
        let n = u32::from(ip);
        let full_width = |text: &str| -> String {
            text.chars()
                .map(|ch| match ch {
                    '0'..='9' => char::from_u32(0xFF10 + (ch as u32 - '0' as u32)).unwrap_or(ch),
                    '.' => '\u{FF0E}',
                    other => other,
                })
                .collect()
        };
        vec![
            format!("{a}.{b}.{c}.{d}"),
            format!("{a}.{}", n & 0xFF_FFFF),
            format!("{a}.{b}.{}", n & 0xFFFF),
            format!("{n}"),
            format!("0{a:o}.0{b:o}.0{c:o}.0{d:o}"),
            format!("0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}"),
            format!("0x{n:x}"),
            format!("00{a:o}.000{b:o}.0{c:o}.0000{d:o}"),
            format!("{a}.{b}.{c}.{d}."),
            format!("{a}.{b}.{c}.{d}%2e"),
            full_width(&format!("{a}.{b}.{c}.{d}")),
        ]
    }

    /// Property: a special-use IPv4 address is local however a URL writes it, a public one is
    /// not, and every form that can be read is read as the address (for a spread of each).
    #[test]
    fn every_written_form_of_an_address_is_read_as_that_address() {
        let special = [
            "127.0.0.1",
            "127.1.2.3",
            "10.9.8.7",
            "169.254.169.254",
            "192.168.0.1",
            "172.16.5.4",
            "100.64.0.1",
            "0.0.0.0",
        ];
        let public = ["93.184.215.14", "8.8.8.8", "160.79.104.10"];
        for (addresses, local) in [(&special[..], true), (&public[..], false)] {
            for address in addresses {
                let ip: Ipv4Addr = address.parse().unwrap();
                for form in written_forms(ip) {
                    // A form no one can read (`009` is no octal number) is refused when saved
                    // and could not be sent to either.
                    let Some(url) = read_url(&format!("https://{form}/hook")) else { continue };
                    assert_eq!(url.host(), Some(url::Host::Ipv4(ip)), "{form}");
                    assert_eq!(is_local_url(&url), local, "{form}");
                }
            }
        }
        // What the outside test saved, one by one.
        for form in [
            "0177.0.0.1",
            "127.1",
            "0x7f.1",
            "127.000.000.001",
            "127.0.0.1%2e",
            "\u{FF11}\u{FF12}\u{FF17}.0.0.1",
            "0251.0376.0251.0376",
        ] {
            let url = read_url(&format!("https://{form}/hook")).unwrap();
            assert!(is_local_url(&url), "{form}");
        }
        // IPv6 forms of IPv4 addresses: mapped, compatible, SIIT's translated, NAT64's.
        for form in [
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[::127.0.0.1]",
            "[::ffff:0:7f00:1]",
            "[::ffff:0:a9fe:a9fe]",
            "[64:ff9b::7f00:1]",
        ] {
            let url = read_url(&format!("https://{form}/hook")).unwrap();
            assert!(is_local_url(&url), "{form}");
        }
    }
}
