//! Sprig's date functions (`now date dateInZone htmlDate htmlDateInZone
//! toDate mustToDate dateModify mustDateModify unixEpoch ago duration
//! durationRound` and the snake-case aliases) on [`crate::gotime`], in UTC:
//! `Local` in upstream's container. Other time zones are refused by name.

use crate::gotime::{self, Time};
use crate::template::func::{Env, Func, FuncMap, Param};
use crate::template::value::Value;

fn s(a: &[Value], i: usize) -> String {
    match a.get(i) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

fn now(env: &mut dyn Env) -> Time {
    let n = env.now_nanos();
    Time {
        secs: n.div_euclid(1_000_000_000) as i64,
        nanos: n.rem_euclid(1_000_000_000) as u32,
        offset: 0,
    }
}

/// A zone sprig may load: only UTC (and `Local`, UTC in a container).
fn check_zone(zone: &str) -> Result<(), String> {
    match zone {
        "" | "UTC" | "Local" => Ok(()),
        other => Err(format!(
            "the time zone {} is not supported by xfn's port (only UTC and Local)",
            xfn_gocompat::gofmt::quote(other)
        )),
    }
}

/// Sprig's `dateInZone`: a time, or Unix seconds, or now for anything else.
fn date_in_zone(
    env: &mut dyn Env,
    layout: &str,
    date: &Value,
    zone: &str,
) -> Result<Value, String> {
    check_zone(zone)?;
    let t = match date {
        Value::Time(t) => gotime::utc(*t),
        Value::Int(n, _) => Time {
            secs: *n,
            nanos: 0,
            offset: 0,
        },
        _ => now(env),
    };
    Ok(Value::str(gotime::format(t, layout)))
}

fn add(t: Time, d: i64) -> Time {
    let total = i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos) + i128::from(d);
    Time {
        secs: total.div_euclid(1_000_000_000) as i64,
        nanos: total.rem_euclid(1_000_000_000) as u32,
        offset: t.offset,
    }
}

fn since(env: &mut dyn Env, t: Time) -> i64 {
    let n = now(env);
    let d = (i128::from(n.secs) - i128::from(t.secs)) * 1_000_000_000 + i128::from(n.nanos)
        - i128::from(t.nanos);
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Adds the date functions to `m`.
pub fn add_functions(m: &mut FuncMap) {
    use Param::{Any, Str};
    m.insert("now", Func::new(&[], |env, _| Ok(Value::Time(now(env)))));
    m.insert(
        "date",
        Func::new(&[Str, Any], |env, a| {
            date_in_zone(env, &s(&a, 0), &a[1], "Local")
        }),
    );
    m.insert(
        "htmlDate",
        Func::new(&[Any], |env, a| {
            date_in_zone(env, "2006-01-02", &a[0], "Local")
        }),
    );
    m.insert(
        "htmlDateInZone",
        Func::new(&[Any, Str], |env, a| {
            date_in_zone(env, "2006-01-02", &a[0], &s(&a, 1))
        }),
    );
    for name in ["dateInZone", "date_in_zone"] {
        m.insert(
            name,
            Func::new(&[Str, Any, Str], |env, a| {
                date_in_zone(env, &s(&a, 0), &a[1], &s(&a, 2))
            }),
        );
    }
    m.insert(
        "toDate",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Time(
                gotime::parse(&s(&a, 0), &s(&a, 1)).unwrap_or(gotime::ZERO),
            ))
        }),
    );
    m.insert(
        "mustToDate",
        Func::new(&[Str, Str], |_, a| {
            gotime::parse(&s(&a, 0), &s(&a, 1)).map(Value::Time)
        }),
    );
    for name in ["dateModify", "date_modify"] {
        m.insert(
            name,
            Func::new(&[Str, Param::Time], |_, a| {
                let Value::Time(t) = a[1] else {
                    return Ok(a[1].clone());
                };
                Ok(Value::Time(match gotime::parse_duration(&s(&a, 0)) {
                    Ok(d) => add(t, d),
                    Err(_) => t,
                }))
            }),
        );
    }
    for name in ["mustDateModify", "must_date_modify"] {
        m.insert(
            name,
            Func::new(&[Str, Param::Time], |_, a| {
                let Value::Time(t) = a[1] else {
                    return Ok(a[1].clone());
                };
                gotime::parse_duration(&s(&a, 0)).map(|d| Value::Time(add(t, d)))
            }),
        );
    }
    m.insert(
        "unixEpoch",
        Func::new(&[Param::Time], |_, a| match a[0] {
            Value::Time(t) => Ok(Value::str(t.secs.to_string())),
            _ => Ok(Value::str("0")),
        }),
    );
    m.insert(
        "ago",
        Func::new(&[Any], |env, a| {
            let t = match &a[0] {
                Value::Time(t) => *t,
                Value::Int(n, _) => Time {
                    secs: *n,
                    nanos: 0,
                    offset: 0,
                },
                _ => now(env),
            };
            let d = since(env, t);
            // Round to the second, halves away from zero.
            let r = (i128::from(d) + if d >= 0 { 500_000_000 } else { -500_000_000 })
                / 1_000_000_000
                * 1_000_000_000;
            Ok(Value::str(gotime::duration_string(r as i64)))
        }),
    );
    m.insert(
        "duration",
        Func::new(&[Any], |_, a| {
            let n: i64 = match &a[0] {
                Value::Str(s) => s.parse().unwrap_or(0),
                Value::Int(n, crate::template::value::IntKind::Int64) => *n,
                _ => 0,
            };
            Ok(Value::str(gotime::duration_string(
                n.wrapping_mul(1_000_000_000),
            )))
        }),
    );
    m.insert(
        "durationRound",
        Func::new(&[Any], |env, a| {
            let d: i64 = match &a[0] {
                Value::Str(s) => gotime::parse_duration(s).unwrap_or(0),
                Value::Int(n, crate::template::value::IntKind::Int64) => *n,
                Value::Time(t) => since(env, *t),
                _ => 0,
            };
            let u = d.unsigned_abs();
            const HOUR: u64 = 3_600_000_000_000;
            let units: [(u64, &str); 6] = [
                (HOUR * 24 * 365, "y"),
                (HOUR * 24 * 30, "mo"),
                (HOUR * 24, "d"),
                (HOUR, "h"),
                (60_000_000_000, "m"),
                (1_000_000_000, "s"),
            ];
            for (unit, suffix) in units {
                if u > unit {
                    return Ok(Value::str(format!("{}{suffix}", u / unit)));
                }
            }
            Ok(Value::str("0s"))
        }),
    );
}
