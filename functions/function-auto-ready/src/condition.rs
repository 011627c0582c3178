//! The generic rule: an observed resource is ready if its `Ready` condition
//! has status `"True"`.
//!
//! This follows crossplane-runtime's `Unstructured.GetCondition`, which
//! decodes `status` into a `ConditionedStatus` with Go's `encoding/json`:
//!
//! - A missing `status`, or one that fails to decode, gives an `Unknown`
//!   condition, so the resource is not ready.
//! - Decoding fails if `status` or `conditions` has the wrong shape, or if
//!   any condition has a field of the wrong type: `type`, `status`, `reason`
//!   and `message` must be strings, `lastTransitionTime` an RFC 3339 string
//!   and `observedGeneration` an integer. `null` is always fine.
//! - `encoding/json` matches keys case-insensitively (`Type` sets `type`).
//! - The first condition whose type is `Ready` decides.

use serde_json::Value;
use xfn_sdk::Object;

use crate::time::parse_rfc3339;

/// `encoding/json` could not decode the status.
struct Invalid;

type Decoded<T> = Result<T, Invalid>;

/// Whether `object` has a condition of type `Ready` with status `"True"`.
pub fn ready_condition_true(object: &Object) -> bool {
    ready_status(object).is_ok_and(|status| status == Some("True"))
}

/// The status of the first `Ready` condition, if there is one.
fn ready_status(object: &Object) -> Decoded<Option<&str>> {
    let status = match object.get("status") {
        None => return Err(Invalid),
        Some(Value::Null) => return Ok(None),
        Some(Value::Object(status)) => status,
        Some(_) => return Err(Invalid),
    };
    let Some(conditions) = field(status, "conditions", as_array)? else {
        return Ok(None);
    };
    let mut decoded = Vec::with_capacity(conditions.len());
    for entry in conditions {
        match entry {
            Value::Null => decoded.push((None, None)),
            Value::Object(condition) => decoded.push(decode_condition(condition)?),
            _ => return Err(Invalid),
        }
    }
    Ok(decoded
        .into_iter()
        .find(|(kind, _)| *kind == Some("Ready"))
        .and_then(|(_, status)| status))
}

/// One condition's `type` and `status`, after checking all its fields.
fn decode_condition(condition: &Object) -> Decoded<(Option<&str>, Option<&str>)> {
    field(condition, "reason", as_str)?;
    field(condition, "message", as_str)?;
    field(condition, "lastTransitionTime", as_time)?;
    field(condition, "observedGeneration", as_int64)?;
    Ok((
        field(condition, "type", as_str)?,
        field(condition, "status", as_str)?,
    ))
}

/// Reads the struct field `name` as `encoding/json` fills it: every key that
/// matches `name` case-insensitively is decoded (so each must have the right
/// type), an exact match is preferred, and `null` leaves the field unset.
fn field<'a, T>(
    map: &'a Object,
    name: &str,
    decode: impl Fn(&'a Value) -> Decoded<T>,
) -> Decoded<Option<T>> {
    let (mut exact, mut folded) = (None, None);
    for (key, value) in map {
        if value.is_null() || !fold_eq(key, name) {
            continue;
        }
        let decoded = decode(value)?;
        if key == name {
            exact = Some(decoded);
        } else {
            folded = Some(decoded);
        }
    }
    Ok(exact.or(folded))
}

/// Case-insensitive equality as `encoding/json` uses it to match keys:
/// simple Unicode folding, under which the long s (`ſ`) is an `s` and the
/// Kelvin sign is a `k`.
fn fold_eq(key: &str, name: &str) -> bool {
    let fold = |c: char| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    };
    key.chars().map(fold).eq(name.chars().map(fold))
}

fn as_str(value: &Value) -> Decoded<&str> {
    value.as_str().ok_or(Invalid)
}

fn as_array(value: &Value) -> Decoded<&[Value]> {
    value.as_array().map(Vec::as_slice).ok_or(Invalid)
}

/// `metav1.Time`: an RFC 3339 string.
fn as_time(value: &Value) -> Decoded<()> {
    value
        .as_str()
        .and_then(parse_rfc3339)
        .map(|_| ())
        .ok_or(Invalid)
}

