//! The checks of a Composition's pipeline that `xfn validate` and
//! `xfn render` share, so the two agree on what a valid pipeline is.

use std::collections::HashSet;

use serde_json::Value;

/// A JSON type's name as Kubernetes validation messages print it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(path: &str, value: &Value, want: &str) -> String {
    format!(
        "{path}: Invalid type: expected {want}, got {}",
        type_name(value)
    )
}

/// The string at `key` of `object`: `Ok("")` if absent or null, an error
/// naming `path` and the expected type if it is not a string.
fn string_field<'a>(object: &'a Value, key: &str, path: &str) -> Result<&'a str, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(wrong_type(path, other, "a string")),
    }
}

/// Fields of step `i` of a pipeline that have the wrong type: the step
/// itself, `step`, `functionRef` and `functionRef.name`. Render refuses
/// these as validate does; a wrong `input` is [`input_problem`].
pub fn type_problems(i: usize, step: &Value) -> Vec<String> {
    let at = format!("spec.pipeline[{i}]");
    if !step.is_object() {
        return vec![wrong_type(&at, step, "an object")];
    }
    let mut problems = Vec::new();
    if let Err(e) = string_field(step, "step", &format!("{at}.step")) {
        problems.push(e);
    }
    match step.get("functionRef") {
        None | Some(Value::Null) => {}
        Some(reference @ Value::Object(_)) => {
            if let Err(e) = string_field(reference, "name", &format!("{at}.functionRef.name")) {
                problems.push(e);
            }
        }
        Some(other) => problems.push(wrong_type(&format!("{at}.functionRef"), other, "an object")),
    }
    problems
}

/// Step `i`'s `input`, if present, must be an object: render refuses
/// anything else when it runs the step (with Crossplane's message).
pub fn input_problem(i: usize, step: &Value) -> Option<String> {
    match step.get("input") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(wrong_type(
            &format!("spec.pipeline[{i}].input"),
            other,
            "an object",
        )),
    }
}

/// What is wrong with a Composition's pipeline, one message each: its
/// mode, an empty pipeline, each step's own problems, duplicate step names
/// and, given the `known` function names, unknown functions.
pub fn pipeline_problems(composition: &Value, known: Option<&HashSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    let mode = composition
        .pointer("/spec/mode")
        .and_then(Value::as_str)
        .unwrap_or("Pipeline");
    if mode != "Pipeline" {
        problems.push(format!(
            "spec.mode: Unsupported value: {mode:?}: supported values: \"Pipeline\""
        ));
        return problems;
    }
    let steps = match composition.pointer("/spec/pipeline") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(steps)) => steps.as_slice(),
        Some(other) => return vec![wrong_type("spec.pipeline", other, "an array")],
    };
    if steps.is_empty() {
        problems.push("spec.pipeline: Required value: an empty pipeline is invalid".to_owned());
    }
    let mut seen = HashSet::new();
    for (i, step) in steps.iter().enumerate() {
        let own = type_problems(i, step);
        let well_typed = own.is_empty();
        problems.extend(own);
        problems.extend(input_problem(i, step));
        if !well_typed {
            continue;
        }
        let name = step.get("step").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            problems.push(format!("spec.pipeline[{i}].step: Required value"));
        } else if !seen.insert(name) {
            problems.push(format!(
                "spec.pipeline[{i}].step: Duplicate value: {name:?}"
            ));
        }
        let function = step
            .pointer("/functionRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if function.is_empty() {
            problems.push(format!(
                "spec.pipeline[{i}].functionRef.name: Required value"
            ));
        } else if let Some(known) = known
            && !known.contains(function)
        {
            problems.push(format!(
                "spec.pipeline[{i}].functionRef.name: Not found: {function:?}"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::collections::HashSet;

    fn composition(pipeline: Value) -> Value {
        json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "metadata": {"name": "c"},
               "spec": {"mode": "Pipeline", "pipeline": pipeline}})
    }

    #[test]
    fn a_good_pipeline_has_no_problems() {
        let c = composition(
            json!([{"step": "a", "functionRef": {"name": "f"}}, {"step": "b", "functionRef": {"name": "g"}}]),
        );
        let known: HashSet<String> = ["f", "g"].map(String::from).into();
        assert!(pipeline_problems(&c, Some(&known)).is_empty());
        assert!(pipeline_problems(&c, None).is_empty());
    }

    #[test]
    fn an_empty_pipeline_is_invalid() {
        assert_eq!(
            pipeline_problems(&composition(json!([])), None),
            ["spec.pipeline: Required value: an empty pipeline is invalid"]
        );
    }

    #[test]
    fn duplicate_steps_and_unknown_functions_are_reported() {
        let c = composition(json!([
            {"step": "a", "functionRef": {"name": "f"}},
            {"step": "a", "functionRef": {"name": "missing"}},
            {"functionRef": {}}
        ]));
        let known: HashSet<String> = ["f"].map(String::from).into();
        assert_eq!(
            pipeline_problems(&c, Some(&known)),
            [
                "spec.pipeline[1].step: Duplicate value: \"a\"",
                "spec.pipeline[1].functionRef.name: Not found: \"missing\"",
                "spec.pipeline[2].step: Required value",
                "spec.pipeline[2].functionRef.name: Required value",
            ]
        );
    }

    #[test]
    fn a_mode_other_than_pipeline_is_reported() {
        let c = json!({"spec": {"mode": "Resources"}});
        assert_eq!(
            pipeline_problems(&c, None),
            ["spec.mode: Unsupported value: \"Resources\": supported values: \"Pipeline\""]
        );
    }
}
