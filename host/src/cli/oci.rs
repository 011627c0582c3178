//! `xfn push`, `xfn pull` and `xfn inspect`: wasm function packages in OCI
//! registries (see the `xfn-oci` crate).
//!
//! This module depends only on `xfn-oci`, `xfn-component`, clap, anyhow,
//! humantime and serde_json.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::json;
use xfn_component::localfile::{self, Limit};
use xfn_component::{ComponentInfo, Item, ItemKind, is_allowed_import};
use xfn_oci::{Digest, PullPolicy, PushMetadata};

/// Publish a wasm component as a CNCF wasm artifact (`xfn push FILE.wasm REF`),
/// or as a Crossplane package (`xfn push --package crossplane.yaml FILE.wasm REF`).
#[derive(Debug, Clone, clap::Args)]
pub struct PushArgs {
    /// The component to publish (built for wasm32-wasip2).
    pub file: PathBuf,
    /// Where to push it: REGISTRY/REPOSITORY:TAG.
    pub reference: String,
    /// Push a Crossplane package (xpkg) built from this crossplane.yaml (a
    /// meta.pkg.crossplane.io Function, and CRDs) and the component, which
    /// Crossplane's package manager installs and xfn runs. Its creation
    /// time is $SOURCE_DATE_EPOCH, or none.
    #[arg(long, value_name = "CROSSPLANE_YAML")]
    pub package: Option<PathBuf>,
    /// Make the package runnable by any Crossplane too: an image index whose
    /// linux entry Crossplane runs as a function pod (a static xfn serving
    /// the component on port 9443) and whose wasm entry xfn runs with no pod.
    #[arg(long, requires = "package")]
    pub runnable: bool,
    /// The static xfn the runnable image runs (default: this xfn, if static;
    /// `make image` builds one).
    #[arg(long, value_name = "PATH", requires = "runnable")]
    pub entrypoint_binary: Option<PathBuf>,
    /// The function's name (default: the repository's last segment).
    #[arg(long, conflicts_with = "package")]
    pub name: Option<String>,
    /// A capability of the function (composition, operation). Repeatable;
    /// default: composition.
    #[arg(long = "capability", value_name = "NAME", conflicts_with = "package")]
    pub capabilities: Vec<String>,
    /// A description of the function.
    #[arg(long, conflicts_with = "package")]
    pub description: Option<String>,
    /// An extra manifest annotation. Repeatable.
    #[arg(long = "annotation", value_name = "KEY=VALUE", value_parser = super::flags::parse_key_value)]
    pub annotations: Vec<(String, String)>,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
}

/// Fetch a function package into the cache and print its digest (`xfn pull REF`).
#[derive(Debug, Clone, clap::Args)]
pub struct PullArgs {
    /// What to pull: REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST.
    pub reference: String,
    /// IfNotPresent, Always or Never.
    #[arg(long, default_value = "Always")]
    pub pull_policy: PullPolicy,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
}

/// Show what a component imports and exports (`xfn inspect REF|FILE`).
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// A component file, or a reference to resolve.
    pub target: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// For a reference: IfNotPresent, Always or Never.
    #[arg(long, default_value = "IfNotPresent")]
    pub pull_policy: PullPolicy,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
}

/// Runs `xfn push`: prints the pushed manifest's digest.
pub async fn push(args: PushArgs) -> Result<()> {
    let wasm = localfile::read(&args.file, Limit::WASM)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let package = args
        .package
        .as_deref()
        .map(xfn_oci::PackageFile::read)
        .transpose()?;
    let metadata = PushMetadata {
        name: args.name.clone(),
        capabilities: args.capabilities.clone(),
        description: args.description.clone(),
        annotations: args.annotations.iter().cloned().collect::<BTreeMap<_, _>>(),
        package,
    };
    if args.runnable {
        return push_runnable(wasm, &args, &metadata).await;
    }
    let pushed = xfn_oci::push(wasm, &args.reference, &metadata, &args.registry.options()).await?;
    let package_layer = match &pushed.package_layer_digest {
        Some(digest) => format!(", package.yaml layer {digest}"),
        None => String::new(),
    };
    eprintln!(
        "pushed {} as {}: function {} [{}] ({} component layer {}{package_layer})",
        pushed.reference,
        pushed.layout,
        pushed.function.name,
        pushed.function.capabilities.join(", "),
        args.file.display(),
        pushed.wasm_digest
    );
    println!("{}", pushed.digest);
    Ok(())
}

