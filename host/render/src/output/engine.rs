//! Engine-compatible output: what `crossplane composition render` (CLI
//! v2.3 and later) prints from a core engine at 2d040d2. The XR is reduced
//! to its resource references and status; composed resources get
//! deterministic names; results are the reconciler's events.

use serde_json::{Map, Value, json};

use super::{
    CONDITION_TIME, Outputs, SYSTEM_CONDITION_TYPES, composed_resources, condition,
    function_condition, parse_object, ready_condition, result_event, set_conditions,
    typed_condition,
};
use crate::RenderError;
use crate::engine_compat::{Prepared, child_name, resource_refs, set_at};
use crate::object::{name, object_at, set_metadata_str, str_at, value_at};
use xfn_runtime::pipeline::PipelineOutput;
use xfn_runtime::protocol::Ready;

/// What the engine's reconcile leaves: the XR's last status write, the
/// applied composed resources (sorted by composition resource name), and
/// the events as `Result` documents. Observed resources that are not
/// desired any more are garbage-collected and not printed.
pub fn build(
    prepared: &Prepared,
    composition_name: &str,
    out: PipelineOutput,
    capture_context: bool,
) -> Result<Outputs, RenderError> {
    let xr = &prepared.observed_xr;
    let super::Composed { resources, unready } =
        composed_resources(out.desired.resources, xr, &prepared.observed)?;
    let mut composed = Vec::with_capacity(resources.len());
    for (resource_name, mut object) in resources {
        if name(&object).is_empty() {
            let generated = child_name(
                str_at(&object, &["metadata", "generateName"]),
                &prepared.uid,
                &resource_name,
            );
            set_metadata_str(&mut object, "name", &generated);
        }
        rewrite_condition_times(&mut object);
        composed.push(object);
    }

    let composite_state = out.desired.composite;
    let desired_xr = parse_object(composite_state.as_ref().and_then(|c| c.resource.as_deref()))
        .map_err(|e| {
            RenderError::Output(format!("cannot render desired composite resource: {e}"))
        })?;
    let mut composite = json!({
        "apiVersion": str_at(xr, &["apiVersion"]),
        "kind": str_at(xr, &["kind"]),
        "metadata": {"name": name(xr)},
    });
    set_metadata_str(
        &mut composite,
        "namespace",
        str_at(xr, &["metadata", "namespace"]),
    );
    let cluster_scoped = str_at(xr, &["metadata", "namespace"]).is_empty();
    set_at(
        &mut composite,
        &prepared.schema.path("resourceRefs"),
        resource_refs(composed.iter(), cluster_scoped),
    );
    let status = match desired_xr.get("status") {
        Some(Value::Object(status)) => Value::Object(status.clone()),
        _ => Value::Object(Map::new()),
    };
    composite["status"] = status;

    let composite_ready = composite_state.map_or(Ready::Unspecified, |c| c.ready);
    let ready = ready_condition(composite_ready, &unready);
    let mut conditions = vec![condition("Responsive", "True", "WatchCircuitClosed", "")];
    conditions.extend(
        out.conditions
            .iter()
            .filter(|c| !SYSTEM_CONDITION_TYPES.contains(&c.type_.as_str()))
            .map(function_condition),
    );
    conditions.push(condition("Synced", "True", "ReconcileSuccess", ""));
    conditions.push(ready);
    set_conditions(&mut composite, &conditions);

    let mut results = vec![event(
        "Normal",
        "SelectComposition",
        &format!("Successfully selected composition: {composition_name}"),
    )];
    for r in &out.results {
        let reason = r.result.reason.as_deref().unwrap_or("ComposeResources");
        let (severity, message) = result_event(&r.step, r.result.severity, &r.result.message);
        results.push(event(severity, reason, &message));
    }
    // Upstream records these in Go map order; here they follow the names.
    for resource_name in &unready {
        results.push(event(
            "Normal",
            "ComposeResources",
            &format!("Composed resource {resource_name:?} is not yet ready"),
        ));
    }

    let context = if capture_context {
        let fields = match out.context {
            Some(text) => parse_object(Some(&text))
                .map_err(|e| RenderError::Output(format!("cannot render context: {e}")))?,
            None => Value::Object(Map::new()),
        };
        Some(
            json!({"apiVersion": "render.crossplane.io/v1beta1", "kind": "Context", "fields": fields}),
        )
    } else {
        None
    };
    Ok(Outputs {
        composite,
        composed,
        results,
        context,
    })
}

/// A `Result` document made from an event.
pub fn event(severity: &str, reason: &str, message: &str) -> Value {
    json!({
        "apiVersion": "render.crossplane.io/v1beta1",
        "kind": "Result",
        "severity": severity,
        "reason": reason,
        "message": message,
    })
}

/// The CLI's post-processing of composed resources: conditions in their
/// typed form, each at render's fixed time.
fn rewrite_condition_times(object: &mut Value) {
    let Some(conditions) = value_at(object, &["status", "conditions"])
        .and_then(Value::as_array)
        .filter(|all| all.iter().all(Value::is_object))
    else {
        return;
    };
    let rewritten: Vec<Value> = conditions
        .iter()
        .map(|c| {
            let mut c = typed_condition(c);
            c["lastTransitionTime"] = json!(CONDITION_TIME);
            c
        })
        .collect();
    object_at(object, &["status"]).insert("conditions".into(), Value::Array(rewritten));
}

/// The engine CLI's `--include-full-xr`: the input XR, with the rendered
/// XR merged over it (objects merged key by key, everything else from the
/// output), as `mergo.Merge(&input, output, mergo.WithOverride)` does.
pub fn include_full_xr(rendered: &mut Value, input: &Value) {
    let mut merged = input.clone();
    merge_over(&mut merged, rendered.take());
    *rendered = merged;
}

fn merge_over(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_over(existing, value)
                    }
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_xr_merges_output_over_input() {
        let mut out = json!({"metadata": {"name": "a"}, "spec": {"crossplane": {"resourceRefs": []}}, "status": {"x": 1}});
        let input = json!({"metadata": {"name": "a", "labels": {"l": "v"}}, "spec": {"crossplane": {"resourceRefs": [{"name": "old"}], "k": 1}, "list": [1]}});
        include_full_xr(&mut out, &input);
        assert_eq!(
            out,
            json!({"metadata": {"name": "a", "labels": {"l": "v"}},
                   "spec": {"crossplane": {"resourceRefs": [], "k": 1}, "list": [1]}, "status": {"x": 1}})
        );
    }
}
