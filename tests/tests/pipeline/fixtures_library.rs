//! The function library's fixtures (environment configs, extra resources,
//! sequencer, status transformer, CEL filter, CIDR, go-templating, KCL),
//! each run through the function's real wasm component: every response
//! must equal the native function's, whose fixture expectations the
//! function's own tests check.

use std::path::PathBuf;

use xfn_runtime::HostConfig;
use xfn_sdk::{Request, Response};
use xfn_tests::{differential, load, runtime};

/// Checks every fixture of `function` (crate directory `dir`, component
/// file `file`) through its component against `native`; at least `least`.
fn check(function: &str, file: &str, least: usize, native: impl Fn(&Request) -> Response) {
    let rt = runtime(HostConfig::default());
    let component = load(&rt, function, file);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../functions")
        .join(function)
        .join("tests/fixtures");
    let (count, failures) = differential(&dir, &component, native);
    assert!(count >= least, "{function}: only {count} fixtures");
    assert!(
        failures.is_empty(),
        "{function}: {} of {count} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A function whose `run` fails the call: its fixtures never do.
fn infallible(run: fn(&Request) -> Result<Response, String>) -> impl Fn(&Request) -> Response {
    move |request| run(request).expect("fixtures don't fail the call")
}

#[test]
fn environment_configs() {
    check(
        "function-environment-configs",
        "function_environment_configs",
        27,
        function_environment_configs::run,
    );
}

#[test]
fn extra_resources() {
    check(
        "function-extra-resources",
        "function_extra_resources",
        16,
        function_extra_resources::run,
    );
}

#[test]
fn sequencer() {
    check(
        "function-sequencer",
        "function_sequencer",
        38,
        infallible(function_sequencer::run),
    );
}

#[test]
fn status_transformer() {
    check(
        "function-status-transformer",
        "function_status_transformer",
        35,
        function_status_transformer::run,
    );
}

#[test]
fn cel_filter() {
    check(
        "function-cel-filter",
        "function_cel_filter",
        7,
        function_cel_filter::run,
    );
}

#[test]
fn cidr() {
    check(
        "function-cidr",
        "function_cidr",
        14,
        infallible(function_cidr::run),
    );
}

#[test]
fn go_templating() {
    check(
        "function-go-templating",
        "function_go_templating",
        42,
        function_go_templating::run,
    );
}

#[test]
fn kcl() {
    use xfn_sdk::Function as _;
    check("function-kcl", "function_kcl", 30, |request| {
        function_kcl::FunctionKcl::run(request).expect("fixtures don't fail the call")
    });
}
