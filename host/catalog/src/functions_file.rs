//! The functions a server serves: where each one's component comes from,
//! and loading them ([`Loader`]).
//!
//! Functions are listed in a `functions.yaml`-style file of Crossplane
//! `Function` objects, or given as `NAME=PATH.wasm`. A Function's component
//! is the local file its `render.crossplane.io/runtime-wasm-module`
//! annotation names (a relative path is relative to the current directory,
//! as in `xfn render`), else the package its
//! `spec.package` names, found by a [`PackageResolver`]: by default only the
//! functions that ship with xfn. The annotation `xfn.dev/serve-port` gives a
//! function a port of its own.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde::Deserialize;
use xfn_component::localfile::{self, Limit};

use xfn_oci::PullPolicy;
use xfn_runtime::{WasmFunction, WasmRuntime};

use crate::Catalog;
use crate::annotations::{
    SERVE_PORT as SERVE_PORT_ANNOTATION, WASM_MODULE as WASM_MODULE_ANNOTATION,
};
use crate::source::FunctionSource;

/// Where a function's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A local `.wasm` component.
    Wasm(PathBuf),
    /// An OCI package reference (`spec.package`).
    Package(String),
}

/// A function to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSpec {
    /// Its name, which is also the first label of the authority it is
    /// dialed at.
    pub name: String,
    /// Its component.
    pub source: Source,
    /// A port of its own, if any.
    pub port: Option<u16>,
    /// How its package is pulled (its pull-policy annotations, as in
    /// `xfn render`).
    pub pull_policy: PullPolicy,
}

/// Why the functions could not be listed or loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
    /// The functions file is not what it should be.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file (or `--function` for a flag).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A package reference could not be resolved to a component.
    #[error("function {function:?}: {reason}")]
    Package {
        /// The function.
        function: String,
        /// Why.
        reason: String,
    },
    /// Local components that are not there, one line each.
    #[error("{}", .0.join("; "))]
    Missing(Vec<String>),
    /// A component could not be compiled or linked.
    #[error(transparent)]
    Load(#[from] xfn_runtime::Error),
    /// A component compiled but cannot start.
    #[error("cannot start: {0}")]
    Start(xfn_runtime::CallError),
}

impl From<xfn_runtime::CallError> for LoadError {
    fn from(error: xfn_runtime::CallError) -> Self {
        LoadError::Start(error)
    }
}

fn invalid(path: &Path, reason: impl Into<String>) -> LoadError {
    LoadError::Invalid {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Checks that `name` can be routed by authority: a DNS label.
fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "function name {name:?} is not a DNS label (lower-case letters, digits and '-', \
             at most 63), so it can't be dialed as <name>.<namespace>"
        ))
    }
}

