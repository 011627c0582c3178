//! Every inline function-kcl step of the corpus's Compositions
//! (`../shared/corpus`), run through the function natively with the
//! Composition's example XR as the observed XR: the step must give desired
//! resources, or fail only in the program (`failed to run kcl function
//! pipelines`, as the reference KCL does too for these programs: the
//! differential test compares them) or with a result naming an
//! unsupported feature. Prints the counts.

use std::path::Path;

use function_kcl::FunctionKcl;
use serde_json::{Value as J, json};
use xfn_sdk::{Function, Request, Severity};

#[test]
fn corpus_steps_render_or_fail_in_the_program() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let Ok(index) = std::fs::read_to_string(root.join("index.json")) else {
        eprintln!("corpus test SKIPPED: ../shared/corpus is absent");
        return;
    };
    let index: J = serde_json::from_str(&index).expect("index.json");
    let (mut rendered, mut program_failed, mut unsupported, mut resources) = (0, 0, 0, 0);
    let mut other = Vec::new();
    for e in index["entries"].as_array().into_iter().flatten() {
        if e["cat"] != "user" {
            continue;
        }
        let steps: Vec<&str> = e["fns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| {
                f["canon"] == "function-kcl"
                    && f["source"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("kcl:inline"))
            })
            .filter_map(|f| f["step"].as_str())
            .collect();
        if steps.is_empty() {
            continue;
        }
        let dir = root.join(e["dir"].as_str().unwrap_or_default());
        let Ok(text) = std::fs::read_to_string(dir.join(e["file"].as_str().unwrap_or_default()))
        else {
            continue;
        };
        let comp = serde_yaml_ng::Deserializer::from_str(&text)
            .filter_map(|d| <J as serde::Deserialize>::deserialize(d).ok())
            .find(|d| {
                d["kind"] == "Composition"
                    && (e["name"].is_null() || d["metadata"]["name"] == e["name"])
            });
        let Some(comp) = comp else { continue };
        let xr = e["xr"]
            .as_str()
            .and_then(|x| std::fs::read_to_string(dir.join(x)).ok())
            .and_then(|t| serde_yaml_ng::Deserializer::from_str(&t).filter_map(|d| <J as serde::Deserialize>::deserialize(d).ok()).find(|d| d.is_object()))
            .unwrap_or_else(|| json!({"apiVersion": e["type"]["apiVersion"], "kind": e["type"]["kind"], "metadata": {"name": "example"}, "spec": {}}));
        for step in comp["spec"]["pipeline"].as_array().into_iter().flatten() {
            if !step["step"].as_str().is_some_and(|s| steps.contains(&s)) {
                continue;
            }
            let req: Request = serde_json::from_value(json!({
                "meta": {"tag": "corpus"},
                "input": step["input"],
                "observed": {"composite": {"resource": xr}},
            }))
            .expect("request");
            let name = format!(
                "{}/{}#{}",
                e["dir"].as_str().unwrap_or_default(),
                e["file"].as_str().unwrap_or_default(),
                step["step"].as_str().unwrap_or_default()
            );
            let rsp = FunctionKcl::run(&req).expect("the function runs");
            match rsp.results.iter().find(|r| r.severity == Severity::Fatal) {
                None => {
                    rendered += 1;
                    resources += rsp.desired.as_ref().map(|d| d.resources.len()).unwrap_or(0);
                }
                Some(r)
                    if r.message
                        .starts_with("failed to run kcl function pipelines: unsupported")
                        || r.message.starts_with("unsupported") =>
                {
                    unsupported += 1;
                    eprintln!("  unsupported: {name}: {}", r.message);
                }
                Some(r)
                    if r.message
                        .starts_with("failed to run kcl function pipelines: ") =>
                {
                    program_failed += 1;
                    eprintln!("  the program fails: {name}: {}", r.message);
                }
                Some(r) => other.push(format!("{name}: {}", r.message)),
            }
        }
    }
    eprintln!(
        "corpus (real users): {rendered} steps rendered ({resources} composed resources), {program_failed} fail in the program, {unsupported} unsupported, {} other failures",
        other.len()
    );
    assert!(
        other.is_empty(),
        "steps failing outside the program:\n{}",
        other.join("\n")
    );
}
