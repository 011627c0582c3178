//! Every field of a request and a response crosses the WIT boundary into
//! the guest SDK and back unchanged.

use serde_json::{Value, json};
use xfn_runtime::HostConfig;
use xfn_runtime::protocol::*;
use xfn_tests::{load, runtime};

fn object(value: Value) -> Option<String> {
    Some(value.to_string())
}

fn resource(value: Value, ready: Ready) -> ResourceObject {
    ResourceObject {
        resource: object(value),
        connection_details: vec![("password".into(), b"s3cr3t\0\xff".to_vec())],
        ready,
    }
}

fn full_request(input: Value) -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "tag-1".into(),
            capabilities: vec![
                Capability::Unspecified,
                Capability::Capabilities,
                Capability::RequiredResources,
                Capability::Credentials,
                Capability::Conditions,
                Capability::RequiredSchemas,
            ],
        }),
        observed: Some(State {
            composite: Some(resource(
                json!({"kind": "XR", "n": 1.5}),
                Ready::Unspecified,
            )),
            resources: vec![("a".into(), resource(json!({"kind": "A"}), Ready::True))],
        }),
        desired: Some(State {
            composite: Some(resource(json!({"status": {}}), Ready::False)),
            resources: vec![(
                "b".into(),
                resource(
                    json!({"kind": "B", "list": [1, "x", null, true]}),
                    Ready::False,
                ),
            )],
        }),
        input: object(input),
        context: object(json!({"apiextensions.crossplane.io/environment": {"k": "v"}})),
        extra_resources: vec![(
            "extra".into(),
            Resources {
                items: vec![resource(json!({"kind": "E"}), Ready::Unspecified)],
            },
        )],
        credentials: vec![
            (
                "creds".into(),
                Credentials {
                    source: Some(CredentialSource::CredentialData(CredentialData {
                        data: vec![("token".into(), b"t0k".to_vec())],
                    })),
                },
            ),
            ("empty".into(), Credentials { source: None }),
        ],
        required_resources: vec![
            (
                "req".into(),
                Resources {
                    items: vec![resource(json!({"kind": "R"}), Ready::Unspecified)],
                },
            ),
            ("none".into(), Resources { items: Vec::new() }),
        ],
        required_schemas: vec![
            (
                "schema".into(),
                Schema {
                    openapi_v3: object(json!({"type": "object"})),
                },
            ),
            ("missing".into(), Schema { openapi_v3: None }),
        ],
    }
}

#[test]
fn every_request_field_reaches_the_guest_sdk() {
    let rt = runtime(HostConfig::default());
    let f = load(&rt, "scripted", "xfn_test_scripted");
    let input = json!({"echo": true});
    let rsp = f
        .call_blocking(&full_request(input.clone()), None)
        .expect("runs");
    let context: Value =
        serde_json::from_str(rsp.context.as_deref().unwrap_or("{}")).expect("json");
    // base64 of b"s3cr3t\0\xff", b"t0k"
    let details = json!({"password": "czNjcjN0AP8="});
    let expected = json!({
        "meta": {"tag": "tag-1", "capabilities": [
            "CAPABILITY_UNSPECIFIED", "CAPABILITY_CAPABILITIES", "CAPABILITY_REQUIRED_RESOURCES",
            "CAPABILITY_CREDENTIALS", "CAPABILITY_CONDITIONS", "CAPABILITY_REQUIRED_SCHEMAS"]},
        "observed": {
            "composite": {"resource": {"kind": "XR", "n": 1.5}, "connectionDetails": details},
            "resources": {"a": {"resource": {"kind": "A"}, "connectionDetails": details, "ready": "READY_TRUE"}}
        },
        "desired": {
            "composite": {"resource": {"status": {}}, "connectionDetails": details, "ready": "READY_FALSE"},
            "resources": {"b": {"resource": {"kind": "B", "list": [1, "x", null, true]}, "connectionDetails": details, "ready": "READY_FALSE"}}
        },
        "input": input,
        "context": {"apiextensions.crossplane.io/environment": {"k": "v"}},
        "extraResources": {"extra": {"items": [{"resource": {"kind": "E"}, "connectionDetails": details}]}},
        "credentials": {"creds": {"credentialData": {"data": {"token": "dDBr"}}}, "empty": {}},
        "requiredResources": {
            "none": {},
            "req": {"items": [{"resource": {"kind": "R"}, "connectionDetails": details}]}
        },
        "requiredSchemas": {"missing": {}, "schema": {"openapiV3": {"type": "object"}}}
    });
    assert_eq!(context["xfn.test/request"], expected);
}

