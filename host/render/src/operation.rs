//! `xfn operation render`: runs an Operation's function pipeline, offline,
//! and builds what `crossplane operation render` prints.
//!
//! * A CronOperation or a WatchOperation is rendered as the Operation its
//!   `operationTemplate` makes, named after it (crossplane/cli
//!   `render/op/load.go`).
//! * `--watched-resource` adds the object to every step's required
//!   resources under [`WATCHED_RESOURCE`], as the WatchOperation controller
//!   does, and to the resources functions may require.
//! * Functions get no observed state; each step's desired state and context
//!   go to the next, its `output` goes into `status.pipeline`, and the last
//!   desired state's resources are the ones the Operation applies
//!   (crossplane `internal/controller/ops/operation/reconciler.go`).
//!
//! Two output shapes, as with composite render: classic (`crossplane alpha
//! render op`, CLI ≤ v2.2) and engine (`crossplane operation render`, CLI ≥
//! v2.3). Upstream prints applied resources in Go map order, which changes
//! from run to run; xfn prints them sorted by their desired-state name.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::context_fn::{self, ContextFunction};
use super::inputs::{self, InputError};
use super::object::{name, str_at};
use super::{
    CONDITION_TIME, Compat, FileResolver, PrintOptions, RenderError, Runners, load, output,
    runtimes, steps, tag,
};
use xfn_runtime::pipeline::{Pipeline, PipelineError, PipelineOutput, RunOptions, StepResult};

/// The API version of Crossplane's Operations.
pub const OPS_API_VERSION: &str = "ops.crossplane.io/v1alpha1";
/// The requirement a WatchOperation gives every step: the watched object.
pub const WATCHED_RESOURCE: &str = "ops.crossplane.io/watched-resource";
/// The capability Crossplane requires of the functions an Operation calls.
pub const OPERATION_CAPABILITY: &str = "operation";
/// The `resourceVersion` the engine gives the Operation it reconciles.
const ENGINE_RESOURCE_VERSION: &str = "999";

/// Everything an operation render works from.
#[derive(Debug, Clone)]
pub struct OperationInputs {
    /// The Operation (a CronOperation's or WatchOperation's already taken
    /// out of it by [`operation_from`]).
    pub operation: Value,
    /// The Functions its pipeline uses.
    pub functions: Vec<Value>,
    /// Resources functions may require (the watched resource among them).
    pub required_resources: Vec<Value>,
    /// OpenAPI v3 documents functions may require schemas from.
    pub required_schemas: Vec<Value>,
    /// Secrets for function credentials.
    pub credentials: Vec<Value>,
    /// Context values from `--context-files` and `--context-values`.
    pub context: Map<String, Value>,
    /// Whether to print the context (`-c`).
    pub include_context: bool,
    /// Deadline of each call and of the whole render.
    pub timeout: Duration,
    /// Which crossplane output to match.
    pub compat: Compat,
}

/// The files and values the flags of `operation render` name.
#[derive(Debug, Clone)]
pub struct OperationFiles {
    /// The Operation, CronOperation or WatchOperation.
    pub operation: PathBuf,
    /// A file or directory of Functions.
    pub functions: PathBuf,
    /// `--context-files`: context keys and the files of their values.
    pub context_files: Vec<(String, PathBuf)>,
    /// `--context-values`: context keys and their values (they win over files).
    pub context_values: Vec<(String, String)>,
    /// `-e`, each a file or directory.
    pub required_resources: Vec<PathBuf>,
    /// `--required-schemas`: a directory of OpenAPI documents.
    pub required_schemas: Option<PathBuf>,
    /// `--function-credentials`: Secrets.
    pub function_credentials: Option<PathBuf>,
    /// `-a`: annotations set on every Function.
    pub function_annotations: Vec<(String, String)>,
    /// `-w`: the object a WatchOperation saw change.
    pub watched_resource: Option<PathBuf>,
    /// `-c`: print the context.
    pub include_context: bool,
    /// The whole render's deadline.
    pub timeout: Duration,
    /// Which crossplane output to match.
    pub compat: Compat,
}

