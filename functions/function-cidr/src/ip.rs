//! IP networks as Go's `net.ParseCIDR` reads them and `net.IP.String` /
//! `net.IPNet.String` print them, on `u128` (IPv4 in the low 32 bits).

/// A network: its (masked) address, the address length and the prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Net {
    /// The address; only the low `bits` bits are used.
    pub ip: u128,
    /// 32 for IPv4, 128 for IPv6.
    pub bits: u32,
    /// The prefix length.
    pub prefix: u32,
}

/// The mask of `prefix` ones in an address of `bits` bits.
pub fn mask(prefix: u32, bits: u32) -> u128 {
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    match prefix {
        0 => 0,
        p if p >= bits => all,
        p => all & !(all >> p),
    }
}

impl Net {
    /// The network's last address.
    pub fn last(&self) -> u128 {
        self.ip | (mask(self.bits, self.bits) & !mask(self.prefix, self.bits))
    }

    /// Whether `ip` (of the same length) is in the network.
    pub fn contains(&self, ip: u128) -> bool {
        ip & mask(self.prefix, self.bits) == self.ip
    }

    /// `net.IPNet.String`.
    pub fn to_go_string(&self) -> String {
        if self.bits == 128 && is_v4_mapped(self.ip) && self.prefix >= 96 {
            return format!("{}/{}", fmt_v4(self.ip as u32), self.prefix - 96);
        }
        format!("{}/{}", fmt_ip(self.ip, self.bits), self.prefix)
    }
}

fn is_v4_mapped(ip: u128) -> bool {
    ip >> 32 == 0xffff
}

fn fmt_v4(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// `net.IP.String` of an address of `bits` bits (an IPv4-mapped IPv6
/// address prints as IPv4, as Go prints it).
pub fn fmt_ip(ip: u128, bits: u32) -> String {
    if bits == 32 {
        return fmt_v4(ip as u32);
    }
    if is_v4_mapped(ip) {
        return fmt_v4(ip as u32);
    }
    let groups: Vec<u16> = (0..8).map(|i| (ip >> (112 - 16 * i)) as u16).collect();
    // The longest run of zero groups, two or more, the first of equals.
    let (mut best, mut best_len) = (8, 0);
    let mut i = 0;
    while i < 8 {
        let start = i;
        while i < 8 && groups[i] == 0 {
            i += 1;
        }
        if i - start > best_len && i - start >= 2 {
            best = start;
            best_len = i - start;
        }
        i += 1;
    }
    let mut out = String::new();
    let mut i = 0;
    while i < 8 {
        if i == best {
            out.push_str("::");
            i += best_len;
            continue;
        }
        if !out.is_empty() && !out.ends_with(':') {
            out.push(':');
        }
        out.push_str(&format!("{:x}", groups[i]));
        i += 1;
    }
    out
}

fn parse_v4(s: &str) -> Option<u32> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = 0u32;
    for p in parts {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if p.len() > 1 && p.starts_with('0') {
            return None;
        }
        let v: u32 = p.parse().ok()?;
        if v > 255 {
            return None;
        }
        out = out << 8 | v;
    }
    Some(out)
}

fn parse_v6(s: &str) -> Option<u128> {
    if s.contains('%') {
        return None;
    }
    let (head, tail) = match s.find("::") {
        Some(i) => (&s[..i], Some(&s[i + 2..])),
        None => (s, None),
    };
    if tail.is_some_and(|t| t.contains("::")) {
        return None;
    }
    let groups = |part: &str, last: bool| -> Option<Vec<u16>> {
        if part.is_empty() {
            return Some(Vec::new());
        }
        let fields: Vec<&str> = part.split(':').collect();
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if last && i == fields.len() - 1 && f.contains('.') {
                let v4 = parse_v4(f)?;
                out.push((v4 >> 16) as u16);
                out.push(v4 as u16);
            } else {
                if f.is_empty() || f.len() > 4 || !f.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                out.push(u16::from_str_radix(f, 16).ok()?);
            }
        }
        Some(out)
    };
    let h = groups(head, tail.is_none())?;
    let t = match tail {
        Some(t) => groups(t, true)?,
        None => Vec::new(),
    };
    let all: Vec<u16> = match tail {
        None if h.len() == 8 => h,
        None => return None,
        Some(_) if h.len() + t.len() < 8 => {
            let mut v = h.clone();
            v.extend(std::iter::repeat_n(0, 8 - h.len() - t.len()));
            v.extend(t);
            v
        }
        Some(_) => return None,
    };
    Some(all.iter().fold(0u128, |acc, g| acc << 16 | u128::from(*g)))
}

/// Go's `net.ParseCIDR`: the network (address masked). The error is Go's
/// `invalid CIDR address: <s>`; an IPv4-mapped IPv6 address is refused as
/// unsupported (Go would keep it 16 bytes long and print it as IPv4).
pub fn parse_cidr(s: &str) -> Result<Net, String> {
    let invalid = || format!("invalid CIDR address: {s}");
    let (addr, len) = s.split_once('/').ok_or_else(invalid)?;
    let (ip, bits) = if let Some(v4) = parse_v4(addr) {
        (u128::from(v4), 32)
    } else if addr.contains(':') {
        let v6 = parse_v6(addr).ok_or_else(invalid)?;
        if is_v4_mapped(v6) {
            return Err(format!(
                "IPv4-mapped IPv6 prefixes ({s}) are not supported by xfn's port of function-cidr"
            ));
        }
        (v6, 128)
    } else {
        return Err(invalid());
    };
    // Go's dtoi: decimal digits only, capped.
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 8 {
        return Err(invalid());
    }
    let prefix: u32 = len.parse().map_err(|_| invalid())?;
    if prefix > bits {
        return Err(invalid());
    }
    Ok(Net {
        ip: ip & mask(prefix, bits),
        bits,
        prefix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print_like_go() {
        let n = parse_cidr("10.1.2.3/16").unwrap();
        assert_eq!(n.to_go_string(), "10.1.0.0/16");
        let n = parse_cidr("2001:DB8:0:0:1::1/64").unwrap();
        assert_eq!(n.to_go_string(), "2001:db8::/64");
        assert_eq!(
            fmt_ip(parse_v6("1:0:0:2:0:0:0:3").unwrap(), 128),
            "1:0:0:2::3"
        );
        assert_eq!(
            fmt_ip(parse_v6("1:0:2:3:4:5:6:7").unwrap(), 128),
            "1:0:2:3:4:5:6:7"
        );
        assert_eq!(fmt_ip(0, 128), "::");
        assert_eq!(fmt_ip(1, 128), "::1");
        assert_eq!(fmt_ip(parse_v6("::ffff:1.2.3.4").unwrap(), 128), "1.2.3.4");
        assert_eq!(
            parse_cidr("10.0.0.0").unwrap_err(),
            "invalid CIDR address: 10.0.0.0"
        );
        assert_eq!(
            parse_cidr("10.0.0.0/33").unwrap_err(),
            "invalid CIDR address: 10.0.0.0/33"
        );
        assert_eq!(
            parse_cidr("010.0.0.0/8").unwrap_err(),
            "invalid CIDR address: 010.0.0.0/8"
        );
        assert_eq!(
            parse_cidr("10.0.0.0/+8").unwrap_err(),
            "invalid CIDR address: 10.0.0.0/+8"
        );
    }
}
