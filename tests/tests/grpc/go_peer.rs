//! The Go peer of `make bench` (tests/go-peer: grpc-go and Debian's
//! protobuf packages) does the work of the functions it stands beside:
//! - given P&T's input, P&T's simplest patch: it answers the docs example
//!   (what `make bench` sends) and every P&T fixture it takes on exactly as
//!   function-patch-and-transform does, and refuses the rest by name;
//! - otherwise the Python SDK test function's work: xfn's gRPC client gets
//!   the same response from both, but for the names that say which peer
//!   answered.
//!
//! Skipped, with the reason, only when the Go peer can't be built here (its
//! Debian packages missing: `make deps` installs them).

use std::time::Duration;

use crate::grpc_support::*;
use serde_json::{Value, json};
use xfn_grpc::connect;
use xfn_runtime::Function as _;
use xfn_runtime::protocol::*;
use xfn_tests::convert;
use xfn_tests::patch_and_transform::{self, same_on_the_wire};
use xfn_tests::peers::{ListeningPeer, build_go_peer};

/// How long the Go peer may live, in seconds.
const CHILD_SECONDS: u32 = 120;

/// A request with every part the peers read or pass through.
fn request() -> RunFunctionRequest {
    let object = |v: Value| Some(v.to_string());
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "tag-go".into(),
            capabilities: ALL_CAPABILITIES.to_vec(),
        }),
        observed: Some(State {
            composite: Some(ResourceObject::from_json(
                &json!({"apiVersion": "example.org/v1", "kind": "XR", "spec": {"n": 3}}),
            )),
            resources: Vec::new(),
        }),
        desired: Some(State {
            composite: None,
            resources: vec![(
                "kept".into(),
                ResourceObject {
                    resource: object(json!({"kind": "Kept", "spec": {"ratio": 0.5}})),
                    connection_details: vec![("key".into(), b"v\0\xff".to_vec())],
                    ready: Ready::False,
                },
            )],
        }),
        input: object(json!({"count": true, "data": {"n": 9001, "s": "text"}})),
        context: object(json!({"xfn.test/calls": 41, "other": [1, "two"]})),
        ..RunFunctionRequest::default()
    }
}

/// The Go peer, started; `None` (the test skipped, with the reason) when it
/// can't be built here.
fn go_peer() -> Option<ListeningPeer> {
    match build_go_peer() {
        Ok(bin) => Some(ListeningPeer::start(&bin, CHILD_SECONDS)),
        Err(e) => {
            eprintln!("SKIPPED: the Go peer can't be built here (`make deps` installs it):\n{e}");
            None
        }
    }
}

/// How the Go peer's message starts when it refuses P&T input it doesn't
/// implement.
const REFUSED: &str = "the Go peer does not implement ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_peer_answers_as_patch_and_transform_does_where_it_takes_the_input_on() {
    let Some(go) = go_peer() else { return };
    let client = connect("function-go", &go.target, None)
        .await
        .expect("client");
    let timeout = Some(Duration::from_secs(10));
    let call = async |request: &xfn_sdk::Request| {
        client
            .call(&convert::request(request.clone()), timeout)
            .await
            .map(convert::response)
    };

    // The request `make bench` sends: taken on, and answered as P&T does.
    let docs = patch_and_transform::docs_request();
    let want = function_patch_and_transform::run(&docs);
    let got = call(&docs).await.expect("calls Go");
    assert!(same_on_the_wire(&got, &want), "P&T: {want:?}\nGo: {got:?}");
    assert!(
        got.desired
            .as_ref()
            .is_some_and(|d| d.resources.contains_key("storage-bucket")),
        "{got:?}"
    );

    // The fixtures with P&T's input; for others the Go peer does the
    // Python function's work.
    let fixtures: Vec<_> = patch_and_transform::fixture_requests()
        .into_iter()
        .filter(|(_, request)| {
            let field = |key: &str| request.input.as_ref()?.get(key)?.as_str();
            field("apiVersion").is_some_and(|v| v.starts_with("pt.fn.crossplane.io/"))
                && field("kind") == Some("Resources")
        })
        .collect();
    let refused = |got: &xfn_sdk::Response| {
        got.results
            .iter()
            .any(|r| r.severity == xfn_sdk::Severity::Fatal && r.message.starts_with(REFUSED))
    };
    let answers = patch_and_transform::answer_fixtures(&fixtures, call, refused).await;
    assert!(
        answers.differing.is_empty(),
        "{} fixtures answered differently:\n{}",
        answers.differing.len(),
        answers.differing.join("\n")
    );
    assert!(
        answers.same >= 3,
        "only {} fixtures taken on ({} refused)",
        answers.same,
        answers.set_aside
    );
    eprintln!(
        "the Go peer took on {} P&T fixtures and refused {}",
        answers.same, answers.set_aside
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_peer_answers_as_the_python_sdk_function_does() {
    let Some(go) = go_peer() else { return };
    let python = PyFunction::start(&["--insecure"]);
    let request = request();
    let timeout = Some(Duration::from_secs(10));

    let go_fn = connect("function-go", &go.target, None)
        .await
        .expect("client");
    let py_fn = connect("function-python", &python.target(), None)
        .await
        .expect("client");
    let from_go = go_fn.call(&request, timeout).await.expect("calls Go");
    let from_python = py_fn.call(&request, timeout).await.expect("calls Python");

    // The work itself, on the Go side.
    let desired = from_go.desired.as_ref().expect("desired state");
    let names: Vec<&str> = desired.resources.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["from-go", "kept"]);
    assert_eq!(
        desired.resources[0].1.resource.as_deref(),
        Some(r#"{"apiVersion":"v1","data":{"n":"9001","s":"text"},"kind":"ConfigMap"}"#)
    );
    let context = from_go.context.as_deref().expect("context");
    assert!(context.contains(r#""xfn.test/calls":42"#), "{context}");
    assert!(context.contains(r#""go.test/tag":"tag-go""#), "{context}");

    // The same response as Python's, field for field, once the peers' names
    // are the same (the context's keys are sorted, so compared parsed).
    let renamed = |text: String| text.replace("python", "go");
    let parse = |context: Option<String>| -> Value {
        serde_json::from_str(&renamed(context.expect("a context"))).expect("JSON context")
    };
    let (mut from_go, mut from_python) = (from_go, from_python);
    assert_eq!(
        parse(from_go.context.take()),
        parse(from_python.context.take())
    );
    assert_eq!(format!("{from_go:?}"), renamed(format!("{from_python:?}")));
}
