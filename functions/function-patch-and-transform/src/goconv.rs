//! Go's `strconv` parsers, `encoding/base64` decoding, `hash/adler32` and
//! `strings.ToUpper/ToLower`, with Go's exact behaviour and error texts.

use crate::gofmt::quote;

fn syntax_error(func: &str, s: &str) -> String {
    format!("strconv.{func}: parsing {}: invalid syntax", quote(s))
}

fn range_error(func: &str, s: &str) -> String {
    format!("strconv.{func}: parsing {}: value out of range", quote(s))
}

/// `strconv.ParseInt(s, 10, 64)`.
pub fn parse_int(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(syntax_error("ParseInt", s));
    }
    s.parse::<i64>().map_err(|_| range_error("ParseInt", s))
}

/// `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(syntax_error("ParseBool", s)),
    }
}

/// `strconv.ParseFloat(s, 64)`: decimal and hexadecimal floats, `_` digit
/// separators, `inf`/`infinity`/`nan` in any case; ±Inf with a range error
/// on overflow.
pub fn parse_float(s: &str) -> Result<f64, String> {
    if let Some(v) = special(s) {
        return Ok(v);
    }
    let syntax = || syntax_error("ParseFloat", s);
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.contains('_') && !underscore_ok(s) {
        return Err(syntax());
    }
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    let value = if clean.len() > 2 && (clean.starts_with("0x") || clean.starts_with("0X")) {
        parse_hex_float(&clean[2..]).ok_or_else(syntax)?
    } else {
        if !valid_decimal(&clean) {
            return Err(syntax());
        }
        clean.parse::<f64>().map_err(|_| syntax())?
    };
    let value = if neg { -value } else { value };
    if value.is_infinite() {
        return Err(range_error("ParseFloat", s));
    }
    Ok(value)
}

fn special(s: &str) -> Option<f64> {
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    let lower = rest.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(sign * f64::INFINITY);
    }
    if rest.len() == s.len() && lower == "nan" {
        return Some(f64::NAN);
    }
    None
}

fn valid_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let mut digits = false;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits = true;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits = true;
        }
    }
    if !digits {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// Hex mantissa with optional point, then a required `p` exponent.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = s.split_once(['p', 'P'])?;
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let exp: i64 = exp.parse().unwrap_or(if exp.starts_with('-') {
        i64::MIN / 2
    } else {
        i64::MAX / 2
    });
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut m: u128 = 0;
    let mut shift: i64 = 0;
    let mut sticky = false;
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = c.to_digit(16)? as u128;
        if m >> 120 == 0 {
            m = m * 16 + d;
            if i >= int_part.len() {
                shift -= 4;
            }
        } else {
            sticky |= d != 0;
            if i < int_part.len() {
                shift += 4;
            }
        }
    }
    if sticky {
        m |= 1;
    }
    let e = exp.saturating_add(shift);
    let v = m as f64;
    let e = e.clamp(-2200, 2200) as i32;
    // Scale in two steps to avoid premature overflow/underflow.
    Some(v * 2f64.powi(e / 2) * 2f64.powi(e - e / 2))
}

