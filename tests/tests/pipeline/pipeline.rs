//! Crossplane's pipeline semantics, one rule per test, through real wasm
//! components (the scripted test function).

use std::sync::Arc;

use serde_json::{Value, json};
use xfn_runtime::pipeline::{Functions, Pipeline, PipelineError, Resolver, Step};
use xfn_runtime::protocol::{
    ResourceMatch, ResourceObject, ResourceSelector, Resources, Schema, SchemaSelector, Severity,
    State,
};
use xfn_runtime::{Function, HostConfig};
use xfn_tests::{load, runtime};

fn functions() -> Functions {
    let rt = runtime(HostConfig::default());
    let scripted: Arc<dyn Function> = load(&rt, "scripted", "xfn_test_scripted");
    Functions::from([("scripted".to_owned(), scripted)])
}

fn step(name: &str, input: Value) -> Step {
    Step {
        name: name.into(),
        function: "scripted".into(),
        input: Some(input.to_string()),
        ..Step::default()
    }
}

fn observed() -> State {
    State {
        composite: Some(ResourceObject {
            resource: Some(
                json!({"apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr"}})
                    .to_string(),
            ),
            connection_details: Vec::new(),
            ready: xfn_runtime::protocol::Ready::Unspecified,
        }),
        resources: Vec::new(),
    }
}

/// Resolves `v1 ConfigMap` selectors by name from a fixed set.
struct ConfigMaps(Vec<&'static str>);

impl Resolver for ConfigMaps {
    fn resources(&self, selector: &ResourceSelector) -> Result<Resources, String> {
        let items = self
            .0
            .iter()
            .filter(
                |name| matches!(&selector.match_, Some(ResourceMatch::MatchName(n)) if n == *name),
            )
            .map(|name| ResourceObject {
                resource: Some(
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
                        .to_string(),
                ),
                connection_details: Vec::new(),
                ready: xfn_runtime::protocol::Ready::Unspecified,
            })
            .collect();
        Ok(Resources { items })
    }

    fn schema(&self, _: &SchemaSelector) -> Result<Schema, String> {
        Ok(Schema {
            openapi_v3: Some(r#"{"type":"object"}"#.into()),
        })
    }
}

async fn run(
    steps: &[Step],
    context: Option<Value>,
) -> Result<xfn_runtime::pipeline::PipelineOutput, PipelineError> {
    let functions = functions();
    let pipeline = Pipeline {
        steps,
        functions: &functions,
        resolver: &ConfigMaps(vec!["cm-a"]),
        call_timeout: None,
    };
    pipeline
        .run(observed(), context.map(|c| c.to_string()))
        .await
}

fn parse(text: Option<&str>) -> Value {
    text.map_or(Value::Null, |t| {
        serde_json::from_str(t).expect("valid JSON")
    })
}

fn echoed(context: Option<&str>) -> Value {
    parse(context)["xfn.test/request"].clone()
}

#[tokio::test]
async fn each_step_replaces_the_desired_state() {
    let first = step(
        "first",
        json!({"response": {"desired": {"resources": {"a": {"resource": {"kind": "A"}}}}}}),
    );
    let second = step(
        "second",
        json!({"echo": true, "response": {"desired": {"resources": {"b": {"resource": {"kind": "B"}}}}}}),
    );
    let out = run(&[first, second], None).await.expect("runs");
    // The second step saw the first step's desired state...
    let seen = echoed(out.context.as_deref());
    assert_eq!(
        seen["desired"],
        json!({"resources": {"a": {"resource": {"kind": "A"}}}})
    );
    // ...and its own replaced it wholesale.
    let names: Vec<&str> = out
        .desired
        .resources
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["b"]);
}

#[tokio::test]
async fn a_step_without_desired_state_empties_it() {
    let first = step(
        "first",
        json!({"response": {"desired": {"resources": {"a": {"resource": {"kind": "A"}}}}}}),
    );
    let second = step("second", json!({"response": {"desired": null}}));
    let out = run(&[first, second], None).await.expect("runs");
    assert_eq!(out.desired, State::default());
}

#[tokio::test]
async fn every_step_sees_the_same_observed_state() {
    let first = step(
        "first",
        json!({"echo": true, "response": {"desired": {"composite": {"resource": {"status": {"x": 1}}}}}}),
    );
    let out_first = run(std::slice::from_ref(&first), None).await.expect("runs");
    let second = step("second", json!({"echo": true}));
    let out = run(&[first, second], None).await.expect("runs");
    let xr = json!({"apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr"}});
    assert_eq!(
        echoed(out_first.context.as_deref())["observed"]["composite"]["resource"],
        xr
    );
    assert_eq!(
        echoed(out.context.as_deref())["observed"]["composite"]["resource"],
        xr
    );
}

