//! Which network addresses Exhale connects to on someone's behalf: the one rule behind the
//! client metadata fetcher (`oauth`) and the senders of members' webhooks and ntfy messages
//! (`channels`), so a URL someone typed cannot reach this machine or its network unless an
//! owner allowed it.

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
        // IPv4-translated (64:ff9b::/96, 64:ff9b:1::/48): an IPv4 address in disguise.
        || (s[0] == 0x64 && s[1] == 0xff9b && (s[2..6] == [0; 4] || s[2] == 1))
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

/// Whether a host as written names this machine or the local network: an address
/// [`may_connect`] refuses, `localhost`, a name without a dot, or a local-only suffix.
pub fn is_local_host(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']).trim_end_matches('.').to_ascii_lowercase();
    if let Ok(ip) = host.parse::<IpAddr>() {
        return !may_connect(ip, false);
    }
    !host.contains('.')
        || [".localhost", ".local", ".lan", ".home.arpa", ".internal", ".localdomain"]
            .iter()
            .any(|suffix| host.ends_with(suffix))
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
        for local in
            ["localhost", "homeassistant.local", "nas", "[::1]", "192.168.1.20", "box.home.arpa"]
        {
            assert!(is_local_host(local), "{local}");
        }
        for public in ["ntfy.sh", "hooks.example.net", "93.184.215.14"] {
            assert!(!is_local_host(public), "{public}");
        }
    }
}