/// Pushes a runnable package (`xfn push --package … --runnable`): prints
/// the index's digest.
async fn push_runnable(wasm: Vec<u8>, args: &PushArgs, metadata: &PushMetadata) -> Result<()> {
    let path = match &args.entrypoint_binary {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("cannot find this xfn's binary")?,
    };
    let binary = xfn_oci::EntrypointBinary::read(&path)?;
    let pushed = xfn_oci::push_runnable(
        wasm,
        &args.reference,
        metadata,
        &binary,
        &args.registry.options(),
    )
    .await?;
    eprintln!(
        "pushed {} as a runnable package: function {} [{}]; linux/{} image {} (xfn {}), wasm xpkg {} ({} component layer {})",
        pushed.reference,
        pushed.image.function.name,
        pushed.image.function.capabilities.join(", "),
        binary.architecture,
        pushed.image.digest,
        path.display(),
        pushed.wasm.digest,
        args.file.display(),
        pushed.wasm.wasm_digest,
    );
    println!("{}", pushed.digest);
    Ok(())
}

/// Runs `xfn pull`: prints the resolved manifest's digest.
pub async fn pull(args: PullArgs) -> Result<()> {
    let options = args.registry.options();
    let pulled = xfn_oci::resolve_package(&args.reference, args.pull_policy, &options).await?;
    let state = |from_cache: bool| if from_cache { "cached" } else { "pulled" };
    let pulled = match pulled {
        xfn_oci::Resolved::Wasm(pulled) => pulled,
        xfn_oci::Resolved::Image(image) => {
            // The layers are in the cache (or the pull failed): render
            // unpacks and runs them offline from there.
            eprintln!(
                "{} {} (container image for {}, {} layers) -> {}",
                state(image.from_cache),
                image.reference,
                image.platform,
                image.layers.len(),
                options.cache_dir.display()
            );
            println!("{}", image.digest);
            return Ok(());
        }
    };
    // Pulling is for filling the cache: a cache that took nothing is an error
    // here, though render goes on without it.
    if !pulled.wasm_path.is_file() {
        anyhow::bail!(
            "pulled {} but could not store it in the cache at {}",
            pulled.reference,
            options.cache_dir.display()
        );
    }
    eprintln!(
        "{} {} ({}, function {} [{}]) -> {}",
        state(pulled.from_cache),
        pulled.reference,
        pulled.layout,
        pulled.metadata.name,
        pulled.metadata.capabilities.join(", "),
        pulled.wasm_path.display()
    );
    println!("{}", pulled.digest);
    Ok(())
}

