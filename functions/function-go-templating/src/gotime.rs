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

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(v: &str, fixed: bool) -> Option<(i64, &str)> {
    let b = v.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if !b.get(1).is_some_and(u8::is_ascii_digit) {
        if fixed {
            return None;
        }
        return Some((i64::from(b[0] - b'0'), &v[1..]));
    }
    Some((
        i64::from(b[0] - b'0') * 10 + i64::from(b[1] - b'0'),
        &v[2..],
    ))
}

/// Go's `getnum3`: one to three digits (exactly three when `fixed`).
fn getnum3(v: &str, fixed: bool) -> Option<(i64, &str)> {
    let n = v.bytes().take(3).take_while(u8::is_ascii_digit).count();
    if n == 0 || (fixed && n != 3) {
        return None;
    }
    Some((v[..n].parse().ok()?, &v[n..]))
}

/// Go's `lookup` of a name, ASCII case-insensitively: (index, rest).
fn lookup<'v>(names: &[&str], v: &'v str, short: bool) -> Option<(usize, &'v str)> {
    for (i, name) in names.iter().enumerate() {
        let name = if short { &name[..3] } else { name };
        if v.len() >= name.len()
            && v.is_char_boundary(name.len())
            && v[..name.len()].eq_ignore_ascii_case(name)
        {
            return Some((i, &v[name.len()..]));
        }
    }
    None
}

