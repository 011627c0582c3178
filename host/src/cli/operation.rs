//! `xfn operation render`: the flags of `crossplane operation render`.
//! This module only parses them; `xfn_host::render::operation` loads,
//! runs and prints.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use xfn_host::render::operation::{self, OperationFiles};
use xfn_host::render::{self as host_render, PrintOptions};

use super::render::{CompatArg, EngineArgs, ProjectArgs};

/// Commands on Operations.
#[derive(Debug, clap::Subcommand)]
pub enum OperationCommand {
    /// Render an Operation, CronOperation or WatchOperation: run its function pipeline, offline and without Docker.
    Render(OperationRenderArgs),
}

/// `xfn operation render`.
#[derive(Debug, clap::Args)]
pub struct OperationRenderArgs {
    /// A YAML file specifying the Operation to render (or a CronOperation or WatchOperation, whose operationTemplate is rendered).
    pub operation: PathBuf,
    /// A YAML file or directory of YAML files specifying the Functions the pipeline uses.
    pub functions: PathBuf,

    /// Context key-value pairs to pass to the function pipeline. Values must be files containing JSON or YAML.
    #[arg(long = "context-files", value_name = "KEY=PATH")]
    pub context_files: Vec<String>,
    /// Context key-value pairs to pass to the function pipeline. Values must be JSON or YAML. Keys take precedence over --context-files.
    #[arg(long = "context-values", value_name = "KEY=VALUE")]
    pub context_values: Vec<String>,
    /// A YAML file or directory of YAML files specifying credentials to use for functions.
    #[arg(long, value_name = "PATH")]
    pub function_credentials: Option<PathBuf>,
    /// Override an annotation on every Function (KEY=VALUE; repeatable).
    #[arg(short = 'a', long = "function-annotations", value_name = "KEY=VALUE")]
    pub function_annotations: Vec<String>,
    /// Include the context in the rendered output as a resource of kind: Context.
    #[arg(short = 'c', long)]
    pub include_context: bool,
    /// Include a direct copy of the input Operation's spec in the rendered output.
    #[arg(short = 'o', long)]
    pub include_full_operation: bool,
    /// Include informational and warning messages from functions in the rendered output as resources of kind: Result.
    #[arg(short = 'r', long)]
    pub include_function_results: bool,
    /// A YAML file or directory of YAML files specifying required resources to pass to the function pipeline (repeatable).
    #[arg(short = 'e', long, value_name = "PATH")]
    pub required_resources: Vec<PathBuf>,
    /// A directory of JSON files specifying OpenAPI v3 schemas to pass to the function pipeline.
    #[arg(long, value_name = "DIR")]
    pub required_schemas: Option<PathBuf>,
    /// A YAML file specifying the watched resource of a WatchOperation; it is also added to the required resources.
    #[arg(short = 'w', long, value_name = "PATH")]
    pub watched_resource: Option<PathBuf>,
    /// How long to run before timing out (10ms to 1day); each function call gets as long.
    #[arg(long, default_value = "1m", value_parser = super::parse_timeout)]
    pub timeout: Duration,
    /// Which crossplane output to match: classic (`crossplane alpha render op`, CLI v2.2) or engine (`crossplane operation render`, CLI v2.3 and later).
    #[arg(
        long,
        value_enum,
        default_value = "classic",
        env = "XFN_RENDER_COMPAT",
        value_name = "MODE"
    )]
    pub compat: CompatArg,

    /// The engine flags of `crossplane operation render`.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The project flags of `crossplane operation render`.
    #[command(flatten)]
    pub project: ProjectArgs,

    /// Registries and the cache.
    #[command(flatten)]
    pub registry: super::oci::RegistryArgs,
    /// Most memory one function call may use, in MiB (at least 1).
    #[arg(long, default_value_t = 256, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub memory_limit: usize,
}

impl OperationRenderArgs {
    fn files(&self) -> OperationFiles {
        OperationFiles {
            operation: self.operation.clone(),
            functions: self.functions.clone(),
            context_files: self.context_files.clone(),
            context_values: self.context_values.clone(),
            required_resources: self.required_resources.clone(),
            required_schemas: self.required_schemas.clone(),
            function_credentials: self.function_credentials.clone(),
            function_annotations: self.function_annotations.clone(),
            watched_resource: self.watched_resource.clone(),
            include_context: self.include_context,
            timeout: self.timeout,
            shape: match self.compat {
                CompatArg::Classic => host_render::Compat::Classic,
                CompatArg::Engine => host_render::Compat::Engine,
            },
        }
    }
}

/// Runs an `xfn operation` command.
pub async fn run(command: OperationCommand) -> Result<()> {
    match command {
        OperationCommand::Render(args) => render(args).await,
    }
}

async fn render(args: OperationRenderArgs) -> Result<()> {
    args.project.check()?;
    for note in args.engine.notes() {
        eprintln!("xfn: {note}");
    }
    let inputs = operation::load(&args.files())?;
    let wasm = super::render::wasm_runtime(
        args.registry.cache_dir.clone(),
        args.memory_limit,
        args.timeout,
    )?;
    let registry = args.registry.options();
    let print = PrintOptions {
        include_results: args.include_function_results,
        include_context: args.include_context,
    };
    let yaml = operation::render_yaml(
        &inputs,
        &wasm,
        &registry,
        print,
        args.include_full_operation,
    )
    .await?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(yaml.as_bytes())
        .context("cannot write to stdout")?;
    stdout.flush().context("cannot write to stdout")?;
    Ok(())
}
