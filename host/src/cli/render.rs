//! `xfn render`: the flags of classic `crossplane render`, with its checks
//! and error texts, run on xfn's in-process wasm host.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::Value;
use xfn_host::render::{self, Inputs, convert, load, validate};
use xfn_host::{CompileCache, HostConfig, HostEngine, WasmRuntime};

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
    #[arg(long = "context-files", value_name = "KEY=PATH")]
    pub context_files: Vec<String>,
    /// Context key-value pairs to pass to the Function pipeline. Values must be JSON or YAML. Keys take precedence over --context-files.
    #[arg(long = "context-values", value_name = "KEY=VALUE")]
    pub context_values: Vec<String>,
    /// Include informational and warning messages from Functions in the rendered output as resources of kind: Result.
    #[arg(short = 'r', long)]
    pub include_function_results: bool,
    /// Include a direct copy of the input XR's spec and metadata fields in the rendered output.
    #[arg(short = 'x', long = "include-full-xr")]
    pub include_full_xr: bool,
    /// A YAML file or directory of YAML files specifying the observed state of composed resources.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub observed_resources: Option<PathBuf>,
    /// A YAML file or directory of YAML files specifying required resources (deprecated, use --required-resources).
    #[arg(long, value_name = "PATH")]
    pub extra_resources: Option<PathBuf>,
    /// A YAML file or directory of YAML files specifying required resources to pass to the Function pipeline.
    #[arg(short = 'e', long, value_name = "PATH")]
    pub required_resources: Option<PathBuf>,
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
    #[arg(short = 'a', long = "function-annotations", value_name = "KEY=VALUE")]
    pub function_annotations: Vec<String>,
    /// How long to run before timing out (10ms to 1day); each function call gets as long.
    #[arg(long, default_value = "1m", value_parser = super::parse_timeout)]
    pub timeout: Duration,
    /// A YAML file specifying the CompositeResourceDefinition (XRD) that defines the XR's schema and properties.
    #[arg(long, value_name = "PATH")]
    pub xrd: Option<PathBuf>,

    /// Registries and the cache.
    #[command(flatten)]
    pub registry: super::oci::RegistryArgs,
    /// Most memory one function call may use, in MiB (at least 1).
    #[arg(long, default_value_t = 256, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub memory_limit: usize,
}

/// Runs `xfn render`.
pub async fn run(args: RenderArgs) -> Result<()> {
    let inputs = inputs(&args)?;
    let wasm = wasm_runtime(
        args.registry.cache_dir.clone(),
        args.memory_limit,
        args.timeout,
    )?;
    let registry = args.registry.options();
    let outputs = render::render(&inputs, &wasm, &registry).await?;

    let mut outputs = outputs;
    if args.include_full_xr {
        include_full_xr(&mut outputs.composite, &inputs.composite);
    }
    let yaml = outputs.to_yaml(args.include_function_results, args.include_context);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(yaml.as_bytes())
        .context("cannot write to stdout")?;
    stdout.flush().context("cannot write to stdout")?;
    Ok(())
}

/// Builds the wasm runtime render uses, with the on-disk compile cache:
/// calls may run for `timeout` (`--timeout` bounds each call, not only the
/// host's default).
pub fn wasm_runtime(
    cache_dir: Option<PathBuf>,
    memory_limit_mib: usize,
    timeout: Duration,
) -> Result<WasmRuntime> {
    let config = HostConfig {
        call_timeout: timeout,
        memory_limit: memory_limit_mib.saturating_mul(1 << 20),
        ..HostConfig::default()
    };
    let engine = HostEngine::new(config)?;
    let cache = cache_dir
        .or_else(CompileCache::default_dir)
        .map(CompileCache::new);
    Ok(WasmRuntime::new(engine, cache)?)
}

