//! Go's `time` as sprig's date functions use it, in UTC (the zone of
//! upstream's container and of `Local` there): civil dates, `Format` and
//! `Parse` with Go's reference layouts, `Duration.String` and
//! `ParseDuration`.

/// An instant: seconds since the Unix epoch, nanoseconds, and the fixed
/// zone offset it is shown in (0 is UTC, Go's `Local` in a container; a
/// parsed time keeps the offset it was written with, as Go's does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Time {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
    /// The zone's offset east of UTC, in seconds.
    pub offset: i32,
}

/// Go's zero `time.Time` (0001-01-01T00:00:00Z).
pub const ZERO: Time = Time {
    secs: -62_135_596_800,
    nanos: 0,
    offset: 0,
};

/// The zero-argument methods of `time.Time` a template may call that give
/// an integer; `None` for the others.
pub fn method(t: &Time, name: &str) -> Option<crate::template::Value> {
    use crate::template::Value;
    let local = t.secs + i64::from(t.offset);
    let days = local.div_euclid(86_400);
    let tod = local.rem_euclid(86_400);
    let (year, _, day) = civil_from_days(days);
    Some(match name {
        "Year" => Value::int(year),
        "Day" => Value::int(day),
        "YearDay" => Value::int(days - days_from_civil(year, 1, 1) + 1),
        "Hour" => Value::int(tod / 3600),
        "Minute" => Value::int(tod % 3600 / 60),
        "Second" => Value::int(tod % 60),
        "Nanosecond" => Value::int(i64::from(t.nanos)),
        "Unix" => Value::int64(t.secs),
        "UnixMilli" => Value::int64(t.secs.saturating_mul(1000) + i64::from(t.nanos / 1_000_000)),
        "UnixNano" => Value::int64(
            t.secs
                .saturating_mul(1_000_000_000)
                .saturating_add(i64::from(t.nanos)),
        ),
        _ => return None,
    })
}

/// The same instant shown in UTC.
pub fn utc(t: Time) -> Time {
    Time { offset: 0, ..t }
}

/// Days since the epoch of a civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day since the epoch: (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    Tz,
    Iso(&'static str),
    Num(&'static str),
    Frac(u8, usize),
}

fn starts_lower(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_lowercase)
}

/// Go's `nextStdChunk`: (prefix, element, rest).
fn next_chunk(layout: &str) -> (&str, Option<(Std, &str)>, &str) {
    let b = layout.as_bytes();
    let at = |i: usize, s: &str| layout.get(i..i + s.len()) == Some(s);
    for i in 0..b.len() {
        let r = |std: Std, n: usize| {
            (
                &layout[..i],
                Some((std, &layout[i..i + n])),
                &layout[i + n..],
            )
        };
        match b[i] {
            b'J' if at(i, "Jan") => {
                if at(i, "January") {
                    return r(Std::LongMonth, 7);
                }
                if !starts_lower(&b[i + 3..]) {
                    return r(Std::Month, 3);
                }
            }
            b'M' => {
                if at(i, "Mon") {
                    if at(i, "Monday") {
                        return r(Std::LongWeekDay, 6);
                    }
                    if !starts_lower(&b[i + 3..]) {
                        return r(Std::WeekDay, 3);
                    }
                }
                if at(i, "MST") {
                    return r(Std::Tz, 3);
                }
            }
            b'0' => {
                if let Some(&c) = b.get(i + 1)
                    && (b'1'..=b'6').contains(&c)
                {
                    let std = [
                        Std::ZeroMonth,
                        Std::ZeroDay,
                        Std::ZeroHour12,
                        Std::ZeroMinute,
                        Std::ZeroSecond,
                        Std::Year,
                    ][(c - b'1') as usize];
                    return r(std, 2);
                }
                if at(i, "002") {
                    return r(Std::ZeroYearDay, 3);
                }
            }
            b'1' => {
                if b.get(i + 1) == Some(&b'5') {
                    return r(Std::Hour, 2);
                }
                return r(Std::NumMonth, 1);
            }
            b'2' => {
                if at(i, "2006") {
                    return r(Std::LongYear, 4);
                }
                return r(Std::Day, 1);
            }
            b'_' => {
                if b.get(i + 1) == Some(&b'2') {
                    if at(i + 1, "2006") {
                        return (
                            &layout[..i + 1],
                            Some((Std::LongYear, &layout[i + 1..i + 5])),
                            &layout[i + 5..],
                        );
                    }
                    return r(Std::UnderDay, 2);
                }
                if at(i, "__2") {
                    return r(Std::UnderYearDay, 3);
                }
            }
            b'3' => return r(Std::Hour12, 1),
            b'4' => return r(Std::Minute, 1),
            b'5' => return r(Std::Second, 1),
            b'P' if b.get(i + 1) == Some(&b'M') => return r(Std::PM, 2),
            b'p' if b.get(i + 1) == Some(&b'm') => return r(Std::Pm, 2),
            b'-' => {
                for pat in ["-070000", "-07:00:00", "-0700", "-07:00", "-07"] {
                    if at(i, pat) {
                        return r(Std::Num(pat), pat.len());
                    }
                }
            }
            b'Z' => {
                for pat in ["Z070000", "Z07:00:00", "Z0700", "Z07:00", "Z07"] {
                    if at(i, pat) {
                        return r(Std::Iso(pat), pat.len());
                    }
                }
            }
            b'.' | b',' => {
                if let Some(&ch) = b.get(i + 1)
                    && (ch == b'0' || ch == b'9')
                {
                    let mut j = i + 1;
                    while j < b.len() && b[j] == ch {
                        j += 1;
                    }
                    if !b.get(j).is_some_and(u8::is_ascii_digit) {
                        return r(Std::Frac(ch, j - i - 1), j - i);
                    }
                }
            }
            _ => {}
        }
    }
    (layout, None, "")
}

