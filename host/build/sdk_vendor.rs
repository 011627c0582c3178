//! The xfn-sdk sources `xfn new` writes beside a new crate (until xfn-sdk
//! is published, a crate builds against the SDK its `xfn` was built with):
//! the SDK's files, a `Cargo.toml` that stands alone (the workspace's
//! inherited keys written out) and a `Cargo.lock` holding only what the
//! SDK and a new crate use, at the versions this workspace locks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The direct dependencies of a new crate besides xfn-sdk (host/templates/new/Cargo.toml.in).
const CRATE_DEPENDENCIES: &[&str] = &["schemars", "serde", "serde_json"];

/// Writes `sdk_vendor.rs` into `out`: `SDK_FILES` (path in the vendored
/// directory, text) and `SDK_LOCK` (a Cargo.lock with `{{name}}` for the
/// new crate's name).
pub fn generate(workspace: &Path, out: &Path) {
    let sdk = workspace.join("guest-sdk");
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (dir, extension) in [("src", "rs"), ("wit", "wit")] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(sdk.join(dir))
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", sdk.join(dir).display()))
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == extension))
            .collect();
        found.sort();
        for path in found {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            files.push((format!("{dir}/{name}"), path));
        }
    }
    files.push(("README.md".to_owned(), sdk.join("README.md")));
    println!("cargo:rerun-if-changed={}", sdk.display());
    println!("cargo:rerun-if-changed={}", sdk.join("src").display());
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());

    let manifest = standalone_manifest(
        &read(&sdk.join("Cargo.toml")),
        &read(&workspace.join("Cargo.toml")),
    );
    let lock = pruned_lock(&read(&workspace.join("Cargo.lock")));
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.toml").display()
    );

    let mut code = String::from(
        "/// The vendored xfn-sdk: (path in its directory, text).\npub const SDK_FILES: &[(&str, &str)] = &[\n",
    );
    let _ = writeln!(code, "    (\"Cargo.toml\", {manifest:?}),");
    for (name, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n/// A new crate's Cargo.lock (`{{name}}` is the crate's name).\npub const SDK_LOCK: &str = ");
    let _ = writeln!(code, "{lock:?};");
    let path = out.join("sdk_vendor.rs");
    if let Err(e) = std::fs::write(&path, code) {
        panic!("cannot write {}: {e}", path.display());
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The lines of `[section]` in a TOML file, as `key = value` pairs.
fn section(text: &str, header: &str) -> BTreeMap<String, String> {
    let mut in_section = false;
    let mut entries = BTreeMap::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed == header;
            continue;
        }
        if !in_section || trimmed.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(" = ") {
            entries.insert(key.trim().to_owned(), value.trim().to_owned());
        }
    }
    entries
}

/// guest-sdk/Cargo.toml with every `key.workspace = true` replaced by the
/// workspace's value: a manifest that builds outside this workspace.
fn standalone_manifest(sdk: &str, workspace: &str) -> String {
    let package = section(workspace, "[workspace.package]");
    let dependencies = section(workspace, "[workspace.dependencies]");
    let mut in_package = false;
    let mut manifest = String::from(
        "# xfn-sdk, as the xfn that wrote this crate was built with it (`xfn new`).\n# Until xfn-sdk is on crates.io, the crate builds against this copy.\n",
    );
    for line in sdk.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_package = trimmed == "[package]";
        }
        if let Some(key) = trimmed.strip_suffix(".workspace = true") {
            let table = if in_package { &package } else { &dependencies };
            let value = table.get(key).unwrap_or_else(|| {
                panic!("guest-sdk inherits {key}, which the workspace does not set")
            });
            let _ = writeln!(manifest, "{key} = {value}");
        } else if let Some((key, _)) = trimmed.split_once(" = { workspace = true") {
            // `key = { workspace = true, optional = true }`: the workspace's
            // version (or table) with the local keys.
            let value = dependencies.get(key).unwrap_or_else(|| {
                panic!("guest-sdk inherits {key}, which the workspace does not set")
            });
            let inherited = match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                Some(table) => table.trim().to_owned(),
                None => format!("version = {value}"),
            };
            let _ = writeln!(
                manifest,
                "{}",
                line.replacen("workspace = true", &inherited, 1)
            );
        } else {
            let _ = writeln!(manifest, "{line}");
        }
    }
    manifest
}

/// One `[[package]]` of a Cargo.lock, as its lines.
struct Locked {
    name: String,
    version: String,
    text: String,
    dependencies: Vec<String>,
}

fn packages(lock: &str) -> Vec<Locked> {
    lock.split("[[package]]")
        .skip(1)
        .map(|block| {
            let text = block.trim().to_owned();
            let field = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("{key} = ")))
                    .map(|v| v.trim_matches('"').to_owned())
                    .unwrap_or_default()
            };
            let dependencies = text
                .split_once("dependencies = [")
                .map(|(_, rest)| {
                    rest.lines()
                        .map(|l| l.trim().trim_end_matches(',').trim_matches('"'))
                        .take_while(|l| *l != "]")
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Locked {
                name: field("name"),
                version: field("version"),
                text,
                dependencies,
            }
        })
        .collect()
}

/// The workspace's Cargo.lock cut to xfn-sdk, a new crate's other
/// dependencies and theirs, with an entry for the new crate.
fn pruned_lock(lock: &str) -> String {
    let all = packages(lock);
    let find = |dependency: &str| -> Option<usize> {
        let mut words = dependency.split(' ');
        let name = words.next().unwrap_or_default();
        let version = words.next();
        all.iter()
            .position(|p| p.name == name && version.is_none_or(|v| p.version == v))
    };
    let mut keep = BTreeSet::new();
    let mut todo: Vec<usize> = ["xfn-sdk"]
        .iter()
        .chain(CRATE_DEPENDENCIES)
        .map(|d| find(d).unwrap_or_else(|| panic!("{d} is not in the workspace's Cargo.lock")))
        .collect();
    while let Some(index) = todo.pop() {
        if keep.insert(index) {
            for dependency in &all[index].dependencies {
                match find(dependency) {
                    Some(found) => todo.push(found),
                    None => panic!("{dependency} is not in the workspace's Cargo.lock"),
                }
            }
        }
    }
    let mut text = String::from(
        "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n",
    );
    let mut root = String::from("name = \"{{name}}\"\nversion = \"0.1.0\"\ndependencies = [\n");
    let mut direct: Vec<&str> = CRATE_DEPENDENCIES.to_vec();
    direct.push("xfn-sdk");
    direct.sort_unstable();
    for d in direct {
        let _ = writeln!(root, " \"{d}\",");
    }
    root.push(']');
    let mut blocks: Vec<(String, String, &str)> = keep
        .iter()
        .map(|&i| {
            (
                all[i].name.clone(),
                all[i].version.clone(),
                all[i].text.as_str(),
            )
        })
        .collect();
    blocks.push(("{{name}}".to_owned(), String::new(), root.as_str()));
    blocks.sort();
    for (_, _, block) in blocks {
        let _ = write!(text, "\n[[package]]\n{block}\n");
    }
    text
}
