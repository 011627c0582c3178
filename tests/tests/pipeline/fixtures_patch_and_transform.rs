//! function-patch-and-transform's fixtures, run through its real wasm
//! component: every response must equal the native function's, whose
//! fixture expectations the function's own tests check.

use std::path::PathBuf;

use xfn_runtime::HostConfig;
use xfn_tests::{differential, load, runtime};

#[test]
fn the_component_matches_the_native_function_on_every_fixture() {
    let rt = runtime(HostConfig::default());
    let component = load(
        &rt,
        "function-patch-and-transform",
        "function_patch_and_transform",
    );
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../functions/function-patch-and-transform/tests/fixtures");
    let (count, failures) = differential(&dir, &component, function_patch_and_transform::run);
    assert!(count >= 50, "only {count} fixtures");
    assert!(
        failures.is_empty(),
        "{} of {count} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
