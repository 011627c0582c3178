//! JSON merge patch (RFC 7386) and an approximation of Kubernetes strategic merge patch.
//!
//! Strategic merge decides how to merge a list only from the name of the field holding it (the fake has no
//! schemas): `conditions` merge by `type`, `containers`/`env`/`volumes`/... by `name`, `ownerReferences` by
//! `uid`, `ports` by `name` (falling back to `containerPort`/`port` when an item has no name), and
//! `finalizers` as a set. Every other list is replaced whole.

use serde_json::{Map, Value};

use crate::status::ApiError;

/// Applies an RFC 7386 JSON merge patch to `target`.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target_map) = target else {
        return;
    };
    for (key, value) in patch_map {
        if value.is_null() {
            target_map.remove(key);
        } else {
            merge_patch(target_map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// How the items of a list field are merged by strategic merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListStrategy {
    /// Items are objects merged by the value of this key.
    MergeKey(&'static str),
    /// `ports`: by `name`, else `containerPort`, else `port`.
    Ports,
    /// Items are scalars; the result is the union.
    Set,
    /// The list is replaced whole.
    Atomic,
}

/// The strategy for a list held in the field `field`.
pub(crate) fn list_strategy(field: &str) -> ListStrategy {
    match field {
        "conditions" => ListStrategy::MergeKey("type"),
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => ListStrategy::MergeKey("name"),
        "volumeMounts" => ListStrategy::MergeKey("mountPath"),
        "volumeDevices" => ListStrategy::MergeKey("devicePath"),
        "ownerReferences" => ListStrategy::MergeKey("uid"),
        "hostAliases" => ListStrategy::MergeKey("ip"),
        "topologySpreadConstraints" => ListStrategy::MergeKey("topologyKey"),
        "ports" => ListStrategy::Ports,
        "finalizers" => ListStrategy::Set,
        _ => ListStrategy::Atomic,
    }
}

/// The identity of a list item under a strategy, if it has one.
pub(crate) fn item_key(strategy: ListStrategy, item: &Value) -> Option<(&'static str, Value)> {
    let field = |k: &'static str| item.get(k).filter(|v| !v.is_null()).map(|v| (k, v.clone()));
    match strategy {
        ListStrategy::MergeKey(k) => field(k),
        ListStrategy::Ports => field("name")
            .or_else(|| field("containerPort"))
            .or_else(|| field("port")),
        ListStrategy::Set | ListStrategy::Atomic => None,
    }
}

/// Applies a strategic merge patch to `target`.
pub fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let Value::Object(patch_map) = patch else {
        return Err(ApiError::bad_request(
            "strategic merge patch must be a JSON object",
        ));
    };
    merge_map(target, patch_map)
}

fn merge_map(target: &mut Value, patch: &Map<String, Value>) -> Result<(), ApiError> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut replaced = patch.clone();
            replaced.remove("$patch");
            *target = Value::Object(strip_directives(replaced));
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Null;
            return Ok(());
        }
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unknown $patch directive {other:?}"
            )));
        }
        None => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target_map) = target else {
        return Ok(());
    };
    // Primitive-list deletions are applied before the merge of the same field.
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let Value::Array(remove) = value else {
                return Err(ApiError::bad_request(format!("{key} must be a list")));
            };
            if let Some(Value::Array(items)) = target_map.get_mut(field) {
                items.retain(|i| !remove.contains(i));
            }
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        match value {
            Value::Null => {
                target_map.remove(key);
            }
            Value::Object(sub) => {
                let slot = target_map.entry(key.clone()).or_insert(Value::Null);
                merge_map(slot, sub)?;
                if slot.is_null() {
                    target_map.remove(key);
                }
            }
            Value::Array(items) => {
                let merged = match target_map.remove(key) {
                    Some(Value::Array(existing)) => merge_list(key, existing, items)?,
                    _ => merge_list(key, Vec::new(), items)?,
                };
                target_map.insert(key.clone(), Value::Array(merged));
            }
            scalar => {
                target_map.insert(key.clone(), scalar.clone());
            }
        }
    }
    Ok(())
}

