//! Runs every fixture in `tests/fixtures/*.json` through the function
//! natively. The format is described in `tests/fixtures/README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use xfn_sdk::{Ready, Request, Response, Severity};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    description: String,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    request: Request,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    ready: BTreeMap<String, Ready>,
    #[serde(default)]
    results: Vec<ExpectedResult>,
    #[serde(default)]
    ttl: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectedResult {
    severity: Severity,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    message_starts_with: Option<String>,
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
}

/// Parses `"<seconds>s"` as protojson writes a duration.
fn parse_ttl(text: &str) -> Duration {
    let seconds: f64 = text
        .strip_suffix('s')
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad ttl {text:?} in fixture: want e.g. \"60s\""));
    Duration::from_secs_f64(seconds)
}

/// Checks `rsp` against the fixture; returns every mismatch.
fn check(fixture: &Fixture, rsp: &Response) -> Vec<String> {
    let mut problems = Vec::new();
    let req = &fixture.request;
    let expect = &fixture.expect;

    // Readiness of exactly the expected desired resources.
    let desired = rsp.desired.clone().unwrap_or_default();
    let got: BTreeMap<String, Ready> = desired
        .resources
        .iter()
        .map(|(k, v)| (k.clone(), v.ready))
        .collect();
    if got != expect.ready {
        problems.push(format!("readiness: want {:?}, got {got:?}", expect.ready));
    }

    // Everything but readiness passes through.
    for (name, before) in req.desired_composed() {
        match desired.resources.get(name) {
            Some(after)
                if after.resource == before.resource
                    && after.connection_details == before.connection_details => {}
            Some(_) => problems.push(format!(
                "desired resource {name:?} changed beyond its readiness"
            )),
            None => problems.push(format!("desired resource {name:?} was dropped")),
        }
    }
    if desired.composite.as_ref() != req.desired_composite() {
        problems.push("the desired composite changed".to_owned());
    }
    if rsp.context != req.context {
        problems.push("the context changed".to_owned());
    }
    if !rsp.conditions.is_empty() || rsp.requirements.is_some() || rsp.output.is_some() {
        problems.push("unexpected conditions, requirements or output".to_owned());
    }

    // Meta.
    let meta = rsp.meta.clone().unwrap_or_default();
    if meta.tag != req.tag() {
        problems.push(format!("tag: want {:?}, got {:?}", req.tag(), meta.tag));
    }
    let want_ttl = parse_ttl(expect.ttl.as_deref().unwrap_or("60s"));
    if meta.ttl != Some(want_ttl) {
        problems.push(format!("ttl: want {want_ttl:?}, got {:?}", meta.ttl));
    }

    // Results.
    if rsp.results.len() != expect.results.len() {
        problems.push(format!(
            "results: want {:?}, got {:?}",
            expect.results, rsp.results
        ));
    } else {
        for (want, got) in expect.results.iter().zip(&rsp.results) {
            let message_ok = want.message.as_ref().is_none_or(|m| *m == got.message)
                && want
                    .message_starts_with
                    .as_ref()
                    .is_none_or(|p| got.message.starts_with(p.as_str()));
            if want.severity != got.severity || !message_ok {
                problems.push(format!("result: want {want:?}, got {got:?}"));
            }
        }
    }
    problems
}

#[test]
fn fixtures_pass() {
    let paths = fixtures();
    assert!(!paths.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    for path in &paths {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let fixture: Fixture =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rsp = function_auto_ready::run(&fixture.request);
        let problems = check(&fixture, &rsp);
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({}):\n  {}",
                path.display(),
                fixture.description,
                problems.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

#[test]
fn fixtures_round_trip_through_json() {
    // The wasm component sees the request as JSON: make sure nothing in a
    // fixture depends on how it was parsed.
    for path in fixtures() {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let fixture: Fixture =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json = serde_json::to_string(&fixture.request)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again: Request =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            function_auto_ready::run(&again),
            function_auto_ready::run(&fixture.request),
            "{}",
            path.display()
        );
    }
}
