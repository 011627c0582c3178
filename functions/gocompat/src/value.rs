//! The dynamic values that flow through patches and transforms, typed as Go
//! types them (`float64` and `int64` kept apart, NaN and infinities allowed).

use std::collections::BTreeMap;

use serde_json::{Number, Value};

/// A Go `interface{}` value as P&T sees it: what `encoding/json` and the
/// Kubernetes decoder produce, plus the `int64` results of some transforms.
#[derive(Debug, Clone, PartialEq)]
pub enum GoValue {
    /// `nil`
    Nil,
    /// `bool`
    Bool(bool),
    /// `int64`
    Int(i64),
    /// `float64` (may be NaN or infinite)
    Float(f64),
    /// `string`
    String(String),
    /// `[]interface {}`
    Slice(Vec<GoValue>),
    /// `map[string]interface {}`
    Map(BTreeMap<String, GoValue>),
    /// A nil `[]interface {}` (what `json.Unmarshal` leaves for the JSON
    /// text `null` in a slice): `%v` prints `[]`, `len` is 0, JSON is `null`.
    NilSlice,
    /// A nil `map[string]interface {}` (the JSON text `null` unmarshalled
    /// into a map): `%v` prints `map[]`, JSON is `null`.
    NilMap,
}

impl GoValue {
    /// The Go type name, as `%T` prints it.
    pub fn type_name(&self) -> &'static str {
        match self {
            GoValue::Nil => "<nil>",
            GoValue::Bool(_) => "bool",
            GoValue::Int(_) => "int64",
            GoValue::Float(_) => "float64",
            GoValue::String(_) => "string",
            GoValue::Slice(_) | GoValue::NilSlice => "[]interface {}",
            GoValue::Map(_) | GoValue::NilMap => "map[string]interface {}",
        }
    }

    /// Converts a JSON value, keeping serde_json's integer/float distinction
    /// (an integer becomes `int64`, a float `float64`; integers beyond `i64`
    /// become `float64`).
    pub fn from_json(v: &Value) -> GoValue {
        match v {
            Value::Null => GoValue::Nil,
            Value::Bool(b) => GoValue::Bool(*b),
            Value::Number(n) => match (n.is_f64(), n.as_i64()) {
                (false, Some(i)) => GoValue::Int(i),
                _ => GoValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => GoValue::String(s.clone()),
            Value::Array(a) => GoValue::Slice(a.iter().map(GoValue::from_json).collect()),
            Value::Object(o) => GoValue::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), GoValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Converts to JSON as Go's `toValidJSON` does (`encoding/json` then the
    /// Kubernetes decoder): integral floats become integers. NaN and
    /// infinities cannot be encoded: `json: unsupported value: NaN`.
    pub fn to_valid_json(&self) -> Result<Value, String> {
        let mut v = self.to_json_exact()?;
        xfn_sdk::fieldpath::normalize_numbers(&mut v);
        Ok(v)
    }

    /// Converts to JSON keeping `int64` and `float64` apart (no round trip).
    pub fn to_json_exact(&self) -> Result<Value, String> {
        Ok(match self {
            GoValue::Nil | GoValue::NilSlice | GoValue::NilMap => Value::Null,
            GoValue::Bool(b) => Value::Bool(*b),
            GoValue::Int(i) => Value::Number(Number::from(*i)),
            GoValue::Float(f) => Value::Number(Number::from_f64(*f).ok_or_else(|| {
                format!(
                    "json: unsupported value: {}",
                    crate::gofmt::format_float(*f, b'g', -1)
                )
            })?),
            GoValue::String(s) => Value::String(s.clone()),
            GoValue::Slice(a) => Value::Array(
                a.iter()
                    .map(GoValue::to_json_exact)
                    .collect::<Result<_, _>>()?,
            ),
            GoValue::Map(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), v.to_json_exact()?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }
}

/// Rewrites every number of a JSON value as a float, as protobuf `Struct`
/// values (doubles) reach a Go function.
pub fn floatify(v: &mut Value) {
    match v {
        Value::Number(n) if !n.is_f64() => {
            if let Some(f) = n.as_f64().and_then(Number::from_f64) {
                *n = f;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(floatify),
        Value::Object(o) => o.values_mut().for_each(floatify),
        _ => {}
    }
}

/// Rewrites the numbers of a JSON value as the Kubernetes JSON decoder reads
/// protojson output: integral values become `int64`, others `float64`.
pub fn preserve_ints(v: &mut Value) {
    xfn_sdk::fieldpath::normalize_numbers(v);
}

/// Replaces each byte of invalid UTF-8 with U+FFFD, as Go's `encoding/json`
/// does (one replacement per byte, unlike `String::from_utf8_lossy`).
pub fn go_lossy_utf8(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // The prefix is valid UTF-8 by construction.
                out.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                out.push('\u{FFFD}');
                rest = &rest[valid + 1..];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_round_trip_types() {
        let v = GoValue::from_json(&json!({"i": 3, "f": 3.5, "l": [true, null, "s"]}));
        let GoValue::Map(m) = &v else { panic!() };
        assert_eq!(m["i"], GoValue::Int(3));
        assert_eq!(m["f"], GoValue::Float(3.5));
        assert_eq!(GoValue::Float(3.0).to_valid_json().unwrap(), json!(3));
        assert!(GoValue::Float(3.0).to_json_exact().unwrap().is_f64());
        assert_eq!(
            GoValue::Float(f64::NAN).to_valid_json().unwrap_err(),
            "json: unsupported value: NaN"
        );
        assert_eq!(
            GoValue::Float(f64::INFINITY).to_valid_json().unwrap_err(),
            "json: unsupported value: +Inf"
        );
        assert_eq!(v.type_name(), "map[string]interface {}");
    }

    #[test]
    fn floats_everything() {
        let mut v = json!({"a": [1, 2.5], "b": 3});
        floatify(&mut v);
        assert!(v["a"][0].is_f64() && v["b"].is_f64());
    }

    #[test]
    fn lossy_like_go() {
        assert_eq!(go_lossy_utf8(b"a\xe2\x86"), "a\u{FFFD}\u{FFFD}");
        assert_eq!(go_lossy_utf8("é".as_bytes()), "é");
    }
}
