//! `xfn render` with a pipeline that mixes wasm steps and a conventional
//! gRPC function written with crossplane-function-sdk-python, called
//! through the Development runtime in plaintext and over mTLS.

use std::path::Path;

use crate::grpc_support::{Certs, PyFunction};
use serde_json::{Value, json};
use xfn_tests::run_xfn;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write input");
}

/// Renders wasm → Python → wasm, each step counting its call in the context.
fn render_mixed(python_annotations: &str) -> xfn_tests::Run {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "xr.yaml",
        "apiVersion: example.org/v1\nkind: XMixed\nmetadata:\n  name: mixed\n",
    );
    let step = |name: &str, function: &str| json!({"step": name, "functionRef": {"name": function}, "input": {"count": true}});
    let composition = json!({
        "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "metadata": {"name": "mixed"},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XMixed"}, "mode": "Pipeline",
                 "pipeline": [step("first", "function-scripted"), step("python", "function-python"), step("last", "function-scripted")]}
    });
    write(dir.path(), "composition.yaml", &composition.to_string());
    let scripted = xfn_tests::scripted_wasm();
    write(
        dir.path(),
        "functions.yaml",
        &format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-scripted\n  annotations:\n    render.crossplane.io/runtime-wasm-module: {}\n---\n\
             apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-python\n  annotations:\n    render.crossplane.io/runtime: Development\n{python_annotations}",
            scripted.display()
        ),
    );
    let args = [
        "render",
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "-r",
        "-c",
    ]
    .map(String::from);
    run_xfn(dir.path(), &args)
}

fn documents(stdout: &str) -> Vec<Value> {
    stdout
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_yaml_ng::from_str(d).expect("YAML"))
        .collect()
}

fn check_mixed(run: &xfn_tests::Run) {
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = documents(&run.stdout);
    let context = docs.last().expect("a context document");
    assert_eq!(
        context["fields"]["xfn.test/calls"],
        json!(3),
        "wasm, python and wasm each ran once: {context}"
    );
    let composed: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "ConfigMap").collect();
    assert_eq!(
        composed.len(),
        1,
        "the Python function's ConfigMap: {docs:?}"
    );
    assert_eq!(
        composed[0]["metadata"]["annotations"]["crossplane.io/composition-resource-name"],
        "from-python"
    );
    let results: Vec<(&str, &str)> = docs
        .iter()
        .filter(|d| d["kind"] == "Result")
        .map(|d| {
            (
                d["step"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(results, [("python", "hello from python")]);
}

#[test]
fn a_python_sdk_function_runs_between_wasm_steps_in_plaintext() {
    let python = PyFunction::start(&["--insecure"]);
    let run = render_mixed(&format!(
        "    render.crossplane.io/runtime-development-target: {}\n",
        python.target()
    ));
    check_mixed(&run);
}

#[test]
fn a_python_sdk_function_runs_between_wasm_steps_over_mtls() {
    let certs = Certs::for_functions(&["function-python"]);
    let python = PyFunction::start(&["--tls-certs-dir", certs.server.to_str().expect("utf-8")]);
    let run = render_mixed(&format!(
        "    render.crossplane.io/runtime-development-target: {}\n    render.crossplane.io/runtime-development-tls-certs-dir: {}\n    render.crossplane.io/runtime-development-tls-server-name: function-python.crossplane-system\n",
        python.target(),
        certs.client.display()
    ));
    check_mixed(&run);
}

#[test]
fn an_unreachable_development_function_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let run = render_mixed(&format!(
        "    render.crossplane.io/runtime-development-target: 127.0.0.1:{port}\n"
    ));
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("cannot run pipeline step \"python\"")
            && run.stderr.contains(&format!("127.0.0.1:{port}")),
        "{}",
        run.stderr
    );
}
