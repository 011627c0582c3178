//! Which runtime runs each Function, chosen by its annotations.
//!
//! * `render.crossplane.io/runtime` absent, empty or `Wasm`: run a wasm
//!   component in-process. The component comes from, in order, the
//!   `render.crossplane.io/runtime-wasm-module` annotation (a local file),
//!   then `spec.package` if it names a function that ships with xfn.
//! * `Development`: call a running gRPC function at
//!   `render.crossplane.io/runtime-development-target` (default `localhost:9443`).
//! * `Docker`: refused, with the alternatives.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::RenderError;
use super::object::{name, str_at, value_at};
use crate::pipeline::Functions;
use crate::{Function, WasmRuntime, builtin};

/// Annotation choosing the runtime.
pub const RUNTIME: &str = "render.crossplane.io/runtime";
/// Annotation naming a local wasm component.
pub const WASM_MODULE: &str = "render.crossplane.io/runtime-wasm-module";
/// Annotation naming a Development runtime's gRPC target.
pub const DEVELOPMENT_TARGET: &str = "render.crossplane.io/runtime-development-target";
/// The default Development target.
pub const DEFAULT_DEVELOPMENT_TARGET: &str = "localhost:9443";

/// Starts a runtime for every Function.
pub async fn start(functions: &[Value], wasm: &WasmRuntime) -> Result<Functions, RenderError> {
    let mut started = Functions::new();
    for function in functions {
        let fn_name = name(function).to_owned();
        let runtime_error = |reason: String| {
            RenderError::Runtime(format!(
                "cannot get runtime for Function {fn_name:?}: {reason}"
            ))
        };
        let annotation = |key: &str| {
            value_at(function, &["metadata", "annotations", key])
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let runtime: Arc<dyn Function> = match annotation(RUNTIME) {
            "" | "Wasm" => Arc::new(load_wasm(function, wasm).map_err(runtime_error)?),
            "Development" => {
                let target = match annotation(DEVELOPMENT_TARGET) {
                    "" => DEFAULT_DEVELOPMENT_TARGET,
                    target => target,
                };
                development(&fn_name, target).await.map_err(runtime_error)?
            }
            "Docker" => {
                return Err(runtime_error(format!(
                    "xfn runs functions without Docker: remove the {RUNTIME:?} annotation (or set it to \"Wasm\") to run the function as a wasm component, \
                     or set it to \"Development\" to call a function you run yourself over gRPC"
                )));
            }
            other => {
                return Err(runtime_error(format!(
                    "unsupported {RUNTIME:?} annotation value {other:?} (unknown runtime)"
                )));
            }
        };
        started.insert(fn_name, runtime);
    }
    Ok(started)
}

fn load_wasm(function: &Value, wasm: &WasmRuntime) -> Result<crate::WasmFunction, String> {
    let fn_name = name(function);
    let module = value_at(function, &["metadata", "annotations", WASM_MODULE])
        .and_then(Value::as_str)
        .unwrap_or("");
    if !module.is_empty() {
        let bytes = std::fs::read(Path::new(module))
            .map_err(|e| format!("cannot read wasm module {module:?}: {e}"))?;
        return wasm.load(fn_name, &bytes).map_err(|e| e.to_string());
    }
    let package = str_at(function, &["spec", "package"]);
    match builtin::for_package(package) {
        Some(builtin::Builtin {
            name: builtin,
            component: Some(bytes),
        }) => {
            tracing::info!("using built-in function {builtin} for package {package}");
            eprintln!("xfn: running package {package} as the built-in wasm function {builtin}");
            wasm.load(fn_name, bytes).map_err(|e| e.to_string())
        }
        Some(builtin::Builtin {
            name: builtin,
            component: None,
        }) => Err(format!(
            "package {package:?} names the built-in function {builtin}, but this xfn was built without it; build xfn with `make build`"
        )),
        None => Err(format!(
            "no wasm component for package {package:?}: set the {WASM_MODULE:?} annotation to a local .wasm file, \
             or use one of the functions that ship with xfn ({})",
            builtin::names().collect::<Vec<_>>().join(", ")
        )),
    }
}

async fn development(_name: &str, target: &str) -> Result<Arc<dyn Function>, String> {
    Err(format!(
        "the Development runtime (target {target:?}) is not available in this build"
    ))
}
