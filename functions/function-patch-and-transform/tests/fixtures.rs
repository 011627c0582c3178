//! Runs every fixture under `tests/fixtures/<area>/*.json` through the
//! function natively. The format is described in `tests/fixtures/README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Number, Value};
use xfn_sdk::{Request, Response};

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
    /// The response's desired state (protojson `State`), or null for none.
    desired: Value,
    /// The response's context, or null for none.
    context: Value,
    #[serde(default)]
    results: Vec<ExpectedResult>,
    #[serde(default)]
    ttl: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectedResult {
    severity: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    message_starts_with: Option<String>,
    #[serde(default)]
    target: Option<String>,
}

fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut paths,
    );
    paths.sort();
    paths
}

fn load(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every number as a double, as the protocol carries them.
fn canon_numbers(v: &Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(canon_numbers).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), canon_numbers(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn canon_resource(r: &Value) -> Value {
    let get = |k: &str| r.get(k).cloned();
    let mut out = Map::new();
    out.insert(
        "resource".into(),
        canon_numbers(&get("resource").unwrap_or(Value::Object(Map::new()))),
    );
    out.insert(
        "connectionDetails".into(),
        get("connectionDetails").unwrap_or(Value::Object(Map::new())),
    );
    out.insert(
        "ready".into(),
        get("ready").unwrap_or(Value::String("READY_UNSPECIFIED".into())),
    );
    Value::Object(out)
}

/// A protojson `State` with defaults filled in and numbers as doubles.
fn canon_state(s: &Value) -> Value {
    if s.is_null() {
        return Value::Null;
    }
    let mut out = Map::new();
    if let Some(c) = s.get("composite") {
        out.insert("composite".into(), canon_resource(c));
    }
    let resources: Map<String, Value> = s
        .get("resources")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), canon_resource(v)))
                .collect()
        })
        .unwrap_or_default();
    out.insert("resources".into(), Value::Object(resources));
    Value::Object(out)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn parse_ttl(text: &str) -> Duration {
    let seconds: f64 = text
        .strip_suffix('s')
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad ttl {text:?} in fixture"));
    Duration::from_secs_f64(seconds)
}

/// Checks `rsp` against the fixture; returns every mismatch.
fn check(fixture: &Fixture, rsp: &Response) -> Vec<String> {
    let mut problems = Vec::new();
    let expect = &fixture.expect;

    let got_desired = canon_state(&serde_json::to_value(&rsp.desired).unwrap_or(Value::Null));
    let want_desired = canon_state(&expect.desired);
    if got_desired != want_desired {
        problems.push(format!(
            "desired:\n want {}\n got  {}",
            pretty(&want_desired),
            pretty(&got_desired)
        ));
    }

    let got_context = canon_numbers(&serde_json::to_value(&rsp.context).unwrap_or(Value::Null));
    let want_context = canon_numbers(&expect.context);
    if got_context != want_context {
        problems.push(format!(
            "context:\n want {}\n got  {}",
            pretty(&want_context),
            pretty(&got_context)
        ));
    }

    let results = serde_json::to_value(&rsp.results).unwrap_or(Value::Null);
    let results = results.as_array().cloned().unwrap_or_default();
    if results.len() != expect.results.len() {
        problems.push(format!(
            "results: want {:#?}\n got {}",
            expect.results,
            pretty(&Value::Array(results.clone()))
        ));
    } else {
        for (want, got) in expect.results.iter().zip(&results) {
            let field = |k: &str| {
                got.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let message = field("message");
            let ok = field("severity") == want.severity
                && field("target") == want.target.as_deref().unwrap_or("TARGET_COMPOSITE")
                && want.message.as_ref().is_none_or(|m| *m == message)
                && want
                    .message_starts_with
                    .as_ref()
                    .is_none_or(|p| message.starts_with(p.as_str()))
                && got.get("reason").is_none();
            if !ok {
                problems.push(format!("result: want {want:?}\n got {}", pretty(got)));
            }
        }
    }

    let meta = rsp.meta.clone().unwrap_or_default();
    if meta.tag != fixture.request.tag() {
        problems.push(format!(
            "tag: want {:?}, got {:?}",
            fixture.request.tag(),
            meta.tag
        ));
    }
    let want_ttl = parse_ttl(expect.ttl.as_deref().unwrap_or("60s"));
    if meta.ttl != Some(want_ttl) {
        problems.push(format!("ttl: want {want_ttl:?}, got {:?}", meta.ttl));
    }
    if !rsp.conditions.is_empty() || rsp.requirements.is_some() || rsp.output.is_some() {
        problems.push("unexpected conditions, requirements or output".to_owned());
    }
    problems
}

#[test]
fn fixtures_pass() {
    let paths = fixtures();
    assert!(!paths.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    let mut per_area: BTreeMap<String, usize> = BTreeMap::new();
    for path in &paths {
        let area = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        *per_area.entry(area).or_default() += 1;
        let fixture = load(path);
        let rsp = function_patch_and_transform::run(&fixture.request);
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
    eprintln!("fixtures per area: {per_area:?}");
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
    // The wasm component sees the request as JSON text: nothing in a fixture
    // may depend on how it was parsed.
    for path in fixtures() {
        let fixture = load(&path);
        let json = serde_json::to_string(&fixture.request)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again: Request =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            function_patch_and_transform::run(&again),
            function_patch_and_transform::run(&fixture.request),
            "{}",
            path.display()
        );
    }
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
        target: None,
    });
    assert_eq!(check(&fixture, &rsp).len(), 2);
}
