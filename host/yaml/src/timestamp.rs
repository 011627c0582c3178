//! go-yaml's timestamp check: whether Go's `time.Parse` accepts a text with
//! one of the layouts go-yaml tries.
//!
//! Follows the parser of current Go releases (1.20 and later): a fraction of
//! a second may have any number of digits, and a zone offset needs two-digit
//! hours (at most 24) and minutes (at most 60).

/// Cursor over the bytes of the text being parsed.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl Cursor<'_> {
    /// Consumes `b` if it comes next.
    fn literal(&mut self, b: u8) -> Option<()> {
        let (&first, rest) = self.rest.split_first()?;
        (first == b).then(|| self.rest = rest)
    }

    /// A space in the layout matches one or more spaces in the text.
    fn spaces(&mut self) -> Option<()> {
        if self.rest.first() != Some(&b' ') {
            return None;
        }
        while self.rest.first() == Some(&b' ') {
            self.rest = &self.rest[1..];
        }
        Some(())
    }

    /// Go's `getnum(s, false)`: one or two digits.
    fn number(&mut self) -> Option<u32> {
        let first = *self.rest.first().filter(|b| b.is_ascii_digit())?;
        let mut n = u32::from(first - b'0');
        self.rest = &self.rest[1..];
        if let Some(&second) = self.rest.first().filter(|b| b.is_ascii_digit()) {
            n = n * 10 + u32::from(second - b'0');
            self.rest = &self.rest[1..];
        }
        Some(n)
    }

    /// Exactly two digits.
    fn two_digits(&mut self) -> Option<u32> {
        match self.rest {
            [a, b, rest @ ..] if a.is_ascii_digit() && b.is_ascii_digit() => {
                self.rest = rest;
                Some(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
            }
            _ => None,
        }
    }

    /// An optional fraction of a second: `.` or `,` then digits.
    fn fraction(&mut self) {
        if let [b'.' | b',', d, ..] = self.rest
            && d.is_ascii_digit()
        {
            let digits = self.rest[1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            self.rest = &self.rest[1 + digits..];
        }
    }

    /// Layout `Z07:00`: `Z` or `±hh:mm`.
    fn zone(&mut self) -> Option<()> {
        if self.literal(b'Z').is_some() {
            return Some(());
        }
        if self.rest.len() < 6 || self.rest[3] != b':' {
            return None;
        }
        let sign = self.rest[0];
        self.rest = &self.rest[1..];
        let hours = self.two_digits()?;
        self.rest = &self.rest[1..];
        let minutes = self.two_digits()?;
        (hours <= 24 && minutes <= 60 && matches!(sign, b'+' | b'-')).then_some(())
    }

    fn done(&self) -> Option<()> {
        self.rest.is_empty().then_some(())
    }
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// How the text continues after the date.
#[derive(Clone, Copy)]
enum Layout {
    /// `2006-1-2T15:4:5.999999999Z07:00`, with `T` or `t`.
    DateTimeZone(u8),
    /// `2006-1-2 15:4:5.999999999`.
    DateSpaceTime,
    /// `2006-1-2`.
    Date,
}

fn parse_with(text: &[u8], layout: Layout) -> Option<()> {
    let mut c = Cursor { rest: text };
    let year_digits = c.rest.get(..4)?;
    let year = year_digits.iter().try_fold(0u32, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })?;
    c.rest = &c.rest[4..];
    c.literal(b'-')?;
    let month = c.number().filter(|m| (1..=12).contains(m))?;
    c.literal(b'-')?;
    let day = c.number()?;
    match layout {
        Layout::Date => {}
        Layout::DateTimeZone(_) | Layout::DateSpaceTime => {
            if let Layout::DateTimeZone(t) = layout {
                c.literal(t)?;
            } else {
                c.spaces()?;
            }
            c.number().filter(|h| *h < 24)?;
            c.literal(b':')?;
            c.number().filter(|m| *m < 60)?;
            c.literal(b':')?;
            c.number().filter(|s| *s < 60)?;
            c.fraction();
            if let Layout::DateTimeZone(_) = layout {
                c.zone()?;
            }
        }
    }
    c.done()?;
    (day >= 1 && day <= days_in(month, year)).then_some(())
}

/// Whether go-yaml resolves `s`, as a plain scalar, to a timestamp.
pub(crate) fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    // go-yaml's quick check: exactly four digits, then '-'.
    let digits = b.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    [
        Layout::DateTimeZone(b'T'),
        Layout::DateTimeZone(b't'),
        Layout::DateSpaceTime,
        Layout::Date,
    ]
    .into_iter()
    .any(|layout| parse_with(b, layout).is_some())
}

#[cfg(test)]
mod tests {
    use super::is_timestamp;

    // The Go 1.19 reference used for the golden files differs on two of these
    // (ten fraction digits, zone hour 25), so they are tested here only.
    #[test]
    fn accepted() {
        for s in [
            "2024-01-01T00:00:00Z",
            "2024-1-2t3:4:5Z",
            "2024-01-01T00:00:00.123456789+02:00",
            "2024-01-01T00:00:00,5-24:00",
            "2024-01-01 10:00:00",
            "2024-01-01   10:00:00.5",
            "2024-01-01",
            "2024-02-29",
            "2000-02-29",
            "2024-01-01T00:00:00.1234567891Z",
        ] {
            assert!(is_timestamp(s), "{s}");
        }
    }

    #[test]
    fn rejected() {
        for s in [
            "2024-01-01T00:00:00",
            "2024-13-01",
            "2023-02-29",
            "1900-02-29",
            "2024-01-32",
            "2024-01-00",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00+25:00",
            "2024-01-01T00:00:00+2:00",
            "2024-01-01 10:00:00Z",
            "12024-01-01",
            "2024-001-01",
            "2024-01-01x",
            "2024-01-01T00:00:00ZZ",
            "2024-",
        ] {
            assert!(!is_timestamp(s), "{s}");
        }
    }
}