/// Loads and checks everything `files` names.
pub fn load(files: &OperationFiles) -> Result<OperationInputs, InputError> {
    let document = load::read_one(&files.operation)
        .map_err(|e| inputs::load_error("Operation", &files.operation, e))?;
    let mut operation = operation_from(document)?;
    let mut required_resources = Vec::new();
    for path in &files.required_resources {
        required_resources.extend(inputs::stream(Some(path), "required resources")?);
    }
    if let Some(path) = &files.watched_resource {
        let watched = inputs::stream(Some(path), "watched resource")?;
        let [watched] = <[Value; 1]>::try_from(watched).map_err(|all| {
            InputError::Unusable(format!(
                "--watched-resource must contain exactly one resource, got {}",
                all.len()
            ))
        })?;
        inject_watched_resource(&mut operation, &watched);
        required_resources.push(watched);
    }
    let mut functions = inputs::functions(&files.functions)?;
    inputs::apply_annotations(&mut functions, &files.function_annotations);
    Ok(OperationInputs {
        operation,
        functions,
        required_resources,
        required_schemas: match &files.required_schemas {
            Some(dir) => inputs::load_schemas(dir)?,
            None => Vec::new(),
        },
        credentials: inputs::stream(files.function_credentials.as_deref(), "secrets")?,
        context: inputs::context(&files.context_files, &files.context_values)?,
        include_context: files.include_context,
        timeout: files.timeout,
        compat: files.compat,
    })
}

/// Runs the pipeline and returns the YAML stream to print; `-o`
/// (`include_full_operation`) prints the spec the Operation ran with.
pub async fn render_yaml(
    inputs: &OperationInputs,
    runners: &Runners,
    print: PrintOptions,
    include_full_operation: bool,
) -> Result<String, RenderError> {
    let outputs = render(inputs, runners).await?;
    let spec = include_full_operation
        .then(|| outputs.spec.clone())
        .flatten();
    Ok(outputs.to_yaml(print, spec.as_ref()))
}

/// What an operation render prints, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationOutputs {
    /// The Operation, with its status.
    pub operation: Value,
    /// The resources the Operation applies, sorted by desired-state name.
    pub applied: Vec<Value>,
    /// `Result` documents of non-fatal results.
    pub results: Vec<Value>,
    /// The `Context` document, if there is a context to show.
    pub context: Option<Value>,
    /// The spec the Operation ran with (for `-o`).
    pub spec: Option<Value>,
}

impl OperationOutputs {
    /// The YAML stream to print. `full_spec`, from `-o`, is the spec the
    /// Operation was rendered with; it replaces (classic: adds) the spec.
    pub fn to_yaml(&self, print: PrintOptions, full_spec: Option<&Value>) -> String {
        let mut operation = self.operation.clone();
        if let (Some(spec), Some(object)) = (full_spec, operation.as_object_mut()) {
            object.insert("spec".to_owned(), spec.clone());
        }
        let mut docs: Vec<&Value> = vec![&operation];
        docs.extend(&self.applied);
        if print.include_results {
            docs.extend(&self.results);
        }
        if print.include_context {
            docs.extend(&self.context);
        }
        xfn_yaml::to_yaml_stream(docs)
    }
}

