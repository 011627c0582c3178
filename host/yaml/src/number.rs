//! Number formatting as Go prints it.
//!
//! Two Go formatters matter: `encoding/json`'s float64 encoder (the text that
//! reaches `JSONToYAML`) and `strconv.FormatFloat(f, 'g', -1, 64)` (how go-yaml
//! prints a float it parsed from that text).

use serde_json::Number;

/// Splits Rust's `{:e}` output into its digits and decimal exponent.
fn scientific(text: &str) -> (Vec<u8>, i32) {
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// Go's choice when `abs` lies exactly halfway between two shortest
/// candidates of `digits.len()` digits: the one with an even last digit
/// (Rust may pick the other). `None` when there is no such tie.
fn break_tie_to_even(abs: f64, digits: &[u8]) -> Option<(Vec<u8>, i32)> {
    let n = digits.len();
    // A tie needs the exact value to end, one digit further, in a 5.
    let (longer, _) = scientific(&format!("{abs:.n$e}"));
    if longer.get(n) != Some(&b'5') {
        return None;
    }
    // Every float64 has an exact expansion of at most 767 significant digits.
    let (exact, exact_exponent) = scientific(&format!("{abs:.800e}"));
    let (head, tail) = exact.split_at_checked(n + 1)?;
    if head.last() != Some(&b'5') || tail.iter().any(|&d| d != b'0') {
        return None;
    }
    let mut rounded = head[..n].to_vec();
    let mut exponent = exact_exponent;
    if rounded.last().is_some_and(|d| (d - b'0') % 2 == 1) {
        // Round the truncation up to the even neighbour.
        let mut i = n;
        loop {
            if i == 0 {
                rounded.insert(0, b'1');
                exponent += 1;
                break;
            }
            i -= 1;
            if rounded[i] == b'9' {
                rounded[i] = b'0';
            } else {
                rounded[i] += 1;
                break;
            }
        }
    }
    while rounded.len() > 1 && rounded.last() == Some(&b'0') {
        rounded.pop();
    }
    Some((rounded, exponent))
}

/// The shortest decimal digits that round-trip `f`, as Go's `strconv` computes
/// them: the value is `0.d1 d2 d3 … × 10^dp`.
struct Shortest {
    digits: Vec<u8>,
    dp: i32,
}

impl Shortest {
    /// Digits of `|f|`; `f` must be finite. Zero has no digits.
    fn of(f: f64) -> Self {
        if f == 0.0 {
            return Self {
                digits: Vec::new(),
                dp: 0,
            };
        }
        // Rust's `{:e}` prints the shortest round-trip digits, like Go's
        // shortest mode: "1.2345e6", "5e-324".
        let (digits, exponent) = scientific(&format!("{:e}", f.abs()));
        let (digits, exponent) = break_tie_to_even(f.abs(), &digits).unwrap_or((digits, exponent));
        Self {
            digits,
            dp: exponent + 1,
        }
    }

    fn digit(&self, i: i32) -> char {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.digits.get(i))
            .map_or('0', |&d| char::from(d))
    }

    fn len(&self) -> i32 {
        i32::try_from(self.digits.len()).unwrap_or(i32::MAX)
    }

    /// Go's `%e` with precision `nd - 1`: `d.ddde±XX`.
    fn fmt_e(&self, neg: bool) -> String {
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        out.push(self.digit(0));
        for i in 1..self.len() {
            if i == 1 {
                out.push('.');
            }
            out.push(self.digit(i));
        }
        out.push('e');
        let exp = if self.digits.is_empty() {
            0
        } else {
            self.dp - 1
        };
        out.push(if exp < 0 { '-' } else { '+' });
        let exp = exp.unsigned_abs();
        if exp < 10 {
            out.push('0');
        }
        out.push_str(&exp.to_string());
        out
    }

    /// Go's `%f` with precision `max(nd - dp, 0)`.
    fn fmt_f(&self, neg: bool) -> String {
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        if self.dp > 0 {
            for i in 0..self.dp {
                out.push(self.digit(i));
            }
        } else {
            out.push('0');
        }
        let prec = (self.len() - self.dp).max(0);
        if prec > 0 {
            out.push('.');
            for i in 0..prec {
                out.push(self.digit(self.dp + i));
            }
        }
        out
    }
}

