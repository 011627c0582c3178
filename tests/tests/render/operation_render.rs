//! Golden-file tests of `xfn operation render`: every case directory under
//! `tests/render/operation-cases/` (written by `operation_cases.py`) runs
//! the real binary, with the scripted test function or the first-party
//! function-annotate, in the engine and the classic output shapes.

use std::path::PathBuf;

use xfn_tests::{golden, run_xfn};

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("render/operation-cases")
}

#[test]
fn every_operation_golden_case_matches() {
    golden::check_all(&cases_dir(), 19);
}

/// The example in the README renders offline, with the built-in function.
#[test]
fn the_watch_operation_example_renders_with_the_built_in_function() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/operation");
    let args: Vec<String> = [
        "operation",
        "render",
        "watchoperation.yaml",
        "functions.yaml",
        "-w",
        "watched.yaml",
        "--compat",
        "engine",
    ]
    .map(String::from)
    .to_vec();
    let run = run_xfn(&dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("example.org/seen-mode: blue")
            && run
                .stdout
                .contains("requirementName: ops.crossplane.io/watched-resource"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("as the built-in wasm function function-annotate"),
        "{}",
        run.stderr
    );
}

/// A one-off Operation finds its ConfigMaps by label, namespace included.
#[test]
fn the_operation_example_labels_what_its_requirement_selects() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/operation");
    let args: Vec<String> = [
        "operation",
        "render",
        "operation.yaml",
        "functions.yaml",
        "-e",
        "required.yaml",
    ]
    .map(String::from)
    .to_vec();
    let run = run_xfn(&dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for name in ["alerts", "dashboards"] {
        assert!(
            run.stdout.contains(&format!("  name: {name}\n")),
            "{name} is labelled: {}",
            run.stdout
        );
    }
    assert!(!run.stdout.contains("unrelated"), "{}", run.stdout);
    assert!(
        run.stdout.contains("example.org/owner: platform-team"),
        "{}",
        run.stdout
    );
}