/// `time.ParseInLocation(layout, value, UTC)`, with Go's error texts and
/// its order of checks (ranges as each element is read; the day and the
/// day of the year at the end).
pub fn parse(layout: &str, value: &str) -> Result<Time, String> {
    let q = xfn_gocompat::gofmt::quote;
    let bad = |elem: &str, rest: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            q(value),
            q(layout),
            q(rest),
            q(elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", q(value));
    let (mut year, mut month, mut day, mut yday) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut min, mut sec, mut nanos) = (0i64, 0i64, 0i64, 0u32);
    let (mut pm_set, mut am_set) = (false, false);
    let mut offset: i64 = 0;
    let mut lay = layout;
    let mut v = value;
    loop {
        let (prefix, std, suffix) = next_chunk(lay);
        let Some(rest) = v.strip_prefix(prefix) else {
            return Err(bad(prefix, v));
        };
        v = rest;
        let Some((std, chunk)) = std else {
            if !v.is_empty() {
                return Err(format!("parsing time {}: extra text: {}", q(value), q(v)));
            }
            break;
        };
        lay = suffix;
        let hold = v;
        // Each arm gives the rest of the value, or the value to show in the
        // error (some elements consume before they fail, as Go's do).
        let step: Result<&str, &str> = match std {
            Std::Year => {
                if v.len() < 2 || !v.is_char_boundary(2) {
                    Err(v)
                } else {
                    match v[..2].parse::<i64>() {
                        Ok(y) if v.as_bytes()[..2].iter().all(u8::is_ascii_digit) => {
                            year = if y >= 69 { y + 1900 } else { y + 2000 };
                            Ok(&v[2..])
                        }
                        _ => Err(v),
                    }
                }
            }
            Std::LongYear => {
                // Go cuts four bytes first, then reads them (a sign allowed).
                if v.len() < 4 || !v.is_char_boundary(4) {
                    Err(v)
                } else {
                    let (p, r) = v.split_at(4);
                    let (neg, digits) = match p.as_bytes()[0] {
                        b'-' => (true, &p[1..]),
                        b'+' => (false, &p[1..]),
                        _ => (false, p),
                    };
                    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                        let y: i64 = digits.parse().unwrap_or(0);
                        year = if neg { -y } else { y };
                        Ok(r)
                    } else {
                        Err(r)
                    }
                }
            }
            Std::Month | Std::LongMonth => match lookup(&MONTHS, v, std == Std::Month) {
                Some((i, r)) => {
                    month = i as i64 + 1;
                    Ok(r)
                }
                None => Err(v),
            },
            Std::WeekDay | Std::LongWeekDay => lookup(&DAYS, v, std == Std::WeekDay)
                .map(|(_, r)| r)
                .ok_or(v),
            Std::NumMonth | Std::ZeroMonth => match getnum(v, std == Std::ZeroMonth) {
                Some((m, r)) => {
                    if !(1..=12).contains(&m) {
                        return Err(range("month"));
                    }
                    month = m;
                    Ok(r)
                }
                None => Err(v),
            },
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                let mut w = v;
                if std == Std::UnderDay && w.starts_with(' ') {
                    w = &w[1..];
                }
                match getnum(w, std == Std::ZeroDay) {
                    Some((d, r)) => {
                        day = d;
                        Ok(r)
                    }
                    None => Err(w),
                }
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                let mut w = v;
                if std == Std::UnderYearDay {
                    for _ in 0..2 {
                        if w.starts_with(' ') {
                            w = &w[1..];
                        }
                    }
                }
                match getnum3(w, std == Std::ZeroYearDay) {
                    Some((d, r)) => {
                        yday = d;
                        Ok(r)
                    }
                    None => Err(w),
                }
            }
            Std::Hour => match getnum(v, false) {
                Some((h, r)) => {
                    if h >= 24 {
                        return Err(range("hour"));
                    }
                    hour = h;
                    Ok(r)
                }
                None => Err(v),
            },
            Std::Hour12 | Std::ZeroHour12 => match getnum(v, std == Std::ZeroHour12) {
                Some((h, r)) => {
                    if h > 12 {
                        return Err(range("hour"));
                    }
                    hour = h;
                    Ok(r)
                }
                None => Err(v),
            },
            Std::Minute | Std::ZeroMinute => match getnum(v, std == Std::ZeroMinute) {
                Some((m, r)) => {
                    if m >= 60 {
                        return Err(range("minute"));
                    }
                    min = m;
                    Ok(r)
                }
                None => Err(v),
            },
            Std::Second | Std::ZeroSecond => match getnum(v, std == Std::ZeroSecond) {
                Some((x, mut r)) => {
                    if x >= 60 {
                        return Err(range("second"));
                    }
                    sec = x;
                    // A fractional second in the value but not the layout.
                    let b = r.as_bytes();
                    if b.len() >= 2 && (b[0] == b'.' || b[0] == b',') && b[1].is_ascii_digit() {
                        let (_, next, _) = next_chunk(lay);
                        if !matches!(next, Some((Std::Frac(..), _))) {
                            let n = 1 + r[1..].bytes().take_while(u8::is_ascii_digit).count();
                            nanos = frac_nanos(&r[1..n]);
                            r = &r[n..];
                        }
                    }
                    Ok(r)
                }
                None => Err(v),
            },
            Std::PM | Std::Pm => {
                if v.len() < 2 || !v.is_char_boundary(2) {
                    Err(v)
                } else {
                    let (p, r) = v.split_at(2);
                    match (std, p) {
                        (Std::PM, "PM") | (Std::Pm, "pm") => {
                            pm_set = true;
                            Ok(r)
                        }
                        (Std::PM, "AM") | (Std::Pm, "am") => {
                            am_set = true;
                            Ok(r)
                        }
                        _ => Err(r),
                    }
                }
            }
            Std::Tz => {
                if let Some(r) = v.strip_prefix("UTC") {
                    Ok(r)
                } else {
                    let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                    if (3..=5).contains(&n) {
                        return Err(format!(
                            "the time zone {} is not supported by xfn's port (only UTC)",
                            q(&v[..n])
                        ));
                    }
                    Err(v)
                }
            }
            Std::Iso(pat) | Std::Num(pat) => {
                // Go takes `Z` for the ISO forms without seconds only.
                if matches!(std, Std::Iso("Z0700" | "Z07:00" | "Z07")) && v.starts_with('Z') {
                    Ok(&v[1..])
                } else {
                    // Go slices the value to the pattern's length first.
                    let len = pat.len();
                    if v.len() < len || !v.is_char_boundary(len) {
                        Err(v)
                    } else {
                        let (z, r) = v.split_at(len);
                        let zb = z.as_bytes();
                        let shape = zb.iter().zip(pat.as_bytes()).skip(1).all(|(c, p)| {
                            if *p == b':' {
                                *c == b':'
                            } else {
                                c.is_ascii_digit()
                            }
                        });
                        let sign = match zb[0] {
                            b'+' => 1,
                            b'-' => -1,
                            _ => 0,
                        };
                        if !shape || sign == 0 {
                            Err(r)
                        } else {
                            let d: String = z[1..].chars().filter(char::is_ascii_digit).collect();
                            let h: i64 = d[..2].parse().unwrap_or(0);
                            let m: i64 = d.get(2..4).and_then(|x| x.parse().ok()).unwrap_or(0);
                            let sc: i64 = d.get(4..6).and_then(|x| x.parse().ok()).unwrap_or(0);
                            if h > 24 {
                                return Err(range("time zone offset hour"));
                            }
                            if m > 60 {
                                return Err(range("time zone offset minute"));
                            }
                            if sc > 60 {
                                return Err(range("time zone offset second"));
                            }
                            offset = sign * (h * 3600 + m * 60 + sc);
                            Ok(r)
                        }
                    }
                }
            }
            Std::Frac(ch, n) => {
                if ch == b'0' {
                    let nd = 1 + n;
                    if v.len() < nd || !v.is_char_boundary(nd) {
                        Err(v)
                    } else {
                        let (f, r) = v.split_at(nd);
                        let fb = f.as_bytes();
                        if (fb[0] == b'.' || fb[0] == b',')
                            && fb[1..].iter().all(u8::is_ascii_digit)
                        {
                            nanos = frac_nanos(&f[1..]);
                            Ok(r)
                        } else {
                            Err(r)
                        }
                    }
                } else {
                    let b = v.as_bytes();
                    if b.len() < 2 || !(b[0] == b'.' || b[0] == b',') || !b[1].is_ascii_digit() {
                        Ok(v)
                    } else {
                        // At most nine digits, as Go takes.
                        let k = 1 + v[1..]
                            .bytes()
                            .take(9)
                            .take_while(u8::is_ascii_digit)
                            .count();
                        nanos = frac_nanos(&v[1..k]);
                        Ok(&v[k..])
                    }
                }
            }
        };
        match step {
            Ok(r) => v = r,
            Err(shown) => {
                let _ = hold;
                return Err(bad(chunk, shown));
            }
        }
    }
    if pm_set && hour < 12 {
        hour += 12;
    } else if am_set && hour == 12 {
        hour = 0;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if yday >= 0 {
        let mut yd = yday;
        let (mut m, mut d) = (0, 0);
        if leap {
            if yd == 31 + 29 {
                m = 2;
                d = 29;
            } else if yd > 31 + 29 {
                yd -= 1;
            }
        }
        if !(1..=365).contains(&yd) {
            return Err(range("day-of-year"));
        }
        if m == 0 {
            const BEFORE: [i64; 13] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
            m = (yd - 1) / 31 + 1;
            if BEFORE[m as usize] < yd {
                m += 1;
            }
            d = yd - BEFORE[(m - 1) as usize];
        }
        if month >= 0 && month != m {
            return Err(format!(
                "parsing time {}: day-of-year does not match month",
                q(value)
            ));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(format!(
                "parsing time {}: day-of-year does not match day",
                q(value)
            ));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    let days_in = days_from_civil(
        if month == 12 { year + 1 } else { year },
        if month == 12 { 1 } else { month + 1 },
        1,
    ) - days_from_civil(year, month, 1);
    if day < 1 || day > days_in {
        return Err(range("day"));
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
