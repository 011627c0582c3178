//! Differential test of `ip.rs` against Go's `net` package: the cases in
//! `net_cases.json` were produced by Go 1.19.8 running `go/net_cases.go`
//! (`net.ParseCIDR`, `IPNet.String`, `net.IP(mask).String` and `IP.String`).

use function_cidr::ip::{fmt_ip, mask, parse_cidr};

#[test]
fn cidrs_and_addresses_read_and_print_as_go() {
    let data: serde_json::Value = serde_json::from_str(include_str!("net_cases.json")).unwrap();
    let mut compared = 0;
    let mut different = Vec::new();
    for c in data["cidrs"].as_array().unwrap() {
        let input = c["in"].as_str().unwrap();
        compared += 1;
        let got = parse_cidr(input);
        if c["ok"].as_bool().unwrap() {
            match got {
                Ok(n) => {
                    let network = n.to_go_string();
                    let m = fmt_ip(mask(n.prefix, n.bits), n.bits);
                    if network != c["network"] || m != c["mask"] {
                        different.push(format!(
                            "{input}: got {network} {m}, want {} {}",
                            c["network"], c["mask"]
                        ));
                    }
                }
                // The one deliberate refusal: IPv4-mapped IPv6 prefixes.
                Err(e) if e.contains("IPv4-mapped") && input.starts_with("::ffff:") => {}
                Err(e) => different.push(format!("{input}: got error {e}, want {}", c["network"])),
            }
        } else if got.as_ref().err().map(String::as_str) != c["err"].as_str() {
            different.push(format!("{input}: got {got:?}, want error {}", c["err"]));
        }
    }
    for c in data["ips"].as_array().unwrap() {
        compared += 1;
        let ip = c["bytes"].as_array().unwrap().iter().fold(0u128, |acc, b| {
            acc << 8 | u128::from(b.as_u64().unwrap() as u8)
        });
        let got = fmt_ip(ip, 128);
        if got != c["text"] {
            different.push(format!("{ip:032x}: got {got}, want {}", c["text"]));
        }
    }
    eprintln!("{compared} cases compared, {} different", different.len());
    assert!(different.is_empty(), "{}", different.join("\n"));
}
