//! `xfn validate`: Crossplane's integrity checks for a Composition's pipeline.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;
use xfn_render::pipeline_check::pipeline_problems;
use xfn_render::{load, local_modules, preflight};
use xfn_runtime::local_module;

/// Check a Composition's pipeline: it has steps, step names are unique, and
/// every function it references exists. Each Function's local wasm module
/// (render.crossplane.io/runtime-wasm-module) must exist and be a component
/// that exports xfn's function world.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// A YAML file specifying the Composition.
    pub composition: PathBuf,
    /// A YAML file or directory of YAML files specifying the Functions it may use.
    pub functions: Option<PathBuf>,
}

/// Runs `xfn validate`; prints what is wrong, one line each.
pub fn run(args: ValidateArgs) -> Result<()> {
    let composition = load::read_one(&args.composition).with_context(|| {
        format!(
            "cannot load Composition from {:?}",
            args.composition.display().to_string()
        )
    })?;
    preflight::is_composition(&composition).map_err(anyhow::Error::msg)?;
    let mut module_problems = Vec::new();
    let known = match &args.functions {
        Some(path) => {
            let functions = load::read_stream(path).with_context(|| {
                format!(
                    "cannot load functions from {:?}",
                    path.display().to_string()
                )
            })?;
            functions
                .iter()
                .try_for_each(preflight::is_function)
                .map_err(anyhow::Error::msg)?;
            module_problems = modules_problems(&functions)?;
            Some(
                functions
                    .iter()
                    .map(|f| {
                        f.pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned()
                    })
                    .collect(),
            )
        }
        None => None,
    };
    let mut problems = pipeline_problems(&composition, known.as_ref());
    let what = if module_problems.is_empty() {
        "Composition is invalid"
    } else {
        "Composition or Functions are invalid"
    };
    problems.extend(module_problems);
    if problems.is_empty() {
        println!(
            "Composition {:?} is valid",
            composition
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
        );
        return Ok(());
    }
    bail!("{what}:\n{}", problems.join("\n"))
}

/// What is wrong with the Functions' local wasm modules, one line each:
/// a missing file (with the path tried), or one that is not a component
/// exporting xfn's world with the right types (found by compiling and
/// linking it, as `xfn render` would, without running it).
fn modules_problems(functions: &[Value]) -> Result<Vec<String>> {
    let modules: Vec<(&str, &str)> = local_modules(functions).collect();
    if modules.is_empty() {
        return Ok(Vec::new());
    }
    let wasm = super::flags::wasm_runtime(xfn_runtime::HostConfig::default(), None)?;
    Ok(modules
        .into_iter()
        .filter_map(|(function, module)| {
            let problem = match local_module::read(Path::new(module)) {
                Ok(bytes) => wasm.load(function, &bytes).err().map(|e| e.to_string()),
                Err(reason) => Some(reason),
            }?;
            Some(format!(
                "Function {function:?}: metadata.annotations[{:?}]: {problem}",
                xfn_catalog::annotations::WASM_MODULE
            ))
        })
        .collect())
}