/// Runs `xfn inspect`: an existing path is read as a file; anything else
/// is resolved as a reference (into the cache, per the pull policy).
pub async fn inspect(args: InspectArgs) -> Result<()> {
    let json = args.json;
    let report = inspect_report(args).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// What `xfn inspect` reports about its target.
pub async fn inspect_report(args: InspectArgs) -> Result<Report> {
    let path = Path::new(&args.target);
    // Anything at that path, even a FIFO, a device or a directory, is the
    // file meant (and refused if it is not a regular file), never a
    // registry reference.
    let report = if std::fs::symlink_metadata(path).is_ok() {
        let wasm = localfile::read(path, Limit::WASM)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let info = ComponentInfo::read(&wasm).map_err(|reason| {
            anyhow::anyhow!("{}: not a usable wasm component: {reason}", path.display())
        })?;
        // What `push` and every host would refuse, as they would say it.
        let problems: Vec<String> = xfn_oci::check_runnable(&info, &path.display().to_string())
            .err()
            .map(|e| e.to_string())
            .into_iter()
            .collect();
        Report {
            subject: json!({
                "file": path.display().to_string(),
                "digest": Digest::of(&wasm).to_string(),
                "size": wasm.len(),
                "host": {
                    "runnable": problems.is_empty(),
                    "problems": problems,
                },
            }),
            info: Some(info),
        }
    } else {
        let options = args.registry.options();
        let pulled =
            match xfn_oci::resolve_package(&args.target, args.pull_policy, &options).await? {
                xfn_oci::Resolved::Wasm(pulled) => pulled,
                xfn_oci::Resolved::Image(image) => {
                    let cache = xfn_oci::Cache::new(&options.cache_dir);
                    return Ok(Report {
                        subject: json!({
                            "reference": image.reference,
                            "digest": image.digest.to_string(),
                            "indexDigest": image.index_digest.as_ref().map(ToString::to_string),
                            "layout": "container image",
                            "container": {
                                "runs": "in xfn render's sandbox, without Docker (Linux)",
                                "platform": image.platform,
                                "platforms": image.offered_platforms(&cache),
                                "layers": image.layers.len(),
                                "size": image.layers.iter().map(|l| l.size).sum::<u64>(),
                                "entrypoint": image.config.entrypoint,
                                "user": image.config.user,
                            },
                        }),
                        info: None,
                    });
                }
            };
        Report {
            subject: json!({
                "reference": pulled.reference,
                "digest": pulled.digest.to_string(),
                "indexDigest": pulled.index_digest.as_ref().map(ToString::to_string),
                "layout": pulled.layout.to_string(),
                "component": pulled.wasm_digest.to_string(),
                "size": pulled.wasm.len(),
                "function": {
                    "name": pulled.metadata.name,
                    "capabilities": pulled.metadata.capabilities,
                    "description": pulled.metadata.description,
                    "source": pulled.metadata.source.to_string(),
                    "packageLayer": pulled.package_layer.as_ref().map(ToString::to_string),
                },
                // Whether Crossplane's package manager would install it.
                "crossplane": (pulled.layout == xfn_oci::Layout::Xpkg).then(|| json!({
                    "installable": pulled.package_problems.is_empty(),
                    "problems": pulled.package_problems,
                })),
            }),
            info: Some(pulled.component),
        }
    };
    Ok(report)
}

/// What `inspect` prints: the subject and the component's interface.
pub struct Report {
    subject: serde_json::Value,
    /// The component's interface; `None` for a container image.
    info: Option<ComponentInfo>,
}

impl Report {
    /// The report as `xfn inspect --json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = self.subject.clone();
        let Some(info) = &self.info else {
            return value;
        };
        value["world"] = json!(if info.exports_run_function() {
            Some(xfn_oci::FUNCTION_WORLD)
        } else {
            None
        });
        value["imports"] = info
            .imports
            .iter()
            .map(|i| json!({"name": i.name, "kind": i.kind.to_string(), "allowed": provided(i)}))
            .collect();
        value["exports"] = info
            .exports
            .iter()
            .map(|e| json!({"name": e.name, "kind": e.kind.to_string()}))
            .collect();
        value
    }

    /// The report as `xfn inspect` prints it.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(fields) = self.subject.as_object() {
            for (key, value) in fields {
                match value {
                    serde_json::Value::Null => {}
                    serde_json::Value::String(s) => out.push_str(&format!("{key}: {s}\n")),
                    serde_json::Value::Object(o) => {
                        for (k, v) in o {
                            let text = match v {
                                serde_json::Value::Null => continue,
                                serde_json::Value::Array(a) if k == "problems" => {
                                    for problem in a.iter().filter_map(|x| x.as_str()) {
                                        out.push_str(&format!("{key} problem: {problem}\n"));
                                    }
                                    continue;
                                }
                                serde_json::Value::String(s) => s.clone(),
                                serde_json::Value::Array(a) => a
                                    .iter()
                                    .filter_map(|x| x.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                other => other.to_string(),
                            };
                            out.push_str(&format!("{key} {k}: {text}\n"));
                        }
                    }
                    other => out.push_str(&format!("{key}: {other}\n")),
                }
            }
        }
        let Some(info) = &self.info else {
            return out;
        };
        out.push_str(&format!(
            "world: {}\n",
            if info.exports_run_function() {
                xfn_oci::FUNCTION_WORLD
            } else {
                "(not an xfn function: no run-function export)"
            }
        ));
        out.push_str(&format!("imports ({}):\n", info.imports.len()));
        for i in &info.imports {
            let verdict = if provided(i) {
                ""
            } else {
                "  (not provided by xfn)"
            };
            out.push_str(&format!("  {} {}{verdict}\n", i.kind, i.name));
        }
        out.push_str(&format!("exports ({}):\n", info.exports.len()));
        for e in &info.exports {
            out.push_str(&format!("  {} {}\n", e.kind, e.name));
        }
        out
    }
}

/// Whether the host satisfies an import: a type alias always, an
/// interface when the allowlist admits it.
fn provided(import: &Item) -> bool {
    import.kind == ItemKind::Type || is_allowed_import(&import.name)
}
