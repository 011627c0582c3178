//! `xfn-native-serve`, the benchmark's transport floor (xfn's gRPC server
//! running function-patch-and-transform natively), does the wasm
//! function's work: through gRPC it answers every fixture as the native
//! function does, and the conversions it runs the function through lose
//! no field.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use xfn_grpc::connect;
use xfn_runtime::Function as _;
use xfn_sdk as sdk;
use xfn_tests::convert;
use xfn_tests::patch_and_transform;
use xfn_tests::peers::ListeningPeer;

#[tokio::test]
async fn it_answers_every_fixture_as_the_native_function_does() {
    let server = ListeningPeer::start(Path::new(env!("CARGO_BIN_EXE_xfn-native-serve")), 120);
    let client = connect("function-patch-and-transform", &server.target, None)
        .await
        .expect("client");
    let fixtures = patch_and_transform::fixture_requests();
    assert!(fixtures.len() >= 50, "only {} fixtures", fixtures.len());
    let answers = patch_and_transform::answer_fixtures(
        &fixtures,
        async |request| {
            client
                .call(
                    &convert::request(request.clone()),
                    Some(Duration::from_secs(10)),
                )
                .await
                .map(convert::response)
        },
        |_| false,
    )
    .await;
    assert!(
        answers.differing.is_empty(),
        "{} of {} fixtures differ:\n{}",
        answers.differing.len(),
        fixtures.len(),
        answers.differing.join("\n")
    );
    assert_eq!(answers.same, fixtures.len());
}

#[test]
fn a_request_with_every_field_converts_to_the_host_and_back_unchanged() {
    let request: sdk::Request = serde_json::from_value(json!({
        "meta": {"tag": "t", "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_REQUIRED_SCHEMAS"]},
        "observed": {
            "composite": {"resource": {"kind": "XR"}, "connectionDetails": {"k": "dg=="}},
            "resources": {"a": {"resource": {"kind": "A"}, "ready": "READY_TRUE"}}
        },
        "desired": {"resources": {"b": {"resource": {"kind": "B"}, "ready": "READY_FALSE"}}},
        "input": {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources"},
        "context": {"apiextensions.crossplane.io/environment": {"x": 1}},
        "extraResources": {"e": {"items": [{"resource": {"kind": "E"}}]}},
        "credentials": {"c": {"credentialData": {"data": {"password": "cw=="}}}},
        "requiredResources": {"r": {"items": [{"resource": {"kind": "R"}}]}},
        "requiredSchemas": {"s": {"openapiV3": {"type": "object"}}, "missing": {}}
    }))
    .expect("an SDK request");
    assert_eq!(
        convert::request_back(convert::request(request.clone())),
        request
    );
}

#[test]
fn a_response_with_every_field_converts_to_the_host_and_back_unchanged() {
    let response: sdk::Response = serde_json::from_value(json!({
        "meta": {"tag": "t", "ttl": "60.5s"},
        "desired": {
            "composite": {"resource": {"kind": "XR"}, "ready": "READY_TRUE"},
            "resources": {"b": {"resource": {"kind": "B"}, "connectionDetails": {"k": "dg=="}}}
        },
        "results": [
            {"severity": "SEVERITY_WARNING", "message": "m", "reason": "R", "target": "TARGET_COMPOSITE_AND_CLAIM"},
            {"severity": "SEVERITY_NORMAL", "message": "n"}
        ],
        "context": {"k": [1, "two"]},
        "requirements": {
            "extraResources": {"e": {"apiVersion": "v1", "kind": "Secret", "matchName": "s"}},
            "resources": {"r": {"apiVersion": "v1", "kind": "ConfigMap", "matchLabels": {"labels": {"a": "b"}}, "namespace": "ns"}},
            "schemas": {"s": {"apiVersion": "example.org/v1", "kind": "XR"}}
        },
        "conditions": [
            {"type": "Ready", "status": "STATUS_CONDITION_FALSE", "reason": "Waiting", "message": "m", "target": "TARGET_COMPOSITE"}
        ],
        "output": {"o": true}
    }))
    .expect("an SDK response");
    assert_eq!(
        convert::response(convert::response_forward(response.clone())),
        response
    );
}
