//! The KCL sources of function-kcl steps, fetched on the host.
//!
//! function-kcl (upstream) downloads a program given as `oci://…` and the
//! packages its `spec.dependencies` or its `kcl.mod` declare, with kpm,
//! from inside its container. xfn's built-in port runs in a wasm sandbox
//! with no network and no files, so `xfn render` does it here: each
//! package is pulled through xfn's OCI code (the same auth, digest checks
//! and cache as functions; pulled once, then read from the cache offline),
//! its layer unpacked in memory within bounds (only `.k` files and
//! `kcl.mod`; paths that leave the package refuse it), and the files are
//! handed to the function in the step's input under [`FILES_KEY`]:
//!
//! ```json
//! {"xfn.dev/kcl": {"main": {"main.k": "…", "kcl.mod": "…"},
//!                  "packages": {"k8s": {"api/core/v1/pod.k": "…"}}}}
//! ```
//!
//! or `{"xfn.dev/kcl": {"error": "…"}}` when they could not be had (the
//! function reports it as a fatal result). `main` is there for an `oci://`
//! source and for an embedded function's directory ([`FUNCTION_DIR`]);
//! `packages` for every dependency, those of dependencies included.
//!
//! Dependencies are `kcl.mod` lines: `k8s = "1.28"` (kpm's default
//! registry, `ghcr.io/kcl-lang/k8s:1.28`), `name = { oci =
//! "oci://host/repo", tag = "v1" }`, and, for a directory on disk (an
//! embedded function's), `name = { path = "./model" }`. Git dependencies
//! are not fetched: a program that imports one fails naming the import,
//! and one that only declares it (as four of the corpus's do) runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use xfn_oci::kcl_package::{self, UnpackLimits};
use xfn_oci::{PullPolicy, RegistryOptions};
use xfn_runtime::pipeline::Step;

/// The key of the step input that carries the files.
pub const FILES_KEY: &str = "xfn.dev/kcl";

/// The name of the built-in function whose input this module fills in.
pub const BUILTIN: &str = "function-kcl";

/// The Function annotation naming the source directory of an embedded KCL
/// function (an Upbound `up` project's `functions/<name>/`): the step runs
/// on the built-in function-kcl with that directory as its program.
pub const FUNCTION_DIR: &str = "render.xfn.dev/kcl-function-dir";

/// kpm's default registry and repository of packages named by version.
pub const DEFAULT_REGISTRY: &str = "ghcr.io/kcl-lang";

/// How many packages one step may pull or read, dependencies of
/// dependencies included.
pub const MAX_PACKAGES: usize = 32;

/// How many bytes of KCL source one step's packages may hold in all: what
/// xfn-kcl accepts for one program. Each package is bounded on its own
/// too; this keeps 32 of them from filling the host with a step's input.
pub const MAX_STEP_BYTES: u64 = 128 << 20;

/// Files of a package: path relative to its root to text.
type Files = BTreeMap<String, String>;

/// A `kcl.mod` dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    /// A package in a registry: `registry/repo:tag`.
    Oci(String),
    /// A directory, relative to the package that declares it.
    Path(String),
    /// A Git repository: not fetched (xfn's function-kcl reads packages
    /// from registries and directories only), so a program that imports
    /// it fails naming the import; one that only declares it runs.
    Git(String),
}

/// The `[dependencies]` of a `kcl.mod` text (or of `spec.dependencies`,
/// whose lines may come without the section header).
pub fn parse_dependencies(text: &str) -> Result<Vec<(String, Dependency)>, String> {
    let has_sections = text.lines().any(|l| l.trim_start().starts_with('['));
    let mut in_deps = !has_sections;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if !in_deps {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("cannot read the dependency line {line:?}"));
        };
        let name = name.trim().trim_matches('"').to_string();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!("invalid dependency name {name:?}"));
        }
        let value = value.trim();
        let dep = if let Some(version) = quoted(value) {
            Dependency::Oci(format!("{DEFAULT_REGISTRY}/{name}:{version}"))
        } else if let Some(table) = value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
            let fields = inline_table(table)?;
            if let Some(path) = fields.get("path") {
                Dependency::Path(path.clone())
            } else if let Some(oci) = fields.get("oci") {
                let repo = oci.strip_prefix("oci://").unwrap_or(oci);
                let tag = fields
                    .get("tag")
                    .or_else(|| fields.get("version"))
                    .ok_or_else(|| format!("dependency {name:?}: an oci source needs a tag"))?;
                Dependency::Oci(format!("{repo}:{tag}"))
            } else if let Some(git) = fields.get("git") {
                Dependency::Git(git.clone())
            } else if let Some(version) = fields.get("version") {
                Dependency::Oci(format!("{DEFAULT_REGISTRY}/{name}:{version}"))
            } else {
                return Err(format!("dependency {name:?}: cannot read {value:?}"));
            }
        } else {
            return Err(format!("dependency {name:?}: cannot read {value:?}"));
        };
        out.push((name, dep));
    }
    Ok(out)
}