/// Go's `Time.Format` in UTC.
pub fn format(t: Time, layout: &str) -> String {
    let local = t.secs + i64::from(t.offset);
    let days = local.div_euclid(86_400);
    let tod = local.rem_euclid(86_400);
    let off = t.offset;
    let (sign, abs) = if off < 0 { ('-', -off) } else { ('+', off) };
    let (oh, om, os) = (abs / 3600, abs % 3600 / 60, abs % 60);
    let (year, month, day) = civil_from_days(days);
    let (hour, min, sec) = (tod / 3600, tod % 3600 / 60, tod % 60);
    let weekday = (days + 4).rem_euclid(7) as usize;
    let yday = days - days_from_civil(year, 1, 1) + 1;
    let mut out = String::new();
    let mut rest = layout;
    loop {
        let (prefix, std, suffix) = next_chunk(rest);
        out.push_str(prefix);
        let Some((std, chunk)) = std else { break };
        match std {
            Std::Year => out.push_str(&format!("{:02}", year.rem_euclid(100))),
            Std::LongYear => {
                if year < 0 {
                    out.push_str(&format!("-{:04}", -year));
                } else {
                    out.push_str(&format!("{year:04}"));
                }
            }
            Std::Month => out.push_str(&MONTHS[(month - 1) as usize][..3]),
            Std::LongMonth => out.push_str(MONTHS[(month - 1) as usize]),
            Std::NumMonth => out.push_str(&month.to_string()),
            Std::ZeroMonth => out.push_str(&format!("{month:02}")),
            Std::WeekDay => out.push_str(&DAYS[weekday][..3]),
            Std::LongWeekDay => out.push_str(DAYS[weekday]),
            Std::Day => out.push_str(&day.to_string()),
            Std::UnderDay => out.push_str(&format!("{day:>2}")),
            Std::ZeroDay => out.push_str(&format!("{day:02}")),
            Std::UnderYearDay => out.push_str(&format!("{yday:>3}")),
            Std::ZeroYearDay => out.push_str(&format!("{yday:03}")),
            Std::Hour => out.push_str(&format!("{hour:02}")),
            Std::Hour12 => out.push_str(&(if hour % 12 == 0 { 12 } else { hour % 12 }).to_string()),
            Std::ZeroHour12 => out.push_str(&format!(
                "{:02}",
                if hour % 12 == 0 { 12 } else { hour % 12 }
            )),
            Std::Minute => out.push_str(&min.to_string()),
            Std::ZeroMinute => out.push_str(&format!("{min:02}")),
            Std::Second => out.push_str(&sec.to_string()),
            Std::ZeroSecond => out.push_str(&format!("{sec:02}")),
            Std::PM => out.push_str(if hour >= 12 { "PM" } else { "AM" }),
            Std::Pm => out.push_str(if hour >= 12 { "pm" } else { "am" }),
            // A parsed fixed zone has no name: Go prints it as -0700.
            Std::Tz if off == 0 => out.push_str("UTC"),
            Std::Tz => out.push_str(&format!("{sign}{oh:02}{om:02}")),
            Std::Iso(_) if off == 0 => out.push('Z'),
            Std::Iso(pat) | Std::Num(pat) => out.push_str(&match &pat[1..] {
                "070000" => format!("{sign}{oh:02}{om:02}{os:02}"),
                "07:00:00" => format!("{sign}{oh:02}:{om:02}:{os:02}"),
                "0700" => format!("{sign}{oh:02}{om:02}"),
                "07:00" => format!("{sign}{oh:02}:{om:02}"),
                _ => format!("{sign}{oh:02}"),
            }),
            Std::Frac(ch, n) => {
                let digits = format!("{:09}", t.nanos);
                let sep = &chunk[..1];
                if ch == b'0' {
                    out.push_str(sep);
                    out.push_str(&digits[..n.min(9)]);
                } else {
                    let d = digits[..n.min(9)].trim_end_matches('0');
                    if !d.is_empty() {
                        out.push_str(sep);
                        out.push_str(d);
                    }
                }
            }
        }
        rest = suffix;
    }
    out
}

