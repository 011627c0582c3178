//! `xfn render`: the flags of classic `crossplane render`. This module only
//! parses them; `xfn_render` loads, checks, runs and prints.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use xfn_render::{self as render, InputFiles, PrintOptions};
use xfn_runtime::{HostConfig, Tiering, WasmRuntime};

/// Render an XR with a Composition's function pipeline, offline and without Docker.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Functions run as sandboxed wasm components by default. Annotations on each Function choose how:\n  \
  render.crossplane.io/runtime: Wasm | Development\n  \
  render.crossplane.io/runtime-wasm-module: path/to/function.wasm\n  \
  render.crossplane.io/runtime-development-target: localhost:9443"
)]
pub struct RenderArgs {
    /// A YAML file specifying the composite resource (XR) to render.
    pub composite_resource: PathBuf,
    /// A YAML file specifying the Composition to use to render the XR. Must be mode: Pipeline.
    pub composition: PathBuf,
    /// A YAML file or directory of YAML files specifying the Composition Functions to use to render the XR.
    pub functions: PathBuf,

    /// Context key-value pairs to pass to the Function pipeline. Values must be files containing JSON or YAML.
    #[arg(long = "context-files", value_name = "KEY=PATH", value_parser = super::flags::parse_key_path)]
    pub context_files: Vec<(String, PathBuf)>,
    /// Context key-value pairs to pass to the Function pipeline. Values must be JSON or YAML. Keys take precedence over --context-files.
    #[arg(long = "context-values", value_name = "KEY=VALUE", value_parser = super::flags::parse_key_value)]
    pub context_values: Vec<(String, String)>,
    /// Include informational and warning messages from Functions in the rendered output as resources of kind: Result.
    #[arg(short = 'r', long)]
    pub include_function_results: bool,
    /// Include a direct copy of the input XR's spec and metadata fields in the rendered output.
    #[arg(short = 'x', long = "include-full-xr")]
    pub include_full_xr: bool,
    /// A YAML file or directory of YAML files specifying the observed state of composed resources.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub observed_resources: Option<PathBuf>,
    /// A YAML file or directory of YAML files specifying required resources (deprecated, use --required-resources; repeatable).
    #[arg(long, value_name = "PATH")]
    pub extra_resources: Vec<PathBuf>,
    /// A YAML file or directory of YAML files specifying required resources to pass to the Function pipeline (repeatable).
    #[arg(short = 'e', long, value_name = "PATH")]
    pub required_resources: Vec<PathBuf>,
    /// A directory of JSON files specifying OpenAPI v3 schemas for required schemas.
    #[arg(short = 's', long, value_name = "DIR")]
    pub required_schemas: Option<PathBuf>,
    /// Include the context in the rendered output as a resource of kind: Context.
    #[arg(short = 'c', long)]
    pub include_context: bool,
    /// A YAML file or directory of YAML files specifying credentials to use for Functions to render the XR.
    #[arg(long, value_name = "PATH")]
    pub function_credentials: Option<PathBuf>,
    /// Override an annotation on every Function (KEY=VALUE; repeatable).
    #[arg(short = 'a', long = "function-annotations", value_name = "KEY=VALUE", value_parser = super::flags::parse_key_value)]
    pub function_annotations: Vec<(String, String)>,
    /// A YAML file specifying the CompositeResourceDefinition (XRD) that defines the XR's schema and properties.
    #[arg(long, value_name = "PATH")]
    pub xrd: Option<PathBuf>,
    /// What every render command shares: timeout, output mode, engine and
    /// project flags, registries, memory.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The flags every render command shares.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// How long to run before timing out (10ms to 1day); each function call gets as long.
    #[arg(long, default_value = super::flags::RENDER_TIMEOUT, value_parser = super::flags::parse_timeout)]
    pub timeout: Duration,
    /// Which crossplane output to match: classic (CLI v2.2 and before) or engine (CLI v2.3 and later, core engine at 2d040d2).
    #[arg(
        long,
        value_enum,
        default_value = "classic",
        env = "XFN_RENDER_COMPAT",
        value_name = "MODE"
    )]
    pub compat: CompatArg,
    /// The engine flags of the current `crossplane` render commands.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The project flags of the current `crossplane` render commands.
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Registries and the cache.
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
    #[command(flatten)]
    pub memory: super::flags::MemoryLimit,
    /// How container functions run.
    #[command(flatten)]
    pub containers: ContainerArgs,
}

