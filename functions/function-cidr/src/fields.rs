//! Reading the XR and the rest of the request as the Go function does:
//! `GetString`, the composite's `GetInteger` (int64, or a float64
//! truncated), `GetValueInto` a list, and `GetPrefixField`'s `desired.`
//! and `context.` (gjson) paths.

use serde::de::DeserializeOwned;
use serde_json::Value;
use xfn_gocompat::conv::float_to_int64;
use xfn_sdk::{Request, fieldpath};

/// `GetString`.
pub fn get_string(object: &Value, path: &str) -> Result<String, String> {
    fieldpath::get_string(object, path)
        .map(str::to_owned)
        .map_err(|e| e.to_string())
}

/// The composite's `GetInteger`.
pub fn get_integer(object: &Value, path: &str) -> Result<i64, String> {
    match fieldpath::get_integer(object, path) {
        Ok(i) => Ok(i),
        Err(e) => match fieldpath::get(object, path) {
            Ok(Value::Number(n)) => Ok(n.as_f64().map_or(0, float_to_int64)),
            _ => Err(e.to_string()),
        },
    }
}

/// The Go type name of a JSON value for `json.Unmarshal`'s messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `GetValueInto` a Go value: `null` is Go's nil (`None`). Type errors
/// carry serde's message after crossplane-runtime's prefix.
pub fn get_value_into<T: DeserializeOwned>(
    object: &Value,
    path: &str,
    go_type: &str,
) -> Result<Option<T>, String> {
    let v = fieldpath::get(object, path).map_err(|e| e.to_string())?;
    if v.is_null() {
        return Ok(None);
    }
    serde_json::from_value(v.clone()).map(Some).map_err(|e| {
        format!(
            "cannot unmarshal value from JSON: json: cannot unmarshal {} into Go value of type {go_type} ({e})",
            json_kind(v)
        )
    })
}

/// Go's `ExtractKeys`: split on `.` outside single quotes, quotes dropped.
fn extract_keys(input: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut key = String::new();
    let mut quoted = false;
    for c in input.chars() {
        match c {
            '\'' => quoted = !quoted,
            '.' if !quoted => keys.push(std::mem::take(&mut key)),
            c => key.push(c),
        }
    }
    if !key.is_empty() {
        keys.push(key);
    }
    keys
}

/// A gjson path on a JSON value, for the subset used in prefix fields:
/// `.`-separated keys, `\` escaping the next character, numeric keys
/// indexing arrays. gjson's wildcards, queries, modifiers and pipes are
/// refused by name. `None`: the path does not exist.
fn gjson_get<'a>(value: &'a Value, path: &str) -> Result<Option<&'a Value>, String> {
    let mut segments = Vec::new();
    let mut seg = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    seg.push(n);
                }
            }
            '.' => segments.push(std::mem::take(&mut seg)),
            '*' | '?' | '#' | '@' | '|' | '!' | '(' | ')' => {
                return Err(format!(
                    "the gjson path syntax {c:?} in {path:?} is not supported by xfn's port of function-cidr (only keys and indexes are)"
                ));
            }
            c => seg.push(c),
        }
    }
    segments.push(seg);
    let mut it = value;
    for s in &segments {
        it = match it {
            Value::Object(o) => match o.get(s) {
                Some(v) => v,
                None => return Ok(None),
            },
            Value::Array(a) => match s.parse::<usize>().ok().and_then(|i| a.get(i)) {
                Some(v) => v,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
    }
    Ok(Some(it))
}

/// Go's `GetPrefixField`.
pub fn prefix_field(field: &str, oxr: &Value, req: &Request) -> Result<String, String> {
    if field.starts_with("desired.") {
        if field.starts_with("desired.composite.") {
            let dxr = Value::Object(
                req.desired_composite()
                    .and_then(|r| r.resource.clone())
                    .unwrap_or_default(),
            );
            let kind = dxr
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            return get_string(&dxr, &field.replacen("desired.composite.resource.", "", 1))
                .map_err(|e| format!("cannot get prefix from field {field} for {kind}: {e}"));
        }
        if let Some(rest) = field.strip_prefix("desired.resources.") {
            let keys = extract_keys(rest);
            let name = keys.first().cloned().unwrap_or_default();
            let Some(r) = req.desired_composed().get(&name) else {
                return Err(format!(
                    "No composed resource with name {name} found for field {field}"
                ));
            };
            let object = Value::Object(r.resource.clone().unwrap_or_default());
            let path = field.replacen(&format!("desired.resources.{name}.resource."), "", 1);
            return get_string(&object, &path).map_err(|e| {
                format!("cannot get prefix for resource with name {name} from field {field}: {e}")
            });
        }
        return Ok(String::new());
    }
    if let Some(ctx_field) = field.strip_prefix("context.") {
        let Some(ctx) = req.context() else {
            return Err("No context available".to_owned());
        };
        let json = Value::Object(ctx.clone());
        return match gjson_get(&json, ctx_field)? {
            // gjson's .Str is empty for anything but a string.
            Some(v) => Ok(v.as_str().unwrap_or("").to_owned()),
            None => Err(format!(
                "Failed to extract value for {ctx_field} from json context {json}"
            )),
        };
    }
    let kind = oxr.get("kind").and_then(Value::as_str).unwrap_or("");
    get_string(oxr, field)
        .map_err(|e| format!("cannot get prefix from field {field} for {kind}: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn gjson_subset() {
        let v = json!({"a.b": {"list": [{"x": "y"}]}});
        assert_eq!(gjson_get(&v, r"a\.b.list.0.x").unwrap(), Some(&json!("y")));
        assert_eq!(gjson_get(&v, "a.b").unwrap(), None);
        assert!(gjson_get(&v, "a.#").unwrap_err().contains("not supported"));
    }

    #[test]
    fn keys_split_outside_quotes() {
        assert_eq!(
            extract_keys("'my.vpc'.resource.spec"),
            ["my.vpc", "resource", "spec"]
        );
    }

    #[test]
    fn integers_from_floats_truncate() {
        let v = json!({"a": 3.9, "s": "x"});
        assert_eq!(get_integer(&v, "a"), Ok(3));
        assert_eq!(get_integer(&v, "s").unwrap_err(), "s: not a (int64) number");
    }
}
