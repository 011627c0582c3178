//! Go's `time.ParseDuration`, with its error messages.
//!
//! The input's `ttl` is a Go duration string such as `5m` or `1h30m`. The
//! grammar is `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or a bare `0`; the units are
//! `ns`, `us` (also `µs` and `μs`), `ms`, `s`, `m` and `h`.

/// A parsed Go duration, in nanoseconds (it may be negative).
pub type Nanos = i64;

/// The largest magnitude a Go duration can have, plus one: `1 << 63`.
const LIMIT: u64 = 1 << 63;

/// Parses `text` as Go's `time.ParseDuration` does.
///
/// Errors carry Go's messages verbatim, such as
/// `time: invalid duration "x"` or `time: unknown unit "d" in duration "1d"`.
pub fn parse(text: &str) -> Result<Nanos, String> {
    let invalid = || format!("time: invalid duration {}", quote(text));
    let mut s = text;
    let mut negative = false;
    if let Some(first) = s.chars().next()
        && (first == '-' || first == '+')
    {
        negative = first == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let bytes = s.as_bytes();
        if !(bytes[0] == b'.' || bytes[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part.
        let int_len = digits(s);
        let whole = leading_int(&s[..int_len]).ok_or_else(invalid)?;
        s = &s[int_len..];
        // The fraction, if any.
        let (mut fraction, mut scale, mut has_fraction) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = digits(rest);
            (fraction, scale) = leading_fraction(&rest[..frac_len]);
            has_fraction = frac_len > 0;
            s = &rest[frac_len..];
        }
        if int_len == 0 && !has_fraction {
            return Err(invalid());
        }
        // The unit: everything up to the next digit or period.
        let unit_len = s
            .bytes()
            .position(|b| b == b'.' || b.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(text)));
        }
        let unit_text = &s[..unit_len];
        s = &s[unit_len..];
        let unit = unit_nanos(unit_text).ok_or_else(|| {
            format!(
                "time: unknown unit {} in duration {}",
                quote(unit_text),
                quote(text)
            )
        })?;
        if whole > LIMIT / unit {
            return Err(invalid());
        }
        let mut value = whole * unit;
        if fraction > 0 {
            // Go computes the fractional part in float64 and truncates it.
            value += (fraction as f64 * (unit as f64 / scale)) as u64;
            if value > LIMIT {
                return Err(invalid());
            }
        }
        // Go adds in uint64 and can wrap here (two terms of exactly 1 << 63);
        // wrap the same way rather than overflow.
        total = total.wrapping_add(value);
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        // total <= 1 << 63, so its negation fits in an i64.
        return Ok((total as i128).wrapping_neg() as i64);
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// How many ASCII digits `s` starts with.
fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// The value of a run of digits, or `None` if it overflows `1 << 63`.
fn leading_int(digits: &str) -> Option<u64> {
    let mut x: u64 = 0;
    for b in digits.bytes() {
        if x > LIMIT / 10 {
            return None;
        }
        x = x * 10 + u64::from(b - b'0');
        if x > LIMIT {
            return None;
        }
    }
    Some(x)
}

/// The value and scale of fractional digits: `0.25` is `(25, 100.0)`.
/// Digits that would overflow are consumed but ignored, as in Go.
fn leading_fraction(digits: &str) -> (u64, f64) {
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    for b in digits.bytes() {
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(b - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale)
}

fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60 * 1_000_000_000,
        "h" => 60 * 60 * 1_000_000_000,
        _ => return None,
    })
}

/// Quotes `s` as Go's `time` package does in its errors: `"` and `\` are
/// escaped, and every byte of a non-ASCII or control character becomes `\xNN`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if !c.is_ascii() || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn parses_go_durations() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("-0", 0),
            ("+0", 0),
            ("5m", 300 * S),
            ("1h30m", 5400 * S),
            ("1m0s", 60 * S),
            ("1.5s", 1_500_000_000),
            (".5s", 500_000_000),
            ("5.s", 5 * S),
            ("-1.5h", -5400 * S),
            ("+3s", 3 * S),
            ("10ns", 10),
            ("10us", 10_000),
            ("10\u{b5}s", 10_000),
            ("10\u{3bc}s", 10_000),
            ("7ms", 7_000_000),
            ("0s", 0),
            ("1h1m1s1ms1us1ns", 3_661_001_001_001),
            ("0.3333333333333333333h", 1_200_000_000_000),
            ("9223372036854775807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("2562047h47m16.854775807s", i64::MAX),
            // Go's uint64 sum wraps to zero here.
            ("9223372036854775808ns9223372036854775808ns", 0),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), Ok(*want), "{text}");
        }
    }

    #[test]
    fn rejects_what_go_rejects_with_go_messages() {
        let cases: &[(&str, &str)] = &[
            ("", r#"time: invalid duration """#),
            ("x", r#"time: invalid duration "x""#),
            ("-", r#"time: invalid duration "-""#),
            ("1", r#"time: missing unit in duration "1""#),
            ("1d", r#"time: unknown unit "d" in duration "1d""#),
            ("1h-1m", r#"time: unknown unit "h-" in duration "1h-1m""#),
            (".s", r#"time: invalid duration ".s""#),
            ("3.", r#"time: missing unit in duration "3.""#),
            ("1s ", r#"time: unknown unit "s " in duration "1s ""#),
            (" 1s", r#"time: invalid duration " 1s""#),
            (
                "9223372036854775808ns",
                r#"time: invalid duration "9223372036854775808ns""#,
            ),
            ("3000000h", r#"time: invalid duration "3000000h""#),
            (
                "1é",
                r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#,
            ),
            ("\"", r#"time: invalid duration "\"""#),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), Err((*want).to_owned()), "{text:?}");
        }
    }

    #[test]
    fn never_panics() {
        let pieces = [
            "0",
            "9",
            ".",
            "h",
            "m",
            "s",
            "-",
            "+",
            "\u{b5}",
            " ",
            "9223372036854775808",
        ];
        let mut stack = vec![String::new()];
        while let Some(text) = stack.pop() {
            let _ = parse(&text);
            if text.chars().count() < 5 {
                stack.extend(pieces.iter().map(|p| format!("{text}{p}")));
            }
        }
    }
}
