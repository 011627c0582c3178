//! function-go-templating's own template functions (v0.12.2
//! `function_maps.go`): `toYaml`, `fromYaml`, `include`,
//! `setResourceNameAnnotation`, `randomChoice`, `getResourceCondition`,
//! `getComposedResource`, `getCompositeResource`, `getExtraResources`,
//! `getExtraResourcesFromContext`, `getCredentialData`, and
//! `getComposedConnectionDetails` from upstream's main branch.

use crate::template::func::{Func, FuncMap, Param};
use base64::Engine as _;

use crate::template::value::{Elem, Struct, Value};

/// Upstream functions not ported yet.
pub const UNIMPLEMENTED: &[&str] = &[];

/// Adds upstream's functions to `m`.
pub fn add(m: &mut FuncMap) {
    use Param::{Any, MapAny, Str};
    // On upstream's main branch after v0.12.2 (#566); the issue asks for it.
    m.insert(
        "getComposedConnectionDetails",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            Ok(get_value_into(
                &a[0],
                &["observed", "resources", &name, "connectionDetails"],
            )
            .filter(is_map)
            .unwrap_or_else(nil_map))
        }),
    );
    m.insert(
        "setResourceNameAnnotation",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(format!(
                "gotemplating.fn.crossplane.io/composition-resource-name: {}",
                str_arg(&a, 0)
            )))
        }),
    );
    m.insert(
        "include",
        Func::new(&[Str, Any], |env, a| {
            let data = a.get(1).cloned().unwrap_or(Value::Nil);
            env.execute_named(&str_arg(&a, 0), data).map(Value::str)
        }),
    );
    m.insert(
        "randomChoice",
        Func::variadic(&[], Str, |env, a| {
            if a.is_empty() {
                return Err("invalid argument to Intn".into());
            }
            let i = (env.random() % a.len() as u64) as usize;
            Ok(a[i].clone())
        }),
    );
    m.insert(
        "toYaml",
        Func::new(&[Any], |_, a| crate::yamlv3::marshal(&a[0]).map(Value::str)),
    );
    m.insert(
        "fromYaml",
        Func::new(&[Str], |_, a| crate::yamlv3::unmarshal(&str_arg(&a, 0))).any(),
    );
    m.insert(
        "getCompositeResource",
        Func::new(&[MapAny], |_, a| {
            Ok(
                get_value_into(&a[0], &["observed", "composite", "resource"])
                    .filter(is_map)
                    .unwrap_or_else(nil_map),
            )
        }),
    );
    m.insert(
        "getComposedResource",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            Ok(
                get_value_into(&a[0], &["observed", "resources", &name, "resource"])
                    .filter(is_map)
                    .unwrap_or_else(nil_map),
            )
        }),
    );
    m.insert(
        "getExtraResources",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            let found = get_value_into(&a[0], &["requiredResources", &name, "items"])
                .filter(is_list)
                .or_else(|| {
                    get_value_into(&a[0], &["extraResources", &name, "items"]).filter(is_list)
                });
            Ok(found.unwrap_or_else(|| Value::list(Vec::new())))
        }),
    );
    m.insert(
        "getExtraResourcesFromContext",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            let found = get_value_into(
                &a[0],
                &[
                    "context",
                    "apiextensions.crossplane.io/extra-resources",
                    &name,
                    "items",
                ],
            )
            .filter(is_list);
            Ok(found.unwrap_or_else(|| Value::list(Vec::new())))
        }),
    );
    m.insert(
        "getCredentialData",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            // Upstream reads the request back from the map: credential data is
            // base64 in protojson, a map[string][]byte in Go.
            let mut out = std::collections::BTreeMap::new();
            if let Some(Value::Map(data, _)) =
                path(&a[0], &["credentials", &name, "credentialData", "data"])
            {
                for (k, v) in data.borrow().iter() {
                    let Value::Str(s) = v else { continue };
                    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s.as_bytes())
                    else {
                        return Ok(Value::Map(Default::default(), Elem::Bytes));
                    };
                    out.insert(k.clone(), Value::bytes(&bytes));
                }
            }
            Ok(Value::Map(
                std::rc::Rc::new(std::cell::RefCell::new(out)),
                Elem::Bytes,
            ))
        }),
    );
    m.insert(
        "getResourceCondition",
        Func::new(&[Str, MapAny], |_, a| {
            let ct = str_arg(&a, 0);
            // Upstream decodes `resource.status`, else `status`, into a
            // ConditionedStatus, and takes the first condition of the type.
            let status = path(&a[1], &["resource", "status"])
                .filter(is_map)
                .or_else(|| path(&a[1], &["status"]).filter(is_map));
            let conds = status.and_then(|s| path(&s, &["conditions"]));
            let found = match conds {
                Some(Value::List(l, _)) => l
                    .iter()
                    .find(|c| matches!(path(c, &["type"]), Some(Value::Str(t)) if *t == *ct))
                    .cloned(),
                _ => None,
            };
            Ok(condition(&ct, found.as_ref()))
        }),
    );
}

