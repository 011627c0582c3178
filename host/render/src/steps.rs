//! Reads a Composition's pipeline into pipeline steps.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

use super::object::{name, str_at, value_at};
use super::{RenderError, gotemplating_fs, pipeline_check};
use xfn_runtime::pipeline::Step;
use xfn_runtime::protocol::{
    CredentialData, CredentialSource, Credentials, MatchLabels, ResourceMatch, ResourceSelector,
    SchemaSelector,
};

/// The steps of a Composition's `spec.pipeline`, with credentials taken
/// from `secrets` (matched by name and namespace).
pub fn from_composition(composition: &Value, secrets: &[Value]) -> Result<Vec<Step>, RenderError> {
    let pipeline = value_at(composition, &["spec", "pipeline"]).and_then(Value::as_array);
    pipeline
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, step)| {
            // The same checks as `xfn validate`.
            let problems = pipeline_check::type_problems(i, step);
            if !problems.is_empty() {
                return Err(RenderError::Invalid(format!(
                    "invalid Composition pipeline: {}",
                    problems.join("; ")
                )));
            }
            Ok(Step {
                name: str_at(step, &["step"]).to_owned(),
                function: str_at(step, &["functionRef", "name"]).to_owned(),
                input: step
                    .get("input")
                    .filter(|i| !i.is_null())
                    .map(Value::to_string),
                credentials: credentials(step, secrets)?,
                required_resources: bootstrap_resources(step),
                required_schemas: bootstrap_schemas(step),
            })
        })
        .collect()
}

/// Fills in what a built-in function needs from the host that its sandbox
/// can't reach: the templates of function-go-templating's `FileSystem`
/// source, read from the directory its input names (see
/// [`gotemplating_fs`]). `builtins` names the built-in each Function runs
/// as; other functions' inputs are left as they are.
pub fn read_host_inputs(steps: &mut [Step], builtins: &BTreeMap<String, &'static str>) {
    for step in steps {
        if builtins.get(&step.function).copied() != Some(gotemplating_fs::BUILTIN) {
            continue;
        }
        let filled = step.input.as_deref().and_then(|input| {
            gotemplating_fs::fill_input(input, gotemplating_fs::Limits::default())
        });
        if let Some(filled) = filled {
            step.input = Some(filled);
        }
    }
}

fn credentials(step: &Value, secrets: &[Value]) -> Result<Vec<(String, Credentials)>, RenderError> {
    let mut out = Vec::new();
    for credential in step
        .get("credentials")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(secret_ref) = credential.get("secretRef").filter(|r| r.is_object()) else {
            continue;
        };
        if str_at(credential, &["source"]) != "Secret" {
            continue;
        }
        let (secret_name, namespace) = (
            str_at(secret_ref, &["name"]),
            str_at(secret_ref, &["namespace"]),
        );
        let secret = secrets
            .iter()
            .find(|s| name(s) == secret_name && str_at(s, &["metadata", "namespace"]) == namespace)
            .ok_or_else(|| {
                RenderError::Output(format!(
                    "cannot get credentials from secret {secret_name:?}: secret {secret_name:?} not found"
                ))
            })?;
        let mut data = Vec::new();
        let fields = match secret.get("data") {
            None | Some(Value::Null) => None,
            Some(Value::Object(fields)) => Some(fields),
            Some(_) => {
                return Err(RenderError::Invalid(format!(
                    "secret {secret_name:?}: data must be an object of base64 strings"
                )));
            }
        };
        for (key, value) in fields.into_iter().flatten() {
            let encoded = match value {
                Value::Null => "",
                Value::String(s) => s,
                _ => {
                    return Err(RenderError::Invalid(format!(
                        "secret {secret_name:?}: data {key:?} must be a base64 string"
                    )));
                }
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| {
                    RenderError::Output(format!(
                        "secret {secret_name:?} has data {key:?} that is not base64: {e}"
                    ))
                })?;
            data.push((key.clone(), bytes));
        }
        out.push((
            str_at(credential, &["name"]).to_owned(),
            Credentials {
                source: Some(CredentialSource::CredentialData(CredentialData { data })),
            },
        ));
    }
    Ok(out)
}

fn bootstrap_resources(step: &Value) -> Vec<(String, ResourceSelector)> {
    let selectors =
        value_at(step, &["requirements", "requiredResources"]).and_then(Value::as_array);
    selectors
        .into_iter()
        .flatten()
        .map(|s| {
            let match_ = match (
                s.get("name").and_then(Value::as_str),
                s.get("matchLabels").and_then(Value::as_object),
            ) {
                (Some(n), _) if !n.is_empty() => Some(ResourceMatch::MatchName(n.to_owned())),
                (_, Some(labels)) => Some(ResourceMatch::MatchLabels(MatchLabels {
                    labels: labels
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                        .collect(),
                })),
                _ => None,
            };
            let selector = ResourceSelector {
                api_version: str_at(s, &["apiVersion"]).to_owned(),
                kind: str_at(s, &["kind"]).to_owned(),
                match_,
                namespace: s
                    .get("namespace")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            (str_at(s, &["requirementName"]).to_owned(), selector)
        })
        .collect()
}

fn bootstrap_schemas(step: &Value) -> Vec<(String, SchemaSelector)> {
    let selectors = value_at(step, &["requirements", "requiredSchemas"]).and_then(Value::as_array);
    selectors
        .into_iter()
        .flatten()
        .map(|s| {
            let selector = SchemaSelector {
                api_version: str_at(s, &["apiVersion"]).to_owned(),
                kind: str_at(s, &["kind"]).to_owned(),
            };
            (str_at(s, &["requirementName"]).to_owned(), selector)
        })
        .collect()
}