/// The Operation a document stands for: an Operation as it is; a
/// CronOperation's or WatchOperation's `operationTemplate`, with the
/// template's metadata and the parent's name.
pub fn operation_from(document: Value) -> Result<Value, RenderError> {
    let api_version = str_at(&document, &["apiVersion"]).to_owned();
    let kind = str_at(&document, &["kind"]).to_owned();
    if api_version != OPS_API_VERSION {
        return Err(not_an_operation(&kind, &api_version));
    }
    match kind.as_str() {
        "Operation" => Ok(document),
        "CronOperation" | "WatchOperation" => {
            let template = document
                .pointer("/spec/operationTemplate")
                .filter(|t| t.is_object())
                .ok_or_else(|| {
                    RenderError::Invalid(format!(
                        "{kind} {:?} has no spec.operationTemplate",
                        name(&document)
                    ))
                })?;
            let mut metadata = match template.get("metadata") {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            };
            metadata.insert("name".to_owned(), name(&document).into());
            Ok(json!({
                "apiVersion": api_version,
                "kind": "Operation",
                "metadata": metadata,
                "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
            }))
        }
        _ => Err(not_an_operation(&kind, &api_version)),
    }
}

fn not_an_operation(kind: &str, api_version: &str) -> RenderError {
    RenderError::Invalid(format!(
        "not an operation type: {kind}/{api_version} (want an Operation, CronOperation or WatchOperation of {OPS_API_VERSION})"
    ))
}

/// Adds the watched resource to every step's required resources, as the
/// WatchOperation controller does for the Operations it creates.
pub fn inject_watched_resource(operation: &mut Value, watched: &Value) {
    let mut selector = json!({
        "requirementName": WATCHED_RESOURCE,
        "apiVersion": str_at(watched, &["apiVersion"]),
        "kind": str_at(watched, &["kind"]),
        "name": name(watched),
    });
    let namespace = str_at(watched, &["metadata", "namespace"]);
    if !namespace.is_empty() {
        selector["namespace"] = namespace.into();
    }
    let Some(steps) = operation
        .pointer_mut("/spec/pipeline")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for step in steps.iter_mut().filter_map(Value::as_object_mut) {
        let requirements = step.entry("requirements").or_insert_with(|| json!({}));
        if !requirements.is_object() {
            *requirements = json!({});
        }
        let resources = &mut requirements["requiredResources"];
        match resources {
            Value::Array(list) => list.push(selector.clone()),
            _ => *resources = json!([selector.clone()]),
        }
    }
}

/// Runs the Operation's pipeline and builds what to print.
pub async fn render(
    inputs: &OperationInputs,
    runners: &Runners,
) -> Result<OperationOutputs, RenderError> {
    let timeout = inputs.timeout;
    tokio::time::timeout(timeout + super::TIMEOUT_GRACE, run(inputs, runners))
        .await
        .map_err(|_| {
            RenderError::Operation(format!(
                "timed out after {timeout:?} (if it needs longer, raise --timeout)"
            ))
        })?
}

