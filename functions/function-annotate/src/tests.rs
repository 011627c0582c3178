use serde_json::{Value, json};
use xfn_sdk::{Function, Request, Resource, Resources, Severity};

use super::{Annotate, WATCHED_RESOURCE};

fn object(value: Value) -> xfn_sdk::Object {
    value.as_object().cloned().unwrap_or_default()
}

fn request(input: Value, required: Option<(&str, Vec<Value>)>) -> Request {
    let mut req = Request {
        input: input.as_object().cloned(),
        ..Request::default()
    };
    if let Some((name, items)) = required {
        req.required_resources.insert(
            name.to_owned(),
            Resources {
                items: items
                    .into_iter()
                    .map(|o| Resource::from_object(object(o)))
                    .collect(),
            },
        );
    }
    req
}

fn config_map() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "default", "generation": 4},
        "data": {"mode": "blue"}
    })
}

#[test]
fn stamps_the_watched_resource_with_only_its_identity_and_new_metadata() {
    let req = request(
        json!({
            "apiVersion": "annotate.fn.xfn.dev/v1alpha1",
            "kind": "Input",
            "annotations": {"example.org/reviewed": "true"},
            "labels": {"example.org/team": "platform"},
            "fromFieldPaths": {"example.org/generation": "metadata.generation", "example.org/mode": "data.mode"}
        }),
        Some((WATCHED_RESOURCE, vec![config_map()])),
    );
    let rsp = Annotate::run(&req).expect("runs");
    let desired = rsp.desired.expect("desired state");
    let applied = desired
        .resources
        .get("v1/ConfigMap/default/app")
        .and_then(|r| r.resource.clone())
        .expect("the config map is applied");
    assert_eq!(
        Value::Object(applied),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "app",
                "namespace": "default",
                "annotations": {
                    "example.org/reviewed": "true",
                    "example.org/generation": "4",
                    "example.org/mode": "blue"
                },
                "labels": {"example.org/team": "platform"}
            }
        })
    );
    assert_eq!(
        rsp.output.map(Value::Object),
        Some(json!({"annotated": ["ConfigMap default/app"], "count": 1}))
    );
    assert_eq!(rsp.results.len(), 1);
    assert_eq!(rsp.results[0].severity, Severity::Normal);
    assert_eq!(rsp.results[0].message, "annotated 1 resource");
}

#[test]
fn a_missing_field_is_a_warning_and_the_rest_still_applies() {
    let req = request(
        json!({"annotations": {"a": "b"}, "fromFieldPaths": {"c": "spec.missing"}}),
        Some((WATCHED_RESOURCE, vec![config_map()])),
    );
    let rsp = Annotate::run(&req).expect("runs");
    let warning = rsp
        .results
        .iter()
        .find(|r| r.severity == Severity::Warning)
        .expect("a warning");
    assert!(
        warning.message.contains("ConfigMap default/app")
            && warning.message.contains("\"c\"")
            && warning.message.contains("spec.missing"),
        "{}",
        warning.message
    );
    let applied = &rsp.desired.expect("desired").resources["v1/ConfigMap/default/app"];
    let annotations = &applied.resource.as_ref().expect("object")["metadata"]["annotations"];
    assert_eq!(annotations, &json!({"a": "b"}));
}

#[test]
fn an_unresolved_requirement_is_fatal_and_says_how_to_declare_it() {
    let rsp = Annotate::run(&request(json!({"annotations": {"a": "b"}}), None)).expect("runs");
    assert!(rsp.is_fatal());
    assert!(
        rsp.results[0].message.contains("requiredResources")
            && rsp.results[0].message.contains(WATCHED_RESOURCE),
        "{}",
        rsp.results[0].message
    );
}

#[test]
fn nothing_matched_annotates_nothing() {
    let req = request(
        json!({"requirement": "apps", "labels": {"a": "b"}}),
        Some(("apps", vec![])),
    );
    let rsp = Annotate::run(&req).expect("runs");
    assert!(!rsp.is_fatal());
    assert!(rsp.desired.is_none_or(|d| d.resources.is_empty()));
    assert_eq!(
        rsp.output.map(Value::Object),
        Some(json!({"annotated": [], "count": 0}))
    );
}

#[test]
fn an_empty_or_unknown_input_is_fatal() {
    let rsp = Annotate::run(&request(json!({}), None)).expect("runs");
    assert!(rsp.is_fatal() && rsp.results[0].message.contains("nothing to do"));
    let rsp = Annotate::run(&request(json!({"annotation": {"a": "b"}}), None)).expect("runs");
    assert!(rsp.is_fatal() && rsp.results[0].message.contains("annotation"));
}

#[test]
fn earlier_desired_metadata_of_the_same_object_is_kept() {
    let mut req = request(
        json!({"annotations": {"new": "1"}}),
        Some((WATCHED_RESOURCE, vec![config_map()])),
    );
    let earlier = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "default", "annotations": {"old": "0"}},
        "data": {"mode": "green"}
    });
    req.desired
        .get_or_insert_with(Default::default)
        .resources
        .insert(
            "v1/ConfigMap/default/app".into(),
            Resource::from_object(object(earlier)),
        );
    let rsp = Annotate::run(&req).expect("runs");
    let applied = rsp.desired.expect("desired").resources["v1/ConfigMap/default/app"]
        .resource
        .clone()
        .expect("object");
    assert_eq!(
        applied["metadata"]["annotations"],
        json!({"old": "0", "new": "1"})
    );
    assert_eq!(applied["data"], json!({"mode": "green"}));
}