/// An `int64` field. The number arrives as a protobuf double, which Go
/// writes without a fraction or exponent when it is integral and below 1e21,
/// so it decodes iff it is integral and fits in an `int64`.
fn as_int64(value: &Value) -> Decoded<()> {
    const I64_MIN: f64 = i64::MIN as f64;
    let Value::Number(n) = value else {
        return Err(Invalid);
    };
    if n.is_i64() {
        return Ok(());
    }
    match n.as_f64() {
        Some(f) if n.is_f64() && f.trunc() == f && (I64_MIN..-I64_MIN).contains(&f) => Ok(()),
        _ => Err(Invalid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ready(value: Value) -> bool {
        match value {
            Value::Object(object) => ready_condition_true(&object),
            other => panic!("not an object: {other}"),
        }
    }

    fn with_conditions(conditions: Value) -> Value {
        json!({"apiVersion": "example.org/v1", "kind": "Thing", "status": {"conditions": conditions}})
    }

    #[test]
    fn ready_true_is_ready() {
        assert!(ready(with_conditions(
            json!([{"type": "Ready", "status": "True"}])
        )));
        assert!(ready(with_conditions(json!([
            {"type": "Synced", "status": "False", "reason": "ReconcileError"},
            {"type": "Ready", "status": "True", "reason": "Available",
             "lastTransitionTime": "2024-05-01T10:00:00Z", "observedGeneration": 3}
        ]))));
    }

    #[test]
    fn anything_else_is_not_ready() {
        for status in [
            json!("False"),
            json!("Unknown"),
            json!("true"),
            json!("TRUE"),
            json!(null),
        ] {
            assert!(!ready(with_conditions(
                json!([{"type": "Ready", "status": status}])
            )));
        }
        assert!(!ready(with_conditions(
            json!([{"type": "Synced", "status": "True"}])
        )));
        assert!(!ready(with_conditions(
            json!([{"type": "ready", "status": "True"}])
        )));
        assert!(!ready(with_conditions(json!([]))));
        assert!(!ready(with_conditions(json!(null))));
        assert!(!ready(json!({"kind": "Thing"})));
        assert!(!ready(json!({"status": null})));
        assert!(!ready(json!({"status": {}})));
    }

    #[test]
    fn the_first_ready_condition_decides() {
        assert!(!ready(with_conditions(json!([
            {"type": "Ready", "status": "False"},
            {"type": "Ready", "status": "True"}
        ]))));
        assert!(ready(with_conditions(json!([
            null,
            {"type": "Ready", "status": "True"},
            {"type": "Ready", "status": "False"}
        ]))));
    }

    #[test]
    fn decode_errors_anywhere_in_conditions_mean_not_ready() {
        let ready_true = json!({"type": "Ready", "status": "True"});
        for bad in [
            json!({"type": "Synced", "reason": 1}),
            json!({"type": "Synced", "message": false}),
            json!({"type": "Synced", "lastTransitionTime": "yesterday"}),
            json!({"type": "Synced", "lastTransitionTime": 0}),
            json!({"type": "Synced", "observedGeneration": 1.5}),
            json!({"type": "Synced", "observedGeneration": "1"}),
            json!({"type": "Synced", "observedGeneration": 1e21}),
            json!({"type": 7}),
            json!("Synced"),
        ] {
            assert!(!ready(with_conditions(json!([ready_true, bad]))), "{bad}");
        }
        assert!(!ready(with_conditions(
            json!({"type": "Ready", "status": "True"})
        )));
        assert!(!ready(json!({"status": "Ready"})));
        assert!(!ready(json!({"status": [ready_true]})));
    }

    #[test]
    fn fields_the_condition_lacks_are_ignored() {
        assert!(ready(with_conditions(json!([
            {"type": "Ready", "status": "True", "lastProbeTime": "not checked", "extra": {"x": 1}}
        ]))));
        assert!(ready(
            json!({"status": {"conditions": [{"type": "Ready", "status": "True"}],
            "atProvider": {"anything": [1, "two"]}}})
        ));
        assert!(ready(with_conditions(json!([
            {"type": "Ready", "status": "True", "observedGeneration": 2.0, "lastTransitionTime": null}
        ]))));
    }

    #[test]
    fn keys_match_case_insensitively_like_encoding_json() {
        assert!(ready(
            json!({"status": {"Conditions": [{"TYPE": "Ready", "Status": "True"}]}})
        ));
        assert!(ready(
            json!({"status": {"conditions": [{"type": "Ready", "\u{17f}tatus": "True"}]}})
        ));
        // An exact key beats a folded one.
        assert!(ready(
            json!({"status": {"conditions": [{"type": "Ready", "status": "True", "STATUS": "False"}]}})
        ));
        // Every matching key is decoded, so a bad folded duplicate fails.
        assert!(!ready(
            json!({"status": {"conditions": [{"type": "Ready", "status": "True", "Reason": 3}]}})
        ));
        // `status` itself is looked up exactly.
        assert!(!ready(
            json!({"Status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        ));
    }
}
