//! Classic `crossplane render` output (CLI v1.15 to v2.2): the desired XR
//! as the last step returned it, `Ready` and custom conditions, and
//! `Result` documents with the step and the protobuf severity.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Outputs, SYSTEM_CONDITION_TYPES, composed_resources, function_condition, parse_object,
    ready_condition, set_conditions,
};
use crate::RenderError;
use crate::object::{ensure_object, name, set_metadata_str, str_at};
use xfn_runtime::pipeline::PipelineOutput;
use xfn_runtime::protocol::Ready;

/// Builds the outputs of a pipeline run for `xr`, given the observed
/// composed resources by name.
pub fn build(
    xr: &Value,
    observed: &BTreeMap<String, Value>,
    out: PipelineOutput,
) -> Result<Outputs, RenderError> {
    let super::Composed { resources, unready } =
        composed_resources(out.desired.resources, xr, observed)?;
    let composed: Vec<Value> = resources.into_iter().map(|(_, object)| object).collect();

    let composite_state = out.desired.composite;
    let mut composite = parse_object(composite_state.as_ref().and_then(|c| c.resource.as_deref()))
        .map_err(|e| {
            RenderError::Output(format!("cannot render desired composite resource: {e}"))
        })?;
    let map = ensure_object(&mut composite);
    map.insert("apiVersion".into(), json!(str_at(xr, &["apiVersion"])));
    map.insert("kind".into(), json!(str_at(xr, &["kind"])));
    set_metadata_str(&mut composite, "name", name(xr));
    set_metadata_str(
        &mut composite,
        "namespace",
        str_at(xr, &["metadata", "namespace"]),
    );

    let composite_ready = composite_state.map_or(Ready::Unspecified, |c| c.ready);
    let ready = ready_condition(composite_ready, &unready);
    let mut conditions = vec![ready];
    conditions.extend(
        out.conditions
            .iter()
            .filter(|c| !SYSTEM_CONDITION_TYPES.contains(&c.type_.as_str()))
            .map(function_condition),
    );
    set_conditions(&mut composite, &conditions);

    let results = out
        .results
        .iter()
        .map(|r| {
            json!({
                "apiVersion": "render.crossplane.io/v1beta1",
                "kind": "Result",
                "step": r.step,
                "severity": r.result.severity.proto_name(),
                "message": r.result.message,
            })
        })
        .collect();
    let context = match out.context {
        Some(text) => {
            let fields = parse_object(Some(&text))
                .map_err(|e| RenderError::Output(format!("cannot render context: {e}")))?;
            Some(
                json!({"apiVersion": "render.crossplane.io/v1beta1", "kind": "Context", "fields": fields}),
            )
        }
        None => None,
    };
    Ok(Outputs {
        composite,
        composed,
        results,
        context,
    })
}

/// Classic `--include-full-xr`: the input XR's spec and metadata replace
/// the rendered XR's.
pub fn include_full_xr(rendered: &mut Value, input: &Value) {
    if let Some(out) = rendered.as_object_mut() {
        for key in ["spec", "metadata"] {
            out.insert(
                key.to_owned(),
                input.get(key).cloned().unwrap_or(Value::Null),
            );
        }
    }
}