/// How container functions (a Function whose package is a container
/// image) run: in xfn's sandbox, without Docker.
#[derive(Debug, clap::Args)]
pub struct ContainerArgs {
    /// Give every container function the host's network (by default each has none; a Function can ask for it with the annotation xfn.dev/container-network: "true").
    #[arg(long)]
    pub container_network: bool,
    /// Most writable memory of each process of a container function, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 2048,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(16..))]
    pub container_memory: u64,
    /// Most processes and threads of one container function.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(8..))]
    pub container_processes: u64,
    /// How long a container function may take to listen after it starts.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub container_start_timeout: Duration,
    /// Refuse container functions instead of running them.
    #[arg(long)]
    pub no_containers: bool,
}

impl ContainerArgs {
    /// The sandbox's options; `None` when container functions are refused.
    #[cfg(target_os = "linux")]
    pub fn options(
        &self,
        cache_dir: &std::path::Path,
    ) -> Result<Option<xfn_container::ContainerOptions>> {
        if self.no_containers {
            return Ok(None);
        }
        let launcher = std::env::current_exe()
            .context("cannot find the xfn binary, which starts container functions")?;
        Ok(Some(xfn_container::ContainerOptions {
            launcher,
            cache_root: cache_dir.to_owned(),
            unpack_limits: xfn_container::Limits::default(),
            resources: xfn_container::ResourceLimits {
                memory_bytes: self.container_memory << 20,
                processes: self.container_processes,
                ..xfn_container::ResourceLimits::default()
            },
            start_timeout: self.container_start_timeout,
            network: self.container_network,
        }))
    }
}

impl RunArgs {
    /// The output mode.
    pub fn compat(&self) -> render::Compat {
        match self.compat {
            CompatArg::Classic => render::Compat::Classic,
            CompatArg::Engine => render::Compat::Engine,
        }
    }

    /// Refuses the project flags xfn cannot honour, notes the engine flags
    /// it doesn't need, and builds the wasm runtime and the catalog of
    /// packages (the registry and the built-in functions).
    pub fn start(&self) -> Result<render::Runners> {
        self.project.check()?;
        for note in self.engine.notes() {
            eprintln!("xfn: {note}");
        }
        let wasm = render_runtime(self.registry.cache_dir.clone(), &self.memory, self.timeout)?;
        let registry = self.registry.options();
        #[cfg(target_os = "linux")]
        let containers = self.containers.options(&registry.cache_dir)?;
        let catalog = xfn_catalog::Catalog::new(registry, crate::builtins())
            .with_notes(|note| eprintln!("xfn: {note}"));
        Ok(render::Runners {
            wasm,
            catalog,
            #[cfg(target_os = "linux")]
            containers,
        })
    }
}

/// Prints a render's YAML stream on stdout.
pub fn print(yaml: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(yaml.as_bytes())
        .context("cannot write to stdout")?;
    stdout.flush().context("cannot write to stdout")
}

/// The flags that choose the engine of `crossplane composition render`.
/// xfn is its own engine: each is accepted with a note that it is not needed.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EngineArgs {
    /// Accepted for compatibility: xfn renders in-process and needs no engine image.
    #[arg(long, value_name = "VERSION")]
    pub crossplane_version: Option<String>,
    /// Accepted for compatibility: xfn renders in-process and needs no engine image.
    #[arg(long, value_name = "IMAGE")]
    pub crossplane_image: Option<String>,
    /// Accepted for compatibility: xfn renders in-process and needs no engine binary.
    #[arg(long, value_name = "PATH")]
    pub crossplane_binary: Option<PathBuf>,
    /// Accepted for compatibility: xfn runs no engine container, so needs no network for one.
    #[arg(long, value_name = "NETWORK")]
    pub crossplane_docker_network: Option<String>,
}

impl EngineArgs {
    /// One line per engine flag given, saying xfn doesn't need it.
    pub fn notes(&self) -> Vec<String> {
        let given = [
            ("--crossplane-version", self.crossplane_version.is_some()),
            ("--crossplane-image", self.crossplane_image.is_some()),
            ("--crossplane-binary", self.crossplane_binary.is_some()),
            (
                "--crossplane-docker-network",
                self.crossplane_docker_network.is_some(),
            ),
        ];
        given
            .iter()
            .filter(|(_, set)| *set)
            .map(|(flag, _)| {
                format!(
                    "{flag} is ignored: xfn renders in-process and needs no Crossplane engine image"
                )
            })
            .collect()
    }
}

