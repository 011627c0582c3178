//! `--xrd`: apply the defaults of an XRD's OpenAPI schema to the XR, as the
//! API server's structural defaulting would.

use serde_json::Value;

use super::object::{str_at, value_at};

/// Why defaults could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum XrdError {
    /// The XR's apiVersion isn't one of the XRD's versions.
    #[error("XRD {xrd:?} has no version {api_version:?} (want one of: {versions})")]
    NoSuchVersion {
        /// The XRD's name.
        xrd: String,
        /// The XR's apiVersion.
        api_version: String,
        /// The versions the XRD serves.
        versions: String,
    },
}

/// Applies the defaults of the XRD version matching the XR's apiVersion.
pub fn apply_defaults(xr: &mut Value, xrd: &Value) -> Result<(), XrdError> {
    let group = str_at(xrd, &["spec", "group"]);
    let api_version = str_at(xr, &["apiVersion"]).to_owned();
    let versions = value_at(xrd, &["spec", "versions"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let version = versions
        .iter()
        .find(|v| format!("{group}/{}", str_at(v, &["name"])) == api_version)
        .ok_or_else(|| XrdError::NoSuchVersion {
            xrd: str_at(xrd, &["metadata", "name"]).to_owned(),
            api_version: api_version.clone(),
            versions: versions
                .iter()
                .map(|v| format!("{group}/{}", str_at(v, &["name"])))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    if let Some(schema) = value_at(version, &["schema", "openAPIV3Schema"]) {
        default_value(xr, schema);
    }
    Ok(())
}

/// Fills missing properties that have defaults, recursively.
fn default_value(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    if !map.contains_key(key)
                        && let Some(default) = property.get("default")
                    {
                        map.insert(key.clone(), default.clone());
                    }
                    if let Some(child) = map.get_mut(key) {
                        default_value(child, property);
                    }
                }
            }
            if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let known = schema.get("properties").and_then(Value::as_object);
                for (key, child) in map.iter_mut() {
                    if known.is_none_or(|k| !k.contains_key(key)) {
                        default_value(child, additional);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    default_value(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn xrd() -> Value {
        json!({"metadata": {"name": "xbuckets.example.org"}, "spec": {"group": "example.org", "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "region": {"type": "string", "default": "us-east-2"},
                "size": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"value": {"type": "string", "default": "x"}}}},
                "nested": {"type": "object", "default": {}, "properties": {"on": {"type": "boolean", "default": true}}}
            }}}
        }}}]}})
    }

    #[test]
    fn fills_missing_fields_with_their_defaults_recursively() {
        let mut xr = json!({"apiVersion": "example.org/v1", "kind": "XBucket", "spec": {"size": 3, "tags": [{"key": "a"}, {"value": "b"}]}});
        apply_defaults(&mut xr, &xrd()).expect("defaults");
        assert_eq!(
            xr["spec"],
            json!({"region": "us-east-2", "size": 3, "tags": [{"key": "a", "value": "x"}, {"value": "b"}], "nested": {"on": true}})
        );
    }

    #[test]
    fn keeps_values_that_are_set() {
        let mut xr = json!({"apiVersion": "example.org/v1", "spec": {"region": "eu-west-1"}});
        apply_defaults(&mut xr, &xrd()).expect("defaults");
        assert_eq!(xr["spec"]["region"], json!("eu-west-1"));
    }

    #[test]
    fn an_unknown_version_is_an_error() {
        let mut xr = json!({"apiVersion": "example.org/v2"});
        let err = apply_defaults(&mut xr, &xrd()).expect_err("no v2");
        assert_eq!(
            err.to_string(),
            r#"XRD "xbuckets.example.org" has no version "example.org/v2" (want one of: example.org/v1)"#
        );
    }
}
