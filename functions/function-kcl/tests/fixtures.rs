//! Runs every fixture under `tests/fixtures/*.json` through the function
//! natively: a request and the response function-kcl gives for it (see
//! `tests/fixtures/README.md`).

use std::path::Path;

use function_kcl::FunctionKcl;
use serde::Deserialize;
use serde_json::Value;
use xfn_sdk::{Function, Request};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    description: String,
    #[allow(dead_code)]
    source: String,
    request: Request,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    desired: Value,
    #[serde(default)]
    results: Vec<ExpectedResult>,
    #[serde(default)]
    conditions: Value,
    #[serde(default)]
    requirements: Value,
    #[serde(default)]
    context: Value,
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
    reason: Option<String>,
    #[serde(default)]
    target: Option<String>,
}

/// Numbers as doubles, as the protocol carries them.
fn norm(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(norm).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), norm(v))).collect()),
        other => other.clone(),
    }
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let fx: Fixture = serde_json::from_str(&text).map_err(|e| format!("bad fixture: {e}"))?;
    let rsp = FunctionKcl::run(&fx.request).map_err(|e| format!("function error: {e:?}"))?;
    let mut problems = Vec::new();
    let got_desired = serde_json::to_value(&rsp.desired).map_err(|e| e.to_string())?;
    if norm(&got_desired) != norm(&fx.expect.desired) {
        problems.push(format!(
            "desired:\n  got  {got_desired}\n  want {}",
            fx.expect.desired
        ));
    }
    let got_conditions = if rsp.conditions.is_empty() {
        Value::Null
    } else {
        serde_json::to_value(&rsp.conditions).map_err(|e| e.to_string())?
    };
    if got_conditions != fx.expect.conditions {
        problems.push(format!(
            "conditions:\n  got  {got_conditions}\n  want {}",
            fx.expect.conditions
        ));
    }
    let got_requirements = serde_json::to_value(&rsp.requirements).map_err(|e| e.to_string())?;
    if got_requirements != fx.expect.requirements {
        problems.push(format!(
            "requirements:\n  got  {got_requirements}\n  want {}",
            fx.expect.requirements
        ));
    }
    let got_context = serde_json::to_value(&rsp.context).map_err(|e| e.to_string())?;
    if norm(&got_context) != norm(&fx.expect.context) {
        problems.push(format!(
            "context:\n  got  {got_context}\n  want {}",
            fx.expect.context
        ));
    }
    if rsp.results.len() != fx.expect.results.len() {
        problems.push(format!(
            "results: got {:?}, want {} results",
            rsp.results,
            fx.expect.results.len()
        ));
    } else {
        for (got, want) in rsp.results.iter().zip(&fx.expect.results) {
            let sev = serde_json::to_value(got.severity).map_err(|e| e.to_string())?;
            let target = serde_json::to_value(got.target).map_err(|e| e.to_string())?;
            let ok = sev == want.severity
                && want.message.as_ref().is_none_or(|m| *m == got.message)
                && want
                    .message_starts_with
                    .as_ref()
                    .is_none_or(|m| got.message.starts_with(m.as_str()))
                && got.reason == want.reason
                && target == want.target.as_deref().unwrap_or("TARGET_COMPOSITE");
            if !ok {
                problems.push(format!("result: got {got:?}, want {want:?}"));
            }
        }
    }
    if rsp.meta.as_ref().map(|m| m.tag.as_str()) != Some(fx.request.tag()) {
        problems.push("the response's tag is not the request's".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{}", fx.description, problems.join("\n")))
    }
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut failed = Vec::new();
    for p in &paths {
        if let Err(e) = check(p) {
            failed.push(format!("{}: {e}", p.display()));
        }
    }
    eprintln!(
        "function-kcl fixtures: {} of {} pass",
        paths.len() - failed.len(),
        paths.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