/// `Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`.
pub fn string(t: Time) -> String {
    format(t, "2006-01-02 15:04:05.999999999 -0700 MST")
}

/// RFC 3339 with nanoseconds (`MarshalText`, `MarshalJSON`, yaml.v3).
pub fn rfc3339_nano(t: Time) -> String {
    format(t, "2006-01-02T15:04:05.999999999Z07:00")
}

/// `Duration.String()` of nanoseconds.
pub fn duration_string(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    if u == 0 {
        return "0s".into();
    }
    let frac = |u: u64, prec: u32| -> (String, u64) {
        let p = 10u64.pow(prec);
        let f = u % p;
        let mut s = format!("{f:0width$}", width = prec as usize);
        while s.ends_with('0') {
            s.pop();
        }
        (
            if s.is_empty() {
                String::new()
            } else {
                format!(".{s}")
            },
            u / p,
        )
    };
    let mut out = if u < 1_000_000_000 {
        let (unit, prec) = if u < 1_000 {
            ("ns", 0)
        } else if u < 1_000_000 {
            ("µs", 3)
        } else {
            ("ms", 6)
        };
        let (f, whole) = frac(u, prec);
        format!("{whole}{f}{unit}")
    } else {
        let (f, secs) = frac(u, 9);
        u = secs;
        let mut s = format!("{}{f}s", u % 60);
        u /= 60;
        if u > 0 {
            s = format!("{}m{s}", u % 60);
            u /= 60;
            if u > 0 {
                s = format!("{u}h{s}");
            }
        }
        s
    };
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `time.ParseDuration`, with Go's error texts.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let orig = s;
    let quoted = || xfn_gocompat::gofmt::quote(orig);
    let mut s = s;
    let mut neg = false;
    if let Some(r) = s.strip_prefix('-') {
        neg = true;
        s = r;
    } else if let Some(r) = s.strip_prefix('+') {
        s = r;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(format!("time: invalid duration {}", quoted()));
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &s[..digits];
        s = &s[digits..];
        let mut frac_part = "";
        if let Some(r) = s.strip_prefix('.') {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &r[..n];
            s = &r[n..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(format!("time: invalid duration {}", quoted()));
        }
        let unit_len = s
            .bytes()
            .take_while(|c| !c.is_ascii_digit() && *c != b'.')
            .count();
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {}", quoted())),
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    xfn_gocompat::gofmt::quote(unit),
                    quoted()
                ));
            }
        };
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part
                .parse()
                .map_err(|_| format!("time: invalid duration {}", quoted()))?
        };
        let mut v = whole.saturating_mul(scale);
        if !frac_part.is_empty() {
            let f: u128 = frac_part.parse().unwrap_or(0);
            let den = 10u128.saturating_pow(frac_part.len() as u32);
            v = v.saturating_add(f.saturating_mul(scale) / den.max(1));
        }
        total = total.saturating_add(v);
        if total > i64::MAX as u128 + u128::from(neg) {
            return Err(format!("time: invalid duration {}", quoted()));
        }
    }
    let t = total as i128;
    Ok(if neg { (-t) as i64 } else { t as i64 })
}

