//! The acceptance test: the Crossplane docs' "Test a composition" example
//! renders byte for byte as classic `crossplane render` prints it, offline,
//! with the function-patch-and-transform that ships with xfn.

use std::path::PathBuf;

use xfn_tests::run_xfn;

#[test]
fn the_docs_example_renders_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/docs");
    let want = std::fs::read_to_string(dir.join("expected-output.yaml")).expect("expected output");
    let args = ["render", "xr.yaml", "composition.yaml", "functions.yaml"].map(String::from);
    let run = run_xfn(&dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want);
    assert!(
        run.stderr
            .contains("as the built-in wasm function function-patch-and-transform"),
        "say which built-in ran: {}",
        run.stderr
    );
}

#[test]
fn a_resources_mode_composition_renders_as_a_patch_and_transform_pipeline() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/docs");
    let want = std::fs::read_to_string(dir.join("expected-output.yaml")).expect("expected output");
    let legacy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/resources-mode");
    let args = [
        "render".to_owned(),
        dir.join("xr.yaml").display().to_string(),
        "composition.yaml".to_owned(),
        "functions.yaml".to_owned(),
    ];
    let run = run_xfn(&legacy, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want);
    assert!(
        run.stderr.contains("uses the deprecated mode: Resources"),
        "{}",
        run.stderr
    );
}

#[test]
fn with_little_address_space_render_renders_the_same() {
    // A render allocates its few instances as its calls need them (no
    // pool), so an 8 GiB cap on address space changes nothing.
    // (`xfn serve`'s fallback from its pool: `grpc::serve_lifecycle`.)
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/docs");
    let want = std::fs::read_to_string(dir.join("expected-output.yaml")).expect("expected output");
    let cache = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new("sh")
        .current_dir(&dir)
        .arg("-c")
        .arg("ulimit -v 8388608 && exec \"$0\" render xr.yaml composition.yaml functions.yaml")
        .arg(xfn_tests::xfn_bin())
        .env("XFN_CACHE_DIR", cache.path())
        .env_remove("XFN_LOG")
        .output()
        .expect("run xfn under ulimit");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), want);
    assert!(!stderr.contains("cannot reserve a pool"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no terminal colours in a log file: {stderr}"
    );
}
