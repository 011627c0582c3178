//! Embeds the functions that ship with xfn.
//!
//! `make` builds them to wasm components first and points `XFN_BUILTIN_DIR`
//! at them; without it, the default wasm output directory of the workspace
//! is used. A function that isn't built is left out, and xfn says so when
//! a composition needs it.

use std::env;
use std::fmt::Write as _;
use std::path::PathBuf;

/// (built-in name, component file).
const BUILTINS: &[(&str, &str)] = &[
    (
        "function-patch-and-transform",
        "function_patch_and_transform.wasm",
    ),
    ("function-auto-ready", "function_auto_ready.wasm"),
    ("function-hello", "hello.wasm"),
    ("function-annotate", "function_annotate.wasm"),
];

fn main() {
    println!("cargo:rerun-if-env-changed=XFN_BUILTIN_DIR");
    let dir = env::var_os("XFN_BUILTIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
            manifest.join("../target/wasm32-wasip2/wasm")
        });
    let mut table = String::from("&[\n");
    for (name, file) in BUILTINS {
        let path = dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes = if path.is_file() {
            format!("Some(include_bytes!({:?}))", path.display().to_string())
        } else {
            println!(
                "cargo:warning=built-in function {name} is not built ({}); run `make build`",
                path.display()
            );
            String::from("None")
        };
        let _ = writeln!(table, "    ({name:?}, {bytes}),");
    }
    table.push(']');
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default()).join("builtins.rs");
    if let Err(e) = std::fs::write(&out, table) {
        panic!("cannot write {}: {e}", out.display());
    }
}