impl FunctionSpec {
    /// A function `name` served from the local component at `path`, or
    /// why `name` can't be one.
    pub fn local(name: &str, path: PathBuf) -> Result<FunctionSpec, String> {
        check_name(name)?;
        Ok(FunctionSpec {
            name: name.to_owned(),
            source: Source::Wasm(path),
            port: None,
            pull_policy: PullPolicy::IfNotPresent,
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Object {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    spec: Spec,
}

#[derive(Debug, Default, Deserialize)]
struct Metadata {
    #[serde(default)]
    name: String,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
struct Spec {
    #[serde(default)]
    package: Option<String>,
}

/// Reads a functions file.
pub fn read_functions_file(path: &Path) -> Result<Vec<FunctionSpec>, LoadError> {
    let text = localfile::read_to_string(path, Limit::YAML).map_err(|error| LoadError::Read {
        path: path.to_owned(),
        error,
    })?;
    parse_functions(&text, path)
}

/// Parses the `Function` objects of a YAML stream read from `path`.
pub fn parse_functions(yaml: &str, path: &Path) -> Result<Vec<FunctionSpec>, LoadError> {
    xfn_yaml::check(yaml).map_err(|refusal| invalid(path, refusal.to_string()))?;
    let mut specs = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(yaml).enumerate() {
        let value = serde_yaml_ng::Value::deserialize(document)
            .map_err(|e| invalid(path, format!("document {}: {e}", index + 1)))?;
        if value.is_null() {
            continue;
        }
        let object: Object = serde_yaml_ng::from_value(value)
            .map_err(|e| invalid(path, format!("document {}: {e}", index + 1)))?;
        specs.push(
            function_spec(object)
                .map_err(|reason| invalid(path, format!("document {}: {reason}", index + 1)))?,
        );
    }
    Ok(specs)
}

fn function_spec(object: Object) -> Result<FunctionSpec, String> {
    if object.kind != "Function" || !object.api_version.starts_with("pkg.crossplane.io/") {
        return Err(format!(
            "want a pkg.crossplane.io Function, got {} {}",
            object.api_version, object.kind
        ));
    }
    let name = object.metadata.name;
    check_name(&name)?;
    let annotations = object.metadata.annotations;
    let port = annotations
        .get(SERVE_PORT_ANNOTATION)
        .map(|p| {
            p.parse::<u16>().map_err(|_| {
                format!("function {name:?}: {SERVE_PORT_ANNOTATION} {p:?} is not a port")
            })
        })
        .transpose()?;
    let package = object.spec.package.unwrap_or_default();
    let annotation = |key: &str| annotations.get(key).map_or("", String::as_str);
    let (source, pull_policy) = match FunctionSource::of(annotation, &package)
        .map_err(|reason| format!("function {name:?}: {reason}"))?
    {
        FunctionSource::LocalModule(path) => (Source::Wasm(path), PullPolicy::IfNotPresent),
        FunctionSource::Package { reference, .. } if reference.is_empty() => {
            return Err(format!(
                "function {name:?} has neither a {WASM_MODULE_ANNOTATION} annotation nor a spec.package"
            ));
        }
        FunctionSource::Package { reference, policy } => (Source::Package(reference), policy),
        FunctionSource::Development(_) => {
            return Err(format!(
                "function {name:?}: xfn serve runs wasm functions only; remove its {} annotation",
                crate::annotations::RUNTIME
            ));
        }
    };
    Ok(FunctionSpec {
        name,
        source,
        port,
        pull_policy,
    })
}

/// Finds the component of a function's package. [`Loader::new`] takes one:
/// [`OciPackages`] pulls them; a test may resolve packages its own way.
pub trait PackageResolver: Send + Sync {
    /// The component of function `function`, whose `spec.package` is
    /// `package`, pulled per `policy`.
    fn component(
        &self,
        function: &str,
        package: &str,
        policy: PullPolicy,
    ) -> Result<Cow<'static, [u8]>, String>;
}

/// Resolves packages as `xfn render` does, through a [`Catalog`]: from
/// their OCI registry or the cache, per their pull policy, else to the
/// functions built into xfn.
pub struct OciPackages {
    catalog: Catalog,
    runtime: tokio::runtime::Handle,
}

impl OciPackages {
    /// Pulls through `catalog` on `runtime` (the loader runs off the async
    /// threads, so it can wait for a pull).
    pub fn new(catalog: Catalog, runtime: tokio::runtime::Handle) -> OciPackages {
        OciPackages { catalog, runtime }
    }
}

impl PackageResolver for OciPackages {
    fn component(
        &self,
        _function: &str,
        package: &str,
        policy: PullPolicy,
    ) -> Result<Cow<'static, [u8]>, String> {
        let pulled = self
            .runtime
            .block_on(self.catalog.component(package, policy))?;
        Ok(pulled.bytes)
    }
}

type Digest = blake3::Hash;

/// Loaded functions by name.
pub type Loaded = BTreeMap<String, Arc<WasmFunction>>;

/// Loads function specs into [`Loaded`] functions, reusing the functions
/// whose component is unchanged since the last load.
pub struct Loader {
    runtime: WasmRuntime,
    packages: Box<dyn PackageResolver>,
    loaded: Mutex<HashMap<String, (Digest, Arc<WasmFunction>)>>,
}

impl Loader {
    /// A loader on `runtime` that resolves packages to built-in functions.
    /// A loader on `runtime` that resolves packages with `packages`.
    pub fn new(runtime: WasmRuntime, packages: impl PackageResolver + 'static) -> Loader {
        Loader {
            runtime,
            packages: Box::new(packages),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// Loads every function in `specs`, all or none. Compiling is slow: run
    /// this off the async runtime (`spawn_blocking`).
    pub fn load(&self, specs: &[FunctionSpec]) -> Result<Loaded, LoadError> {
        let mut seen = HashSet::new();
        if let Some(dup) = specs.iter().find(|s| !seen.insert(s.name.as_str())) {
            return Err(LoadError::Package {
                function: dup.name.clone(),
                reason: "is listed more than once".into(),
            });
        }
        // Every missing module is reported at once, before any compiling.
        let missing =
            xfn_runtime::local_module::all_missing(specs.iter().filter_map(
                |spec| match &spec.source {
                    Source::Wasm(path) => Some((spec.name.as_str(), path.as_path())),
                    Source::Package(_) => None,
                },
            ));
        if !missing.is_empty() {
            return Err(LoadError::Missing(missing));
        }
        let previous = self
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut loaded = HashMap::new();
        let mut table = Loaded::new();
        for spec in specs {
            let bytes = self.component(spec)?;
            let digest = blake3::hash(&bytes);
            let function = match previous.get(&spec.name) {
                Some((d, f)) if *d == digest => f.clone(),
                _ => {
                    let function = self.runtime.load(&spec.name, &bytes)?;
                    function.probe()?;
                    Arc::new(function)
                }
            };
            table.insert(spec.name.clone(), function.clone());
            loaded.insert(spec.name.clone(), (digest, function));
        }
        *self.loaded.lock().unwrap_or_else(PoisonError::into_inner) = loaded;
        Ok(table)
    }

    fn component(&self, spec: &FunctionSpec) -> Result<Cow<'static, [u8]>, LoadError> {
        match &spec.source {
            Source::Wasm(path) => {
                localfile::read(path, Limit::WASM)
                    .map(Cow::Owned)
                    .map_err(|error| LoadError::Read {
                        path: path.clone(),
                        error,
                    })
            }
            Source::Package(package) => self
                .packages
                .component(&spec.name, package, spec.pull_policy)
                .map_err(|reason| LoadError::Package {
                    function: spec.name.clone(),
                    reason,
                }),
        }
    }
}

/// The modification time and size of files, to notice when they change.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fingerprint(Vec<(PathBuf, Option<(SystemTime, u64)>)>);

impl Fingerprint {
    /// The fingerprint of the functions file (if any) and every local
    /// component in `specs`.
    pub fn of(functions_file: Option<&Path>, specs: &[FunctionSpec]) -> Fingerprint {
        let wasm = specs.iter().filter_map(|s| match &s.source {
            Source::Wasm(path) => Some(path.as_path()),
            Source::Package(_) => None,
        });
        let files = functions_file.into_iter().chain(wasm).map(|path| {
            let meta = std::fs::metadata(path)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            (path.to_owned(), meta)
        });
        Fingerprint(files.collect())
    }
}

/// A function to serve and what it was loaded from.
pub type ServedFunction = (FunctionSpec, Arc<dyn xfn_runtime::Function>);

/// The functions a server serves: those of a functions file and those
/// given one by one, with ports given by name; read again on every
/// [`load`](ServedFiles::load), so that a server reloads what changed.
pub struct ServedFiles {
    /// A file of Function objects.
    pub functions_file: Option<PathBuf>,
    /// Functions given one by one.
    pub functions: Vec<FunctionSpec>,
    /// Dedicated ports, by function name; each wins over the function's
    /// own port annotation.
    pub ports: Vec<(String, u16)>,
    /// Loads them.
    pub loader: Loader,
}

impl ServedFiles {
    /// The functions now, with their ports.
    pub fn specs(&self) -> Result<Vec<FunctionSpec>, LoadError> {
        served_specs(self.functions_file.as_deref(), &self.functions, &self.ports)
    }

    /// Reads and loads the functions (blocking: compiling is CPU-bound).
    pub fn load(&self) -> Result<Vec<ServedFunction>, LoadError> {
        let specs = self.specs()?;
        let mut loaded = self.loader.load(&specs)?;
        Ok(specs
            .into_iter()
            .filter_map(|spec| {
                let function: Arc<dyn xfn_runtime::Function> = loaded.remove(&spec.name)?;
                Some((spec, function))
            })
            .collect())
    }

    /// A hash of the functions file's and the local components' sizes and
    /// times: it changes when one of them does.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash as _, Hasher as _};
        let specs = self.specs().unwrap_or_default();
        let fingerprint = Fingerprint::of(self.functions_file.as_deref(), &specs);
        let mut hasher = std::hash::DefaultHasher::new();
        fingerprint.hash(&mut hasher);
        hasher.finish()
    }
}

#[cfg(feature = "serve")]
impl xfn_grpc::serve::FunctionSet for ServedFiles {
    fn load(&self) -> Result<Vec<xfn_grpc::serve::ServedFunction>, String> {
        let loaded = ServedFiles::load(self).map_err(|e| xfn_runtime::text::error_chain(&e))?;
        Ok(loaded
            .into_iter()
            .map(|(spec, function)| xfn_grpc::serve::ServedFunction {
                name: spec.name,
                function,
                port: spec.port,
            })
            .collect())
    }

    fn fingerprint(&self) -> u64 {
        ServedFiles::fingerprint(self)
    }
}

/// The functions of `functions_file` and `functions`, with `ports` (by
/// name) set: each names a function, at most once.
pub fn served_specs(
    functions_file: Option<&Path>,
    functions: &[FunctionSpec],
    ports: &[(String, u16)],
) -> Result<Vec<FunctionSpec>, LoadError> {
    let mut specs = match functions_file {
        Some(path) => read_functions_file(path)?,
        None => Vec::new(),
    };
    specs.extend(functions.iter().cloned());
    let origin = Path::new("--function-port");
    let mut ported = HashSet::new();
    for (name, port) in ports {
        let flag = format!("{name}={port}");
        let spec = specs
            .iter_mut()
            .find(|s| s.name == *name)
            .ok_or_else(|| invalid(origin, format!("{flag:?}: no function {name:?}")))?;
        if !ported.insert(name) {
            return Err(invalid(
                origin,
                format!("{flag:?}: function {name:?} already has a --function-port"),
            ));
        }
        spec.port = Some(*port);
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FUNCTIONS: &str = r#"
---
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-a
  annotations:
    render.crossplane.io/runtime-wasm-module: a.wasm
    xfn.dev/serve-port: "9444"
spec:
  package: xpkg.crossplane.io/example/function-a:v1
---
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: function-auto-ready
  annotations:
    render.crossplane.io/runtime-docker-pull-policy: Always
spec:
  package: xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.2.1
"#;

    #[test]
    fn parses_functions_files() {
        let specs = parse_functions(FUNCTIONS, Path::new("/cfg/functions.yaml")).expect("parses");
        assert_eq!(
            specs,
            vec![
                FunctionSpec {
                    name: "function-a".into(),
                    source: Source::Wasm(PathBuf::from("a.wasm")),
                    port: Some(9444),
                    pull_policy: PullPolicy::IfNotPresent,
                },
                FunctionSpec {
                    name: "function-auto-ready".into(),
                    source: Source::Package(
                        "xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.2.1".into()
                    ),
                    port: None,
                    pull_policy: PullPolicy::Always,
                },
            ]
        );
    }

    #[test]
    fn refuses_bad_functions() {
        let cases = [
            (
                "kind: Composition\napiVersion: apiextensions.crossplane.io/v1\n",
                "want a pkg.crossplane.io Function",
            ),
            (
                "kind: Function\napiVersion: pkg.crossplane.io/v1\nmetadata: {name: f}\n",
                "neither",
            ),
            (
                "kind: Function\napiVersion: pkg.crossplane.io/v1\nmetadata: {name: F.x}\nspec: {package: p}\n",
                "not a DNS label",
            ),
            (
                "kind: Function\napiVersion: pkg.crossplane.io/v1\nmetadata: {name: f, annotations: {xfn.dev/serve-port: x}}\nspec: {package: p}\n",
                "is not a port",
            ),
            ("kind: [", "document 1"),
        ];
        for (yaml, want) in cases {
            let err = parse_functions(yaml, Path::new("f.yaml")).expect_err(yaml);
            assert!(err.to_string().contains(want), "{yaml}: {err}");
            assert!(err.to_string().starts_with("f.yaml: "), "{err}");
        }
    }

    #[test]
    fn a_local_function_needs_a_dns_label_for_a_name() {
        let spec = FunctionSpec::local("fn-1", PathBuf::from("/tmp/x=y.wasm")).expect("valid");
        assert_eq!(spec.source, Source::Wasm(PathBuf::from("/tmp/x=y.wasm")));
        for bad in ["", "Bad", "-f", "a.b"] {
            assert!(
                FunctionSpec::local(bad, PathBuf::from("x.wasm")).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn serve_refuses_runtimes_other_than_wasm() {
        let yaml = "kind: Function\napiVersion: pkg.crossplane.io/v1\nmetadata: {name: f, annotations: {render.crossplane.io/runtime: Development}}\n";
        let err = parse_functions(yaml, Path::new("f.yaml")).expect_err("refused");
        assert!(
            err.to_string().contains("runs wasm functions only"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn unknown_packages_say_how_to_use_a_local_component() {
        let err = Catalog::default()
            .component("", PullPolicy::IfNotPresent)
            .await
            .expect_err("not built in");
        assert!(err.contains(WASM_MODULE_ANNOTATION), "{err}");
    }
}