/// The project flags of `crossplane composition render`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProjectArgs {
    /// A Crossplane project file (crossplane-project.yaml). Not supported: xfn needs the Functions argument.
    #[arg(short = 'f', long, value_name = "PATH")]
    pub project_file: Option<PathBuf>,
    /// Most functions to start at once (at least 1). xfn starts them one at a time, within any bound.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: Option<u32>,
}

impl ProjectArgs {
    /// Refuses what xfn cannot honour.
    pub fn check(&self) -> Result<()> {
        if let Some(path) = &self.project_file {
            anyhow::bail!(
                "--project-file {:?}: xfn does not read Crossplane projects (crossplane-project.yaml) or build their embedded functions; pass the Functions file or directory as an argument instead",
                path.display().to_string()
            );
        }
        Ok(())
    }
}

/// `--compat` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompatArg {
    /// Classic `crossplane render` (CLI v1.15 to v2.2.4), byte for byte.
    Classic,
    /// `crossplane composition render` (CLI v2.3 and later) with the core engine at 2d040d2.
    Engine,
}

impl RenderArgs {
    /// The files and values the flags name.
    fn input_files(&self) -> InputFiles {
        InputFiles {
            composite_resource: self.composite_resource.clone(),
            composition: self.composition.clone(),
            functions: self.functions.clone(),
            context_files: self.context_files.clone(),
            context_values: self.context_values.clone(),
            observed_resources: self.observed_resources.clone(),
            extra_resources: self.extra_resources.clone(),
            required_resources: self.required_resources.clone(),
            required_schemas: self.required_schemas.clone(),
            function_credentials: self.function_credentials.clone(),
            function_annotations: self.function_annotations.clone(),
            xrd: self.xrd.clone(),
            timeout: self.run.timeout,
        }
    }

    /// How to shape and print the output.
    fn options(&self) -> render::Options {
        render::Options {
            print: PrintOptions {
                include_results: self.include_function_results,
                include_context: self.include_context,
            },
            include_full_xr: self.include_full_xr,
            compat: self.run.compat(),
        }
    }
}

/// `xfn composition …`: the command group of the current Crossplane CLI.
#[derive(Debug, clap::Args)]
pub struct CompositionArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: CompositionCommand,
}

/// `xfn composition` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum CompositionCommand {
    /// Render an XR with a Composition's function pipeline (the same command as `xfn render`).
    Render(RenderArgs),
}

/// Runs `xfn composition …`.
pub async fn run_composition(args: CompositionArgs) -> Result<()> {
    match args.command {
        CompositionCommand::Render(args) => run(args).await,
    }
}

/// Runs `xfn render`.
pub async fn run(args: RenderArgs) -> Result<()> {
    let runners = args.run.start()?;
    let inputs = render::inputs::load(&args.input_files(), &mut |note| eprintln!("xfn: {note}"))?;
    let yaml = render::render_yaml(&inputs, &runners, args.options()).await?;
    print(&yaml)
}

/// The wasm runtime of a render: each call limited to `memory` and
/// `timeout`, compiled functions cached under `cache_dir`.
///
/// A render makes a handful of calls, one step at a time, so its instances
/// are allocated as calls need them rather than from a pool: setting up
/// and tearing down a pool of 128 slots (a stack each, with its guard
/// page) cost more than a whole render's calls.
///
/// For the same reason, a function whose optimized code is neither built
/// in nor cached runs Winch's code, compiled in about an eighth of
/// Cranelift's time, and cached for the next render.
pub fn render_runtime(
    cache_dir: Option<PathBuf>,
    memory: &super::flags::MemoryLimit,
    timeout: Duration,
) -> Result<WasmRuntime> {
    super::flags::wasm_runtime(
        HostConfig {
            call_timeout: timeout,
            memory_limit: memory.bytes(),
            pooling: false,
            tiering: Tiering::Baseline,
            ..HostConfig::default()
        },
        cache_dir,
    )
}
