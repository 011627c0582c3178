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
