//! xfn's client shim calling a function written with
//! crossplane-function-sdk-python, in plaintext and over mTLS, alone and in
//! a pipeline with wasm steps.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::grpc_support::*;
use serde_json::{Value, json};
use xfn_grpc::{ClientTls, GrpcFunction, connect};
use xfn_runtime::pipeline::{NoResources, Pipeline, Step};
use xfn_runtime::protocol::*;
use xfn_runtime::{CallError, Function, HostConfig};

fn parse(text: Option<&str>) -> Value {
    text.map_or(Value::Null, |t| {
        serde_json::from_str(t).expect("valid JSON")
    })
}

fn full_request(input: Value) -> RunFunctionRequest {
    let object = |v: Value| Some(v.to_string());
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "tag-7".into(),
            capabilities: ALL_CAPABILITIES.to_vec(),
        }),
        observed: Some(State {
            composite: Some(ResourceObject {
                resource: object(
                    json!({"apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr-1"}, "spec": {"replicas": 9001, "ratio": 0.25}}),
                ),
                connection_details: vec![("password".into(), b"s3cr3t\0\xff".to_vec())],
                ready: Ready::Unspecified,
            }),
            resources: vec![(
                "db".into(),
                ResourceObject {
                    resource: object(json!({"kind": "DB"})),
                    connection_details: Vec::new(),
                    ready: Ready::True,
                },
            )],
        }),
        desired: Some(State {
            composite: None,
            resources: vec![(
                "kept".into(),
                ResourceObject {
                    resource: object(json!({"kind": "Kept"})),
                    connection_details: Vec::new(),
                    ready: Ready::False,
                },
            )],
        }),
        input: object(input),
        context: object(json!({"xfn.test/calls": 41})),
        extra_resources: Vec::new(),
        credentials: vec![(
            "creds".into(),
            Credentials {
                source: Some(CredentialSource::CredentialData(CredentialData {
                    data: vec![("token".into(), b"t0k".to_vec())],
                })),
            },
        )],
        required_resources: vec![("cms".into(), Resources { items: Vec::new() })],
        required_schemas: vec![("xr".into(), Schema { openapi_v3: None })],
    }
}

