//! Reading untyped objects the way apimachinery's `unstructured` helpers do.
//!
//! The health checks that work on untyped objects use `NestedFieldNoCopy`
//! and friends. Their rules: a missing key or a `null` on the way means "not
//! found"; a non-object on the way, or a value of the wrong type at the end,
//! is an error. Every check here treats "not found" and "error" alike, so
//! these helpers return `None` for both.

use serde_json::Value;
use xfn_sdk::Object;

/// What lies at a path in an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// A key on the way is missing, or a value on the way is `null`.
    Missing,
    /// The value at the path (possibly `null`).
    Found(&'a Value),
    /// A value on the way is neither an object nor `null`.
    Invalid,
}

/// The value at `path` (`NestedFieldNoCopy`).
pub fn field<'a>(object: &'a Object, path: &[&str]) -> Field<'a> {
    let mut map = object;
    let mut found: Option<&'a Value> = None;
    for key in path {
        if let Some(value) = found {
            match value {
                Value::Object(inner) => map = inner,
                Value::Null => return Field::Missing,
                _ => return Field::Invalid,
            }
        }
        match map.get(*key) {
            Some(value) => found = Some(value),
            None => return Field::Missing,
        }
    }
    found.map_or(Field::Missing, Field::Found)
}

/// The string at `path` (`NestedString`); `None` if missing or not a string.
pub fn string<'a>(object: &'a Object, path: &[&str]) -> Option<&'a str> {
    match field(object, path) {
        Field::Found(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// The list at `path` (`NestedSlice`); `None` if missing or not a list.
pub fn slice<'a>(object: &'a Object, path: &[&str]) -> Option<&'a [Value]> {
    match field(object, path) {
        Field::Found(Value::Array(items)) => Some(items),
        _ => None,
    }
}

/// The number at `path` as an integer, as auto-ready's `getInt64Field`
/// reads it: integers as they are, floats truncated toward zero. `None` if
/// missing, `null` or not a number.
pub fn int64(object: &Object, path: &[&str]) -> Option<i64> {
    match field(object, path) {
        Field::Found(Value::Number(n)) => Some(number_to_i64(n)),
        _ => None,
    }
}

/// A JSON number as Go's `int64(float64)` gives it (every number reaches
/// the Go function as a float64): as the amd64 build computes it, like
/// function-patch-and-transform's port (see [`xfn_gocompat::conv`]).
fn number_to_i64(n: &serde_json::Number) -> i64 {
    match n.as_i64() {
        Some(i) => i,
        None => n
            .as_f64()
            .map_or(i64::MIN, xfn_gocompat::conv::float_to_int64),
    }
}

/// The object's `apiVersion` and `kind`, as `GetAPIVersion`/`GetKind` read
/// them: a missing or non-string value reads as empty.
pub fn api_version_kind(object: &Object) -> (&str, &str) {
    let get = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    (get("apiVersion"), get("kind"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            _ => Object::new(),
        }
    }

    #[test]
    fn field_follows_nested_field_no_copy() {
        let o = object(json!({"a": {"b": null, "c": 1, "s": "x"}, "n": null}));
        assert_eq!(field(&o, &["a", "c"]), Field::Found(&json!(1)));
        assert_eq!(field(&o, &["a", "b"]), Field::Found(&Value::Null));
        assert_eq!(field(&o, &["a", "b", "c"]), Field::Missing);
        assert_eq!(field(&o, &["n", "x"]), Field::Missing);
        assert_eq!(field(&o, &["a", "zz", "c"]), Field::Missing);
        assert_eq!(field(&o, &["a", "s", "c"]), Field::Invalid);
        assert_eq!(field(&o, &["a", "c", "d"]), Field::Invalid);
    }

    #[test]
    fn typed_getters() {
        let o = object(
            json!({"s": "x", "n": 3, "f": 2.9, "neg": -2.9, "b": true, "l": [1], "big": 18446744073709551615u64}),
        );
        assert_eq!(string(&o, &["s"]), Some("x"));
        assert_eq!(string(&o, &["n"]), None);
        assert_eq!(slice(&o, &["l"]).map(<[Value]>::len), Some(1));
        assert_eq!(slice(&o, &["s"]), None);
        assert_eq!(int64(&o, &["n"]), Some(3));
        assert_eq!(int64(&o, &["f"]), Some(2));
        assert_eq!(int64(&o, &["neg"]), Some(-2));
        // Out of int64's range: Go's amd64 build gives MinInt64, as
        // function-patch-and-transform's port does (arm64 would saturate).
        assert_eq!(int64(&o, &["big"]), Some(i64::MIN));
        let far = object(json!({"up": 1e19, "down": -1e19}));
        assert_eq!(int64(&far, &["up"]), Some(i64::MIN));
        assert_eq!(int64(&far, &["down"]), Some(i64::MIN));
        assert_eq!(int64(&o, &["s"]), None);
        assert_eq!(int64(&o, &["b"]), None);
        assert_eq!(int64(&o, &["missing"]), None);
    }

    #[test]
    fn api_version_and_kind_default_to_empty() {
        let o = object(json!({"apiVersion": 1, "kind": "Pod"}));
        assert_eq!(api_version_kind(&o), ("", "Pod"));
    }
}
