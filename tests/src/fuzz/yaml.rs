//! The YAML loader of `render`, `validate` and `serve --functions`
//! ([`parse_stream`], [`parse_value`]), behind `xfn_yaml`'s guards.

use serde_json::Value;
use xfn_render::load::{parse_stream, parse_value};

/// Loads `data` as a document stream and as one value. Whatever loads must
/// print (as `render` prints its output) and load again as the same value:
/// xfn reads what it writes.
pub fn yaml_loader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(docs) = parse_stream(text) {
        assert!(
            docs.iter().all(Value::is_object),
            "a document is not an object"
        );
        let printed = xfn_yaml::to_yaml_stream(&docs);
        match parse_stream(&printed) {
            Ok(again) => assert_same(&docs, &again, &printed),
            Err((line, reason)) => {
                panic!("the printed stream does not load (line {line:?}): {reason}\n{printed}")
            }
        }
    }
    if let Ok(value) = parse_value(text) {
        let printed = xfn_yaml::to_yaml(&value);
        match parse_value(&printed) {
            Ok(again) => assert_same(
                std::slice::from_ref(&value),
                std::slice::from_ref(&again),
                &printed,
            ),
            Err(reason) => panic!("the printed value does not load: {reason}\n{printed}"),
        }
    }
}

fn assert_same(before: &[Value], after: &[Value], printed: &str) {
    assert!(
        before.len() == after.len() && before.iter().zip(after).all(|(a, b)| same(a, b)),
        "printing and loading again changed the documents:\n{before:?}\nprinted as\n{printed}\nloaded as\n{after:?}"
    );
}

/// Equality of JSON values where numbers compare by value: the printer
/// writes `1.0` as `1`, which loads as an integer, as in Go's pipeline.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