async fn run(inputs: &OperationInputs, runners: &Runners) -> Result<OperationOutputs, RenderError> {
    let mut operation = inputs.operation.clone();
    let runtimes::Started {
        mut functions,
        builtins,
    } = runtimes::start_for(&inputs.functions, runners, Some(OPERATION_CAPABILITY))
        .await
        .map_err(|e| match e {
            RenderError::Runtime(reason) => {
                RenderError::Operation(format!("cannot start function runtimes: {reason}"))
            }
            other => other,
        })?;

    // Engine render passes the context through a function of its own, whose
    // steps become part of the Operation it prints.
    let context_fn = ContextFunction::new(inputs.context.clone());
    let initial_context = match inputs.compat {
        Compat::Classic => Some(Value::Object(inputs.context.clone()).to_string()),
        Compat::Engine => {
            let seed = !inputs.context.is_empty();
            if seed || inputs.include_context {
                functions.insert(
                    context_fn::FUNCTION_NAME.to_owned(),
                    Arc::new(context_fn.clone()),
                );
            }
            if let Some(steps) = operation
                .pointer_mut("/spec/pipeline")
                .and_then(Value::as_array_mut)
            {
                if seed {
                    steps.insert(0, ContextFunction::step(context_fn::SEED_STEP, "Seed"));
                }
                if inputs.include_context {
                    steps.push(ContextFunction::step(context_fn::CAPTURE_STEP, "Capture"));
                }
            }
            Some("{}".to_owned())
        }
    };

    let mut steps = steps::from_composition(&operation, &inputs.credentials)?;
    steps::read_host_inputs(&mut steps, &builtins);
    super::kcl_sources::fill_inputs(
        &mut steps,
        &builtins,
        &super::kcl_sources::function_dirs(&inputs.functions),
        runners.catalog.registry(),
    )
    .await;
    // Both shapes tag each request (classic op render did, unlike classic
    // XR render); the engine matches required resources by exact namespace
    // and stops a step whose first call already had what it requires.
    let (resolver, options) = match inputs.compat {
        Compat::Classic => (
            FileResolver::new(
                inputs.required_resources.clone(),
                inputs.required_schemas.clone(),
            ),
            RunOptions {
                tag: Some(tag::tag),
                stop_when_satisfied: false,
            },
        ),
        Compat::Engine => (
            FileResolver::exact(
                inputs.required_resources.clone(),
                inputs.required_schemas.clone(),
            ),
            RunOptions {
                tag: Some(tag::tag),
                stop_when_satisfied: true,
            },
        ),
    };
    let pipeline = Pipeline {
        steps: &steps,
        functions: &functions,
        resolver: &resolver,
        call_timeout: Some(inputs.timeout),
    };
    let out = pipeline
        .run_with(None, initial_context, options)
        .await
        .map_err(operation_error)?;

    let applied = applied_resources(&out)?;
    let results = out
        .results
        .iter()
        .map(|r| result_document(r, inputs.compat))
        .collect();
    let context = match inputs.compat {
        Compat::Classic => out.context.as_deref().map(parse_context).transpose()?,
        Compat::Engine => context_fn
            .captured()
            .as_deref()
            .map(parse_context)
            .transpose()?,
    }
    .filter(|fields| inputs.compat == Compat::Engine || !fields.is_empty())
    .map(|fields| {
        json!({
            "apiVersion": "render.crossplane.io/v1beta1",
            "kind": "Context",
            "fields": fields,
        })
    });
    let spec = operation.get("spec").cloned();
    let operation = match inputs.compat {
        Compat::Classic => classic_operation(&operation, &applied, &out),
        Compat::Engine => engine_operation(operation, &applied, &out),
    }?;
    Ok(OperationOutputs {
        operation,
        applied: applied.into_values().collect(),
        results,
        context,
        spec,
    })
}

/// Pipeline errors in the words of the operation reconciler.
fn operation_error(error: PipelineError) -> RenderError {
    match error {
        PipelineError::Input { step, reason } => RenderError::Invalid(format!(
            "cannot unmarshal input for operation pipeline step {step:?}: {reason}"
        )),
        other => RenderError::Operation(other.to_string()),
    }
}

/// The last desired state's resources, by desired-state name.
fn applied_resources(out: &PipelineOutput) -> Result<BTreeMap<String, Value>, RenderError> {
    out.desired
        .resources
        .iter()
        .map(|(key, resource)| {
            let object: Value = resource
                .resource
                .as_deref()
                .map(xfn_proto::json::parse_value)
                .transpose()
                .map_err(|e| {
                    RenderError::Operation(format!(
                        "cannot load desired resource {key:?} from protobuf struct: {e}"
                    ))
                })?
                .unwrap_or_else(|| json!({}));
            Ok((key.clone(), object))
        })
        .collect()
}

fn parse_context(text: &str) -> Result<Map<String, Value>, RenderError> {
    xfn_proto::json::parse_value(text).map_err(|e| {
        RenderError::Operation(format!(
            "the pipeline returned a context that is not a JSON object: {e}"
        ))
    })
}

/// `status.pipeline`: each step's output, in pipeline order.
fn pipeline_status(out: &PipelineOutput) -> Result<Vec<Value>, RenderError> {
    out.outputs
        .iter()
        .map(|(step, text)| {
            let output: Value = xfn_proto::json::parse_value(text).map_err(|e| {
                RenderError::Operation(format!(
                    "cannot marshal pipeline step {step:?} output to JSON: {e}"
                ))
            })?;
            Ok(json!({"step": step, "output": output}))
        })
        .collect()
}

