//! Runs every fixture under `tests/fixtures/<area>/*.json` (format:
//! `functions/fixtures/README.md`), directly and through the WIT glue.

#[test]
fn fixtures_pass() {
    xfn_fixtures::assert_all::<function_environment_configs::EnvironmentConfigs>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures"
    ));
}
