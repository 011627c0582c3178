//! `xfn-native-serve`, the benchmark's transport floor (xfn's gRPC server
//! running function-patch-and-transform natively), does the wasm
//! function's work: through gRPC it answers every fixture as the native
//! function does, and the conversions it runs the function through lose
//! no field.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use xfn_host::Function as _;
use xfn_host::grpc::connect;
use xfn_sdk as sdk;
use xfn_tests::convert;
use xfn_tests::peers::ListeningPeer;

#[tokio::test]
async fn it_answers_every_fixture_as_the_native_function_does() {
    let server = ListeningPeer::start(Path::new(env!("CARGO_BIN_EXE_xfn-native-serve")), 120);
    let client = connect("function-patch-and-transform", &server.target, None)
        .await
        .expect("client");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../functions/function-patch-and-transform/tests/fixtures");
    let files = xfn_tests::fixtures(&dir);
    assert!(files.len() >= 50, "only {} fixtures", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read fixture");
        let fixture: serde_json::Value = serde_json::from_str(&text).expect("fixture JSON");
        let request: sdk::Request =
            serde_json::from_value(fixture["request"].clone()).expect("fixture request");
        let want = function_patch_and_transform::run(&request);
        let got = client
            .call(&convert::request(request), Some(Duration::from_secs(10)))
            .await
            .map(convert::response);
        match got {
            Ok(got) if same_on_the_wire(&got, &want) => {}
            Ok(got) => failures.push(format!(
                "{}:\n  native: {want:?}\n  served: {got:?}",
                file.display()
            )),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Whether two responses are equal as protobuf carries them: a `Struct`
/// holds every number as a double, so 1 and 1.0 are the same number.
fn same_on_the_wire(a: &sdk::Response, b: &sdk::Response) -> bool {
    fn doubles(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Number(n) => n.as_f64().map_or(Value::Number(n), |f| json!(f)),
            Value::Array(items) => Value::Array(items.into_iter().map(doubles).collect()),
            Value::Object(fields) => {
                Value::Object(fields.into_iter().map(|(k, v)| (k, doubles(v))).collect())
            }
            other => other,
        }
    }
    let json = |r: &sdk::Response| doubles(serde_json::to_value(r).expect("serializable"));
    json(a) == json(b)
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
