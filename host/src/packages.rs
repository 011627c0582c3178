//! Finding the component of a Function's `spec.package`: from its OCI
//! registry (or the cache, per the pull policy), else from the functions
//! that ship with xfn. `xfn render` and `xfn serve` both resolve packages
//! this way.
//!
//! The official registries of Crossplane functions hold container images,
//! not wasm, and xfn's own functions ship inside xfn, so a built-in
//! function's package in one of those registries is not pulled unless the
//! pull policy is `Always`.

use std::borrow::Cow;

use xfn_oci::{PullPolicy, RegistryOptions};

use crate::builtin;

/// Registries not asked for built-in functions: Crossplane's, whose
/// function packages are container images, and xfn's own.
const BUILTIN_REGISTRIES: [&str; 3] = ["xpkg.crossplane.io", "xpkg.upbound.io", "xpkg.xfn.dev"];

/// Where a package's component came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Pulled from the registry or the cache, at this manifest digest.
    Registry(String),
    /// The function of this name that ships with xfn.
    Builtin(&'static str),
}

/// A package's component.
#[derive(Debug, Clone)]
pub struct PackageComponent {
    /// The component's bytes.
    pub bytes: Cow<'static, [u8]>,
    /// Where they came from.
    pub source: Source,
    /// The capabilities its package declares (`composition` when it lists none).
    pub capabilities: Vec<String>,
}

/// The component of `package` under `policy`.
pub async fn component(
    package: &str,
    policy: PullPolicy,
    registry: &RegistryOptions,
) -> Result<PackageComponent, String> {
    let builtin = builtin::for_package(package);
    let registry_host = package.split('/').next().unwrap_or("");
    let skip_registry = builtin.is_some()
        && BUILTIN_REGISTRIES.contains(&registry_host)
        && policy != PullPolicy::Always;
    if !package.is_empty() && !skip_registry {
        match xfn_oci::resolve(package, policy, registry).await {
            Ok(pulled) => {
                tracing::info!(package, digest = %pulled.digest, "pulled function package");
                return Ok(PackageComponent {
                    bytes: Cow::Owned(pulled.wasm),
                    source: Source::Registry(pulled.digest.to_string()),
                    capabilities: pulled.metadata.capabilities,
                });
            }
            Err(e) if builtin.is_some() => {
                eprintln!(
                    "xfn: cannot use package {package} from its registry ({e}); falling back to the built-in function"
                );
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    match builtin {
        Some(builtin::Builtin {
            name,
            component: Some(bytes),
            capabilities,
        }) => {
            eprintln!("xfn: running package {package} as the built-in wasm function {name}");
            Ok(PackageComponent {
                bytes: Cow::Borrowed(bytes),
                source: Source::Builtin(name),
                capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            })
        }
        Some(builtin::Builtin {
            name,
            component: None,
            ..
        }) => Err(format!(
            "package {package:?} names the built-in function {name}, but this xfn was built without it; build xfn with `make build`"
        )),
        None => Err(format!(
            "no wasm component for package {package:?}: publish one with `xfn push`, set the \
             \"render.crossplane.io/runtime-wasm-module\" annotation to a local .wasm file, \
             or use one of the functions that ship with xfn ({})",
            builtin::names().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The pull policy a Function's annotations ask for: the wasm-specific
/// `wasm_policy` wins over the Docker one; neither means `IfNotPresent`.
pub fn policy(wasm_policy: &str, docker_policy: &str) -> Result<PullPolicy, String> {
    match if wasm_policy.is_empty() {
        docker_policy
    } else {
        wasm_policy
    } {
        "" => Ok(PullPolicy::IfNotPresent),
        text => text
            .parse::<PullPolicy>()
            .map_err(|e| format!("invalid pull policy {text:?}: {e}")),
    }
}
