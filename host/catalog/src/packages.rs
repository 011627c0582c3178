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

    /// Tells the user something about a function's package (on stderr in
    /// `xfn render`, in the log elsewhere).
    pub fn note(&self, text: &str) {
        (self.note)(text);
    }

    /// How it reaches registries.
    pub fn registry(&self) -> &RegistryOptions {
        &self.registry
    }

    /// The functions that ship with xfn.
    pub fn builtins(&self) -> Builtins {
        self.builtins
    }

    /// The component of `package` under `policy`; a package that is a
    /// container image is an error (use [`Catalog::resolve`] where one can
    /// run).
    pub async fn component(
        &self,
        package: &str,
        policy: PullPolicy,
    ) -> Result<PackageComponent, String> {
        match self.resolve(package, policy).await? {
            PackageRun::Component(component) => Ok(component),
            PackageRun::Image(image) => Err(format!(
                "package {package:?} is a container image ({}), not a wasm component: only `xfn render` runs container functions; \
                 publish the function as wasm with `xfn push`, or use one of the functions that ship with xfn ({})",
                image.platform,
                self.builtins.names().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// What runs `package` under `policy`: a wasm component (pulled, or
    /// a built-in function), or a container image.
    pub async fn resolve(&self, package: &str, policy: PullPolicy) -> Result<PackageRun, String> {
        resolve(package, policy, &self.registry, self.builtins, self.note).await
    }
}

/// What runs a package.
#[derive(Debug, Clone)]
pub enum PackageRun {
    /// A wasm component.
    Component(PackageComponent),
    /// A container image, pulled and verified (its layers in the cache).
    Image(Box<xfn_oci::PulledImage>),
}

/// What runs `package` under `policy`.
async fn resolve(
    package: &str,
    policy: PullPolicy,
    registry: &RegistryOptions,
    builtins: Builtins,
    note: fn(&str),
) -> Result<PackageRun, String> {
    let builtin = builtins.for_package(package);
    let registry_host = package.split('/').next().unwrap_or("");
    let skip_registry = builtin.is_some()
        && BUILTIN_REGISTRIES.contains(&registry_host)
        && policy != PullPolicy::Always;
    if !package.is_empty() && !skip_registry {
        match xfn_oci::resolve_package(package, policy, registry).await {
            Ok(xfn_oci::Resolved::Wasm(pulled)) => {
                tracing::info!(package, digest = %pulled.digest, "pulled function package");
                return Ok(PackageRun::Component(PackageComponent {
                    bytes: Cow::Owned(pulled.wasm),
                    source: ComponentOrigin::Registry(pulled.digest.to_string()),
                    capabilities: pulled.metadata.capabilities,
                }));
            }
            Ok(xfn_oci::Resolved::Image(_)) if builtin.is_some() => {
                note(&format!(
                    "package {package} is a container image; running the built-in wasm function instead"
                ));
            }
            Ok(xfn_oci::Resolved::Image(image)) => {
                tracing::info!(package, digest = %image.digest, "pulled container image");
                return Ok(PackageRun::Image(Box::new(image)));
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
            Ok(PackageRun::Component(PackageComponent {
                bytes: Cow::Borrowed(bytes),
                source: ComponentOrigin::Builtin(name),
                capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            }))
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
