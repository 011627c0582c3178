//! Reading one condition of an object, as crossplane-runtime's
//! `Unstructured.GetCondition` does.
//!
//! Go decodes the object's `status` into a `ConditionedStatus` and looks
//! the type up: a missing `status`, or one that does not decode, gives the
//! empty condition (status `""`); a type that is not there gives status
//! `Unknown`; of several conditions of a type, the first is taken.

use serde_json::{Map, Value};

/// The fields of a condition that matching uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Condition {
    /// Its status (`True`, `False`, `Unknown`, or `""`).
    pub status: String,
    /// Its reason.
    pub reason: String,
    /// Its message.
    pub message: String,
}

/// Whether a value decodes as Go's `string` field (`null` decodes as "").
fn string_field(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Whether `lastTransitionTime` decodes as a `metav1.Time`: `null` or an
/// RFC 3339 timestamp.
fn time_field_ok(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty() || looks_rfc3339(s),
        _ => false,
    }
}

/// A light check of RFC 3339 (`2006-01-02T15:04:05Z07:00`, with optional
/// fractional seconds), enough to tell Go's decoder's failures apart.
fn looks_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
    {
        return false;
    }
    if !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Decodes one entry of `status.conditions`; `None` if Go's decoder fails.
fn decode(entry: &Value) -> Option<(String, Condition)> {
    let o = match entry {
        Value::Null => return Some((String::new(), Condition::default())),
        Value::Object(o) => o,
        _ => return None,
    };
    if !time_field_ok(o.get("lastTransitionTime")) {
        return None;
    }
    if let Some(g) = o.get("observedGeneration")
        && !(g.is_null() || g.as_f64().is_some_and(|f| f.fract() == 0.0))
    {
        return None;
    }
    Some((
        string_field(o.get("type"))?,
        Condition {
            status: string_field(o.get("status"))?,
            reason: string_field(o.get("reason"))?,
            message: string_field(o.get("message"))?,
        },
    ))
}

/// The condition of type `ty` of `object`.
///
/// ```
/// use function_status_transformer::conditions::get_condition;
/// let o = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}});
/// let c = get_condition(o.as_object().unwrap(), "Ready");
/// assert_eq!((c.status.as_str(), c.reason.as_str()), ("True", "Available"));
/// assert_eq!(get_condition(o.as_object().unwrap(), "Synced").status, "Unknown");
/// ```
pub fn get_condition(object: &Map<String, Value>, ty: &str) -> Condition {
    let unknown = Condition {
        status: "Unknown".to_owned(),
        ..Condition::default()
    };
    let status = match object.get("status") {
        None => return Condition::default(),
        Some(Value::Null) => return unknown,
        Some(Value::Object(s)) => s,
        Some(_) => return Condition::default(),
    };
    let entries = match status.get("conditions") {
        None | Some(Value::Null) => return unknown,
        Some(Value::Array(a)) => a,
        Some(_) => return Condition::default(),
    };
    let mut decoded = Vec::with_capacity(entries.len());
    for e in entries {
        match decode(e) {
            Some(d) => decoded.push(d),
            None => return Condition::default(),
        }
    }
    decoded
        .into_iter()
        .find(|(t, _)| t == ty)
        .map_or(unknown, |(_, c)| c)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn get(v: Value, ty: &str) -> Condition {
        get_condition(v.as_object().unwrap(), ty)
    }

    #[test]
    fn missing_or_undecodable_status_is_the_empty_condition() {
        assert_eq!(get(json!({}), "Ready"), Condition::default());
        assert_eq!(get(json!({"status": "x"}), "Ready"), Condition::default());
        assert_eq!(
            get(json!({"status": {"conditions": {}}}), "Ready"),
            Condition::default()
        );
        assert_eq!(
            get(
                json!({"status": {"conditions": [{"type": "Ready", "lastTransitionTime": "yesterday"}]}}),
                "Ready"
            ),
            Condition::default()
        );
        assert_eq!(
            get(json!({"status": {"conditions": [{"type": 1}]}}), "Ready"),
            Condition::default()
        );
    }

    #[test]
    fn a_missing_type_is_unknown_and_the_first_of_a_type_wins() {
        assert_eq!(get(json!({"status": {}}), "Ready").status, "Unknown");
        let o = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": "2024-01-02T03:04:05Z"},
            {"type": "Ready", "status": "True"}
        ]}});
        assert_eq!(get(o, "Ready").status, "False");
    }
}
