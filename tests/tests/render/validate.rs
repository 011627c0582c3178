//! `xfn validate` as a user runs it.

use std::path::PathBuf;

use xfn_tests::run_xfn;

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("render/cases")
}

#[test]
fn a_valid_composition_passes() {
    let run = run_xfn(
        &cases().join("multi-step"),
        &["validate", "composition.yaml", "functions.yaml"].map(String::from),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Composition \"test-composition\" is valid\n");
}

#[test]
fn an_unknown_function_fails_with_its_step() {
    let run = run_xfn(
        &cases().join("err-unknown-function"),
        &["validate", "composition.yaml", "functions.yaml"].map(String::from),
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "xfn: error: Composition is invalid:\nspec.pipeline[0].functionRef.name: Not found: \"function-missing\"\n"
    );
}

/// Runs `xfn validate` on multi-step's Composition with `edit` applied.
fn validate_edited(edit: impl FnOnce(&mut serde_json::Value)) -> xfn_tests::Run {
    let from = cases().join("multi-step");
    let dir = tempfile::tempdir().expect("temp dir");
    let text = std::fs::read_to_string(from.join("composition.yaml")).expect("read");
    let mut composition: serde_json::Value =
        serde_json::from_str(text.trim_start_matches("---\n")).expect("JSON");
    edit(&mut composition);
    std::fs::write(dir.path().join("composition.yaml"), composition.to_string()).expect("write");
    std::fs::copy(
        from.join("functions.yaml"),
        dir.path().join("functions.yaml"),
    )
    .expect("copy");
    run_xfn(
        dir.path(),
        &["validate", "composition.yaml", "functions.yaml"].map(String::from),
    )
}

#[test]
fn an_input_that_is_not_an_object_fails_as_render_does() {
    let run = validate_edited(|c| c["spec"]["pipeline"][0]["input"] = "a string".into());
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "xfn: error: Composition is invalid:\nspec.pipeline[0].input: Invalid type: expected an object, got string\n"
    );
}

#[test]
fn a_step_name_or_function_ref_of_the_wrong_type_names_the_field_and_type() {
    let run = validate_edited(|c| {
        c["spec"]["pipeline"][0]["step"] = 5.into();
        c["spec"]["pipeline"][1]["functionRef"] = "x".into();
    });
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "xfn: error: Composition is invalid:\n\
         spec.pipeline[0].step: Invalid type: expected a string, got number\n\
         spec.pipeline[1].functionRef: Invalid type: expected an object, got string\n"
    );
}

#[test]
fn a_module_annotation_that_is_not_a_string_fails_as_render_does() {
    let from = cases().join("multi-step");
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        from.join("composition.yaml"),
        dir.path().join("composition.yaml"),
    )
    .expect("copy");
    let function = serde_json::json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
        "metadata": {"name": "function-scripted",
                     "annotations": {"render.crossplane.io/runtime-wasm-module": ["a.wasm"]}},
    });
    std::fs::write(dir.path().join("functions.yaml"), function.to_string()).expect("write");
    let run = run_xfn(
        dir.path(),
        &["validate", "composition.yaml", "functions.yaml"].map(String::from),
    );
    run.assert_failed_with("metadata.annotations[\"render.crossplane.io/runtime-wasm-module\"]: Invalid type: expected a string, got array");
}
