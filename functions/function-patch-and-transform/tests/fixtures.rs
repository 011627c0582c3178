//! Runs every fixture under `tests/fixtures/<area>/*.json` through the
//! function, directly and through the WIT glue its component uses (the
//! format: `functions/fixtures/README.md`).

use std::path::Path;

use function_patch_and_transform::PatchAndTransform;
use serde_json::Value;
use xfn_fixtures::{ExpectedResult, check, load};

#[test]
fn fixtures_pass() {
    let per_area = xfn_fixtures::assert_all::<PatchAndTransform>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures"
    ));
    assert!(per_area.values().sum::<usize>() >= 50, "{per_area:?}");
}

#[test]
fn checker_catches_mismatches() {
    // The runner must not pass everything: tamper with a known fixture.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fn/patch-base-template.json");
    let mut fixture = load(&path);
    let rsp = function_patch_and_transform::run(&fixture.request);
    assert!(check(&fixture, &rsp).is_empty());

    fixture.expect.desired["resources"]["cool-resource"]["resource"]["spec"]["watchers"] =
        Value::from(31);
    assert_eq!(check(&fixture, &rsp).len(), 1);
    fixture.expect.desired["resources"]["cool-resource"]["resource"]["spec"]["watchers"] =
        Value::from(30.0);
    fixture.expect.desired["resources"]["cool-resource"]["ready"] = Value::from("READY_TRUE");
    assert_eq!(check(&fixture, &rsp).len(), 1);
    fixture.expect.desired["resources"]["cool-resource"]["ready"] =
        Value::from("READY_UNSPECIFIED");
    fixture.expect.context = Value::Null;
    fixture.expect.results.push(ExpectedResult {
        severity: "SEVERITY_WARNING".into(),
        message: Some("x".into()),
        message_starts_with: None,
        reason: None,
        target: None,
    });
    assert_eq!(check(&fixture, &rsp).len(), 2);
}
