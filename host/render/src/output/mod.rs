//! Turns a pipeline's output into the documents render prints: the XR,
//! the composed resources, results and the context. What both output modes
//! share lives here; [`classic`] shapes them as classic `crossplane render`
//! does, [`engine`] as the engine-based CLI does.

pub mod classic;
pub mod engine;

use serde_json::{Map, Value, json};

use super::RenderError;
use super::object::{name, object_at, set_metadata_str, str_at, value_at};
use std::collections::BTreeMap;

use xfn_runtime::protocol::{Condition, ConditionStatus, Ready, ResourceObject, Severity};

/// Annotation naming a composed resource's entry in the desired state.
pub const COMPOSITION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";
/// Label naming the root XR of a composed resource.
pub const COMPOSITE_LABEL: &str = "crossplane.io/composite";
const CLAIM_NAME_LABEL: &str = "crossplane.io/claim-name";
const CLAIM_NAMESPACE_LABEL: &str = "crossplane.io/claim-namespace";

/// The fixed `lastTransitionTime` render gives every condition it sets.
pub const CONDITION_TIME: &str = "2024-01-01T00:00:00Z";

/// Condition types functions may not set.
pub const SYSTEM_CONDITION_TYPES: [&str; 5] =
    ["Ready", "Synced", "Healthy", "UpToDate", "Responsive"];

/// What render prints, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// The XR.
    pub composite: Value,
    /// Composed resources, sorted by composition resource name.
    pub composed: Vec<Value>,
    /// `Result` documents of non-fatal results.
    pub results: Vec<Value>,
    /// The `Context` document, if the last step returned a context.
    pub context: Option<Value>,
}

/// What to print besides the XR and the composed resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// `-r`: `Result` documents.
    pub include_results: bool,
    /// `-c`: the `Context` document.
    pub include_context: bool,
}

impl Outputs {
    /// The YAML stream render prints: the XR, the composed resources, then
    /// results and the context if asked for.
    pub fn to_yaml(&self, options: PrintOptions) -> String {
        let null = Value::Null;
        let mut docs: Vec<&Value> = vec![&self.composite];
        docs.extend(&self.composed);
        if options.include_results {
            docs.extend(&self.results);
        }
        if options.include_context {
            docs.push(self.context.as_ref().unwrap_or(&null));
        }
        xfn_yaml::to_yaml_stream(docs)
    }
}

/// A JSON object's text as an object; none is an empty object.
pub fn parse_object(text: Option<&str>) -> Result<Value, String> {
    match text {
        None => Ok(Value::Object(Map::new())),
        Some(text) => xfn_proto::json::parse_value::<Map<String, Value>>(text)
            .map(Value::Object)
            .map_err(|e| e.to_string()),
    }
}

