//! Tests of the whole function, after upstream's `fn_test.go` and more.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use xfn_sdk::{
    Object, Ready, Request, RequestMeta, Resource, Response, ResponseMeta, Severity, State,
};

use super::run;

fn object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn resource(value: Value) -> Resource {
    Resource::from_object(object(value))
}

fn with_ready(value: Value, ready: Ready) -> Resource {
    Resource {
        ready,
        ..resource(value)
    }
}

fn xr() -> Resource {
    resource(
        json!({"apiVersion": "test.crossplane.io/v1", "kind": "TestXR", "metadata": {"name": "my-test-xr"}}),
    )
}

fn request(observed: Vec<(&str, Resource)>, desired: Vec<(&str, Resource)>) -> Request {
    let map = |items: Vec<(&str, Resource)>| -> BTreeMap<String, Resource> {
        items.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    };
    Request {
        meta: Some(RequestMeta {
            tag: "hello".to_owned(),
            ..RequestMeta::default()
        }),
        observed: Some(State {
            composite: Some(xr()),
            resources: map(observed),
        }),
        desired: Some(State {
            composite: None,
            resources: map(desired),
        }),
        ..Request::default()
    }
}

fn readiness(rsp: &Response) -> BTreeMap<String, Ready> {
    rsp.desired
        .as_ref()
        .map(|d| {
            d.resources
                .iter()
                .map(|(k, v)| (k.clone(), v.ready))
                .collect()
        })
        .unwrap_or_default()
}

fn expected(desired: Vec<(&str, Resource)>) -> Response {
    Response {
        meta: Some(ResponseMeta {
            tag: "hello".to_owned(),
            ttl: Some(Duration::from_secs(60)),
        }),
        desired: Some(State {
            composite: None,
            resources: desired
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        }),
        ..Response::default()
    }
}

fn ready_condition(status: &str) -> Value {
    json!({"conditions": [{"type": "Ready", "status": status}]})
}

// The four cases of upstream's TestRunFunction, compared whole.

#[test]
fn auto_detects_readiness_from_the_ready_condition() {
    let observed = resource(
        json!({"apiVersion": "test.crossplane.io/v1", "kind": "TestComposed",
        "metadata": {"name": "my-test-composed"}, "spec": {}, "status": ready_condition("True")}),
    );
    let req = request(
        vec![("ready-composed-resource", observed)],
        vec![("ready-composed-resource", resource(json!({})))],
    );
    let want = expected(vec![(
        "ready-composed-resource",
        with_ready(json!({}), Ready::True),
    )]);
    assert_eq!(run(&req), want);
}

#[test]
fn deployment_health_check() {
    let observed = resource(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "my-deployment"},
        "spec": {"replicas": 3}, "status": {"updatedReplicas": 3, "availableReplicas": 3,
        "conditions": [{"type": "Available", "status": "True"}]}}),
    );
    let req = request(
        vec![("my-deployment", observed)],
        vec![("my-deployment", resource(json!({})))],
    );
    assert_eq!(
        run(&req),
        expected(vec![("my-deployment", with_ready(json!({}), Ready::True))])
    );
}

#[test]
fn service_health_check() {
    let observed = resource(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "my-service"},
        "spec": {"type": "ClusterIP"}}),
    );
    let req = request(
        vec![("my-service", observed)],
        vec![("my-service", resource(json!({})))],
    );
    assert_eq!(
        run(&req),
        expected(vec![("my-service", with_ready(json!({}), Ready::True))])
    );
}

#[test]
fn falls_back_to_the_ready_condition_for_other_kinds() {
    let observed = resource(
        json!({"apiVersion": "rds.aws.crossplane.io/v1alpha1", "kind": "DBInstance",
        "metadata": {"name": "my-db"}, "spec": {}, "status": ready_condition("True")}),
    );
    let req = request(
        vec![("managed-resource", observed)],
        vec![("managed-resource", resource(json!({})))],
    );
    assert_eq!(
        run(&req),
        expected(vec![(
            "managed-resource",
            with_ready(json!({}), Ready::True)
        )])
    );
}