#[tokio::test]
async fn context_flows_from_step_to_step_and_is_replaced() {
    let first = step("first", json!({"response": {"context": {"from": "first"}}}));
    let second = step("second", json!({"echo": true}));
    let out = run(&[first, second], Some(json!({"from": "cli"})))
        .await
        .expect("runs");
    assert_eq!(
        echoed(out.context.as_deref())["context"],
        json!({"from": "first"})
    );
}

#[tokio::test]
async fn a_step_without_context_drops_it() {
    let first = step("first", json!({"response": {"context": null}}));
    let second = step("second", json!({"echo": true}));
    let out = run(&[first, second], Some(json!({"from": "cli"})))
        .await
        .expect("runs");
    assert_eq!(echoed(out.context.as_deref()).get("context"), None);
}

#[tokio::test]
async fn the_first_step_gets_the_initial_context_and_an_empty_desired_state() {
    let out = run(
        &[step("only", json!({"echo": true}))],
        Some(json!({"k": "v"})),
    )
    .await
    .expect("runs");
    let seen = echoed(out.context.as_deref());
    assert_eq!(seen["context"], json!({"k": "v"}));
    assert_eq!(seen["desired"], json!({}));
    assert_eq!(
        seen["meta"]["capabilities"].as_array().map(Vec::len),
        Some(5)
    );
}

#[tokio::test]
async fn a_fatal_result_stops_the_pipeline_at_once() {
    let first = step(
        "first",
        json!({"response": {"results": [
            {"severity": "SEVERITY_NORMAL", "message": "fine"},
            {"severity": "SEVERITY_FATAL", "message": "boom"}
        ]}}),
    );
    // Were the second step called, it would trap.
    let second = step("second", json!({"fault": "trap"}));
    let err = run(&[first, second], None).await.expect_err("fatal");
    assert_eq!(
        err.to_string(),
        r#"pipeline step "first" returned a fatal result: boom"#
    );
}

#[tokio::test]
async fn a_fatal_result_keeps_the_requirements_for_the_caller() {
    let first = step(
        "first",
        json!({"response": {
            "requirements": {"resources": {"cm": {"apiVersion": "v1", "kind": "ConfigMap", "matchName": "missing"}}},
            "results": [{"severity": "SEVERITY_FATAL", "message": "need cm"}]
        }}),
    );
    match run(&[first], None).await {
        Err(PipelineError::Fatal {
            step, requirements, ..
        }) => {
            assert_eq!(step, "first");
            assert_eq!(requirements.len(), 1);
            assert_eq!(requirements[0].1.resources[0].0, "cm");
        }
        other => panic!("want a fatal error, got {other:?}"),
    }
}

