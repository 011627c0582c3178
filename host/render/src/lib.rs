//! # xfn-render: a Docker-free `crossplane render`
//!
//! `xfn render`: a Docker-free `crossplane render` whose output matches
//! classic `crossplane render` (CLI v1.15 to v2.2) byte for byte.
//!
//! One place per concern: [`inputs`] loads and checks what the flags name,
//! [`render`] runs the pipeline and shapes its output ([`output`], one
//! module per output mode), and [`Outputs::to_yaml`] prints it.

#![forbid(unsafe_code)]

pub mod claim;
pub mod context_fn;
pub mod engine_compat;
mod fetch;
pub mod gotemplating_fs;
pub mod inputs;
pub mod kcl_sources;
pub mod load;
mod object;
pub mod operation;
pub mod output;
pub mod pipeline_check;
pub mod preflight;
pub mod pt_input;
pub mod resources_mode;
mod runtimes;
mod steps;
pub mod tag;
pub mod xrd;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

pub use fetch::FileResolver;
pub use inputs::{InputError, InputFiles};
pub use output::{CONDITION_TIME, Outputs, PrintOptions};
pub use runtimes::local_modules;

use xfn_runtime::WasmRuntime;
use xfn_runtime::pipeline::{Functions, Pipeline, PipelineError, RunOptions, Step};
use xfn_runtime::protocol::{ResourceObject, State};

/// What runs a render's functions: wasm in-process, the packages'
/// catalog, and (on Linux, unless turned off) container images in xfn's
/// sandbox.
pub struct Runners {
    /// Runs wasm components.
    pub wasm: WasmRuntime,
    /// Finds packages: the registry, the cache, the built-in functions.
    pub catalog: xfn_catalog::Catalog,
    /// Runs container images; `None` refuses them.
    #[cfg(target_os = "linux")]
    pub containers: Option<xfn_container::ContainerOptions>,
}

impl std::fmt::Debug for Runners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runners")
            .field("catalog", &self.catalog)
            .finish_non_exhaustive()
    }
}

/// Why render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The inputs don't fit together (classic render's pre-flight checks).
    #[error("{0}")]
    Invalid(String),
    /// A Function's runtime could not be started.
    #[error("cannot render composite resource: cannot start function runtimes: {0}")]
    Runtime(String),
    /// The pipeline failed.
    #[error("cannot render composite resource: {0}")]
    Pipeline(PipelineError),
    /// The pipeline's output could not be turned into documents.
    #[error("cannot render composite resource: {0}")]
    Output(String),
    /// Render took longer than its timeout.
    #[error(
        "cannot render composite resource: timed out after {0:?} (if it needs longer, raise --timeout)"
    )]
    Timeout(Duration),
    /// An Operation's pipeline failed, or its output could not be used.
    #[error("cannot render operation: {0}")]
    Operation(String),
}

impl From<PipelineError> for RenderError {
    fn from(e: PipelineError) -> Self {
        RenderError::Pipeline(e)
    }
}

/// Everything render works from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The composite resource (XR).
    pub composite: Value,
    /// The Composition (`mode: Pipeline`).
    pub composition: Value,
    /// The Functions the pipeline uses.
    pub functions: Vec<Value>,
    /// Observed composed resources.
    pub observed: Vec<Value>,
    /// Resources functions may require (required and extra resources).
    pub required_resources: Vec<Value>,
    /// OpenAPI v3 documents functions may require schemas from.
    pub required_schemas: Vec<Value>,
    /// Secrets for function credentials.
    pub credentials: Vec<Value>,
    /// The initial pipeline context.
    pub context: serde_json::Map<String, Value>,
    /// The XR's definition, if given (engine mode picks the schema from it).
    pub xrd: Option<Value>,
    /// Deadline of the whole render.
    pub timeout: Duration,
}

/// Which `crossplane render` the output matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compat {
    /// Classic `crossplane render`, CLI v1.15 to v2.2.4.
    #[default]
    Classic,
    /// `crossplane composition render` (CLI v2.3 and later) with a core
    /// engine at 2d040d2 (2026-08-07, after v2.4.0-rc.0).
    Engine,
}

/// How to shape and print a render's output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// What to print besides the XR and composed resources.
    pub print: PrintOptions,
    /// `-x`: include the input XR's fields in the printed XR.
    pub include_full_xr: bool,
    /// Which output to match.
    pub compat: Compat,
}

