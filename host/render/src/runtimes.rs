//! Which runtime runs each Function, chosen by its annotations.
//!
//! * `render.crossplane.io/runtime` absent, empty, `Docker` or `Wasm`: the
//!   function's package. A local wasm component named by the
//!   `render.crossplane.io/runtime-wasm-module` annotation wins; otherwise
//!   `spec.package` (or, for `Docker` and no annotation, the
//!   `render.crossplane.io/runtime-docker-image` annotation) is pulled from
//!   its registry or the cache, per the pull policy annotation. A wasm
//!   component runs in-process; a function that ships with xfn runs as
//!   that built-in (the official registries of Crossplane functions hold
//!   container images, so a built-in's package there is not pulled unless
//!   the pull policy is `Always`); a container image runs in xfn's
//!   sandbox, without Docker (see `xfn-container`).
//! * `Development`: call a running gRPC function at
//!   `render.crossplane.io/runtime-development-target` (default `localhost:9443`).
//!
//! Functions start at once, in parallel; every one that can't is named in
//! one error, each with why and what to do.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use xfn_catalog::annotations::{
    CONTAINER_NETWORK, DOCKER_CLEANUP, DOCKER_ENV, DOCKER_NAME, RUNTIME, WASM_MODULE,
};
use xfn_catalog::{ComponentOrigin, DevelopmentTarget, FunctionSource, PackageRun};
use xfn_runtime::Function;
use xfn_runtime::pipeline::Functions;

use super::object::{name, str_at, value_at};
use super::{RenderError, Runners};

/// The Functions' runtimes, started.
pub struct Started {
    /// Each Function's runtime, by name.
    pub functions: Functions,
    /// The Functions that run as a function shipped with xfn: the
    /// built-in's name, by Function name.
    pub builtins: BTreeMap<String, &'static str>,
}

/// Starts a runtime for every Function.
pub async fn start(functions: &[Value], runners: &Runners) -> Result<Started, RenderError> {
    start_for(functions, runners, None).await
}

/// Starts a runtime for every Function. With `capability`, a function
/// whose wasm package is known (pulled or built in) must declare it, as
/// Crossplane requires `operation` of every function an Operation calls;
/// a local module, a container image or a Development runtime isn't checked.
pub async fn start_for(
    functions: &[Value],
    runners: &Runners,
    capability: Option<&str>,
) -> Result<Started, RenderError> {
    check_modules(functions)?;
    let starts = functions
        .iter()
        .map(|function| start_one(function, runners, capability));
    let results = futures_util::future::join_all(starts).await;
    let mut started = Started {
        functions: Functions::new(),
        builtins: BTreeMap::new(),
    };
    let mut failed = Vec::new();
    for (function, result) in functions.iter().zip(results) {
        let fn_name = name(function).to_owned();
        match result {
            Ok((runtime, builtin)) => {
                if let Some(builtin) = builtin {
                    started.builtins.insert(fn_name.clone(), builtin);
                }
                started.functions.insert(fn_name, runtime);
            }
            Err(reason) => failed.push(format!("Function {fn_name:?}: {reason}")),
        }
    }
    match failed.as_slice() {
        [] => Ok(started),
        [one] => Err(RenderError::Runtime(format!(
            "cannot get runtime for {one}"
        ))),
        many => Err(RenderError::Runtime(format!(
            "cannot get runtimes for {} Functions:\n  - {}",
            many.len(),
            many.join("\n  - ")
        ))),
    }
}