fn quoted(v: &str) -> Option<String> {
    let v = v.trim();
    let inner = v
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))?;
    (!inner.contains('"')).then(|| inner.to_string())
}

/// `k = "v", k2 = "v2"` (the inline tables kcl.mod writes).
fn inline_table(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for pair in text.split(',') {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("cannot read {pair:?}"))?;
        let v = quoted(v).ok_or_else(|| format!("cannot read the value of {:?}", k.trim()))?;
        out.insert(k.trim().to_string(), v);
    }
    Ok(out)
}

/// Fills in the KCL files of every step that runs on the built-in
/// function-kcl: its `oci://` program, its dependencies, or the directory
/// of an embedded function (`dirs`, by Function name). Other steps are left
/// as they are.
pub async fn fill_inputs(
    steps: &mut [Step],
    builtins: &BTreeMap<String, &'static str>,
    dirs: &BTreeMap<String, PathBuf>,
    registry: &RegistryOptions,
) {
    for step in steps {
        let dir = dirs.get(&step.function);
        if dir.is_none() && builtins.get(&step.function).copied() != Some(BUILTIN) {
            continue;
        }
        // An embedded function's step has no input: its program is the
        // directory. It gets a KCLInput marked as made here.
        let synthesized;
        let text = match (step.input.as_deref(), dir) {
            (Some(text), _) => text,
            (None, Some(dir)) => {
                synthesized = json!({
                    "apiVersion": "krm.kcl.dev/v1alpha1",
                    "kind": "KCLInput",
                    "metadata": {"name": step.name},
                    "spec": {"source": format!("embedded function {}", dir.display())},
                    SYNTHESIZED_KEY: true,
                })
                .to_string();
                &synthesized
            }
            (None, None) => continue,
        };
        let Ok(Value::Object(mut input)) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        input.remove(FILES_KEY);
        let filled = match fill(&mut input, dir.map(PathBuf::as_path), registry).await {
            Ok(None) => continue,
            Ok(Some(files)) => files,
            Err(e) => json!({ "error": e }),
        };
        input.insert(FILES_KEY.to_string(), filled);
        step.input = Some(Value::Object(input).to_string());
    }
}

/// The files for one step's input, `None` when it needs none.
async fn fill(
    input: &mut Map<String, Value>,
    dir: Option<&Path>,
    registry: &RegistryOptions,
) -> Result<Option<Value>, String> {
    let spec = input.get("spec").cloned().unwrap_or(Value::Null);
    let source = spec
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let declared = spec
        .get("dependencies")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut fetcher = Fetcher {
        registry,
        packages: BTreeMap::new(),
        read: 0,
        bytes: 0,
    };
    let main = if let Some(dir) = dir {
        let files = fetcher.counted(read_dir(dir)?)?;
        fetcher.dependencies_of(&files, Some(dir)).await?;
        Some(files)
    } else if let Some(reference) = source.strip_prefix("oci://").filter(|s| !s.contains('\n')) {
        let files = fetcher.pull(reference).await?;
        fetcher.dependencies_of(&files, None).await?;
        Some(files)
    } else {
        None
    };
    if !declared.trim().is_empty() {
        let deps = parse_dependencies(declared).map_err(|e| format!("spec.dependencies: {e}"))?;
        fetcher.add(deps, None).await?;
    }
    if main.is_none() && fetcher.packages.is_empty() {
        return Ok(None);
    }
    let mut out = Map::new();
    if let Some(main) = main {
        out.insert("main".into(), json!(main));
    }
    out.insert("packages".into(), json!(fetcher.packages));
    Ok(Some(Value::Object(out)))
}

/// Pulls packages and their dependencies, each name once.
struct Fetcher<'r> {
    registry: &'r RegistryOptions,
    packages: BTreeMap<String, Files>,
    /// Packages pulled or read so far, the step's own included.
    read: usize,
    /// Their bytes of source, in all.
    bytes: u64,
}

