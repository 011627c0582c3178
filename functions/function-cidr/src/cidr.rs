//! The CIDR functions of upbound/function-cidr (`cidrhost.go`,
//! `cidrnetmask.go`, `cidrsubnet.go`, `cidrsubnets.go`) and the parts of
//! apparentlymart/go-cidr v1.1.0 they use, with their error messages.

use crate::ip::{Net, fmt_ip, mask, parse_cidr};

/// go-cidr's `SubnetBig`: the `num`th subnet of `newbits` more bits.
fn subnet(base: Net, newbits: i64, num: i64) -> Result<Net, String> {
    let parent = i64::from(base.prefix);
    let new_prefix = parent + newbits;
    if new_prefix > i64::from(base.bits) {
        return Err(format!(
            "insufficient address space to extend prefix of {parent} by {newbits}"
        ));
    }
    if newbits < 0 || num < 0 {
        return Err(format!(
            "negative newbits or netnum ({newbits}, {num}) are not supported by xfn's port of function-cidr"
        ));
    }
    // uint64(1<<uint64(newBits)) - 1: a shift of 64 or more gives 0, so all ones.
    let max = 1u64
        .checked_shl(newbits as u32)
        .unwrap_or(0)
        .wrapping_sub(1);
    if num as u64 > max {
        return Err(format!(
            "prefix extension of {newbits} does not accommodate a subnet numbered {num}"
        ));
    }
    let new_prefix = new_prefix as u32;
    let shift = base.bits - new_prefix;
    let ip = base.ip | (num as u128).checked_shl(shift).unwrap_or(0);
    Ok(Net {
        ip,
        bits: base.bits,
        prefix: new_prefix,
    })
}

/// go-cidr's `HostBig`: host `num` of the network, counting from the end
/// when negative.
fn host(base: Net, num: i64) -> Result<u128, String> {
    let host_len = base.bits - base.prefix;
    let max: u128 = if host_len == 128 {
        u128::MAX
    } else {
        (1u128 << host_len) - 1
    };
    let (magnitude, value) = if num < 0 {
        let m = u128::from(num.unsigned_abs()) - 1;
        (m, max.wrapping_sub(m))
    } else {
        (num as u128, num as u128)
    };
    if magnitude > max {
        return Err(format!(
            "prefix of {} does not accommodate a host numbered {num}",
            base.prefix
        ));
    }
    Ok(base.ip | value)
}

fn wrap_bits(v: u128, bits: u32) -> u128 {
    if bits == 128 {
        v
    } else {
        v & ((1u128 << bits) - 1)
    }
}

/// go-cidr's `PreviousSubnet`.
fn previous_subnet(network: Net, prefix: u32) -> Net {
    let prev = wrap_bits(network.ip.wrapping_sub(1), network.bits);
    Net {
        ip: prev & mask(prefix, network.bits),
        bits: network.bits,
        prefix,
    }
}

/// go-cidr's `NextSubnet`: the subnet of `prefix` bits after `network`, and
/// whether the address space rolled over.
fn next_subnet(network: Net, prefix: u32) -> (Net, bool) {
    let m = mask(prefix, network.bits);
    let current = Net {
        ip: network.last() & m,
        bits: network.bits,
        prefix,
    };
    let last = wrap_bits(current.last().wrapping_add(1), network.bits);
    (
        Net {
            ip: last & m,
            bits: network.bits,
            prefix,
        },
        last == 0,
    )
}

/// `CidrHost`.
pub fn cidr_host(prefix: &str, host_number: i64) -> Result<String, String> {
    let network = parse_cidr(prefix).map_err(|e| format!("invalid CIDR expression: {e}"))?;
    Ok(fmt_ip(host(network, host_number)?, network.bits))
}

/// `CidrNetmask`.
pub fn cidr_netmask(prefix: &str) -> Result<String, String> {
    let network = parse_cidr(prefix).map_err(|e| format!("invalid CIDR expression: {e}"))?;
    Ok(fmt_ip(mask(network.prefix, network.bits), network.bits))
}

