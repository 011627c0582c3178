//! Building the environment: each EnvironmentConfig's `data`, merged.

use serde_json::{Map, Value};
use xfn_sdk::fieldpath;
use xfn_select::goquote::quote;

/// The `apiVersion` an environment without one gets.
pub const ENVIRONMENT_API_VERSION: &str = "internal.crossplane.io/v1alpha1";
/// The `kind` an environment without one gets.
pub const ENVIRONMENT_KIND: &str = "Environment";

/// Merges `b` over `a` (Go's `mergeMaps`): a key whose values are objects
/// on both sides is merged recursively; any other value of `b` replaces
/// `a`'s.
///
/// ```
/// use serde_json::json;
/// let a = json!({"x": {"a": 1, "b": 1}, "y": 1});
/// let b = json!({"x": {"b": 2}, "y": {"z": 1}});
/// let merged = function_environment_configs::environment::merge_maps(
///     a.as_object().unwrap().clone(), b.as_object().unwrap());
/// assert_eq!(serde_json::Value::Object(merged), json!({"x": {"a": 1, "b": 2}, "y": {"z": 1}}));
/// ```
pub fn merge_maps(mut a: Map<String, Value>, b: &Map<String, Value>) -> Map<String, Value> {
    for (k, v) in b {
        if let (Value::Object(bv), Some(Value::Object(av))) = (v, a.get_mut(k)) {
            let merged = merge_maps(std::mem::take(av), bv);
            *av = merged;
            continue;
        }
        a.insert(k.clone(), v.clone());
    }
    a
}

/// The Go JSON type name of a value, as `json.Unmarshal` names it in
/// "cannot unmarshal X into Go value of type ...".
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An EnvironmentConfig's data as it is merged: its `data`, or placed at
/// `to_field_path` if that is set (Go's `mergeEnvConfigsData` body).
pub fn config_data(
    config: &Map<String, Value>,
    to_field_path: &str,
) -> Result<Map<String, Value>, String> {
    let name = config
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !to_field_path.is_empty() {
        let mut data = Value::Object(Map::new());
        let value = config.get("data").cloned().unwrap_or(Value::Null);
        fieldpath::set(&mut data, to_field_path, value).map_err(|_| {
            format!(
                "cannot get data from environment config {name} into path {}",
                quote(to_field_path)
            )
        })?;
        return Ok(match data {
            Value::Object(o) => o,
            _ => Map::new(),
        });
    }
    let wrap = |e: String| {
        format!(
            "cannot get data from environment config {}: {e}",
            quote(name)
        )
    };
    match fieldpath::get_in(config, "data").map_err(|e| wrap(e.to_string()))? {
        Value::Object(o) => Ok(o.clone()),
        Value::Null => Ok(Map::new()),
        other => Err(wrap(format!(
            "cannot unmarshal value from JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(other)
        ))),
    }
}

/// Gives the environment the `apiVersion` and `kind` of an environment if
/// its group, version and kind are all empty, as Go's
/// `out.GroupVersionKind().Empty()` tests them.
///
/// ```
/// let mut env = serde_json::Map::new();
/// function_environment_configs::environment::default_gvk(&mut env);
/// assert_eq!(env["kind"], "Environment");
/// ```
pub fn default_gvk(env: &mut Map<String, Value>) {
    let text = |k: &str| env.get(k).and_then(Value::as_str).unwrap_or("");
    let api_version = text("apiVersion");
    // schema.ParseGroupVersion: "" and "v" parse; "g/v" parses; more
    // slashes fail and give the empty GroupVersion.
    let group_version_empty = api_version.is_empty() || api_version.matches('/').count() > 1;
    if text("kind").is_empty() && group_version_empty {
        env.insert("apiVersion".into(), ENVIRONMENT_API_VERSION.into());
        env.insert("kind".into(), ENVIRONMENT_KIND.into());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn data_goes_to_the_root_or_to_a_field_path() {
        let config = obj(json!({"metadata": {"name": "c"}, "data": {"a": 1}}));
        assert_eq!(config_data(&config, "").unwrap(), obj(json!({"a": 1})));
        assert_eq!(
            config_data(&config, "x.y").unwrap(),
            obj(json!({"x": {"y": {"a": 1}}}))
        );
        let no_data = obj(json!({"metadata": {"name": "c"}}));
        assert_eq!(config_data(&no_data, "x").unwrap(), obj(json!({"x": null})));
        assert_eq!(
            config_data(&no_data, "").unwrap_err(),
            "cannot get data from environment config \"c\": data: no such field"
        );
        let text_data = obj(json!({"metadata": {"name": "c"}, "data": "hi"}));
        assert_eq!(
            config_data(&text_data, "").unwrap_err(),
            "cannot get data from environment config \"c\": cannot unmarshal value from JSON: json: cannot unmarshal string into Go value of type map[string]interface {}"
        );
        let bad_path = config_data(&config, "a..b").unwrap_err();
        assert_eq!(
            bad_path,
            "cannot get data from environment config c into path \"a..b\""
        );
    }

    #[test]
    fn an_environment_keeps_a_gvk_it_has() {
        let mut env = obj(json!({"apiVersion": "example.org/v1"}));
        default_gvk(&mut env);
        assert_eq!(env.get("kind"), None);
        let mut env = obj(json!({"apiVersion": "a/b/c"}));
        default_gvk(&mut env);
        assert_eq!(env["apiVersion"], ENVIRONMENT_API_VERSION);
        let mut env = obj(json!({"kind": "K"}));
        default_gvk(&mut env);
        assert_eq!(env.get("apiVersion"), None);
    }

    #[test]
    fn merge_replaces_what_is_not_an_object_on_both_sides() {
        let a = obj(json!({"x": [1], "y": {"a": 1}, "z": {"a": 1}}));
        let b = obj(json!({"x": {"a": 2}, "y": null, "z": {"b": 2}}));
        assert_eq!(
            merge_maps(a, &b),
            obj(json!({"x": {"a": 2}, "y": null, "z": {"a": 1, "b": 2}}))
        );
    }
}