/// Runs the pipeline and returns the YAML stream to print.
pub async fn render_yaml(
    inputs: &Inputs,
    runners: &Runners,
    options: Options,
) -> Result<String, RenderError> {
    let mut outputs = match options.compat {
        Compat::Classic => render(inputs, runners).await?,
        Compat::Engine => {
            let capture = options.print.include_context;
            with_timeout(inputs.timeout, run_engine(inputs, runners, capture)).await?
        }
    };
    if options.include_full_xr {
        match options.compat {
            Compat::Classic => {
                output::classic::include_full_xr(&mut outputs.composite, &inputs.composite)
            }
            Compat::Engine => {
                output::engine::include_full_xr(&mut outputs.composite, &inputs.composite)
            }
        }
    }
    let mut print = options.print;
    if options.compat == Compat::Engine {
        // The engine CLI prints a Context document only when it captured one.
        print.include_context = outputs.context.is_some();
    }
    Ok(outputs.to_yaml(print))
}

/// Runs the Composition's pipeline for the XR and builds what to print.
pub async fn render(inputs: &Inputs, runners: &Runners) -> Result<Outputs, RenderError> {
    with_timeout(inputs.timeout, run(inputs, runners)).await
}

async fn with_timeout(
    timeout: Duration,
    render: impl Future<Output = Result<Outputs, RenderError>>,
) -> Result<Outputs, RenderError> {
    // Each function call has the same limit and reports running out of it
    // by the function's name; this backstop, a little later, catches the
    // rest (a pull, a peer that doesn't answer).
    tokio::time::timeout(timeout + TIMEOUT_GRACE, render)
        .await
        .map_err(|_| RenderError::Timeout(timeout))?
}

/// How long past `--timeout` the whole render may take before it is cut
/// off without a function to blame.
pub(crate) const TIMEOUT_GRACE: Duration = Duration::from_millis(250);

/// Starts the Functions' runtimes and reads the Composition's steps, with
/// what the host reads for built-ins (go-templating's templates, KCL's
/// packages) in their inputs.
async fn start_pipeline(
    inputs: &Inputs,
    runners: &Runners,
) -> Result<(Functions, Vec<Step>), RenderError> {
    let runtimes::Started {
        functions,
        builtins,
    } = runtimes::start(&inputs.functions, runners).await?;
    let mut steps = steps::from_composition(&inputs.composition, &inputs.credentials)?;
    steps::read_host_inputs(&mut steps, &builtins);
    kcl_sources::fill_inputs(
        &mut steps,
        &builtins,
        &kcl_sources::function_dirs(&inputs.functions),
        runners.catalog.registry(),
    )
    .await;
    Ok((functions, steps))
}

async fn run(inputs: &Inputs, runners: &Runners) -> Result<Outputs, RenderError> {
    let (functions, steps) = start_pipeline(inputs, runners).await?;
    let resolver = FileResolver::new(
        inputs.required_resources.clone(),
        inputs.required_schemas.clone(),
    );

    let observed: BTreeMap<String, Value> = inputs
        .observed
        .iter()
        .map(|o| {
            let key = object::value_at(
                o,
                &["metadata", "annotations", output::COMPOSITION_RESOURCE_NAME],
            )
            .and_then(Value::as_str)
            .unwrap_or("");
            (key.to_owned(), o.clone())
        })
        .collect();
    let observed_state = observed_state(&inputs.composite, &observed);
    let context = Value::Object(inputs.context.clone()).to_string();

    let pipeline = Pipeline {
        steps: &steps,
        functions: &functions,
        resolver: &resolver,
        call_timeout: Some(inputs.timeout),
    };
    let out = pipeline.run(observed_state, Some(context)).await?;
    output::classic::build(&inputs.composite, &observed, out)
}

/// The observed state functions are sent: the XR and the observed
/// composed resources, by composition resource name.
fn observed_state(xr: &Value, observed: &BTreeMap<String, Value>) -> State {
    State {
        composite: Some(ResourceObject::from_json(xr)),
        resources: observed
            .iter()
            .map(|(k, v)| (k.clone(), ResourceObject::from_json(v)))
            .collect(),
    }
}

/// The engine's render: the XR prepared as its reconciler has it, each
/// request tagged, required resources matched by exact namespace.
async fn run_engine(
    inputs: &Inputs,
    runners: &Runners,
    capture_context: bool,
) -> Result<Outputs, RenderError> {
    let prepared = engine_compat::prepare(inputs)?;
    let (functions, steps) = start_pipeline(inputs, runners).await?;
    let resolver = FileResolver::exact(
        inputs.required_resources.clone(),
        inputs.required_schemas.clone(),
    );
    let observed_state = observed_state(&prepared.observed_xr, &prepared.observed);
    let context = Value::Object(inputs.context.clone()).to_string();
    let pipeline = Pipeline {
        steps: &steps,
        functions: &functions,
        resolver: &resolver,
        call_timeout: Some(inputs.timeout),
    };
    let options = RunOptions {
        tag: Some(tag::tag),
        stop_when_satisfied: true,
    };
    let out = pipeline
        .run_with(Some(observed_state), Some(context), options)
        .await?;
    output::engine::build(
        &prepared,
        object::name(&inputs.composition),
        out,
        capture_context,
    )
}