#[tokio::test]
async fn results_and_conditions_are_collected_in_pipeline_order() {
    let first = step(
        "first",
        json!({"response": {
            "results": [{"severity": "SEVERITY_NORMAL", "message": "one"}],
            "conditions": [{"type": "A", "status": "STATUS_CONDITION_TRUE", "reason": "R"}]
        }}),
    );
    let second = step(
        "second",
        json!({"response": {
            "results": [{"severity": "SEVERITY_WARNING", "message": "two"}],
            "conditions": [{"type": "B", "status": "STATUS_CONDITION_FALSE", "reason": "S"}]
        }}),
    );
    let out = run(&[first, second], None).await.expect("runs");
    let results: Vec<(&str, Severity, &str)> = out
        .results
        .iter()
        .map(|r| {
            (
                r.step.as_str(),
                r.result.severity,
                r.result.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("first", Severity::Normal, "one"),
            ("second", Severity::Warning, "two")
        ]
    );
    let conditions: Vec<&str> = out.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(conditions, ["A", "B"]);
}

#[tokio::test]
async fn requirements_are_resolved_and_the_step_called_until_they_are_stable() {
    let requirement = json!({"resources": {"cm": {"apiVersion": "v1", "kind": "ConfigMap", "matchName": "cm-a"}}});
    let first = step(
        "first",
        json!({
            "count": true,
            "echo": true,
            "response": {"requirements": requirement},
            "afterRequirements": {"requirements": requirement, "desired": {"resources": {"got": {"resource": {"kind": "Got"}}}}}
        }),
    );
    let out = run(&[first], None).await.expect("runs");
    let context = parse(out.context.as_deref());
    // Two calls: the first asked, the second got the resource and asked the same.
    assert_eq!(context["xfn.test/calls"], json!(2));
    let seen = &context["xfn.test/request"];
    assert_eq!(
        seen["requiredResources"]["cm"]["items"][0]["resource"]["metadata"]["name"],
        json!("cm-a")
    );
    // The context returned by the first call was fed back to the second.
    assert_eq!(seen["context"]["xfn.test/calls"], json!(1));
    assert_eq!(out.desired.resources[0].0, "got");
}

#[tokio::test]
async fn a_requirement_that_matches_nothing_resolves_empty() {
    let requirement = json!({"resources": {"cm": {"apiVersion": "v1", "kind": "ConfigMap", "matchName": "nope"}}});
    let first = step(
        "first",
        json!({"echo": true, "response": {"requirements": requirement}}),
    );
    let out = run(&[first], None).await.expect("runs");
    let seen = echoed(out.context.as_deref());
    assert_eq!(
        seen["requiredResources"],
        json!({"cm": {}}),
        "resolved, but empty"
    );
}

#[tokio::test]
async fn requirements_that_never_stabilize_fail_after_six_calls() {
    let first = step("first", json!({"count": true, "unstable": true}));
    let err = run(&[first], None).await.expect_err("unstable");
    assert_eq!(
        err.to_string(),
        "cannot run pipeline step \"first\": requirements didn't stabilize after the maximum number of iterations (5)"
    );
}

#[tokio::test]
async fn a_step_without_requirements_is_called_once() {
    let out = run(&[step("first", json!({"count": true}))], None)
        .await
        .expect("runs");
    assert_eq!(parse(out.context.as_deref())["xfn.test/calls"], json!(1));
}

#[tokio::test]
async fn bootstrap_requirements_are_resolved_before_the_first_call() {
    let mut first = step("first", json!({"count": true, "echo": true}));
    first.required_resources = vec![(
        "boot".into(),
        ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            match_: Some(ResourceMatch::MatchName("cm-a".into())),
            namespace: None,
        },
    )];
    first.required_schemas = vec![(
        "s".into(),
        SchemaSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        },
    )];
    let out = run(&[first], None).await.expect("runs");
    let context = parse(out.context.as_deref());
    assert_eq!(context["xfn.test/calls"], json!(1));
    let seen = &context["xfn.test/request"];
    assert_eq!(
        seen["requiredResources"]["boot"]["items"][0]["resource"]["metadata"]["name"],
        json!("cm-a")
    );
    assert_eq!(
        seen["requiredSchemas"]["s"]["openapiV3"],
        json!({"type": "object"})
    );
}

#[tokio::test]
async fn an_unknown_function_is_an_error_naming_the_step() {
    let mut first = step("first", json!({}));
    first.function = "function-missing".into();
    let err = run(&[first], None).await.expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "cannot run pipeline step \"first\": unknown Function \"function-missing\" - does it exist in your Functions file?"
    );
}

#[tokio::test]
async fn a_call_error_names_the_step_and_the_function() {
    let err = run(&[step("first", json!({"fault": "error"}))], None)
        .await
        .expect_err("fails");
    assert_eq!(
        err.to_string(),
        "cannot run pipeline step \"first\": function \"scripted\" failed: scripted error"
    );
}

#[tokio::test]
async fn the_smallest_non_zero_ttl_wins() {
    let first = step("first", json!({"response": {"meta": {"ttl": "30s"}}}));
    let second = step("second", json!({"response": {"meta": {"ttl": "0s"}}}));
    let third = step("third", json!({}));
    let out = run(&[first, second, third], None).await.expect("runs");
    assert_eq!(out.ttl, Some(std::time::Duration::from_secs(30)));
}

/// Matches every selector with all of its ConfigMaps, as a label selector
/// with no labels does.
struct Everything(Vec<String>);

impl Everything {
    /// `count` ConfigMaps of about `size` bytes each.
    fn new(count: usize, size: usize) -> Everything {
        Everything(
            (0..count)
                .map(|i| {
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": format!("cm-{i}")}, "data": {"v": "x".repeat(size)}})
                    .to_string()
                })
                .collect(),
        )
    }
}