// The rule's other branches.

#[test]
fn a_failed_health_check_still_falls_back_to_the_ready_condition() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3},
        "status": {"updatedReplicas": 1, "availableReplicas": 1, "conditions": [{"type": "Ready", "status": "True"}]}});
    let req = request(
        vec![("d", resource(deployment))],
        vec![("d", resource(json!({})))],
    );
    assert_eq!(readiness(&run(&req))["d"], Ready::True);
}

#[test]
fn not_ready_stays_unspecified_never_false() {
    let observed = vec![
        (
            "mr",
            resource(
                json!({"apiVersion": "example.org/v1", "kind": "Thing", "status": ready_condition("False")}),
            ),
        ),
        (
            "deploy",
            resource(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2},
            "status": {"updatedReplicas": 1, "availableReplicas": 1}}),
            ),
        ),
        (
            "no-status",
            resource(json!({"apiVersion": "example.org/v1", "kind": "Thing"})),
        ),
        ("no-object", Resource::default()),
    ];
    let desired: Vec<(&str, Resource)> = observed
        .iter()
        .map(|(k, _)| (*k, resource(json!({}))))
        .collect();
    let rsp = run(&request(observed, desired));
    assert!(
        readiness(&rsp).values().all(|r| *r == Ready::Unspecified),
        "{:?}",
        readiness(&rsp)
    );
    assert!(rsp.results.is_empty());
}

#[test]
fn desired_but_not_observed_is_left_alone() {
    let observed = vec![(
        "other",
        resource(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
    )];
    let desired = vec![(
        "new",
        resource(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
    )];
    let rsp = run(&request(observed, desired));
    assert_eq!(
        readiness(&rsp),
        BTreeMap::from([("new".to_owned(), Ready::Unspecified)])
    );
}

#[test]
fn observed_but_not_desired_is_not_added() {
    let observed = vec![(
        "gone",
        resource(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
    )];
    let rsp = run(&request(observed, vec![]));
    assert!(readiness(&rsp).is_empty());
}

#[test]
fn readiness_set_by_an_earlier_function_is_respected() {
    let ready_cm = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let not_ready_mr = json!({"apiVersion": "example.org/v1", "kind": "Thing", "status": ready_condition("False")});
    let observed = vec![
        ("false-but-observed-ready", resource(ready_cm.clone())),
        ("true-but-observed-not-ready", resource(not_ready_mr)),
        ("unspecified", resource(ready_cm.clone())),
    ];
    let desired = vec![
        (
            "false-but-observed-ready",
            with_ready(json!({}), Ready::False),
        ),
        (
            "true-but-observed-not-ready",
            with_ready(json!({}), Ready::True),
        ),
        ("unspecified", resource(json!({}))),
        ("false-not-observed", with_ready(json!({}), Ready::False)),
    ];
    let rsp = run(&request(observed, desired));
    assert_eq!(
        readiness(&rsp),
        BTreeMap::from([
            ("false-but-observed-ready".to_owned(), Ready::False),
            ("true-but-observed-not-ready".to_owned(), Ready::True),
            ("unspecified".to_owned(), Ready::True),
            ("false-not-observed".to_owned(), Ready::False),
        ])
    );
}

#[test]
fn the_health_check_uses_the_observed_kind_not_the_desired_one() {
    let observed = vec![(
        "x",
        resource(json!({"apiVersion": "example.org/v1", "kind": "Thing"})),
    )];
    let desired = vec![(
        "x",
        resource(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
    )];
    assert_eq!(
        readiness(&run(&request(observed, desired)))["x"],
        Ready::Unspecified
    );
}

#[test]
fn everything_else_passes_through_untouched() {
    let composite = Resource {
        connection_details: BTreeMap::from([("password".to_owned(), b"s3cr3t".to_vec())]),
        ..resource(
            json!({"apiVersion": "test.crossplane.io/v1", "kind": "TestXR", "status": {"x": 1}}),
        )
    };
    let desired_cm = Resource {
        connection_details: BTreeMap::from([("key".to_owned(), b"value".to_vec())]),
        ..resource(json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}))
    };
    let mut req = request(
        vec![(
            "cm",
            resource(json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})),
        )],
        vec![("cm", desired_cm.clone())],
    );
    // The observed XR is Ready: that says nothing about the desired XR.
    if let Some(observed) = req.observed.as_mut() {
        observed.composite = Some(resource(
            json!({"apiVersion": "test.crossplane.io/v1", "kind": "TestXR",
            "status": ready_condition("True")}),
        ));
    }
    if let Some(desired) = req.desired.as_mut() {
        desired.composite = Some(composite.clone());
    }
    req.context = Some(object(
        json!({"apiextensions.crossplane.io/environment": {"region": "eu"}}),
    ));

    let rsp = run(&req);
    let desired = rsp.desired.clone().unwrap_or_default();
    assert_eq!(desired.composite, Some(composite));
    assert_eq!(
        desired.resources["cm"],
        Resource {
            ready: Ready::True,
            ..desired_cm
        }
    );
    assert_eq!(rsp.context, req.context);
    assert!(rsp.results.is_empty());
    assert!(rsp.conditions.is_empty());
    assert!(rsp.requirements.is_none());
}

