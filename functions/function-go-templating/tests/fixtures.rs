//! Runs every fixture under `tests/fixtures/<area>/*.json` through the
//! function natively: a request and the response upstream gives for it
//! (see `tests/fixtures/README.md`).

use std::path::{Path, PathBuf};

use function_go_templating::render::SeededEnv;
use serde::Deserialize;
use serde_json::{Number, Value, json};
use xfn_sdk::Request;

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
    desired: Value,
    context: Value,
    #[serde(default)]
    results: Vec<Value>,
    #[serde(default)]
    conditions: Vec<Value>,
    #[serde(default)]
    requirements: Option<Value>,
}

fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("fixtures dir")
            .filter_map(Result::ok)
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
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

/// Every number as a double, as the protocol carries them.
fn canon(v: &Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(canon).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), canon(v))).collect()),
        other => other.clone(),
    }
}

#[test]
fn fixtures_match_upstream() {
    let paths = fixtures();
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("read fixture");
        let fx: Fixture =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rsp = function_go_templating::run_with(&fx.request, &mut SeededEnv::new(1, 0));
        let got = serde_json::to_value(&rsp).expect("response JSON");
        let field = |k: &str| got.get(k).cloned().unwrap_or(Value::Null);
        let mut problems = Vec::new();
        if canon(&field("desired")) != canon(&fx.expect.desired) {
            problems.push(format!(
                "desired:\n  want {}\n  got  {}",
                fx.expect.desired,
                field("desired")
            ));
        }
        if canon(&field("context")) != canon(&fx.expect.context) {
            problems.push(format!(
                "context:\n  want {}\n  got  {}",
                fx.expect.context,
                field("context")
            ));
        }
        let results = field("results");
        let want_results = Value::Array(fx.expect.results.clone());
        if (results.is_null() && !fx.expect.results.is_empty())
            || (!results.is_null() && results != want_results)
        {
            problems.push(format!("results:\n  want {want_results}\n  got  {results}"));
        }
        let conditions = field("conditions");
        let want_conditions = Value::Array(fx.expect.conditions.clone());
        if (conditions.is_null() && !fx.expect.conditions.is_empty())
            || (!conditions.is_null() && conditions != want_conditions)
        {
            problems.push(format!(
                "conditions:\n  want {want_conditions}\n  got  {conditions}"
            ));
        }
        let req = field("requirements");
        let want_req = fx.expect.requirements.clone().unwrap_or(Value::Null);
        if req != want_req {
            problems.push(format!("requirements:\n  want {want_req}\n  got  {req}"));
        }
        let tag = fx
            .request
            .meta
            .as_ref()
            .map(|m| m.tag.clone())
            .unwrap_or_default();
        if got["meta"] != json!({"tag": tag, "ttl": "60s"}) && got["meta"] != json!({"ttl": "60s"})
        {
            problems.push(format!("meta: {}", got["meta"]));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({}):\n{}",
                path.display(),
                fx.description,
                problems.join("\n")
            ));
        }
    }
    eprintln!("fixtures: {} run, {} failed", paths.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
