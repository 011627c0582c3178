//! RFC 6902 JSON patch.

use serde_json::Value;

use crate::status::ApiError;

/// Applies an RFC 6902 patch (a JSON array of operations) to `target`.
///
/// A malformed patch is a 400 BadRequest. An operation that cannot be applied, including a failed `test`,
/// is a 422 Invalid: the real API server answers patch application errors with
/// `NewGenericServerResponse(http.StatusUnprocessableEntity, ...)`, whose reason is `Invalid`.
pub fn apply(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let Value::Array(ops) = patch else {
        return Err(ApiError::bad_request(
            "json patch must be a JSON array of operations",
        ));
    };
    let mut work = target.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_op(&mut work, op).map_err(|e| match e {
            OpError::Malformed(m) => {
                ApiError::bad_request(format!("json patch operation {i}: {m}"))
            }
            OpError::Failed(m) => ApiError::invalid(format!("json patch operation {i}: {m}")),
        })?;
    }
    *target = work;
    Ok(())
}

enum OpError {
    Malformed(String),
    Failed(String),
}

fn str_field<'a>(op: &'a Value, name: &str) -> Result<&'a str, OpError> {
    op.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| OpError::Malformed(format!("missing string field {name:?}")))
}

fn value_field(op: &Value) -> Result<Value, OpError> {
    op.get("value")
        .cloned()
        .ok_or_else(|| OpError::Malformed("missing field \"value\"".into()))
}

fn apply_op(doc: &mut Value, op: &Value) -> Result<(), OpError> {
    let kind = str_field(op, "op")?;
    let path = parse_pointer(str_field(op, "path")?)?;
    match kind {
        "add" => add(doc, &path, value_field(op)?),
        "remove" => remove(doc, &path).map(|_| ()),
        "replace" => {
            let v = value_field(op)?;
            let slot = get_mut(doc, &path)?;
            *slot = v;
            Ok(())
        }
        "test" => {
            let v = value_field(op)?;
            let actual = get_mut(doc, &path)?;
            if *actual == v {
                Ok(())
            } else {
                Err(OpError::Failed(format!(
                    "test failed: value at {:?} is {actual}, not {v}",
                    str_field(op, "path")?
                )))
            }
        }
        "move" => {
            let from = parse_pointer(str_field(op, "from")?)?;
            if path.len() > from.len() && path[..from.len()] == from[..] {
                return Err(OpError::Failed("cannot move a value into itself".into()));
            }
            let v = remove(doc, &from)?;
            add(doc, &path, v)
        }
        "copy" => {
            let from = parse_pointer(str_field(op, "from")?)?;
            let v = get_mut(doc, &from)?.clone();
            add(doc, &path, v)
        }
        other => Err(OpError::Malformed(format!("unknown op {other:?}"))),
    }
}

fn parse_pointer(p: &str) -> Result<Vec<String>, OpError> {
    if p.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = p.strip_prefix('/') else {
        return Err(OpError::Malformed(format!(
            "path {p:?} must start with '/'"
        )));
    };
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn index(seg: &str, len: usize, allow_end: bool) -> Result<usize, OpError> {
    if allow_end && seg == "-" {
        return Ok(len);
    }
    let i: usize = seg
        .parse()
        .map_err(|_| OpError::Failed(format!("invalid array index {seg:?}")))?;
    if i > len || (!allow_end && i == len) {
        return Err(OpError::Failed(format!("array index {i} out of bounds")));
    }
    Ok(i)
}

fn get_mut<'a>(doc: &'a mut Value, path: &[String]) -> Result<&'a mut Value, OpError> {
    let mut cur = doc;
    for seg in path {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(seg)
                .ok_or_else(|| OpError::Failed(format!("path segment {seg:?} not found")))?,
            Value::Array(a) => {
                let i = index(seg, a.len(), false)?;
                &mut a[i]
            }
            _ => {
                return Err(OpError::Failed(format!(
                    "cannot descend into a scalar at {seg:?}"
                )));
            }
        };
    }
    Ok(cur)
}

fn split_last(path: &[String]) -> Result<(&[String], &str), OpError> {
    match path.split_last() {
        Some((last, parent)) => Ok((parent, last)),
        None => Err(OpError::Failed(
            "operation on the document root is not supported".into(),
        )),
    }
}

fn add(doc: &mut Value, path: &[String], v: Value) -> Result<(), OpError> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (parent, last) = split_last(path)?;
    match get_mut(doc, parent)? {
        Value::Object(m) => {
            m.insert(last.to_string(), v);
            Ok(())
        }
        Value::Array(a) => {
            let i = index(last, a.len(), true)?;
            a.insert(i, v);
            Ok(())
        }
        _ => Err(OpError::Failed(
            "parent of the target is not a container".into(),
        )),
    }
}

fn remove(doc: &mut Value, path: &[String]) -> Result<Value, OpError> {
    let (parent, last) = split_last(path)?;
    match get_mut(doc, parent)? {
        Value::Object(m) => m
            .remove(last)
            .ok_or_else(|| OpError::Failed(format!("path segment {last:?} not found"))),
        Value::Array(a) => {
            let i = index(last, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(OpError::Failed(
            "parent of the target is not a container".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_ops() {
        let mut d = json!({"a": {"b": [1, 2]}, "c": "x", "k~/": 1});
        apply(
            &mut d,
            &json!([
                {"op": "test", "path": "/c", "value": "x"},
                {"op": "add", "path": "/a/b/-", "value": 3},
                {"op": "add", "path": "/a/b/0", "value": 0},
                {"op": "remove", "path": "/a/b/1"},
                {"op": "replace", "path": "/c", "value": "y"},
                {"op": "copy", "from": "/c", "path": "/d"},
                {"op": "move", "from": "/d", "path": "/e"},
                {"op": "remove", "path": "/k~0~1"}
            ]),
        )
        .expect("patch");
        assert_eq!(d, json!({"a": {"b": [0, 2, 3]}, "c": "y", "e": "y"}));
    }

    #[test]
    fn failed_test_is_invalid_and_leaves_doc_untouched() {
        let mut d = json!({"c": "x"});
        let err = apply(
            &mut d,
            &json!([{"op": "replace", "path": "/c", "value": "z"}, {"op": "test", "path": "/c", "value": "q"}]),
        )
        .expect_err("must fail");
        assert_eq!(err.code, 422);
        assert_eq!(d, json!({"c": "x"}));
        assert_eq!(
            apply(&mut d, &json!({"op": "add"})).expect_err("e").code,
            400
        );
        assert_eq!(
            apply(&mut d, &json!([{"op": "nope", "path": "/c"}]))
                .expect_err("e")
                .code,
            400
        );
    }
}