/// Go's `underscoreOK`.
fn underscore_ok(s: &str) -> bool {
    let mut b = s.as_bytes();
    if let Some(b'-' | b'+') = b.first() {
        b = &b[1..];
    }
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

pub use xfn_gocompat::conv::float_to_int64;

/// `base64.StdEncoding.DecodeString`: the bytes, or the offset of Go's
/// `illegal base64 data at input byte N`. Newlines are skipped, as in Go.
pub fn base64_decode(s: &str) -> Result<Vec<u8>, usize> {
    fn value(c: u8) -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let src = s.as_bytes();
    let n = src.len();
    let mut out = Vec::with_capacity(n / 4 * 3);
    let mut si = 0;
    while si < n {
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0;
        let mut trailing = None;
        while j < 4 {
            if si == n {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = value(c) {
                dbuf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while si < n && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == n {
                        return Err(n);
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < n && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < n {
                trailing = Some(si);
            }
            dlen = j;
            break;
        }
        let val = u32::from(dbuf[0]) << 18
            | u32::from(dbuf[1]) << 12
            | u32::from(dbuf[2]) << 6
            | u32::from(dbuf[3]);
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..dlen - 1]);
        if let Some(e) = trailing {
            return Err(e);
        }
    }
    Ok(out)
}

/// `base64.StdEncoding.EncodeToString`.
pub fn base64_encode(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let v = u32::from(chunk[0]) << 16
            | u32::from(*chunk.get(1).unwrap_or(&0)) << 8
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `adler32.Checksum`.
pub fn adler32(b: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut s) = (1u32, 0u32);
    for chunk in b.chunks(5552) {
        for x in chunk {
            a += u32::from(*x);
            s += a;
        }
        a %= MOD;
        s %= MOD;
    }
    s << 16 | a
}

/// `strings.ToUpper`: Unicode simple case mapping, rune by rune.
pub fn to_upper(s: &str) -> String {
    s.chars()
        .map(|c| {
            let u = c as u32;
            let greek = match u {
                0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => char::from_u32(u + 8),
                0x1FB3 => Some('\u{1FBC}'),
                0x1FC3 => Some('\u{1FCC}'),
                0x1FF3 => Some('\u{1FFC}'),
                _ => None,
            };
            if let Some(g) = greek {
                return g;
            }
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

/// `strings.ToLower`: Unicode simple case mapping, rune by rune.
pub fn to_lower(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\u{130}' {
                return 'i';
            }
            let mut low = c.to_lowercase();
            match (low.next(), low.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_and_bools() {
        assert_eq!(parse_int("-42"), Ok(-42));
        assert_eq!(parse_int("+7"), Ok(7));
        assert_eq!(
            parse_int("1_000"),
            Err("strconv.ParseInt: parsing \"1_000\": invalid syntax".into())
        );
        assert_eq!(
            parse_int(" 1"),
            Err("strconv.ParseInt: parsing \" 1\": invalid syntax".into())
        );
        assert_eq!(
            parse_int(""),
            Err("strconv.ParseInt: parsing \"\": invalid syntax".into())
        );
        assert_eq!(
            parse_int("99999999999999999999"),
            Err("strconv.ParseInt: parsing \"99999999999999999999\": value out of range".into())
        );
        assert_eq!(parse_bool("True"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert_eq!(
            parse_bool("yes"),
            Err("strconv.ParseBool: parsing \"yes\": invalid syntax".into())
        );
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float("1e3"), Ok(1000.0));
        assert_eq!(parse_float(".5"), Ok(0.5));
        assert_eq!(parse_float("5."), Ok(5.0));
        assert_eq!(parse_float("-1_000.5"), Ok(-1000.5));
        assert_eq!(parse_float("0x1p-2"), Ok(0.25));
        assert_eq!(parse_float("0x1.8p1"), Ok(3.0));
        assert_eq!(parse_float("Inf"), Ok(f64::INFINITY));
        assert_eq!(parse_float("-infinity"), Ok(f64::NEG_INFINITY));
        assert!(parse_float("NaN").unwrap().is_nan());
        assert_eq!(
            parse_float("+nan"),
            Err("strconv.ParseFloat: parsing \"+nan\": invalid syntax".into())
        );
        assert_eq!(
            parse_float("1_"),
            Err("strconv.ParseFloat: parsing \"1_\": invalid syntax".into())
        );
        assert_eq!(
            parse_float("1e"),
            Err("strconv.ParseFloat: parsing \"1e\": invalid syntax".into())
        );
        assert_eq!(
            parse_float("0x1"),
            Err("strconv.ParseFloat: parsing \"0x1\": invalid syntax".into())
        );
        assert_eq!(
            parse_float("abc"),
            Err("strconv.ParseFloat: parsing \"abc\": invalid syntax".into())
        );
        assert_eq!(
            parse_float("1e400"),
            Err("strconv.ParseFloat: parsing \"1e400\": value out of range".into())
        );
        assert_eq!(parse_float("1e-400"), Ok(0.0));
    }

    #[test]
    fn float_to_int_like_amd64() {
        assert_eq!(float_to_int64(1.9), 1);
        assert_eq!(float_to_int64(-1.9), -1);
        assert_eq!(float_to_int64(f64::NAN), i64::MIN);
        assert_eq!(float_to_int64(1e19), i64::MIN);
    }

    #[test]
    fn base64_like_go() {
        assert_eq!(base64_encode(b"CrossPlane"), "Q3Jvc3NQbGFuZQ==");
        assert_eq!(base64_encode(b""), "");
        assert_eq!(
            base64_decode("Q3Jvc3NQbGFuZQ=="),
            Ok(b"CrossPlane".to_vec())
        );
        assert_eq!(
            base64_decode("Q3Jv\nc3NQ\r\nbGFuZQ=="),
            Ok(b"CrossPlane".to_vec())
        );
        assert_eq!(base64_decode("ThisStringIsNotBase64"), Err(20));
        assert_eq!(base64_decode("QQ"), Err(0));
        assert_eq!(base64_decode("QQ="), Err(3));
        assert_eq!(base64_decode("QQ==x"), Err(4));
        assert_eq!(base64_decode("Q==="), Err(1));
        assert_eq!(base64_decode("ab!d"), Err(2));
        assert_eq!(base64_decode(""), Ok(vec![]));
    }

    #[test]
    fn adler_and_case() {
        assert_eq!(adler32(b"Crossplane"), 373_097_499);
        assert_eq!(adler32("⡌⠁⠧⠑ ⠼⠁⠒  ⡍⠜⠇⠑⠹⠰⠎ ⡣⠕⠌".as_bytes()), 4_110_427_190);
        assert_eq!(to_upper("straße ǅ ᾳ"), "STRAßE Ǆ ᾼ");
        assert_eq!(to_lower("İSTANBUL"), "istanbul");
    }
}
