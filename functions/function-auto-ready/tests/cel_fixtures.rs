//! Runs the CEL health-check fixtures under `tests/cel-fixtures/` (format:
//! `functions/fixtures/README.md`) with the `CELHealthcheckCustomizations`
//! feature gate on, as upstream's `TestCELHealthcheckCustomizations` does.

use function_auto_ready::cel_checks::Features;

#[test]
fn cel_fixtures_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cel-fixtures");
    let paths = xfn_fixtures::fixture_paths(&dir);
    assert!(!paths.is_empty(), "no fixtures under {}", dir.display());
    let features = Features {
        cel_healthcheck_customizations: true,
    };
    let mut failures = Vec::new();
    for path in &paths {
        let fixture = xfn_fixtures::load(path);
        let problems = match function_auto_ready::run_with(&fixture.request, features) {
            Ok(rsp) => xfn_fixtures::check(&fixture, &rsp),
            Err(e) => vec![format!("the call failed: {e}")],
        };
        if !problems.is_empty() {
            failures.push(format!("{}: {}", path.display(), problems.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
