//! Small accessors for Kubernetes objects held as JSON.

use serde_json::{Map, Value};

/// A string at a path of object keys, or `""`.
pub fn str_at<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    value_at(object, path).and_then(Value::as_str).unwrap_or("")
}

/// The value at a path of object keys.
pub fn value_at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(key))
}

/// The object at a path of keys, created (replacing non-objects) if missing.
pub fn object_at<'a>(object: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut current = object;
    for key in path {
        current = ensure_object(current)
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    ensure_object(current)
}

/// `value` as an object, replacing it with an empty one if it isn't.
pub fn ensure_object(value: &mut Value) -> &mut Map<String, Value> {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(map) => map,
        _ => unreachable!("just made an object"),
    }
}

/// Sets `metadata.<key>`, or removes it when `value` is empty, as the
/// Kubernetes `Set*` accessors of unstructured objects do.
pub fn set_metadata_str(object: &mut Value, key: &str, value: &str) {
    if value.is_empty() {
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove(key);
        }
    } else {
        object_at(object, &["metadata"]).insert(key.to_owned(), Value::String(value.to_owned()));
    }
}

/// The object's name, for messages.
pub fn name(object: &Value) -> &str {
    str_at(object, &["metadata", "name"])
}
