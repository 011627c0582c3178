//! function-auto-ready's fixtures, run through its real wasm component.

use std::path::PathBuf;

use xfn_runtime::HostConfig;
use xfn_tests::{differential, load, runtime};

#[test]
fn the_component_matches_the_native_function_on_every_fixture() {
    let rt = runtime(HostConfig::default());
    let component = load(&rt, "function-auto-ready", "function_auto_ready");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../functions/function-auto-ready/tests/fixtures");
    let (count, failures) = differential(&dir, &component, function_auto_ready::run);
    assert!(count >= 20, "only {count} fixtures");
    assert!(
        failures.is_empty(),
        "{} of {count} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
