//! Readiness checks (ready.go), run against observed composed resources.

use serde_json::Value;
use xfn_sdk::fieldpath;

use crate::input::ReadinessCheck;
use crate::validate::validate_readiness_check;

/// Whether an observed resource is ready (`IsReady`). With no checks, the
/// `Ready` condition must be `True`. Otherwise every check must pass; the
/// first error stops with `cannot run readiness check at index i: ...`.
pub fn is_ready(observed: &Value, checks: &[ReadinessCheck]) -> Result<bool, String> {
    if checks.is_empty() {
        return Ok(condition_status(observed, "Ready") == "True");
    }
    for (i, c) in checks.iter().enumerate() {
        let ready = run_check(c, observed)
            .map_err(|e| format!("cannot run readiness check at index {i}: {e}"))?;
        if !ready {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Not found is "not ready", any other error is an error.
fn ignore_not_found<T>(r: Result<T, fieldpath::FieldPathError>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// `RunReadinessCheck`.
pub fn run_check(c: &ReadinessCheck, o: &Value) -> Result<bool, String> {
    validate_readiness_check(c).map_err(|e| format!("invalid: {e}"))?;
    let path = c.field_path.as_deref().unwrap_or_default();
    match c.r#type.as_str() {
        "None" => Ok(true),
        "NonEmpty" => Ok(ignore_not_found(fieldpath::get(o, path))?.is_some()),
        "MatchString" => {
            let want = c.match_string.as_deref().unwrap_or_default();
            Ok(ignore_not_found(fieldpath::get_string(o, path))?.is_some_and(|v| v == want))
        }
        // Go only accepts int64 here, and request numbers are float64:
        // a numeric field errors (`<path>: not a (int64) number`), as in Go.
        "MatchInteger" => {
            let want = c.match_integer.unwrap_or_default();
            Ok(ignore_not_found(fieldpath::get_integer(o, path))?.is_some_and(|v| v == want))
        }
        "MatchTrue" => Ok(ignore_not_found(fieldpath::get_bool(o, path))? == Some(true)),
        "MatchFalse" => Ok(ignore_not_found(fieldpath::get_bool(o, path))? == Some(false)),
        "MatchCondition" => {
            // Go dereferences a missing matchCondition and panics; we report it.
            let Some(m) = &c.match_condition else {
                return Err("invalid: matchCondition: Required value: cannot be nil for type MatchCondition".into());
            };
            Ok(condition_status(o, &m.r#type) == m.status)
        }
        _ => Ok(false),
    }
}

/// The status of condition `ct` as crossplane-runtime's `GetCondition` sees
/// it: `""` if `status` is missing or does not decode as a
/// `ConditionedStatus`, `"Unknown"` if there is no such condition.
pub fn condition_status(o: &Value, ct: &str) -> String {
    let Ok(status) = fieldpath::get(o, "status") else {
        return String::new();
    };
    let conditions = match status {
        Value::Null => return "Unknown".into(),
        Value::Object(m) => match m.get("conditions") {
            None | Some(Value::Null) => return "Unknown".into(),
            Some(Value::Array(items)) => items,
            Some(_) => return String::new(),
        },
        _ => return String::new(),
    };
    let mut found: Option<String> = None;
    for c in conditions {
        let Some((t, s)) = decode_condition(c) else {
            return String::new();
        };
        if found.is_none() && t == ct {
            found = Some(s);
        }
    }
    found.unwrap_or_else(|| "Unknown".into())
}

/// A condition's (type, status), or `None` if it does not decode as an
/// `xpv1.Condition` (wrong field types, a bad `lastTransitionTime`, a
/// fractional `observedGeneration`).
fn decode_condition(c: &Value) -> Option<(String, String)> {
    let m = match c {
        Value::Null => return Some((String::new(), String::new())),
        Value::Object(m) => m,
        _ => return None,
    };
    let string = |k: &str| -> Option<String> {
        match m.get(k) {
            None | Some(Value::Null) => Some(String::new()),
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => None,
        }
    };
    let t = string("type")?;
    let s = string("status")?;
    string("reason")?;
    string("message")?;
    match m.get("lastTransitionTime") {
        None | Some(Value::Null) => {}
        Some(Value::String(ts)) if is_rfc3339(ts) => {}
        Some(_) => return None,
    }
    match m.get("observedGeneration") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) => {
            let ok = n.as_i64().is_some()
                || n.as_f64()
                    .and_then(xfn_sdk::fieldpath::integral_f64_as_i64)
                    .is_some();
            if !ok {
                return None;
            }
        }
        Some(_) => return None,
    }
    Some((t, s))
}

/// Go's `time.Parse(time.RFC3339, s)` acceptance: `2006-01-02T15:04:05Z07:00`
/// with optional fractional seconds.
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    ) else {
        return false;
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || b.get(10) != Some(&b'T') {
        return false;
    }
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || min > 59 || sec > 59 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let (Some(h), Some(m)) = (digits(i + 1..i + 3), digits(i + 4..i + 6)) else {
                return false;
            };
            b.get(i + 3) == Some(&b':') && i + 6 == b.len() && h < 24 && m < 60
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::MatchCondition;

    fn check(t: &str, path: Option<&str>) -> ReadinessCheck {
        ReadinessCheck {
            r#type: t.into(),
            field_path: path.map(Into::into),
            ..ReadinessCheck::default()
        }
    }

    fn ready_condition(status: &str) -> Value {
        json!({"status": {"conditions": [{"type": "Ready", "status": status, "lastTransitionTime": "2024-01-01T00:00:00Z"}]}})
    }

    #[test]
    fn default_check_is_the_ready_condition() {
        assert_eq!(is_ready(&ready_condition("True"), &[]), Ok(true));
        assert_eq!(is_ready(&ready_condition("False"), &[]), Ok(false));
        assert_eq!(is_ready(&json!({}), &[]), Ok(false));
    }

    #[test]
    fn check_types() {
        let o = json!({
            "metadata": {"uid": "olala", "empty": ""},
            "spec": {"someBool": true, "falseBool": false, "replicas": 3.0, "int": 3, "nul": null}
        });
        let ms = |p: &str, v: &str| ReadinessCheck {
            match_string: Some(v.into()),
            ..check("MatchString", Some(p))
        };
        let mi = |p: &str, v: i64| ReadinessCheck {
            match_integer: Some(v),
            ..check("MatchInteger", Some(p))
        };
        let cases: Vec<(ReadinessCheck, Result<bool, &str>)> = vec![
            (check("None", None), Ok(true)),
            (check("NonEmpty", Some("metadata.uid")), Ok(true)),
            (check("NonEmpty", Some("metadata.empty")), Ok(true)),
            (check("NonEmpty", Some("spec.nul")), Ok(true)),
            (check("NonEmpty", Some("metadata.nope")), Ok(false)),
            (
                check("NonEmpty", Some("metadata.uid.x")),
                Err("metadata.uid: not an object"),
            ),
            (ms("metadata.uid", "olala"), Ok(true)),
            (ms("metadata.uid", "other"), Ok(false)),
            (ms("metadata.nope", "olala"), Ok(false)),
            (
                ms("spec.someBool", "true"),
                Err("spec.someBool: not a string"),
            ),
            (mi("spec.int", 3), Ok(true)),
            (mi("spec.int", 4), Ok(false)),
            (
                mi("spec.replicas", 3),
                Err("spec.replicas: not a (int64) number"),
            ),
            (mi("spec.nope", 3), Ok(false)),
            (check("MatchTrue", Some("spec.someBool")), Ok(true)),
            (check("MatchTrue", Some("spec.falseBool")), Ok(false)),
            (check("MatchTrue", Some("spec.missing")), Ok(false)),
            (check("MatchFalse", Some("spec.falseBool")), Ok(true)),
            (check("MatchFalse", Some("spec.missing")), Ok(false)),
            (
                check("MatchFalse", Some("metadata.uid")),
                Err("metadata.uid: not a bool"),
            ),
            // Upstream TestIsReady/MatchFalseNotReady.
            (check("MatchFalse", Some("spec.someBool")), Ok(false)),
            // Upstream TestIsReady's metadata..uid path errors for
            // MatchString and MatchInteger.
            (
                ms("metadata..uid", "olala"),
                Err("cannot parse path \"metadata..uid\": unexpected '.' at position 9"),
            ),
            (
                mi("metadata..uid", 5),
                Err("cannot parse path \"metadata..uid\": unexpected '.' at position 9"),
            ),
            (
                check("Olala", None),
                Err("invalid: type: Invalid value: \"Olala\": unknown readiness check type"),
            ),
            (
                check("NonEmpty", None),
                Err("invalid: fieldPath: Required value: cannot be empty"),
            ),
            (
                check("NonEmpty", Some("metadata..uid")),
                Err("cannot parse path \"metadata..uid\": unexpected '.' at position 9"),
            ),
            (
                check("MatchCondition", None),
                Err(
                    "invalid: matchCondition: Required value: cannot be nil for type MatchCondition",
                ),
            ),
        ];
        for (c, want) in cases {
            assert_eq!(
                run_check(&c, &o).as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{c:?}"
            );
        }
    }

    #[test]
    fn is_ready_wraps_and_stops_at_first_error() {
        let o = json!({"metadata": {"uid": "x"}});
        let checks = [
            check("NonEmpty", Some("metadata.uid")),
            check("NonEmpty", Some("metadata..uid")),
        ];
        assert_eq!(
            is_ready(&o, &checks),
            Err("cannot run readiness check at index 1: cannot parse path \"metadata..uid\": unexpected '.' at position 9".into())
        );
        let checks = [
            check("NonEmpty", Some("metadata.nope")),
            check("Olala", None),
        ];
        assert_eq!(is_ready(&o, &checks), Ok(false));
    }

    #[test]
    fn match_condition() {
        let mc = |t: &str, s: &str| ReadinessCheck {
            match_condition: Some(MatchCondition {
                r#type: t.into(),
                status: s.into(),
            }),
            ..check("MatchCondition", None)
        };
        assert_eq!(
            run_check(&mc("Ready", "True"), &ready_condition("True")),
            Ok(true)
        );
        assert_eq!(
            run_check(&mc("Ready", "True"), &ready_condition("False")),
            Ok(false)
        );
        assert_eq!(
            run_check(&mc("Synced", "Unknown"), &ready_condition("True")),
            Ok(true)
        );
        assert_eq!(run_check(&mc("Synced", "Unknown"), &json!({})), Ok(false));
        assert_eq!(
            run_check(&mc("Synced", ""), &json!({})),
            Err("invalid: matchCondition.status: Required value: cannot be empty for type MatchCondition".into())
        );
        assert_eq!(
            run_check(&mc("Synced", "Unknown"), &json!({"status": {}})),
            Ok(true)
        );
    }

    #[test]
    fn conditions_decode_like_go() {
        let with = |c: Value| json!({"status": {"conditions": [c]}});
        assert_eq!(
            condition_status(&with(json!({"type": "Ready", "status": "True"})), "Ready"),
            "True"
        );
        assert_eq!(
            condition_status(&with(json!({"type": "Ready", "status": true})), "Ready"),
            ""
        );
        assert_eq!(
            condition_status(
                &with(
                    json!({"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"})
                ),
                "Ready"
            ),
            ""
        );
        assert_eq!(
            condition_status(
                &with(json!({"type": "Ready", "status": "True", "observedGeneration": 2.5})),
                "Ready"
            ),
            ""
        );
        assert_eq!(
            condition_status(
                &with(
                    json!({"type": "Ready", "status": "True", "observedGeneration": 2.0, "extra": 1})
                ),
                "Ready"
            ),
            "True"
        );
        assert_eq!(condition_status(&json!({"status": "weird"}), "Ready"), "");
        assert_eq!(
            condition_status(&json!({"status": {"conditions": "x"}}), "Ready"),
            ""
        );
        assert_eq!(
            condition_status(&json!({"status": null}), "Ready"),
            "Unknown"
        );
        assert!(is_rfc3339("2024-02-29T23:59:59.123+05:30"));
        assert!(!is_rfc3339("2023-02-29T00:00:00Z"));
        assert!(!is_rfc3339("2024-01-01 00:00:00Z"));
    }
}
