//! Upstream's example directories (v0.12.2 `example/`, read from the corpus
//! in `../shared/corpus`; skipped when it is absent): each Composition's
//! `GoTemplate` step runs on a request whose observed composite is the
//! example's `xr.yaml`, as the first step of a pipeline (no desired state
//! yet). The expected responses were derived by hand from the templates and
//! XRs, following upstream's code.

use std::path::{Path, PathBuf};

use function_go_templating::render::SeededEnv;
use serde_json::{Value, json};
use xfn_sdk::Request;

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/crossplane-contrib__function-go-templating/example")
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .filter_map(|d| <serde_yaml_ng::Value as serde::Deserialize>::deserialize(d).ok())
        .filter_map(|v| serde_json::to_value(v).ok())
        .filter(|v| !v.is_null())
        .collect()
}

fn go_template_input(composition: &Value) -> Value {
    composition["spec"]["pipeline"]
        .as_array()
        .and_then(|steps| steps.iter().find(|s| s["input"]["kind"] == "GoTemplate"))
        .map(|s| s["input"].clone())
        .expect("a GoTemplate step")
}

fn run_example(name: &str) -> Option<Value> {
    let dir = example_dir().join(name);
    if !dir.is_dir() {
        eprintln!("SKIPPED: no upstream example at {}", dir.display());
        return None;
    }
    let composition = yaml_docs(&dir.join("composition.yaml")).remove(0);
    let xr = yaml_docs(&dir.join("xr.yaml")).remove(0);
    let req: Request = serde_json::from_value(json!({
        "meta": {"tag": name},
        "input": go_template_input(&composition),
        "observed": {"composite": {"resource": xr}},
    }))
    .expect("request");
    let rsp = function_go_templating::run_with(&req, &mut SeededEnv::new(1, 0));
    Some(serde_json::to_value(&rsp).expect("response"))
}

fn check(name: &str, desired: Value) {
    let Some(rsp) = run_example(name) else { return };
    assert_eq!(rsp.get("results"), None, "{name}: {rsp}");
    assert_eq!(rsp["desired"], desired, "{name}");
}

#[test]
fn to_yaml() {
    check(
        "functions/toYaml",
        json!({"composite": {"resource": {"status": {"dummy": {
            "list": ["abc", "def"], "scalar1": true, "scalar2": "text", "scalar3": 123
        }}}}}),
    );
}

#[test]
fn from_yaml() {
    check(
        "functions/fromYaml",
        json!({"composite": {"resource": {"status": {"dummy": "value2"}}}}),
    );
}

#[test]
fn get_composite_resource() {
    check(
        "functions/getCompositeResource",
        json!({
            "composite": {"resource": {}},
            "resources": {"flexserver": {
                "resource": {
                    "apiVersion": "dbforpostgresql.azure.upbound.io/v1beta1",
                    "kind": "FlexibleServer",
                    "metadata": {"annotations": {}},
                    "spec": {"forProvider": {"adminLogin": "admin", "location": "eastus"}}
                },
                "ready": "READY_FALSE"
            }}
        }),
    );
}

#[test]
fn include() {
    let labels = json!({"some-text": "value1", "other-text": "value2"});
    // test1 labels through include | nindent, test2 through template with
    // indentation written into the defined templates: the same objects.
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment", "annotations": {}, "labels": labels},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{
                    "name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]
                }]}
            }
        }
    });
    check(
        "functions/include",
        json!({
            "composite": {"resource": {}},
            "resources": {"test1": {"resource": deployment}, "test2": {"resource": deployment}}
        }),
    );
}

#[test]
fn get_resource_condition() {
    // yaml.v3 marshals xpv1.Condition by its lower-cased field names in
    // declaration order, the time as RFC 3339; conditions not found are
    // Unknown with the zero time.
    let unknown = |t: &str| {
        json!({"type": t, "status": "Unknown", "lasttransitiontime": "0001-01-01T00:00:00Z",
               "reason": "", "message": "", "observedgeneration": 0})
    };
    check(
        "functions/getResourceCondition",
        json!({"composite": {"resource": {"status": {
            "compositeCondition": {"type": "Ready", "status": "True",
                "lasttransitiontime": "2023-11-03T09:07:31Z", "reason": "xr foo", "message": "",
                "observedgeneration": 0},
            "compositeConditionNotFound": unknown("Other"),
            "composedCondition": unknown("Ready"),
            "pipeline": unknown("Ready"),
            "nonResource": unknown("Ready")
        }}}}),
    );
}
