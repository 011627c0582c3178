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

use super::RenderError;
use super::object::{name, str_at, value_at};
use crate::pipeline::Functions;
use crate::{Function, WasmRuntime};

/// Annotation choosing the runtime.
pub const RUNTIME: &str = "render.crossplane.io/runtime";
/// Annotation naming a local wasm component.
pub const WASM_MODULE: &str = "render.crossplane.io/runtime-wasm-module";
/// Annotation naming a Development runtime's gRPC target.
pub const DEVELOPMENT_TARGET: &str = "render.crossplane.io/runtime-development-target";
/// Annotation naming a directory of client certificates (`tls.crt`,
/// `tls.key`, `ca.crt`) for an mTLS Development runtime.
pub const DEVELOPMENT_TLS_CERTS_DIR: &str =
    "render.crossplane.io/runtime-development-tls-certs-dir";
/// Annotation naming the name a Development runtime's server certificate must carry.
pub const DEVELOPMENT_TLS_SERVER_NAME: &str =
    "render.crossplane.io/runtime-development-tls-server-name";
/// The default Development target.
pub const DEFAULT_DEVELOPMENT_TARGET: &str = "localhost:9443";
/// Annotation choosing the pull policy (the one users know from Docker).
pub const PULL_POLICY: &str = xfn_oci::PULL_POLICY_ANNOTATION;
/// Wasm-specific pull policy annotation; wins over [`PULL_POLICY`].
pub const WASM_PULL_POLICY: &str = "render.crossplane.io/runtime-wasm-pull-policy";

/// Starts a runtime for every Function.
pub async fn start(
    functions: &[Value],
    wasm: &WasmRuntime,
    registry: &xfn_oci::RegistryOptions,
) -> Result<Functions, RenderError> {
    start_for(functions, wasm, registry, None).await
}

/// Starts a runtime for every Function. With `capability`, a function
/// whose package is known (pulled or built in) must declare it, as
/// Crossplane requires `operation` of every function an Operation calls;
/// a local module or a Development runtime isn't checked.
pub async fn start_for(
    functions: &[Value],
    wasm: &WasmRuntime,
    registry: &xfn_oci::RegistryOptions,
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
        let runtime: Arc<dyn Function> = match annotation(RUNTIME) {
            "" | "Wasm" => Arc::new(
                load_wasm(function, wasm, registry, capability)
                    .await
                    .map_err(runtime_error)?,
            ),
            "Development" => {
                let target = match annotation(DEVELOPMENT_TARGET) {
                    "" => DEFAULT_DEVELOPMENT_TARGET,
                    target => target,
                };
                let owned = |key: &str| annotation(key).to_owned();
                development(&fn_name, target, owned)
                    .await
                    .map_err(runtime_error)?
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
    let missing = crate::local_module::all_missing(
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

async fn load_wasm(
    function: &Value,
    wasm: &WasmRuntime,
    registry: &xfn_oci::RegistryOptions,
    capability: Option<&str>,
) -> Result<crate::WasmFunction, String> {
    let fn_name = name(function);
    let annotation = |key: &str| {
        value_at(function, &["metadata", "annotations", key])
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let module = annotation(WASM_MODULE);
    if !module.is_empty() {
        let bytes = crate::local_module::read(Path::new(module))?;
        return wasm.load(fn_name, &bytes).map_err(|e| e.to_string());
    }
    let package = str_at(function, &["spec", "package"]);
    let policy = crate::packages::policy(annotation(WASM_PULL_POLICY), annotation(PULL_POLICY))?;
    let component = crate::packages::component(package, policy, registry).await?;
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
/// over mTLS when [`DEVELOPMENT_TLS_CERTS_DIR`] names a directory of
/// `tls.crt`, `tls.key` and `ca.crt`.
async fn development(
    name: &str,
    target: &str,
    annotation: impl Fn(&str) -> String,
) -> Result<Arc<dyn Function>, String> {
    let mut options = crate::grpc::ClientOptions::default();
    let dir = annotation(DEVELOPMENT_TLS_CERTS_DIR);
    if !dir.is_empty() {
        let tls = crate::grpc::ClientTls::from_dir(Path::new(&dir))
            .map_err(|e| format!("cannot read the client certificates in {dir:?}: {e}"))?;
        options.tls = Some(match annotation(DEVELOPMENT_TLS_SERVER_NAME).as_str() {
            "" => tls,
            server_name => {
                // Dial the server as Crossplane dials a function: the name
                // is both the certificate's and the authority's host, so a
                // server of many functions (`xfn serve`) routes the call.
                let port = target.rsplit_once(':').map_or("9443", |(_, port)| port);
                options.authority = Some(format!("{server_name}:{port}"));
                tls.with_server_name(server_name)
            }
        });
    }
    let function = crate::grpc::GrpcFunction::new(name, target, options)
        .map_err(|e| format!("cannot connect to the Development runtime at {target:?}: {e}"))?;
    Ok(Arc::new(function))
}
