//! The `FileSystem` source in xfn: the templates come from the input, where
//! `xfn render` puts what it read on its host; without them the function
//! refuses, naming the directory and what to do.

use function_go_templating::function::{HOST_READ_ERROR_KEY, HOST_TEMPLATES_KEY};
use function_go_templating::render::SeededEnv;
use serde_json::{Value, json};
use xfn_sdk::Request;

fn run(file_system: Value) -> Value {
    let request: Request = serde_json::from_value(json!({
        "input": {
            "apiVersion": "gotemplating.fn.crossplane.io/v1beta1",
            "kind": "GoTemplate",
            "source": "FileSystem",
            "fileSystem": file_system,
        },
        "observed": {"composite": {"resource": {
            "apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "cool-xr"}}}},
    }))
    .expect("a request");
    let response = function_go_templating::run_with(&request, &mut SeededEnv::new(1, 0));
    serde_json::to_value(&response).expect("response JSON")
}

fn fatal(response: &Value) -> &str {
    let results = response["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{response}");
    assert_eq!(results[0]["severity"], "SEVERITY_FATAL");
    results[0]["message"].as_str().unwrap_or_default()
}

#[test]
fn without_the_hosts_templates_it_refuses_naming_the_directory() {
    let response = run(json!({"dirPath": "/templates"}));
    let message = fatal(&response);
    assert!(
        message.starts_with(
            "invalid function input: cannot read tmpl from the folder {/templates}: \
             xfn's function-go-templating runs in a wasm sandbox with no file system and cannot read \
             the directory /templates;"
        ),
        "{message}"
    );
    assert!(message.contains("source: Inline"), "{message}");
}

#[test]
fn the_read_error_is_wrapped_as_upstream_wraps_it() {
    let response = run(json!({
        "dirPath": "./templates/",
        HOST_READ_ERROR_KEY: "open templates: no such file or directory",
        HOST_TEMPLATES_KEY: "ignored when there is an error",
    }));
    assert_eq!(
        fatal(&response),
        "invalid function input: cannot read tmpl from the folder {./templates/}: \
         open templates: no such file or directory"
    );
}

#[test]
fn templates_see_the_input_without_what_render_added() {
    let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: seen\n  annotations:\n    \
                    gotemplating.fn.crossplane.io/composition-resource-name: seen\ndata:\n  \
                    fileSystem: {{ .input.fileSystem | toJson | quote }}\n---\n";
    let response = run(json!({"dirPath": "/templates", HOST_TEMPLATES_KEY: template}));
    assert!(response["results"].is_null(), "{response}");
    let seen = &response["desired"]["resources"]["seen"]["resource"]["data"]["fileSystem"];
    assert_eq!(seen, &json!(r#"{"dirPath":"/templates"}"#));
}

#[test]
fn an_empty_directory_renders_nothing() {
    // Upstream's walk of an empty (or hidden) directory gives "", which
    // parses and renders to no documents.
    let response = run(json!({"dirPath": "/templates", HOST_TEMPLATES_KEY: ""}));
    assert!(response["results"].is_null(), "{response}");
    assert!(response["desired"]["resources"].is_null(), "{response}");
}
