//! Converts a Composition in the deprecated `mode: Resources` into a
//! function-patch-and-transform pipeline, as
//! `crossplane beta convert pipeline-composition` does.

use serde_json::{Map, Value, json};

/// The function the converted pipeline calls.
pub const PATCH_AND_TRANSFORM: &str = "function-patch-and-transform";

/// The package of the converted pipeline's function (it ships with xfn).
pub const PATCH_AND_TRANSFORM_PACKAGE: &str =
    "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2";

/// Whether the Composition uses `mode: Resources`.
pub fn is_resources_mode(composition: &Value) -> bool {
    composition.pointer("/spec/mode").and_then(Value::as_str) == Some("Resources")
}

/// Rewrites a `mode: Resources` Composition as a one-step pipeline. The
/// resources, patch sets and environment patches become the step's input.
pub fn to_pipeline(composition: &mut Value) {
    let Some(spec) = composition.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let mut input = Map::new();
    input.insert("apiVersion".into(), json!("pt.fn.crossplane.io/v1beta1"));
    input.insert("kind".into(), json!("Resources"));
    if let Some(patches) = spec
        .get_mut("environment")
        .and_then(|e| e.as_object_mut())
        .and_then(|e| e.remove("patches"))
    {
        input.insert(
            "environment".into(),
            json!({"patches": with_patch_types(patches)}),
        );
    }
    if let Some(Value::Array(sets)) = spec.remove("patchSets") {
        let sets: Vec<Value> = sets
            .into_iter()
            .map(|mut set| {
                if let Some(patches) = set.get_mut("patches") {
                    *patches = with_patch_types(patches.take());
                }
                set
            })
            .collect();
        input.insert("patchSets".into(), Value::Array(sets));
    }
    let resources = match spec.remove("resources") {
        Some(Value::Array(resources)) => resources.into_iter().map(convert_resource).collect(),
        _ => Vec::new(),
    };
    input.insert("resources".into(), Value::Array(resources));
    if spec
        .get("environment")
        .is_some_and(|e| e.as_object().is_some_and(Map::is_empty))
    {
        spec.remove("environment");
    }
    spec.insert("mode".into(), json!("Pipeline"));
    spec.insert(
        "pipeline".into(),
        json!([{"step": "patch-and-transform", "functionRef": {"name": PATCH_AND_TRANSFORM}, "input": input}]),
    );
}

/// A Function for the converted pipeline, if the user didn't supply one.
pub fn implied_function() -> Value {
    json!({
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Function",
        "metadata": {"name": PATCH_AND_TRANSFORM},
        "spec": {"package": PATCH_AND_TRANSFORM_PACKAGE},
    })
}

fn convert_resource(mut resource: Value) -> Value {
    if let Some(patches) = resource.get_mut("patches") {
        *patches = with_patch_types(patches.take());
    }
    if let Some(Value::Array(details)) = resource.get_mut("connectionDetails") {
        for detail in details.iter_mut().filter_map(Value::as_object_mut) {
            if detail.contains_key("type") {
                continue;
            }
            let kind = if detail.contains_key("fromConnectionSecretKey") {
                "FromConnectionSecretKey"
            } else if detail.contains_key("fromFieldPath") {
                "FromFieldPath"
            } else {
                "FromValue"
            };
            detail.insert("type".into(), json!(kind));
        }
    }
    resource
}

/// Patches without a `type` were FromCompositeFieldPath in Resources mode.
fn with_patch_types(mut patches: Value) -> Value {
    for patch in patches
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        patch
            .entry("type")
            .or_insert_with(|| json!("FromCompositeFieldPath"));
    }
    patches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_become_the_input_of_a_patch_and_transform_step() {
        let mut composition = json!({"spec": {
            "mode": "Resources",
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XR"},
            "patchSets": [{"name": "common", "patches": [{"fromFieldPath": "spec.a"}]}],
            "environment": {"patches": [{"type": "ToCompositeFieldPath", "fromFieldPath": "x"}]},
            "resources": [{"name": "r", "base": {"kind": "K"},
                           "patches": [{"fromFieldPath": "spec.b", "toFieldPath": "spec.c"}],
                           "connectionDetails": [{"name": "u", "fromConnectionSecretKey": "user"}, {"name": "v", "value": "x"}]}]
        }});
        to_pipeline(&mut composition);
        assert_eq!(
            composition["spec"],
            json!({
                "mode": "Pipeline",
                "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XR"},
                "pipeline": [{"step": "patch-and-transform", "functionRef": {"name": "function-patch-and-transform"}, "input": {
                    "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources",
                    "environment": {"patches": [{"type": "ToCompositeFieldPath", "fromFieldPath": "x"}]},
                    "patchSets": [{"name": "common", "patches": [{"type": "FromCompositeFieldPath", "fromFieldPath": "spec.a"}]}],
                    "resources": [{"name": "r", "base": {"kind": "K"},
                                   "patches": [{"type": "FromCompositeFieldPath", "fromFieldPath": "spec.b", "toFieldPath": "spec.c"}],
                                   "connectionDetails": [{"name": "u", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": "user"},
                                                         {"name": "v", "type": "FromValue", "value": "x"}]}]
                }}]
            })
        );
    }
}