#[test]
fn every_response_field_reaches_the_host() {
    let rt = runtime(HostConfig::default());
    let f = load(&rt, "scripted", "xfn_test_scripted");
    let scripted = json!({
        "meta": {"tag": "echoed-tag", "ttl": "90s"},
        "desired": {
            "composite": {"resource": {"status": {"ok": true}}, "connectionDetails": {"url": "aHR0cA=="}, "ready": "READY_TRUE"},
            "resources": {"r": {"resource": {"kind": "R"}, "ready": "READY_FALSE"}}
        },
        "results": [
            {"severity": "SEVERITY_NORMAL", "message": "n"},
            {"severity": "SEVERITY_WARNING", "message": "w", "reason": "Why", "target": "TARGET_COMPOSITE_AND_CLAIM"},
            {"severity": "SEVERITY_UNSPECIFIED", "message": "u", "target": "TARGET_UNSPECIFIED"}
        ],
        "context": {"next": [1, 2]},
        "requirements": {
            "extraResources": {"e": {"apiVersion": "v1", "kind": "Secret", "matchLabels": {"labels": {"a": "b"}}, "namespace": "ns"}},
            "resources": {
                "byName": {"apiVersion": "v1", "kind": "ConfigMap", "matchName": "cm"},
                "all": {"apiVersion": "v1", "kind": "Namespace"}
            },
            "schemas": {"s": {"apiVersion": "example.org/v1", "kind": "XR"}}
        },
        "conditions": [
            {"type": "Custom", "status": "STATUS_CONDITION_TRUE", "reason": "Fine", "message": "m", "target": "TARGET_COMPOSITE"},
            {"type": "Other", "status": "STATUS_CONDITION_UNKNOWN", "reason": "Hmm"}
        ],
        "output": {"done": 1}
    });
    let request = RunFunctionRequest {
        input: object(json!({"response": scripted})),
        ..RunFunctionRequest::default()
    };
    let rsp = f.call_blocking(&request, None).expect("runs");
    let expected = RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: "echoed-tag".into(),
            ttl: Some(Duration {
                seconds: 90,
                nanos: 0,
            }),
        }),
        desired: Some(State {
            composite: Some(ResourceObject {
                resource: object(json!({"status": {"ok": true}})),
                connection_details: vec![("url".into(), b"http".to_vec())],
                ready: Ready::True,
            }),
            resources: vec![(
                "r".into(),
                ResourceObject {
                    resource: object(json!({"kind": "R"})),
                    connection_details: Vec::new(),
                    ready: Ready::False,
                },
            )],
        }),
        results: vec![
            FunctionResult {
                severity: Severity::Normal,
                message: "n".into(),
                reason: None,
                target: None,
            },
            FunctionResult {
                severity: Severity::Warning,
                message: "w".into(),
                reason: Some("Why".into()),
                target: Some(Target::CompositeAndClaim),
            },
            FunctionResult {
                severity: Severity::Unspecified,
                message: "u".into(),
                reason: None,
                target: Some(Target::Unspecified),
            },
        ],
        context: object(json!({"next": [1, 2]})),
        requirements: Some(Requirements {
            extra_resources: vec![(
                "e".into(),
                ResourceSelector {
                    api_version: "v1".into(),
                    kind: "Secret".into(),
                    match_: Some(ResourceMatch::MatchLabels(MatchLabels {
                        labels: vec![("a".into(), "b".into())],
                    })),
                    namespace: Some("ns".into()),
                },
            )],
            resources: vec![
                (
                    "all".into(),
                    ResourceSelector {
                        api_version: "v1".into(),
                        kind: "Namespace".into(),
                        match_: None,
                        namespace: None,
                    },
                ),
                (
                    "byName".into(),
                    ResourceSelector {
                        api_version: "v1".into(),
                        kind: "ConfigMap".into(),
                        match_: Some(ResourceMatch::MatchName("cm".into())),
                        namespace: None,
                    },
                ),
            ],
            schemas: vec![(
                "s".into(),
                SchemaSelector {
                    api_version: "example.org/v1".into(),
                    kind: "XR".into(),
                },
            )],
        }),
        conditions: vec![
            Condition {
                type_: "Custom".into(),
                status: ConditionStatus::True,
                reason: "Fine".into(),
                message: Some("m".into()),
                target: Some(Target::Composite),
            },
            Condition {
                type_: "Other".into(),
                status: ConditionStatus::Unknown,
                reason: "Hmm".into(),
                message: None,
                target: None,
            },
        ],
        output: object(json!({"done": 1})),
    };
    assert_eq!(rsp, expected);
}