fn non_finite(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// Formats `f` as Go's `encoding/json` encodes a float64: `9001`, `1.5`,
/// `1e+21`, `1e-7`, `-0`.
///
/// Go's encoder rejects NaN and infinities; for those this returns
/// `strconv.FormatFloat`'s `NaN`, `+Inf` and `-Inf`.
pub fn format_go_float(f: f64) -> String {
    if let Some(text) = non_finite(f) {
        return text.to_owned();
    }
    let abs = f.abs();
    let digits = Shortest::of(f);
    let neg = f.is_sign_negative();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut text = digits.fmt_e(neg);
        // encoding/json turns "e-07" into "e-7".
        let n = text.len();
        if n >= 4 && text.as_bytes().get(n - 4..n - 1) == Some(b"e-0".as_slice()) {
            text.remove(n - 2);
        }
        text
    } else {
        digits.fmt_f(neg)
    }
}

/// Formats `f` as `strconv.FormatFloat(f, 'g', -1, 64)` does, with go-yaml's
/// spellings of the non-finite values.
fn format_go_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let digits = Shortest::of(f);
    let neg = f.is_sign_negative();
    let exp = digits.dp - 1;
    if !digits.digits.is_empty() && !(-4..6).contains(&exp) {
        digits.fmt_e(neg)
    } else {
        digits.fmt_f(neg)
    }
}

/// The plain scalar go-yaml prints for a float64 that went through
/// `encoding/json` and back through go-yaml's resolver: an integer when the
/// JSON text reads as one, otherwise go-yaml's float format.
pub(crate) fn float_scalar(f: f64) -> String {
    let text = format_go_float(f);
    if let Ok(i) = text.parse::<i64>() {
        i.to_string()
    } else if let Ok(u) = text.parse::<u64>() {
        u.to_string()
    } else {
        format_go_g(f)
    }
}

/// The plain scalar for a JSON number.
pub(crate) fn number_scalar(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_scalar(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_matches_encoding_json() {
        let cases = [
            (9001.0, "9001"),
            (1.5, "1.5"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (123456789.125, "123456789.125"),
            (1e20, "100000000000000000000"),
            (-0.0, "-0"),
            (0.0, "0"),
            (-2.5e-10, "-2.5e-10"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.1, "0.1"),
        ];
        for (f, want) in cases {
            assert_eq!(format_go_float(f), want, "{f:e}");
        }
    }

    #[test]
    fn ties_between_shortest_candidates_go_to_even() {
        // Exactly 623739042535588.25: "…882" and "…883" are equally close.
        assert_eq!(
            format_go_g(-(623_739_042_535_588.0 + 0.25)),
            "-6.237390425355882e+14"
        );
        assert_eq!(
            format_go_g(623_739_042_535_588.0 + 0.75),
            "6.237390425355888e+14"
        );
    }

    #[test]
    fn g_format_matches_strconv() {
        let cases = [
            (1e21, "1e+21"),
            (1e-7, "1e-07"),
            (1234567.5, "1.2345675e+06"),
            (123456.5, "123456.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e100, "1e+100"),
            (-1.5, "-1.5"),
        ];
        for (f, want) in cases {
            assert_eq!(format_go_g(f), want, "{f:e}");
        }
    }

    #[test]
    fn floats_become_ints_when_json_text_is_integral() {
        assert_eq!(float_scalar(9001.0), "9001");
        assert_eq!(float_scalar(12345678.0), "12345678");
        assert_eq!(float_scalar(-0.0), "0");
        assert_eq!(float_scalar(1e19), "10000000000000000000");
        assert_eq!(float_scalar(-1e19), "-1e+19");
        assert_eq!(float_scalar(1e20), "1e+20");
        assert_eq!(float_scalar(1e21), "1e+21");
        assert_eq!(float_scalar(1e-7), "1e-07");
        assert_eq!(float_scalar(0.5), "0.5");
    }

    #[test]
    fn non_finite_values_do_not_panic() {
        assert_eq!(format_go_float(f64::NAN), "NaN");
        assert_eq!(float_scalar(f64::INFINITY), ".inf");
        assert_eq!(float_scalar(f64::NEG_INFINITY), "-.inf");
    }
}