#[test]
fn a_request_without_desired_state_gets_an_empty_one() {
    let req = Request {
        meta: Some(RequestMeta {
            tag: "t".to_owned(),
            ..RequestMeta::default()
        }),
        ..Request::default()
    };
    let rsp = run(&req);
    assert_eq!(rsp.desired, Some(State::default()));
    assert_eq!(rsp.meta.map(|m| m.tag), Some("t".to_owned()));
}

// Input.

fn with_input(mut req: Request, input: Value) -> Request {
    req.input = Some(object(input));
    req
}

fn ready_cm_request() -> Request {
    request(
        vec![(
            "cm",
            resource(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
        )],
        vec![("cm", resource(json!({})))],
    )
}

#[test]
fn input_ttl_sets_the_response_ttl() {
    let req = with_input(
        ready_cm_request(),
        json!({"apiVersion": "autoready.fn.crossplane.io/v1beta1", "kind": "Input", "ttl": "5m"}),
    );
    let rsp = run(&req);
    assert_eq!(rsp.meta.and_then(|m| m.ttl), Some(Duration::from_secs(300)));
    assert_eq!(readiness(&run(&req))["cm"], Ready::True);
}

#[test]
fn an_invalid_ttl_is_fatal_and_changes_nothing() {
    let req = with_input(ready_cm_request(), json!({"ttl": "x"}));
    let rsp = run(&req);
    assert_eq!(rsp.results.len(), 1);
    assert_eq!(rsp.results[0].severity, Severity::Fatal);
    assert_eq!(
        rsp.results[0].message,
        r#"cannot set ttl: time: invalid duration "x""#
    );
    assert_eq!(rsp.desired, req.desired);
    assert_eq!(rsp.meta.and_then(|m| m.ttl), Some(Duration::from_secs(60)));
}

#[test]
fn an_unknown_input_field_is_fatal() {
    let rsp = run(&with_input(
        ready_cm_request(),
        json!({"ttl": "1m", "forceReady": []}),
    ));
    assert_eq!(rsp.results.len(), 1);
    assert_eq!(rsp.results[0].severity, Severity::Fatal);
    assert!(
        rsp.results[0]
            .message
            .contains("unknown field `forceReady`"),
        "{}",
        rsp.results[0].message
    );
    assert_eq!(readiness(&rsp)["cm"], Ready::Unspecified);
}

#[test]
fn cel_rules_are_accepted_and_ignored_as_with_the_gate_off() {
    let req = with_input(
        ready_cm_request(),
        json!({"celHealthCheckCustomization": {"_v1_ConfigMap": "false"}, "celHealthCheckCustomizationFrom": "rules"}),
    );
    let rsp = run(&req);
    assert!(rsp.results.is_empty());
    assert_eq!(readiness(&rsp)["cm"], Ready::True);
}