fn merge_list(
    field: &str,
    mut existing: Vec<Value>,
    patch: &[Value],
) -> Result<Vec<Value>, ApiError> {
    let strategy = list_strategy(field);
    match strategy {
        ListStrategy::Atomic => Ok(patch.iter().cloned().map(strip_value).collect()),
        ListStrategy::Set => {
            for item in patch {
                if !existing.contains(item) {
                    existing.push(item.clone());
                }
            }
            Ok(existing)
        }
        ListStrategy::MergeKey(_) | ListStrategy::Ports => {
            // A `$patch: replace` item replaces the whole list with the other items.
            if patch
                .iter()
                .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
            {
                return Ok(patch
                    .iter()
                    .filter(|i| i.get("$patch").is_none())
                    .cloned()
                    .map(strip_value)
                    .collect());
            }
            for item in patch {
                let Value::Object(item_map) = item else {
                    existing.push(item.clone());
                    continue;
                };
                let key = item_key(strategy, item);
                let pos = key
                    .as_ref()
                    .and_then(|(k, v)| existing.iter().position(|e| e.get(*k) == Some(v)));
                let delete = item_map.get("$patch").and_then(Value::as_str) == Some("delete");
                match (pos, delete) {
                    (Some(p), true) => {
                        existing.remove(p);
                    }
                    (None, true) => {}
                    (Some(p), false) => merge_map(&mut existing[p], item_map)?,
                    (None, false) => {
                        let mut fresh = Value::Object(Map::new());
                        merge_map(&mut fresh, item_map)?;
                        existing.push(fresh);
                    }
                }
            }
            Ok(existing)
        }
    }
}

fn strip_directives(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k, strip_value(v)))
        .collect()
}

fn strip_value(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(strip_directives(m)),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_value).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc7386() {
        let mut t = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge_patch(&mut t, &json!({"a": "z", "c": {"f": null}, "l": [3]}));
        assert_eq!(t, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
    }

    #[test]
    fn strategic_merges_conditions_by_type() {
        let mut t = json!({"status": {"conditions": [
            {"type": "A", "status": "True"}, {"type": "B", "status": "False"}
        ]}});
        strategic_merge(
            &mut t,
            &json!({"status": {"conditions": [{"type": "B", "status": "True"}, {"type": "C", "status": "True"}]}}),
        )
        .expect("merge");
        assert_eq!(
            t["status"]["conditions"],
            json!([{"type": "A", "status": "True"}, {"type": "B", "status": "True"}, {"type": "C", "status": "True"}])
        );
    }

    #[test]
    fn strategic_merges_containers_and_env_by_name() {
        let mut t = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ], "tolerations": [{"key": "k"}]}});
        strategic_merge(
            &mut t,
            &json!({"spec": {"containers": [
                {"name": "a", "env": [{"name": "Y", "value": "2"}]},
                {"name": "b", "$patch": "delete"}
            ], "tolerations": [{"key": "j"}]}}),
        )
        .expect("merge");
        assert_eq!(
            t,
            json!({"spec": {"containers": [
                {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}
            ], "tolerations": [{"key": "j"}]}})
        );
    }

    #[test]
    fn strategic_null_removes_and_finalizers_are_a_set() {
        let mut t =
            json!({"metadata": {"finalizers": ["a"], "labels": {"x": "1"}}, "spec": {"h": "me"}});
        strategic_merge(
            &mut t,
            &json!({"metadata": {"finalizers": ["b"], "$deleteFromPrimitiveList/finalizers": ["a"]}, "spec": {"h": null}}),
        )
        .expect("merge");
        assert_eq!(
            t,
            json!({"metadata": {"finalizers": ["b"], "labels": {"x": "1"}}, "spec": {}})
        );
    }

    #[test]
    fn strategic_rejects_non_objects() {
        assert!(strategic_merge(&mut json!({}), &json!([1])).is_err());
    }
}