impl Resolver for Everything {
    fn resources(&self, _: &ResourceSelector) -> Result<Resources, String> {
        let items = self
            .0
            .iter()
            .map(|text| ResourceObject {
                resource: Some(text.clone()),
                connection_details: Vec::new(),
                ready: xfn_runtime::protocol::Ready::Unspecified,
            })
            .collect();
        Ok(Resources { items })
    }

    fn schema(&self, _: &SchemaSelector) -> Result<Schema, String> {
        Ok(Schema { openapi_v3: None })
    }
}

/// A step whose function asks for `names` requirements, each of every
/// ConfigMap.
fn asking_for_everything(names: usize) -> Step {
    let selectors: serde_json::Map<String, Value> = (0..names)
        .map(|i| {
            (
                format!("all-{i}"),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "matchLabels": {}}),
            )
        })
        .collect();
    step(
        "greedy",
        json!({"response": {"requirements": {"resources": selectors}}}),
    )
}

async fn run_against(
    steps: &[Step],
    resolver: &dyn Resolver,
) -> Result<xfn_runtime::pipeline::PipelineOutput, PipelineError> {
    let functions = functions();
    let pipeline = Pipeline {
        steps,
        functions: &functions,
        resolver,
        call_timeout: None,
    };
    pipeline.run(observed(), None).await
}

/// The attack round's H4: 20,000 "all ConfigMaps" selectors over a
/// 190 KB file took render past 4 GB before any limit applied. The number
/// of requirements is bounded before anything is resolved...
#[tokio::test]
async fn a_function_asking_for_too_many_requirements_is_refused() {
    let resolver = Everything::new(1, 10);
    let err = run_against(&[asking_for_everything(1_001)], &resolver)
        .await
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "cannot run pipeline step \"greedy\": it asks for 1001 requirements; \
         xfn resolves at most 1000 for one call"
    );
    // ...and up to the bound they resolve as before.
    let resolver = Everything::new(2, 10);
    let out = run_against(&[asking_for_everything(1_000)], &resolver).await;
    assert!(out.is_ok(), "{out:?}");
}

/// ...and so are the bytes they resolve to, while they are resolved.
#[tokio::test]
async fn requirements_resolving_to_too_many_bytes_are_refused() {
    // 40 selectors, each of 2,000 ConfigMaps of 1 KiB: 80 MB.
    let resolver = Everything::new(2_000, 1024);
    let err = run_against(&[asking_for_everything(40)], &resolver)
        .await
        .expect_err("refused");
    assert!(
        err.to_string().contains(
            "the resources its requirements match pass 67108864 bytes (64 MiB), \
             the most xfn sends in one call"
        ),
        "{err}"
    );
    // 10 of them (20 MB) are sent.
    let out = run_against(&[asking_for_everything(10)], &resolver).await;
    assert!(out.is_ok(), "{out:?}");
}

/// Functions of the same component share one compiled copy while any of
/// them lives; each still answers as itself, and a component no function
/// holds any more is not kept.
#[tokio::test]
async fn functions_of_one_component_share_its_compiled_code() {
    let rt = runtime(HostConfig::default());
    let a = load(&rt, "scripted-a", "xfn_test_scripted");
    let b = load(&rt, "scripted-b", "xfn_test_scripted");
    assert_eq!(rt.loaded_components(), 1);
    let hello = load(&rt, "hello", "hello");
    assert_eq!(rt.loaded_components(), 2);

    let functions = Functions::from([
        ("scripted-a".to_owned(), a as Arc<dyn Function>),
        ("scripted-b".to_owned(), b as Arc<dyn Function>),
    ]);
    for name in ["scripted-a", "scripted-b"] {
        let steps = [Step {
            function: name.into(),
            ..step(
                name,
                json!({"response": {"results": [{"severity": "SEVERITY_NORMAL", "message": name}]}}),
            )
        }];
        let pipeline = Pipeline {
            steps: &steps,
            functions: &functions,
            resolver: &ConfigMaps(Vec::new()),
            call_timeout: None,
        };
        let out = pipeline.run(observed(), None).await.expect("runs");
        let seen: Vec<(&str, &str)> = out
            .results
            .iter()
            .map(|r| (r.step.as_str(), r.result.message.as_str()))
            .collect();
        assert_eq!(seen, [(name, name)]);
    }

    drop(functions);
    assert_eq!(rt.loaded_components(), 1, "hello is still held");
    drop(hello);
    assert_eq!(rt.loaded_components(), 0);
    // Loaded again, it is compiled again and works.
    let again = load(&rt, "scripted-c", "xfn_test_scripted");
    assert_eq!(rt.loaded_components(), 1);
    drop(again);
}