/// Sets the metadata Crossplane derives from the XR on a composed resource:
/// generateName, namespace, the composition-resource-name annotation, the
/// composite and claim labels, and the controller reference.
pub fn set_composed_metadata(
    object: &mut Value,
    xr: &Value,
    resource_name: &str,
) -> Result<(), RenderError> {
    let xr_labels = value_at(xr, &["metadata", "labels"]);
    let label = |key: &str| {
        xr_labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let prefix = match label(COMPOSITE_LABEL) {
        "" => name(xr),
        root => root,
    };
    if str_at(object, &["metadata", "name"]).is_empty()
        && str_at(object, &["metadata", "generateName"]).is_empty()
    {
        set_metadata_str(object, "generateName", &format!("{prefix}-"));
    }
    let xr_namespace = str_at(xr, &["metadata", "namespace"]);
    if !xr_namespace.is_empty() {
        set_metadata_str(object, "namespace", xr_namespace);
    }
    object_at(object, &["metadata", "annotations"])
        .insert(COMPOSITION_RESOURCE_NAME.into(), json!(resource_name));
    let labels = object_at(object, &["metadata", "labels"]);
    labels.insert(COMPOSITE_LABEL.into(), json!(prefix));
    let (claim_name, claim_namespace) = (label(CLAIM_NAME_LABEL), label(CLAIM_NAMESPACE_LABEL));
    if !claim_name.is_empty() && !claim_namespace.is_empty() {
        labels.insert(CLAIM_NAMESPACE_LABEL.into(), json!(claim_namespace));
        labels.insert(CLAIM_NAME_LABEL.into(), json!(claim_name));
    }

    let owner = json!({
        "apiVersion": str_at(xr, &["apiVersion"]),
        "kind": str_at(xr, &["kind"]),
        "name": name(xr),
        "uid": str_at(xr, &["metadata", "uid"]),
        "controller": true,
        "blockOwnerDeletion": true,
    });
    let metadata = object_at(object, &["metadata"]);
    let refs = metadata
        .entry("ownerReferences")
        .or_insert_with(|| json!([]));
    if !refs.is_array() {
        *refs = json!([]);
    }
    let Value::Array(refs) = refs else {
        unreachable!("just made a list")
    };
    let uid = str_at(&owner, &["uid"]).to_owned();
    if let Some(other) = refs
        .iter()
        .find(|r| r.get("controller") == Some(&json!(true)) && str_at(r, &["uid"]) != uid)
    {
        return Err(RenderError::Output(format!(
            "cannot render composed resource {resource_name:?} metadata: cannot set composite resource {:?} as controller ref of composed resource: {:?} is already controlled by {} {} (UID {})",
            name(xr),
            resource_name,
            str_at(other, &["kind"]),
            str_at(other, &["name"]),
            str_at(other, &["uid"]),
        )));
    }
    refs.retain(|r| str_at(r, &["uid"]) != uid);
    refs.push(owner);
    Ok(())
}

/// The composed resources render prints, by name, and the names of those
/// not ready.
pub struct Composed {
    /// Each resource's name and object, sorted by name.
    pub resources: Vec<(String, Value)>,
    /// The names of the resources not marked ready.
    pub unready: Vec<String>,
}

/// The desired composed resources, sorted by name, each with the identity
/// of its observed counterpart kept and Crossplane's composed metadata set.
/// Both output modes start here.
pub fn composed_resources(
    mut desired: Vec<(String, ResourceObject)>,
    xr: &Value,
    observed: &BTreeMap<String, Value>,
) -> Result<Composed, RenderError> {
    desired.sort_by(|a, b| a.0.cmp(&b.0));
    let mut unready = Vec::new();
    let mut composed = Vec::with_capacity(desired.len());
    for (resource_name, resource) in desired {
        if resource.ready != Ready::True {
            unready.push(resource_name.clone());
        }
        let mut object = parse_object(resource.resource.as_deref()).map_err(|e| {
            RenderError::Output(format!(
                "cannot unmarshal desired composed resource {resource_name:?}: {e}"
            ))
        })?;
        if let Some(existing) = observed.get(&resource_name) {
            for key in ["namespace", "name", "generateName"] {
                set_metadata_str(&mut object, key, str_at(existing, &["metadata", key]));
            }
        }
        set_composed_metadata(&mut object, xr, &resource_name)?;
        composed.push((resource_name, object));
    }
    Ok(Composed {
        resources: composed,
        unready,
    })
}

/// The XR's `Ready` condition: the composite's own readiness if a function
/// set it, else `Creating` while any composed resource is unready.
pub fn ready_condition(composite: Ready, unready: &[String]) -> Value {
    match composite {
        Ready::False => condition("Ready", "False", "Creating", ""),
        Ready::Unspecified if !unready.is_empty() => condition(
            "Ready",
            "False",
            "Creating",
            &format!(
                "Unready resources: {}",
                stable_n_and_some_more(3, unready.to_vec())
            ),
        ),
        _ => condition("Ready", "True", "Available", ""),
    }
}

/// The event Crossplane's reconcilers record for a function's non-fatal
/// result: its type (`Normal` or `Warning`) and message.
pub fn result_event(step: &str, severity: Severity, message: &str) -> (&'static str, String) {
    match severity {
        Severity::Normal => ("Normal", format!("Pipeline step {step:?}: {message}")),
        Severity::Warning => ("Warning", format!("Pipeline step {step:?}: {message}")),
        // Fatal results end a render before its output is built.
        Severity::Unspecified | Severity::Fatal => (
            "Warning",
            format!(
                "Pipeline step {step:?} returned a result of unknown severity (assuming warning): {message}"
            ),
        ),
    }
}

/// A condition with render's fixed time; an empty message is omitted.
pub fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    let mut c = json!({"type": kind, "status": status, "reason": reason, "lastTransitionTime": CONDITION_TIME});
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    c
}

/// A function's condition as the XR condition Crossplane sets.
pub fn function_condition(c: &Condition) -> Value {
    let status = match c.status {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown | ConditionStatus::Unspecified => "Unknown",
    };
    condition(
        &c.type_,
        status,
        &c.reason,
        c.message.as_deref().unwrap_or(""),
    )
}

/// crossplane-runtime's `SetConditions` on `status.conditions`: a condition
/// replaces the one of the same type unless they are equal (time aside),
/// else it is appended. Existing conditions are rewritten in their typed
/// form (unknown fields dropped, empty message omitted).
pub fn set_conditions(xr: &mut Value, new: &[Value]) {
    let mut conditions: Vec<Value> = value_at(xr, &["status", "conditions"])
        .and_then(Value::as_array)
        .filter(|all| all.iter().all(Value::is_object))
        .map(|all| all.iter().map(typed_condition).collect())
        .unwrap_or_default();
    for c in new {
        let mut exists = false;
        for existing in conditions.iter_mut() {
            if existing["type"] != c["type"] {
                continue;
            }
            exists = true;
            if !equal_conditions(existing, c) {
                *existing = c.clone();
            }
        }
        if !exists {
            conditions.push(c.clone());
        }
    }
    object_at(xr, &["status"]).insert("conditions".into(), Value::Array(conditions));
}

