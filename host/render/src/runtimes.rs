//! Which runtime runs each Function, chosen by its annotations.
//!
//! * `render.crossplane.io/runtime` absent, empty or `Wasm`: run a wasm
//!   component in-process. The component comes from, in order, the
//!   `render.crossplane.io/runtime-wasm-module` annotation (a local file),
//!   then `spec.package` pulled from its registry (or the cache, per the
//!   pull policy annotation), then a function that ships with xfn if
//!   `spec.package` names one. The official registries of Crossplane
//!   functions hold container images, not wasm, so a built-in function's
//!   package there is not pulled unless the pull policy is `Always`.
//! * `Development`: call a running gRPC function at
//!   `render.crossplane.io/runtime-development-target` (default `localhost:9443`).
//! * `Docker`: refused, with the alternatives.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use xfn_catalog::annotations::{RUNTIME, WASM_MODULE};
use xfn_catalog::{Catalog, DevelopmentTarget, FunctionSource};
use xfn_runtime::pipeline::Functions;
use xfn_runtime::{Function, WasmRuntime};

use super::RenderError;
use super::object::{name, str_at, value_at};

/// Starts a runtime for every Function.
pub async fn start(
    functions: &[Value],
    wasm: &WasmRuntime,
    catalog: &Catalog,
) -> Result<Functions, RenderError> {
    start_for(functions, wasm, catalog, None).await
}

/// Starts a runtime for every Function. With `capability`, a function
/// whose package is known (pulled or built in) must declare it, as
/// Crossplane requires `operation` of every function an Operation calls;
/// a local module or a Development runtime isn't checked.
pub async fn start_for(
    functions: &[Value],
    wasm: &WasmRuntime,
    catalog: &Catalog,
    capability: Option<&str>,
) -> Result<Functions, RenderError> {
    check_modules(functions)?;
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
        let source = FunctionSource::of(annotation, str_at(function, &["spec", "package"]))
            .map_err(runtime_error)?;
        let runtime: Arc<dyn Function> = match source {
            FunctionSource::LocalModule(module) => {
                let bytes = xfn_runtime::local_module::read(&module).map_err(runtime_error)?;
                Arc::new(
                    wasm.load(&fn_name, &bytes)
                        .map_err(|e| runtime_error(e.to_string()))?,
                )
            }
            FunctionSource::Package { reference, policy } => Arc::new(
                load_package(&fn_name, &reference, policy, wasm, catalog, capability)
                    .await
                    .map_err(runtime_error)?,
            ),
            FunctionSource::Development(target) => {
                development(&fn_name, &target).map_err(runtime_error)?
            }
            FunctionSource::Docker => {
                return Err(runtime_error(format!(
                    "xfn runs functions without Docker: remove the {RUNTIME:?} annotation (or set it to \"Wasm\") to run the function as a wasm component, \
                     or set it to \"Development\" to call a function you run yourself over gRPC"
                )));
            }
        };
        started.insert(fn_name, runtime);
    }
    Ok(started)
}

/// The local wasm module each wasm Function names, if it names one.
pub fn local_modules(functions: &[Value]) -> impl Iterator<Item = (&str, &str)> {
    functions.iter().filter_map(|function| {
        let annotation = |key: &str| {
            value_at(function, &["metadata", "annotations", key])
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let wasm = matches!(annotation(RUNTIME), "" | "Wasm");
        let module = annotation(WASM_MODULE);
        (wasm && !module.is_empty()).then(|| (name(function), module))
    })
}

/// Refuses Functions whose local wasm module is missing, all of them at
/// once and before any function is compiled.
fn check_modules(functions: &[Value]) -> Result<(), RenderError> {
    let missing = xfn_runtime::local_module::all_missing(
        local_modules(functions).map(|(function, module)| (function, Path::new(module))),
    );
    if missing.is_empty() {
        return Ok(());
    }
    Err(RenderError::Runtime(format!(
        "cannot get runtimes for the Functions: {}",
        missing.join("; ")
    )))
}

/// The wasm function of a package, checked for `capability`.
async fn load_package(
    fn_name: &str,
    package: &str,
    policy: xfn_oci::PullPolicy,
    wasm: &WasmRuntime,
    catalog: &Catalog,
    capability: Option<&str>,
) -> Result<xfn_runtime::WasmFunction, String> {
    let component = catalog.component(package, policy).await?;
    if let Some(wanted) = capability
        && !xfn_oci::xpkg::has_capability(&component.capabilities, wanted)
    {
        return Err(format!(
            "its package {package:?} declares the capabilities [{}], not {wanted:?}, and Crossplane \
             refuses to run it there (MissingCapabilities); add {wanted:?} to spec.capabilities \
             in the function's crossplane.yaml and push it again",
            component.capabilities.join(", ")
        ));
    }
    wasm.load(fn_name, &component.bytes)
        .map_err(|e| e.to_string())
}

/// A conventional gRPC function: in plaintext as classic render does, or
/// over mTLS when [`DEVELOPMENT_TLS_CERTS_DIR`](xfn_catalog::annotations::DEVELOPMENT_TLS_CERTS_DIR) names a directory of
/// `tls.crt`, `tls.key` and `ca.crt`.
fn development(name: &str, development: &DevelopmentTarget) -> Result<Arc<dyn Function>, String> {
    let target = development.target.as_str();
    let mut options = xfn_grpc::ClientOptions::default();
    if let Some(dir) = &development.tls_certs_dir {
        let tls = xfn_grpc::ClientTls::from_dir(dir)
            .map_err(|e| format!("cannot read the client certificates in {dir:?}: {e}"))?;
        options.tls = Some(match development.tls_server_name.as_deref() {
            None => tls,
            Some(server_name) => {
                // Dial the server as Crossplane dials a function: the name
                // is both the certificate's and the authority's host, so a
                // server of many functions (`xfn serve`) routes the call.
                let port = target.rsplit_once(':').map_or("9443", |(_, port)| port);
                options.authority = Some(format!("{server_name}:{port}"));
                tls.with_server_name(server_name)
            }
        });
    }
    let function = xfn_grpc::GrpcFunction::new(name, target, options)
        .map_err(|e| format!("cannot connect to the Development runtime at {target:?}: {e}"))?;
    Ok(Arc::new(function))
}
