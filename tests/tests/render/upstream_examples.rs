//! Upstream's own example directories, rendered through xfn's built-in
//! functions: each case under `tests/render/upstream-examples/<function>/`
//! runs the real `xfn render` in the example's directory of the corpus
//! (`../shared/corpus`, named by the case's `corpus` file), with the flags
//! the example's README gives `crossplane render`, and compares stdout with
//! `expected.yaml` byte for byte (or stderr with `expected-error.txt`).
//! The expected documents are derived from the examples' inputs by
//! `tests/render/upstream_examples.py`, not recorded from xfn. Skipped, with
//! a message, where the corpus is absent.

use std::path::{Path, PathBuf};

use xfn_tests::golden;

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("render/upstream-examples")
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Every case directory: `<function>/<example>`, sorted.
fn case_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for function in std::fs::read_dir(cases_dir()).expect("upstream-examples directory") {
        let function = function.expect("entry").path();
        if !function.is_dir() {
            continue;
        }
        for example in std::fs::read_dir(&function).expect("function directory") {
            let example = example.expect("entry").path();
            if example.join("args").is_file() {
                dirs.push(example);
            }
        }
    }
    dirs.sort();
    dirs
}

/// Checks one case in the corpus directory its `corpus` file names.
fn check(case: &Path, corpus: &Path) -> Result<(), String> {
    let label = case
        .strip_prefix(cases_dir())
        .unwrap_or(case)
        .display()
        .to_string();
    let relative = std::fs::read_to_string(case.join("corpus"))
        .map_err(|e| format!("{label}: no corpus file: {e}"))?;
    let run_dir = corpus.join(relative.trim());
    if !run_dir.is_dir() {
        return Err(format!(
            "{label}: no example directory {}",
            run_dir.display()
        ));
    }
    golden::check_case_in(case, &run_dir).map_err(|e| format!("{label}: {e}"))
}

#[test]
fn every_upstream_example_renders_as_derived() {
    let corpus = corpus_dir();
    if !corpus.is_dir() {
        eprintln!(
            "SKIPPED: no corpus at {} (upstream's example directories are read from there)",
            corpus.display()
        );
        return;
    }
    let dirs = case_dirs();
    assert!(dirs.len() >= 38, "found only {} cases", dirs.len());
    golden::check_in_parallel(&dirs, "upstream examples", |d| check(d, &corpus));
}
