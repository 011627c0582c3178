//! Embeds the functions that ship with xfn into the `xfn` binary, and the
//! xfn-sdk sources `xfn new` writes beside a new crate (`build/sdk_vendor.rs`).
//!
//! `make` builds them to wasm components first and points `XFN_BUILTIN_DIR`
//! at them; without it, the default wasm output directory of the workspace
//! is used. A function that isn't built is left out (with a warning), and
//! xfn says so when a composition needs it. Each one's capabilities come
//! from its `package/crossplane.yaml`; without one, Crossplane's default
//! (`composition`).
//!
//! A new first-party function is registered here, in the workspace's
//! `members` and in the Makefile's `WASM_PACKAGES`.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "build/sdk_vendor.rs"]
mod sdk_vendor;

/// (built-in name, crate directory under `functions/`, component file).
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "function-patch-and-transform",
        "function-patch-and-transform",
        "function_patch_and_transform.wasm",
    ),
    (
        "function-auto-ready",
        "function-auto-ready",
        "function_auto_ready.wasm",
    ),
    ("function-hello", "hello", "hello.wasm"),
    (
        "function-environment-configs",
        "function-environment-configs",
        "function_environment_configs.wasm",
    ),
    (
        "function-extra-resources",
        "function-extra-resources",
        "function_extra_resources.wasm",
    ),
    (
        "function-sequencer",
        "function-sequencer",
        "function_sequencer.wasm",
    ),
    (
        "function-status-transformer",
        "function-status-transformer",
        "function_status_transformer.wasm",
    ),
    (
        "function-cel-filter",
        "function-cel-filter",
        "function_cel_filter.wasm",
    ),
    ("function-cidr", "function-cidr", "function_cidr.wasm"),
    (
        "function-go-templating",
        "function-go-templating",
        "function_go_templating.wasm",
    ),
    ("function-kcl", "function-kcl", "function_kcl.wasm"),
    (
        "function-annotate",
        "function-annotate",
        "function_annotate.wasm",
    ),
];

fn main() {
    println!("cargo:rerun-if-env-changed=XFN_BUILTIN_DIR");
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = env::var_os("XFN_BUILTIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target/wasm32-wasip2/wasm"));
    let mut table = String::from("&[\n");
    for (name, crate_dir, file) in BUILTINS {
        let path = dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let component = if path.is_file() {
            format!("Some(include_bytes!({:?}))", path.display().to_string())
        } else {
            println!(
                "cargo:warning=built-in function {name} is not built ({}); run `make build`",
                path.display()
            );
            String::from("None")
        };
        let package = manifest
            .join("../functions")
            .join(crate_dir)
            .join("package/crossplane.yaml");
        println!("cargo:rerun-if-changed={}", package.display());
        let capabilities = capabilities(&package);
        let _ = writeln!(
            table,
            "    xfn_catalog::Builtin {{ name: {name:?}, component: {component}, capabilities: &{capabilities:?} }},"
        );
    }
    table.push(']');
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let out = out_dir.join("builtins.rs");
    if let Err(e) = std::fs::write(&out, table) {
        panic!("cannot write {}: {e}", out.display());
    }
    sdk_vendor::generate(&manifest.join(".."), &out_dir);
}

/// The `spec.capabilities` list of a package's `crossplane.yaml` (a block
/// list of plain words, as the first-party packages write it), or
/// `["composition"]` when there is no file or no list.
fn capabilities(crossplane_yaml: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(crossplane_yaml) else {
        return vec!["composition".to_owned()];
    };
    let mut lines = text
        .lines()
        .skip_while(|line| line.trim() != "capabilities:");
    lines.next();
    let listed: Vec<String> = lines
        .map_while(|line| line.trim().strip_prefix("- "))
        .map(|item| item.trim().to_owned())
        .collect();
    if listed.is_empty() {
        vec!["composition".to_owned()]
    } else {
        listed
    }
}