fn inputs(args: &RenderArgs) -> Result<Inputs> {
    let composite = load::read_one(&args.composite_resource).with_context(|| {
        format!(
            "cannot load composite resource from {:?}",
            args.composite_resource.display().to_string()
        )
    })?;
    let composition = load::read_one(&args.composition)
        .map_err(anyhow::Error::from)
        .and_then(|c| {
            validate::is_composition(&c)
                .map(|()| c)
                .map_err(|e| anyhow!(e))
        })
        .with_context(|| {
            format!(
                "cannot load Composition from {:?}",
                args.composition.display().to_string()
            )
        })?;
    validate::composition_fits(&composite, &composition)?;
    let mut composition = composition;
    let converted = convert::is_resources_mode(&composition);
    if converted {
        eprintln!(
            "xfn: Composition {:?} uses the deprecated mode: Resources; rendering it as a {} pipeline, as `crossplane beta convert pipeline-composition` would",
            name(&composition),
            convert::PATCH_AND_TRANSFORM
        );
        convert::to_pipeline(&mut composition);
    }
    if !validate::is_pipeline(&composition) {
        return Err(validate::not_a_pipeline(&composition).into());
    }

    let mut functions = load::read_stream(&args.functions)
        .map_err(anyhow::Error::from)
        .and_then(|fns| {
            fns.iter()
                .try_for_each(validate::is_function)
                .map(|()| fns)
                .map_err(|e| anyhow!(e))
        })
        .with_context(|| {
            format!(
                "cannot load functions from {:?}",
                args.functions.display().to_string()
            )
        })?;
    if converted
        && !functions
            .iter()
            .any(|f| name(f) == convert::PATCH_AND_TRANSFORM)
    {
        functions.push(convert::implied_function());
    }
    apply_annotations(&mut functions, &args.function_annotations)?;

    let mut composite = composite;
    if let Some(xrd) = &args.xrd {
        let xrd_object = load::read_one(xrd)
            .with_context(|| format!("cannot load XRD from {:?}", xrd.display().to_string()))?;
        xfn_host::render::xrd::apply_defaults(&mut composite, &xrd_object)
            .with_context(|| format!("cannot default values for XR {:?}", name(&composite)))?;
    }

    let stream = |path: &Option<PathBuf>, what: &str| -> Result<Vec<Value>> {
        match path {
            Some(path) => load::read_stream(path).with_context(|| {
                format!("cannot load {what} from {:?}", path.display().to_string())
            }),
            None => Ok(Vec::new()),
        }
    };
    let credentials = stream(&args.function_credentials, "secrets")?;
    let observed = stream(&args.observed_resources, "observed composed resources")?;
    let mut required = stream(&args.extra_resources, "extra resources")?;
    required.extend(stream(&args.required_resources, "required resources")?);
    let required_schemas = match &args.required_schemas {
        Some(dir) => load_schemas(dir)?,
        None => Vec::new(),
    };

    let mut context = serde_json::Map::new();
    for pair in &args.context_files {
        let (key, file) = split_pair(pair, "--context-files")?;
        let text = load::read_text(Path::new(file))
            .with_context(|| format!("cannot read context value for key {key:?}"))?;
        load::warn_duplicate_keys(file, &text);
        context.insert(key.to_owned(), context_value(key, &text)?);
    }
    for pair in &args.context_values {
        let (key, value) = split_pair(pair, "--context-values")?;
        context.insert(key.to_owned(), context_value(key, value)?);
    }

    Ok(Inputs {
        composite,
        composition,
        functions,
        observed,
        required_resources: required,
        required_schemas,
        credentials,
        context,
        timeout: args.timeout,
    })
}

fn name(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn split_pair<'a>(pair: &'a str, flag: &str) -> Result<(&'a str, &'a str)> {
    pair.split_once('=')
        .ok_or_else(|| anyhow!("invalid {flag} value {pair:?}: want KEY=VALUE"))
}

fn context_value(key: &str, text: &str) -> Result<Value> {
    load::parse_value(text)
        .map_err(|e| anyhow!("cannot render composite resource: cannot unmarshal YAML/JSON for context key {key:?}: {e}"))
}

fn apply_annotations(functions: &mut [Value], annotations: &[String]) -> Result<()> {
    for pair in annotations {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("invalid function annotation {pair:?}: want KEY=VALUE");
        };
        for function in functions.iter_mut() {
            let metadata = function.as_object_mut().map(|o| {
                o.entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()))
            });
            if let Some(Value::Object(metadata)) = metadata {
                let annotations = metadata
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(annotations) = annotations {
                    annotations.insert(key.to_owned(), Value::String(value.to_owned()));
                }
            }
        }
    }
    Ok(())
}

/// Every `*.json` file under `dir`, recursively, each an OpenAPI v3 document.
fn load_schemas(dir: &Path) -> Result<Vec<Value>> {
    let mut files = Vec::new();
    collect_json(dir, &mut files).with_context(|| {
        format!(
            "cannot load required schemas from {:?}",
            dir.display().to_string()
        )
    })?;
    if files.is_empty() {
        bail!(
            "cannot load required schemas from {:?}: no JSON files found",
            dir.display().to_string()
        );
    }
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = load::read_text(f)?;
            serde_json::from_str(&text)
                .with_context(|| format!("cannot parse OpenAPI document {}", f.display()))
        })
        .collect()
}

fn collect_json(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Classic render's `--include-full-xr`: the input XR's spec and metadata
/// replace the rendered XR's.
fn include_full_xr(rendered: &mut Value, input: &Value) {
    if let Some(out) = rendered.as_object_mut() {
        for key in ["spec", "metadata"] {
            out.insert(
                key.to_owned(),
                input.get(key).cloned().unwrap_or(Value::Null),
            );
        }
    }
}
