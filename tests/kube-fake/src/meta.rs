//! Helpers over object JSON: metadata access and request validation.

use serde_json::{Map, Value};

use crate::resources::ResourceInfo;
use crate::status::ApiError;

/// `metadata` of an object, if it is a map.
pub(crate) fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// A string field of `metadata`.
pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    meta(obj).and_then(|m| m.get(field)).and_then(Value::as_str)
}

/// `metadata` of an object, created (and the object made a map) if needed.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    object_mut(object_mut(obj).entry("metadata").or_insert(Value::Null))
}

/// Turns `v` into an empty object unless it is one, and returns its map.
pub(crate) fn object_mut(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// Checks the shape of a request object: an object whose metadata, labels and annotations are well-formed,
/// and whose apiVersion/kind, if given, match the resource.
pub(crate) fn validate_body(info: &ResourceInfo, body: &Value) -> Result<(), ApiError> {
    let Value::Object(map) = body else {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    };
    if let Some(av) = map.get("apiVersion").filter(|v| !v.is_null())
        && av.as_str() != Some(info.api_version().as_str())
    {
        return Err(ApiError::bad_request(format!(
            "apiVersion {av} does not match the resource's {:?}",
            info.api_version()
        )));
    }
    if let Some(kind) = map.get("kind").filter(|v| !v.is_null())
        && kind.as_str() != Some(info.kind.as_str())
    {
        return Err(ApiError::bad_request(format!(
            "kind {kind} does not match the resource's {:?}",
            info.kind
        )));
    }
    match map.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for field in ["labels", "annotations"] {
                match m.get(field) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(kv)) if kv.values().all(Value::is_string) => {}
                    Some(_) => {
                        return Err(ApiError::bad_request(format!(
                            "metadata.{field} must be a map of strings"
                        )));
                    }
                }
            }
            for field in [
                "name",
                "namespace",
                "generateName",
                "resourceVersion",
                "uid",
            ] {
                if m.get(field).is_some_and(|v| !v.is_string() && !v.is_null()) {
                    return Err(ApiError::bad_request(format!(
                        "metadata.{field} must be a string"
                    )));
                }
            }
            if m.get("ownerReferences")
                .is_some_and(|v| !v.is_array() && !v.is_null())
            {
                return Err(ApiError::bad_request(
                    "metadata.ownerReferences must be a list",
                ));
            }
            if m.get("finalizers")
                .is_some_and(|v| !v.is_array() && !v.is_null())
            {
                return Err(ApiError::bad_request("metadata.finalizers must be a list"));
            }
        }
        Some(_) => return Err(ApiError::bad_request("metadata must be an object")),
    }
    Ok(())
}

pub(crate) fn validate_name(name: &str) -> Result<(), ApiError> {
    if name.is_empty()
        || name.len() > 253
        || name.contains(['/', '%'])
        || name == "."
        || name == ".."
    {
        return Err(ApiError::invalid(format!(
            "metadata.name: Invalid value: {name:?}"
        )));
    }
    Ok(())
}

/// Everything but `metadata` and `status`: a change here bumps `metadata.generation`.
pub(crate) fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(m) = &mut v {
        m.remove("metadata");
        m.remove("status");
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

pub(crate) fn has_finalizers(obj: &Value) -> bool {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

/// The uids an object's ownerReferences point to.
pub(crate) fn owner_uids(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