/// `time.ParseInLocation(layout, value, UTC)`, with Go's error texts.
pub fn parse(layout: &str, value: &str) -> Result<Time, String> {
    let q = xfn_gocompat::gofmt::quote;
    let err_at = |elem: &str, rest: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            q(value),
            q(layout),
            q(rest),
            q(elem)
        )
    };
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut nanos) =
        (1i64, 1i64, 1i64, 0i64, 0i64, 0i64, 0u32);
    let mut pm: Option<bool> = None;
    let mut offset: i64 = 0;
    let mut yday: Option<i64> = None;
    let mut lay = layout;
    let mut v = value;
    loop {
        let (prefix, std, suffix) = next_chunk(lay);
        let Some(rest) = v.strip_prefix(prefix) else {
            return Err(err_at(prefix, v));
        };
        v = rest;
        let Some((std, chunk)) = std else {
            if !v.is_empty() {
                return Err(format!("parsing time {}: extra text: {}", q(value), q(v)));
            }
            break;
        };
        lay = suffix;
        let before = v;
        let num = |v: &mut &str, fixed: bool, max: usize| -> Option<i64> {
            let n = v.bytes().take_while(u8::is_ascii_digit).take(max).count();
            if n == 0 || (fixed && n != max) {
                return None;
            }
            let x = v[..n].parse().ok();
            *v = &v[n..];
            x
        };
        let ok = match std {
            Std::Year => {
                num(&mut v, true, 2).map(|y| year = if y >= 69 { y + 1900 } else { y + 2000 })
            }
            Std::LongYear => num(&mut v, true, 4).map(|y| year = y),
            Std::Month | Std::LongMonth => {
                let found = MONTHS.iter().position(|m| {
                    let name = if std == Std::Month { &m[..3] } else { m };
                    v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                });
                found.map(|i| {
                    let len = if std == Std::Month {
                        3
                    } else {
                        MONTHS[i].len()
                    };
                    v = &v[len..];
                    month = i as i64 + 1;
                })
            }
            Std::WeekDay | Std::LongWeekDay => {
                let found = DAYS.iter().position(|d| {
                    let name = if std == Std::WeekDay { &d[..3] } else { d };
                    v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                });
                found.map(|i| {
                    let len = if std == Std::WeekDay {
                        3
                    } else {
                        DAYS[i].len()
                    };
                    v = &v[len..];
                })
            }
            Std::NumMonth | Std::ZeroMonth => {
                num(&mut v, std == Std::ZeroMonth, 2).map(|m| month = m)
            }
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay && v.starts_with(' ') {
                    v = &v[1..];
                }
                num(&mut v, std == Std::ZeroDay, 2).map(|d| day = d)
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                if std == Std::UnderYearDay {
                    v = v.trim_start_matches(' ');
                }
                num(&mut v, std == Std::ZeroYearDay, 3).map(|d| yday = Some(d))
            }
            Std::Hour => num(&mut v, false, 2).map(|h| hour = h),
            Std::Hour12 | Std::ZeroHour12 => {
                num(&mut v, std == Std::ZeroHour12, 2).map(|h| hour = h)
            }
            Std::Minute | Std::ZeroMinute => {
                num(&mut v, std == Std::ZeroMinute, 2).map(|m| min = m)
            }
            Std::Second | Std::ZeroSecond => {
                let r = num(&mut v, std == Std::ZeroSecond, 2).map(|s| sec = s);
                // A fractional second may follow even if the layout has none.
                if r.is_some()
                    && v.len() > 1
                    && v.starts_with(['.', ','])
                    && v.as_bytes()[1].is_ascii_digit()
                {
                    let (_, next, _) = next_chunk(lay);
                    if !matches!(next, Some((Std::Frac(..), _))) {
                        let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                        nanos = frac_nanos(&v[1..1 + n]);
                        v = &v[1 + n..];
                    }
                }
                r
            }
            Std::PM | Std::Pm => {
                let word = v.get(..2).unwrap_or("");
                let is_pm = match (std, word) {
                    (Std::PM, "PM") | (Std::Pm, "pm") => Some(true),
                    (Std::PM, "AM") | (Std::Pm, "am") => Some(false),
                    _ => None,
                };
                is_pm.map(|p| {
                    pm = Some(p);
                    v = &v[2..];
                })
            }
            Std::Tz => {
                if let Some(r) = v.strip_prefix("UTC") {
                    v = r;
                    Some(())
                } else {
                    let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                    if (3..=5).contains(&n) {
                        return Err(format!(
                            "the time zone {} is not supported by xfn's port (only UTC)",
                            q(&v[..n])
                        ));
                    }
                    None
                }
            }
            Std::Iso(pat) | Std::Num(pat) => {
                if matches!(std, Std::Iso(_)) && v.starts_with('Z') {
                    v = &v[1..];
                    Some(())
                } else {
                    let sign = match v.as_bytes().first() {
                        Some(b'+') => 1,
                        Some(b'-') => -1,
                        _ => 0,
                    };
                    if sign == 0 {
                        None
                    } else {
                        let body = &pat[1..];
                        let digits: Vec<char> = v[1..].chars().take(body.len()).collect();
                        let shape_ok = digits.len() == body.len()
                            && body.chars().zip(&digits).all(|(p, c)| {
                                if p == ':' {
                                    *c == ':'
                                } else {
                                    c.is_ascii_digit()
                                }
                            });
                        if !shape_ok {
                            None
                        } else {
                            let d: String = digits.iter().filter(|c| c.is_ascii_digit()).collect();
                            let h: i64 = d[..2].parse().unwrap_or(0);
                            let m: i64 = d.get(2..4).and_then(|x| x.parse().ok()).unwrap_or(0);
                            let s: i64 = d.get(4..6).and_then(|x| x.parse().ok()).unwrap_or(0);
                            offset = sign * (h * 3600 + m * 60 + s);
                            v = &v[1 + body.len()..];
                            Some(())
                        }
                    }
                }
            }
            Std::Frac(_, n) => {
                let sep_ok = v.starts_with(['.', ',']);
                let digits = v
                    .get(1..)
                    .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
                if let Std::Frac(b'0', _) = std {
                    if sep_ok && digits >= n {
                        nanos = frac_nanos(&v[1..1 + n]);
                        v = &v[1 + n..];
                        Some(())
                    } else {
                        None
                    }
                } else if sep_ok && digits > 0 {
                    nanos = frac_nanos(&v[1..1 + digits]);
                    v = &v[1 + digits..];
                    Some(())
                } else {
                    Some(())
                }
            }
        };
        if ok.is_none() {
            return Err(err_at(chunk, before));
        }
    }
    if let Some(p) = pm {
        if p && hour < 12 {
            hour += 12;
        } else if !p && hour == 12 {
            hour = 0;
        }
    }
    let range = |what: &str| format!("parsing time {}: {what} out of range", q(value));
    if let Some(yd) = yday {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        if yd < 1 || yd > 365 + i64::from(leap) {
            return Err(range("day-of-year"));
        }
        let d = days_from_civil(year, 1, 1) + yd - 1;
        let (_, m, dd) = civil_from_days(d);
        month = m;
        day = dd;
    }
    if !(1..=12).contains(&month) {
        return Err(range("month"));
    }
    let days_in = |y: i64, m: i64| {
        days_from_civil(
            if m == 12 { y + 1 } else { y },
            if m == 12 { 1 } else { m + 1 },
            1,
        ) - days_from_civil(y, m, 1)
    };
    if day < 1 || day > days_in(year, month) {
        return Err(range("day"));
    }
    if hour > 23 {
        return Err(range("hour"));
    }
    if min > 59 {
        return Err(range("minute"));
    }
    if sec > 59 {
        return Err(range("second"));
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset;
    Ok(Time {
        secs,
        nanos,
        offset: offset as i32,
    })
}

fn frac_nanos(digits: &str) -> u32 {
    let mut d: String = digits.chars().take(9).collect();
    while d.len() < 9 {
        d.push('0');
    }
    d.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_like_go() {
        let t = parse("2006-01-02T15:04:05Z07:00", "2024-02-29T13:05:09+02:00").expect("parses");
        // A parsed offset stays, as an unnamed fixed zone (Go's output).
        assert_eq!(string(t), "2024-02-29 13:05:09 +0200 +0200");
        assert_eq!(string(utc(t)), "2024-02-29 11:05:09 +0000 UTC");
        assert_eq!(
            format(utc(t), "Mon Jan _2 3:04PM 2006 .000 -0700"),
            "Thu Feb 29 11:05AM 2024 .000 +0000"
        );
        assert_eq!(string(ZERO), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(duration_string(3_723_000_000_000), "1h2m3s");
        assert_eq!(duration_string(1_500_000), "1.5ms");
        assert_eq!(parse_duration("1h30m").expect("parses"), 5_400_000_000_000);
        assert_eq!(
            parse_duration("x").unwrap_err(),
            "time: invalid duration \"x\""
        );
    }
}
