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

use crate::builtins::{Builtin, Builtins};

/// Registries not asked for built-in functions: Crossplane's, whose
/// function packages are container images, and xfn's own.
const BUILTIN_REGISTRIES: [&str; 3] = ["xpkg.crossplane.io", "xpkg.upbound.io", "xpkg.xfn.dev"];

/// Where a package's component came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentOrigin {
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
    pub source: ComponentOrigin,
    /// The capabilities its package declares (`composition` when it lists none).
    pub capabilities: Vec<String>,
}

/// Where packages' components come from: a registry (with its options
/// and cache) and the functions that ship with xfn. `xfn render`,
/// `xfn serve` and `xfn controller` each hold one.
#[derive(Debug, Clone)]
pub struct Catalog {
    registry: RegistryOptions,
    builtins: Builtins,
    note: fn(&str),
}

impl Default for Catalog {
    fn default() -> Catalog {
        Catalog::new(RegistryOptions::default(), Builtins::NONE)
    }
}

/// Logs a note about where a component came from as a warning.
fn log_note(note: &str) {
    tracing::warn!("{note}");
}

impl Catalog {
    /// A catalog that pulls with `registry` and knows `builtins`.
    pub fn new(registry: RegistryOptions, builtins: Builtins) -> Catalog {
        Catalog {
            registry,
            builtins,
            note: log_note,
        }
    }

    /// The same catalog, telling `note` (instead of the log) when it falls
    /// back to a built-in function: `xfn render` prints these on stderr.
    pub fn with_notes(self, note: fn(&str)) -> Catalog {
        Catalog { note, ..self }
    }

    /// How it reaches registries.
    pub fn registry(&self) -> &RegistryOptions {
        &self.registry
    }

    /// The functions that ship with xfn.
    pub fn builtins(&self) -> Builtins {
        self.builtins
    }

    /// The component of `package` under `policy`.
    pub async fn component(
        &self,
        package: &str,
        policy: PullPolicy,
    ) -> Result<PackageComponent, String> {
        component(package, policy, &self.registry, self.builtins, self.note).await
    }
}

/// The component of `package` under `policy`.
async fn component(
    package: &str,
    policy: PullPolicy,
    registry: &RegistryOptions,
    builtins: Builtins,
    note: fn(&str),
) -> Result<PackageComponent, String> {
    let builtin = builtins.for_package(package);
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
                    source: ComponentOrigin::Registry(pulled.digest.to_string()),
                    capabilities: pulled.metadata.capabilities,
                });
            }
            Err(e) if builtin.is_some() => {
                note(&format!(
                    "cannot use package {package} from its registry ({e}); falling back to the built-in function"
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    match builtin {
        Some(Builtin {
            name,
            component: Some(bytes),
            capabilities,
        }) => {
            note(&format!(
                "running package {package} as the built-in wasm function {name}"
            ));
            Ok(PackageComponent {
                bytes: Cow::Borrowed(bytes),
                source: ComponentOrigin::Builtin(name),
                capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            })
        }
        Some(Builtin {
            name,
            component: None,
            ..
        }) => Err(format!(
            "package {package:?} names the built-in function {name}, but this xfn was built without it"
        )),
        None => Err(format!(
            "no wasm component for package {package:?}: publish one with `xfn push`, set the \
             \"render.crossplane.io/runtime-wasm-module\" annotation to a local .wasm file, \
             or use one of the functions that ship with xfn ({})",
            builtins.names().collect::<Vec<_>>().join(", ")
        )),
    }
}