/// What the Python function returns for `full_request`, checked field by field.
fn assert_python_response(rsp: &RunFunctionResponse) {
    assert_eq!(rsp.meta.as_ref().map(|m| m.tag.as_str()), Some("tag-7"));
    assert_eq!(
        rsp.meta.as_ref().and_then(|m| m.ttl),
        Some(Duration {
            seconds: 60,
            nanos: 0
        }),
        "the SDK's default TTL"
    );
    let results: Vec<(Severity, &str)> = rsp
        .results
        .iter()
        .map(|r| (r.severity, r.message.as_str()))
        .collect();
    assert_eq!(results, [(Severity::Normal, "hello from python")]);
    let desired = rsp.desired.as_ref().expect("desired state");
    let names: Vec<&str> = desired.resources.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["from-python", "kept"],
        "desired state passed through, sorted by name"
    );
    assert_eq!(desired.resources[1].1.ready, Ready::False);
    // Integral numbers come back as JSON integers.
    assert_eq!(
        desired.resources[0].1.resource.as_deref(),
        Some(r#"{"apiVersion":"v1","data":{"n":"9001"},"kind":"ConfigMap"}"#)
    );
    let context = rsp.context.as_deref().expect("context");
    assert!(context.contains(r#""xfn.test/calls":42"#), "{context}");
    assert!(
        context.contains(r#""python.test/tag":"tag-7""#),
        "{context}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shim_calls_a_python_sdk_function_in_plaintext() {
    let python = PyFunction::start(&["--insecure"]);
    let f = connect("function-python", &python.target(), None)
        .await
        .expect("client");
    assert_eq!(f.name(), "function-python");
    let rsp = f
        .call(
            &full_request(json!({"count": true, "data": {"n": 9001}, "echo": true})),
            Some(std::time::Duration::from_secs(10)),
        )
        .await
        .expect("calls the Python function");
    assert_python_response(&rsp);

    // Every request field reached the Python SDK (it echoes the request as protojson).
    let echoed = &parse(rsp.context.as_deref())["python.test/request"];
    assert_eq!(
        echoed["meta"]["capabilities"].as_array().map(Vec::len),
        Some(5),
        "{echoed}"
    );
    assert_eq!(
        echoed["observed"]["composite"]["resource"]["spec"],
        json!({"replicas": 9001, "ratio": 0.25}),
        "9001 stays 9001"
    );
    assert_eq!(
        echoed["observed"]["composite"]["connectionDetails"]["password"],
        "czNjcjN0AP8="
    );
    assert_eq!(echoed["observed"]["resources"]["db"]["ready"], "READY_TRUE");
    assert_eq!(
        echoed["credentials"]["creds"]["credentialData"]["data"]["token"],
        "dDBr"
    );
    assert_eq!(echoed["requiredResources"]["cms"], json!({}));
    assert_eq!(echoed["requiredSchemas"]["xr"], json!({}));

    // The other target syntaxes reach it too.
    for target in [
        format!("dns:///localhost:{}", python.port),
        format!("http://127.0.0.1:{}", python.port),
    ] {
        let f = connect("function-python", &target, None)
            .await
            .expect("client");
        let rsp = f
            .call(
                &full_request(json!({"count": true, "data": {"n": 9001}})),
                None,
            )
            .await
            .expect(&target);
        assert_python_response(&rsp);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shim_calls_a_python_sdk_function_over_mtls() {
    let certs = Certs::for_functions(&["function-python"]);
    let python = PyFunction::start(&["--tls-certs-dir", certs.server.to_str().expect("utf-8")]);
    let tls = ClientTls::from_dir(&certs.client)
        .expect("client certs")
        .with_server_name("function-python.crossplane-system");
    let f = connect("function-python", &python.target(), Some(tls))
        .await
        .expect("client");
    let rsp = f
        .call(
            &full_request(json!({"count": true, "data": {"n": 9001}})),
            Some(std::time::Duration::from_secs(10)),
        )
        .await
        .expect("calls over mTLS");
    assert_python_response(&rsp);

    // The Python server refuses a client certificate from another CA.
    let stranger = ClientTls::from_dir(&certs.stranger)
        .expect("certs")
        .with_server_name("function-python.crossplane-system");
    let f = connect("function-python", &python.target(), Some(stranger))
        .await
        .expect("client");
    let err = f
        .call(
            &full_request(json!({})),
            Some(std::time::Duration::from_secs(10)),
        )
        .await
        .expect_err("refused");
    match &err {
        CallError::Unavailable { function, message } => {
            assert_eq!(function, "function-python");
            assert!(
                message.contains(&python.target()),
                "names the target: {message}"
            );
        }
        other => panic!("want Unavailable, got {other}"),
    }
    // And a plaintext client.
    let f = connect("function-python", &python.target(), None)
        .await
        .expect("client");
    let err = f
        .call(
            &full_request(json!({})),
            Some(std::time::Duration::from_secs(10)),
        )
        .await
        .expect_err("refused");
    assert!(matches!(err, CallError::Unavailable { .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shim_falls_back_to_v1beta1_like_crossplane() {
    let python = PyFunction::start(&["--insecure", "--v1beta1-only"]);
    let f = connect("function-python", &python.target(), None)
        .await
        .expect("client");
    for _ in 0..2 {
        let rsp = f
            .call(
                &full_request(json!({"count": true, "data": {"n": 9001}})),
                Some(std::time::Duration::from_secs(10)),
            )
            .await
            .expect("served over v1beta1");
        assert_python_response(&rsp);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_is_sent_and_enforced() {
    let python = PyFunction::start(&["--insecure"]);
    let f = connect("function-python", &python.target(), None)
        .await
        .expect("client");
    let started = Instant::now();
    let limit = std::time::Duration::from_millis(300);
    let err = f
        .call(&full_request(json!({"sleep": 5})), Some(limit))
        .await
        .expect_err("too slow");
    assert_eq!(
        err,
        CallError::Timeout {
            function: "function-python".into(),
            limit
        }
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "gave up at the deadline: {:?}",
        started.elapsed()
    );
    // The same client then makes a healthy call.
    f.call(
        &full_request(json!({"data": {"n": 9001}})),
        Some(std::time::Duration::from_secs(10)),
    )
    .await
    .expect("healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_mixes_wasm_and_python_steps() {
    let python = PyFunction::start(&["--insecure"]);
    let runtime = xfn_tests::runtime(HostConfig::default());
    let scripted: Arc<dyn Function> = xfn_tests::load(&runtime, "scripted", "xfn_test_scripted");
    let grpc: Arc<GrpcFunction> = Arc::new(
        connect("function-python", &python.target(), None)
            .await
            .expect("client"),
    );
    let functions = HashMap::from([
        ("scripted".to_owned(), scripted),
        ("function-python".to_owned(), grpc as Arc<dyn Function>),
    ]);
    let step = |name: &str, function: &str| Step {
        name: name.into(),
        function: function.into(),
        input: Some(json!({"count": true}).to_string()),
        ..Step::default()
    };
    let steps = [
        step("wasm-1", "scripted"),
        step("python", "function-python"),
        step("wasm-2", "scripted"),
    ];
    let pipeline = Pipeline {
        steps: &steps,
        functions: &functions,
        resolver: &NoResources,
        call_timeout: Some(std::time::Duration::from_secs(10)),
    };
    let observed = State {
        composite: Some(ResourceObject {
            resource: Some(
                json!({"apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr-1"}})
                    .to_string(),
            ),
            connection_details: Vec::new(),
            ready: Ready::Unspecified,
        }),
        resources: Vec::new(),
    };
    let out = pipeline
        .run(observed, None)
        .await
        .expect("the pipeline runs");
    assert_eq!(
        parse(out.context.as_deref())["xfn.test/calls"],
        json!(3),
        "every step counted, in order"
    );
    let names: Vec<&str> = out
        .desired
        .resources
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        names,
        ["from-python"],
        "the Python step's resource survives the wasm step after it"
    );
    let messages: Vec<(&str, &str)> = out
        .results
        .iter()
        .map(|r| (r.step.as_str(), r.result.message.as_str()))
        .collect();
    assert_eq!(messages, [("python", "hello from python")]);
}
