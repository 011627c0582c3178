//! RFC 3339 timestamps, parsed as Go's `time.Parse(time.RFC3339, s)` does.
//!
//! Kubernetes reads `metav1.Time` fields this way, so a timestamp that Go
//! rejects makes the whole object fail to decode.

/// An instant: seconds since the Unix epoch and nanoseconds. Instants in
/// different zones compare by the moment they denote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub seconds: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
///
/// Like Go, it accepts a fraction of any length (digits past the ninth are
/// dropped) after a `.` or a `,`, and checks every field's range, including
/// the day against the month's length.
pub fn parse_rfc3339(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let separators =
        b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    if !separators {
        return None;
    }
    let year = number(&b[0..4], 0, 9999)?;
    let month = number(&b[5..7], 1, 12)?;
    let day = number(&b[8..10], 1, days_in_month(month, year))?;
    let hour = number(&b[11..13], 0, 23)?;
    let minute = number(&b[14..16], 0, 59)?;
    let second = number(&b[17..19], 0, 59)?;
    let mut rest = &b[19..];

    let mut nanos: u32 = 0;
    if rest.len() >= 2 && (rest[0] == b'.' || rest[0] == b',') && rest[1].is_ascii_digit() {
        let n = 1 + rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let mut scale = 100_000_000;
        for &c in rest[1..n].iter().take(9) {
            nanos += u32::from(c - b'0') * scale;
            scale /= 10;
        }
        rest = &rest[n..];
    }

    let offset_seconds = match rest {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = number(&[*h1, *h2], 0, 23)?;
            let minutes = number(&[*m1, *m2], 0, 59)?;
            let offset = (hours * 60 + minutes) * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };

    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_seconds;
    Some(Instant { seconds, nanos })
}

/// The value of a run of ASCII digits, if it lies within `min..=max`.
fn number(digits: &[u8], min: i64, max: i64) -> Option<i64> {
    let mut x: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        x = x * 10 + i64::from(c - b'0');
    }
    (min..=max).contains(&x).then_some(x)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64, nanos: u32) -> Option<Instant> {
        Some(Instant { seconds, nanos })
    }

    #[test]
    fn parses_utc_and_offsets() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), at(0, 0));
        assert_eq!(parse_rfc3339("2024-02-29T12:34:56Z"), at(1_709_210_096, 0));
        assert_eq!(
            parse_rfc3339("2024-02-29T14:34:56+02:00"),
            at(1_709_210_096, 0)
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T07:04:56-05:30"),
            at(1_709_210_096, 0)
        );
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), at(-1, 0));
        assert_eq!(
            parse_rfc3339("0000-03-01T00:00:00Z"),
            at(-62_162_035_200, 0)
        );
    }

    #[test]
    fn parses_fractions_like_go() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), at(1, 500_000_000));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01,25Z"), at(1, 250_000_000));
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:01.1234567899Z"),
            at(1, 123_456_789)
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.Z"), None);
    }

    #[test]
    fn rejects_malformed_or_out_of_range() {
        for bad in [
            "",
            "2024-01-01",
            "2024-01-01 00:00:00Z",
            "2024-01-01t00:00:00Z",
            "2024-01-01T00:00:00z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00+0100",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01T00:00:00+24:00",
            "2024-01-01T00:00:00Z ",
            "+024-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn instants_order_by_moment() {
        let utc = parse_rfc3339("2024-01-01T10:00:00Z");
        let later_elsewhere = parse_rfc3339("2024-01-01T11:00:00.000000001+01:00");
        assert!(later_elsewhere > utc);
    }

    #[test]
    fn never_panics_on_mutations() {
        let base = "2024-02-29T12:34:56.123456789+05:30";
        let replacements = ['0', '9', '-', ':', 'T', 'Z', '.', ',', '+', '\u{e9}'];
        for i in 0..base.len() {
            let _ = parse_rfc3339(&base[..i]);
            for r in replacements {
                let mutated: String = base
                    .chars()
                    .enumerate()
                    .map(|(j, c)| if i == j { r } else { c })
                    .collect();
                let _ = parse_rfc3339(&mutated);
            }
        }
    }
}
