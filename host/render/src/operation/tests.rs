use serde_json::json;

use super::*;
use crate::Compat;
use xfn_runtime::protocol::{FunctionResult, Severity};

fn cron() -> Value {
    json!({
        "apiVersion": OPS_API_VERSION,
        "kind": "CronOperation",
        "metadata": {"name": "nightly", "labels": {"parent": "x"}},
        "spec": {
            "schedule": "0 0 * * *",
            "operationTemplate": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {"mode": "Pipeline", "pipeline": [{"step": "s", "functionRef": {"name": "f"}}]}
            }
        }
    })
}

#[test]
fn a_cron_operation_renders_as_its_template_named_after_it() {
    let op = operation_from(cron()).expect("a CronOperation is an operation");
    assert_eq!(
        op,
        json!({
            "apiVersion": OPS_API_VERSION,
            "kind": "Operation",
            "metadata": {"name": "nightly", "labels": {"team": "a"}},
            "spec": {"mode": "Pipeline", "pipeline": [{"step": "s", "functionRef": {"name": "f"}}]}
        })
    );
}

#[test]
fn other_kinds_and_versions_are_not_operations() {
    for (api_version, kind) in [
        ("ops.crossplane.io/v1alpha1", "Composition"),
        ("ops.crossplane.io/v1", "Operation"),
        ("apiextensions.crossplane.io/v1", "Operation"),
    ] {
        let err = operation_from(json!({"apiVersion": api_version, "kind": kind}))
            .expect_err("not an operation");
        assert!(
            err.to_string()
                .starts_with(&format!("not an operation type: {kind}/{api_version}")),
            "{err}"
        );
    }
    let mut no_template = cron();
    no_template["spec"]
        .as_object_mut()
        .map(|s| s.remove("operationTemplate"));
    let err = operation_from(no_template).expect_err("no template");
    assert!(
        err.to_string().contains("no spec.operationTemplate"),
        "{err}"
    );
}

#[test]
fn the_watched_resource_is_required_by_every_step() {
    let mut op = json!({"spec": {"pipeline": [
        {"step": "a", "functionRef": {"name": "f"}},
        {"step": "b", "functionRef": {"name": "f"}, "requirements": {"requiredResources": [
            {"requirementName": "other", "apiVersion": "v1", "kind": "Secret"}
        ]}}
    ]}});
    let watched = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}});
    inject_watched_resource(&mut op, &watched);
    let selector = json!({
        "requirementName": WATCHED_RESOURCE, "apiVersion": "v1", "kind": "ConfigMap",
        "name": "cm", "namespace": "ns"
    });
    assert_eq!(
        op["spec"]["pipeline"][0]["requirements"]["requiredResources"],
        json!([selector.clone()])
    );
    assert_eq!(
        op["spec"]["pipeline"][1]["requirements"]["requiredResources"][1],
        selector
    );
    // A cluster-scoped object's selector has no namespace.
    let mut op = json!({"spec": {"pipeline": [{"step": "a"}]}});
    inject_watched_resource(
        &mut op,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}),
    );
    assert_eq!(
        op["spec"]["pipeline"][0]["requirements"]["requiredResources"][0].get("namespace"),
        None
    );
}

fn output_with(resources: &[(&str, Value)], outputs: &[(&str, Value)]) -> PipelineOutput {
    let mut out = PipelineOutput::default();
    for (key, object) in resources {
        out.desired.resources.push((
            (*key).to_owned(),
            xfn_runtime::protocol::ResourceObject::from_json(object),
        ));
    }
    out.outputs = outputs
        .iter()
        .map(|(s, o)| ((*s).to_owned(), o.to_string()))
        .collect();
    out
}

#[test]
fn the_engine_operation_carries_conditions_outputs_and_sorted_unique_refs() {
    let cm = |n: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "d"}});
    let out = output_with(
        &[("z", cm("a")), ("y", cm("b")), ("x", cm("a"))],
        &[("s", json!({"count": 2}))],
    );
    let applied = applied_resources(&out).expect("objects");
    let op = json!({"apiVersion": OPS_API_VERSION, "kind": "Operation", "metadata": {"name": "o"}, "spec": {"mode": "Pipeline"}});
    let rendered = engine_operation(op, &applied, &out).expect("builds");
    let t = CONDITION_TIME;
    assert_eq!(
        rendered,
        json!({
            "apiVersion": OPS_API_VERSION,
            "kind": "Operation",
            "metadata": {"name": "o", "resourceVersion": "999"},
            "spec": {"mode": "Pipeline"},
            "status": {
                "conditions": [
                    {"lastTransitionTime": t, "reason": "PipelineSuccess", "status": "True", "type": "Succeeded"},
                    {"lastTransitionTime": t, "reason": "ValidPipeline", "status": "True", "type": "ValidPipeline"},
                    {"lastTransitionTime": t, "reason": "ReconcileSuccess", "status": "True", "type": "Synced"}
                ],
                "pipeline": [{"step": "s", "output": {"count": 2}}],
                "appliedResourceRefs": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "a"},
                    {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "b"}
                ]
            }
        })
    );
    // Classic keeps every applied resource in order, and always both lists.
    let classic = classic_operation(&rendered, &applied, &output_with(&[], &[])).expect("builds");
    assert_eq!(
        classic["status"],
        json!({"appliedResourceRefs": [
            {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "a"},
            {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "b"},
            {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "a"}
        ], "pipeline": []})
    );
    assert_eq!(classic.get("spec"), None);
}

#[test]
fn results_are_events_in_engine_shape_and_protobuf_severities_in_classic() {
    let result = |severity| StepResult {
        step: "s".into(),
        result: FunctionResult {
            severity,
            message: "hi".into(),
            reason: Some("Ignored".into()),
            target: None,
        },
    };
    assert_eq!(
        result_document(&result(Severity::Warning), Compat::Engine),
        json!({"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result",
               "severity": "Warning", "reason": "RunPipelineStep", "message": "Pipeline step \"s\": hi"})
    );
    assert_eq!(
        result_document(&result(Severity::Unspecified), Compat::Engine)["message"],
        json!("Pipeline step \"s\" returned a result of unknown severity (assuming warning): hi")
    );
    assert_eq!(
        result_document(&result(Severity::Normal), Compat::Classic),
        json!({"apiVersion": "render.crossplane.io/v1beta1", "kind": "Result",
               "step": "s", "severity": "SEVERITY_NORMAL", "message": "hi"})
    );
}