/// Starts one Function's runtime (and names the built-in function it runs
/// as, if it is one), or says why it can't and what to do.
async fn start_one(
    function: &Value,
    runners: &Runners,
    capability: Option<&str>,
) -> Result<(Arc<dyn Function>, Option<&'static str>), String> {
    let fn_name = name(function);
    let annotation = |key: &str| {
        value_at(function, &["metadata", "annotations", key])
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    // An embedded KCL function (an `up` project's functions/<name>/): runs
    // on the built-in function-kcl, its directory read by render.
    if !annotation(crate::kcl_sources::FUNCTION_DIR).is_empty() {
        return embedded_kcl(fn_name, runners);
    }
    let source = FunctionSource::of(annotation, str_at(function, &["spec", "package"]))?;
    match source {
        FunctionSource::LocalModule(module) => {
            let bytes = xfn_runtime::local_module::read(&module)?;
            let loaded = runners
                .wasm
                .load(fn_name, &bytes)
                .map_err(|e| e.to_string())?
                .with_env(docker_env(annotation(DOCKER_ENV)));
            Ok((Arc::new(loaded), None))
        }
        FunctionSource::Package { reference, policy } => {
            let run = runners
                .catalog
                .resolve(&reference, policy)
                .await
                .map_err(|e| format!("{e}; {}", what_to_do(&reference)))?;
            match run {
                PackageRun::Component(component) => {
                    if let Some(wanted) = capability
                        && !xfn_oci::xpkg::has_capability(&component.capabilities, wanted)
                    {
                        return Err(format!(
                            "its package {reference:?} declares the capabilities [{}], not {wanted:?}, and Crossplane \
                             refuses to run it there (MissingCapabilities); add {wanted:?} to spec.capabilities \
                             in the function's crossplane.yaml and push it again",
                            component.capabilities.join(", ")
                        ));
                    }
                    // The environment a container function would get: a
                    // port reads its settings from it (function-auto-ready's
                    // FEATURE_GATES).
                    let loaded = runners
                        .wasm
                        .load(fn_name, &component.bytes)
                        .map_err(|e| e.to_string())?
                        .with_env(docker_env(annotation(DOCKER_ENV)));
                    let builtin = match component.source {
                        ComponentOrigin::Builtin(builtin) => Some(builtin),
                        ComponentOrigin::Registry(_) => None,
                    };
                    Ok((Arc::new(loaded), builtin))
                }
                PackageRun::Image(image) => container(fn_name, &annotation, &image, runners)
                    .await
                    .map(|f| (f, None)),
            }
        }
        FunctionSource::Development(target) => development(fn_name, &target).map(|f| (f, None)),
    }
}

/// The built-in function-kcl, for an embedded KCL function.
fn embedded_kcl(
    fn_name: &str,
    runners: &Runners,
) -> Result<(Arc<dyn Function>, Option<&'static str>), String> {
    let builtin = crate::kcl_sources::BUILTIN;
    let component = runners
        .catalog
        .builtins()
        .for_package(builtin)
        .and_then(|b| b.component)
        .ok_or_else(|| {
            format!(
                "it is an embedded KCL function ({:?}), which runs on the built-in {builtin}, \
                 and this xfn was built without it",
                crate::kcl_sources::FUNCTION_DIR
            )
        })?;
    let loaded = runners
        .wasm
        .load(fn_name, component)
        .map_err(|e| e.to_string())?;
    Ok((Arc::new(loaded), Some(builtin)))
}

/// What to do when a package can't be had.
fn what_to_do(reference: &str) -> String {
    format!(
        "to render without its registry, pull it while it can be reached (`xfn pull {reference}`), \
         point the {WASM_MODULE:?} annotation at a wasm build of the function, \
         or run the function yourself and set {RUNTIME:?} to \"Development\""
    )
}

/// A container image, run in xfn's sandbox.
#[cfg(target_os = "linux")]
async fn container<'a>(
    fn_name: &str,
    annotation: &impl Fn(&str) -> &'a str,
    image: &xfn_oci::PulledImage,
    runners: &Runners,
) -> Result<Arc<dyn Function>, String> {
    let Some(options) = &runners.containers else {
        return Err(format!(
            "its package {} is a container image, and container functions are turned off here; \
             use a wasm build of the function ({WASM_MODULE:?}) or run it yourself (\"Development\")",
            image.reference
        ));
    };
    for (key, meaning) in [
        (DOCKER_CLEANUP, "xfn's sandbox always ends with render"),
        (DOCKER_NAME, "xfn starts a fresh sandbox for each render"),
    ] {
        if !annotation(key).is_empty() {
            runners.catalog.note(&format!(
                "Function {fn_name:?}: {key} is Docker's; {meaning}"
            ));
        }
    }
    let settings = xfn_container::FunctionSettings {
        network: annotation(CONTAINER_NETWORK) == "true",
        env: docker_env(annotation(DOCKER_ENV)),
    };
    let started =
        xfn_container::ContainerFunction::start(fn_name, &sandbox_image(image), &settings, options)
            .await
            .map_err(|e| e.to_string())?;
    Ok(Arc::new(started))
}

/// A container image, where there is no sandbox.
#[cfg(not(target_os = "linux"))]
async fn container<'a>(
    _fn_name: &str,
    _annotation: &impl Fn(&str) -> &'a str,
    image: &xfn_oci::PulledImage,
    _runners: &Runners,
) -> Result<Arc<dyn Function>, String> {
    Err(format!(
        "its package {} is a container image, and xfn runs container functions on Linux only; \
         here, use a wasm build of the function ({WASM_MODULE:?}), one of the functions that ship with xfn, \
         or run it yourself (\"Development\")",
        image.reference
    ))
}

/// The image as the sandbox takes it.
#[cfg(target_os = "linux")]
fn sandbox_image(image: &xfn_oci::PulledImage) -> xfn_container::Image {
    xfn_container::Image {
        reference: image.reference.clone(),
        layers: image
            .layers
            .iter()
            .map(|layer| xfn_container::Layer {
                digest: layer.digest.to_string(),
                path: layer.path.clone(),
                compression: match layer.compression {
                    xfn_oci::Compression::None => xfn_container::Compression::None,
                    xfn_oci::Compression::Gzip => xfn_container::Compression::Gzip,
                    xfn_oci::Compression::Zstd => xfn_container::Compression::Zstd,
                },
            })
            .collect(),
        entrypoint: image.config.entrypoint.clone(),
        env: image.config.env.clone(),
        working_dir: image.config.working_dir.clone(),
        user: image.config.user.clone(),
    }
}

/// `render.crossplane.io/runtime-docker-env`: `k1=v1,k2=v2`; pairs
/// without `=` are ignored, as `crossplane render` ignores them.
fn docker_env(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
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

#[cfg(test)]
mod tests {
    use super::docker_env;

    #[test]
    fn docker_env_reads_pairs_as_crossplane_render_does() {
        assert_eq!(
            docker_env("A=1,B=x=y,broken, C =3,=nope"),
            [
                ("A".to_owned(), "1".to_owned()),
                ("B".to_owned(), "x=y".to_owned()),
                ("C".to_owned(), "3".to_owned())
            ]
        );
        assert!(docker_env("").is_empty());
    }
}