/// `CidrSubnet`.
pub fn cidr_subnet(prefix: &str, newbits: i64, netnum: i64) -> Result<String, String> {
    let network = parse_cidr(prefix)
        .map_err(|e| format!("prefix: {prefix}, newbits: {newbits}, netnum: {netnum}: {e}"))?;
    subnet(network, newbits, netnum)
        .map(|n| n.to_go_string())
        .map_err(|e| format!("cidr.SubnetBig: {e}"))
}

/// `CidrSubnets`: consecutive subnets of the given extensions; `None` for
/// no extensions (Go's nil).
pub fn cidr_subnets(prefix: &str, newbits: &[i64]) -> Result<Option<Vec<String>>, String> {
    let network = parse_cidr(prefix)?;
    let Some(&first) = newbits.first() else {
        return Ok(None);
    };
    let first_len = i64::from(network.prefix) + first;
    let mut current = (0..=i64::from(network.bits))
        .contains(&first_len)
        .then(|| previous_subnet(network, first_len as u32));
    let mut out = Vec::with_capacity(newbits.len());
    for &arg in newbits {
        if arg < 1 {
            return Err("must extend prefix by at least one bit".to_owned());
        }
        if arg > 32 {
            return Err("may not extend prefix by more than 32 bits".to_owned());
        }
        let length = arg + i64::from(network.prefix);
        if length > i64::from(network.bits) {
            let protocol = if network.bits == 32 { "IPv4" } else { "IPv6" };
            return Err(format!(
                "would extend prefix to {length} bits, which is too long for an {protocol} address"
            ));
        }
        let Some(cur) = current else {
            return Err("internal: no previous subnet".to_owned());
        };
        let (next, rollover) = next_subnet(cur, length as u32);
        if rollover || !network.contains(next.ip) {
            return Err(format!(
                "not enough remaining address space for a subnet with a prefix of {length} bits after {}",
                cur.to_go_string()
            ));
        }
        current = Some(next);
        out.push(next.to_go_string());
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_cidr_cases() {
        assert_eq!(cidr_host("127.0.0.0/24", 111).unwrap(), "127.0.0.111");
        assert_eq!(cidr_host("10.0.0.0/24", -1).unwrap(), "10.0.0.255");
        assert_eq!(cidr_host("fd00::/64", 5).unwrap(), "fd00::5");
        assert_eq!(
            cidr_host("10.0.0.0/30", 4).unwrap_err(),
            "prefix of 30 does not accommodate a host numbered 4"
        );
        assert_eq!(cidr_netmask("10.0.0.0/20").unwrap(), "255.255.240.0");
        assert_eq!(cidr_netmask("fd00::/56").unwrap(), "ffff:ffff:ffff:ff00::");
        assert_eq!(cidr_subnet("10.0.0.0/16", 8, 3).unwrap(), "10.0.3.0/24");
        assert_eq!(
            cidr_subnet("fd00::/56", 8, 255).unwrap(),
            "fd00:0:0:ff::/64"
        );
        assert_eq!(
            cidr_subnet("10.0.0.0/24", 4, 16).unwrap_err(),
            "cidr.SubnetBig: prefix extension of 4 does not accommodate a subnet numbered 16"
        );
        assert_eq!(
            cidr_subnets("10.0.0.0/24", &[1, 1, 1]).unwrap_err(),
            "not enough remaining address space for a subnet with a prefix of 25 bits after 10.0.0.128/25"
        );
        assert_eq!(cidr_subnets("10.0.0.0/24", &[]).unwrap(), None);
        assert_eq!(
            cidr_subnets("fd00::/56", &[8, 8]).unwrap().unwrap(),
            ["fd00::/64", "fd00:0:0:1::/64"]
        );
    }
}
