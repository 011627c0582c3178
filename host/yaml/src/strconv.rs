//! The parts of Go's `strconv` syntax that go-yaml's resolver relies on.
//!
//! Only acceptance matters here (does Go parse the text without error?), not
//! the parsed value.

/// Value of an ASCII digit or letter as Go's `strconv` reads it (`a`/`A` = 10).
fn digit_value(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some(u32::from(b - b'0')),
        b'a'..=b'z' => Some(u32::from(b - b'a') + 10),
        b'A'..=b'Z' => Some(u32::from(b - b'A') + 10),
        _ => None,
    }
}

/// `strconv.ParseUint(s, base, 64)` for a text without underscores; base 0
/// picks the base from a `0b`, `0o`, `0x` or `0` prefix.
pub(crate) fn parse_uint(s: &str, base: u32) -> Option<u64> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let (base, digits) = if base == 0 {
        if bytes[0] == b'0' {
            match bytes.get(1).map(u8::to_ascii_lowercase) {
                Some(b'b') if bytes.len() >= 3 => (2, &bytes[2..]),
                Some(b'o') if bytes.len() >= 3 => (8, &bytes[2..]),
                Some(b'x') if bytes.len() >= 3 => (16, &bytes[2..]),
                _ => (8, &bytes[1..]),
            }
        } else {
            (10, bytes)
        }
    } else {
        (base, bytes)
    };
    let mut n: u64 = 0;
    for &b in digits {
        let d = digit_value(b).filter(|&d| d < base)?;
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// `strconv.ParseInt(s, base, 64)` for a text without underscores.
pub(crate) fn parse_int(s: &str, base: u32) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(rest, base)?;
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `underscoreOK`: underscores may only separate digits (or follow a
/// base prefix).
fn underscores_ok(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    // What the previous character was: '^' start, '0' digit or prefix,
    // '_' underscore, '!' anything else.
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    for &c in &s[i..] {
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
    }
    saw != b'_'
}

/// Whether a finite float can be read from decimal mantissa digits and an
/// exponent (both may hold underscores, which are dropped).
fn decimal_is_finite(int_part: &[u8], frac_part: &[u8], exp: &[u8]) -> bool {
    let clean = |part: &[u8]| -> String {
        part.iter()
            .filter(|&&b| b != b'_')
            .map(|&b| char::from(b))
            .collect()
    };
    let text = format!(
        "0{}.0{}e{}",
        clean(int_part),
        clean(frac_part),
        if exp.is_empty() {
            "0".to_owned()
        } else {
            clean(exp)
        }
    );
    text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Whether `strconv.ParseFloat(s, 64)` accepts a text that starts with `.`
/// (the only case where go-yaml hands it unfiltered input).
pub(crate) fn parse_dot_float_ok(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() != Some(&b'.') {
        return false;
    }
    let mut i = 1;
    let mut saw_digits = false;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        saw_digits |= b[i].is_ascii_digit();
        i += 1;
    }
    if !saw_digits {
        return false;
    }
    let frac = &b[1..i];
    let mut exp: &[u8] = &[];
    if i < b.len() && b[i].eq_ignore_ascii_case(&b'e') {
        let start = i + 1;
        i = start;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
        exp = &b[start..i];
    }
    i == b.len() && underscores_ok(b) && decimal_is_finite(&[], frac, exp)
}

/// Whether `s` matches go-yaml's float pattern
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` and
/// `strconv.ParseFloat` reads it without overflowing.
pub(crate) fn yaml_float_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let (int_part, frac_part);
    if b.get(i) == Some(&b'.') {
        let end = digits_from(i + 1);
        if end == i + 1 {
            return false;
        }
        int_part = &b[i..i];
        frac_part = &b[i + 1..end];
        i = end;
    } else {
        let end = digits_from(i);
        if end == i {
            return false;
        }
        int_part = &b[i..end];
        i = end;
        if b.get(i) == Some(&b'.') {
            let frac_end = digits_from(i + 1);
            frac_part = &b[i + 1..frac_end];
            i = frac_end;
        } else {
            frac_part = &b[i..i];
        }
    }
    let mut exp: &[u8] = &[];
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let start = i + 1;
        let digits_start = start + usize::from(matches!(b.get(start), Some(b'+' | b'-')));
        let end = digits_from(digits_start);
        if end == digits_start {
            return false;
        }
        exp = &b[start..end];
        i = end;
    }
    i == b.len() && decimal_is_finite(int_part, frac_part, exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_zero_prefixes() {
        assert_eq!(parse_uint("0x1F", 0), Some(31));
        assert_eq!(parse_uint("0o17", 0), Some(15));
        assert_eq!(parse_uint("0B101", 0), Some(5));
        assert_eq!(parse_uint("017", 0), Some(15));
        assert_eq!(parse_uint("0", 0), Some(0));
        assert_eq!(parse_uint("08", 0), None);
        assert_eq!(parse_uint("0x", 0), None);
        assert_eq!(parse_uint("", 0), None);
        assert_eq!(parse_uint("18446744073709551615", 0), Some(u64::MAX));
        assert_eq!(parse_uint("18446744073709551616", 0), None);
    }

    #[test]
    fn signed_ints() {
        assert_eq!(parse_int("-9223372036854775808", 0), Some(i64::MIN));
        assert_eq!(parse_int("9223372036854775808", 0), None);
        assert_eq!(parse_int("+0x10", 0), Some(16));
        assert_eq!(parse_int("-", 0), None);
        assert_eq!(parse_int("-1", 2), Some(-1));
    }

    #[test]
    fn yaml_floats() {
        for ok in ["1.", ".5", "+1.5e3", "1e3", "-0.0", "1E-7"] {
            assert!(yaml_float_ok(ok), "{ok}");
        }
        for bad in ["1e", ".", "e3", "1.5.5", "1e400", "0x1p3", "1e+"] {
            assert!(!yaml_float_ok(bad), "{bad}");
        }
    }

    #[test]
    fn dot_floats() {
        for ok in [".5", ".5_5", ".5e3", ".5E-3", ".0"] {
            assert!(parse_dot_float_ok(ok), "{ok}");
        }
        for bad in [".", "._5", ".5_", ".5e", ".5e_1", ".5.5", ".5e999", ".inf"] {
            assert!(!parse_dot_float_ok(bad), "{bad}");
        }
    }
}
