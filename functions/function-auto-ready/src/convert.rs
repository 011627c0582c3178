//! Decoding fields as Kubernetes' `DefaultUnstructuredConverter` does when
//! it turns an untyped object into a typed one (`FromUnstructured`).
//!
//! Some health checks convert the observed object to its typed Go struct
//! first, and any conversion error makes the resource not ready. The rules
//! for the fields those checks read: keys match exactly; `null` or a missing
//! key gives the zero value; a struct needs an object, a list needs an array,
//! a string needs a string and a bool needs a bool; an integer accepts any
//! integral number (so `3.0` is fine but `3.5` is an error); a timestamp
//! (`metav1.Time`) needs an RFC 3339 string.

use serde_json::Value;
use xfn_sdk::Object;

use crate::time::{Instant, parse_rfc3339};

/// The object could not be converted to its typed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError;

/// The result of decoding one field.
pub type Decoded<T> = Result<T, DecodeError>;

/// A struct field: `None` when absent or `null` (the zero struct).
pub fn object(value: Option<&Value>) -> Decoded<Option<&Object>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(DecodeError),
    }
}

/// A list field: empty when absent or `null`.
pub fn list(value: Option<&Value>) -> Decoded<&[Value]> {
    match value {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(DecodeError),
    }
}

/// A string field: empty when absent or `null`.
pub fn string(value: Option<&Value>) -> Decoded<&str> {
    match value {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(DecodeError),
    }
}

/// An integer field (`int32`, `int64` or a pointer to one): `None` when
/// absent or `null`.
pub fn integer(value: Option<&Value>) -> Decoded<Option<i64>> {
    let number = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n,
        Some(_) => return Err(DecodeError),
    };
    if let Some(i) = number.as_i64() {
        return Ok(Some(i));
    }
    if number.as_u64().is_some() {
        // Too large for Go's int64 too; Go's conversion would be undefined.
        return Ok(Some(i64::MAX));
    }
    match number.as_f64() {
        Some(f) if f.is_finite() && f.trunc() == f => Ok(Some(f as i64)),
        _ => Err(DecodeError),
    }
}

/// A bool field (`*bool`): `None` when absent or `null`.
pub fn boolean(value: Option<&Value>) -> Decoded<Option<bool>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(DecodeError),
    }
}

/// A timestamp field (`metav1.Time` or a pointer to one): `None` when
/// absent or `null`.
pub fn time(value: Option<&Value>) -> Decoded<Option<Instant>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_rfc3339(s).map(Some).ok_or(DecodeError),
        Some(_) => Err(DecodeError),
    }
}

/// The top-level parts of a typed Kubernetes object.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parts<'a> {
    /// `metadata`, if set.
    pub metadata: Option<&'a Object>,
    /// `spec`, if set.
    pub spec: Option<&'a Object>,
    /// `status`, if set.
    pub status: Option<&'a Object>,
}

/// Splits an object into `metadata`, `spec` and `status`, each of which
/// must be an object (or absent, or `null`).
pub fn parts(object: &Object) -> Decoded<Parts<'_>> {
    Ok(Parts {
        metadata: self::object(object.get("metadata"))?,
        spec: self::object(object.get("spec"))?,
        status: self::object(object.get("status"))?,
    })
}

/// A field of an optional struct.
pub fn get<'a>(parent: Option<&'a Object>, key: &str) -> Option<&'a Value> {
    parent.and_then(|map| map.get(key))
}

/// One entry of a typed `conditions` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition<'a> {
    /// `type`.
    pub kind: &'a str,
    /// `status`.
    pub status: &'a str,
}

/// Decodes `status.conditions` of a typed object: every entry's `type`,
/// `status`, `reason` and `message` are strings, the named `times` are
/// timestamps and the named `integers` are integers.
pub fn conditions<'a>(
    status: Option<&'a Object>,
    times: &[&str],
    integers: &[&str],
) -> Decoded<Vec<Condition<'a>>> {
    list(get(status, "conditions"))?
        .iter()
        .map(|entry| {
            let entry = object(Some(entry))?;
            string(get(entry, "reason"))?;
            string(get(entry, "message"))?;
            for key in times {
                time(get(entry, key))?;
            }
            for key in integers {
                integer(get(entry, key))?;
            }
            Ok(Condition {
                kind: string(get(entry, "type"))?,
                status: string(get(entry, "status"))?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object as obj;
    use serde_json::json;

    #[test]
    fn scalars_follow_the_converter() {
        assert_eq!(string(None), Ok(""));
        assert_eq!(string(Some(&json!(null))), Ok(""));
        assert_eq!(string(Some(&json!("x"))), Ok("x"));
        assert_eq!(string(Some(&json!(1))), Err(DecodeError));
        assert_eq!(integer(Some(&json!(3))), Ok(Some(3)));
        assert_eq!(integer(Some(&json!(3.0))), Ok(Some(3)));
        assert_eq!(integer(Some(&json!(-2.0))), Ok(Some(-2)));
        assert_eq!(integer(Some(&json!(3.5))), Err(DecodeError));
        assert_eq!(integer(Some(&json!("3"))), Err(DecodeError));
        assert_eq!(integer(Some(&json!(null))), Ok(None));
        assert_eq!(boolean(Some(&json!(true))), Ok(Some(true)));
        assert_eq!(boolean(Some(&json!("true"))), Err(DecodeError));
        assert!(matches!(
            time(Some(&json!("2024-01-01T00:00:00Z"))),
            Ok(Some(_))
        ));
        assert_eq!(time(Some(&json!(""))), Err(DecodeError));
        assert_eq!(time(Some(&json!(0))), Err(DecodeError));
        assert_eq!(time(None), Ok(None));
    }

    #[test]
    fn containers_need_the_right_shape() {
        assert_eq!(list(Some(&json!({}))), Err(DecodeError));
        assert_eq!(list(Some(&json!(null))).map(<[Value]>::len), Ok(0));
        assert_eq!(object(Some(&json!([]))), Err(DecodeError));
        let bad = obj(json!({"spec": "x"}));
        assert!(parts(&bad).is_err());
    }

    #[test]
    fn conditions_decode_every_entry() {
        let status = obj(json!({"conditions": [
            null,
            {"type": "A", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        ]}));
        let got = conditions(Some(&status), &["lastTransitionTime"], &[]);
        assert_eq!(
            got,
            Ok(vec![
                Condition {
                    kind: "",
                    status: ""
                },
                Condition {
                    kind: "A",
                    status: "True"
                }
            ])
        );
        let bad_time =
            obj(json!({"conditions": [{"type": "A", "lastTransitionTime": "yesterday"}]}));
        assert_eq!(
            conditions(Some(&bad_time), &["lastTransitionTime"], &[]),
            Err(DecodeError)
        );
        // A field the typed struct doesn't have is ignored.
        assert!(conditions(Some(&bad_time), &[], &[]).is_ok());
        let bad_entry = obj(json!({"conditions": ["Ready"]}));
        assert_eq!(conditions(Some(&bad_entry), &[], &[]), Err(DecodeError));
    }
}