impl Fetcher<'_> {
    /// The files of the package at `reference`.
    async fn pull(&mut self, reference: &str) -> Result<Files, String> {
        self.check_count()?;
        let pulled =
            kcl_package::resolve_kcl_package(reference, PullPolicy::IfNotPresent, self.registry)
                .await
                .map_err(|e| kcl_package::not_available(reference, self.registry, &e))?;
        let files = kcl_package::unpack(&pulled.layer, pulled.gzip, UnpackLimits::default())
            .map_err(|e| format!("KCL package {reference}: {e}"))?;
        self.counted(files)
    }

    /// Refuses one package more than [`MAX_PACKAGES`].
    fn check_count(&self) -> Result<(), String> {
        if self.read >= MAX_PACKAGES {
            return Err(format!(
                "more than {MAX_PACKAGES} KCL packages to pull or read for one step"
            ));
        }
        Ok(())
    }

    /// `files`, counted against [`MAX_PACKAGES`] and [`MAX_STEP_BYTES`].
    fn counted(&mut self, files: Files) -> Result<Files, String> {
        self.check_count()?;
        self.read += 1;
        self.bytes += files.values().map(|text| text.len() as u64).sum::<u64>();
        if self.bytes > MAX_STEP_BYTES {
            return Err(format!(
                "the KCL packages of one step hold more than {MAX_STEP_BYTES} bytes of source"
            ));
        }
        Ok(files)
    }

    /// Adds the dependencies a package's `kcl.mod` declares (a path
    /// dependency is read from `dir`, the package's directory on disk).
    async fn dependencies_of(&mut self, files: &Files, dir: Option<&Path>) -> Result<(), String> {
        let Some(kcl_mod) = files.get("kcl.mod") else {
            return Ok(());
        };
        let deps = parse_dependencies(kcl_mod).map_err(|e| format!("kcl.mod: {e}"))?;
        self.add(deps, dir).await
    }

    async fn add(
        &mut self,
        deps: Vec<(String, Dependency)>,
        dir: Option<&Path>,
    ) -> Result<(), String> {
        // Breadth first, without recursion in an async fn.
        let mut queue: Vec<(String, Dependency, Option<PathBuf>)> = deps
            .into_iter()
            .map(|(n, d)| (n, d, dir.map(Path::to_path_buf)))
            .collect();
        while let Some((name, dep, base)) = queue.pop() {
            if self.packages.contains_key(&name) {
                continue;
            }
            let (files, at) = match &dep {
                Dependency::Oci(reference) => (self.pull(reference).await?, None),
                Dependency::Git(_) => continue,
                Dependency::Path(path) => {
                    let Some(base) = &base else {
                        return Err(format!(
                            "dependency {name:?} is a path ({path}), which only a package on disk \
                             (an embedded function's directory) may declare"
                        ));
                    };
                    let at = base.join(path);
                    if !at.exists() {
                        return Err(missing_path_dependency(&name, path, base));
                    }
                    self.check_count()?;
                    (self.counted(read_dir(&at)?)?, Some(at))
                }
            };
            if let Some(kcl_mod) = files.get("kcl.mod") {
                let more = parse_dependencies(kcl_mod)
                    .map_err(|e| format!("kcl.mod of dependency {name:?}: {e}"))?;
                for (n, d) in more {
                    queue.push((n, d, at.clone()));
                }
            }
            self.packages.insert(name, files);
        }
        Ok(())
    }
}

/// The error for a path dependency that is not there: an `up` project's
/// `model/`, which `up` generates and repositories don't commit.
fn missing_path_dependency(name: &str, path: &str, base: &Path) -> String {
    format!(
        "the KCL dependency {name:?} ({path} in {}) does not exist; an Upbound project's \
         `model/` is generated by `up` from the project's XRDs and dependencies and is usually \
         not committed: generate it first (`up project build`, or `up dependency update-cache`)",
        base.display()
    )
}

/// Bounds on reading a function directory.
const DIR_LIMITS: UnpackLimits = UnpackLimits {
    files: 10_000,
    entries: 50_000,
    bytes: 64 << 20,
    tar_bytes: 0,
    depth: 32,
};