/// An `AppliedResourceRef`.
fn applied_ref(object: &Value) -> Value {
    let mut reference = json!({
        "apiVersion": str_at(object, &["apiVersion"]),
        "kind": str_at(object, &["kind"]),
        "name": name(object),
    });
    let namespace = str_at(object, &["metadata", "namespace"]);
    if !namespace.is_empty() {
        reference["namespace"] = namespace.into();
    }
    reference
}

/// Classic render's Operation: its apiVersion, kind and metadata, and a
/// status of the applied resources (in the order they were applied) and
/// the steps' outputs; no spec (unless `-o`), no conditions.
fn classic_operation(
    operation: &Value,
    applied: &BTreeMap<String, Value>,
    out: &PipelineOutput,
) -> Result<Value, RenderError> {
    Ok(json!({
        "apiVersion": str_at(operation, &["apiVersion"]),
        "kind": str_at(operation, &["kind"]),
        "metadata": operation.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "status": {
            "appliedResourceRefs": applied.values().map(applied_ref).collect::<Vec<_>>(),
            "pipeline": pipeline_status(out)?,
        },
    }))
}

/// The engine's Operation: what the operation reconciler last wrote, i.e.
/// the Operation it was sent (with `resourceVersion: "999"`) and its
/// status: the conditions in the order the reconciler sets them, the
/// steps' outputs, and the applied resources sorted and without repeats.
fn engine_operation(
    mut operation: Value,
    applied: &BTreeMap<String, Value>,
    out: &PipelineOutput,
) -> Result<Value, RenderError> {
    let condition = |kind: &str, reason: &str| {
        json!({
            "lastTransitionTime": CONDITION_TIME,
            "reason": reason,
            "status": "True",
            "type": kind,
        })
    };
    let mut refs: Vec<Value> = Vec::new();
    for reference in applied.values().map(applied_ref) {
        if !refs.contains(&reference) {
            refs.push(reference);
        }
    }
    let sort_key = |r: &Value| {
        ["apiVersion", "kind", "namespace", "name"]
            .map(|k| str_at(r, &[k]).to_owned())
            .concat()
    };
    refs.sort_by_key(sort_key);

    let mut status = Map::new();
    status.insert(
        "conditions".to_owned(),
        json!([
            condition("Succeeded", "PipelineSuccess"),
            condition("ValidPipeline", "ValidPipeline"),
            condition("Synced", "ReconcileSuccess"),
        ]),
    );
    let pipeline = pipeline_status(out)?;
    if !pipeline.is_empty() {
        status.insert("pipeline".to_owned(), pipeline.into());
    }
    if !refs.is_empty() {
        status.insert("appliedResourceRefs".to_owned(), refs.into());
    }
    let object = super::object::ensure_object(&mut operation);
    object.insert("apiVersion".to_owned(), OPS_API_VERSION.into());
    object.insert("kind".to_owned(), "Operation".into());
    object.insert("status".to_owned(), Value::Object(status));
    super::object::set_metadata_str(&mut operation, "resourceVersion", ENGINE_RESOURCE_VERSION);
    Ok(operation)
}

/// A `Result` document: classic keeps the step and the protobuf severity;
/// the engine prints the event the reconciler records.
fn result_document(r: &StepResult, compat: Compat) -> Value {
    let message = &r.result.message;
    match compat {
        Compat::Classic => json!({
            "apiVersion": "render.crossplane.io/v1beta1",
            "kind": "Result",
            "step": r.step,
            "severity": r.result.severity.proto_name(),
            "message": message,
        }),
        Compat::Engine => {
            let (severity, message) = output::result_event(&r.step, r.result.severity, message);
            output::engine::event(severity, "RunPipelineStep", &message)
        }
    }
}

#[cfg(test)]
mod tests;