/// A condition in crossplane-runtime's typed form.
pub fn typed_condition(c: &Value) -> Value {
    let text = |key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut typed = json!({
        "type": text("type"),
        "status": text("status"),
        "reason": text("reason"),
        "lastTransitionTime": c.get("lastTransitionTime").filter(|t| t.is_string()).cloned().unwrap_or(Value::Null),
    });
    if !text("message").is_empty() {
        typed["message"] = json!(text("message"));
    }
    if let Some(generation) = c
        .get("observedGeneration")
        .and_then(Value::as_i64)
        .filter(|g| *g != 0)
    {
        typed["observedGeneration"] = json!(generation);
    }
    typed
}

fn equal_conditions(a: &Value, b: &Value) -> bool {
    ["type", "status", "reason", "message", "observedGeneration"]
        .iter()
        .all(|k| a.get(k) == b.get(k))
}

/// crossplane-runtime's `StableNAndSomeMore`: the first `n` sorted names,
/// then how many more.
pub fn stable_n_and_some_more(n: usize, mut names: Vec<String>) -> String {
    names.sort();
    match names.len() {
        0 => String::new(),
        len if len <= n && len <= 2 => names.join(", "),
        len if len <= n => format!("{}, and {}", names[..len - 1].join(", "), names[len - 1]),
        len => format!("{}, and {} more", names[..n].join(", "), len - n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_listed_like_crossplane_runtime_does() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(stable_n_and_some_more(3, names(&["b"])), "b");
        assert_eq!(stable_n_and_some_more(3, names(&["b", "a"])), "a, b");
        assert_eq!(
            stable_n_and_some_more(3, names(&["c", "b", "a"])),
            "a, b, and c"
        );
        assert_eq!(
            stable_n_and_some_more(3, names(&["e", "d", "c", "b", "a"])),
            "a, b, c, and 2 more"
        );
    }

    #[test]
    fn composed_metadata_follows_the_xr() {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "XR",
            "metadata": {"name": "child", "namespace": "ns", "labels": {
                "crossplane.io/composite": "root", "crossplane.io/claim-name": "c", "crossplane.io/claim-namespace": "cns"}}});
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        set_composed_metadata(&mut object, &xr, "cm").expect("sets");
        assert_eq!(
            object["metadata"],
            json!({
                "generateName": "root-", "namespace": "ns",
                "annotations": {"crossplane.io/composition-resource-name": "cm"},
                "labels": {"crossplane.io/composite": "root", "crossplane.io/claim-name": "c", "crossplane.io/claim-namespace": "cns"},
                "ownerReferences": [{"apiVersion": "example.org/v1", "kind": "XR", "name": "child", "uid": "",
                                     "controller": true, "blockOwnerDeletion": true}]
            })
        );
    }

    #[test]
    fn a_resource_controlled_by_another_owner_is_an_error() {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr"}});
        let mut object = json!({"metadata": {"ownerReferences": [{"kind": "Other", "name": "o", "uid": "1", "controller": true}]}});
        let err = set_composed_metadata(&mut object, &xr, "r").expect_err("controlled elsewhere");
        assert!(
            err.to_string()
                .contains("is already controlled by Other o (UID 1)"),
            "{err}"
        );
    }

    #[test]
    fn conditions_replace_by_type_and_keep_equal_ones() {
        let mut xr = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "Creating", "lastTransitionTime": "2020-01-01T00:00:00Z", "extra": 1},
            {"type": "Custom", "status": "True", "reason": "Fine"}
        ]}});
        set_conditions(
            &mut xr,
            &[
                condition("Ready", "True", "Available", ""),
                condition("Custom", "True", "Fine", ""),
            ],
        );
        assert_eq!(
            xr["status"]["conditions"],
            json!([
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": CONDITION_TIME},
                {"type": "Custom", "status": "True", "reason": "Fine", "lastTransitionTime": null}
            ])
        );
    }
}

#[cfg(test)]
mod deep_tests {
    use super::*;

    /// A function's JSON as deep as a served call carries it is read,
    /// printed and dropped within the stack render runs on (the main
    /// thread's, 8 MiB), and one level more is refused.
    #[test]
    fn the_deepest_json_a_function_may_return_prints() {
        let depth = xfn_proto::json::MAX_JSON_DEPTH;
        let render = move || {
            let text = format!("{}1{}", r#"{"d":"#.repeat(depth), "}".repeat(depth));
            let outputs = Outputs {
                composite: parse_object(Some(&text)).expect("parses"),
                composed: Vec::new(),
                results: Vec::new(),
                context: None,
            };
            outputs.to_yaml(PrintOptions::default())
        };
        let yaml = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(render)
            .expect("a thread")
            .join()
            .expect("renders within 8 MiB of stack");
        // `---`, then a line a level.
        assert_eq!(yaml.lines().count(), depth + 1);
        assert!(yaml.ends_with(&format!("{}d: 1\n", " ".repeat(2 * (depth - 1)))));
        let deeper = format!("{}1{}", r#"{"d":"#.repeat(depth + 1), "}".repeat(depth + 1));
        assert!(parse_object(Some(&deeper)).is_err());
    }
}