/// The `.k` files and `kcl.mod` under `dir`, by relative path, bounded; a
/// symbolic link is followed (an `up` project's `model` is one), at most
/// [`DIR_LIMITS`]`.depth` levels deep.
fn read_dir(dir: &Path) -> Result<Files, String> {
    let mut out = Files::new();
    let mut entries = 0usize;
    let mut bytes = 0u64;
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((path, rel, depth)) = stack.pop() {
        if depth > DIR_LIMITS.depth {
            return Err(format!(
                "{}: nests deeper than {} directories",
                path.display(),
                DIR_LIMITS.depth
            ));
        }
        let list = std::fs::read_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for entry in list {
            let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
            entries += 1;
            if entries > DIR_LIMITS.entries {
                return Err(format!(
                    "{}: more than {} entries",
                    dir.display(),
                    DIR_LIMITS.entries
                ));
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let p = entry.path();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let meta = std::fs::metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if meta.is_dir() {
                // `model/` is a dependency of its own (`path = "./model"`).
                if depth == 0 && name == "model" {
                    continue;
                }
                stack.push((p, child, depth + 1));
            } else if meta.is_file() && (name.ends_with(".k") || child == "kcl.mod") {
                if name.ends_with("_test.k") {
                    continue;
                }
                bytes += meta.len();
                if out.len() >= DIR_LIMITS.files || bytes > DIR_LIMITS.bytes {
                    return Err(format!(
                        "{}: more than {} .k files or {} bytes",
                        dir.display(),
                        DIR_LIMITS.files,
                        DIR_LIMITS.bytes
                    ));
                }
                let text =
                    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                out.insert(child, text);
            }
        }
    }
    Ok(out)
}

/// The key marking an input [`fill_inputs`] made for a step that had
/// none (an embedded function's).
pub const SYNTHESIZED_KEY: &str = "xfn.dev/kclInputMadeByRender";

/// The step input (JSON text) as the Composition gave it: without the
/// files [`fill_inputs`] added (`Some(None)` when the step had no input).
/// `meta.tag` is computed on it.
pub fn original_input(input: &str) -> Option<Option<String>> {
    if !input.contains(FILES_KEY) {
        return None;
    }
    let mut value: Value = serde_json::from_str(input).ok()?;
    let object = value.as_object_mut()?;
    if object.contains_key(SYNTHESIZED_KEY) {
        return Some(None);
    }
    object.remove(FILES_KEY)?;
    Some(Some(value.to_string()))
}

/// The embedded-function directories the Functions name ([`FUNCTION_DIR`]),
/// by Function name.
pub fn function_dirs(functions: &[Value]) -> BTreeMap<String, PathBuf> {
    functions
        .iter()
        .filter_map(|f| {
            let dir = f
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(FUNCTION_DIR))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())?;
            let name = f.pointer("/metadata/name").and_then(Value::as_str)?;
            Some((name.to_string(), PathBuf::from(dir)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_holds_at_most_its_count_and_bytes_of_packages() {
        let registry = RegistryOptions::default();
        let mut fetcher = Fetcher {
            registry: &registry,
            packages: BTreeMap::new(),
            read: 0,
            bytes: 0,
        };
        let small = Files::from([("main.k".to_owned(), "a = 1\n".to_owned())]);
        for _ in 0..MAX_PACKAGES {
            fetcher.counted(small.clone()).expect("within the count");
        }
        let err = fetcher.counted(small).unwrap_err();
        assert!(err.contains("more than 32 KCL packages"), "{err}");

        let mut fetcher = Fetcher {
            registry: &registry,
            packages: BTreeMap::new(),
            read: 0,
            bytes: 0,
        };
        let half = Files::from([(
            "main.k".to_owned(),
            "x".repeat((MAX_STEP_BYTES / 2) as usize),
        )]);
        fetcher.counted(half.clone()).expect("half the bytes");
        fetcher.counted(half.clone()).expect("all the bytes");
        let err = fetcher
            .counted(Files::from([("b.k".to_owned(), "y".to_owned())]))
            .unwrap_err();
        assert!(err.contains("more than 134217728 bytes"), "{err}");
    }

    #[test]
    fn reads_kcl_mod_dependencies() {
        let deps = parse_dependencies(
            "[package]\nname = \"x\"\nversion = \"0.1\"\n\n[dependencies]\nk8s = \"1.28\"\n\
             models = { path = \"./model\" }\nlib = { oci = \"oci://localhost:5000/kcl/lib\", tag = \"v2\" }\n\
             [profile]\nentries = [\"main.k\"]\n",
        )
        .expect("parse");
        assert_eq!(
            deps,
            vec![
                (
                    "k8s".into(),
                    Dependency::Oci("ghcr.io/kcl-lang/k8s:1.28".into())
                ),
                ("models".into(), Dependency::Path("./model".into())),
                (
                    "lib".into(),
                    Dependency::Oci("localhost:5000/kcl/lib:v2".into())
                ),
            ]
        );
        // spec.dependencies: lines without a header.
        assert_eq!(
            parse_dependencies("k8s = \"1.28\"\n").expect("parse"),
            vec![(
                "k8s".into(),
                Dependency::Oci("ghcr.io/kcl-lang/k8s:1.28".into())
            )]
        );
        assert_eq!(
            parse_dependencies("x = { git = \"https://github.com/a/b\" }"),
            Ok(vec![(
                "x".into(),
                Dependency::Git("https://github.com/a/b".into())
            )])
        );
    }

    #[test]
    fn reads_a_function_directory_without_its_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("main.k"), "a = 1\n").expect("write");
        std::fs::write(dir.path().join("kcl.mod"), "[package]\n").expect("write");
        std::fs::write(dir.path().join("README.md"), "x").expect("write");
        std::fs::create_dir_all(dir.path().join("model/io")).expect("mkdir");
        std::fs::write(dir.path().join("model/io/x.k"), "b = 1\n").expect("write");
        let files = read_dir(dir.path()).expect("read");
        assert_eq!(files.keys().collect::<Vec<_>>(), ["kcl.mod", "main.k"]);
    }
}
