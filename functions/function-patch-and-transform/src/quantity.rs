//! Kubernetes `resource.ParseQuantity` followed by `AsApproximateFloat64`,
//! for `convert` with `format: quantity`.

/// `quantities must match the regular expression ...` (`resource.ErrFormatWrong`).
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `resource.ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

struct Parts<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// apimachinery's `parseQuantityString`.
fn parse_quantity_string(s: &str) -> Result<Parts<'_>, &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    let mut positive = true;
    let mut pos = 0;
    if pos < end {
        match b[0] {
            b'-' => {
                positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    // Leading zeros.
    loop {
        if pos >= end {
            return Ok(Parts {
                positive,
                value: "0",
                num: "0",
                denom: "",
                suffix: "",
            });
        }
        if b[pos] == b'0' {
            pos += 1;
        } else {
            break;
        }
    }
    // Numerator.
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value: s,
            num: &s[num_start..],
            denom: "",
            suffix: "",
        });
    }
    let mut num = &s[num_start..pos];
    if num.is_empty() {
        num = "0";
    }
    // Denominator.
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let d_start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            return Ok(Parts {
                positive,
                value: s,
                num,
                denom: &s[d_start..],
                suffix: "",
            });
        }
        denom = &s[d_start..pos];
    }
    let value = &s[..pos];
    // Suffix.
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value,
            num,
            denom,
            suffix: &s[suffix_start..],
        });
    }
    if b[pos] == b'-' || b[pos] == b'+' {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value,
            num,
            denom,
            suffix: &s[suffix_start..],
        });
    }
    Err(ERR_FORMAT_WRONG)
}

/// apimachinery's `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((10, e, Format::DecimalSI));
    let bin = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ => {
            let b = suffix.as_bytes();
            if b.len() > 1 && (b[0] == b'e' || b[0] == b'E') {
                let parsed: i64 = parse_go_int(&suffix[1..])?;
                let exp = i32::try_from(parsed).ok()?;
                return Some((10, exp, Format::DecimalExponent));
            }
            None
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)` without the error detail.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Go's `math.Pow10`, exact for the table range.
fn pow10(n: i32) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    if (0..=308).contains(&n) {
        return POS32[(n / 32) as usize] * TAB[(n % 32) as usize];
    }
    if (-323..=0).contains(&n) {
        let m = -n;
        return NEG32[(m / 32) as usize] / TAB[(m % 32) as usize];
    }
    if n > 0 { f64::INFINITY } else { 0.0 }
}

/// Parses a Kubernetes quantity and returns `AsApproximateFloat64()`.
pub fn parse_quantity_as_f64(s: &str) -> Result<f64, &'static str> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG);
    }
    if s == "0" {
        return Ok(0.0);
    }
    let parts = parse_quantity_string(s)?;
    let (base, exponent, format) = interpret_suffix(parts.suffix).ok_or(ERR_SUFFIX)?;

    let precision: i32;
    let mut scale: i32 = 0;
    let mut mantissa: i64 = 1;
    match format {
        Format::DecimalExponent | Format::DecimalSI => {
            scale = exponent;
            precision = 18 - (parts.num.len() + parts.denom.len()) as i32;
        }
        Format::BinarySI => {
            if exponent >= 0 && parts.denom.is_empty() {
                mantissa <<= exponent;
                precision = 15 - parts.num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1;
            } else {
                precision = -1;
            }
        }
    }

    if precision >= 0 {
        scale -= parts.denom.len() as i32;
        if scale >= -9 {
            let shifted = format!("{}{}", parts.num, parts.denom);
            let value: i64 = shifted.parse().map_err(|_| ERR_NUMERIC)?;
            if let Some(mut result) = value.checked_mul(mantissa) {
                if !parts.positive {
                    result = -result;
                }
                let base = result as f64;
                return Ok(if scale == 0 {
                    base
                } else {
                    base * pow10(scale)
                });
            }
        }
    }

    slow_path(&parts, base, exponent)
}

/// The `inf.Dec` path: exact decimal arithmetic, rounded up to nano units
/// and capped at 2^63-1.
fn slow_path(parts: &Parts<'_>, base: u32, exponent: i32) -> Result<f64, &'static str> {
    // `value` holds the sign, the digits and an optional decimal point.
    let text = parts.value.strip_prefix(['+', '-']).unwrap_or(parts.value);
    let (int_part, frac_part) = text.split_once('.').unwrap_or((text, ""));
    if !(int_part.bytes().chain(frac_part.bytes())).all(|c| c.is_ascii_digit())
        || int_part.len() + frac_part.len() == 0
    {
        return Err(ERR_NUMERIC);
    }
    // Unscaled digits (most significant first) and the decimal scale.
    let mut digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .map(|c| c - b'0')
        .collect();
    let mut scale: i64 = frac_part.len() as i64;
    if base == 10 {
        scale -= i64::from(exponent);
    } else {
        for _ in 0..exponent {
            double(&mut digits);
        }
    }
    // Strip leading zeros.
    let first = digits.iter().position(|d| *d != 0).unwrap_or(digits.len());
    digits.drain(..first);
    if digits.is_empty() {
        return Ok(0.0);
    }
    // Integer part and first nine fraction digits.
    let (int_digits, frac_digits): (Vec<u8>, Vec<u8>) = if scale <= 0 {
        let mut d = digits.clone();
        d.extend(std::iter::repeat_n(0, (-scale) as usize));
        (d, Vec::new())
    } else if (scale as usize) >= digits.len() {
        let mut f = vec![0; scale as usize - digits.len()];
        f.extend_from_slice(&digits);
        (Vec::new(), f)
    } else {
        let split = digits.len() - scale as usize;
        (digits[..split].to_vec(), digits[split..].to_vec())
    };
    const MAX: u128 = i64::MAX as u128;
    let mut int_value: u128 = 0;
    for d in &int_digits {
        int_value = int_value * 10 + u128::from(*d);
        if int_value > MAX {
            break;
        }
    }
    let mut nanos: u128 = 0;
    for i in 0..9 {
        nanos = nanos * 10 + u128::from(*frac_digits.get(i).unwrap_or(&0));
    }
    let rest_nonzero = frac_digits.iter().skip(9).any(|d| *d != 0);
    let mut unscaled = int_value.saturating_mul(1_000_000_000) + nanos;
    if rest_nonzero {
        unscaled += 1; // inf.RoundUp: away from zero.
    }
    let value = if int_value > MAX || unscaled > MAX * 1_000_000_000 {
        MAX as f64
    } else {
        (unscaled as f64) * pow10(-9)
    };
    Ok(if parts.positive { value } else { -value })
}

fn double(digits: &mut Vec<u8>) {
    let mut carry = 0;
    for d in digits.iter_mut().rev() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.insert(0, carry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quantities() {
        let cases = [
            ("1000m", 1.0),
            ("1", 1.0),
            ("0", 0.0),
            ("1k", 1000.0),
            ("1Ki", 1024.0),
            ("1.5Gi", 1_610_612_736.0),
            ("500Mi", 524_288_000.0),
            ("100n", 100.0 * 1e-9), // Go: 100 * math.Pow10(-9) = 1.0000000000000001e-07
            ("1e3", 1000.0),
            ("1E3", 1000.0),
            ("1E", 1e18),
            ("-2.5", -2.5),
            ("+3", 3.0),
            ("0.1n", 1e-9),
            ("12345678901234567890", 9.223372036854776e18),
            (".5", 0.5),
            ("5.", 5.0),
            ("00012", 12.0),
            ("1.5", 1.5),
            ("250m", 0.25),
        ];
        for (s, want) in cases {
            assert_eq!(parse_quantity_as_f64(s), Ok(want), "{s}");
        }
    }

    #[test]
    fn quantity_errors() {
        assert_eq!(parse_quantity_as_f64("1000 blabla"), Err(ERR_FORMAT_WRONG));
        assert_eq!(parse_quantity_as_f64(""), Err(ERR_FORMAT_WRONG));
        assert_eq!(parse_quantity_as_f64("1x"), Err(ERR_FORMAT_WRONG));
        assert_eq!(parse_quantity_as_f64("1Qi"), Err(ERR_FORMAT_WRONG));
        assert_eq!(parse_quantity_as_f64("1mm"), Err(ERR_SUFFIX));
        assert_eq!(parse_quantity_as_f64("1e"), Err(ERR_SUFFIX));
    }

    #[test]
    fn pow10_is_exact_in_the_table() {
        assert_eq!(pow10(-3), 0.001);
        assert_eq!(pow10(22), 1e22);
        assert_eq!(pow10(-9), 1e-9);
    }
}
