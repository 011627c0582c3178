//! `xfn operation render`: the flags of `crossplane operation render`.
//! This module only parses them; `xfn_render::operation` loads,
//! runs and prints.

use std::path::PathBuf;

use anyhow::Result;
use xfn_render::PrintOptions;
use xfn_render::operation::{self, OperationFiles};

use super::render::RunArgs;

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
    #[arg(long = "context-files", value_name = "KEY=PATH", value_parser = super::flags::parse_key_path)]
    pub context_files: Vec<(String, PathBuf)>,
    /// Context key-value pairs to pass to the function pipeline. Values must be JSON or YAML. Keys take precedence over --context-files.
    #[arg(long = "context-values", value_name = "KEY=VALUE", value_parser = super::flags::parse_key_value)]
    pub context_values: Vec<(String, String)>,
    /// A YAML file or directory of YAML files specifying credentials to use for functions.
    #[arg(long, value_name = "PATH")]
    pub function_credentials: Option<PathBuf>,
    /// Override an annotation on every Function (KEY=VALUE; repeatable).
    #[arg(short = 'a', long = "function-annotations", value_name = "KEY=VALUE", value_parser = super::flags::parse_key_value)]
    pub function_annotations: Vec<(String, String)>,
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
    /// What every render command shares: timeout, output mode, engine and
    /// project flags, registries, memory.
    #[command(flatten)]
    pub run: RunArgs,
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
            timeout: self.run.timeout,
            compat: self.run.compat(),
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
    let runners = args.run.start()?;
    let inputs = operation::load(&args.files())?;
    let print = PrintOptions {
        include_results: args.include_function_results,
        include_context: args.include_context,
    };
    let yaml =
        operation::render_yaml(&inputs, &runners, print, args.include_full_operation).await?;
    super::render::print(&yaml)
}