fn str_arg(a: &[Value], i: usize) -> String {
    match a.get(i) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

fn is_map(v: &Value) -> bool {
    matches!(v, Value::Map(..))
}

fn is_list(v: &Value) -> bool {
    matches!(v, Value::List(..))
}

fn nil_map() -> Value {
    Value::map(Default::default())
}

/// What crossplane-runtime's `GetValueInto` gives: the value through a JSON
/// round trip, so every number is a `float64`.
fn json_round_trip(v: Value) -> Value {
    match v {
        Value::Int(i, _) => Value::Float(i as f64),
        Value::List(l, e) => Value::List(
            std::rc::Rc::new(l.iter().cloned().map(json_round_trip).collect()),
            e,
        ),
        Value::Map(m, e) => Value::Map(
            std::rc::Rc::new(std::cell::RefCell::new(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), json_round_trip(v.clone())))
                    .collect(),
            )),
            e,
        ),
        other => other,
    }
}

/// A value at `keys`, through JSON as upstream reads it.
fn get_value_into(v: &Value, keys: &[&str]) -> Option<Value> {
    path(v, keys).map(json_round_trip)
}

fn path(v: &Value, keys: &[&str]) -> Option<Value> {
    let mut cur = v.clone();
    for k in keys {
        let next = match &cur {
            Value::Map(m, _) => m.borrow().get(*k).cloned()?,
            _ => return None,
        };
        cur = next;
    }
    Some(cur)
}

/// A Kubernetes time (RFC 3339, as the request carries it) as Go prints a
/// `metav1.Time` in UTC (`2006-01-02 15:04:05 +0000 UTC`) and as yaml.v3
/// marshals it (`time.Time`'s RFC 3339 text, in UTC); the zero time when
/// absent, and a time that does not parse kept as it is.
fn times(v: &Value) -> (String, String) {
    const ZERO: (&str, &str) = ("0001-01-01 00:00:00 +0000 UTC", "0001-01-01T00:00:00Z");
    let Value::Str(s) = v else {
        return (ZERO.0.into(), ZERO.1.into());
    };
    if s.is_empty() {
        return (ZERO.0.into(), ZERO.1.into());
    }
    parse_rfc3339(s).unwrap_or_else(|| (s.to_string(), s.to_string()))
}

fn parse_rfc3339(s: &str) -> Option<(String, String)> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, sec) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let mut rest = &s[19..];
    let mut frac = String::new();
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        frac = r[..n].trim_end_matches('0').to_string();
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (o[1..3].parse::<i64>().ok()? * 3600 + o[4..6].parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm), then back in UTC.
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    let (days, tod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let frac = if frac.is_empty() {
        String::new()
    } else {
        format!(".{frac}")
    };
    let (hh, mm, ss) = (tod / 3600, tod % 3600 / 60, tod % 60);
    Some((
        format!("{year:04}-{month:02}-{day:02} {hh:02}:{mm:02}:{ss:02}{frac} +0000 UTC"),
        format!("{year:04}-{month:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}{frac}Z"),
    ))
}

/// An `xpv1.Condition`: the found one, or `Unknown` of the type asked for.
fn condition(ct: &str, found: Option<&Value>) -> Value {
    let field = |k: &str| -> Value {
        match found.and_then(|c| path(c, &[k])) {
            Some(Value::Str(s)) => Value::Str(s),
            _ => Value::str(""),
        }
    };
    let (typ, status) = match found {
        Some(_) => (field("type"), field("status")),
        None => (Value::str(ct), Value::str("Unknown")),
    };
    let generation = match found.and_then(|c| path(c, &["observedGeneration"])) {
        Some(Value::Int(i, _)) => Value::int64(i),
        _ => Value::int64(0),
    };
    let (printed_time, text_time) = times(&field("lastTransitionTime"));
    let yaml = vec![
        ("type", typ.clone()),
        ("status", status.clone()),
        ("lasttransitiontime", Value::str(text_time)),
        ("reason", field("reason")),
        ("message", field("message")),
        ("observedgeneration", generation.clone()),
    ];
    Value::Struct(std::rc::Rc::new(Struct {
        yaml: Some(yaml),
        type_name: "v1.Condition",
        fields: vec![
            ("Type", typ),
            ("Status", status),
            ("LastTransitionTime", Value::str(printed_time)),
            ("Reason", field("reason")),
            ("Message", field("message")),
            ("ObservedGeneration", generation),
        ],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_times_print_as_go_prints_them() {
        assert_eq!(
            times(&Value::str("2024-01-01T00:00:00Z")).0,
            "2024-01-01 00:00:00 +0000 UTC"
        );
        assert_eq!(
            times(&Value::str("2024-03-01T01:30:00+02:00")).0,
            "2024-02-29 23:30:00 +0000 UTC"
        );
        assert_eq!(
            times(&Value::str("2024-01-01T00:00:00.500Z")).0,
            "2024-01-01 00:00:00.5 +0000 UTC"
        );
        assert_eq!(times(&Value::str("")).0, "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(
            times(&Value::str("2024-03-01T01:30:00+02:00")).1,
            "2024-02-29T23:30:00Z"
        );
        assert_eq!(times(&Value::str("junk")).0, "junk");
    }
}
